/*
** fuzz_bridge.c -- libFuzzer target for the Lua <-> JSON bridge: a JSON
** document goes into a sandboxed state and comes back. Properties: no
** crash, no leak; either the round trip gives the same canonical text or
** the way back reports an error (integers beyond 2^53 cannot be exact).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/diag.h"
#include "json/jsonc.h"
#include "json/jsonout.h"
#include "lua/conv.h"
#include "lua/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Integer literals beyond 2^53 cannot survive Lua's doubles exactly. */
static int has_huge_integer(const cJSON *n)
{
    if (cJSON_IsNumber(n) && dsf_json_is_integer_literal(n) &&
        (n->valuedouble > 9007199254740992.0 ||
         n->valuedouble < -9007199254740992.0))
        return 1;
    for (const cJSON *c = n->child; c; c = c->next)
        if (has_huge_integer(c))
            return 1;
    return 0;
}

static int push_doc(lua_State *L)
{
    const cJSON *doc = lua_touserdata(L, 1);
    lua_settop(L, 0);
    dsf_json_push(L, doc);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = NULL;
    if (dsf_json_parse(&doc, NULL, "fuzz.json", (const char *)data, size,
                       &d) != 0) {
        dsf_diags_free(&d);
        return 0;
    }
    dsf_srccache *sources = dsf_srccache_new();
    dsf_limits lim = {16u << 20, 1000000, 2.0};
    dsf_host_config hc = {lim, NULL, 0, sources, &d};
    dsf_host *h;
    if (dsf_host_new(&h, &hc, &d) == 0) {
        if (dsf_host_cpcall(h, push_doc, doc, 1, "fuzz", &d) == 0) {
            cJSON *back = NULL;
            char *err = NULL;
            if (dsf_lua_to_json(&back, &err, dsf_host_state(h), -1, 0) == 0 &&
                !has_huge_integer(doc)) {
                char *a = dsf_json_print(doc, false);
                char *b = dsf_json_print(back, false);
                if (strcmp(a, b) != 0)
                    abort(); /* the round trip changed the document */
                free(a);
                free(b);
            }
            cJSON_Delete(back);
            free(err);
        }
        dsf_host_free(h);
    }
    dsf_srccache_free(sources);
    cJSON_Delete(doc);
    dsf_diags_free(&d);
    return 0;
}
