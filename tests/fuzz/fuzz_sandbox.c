/*
** fuzz_sandbox.c -- libFuzzer target for the sandbox and the dsforge
** module: the input runs as a script (text only) in a fresh state with
** tight limits, and its result goes through the bridge. Properties: no
** crash, no leak, no hang (the limits end every script), and the state
** never loses the sandbox (no io/os/debug/package).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/diag.h"
#include "lua/conv.h"
#include "lua/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char probe[] =
    "return io == nil and os == nil and debug == nil and package == nil";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_srccache *sources = dsf_srccache_new();
    dsf_limits lim = {8u << 20, 200000, 1.0};
    dsf_host_config hc = {lim, NULL, 0, sources, &d};
    dsf_host *h;
    if (dsf_host_new(&h, &hc, &d) != 0)
        abort();
    lua_State *L = dsf_host_state(h);
    if (dsf_host_load(h, "=fuzz", (const char *)data, size, &d) == 0 &&
        dsf_host_call(h, 0, 1, "fuzz", &d) == 0) {
        cJSON *out = NULL;
        char *err = NULL;
        if (dsf_lua_to_json(&out, &err, L, -1, DSF_CONV_ALLOW_DELETE) == 0)
            cJSON_Delete(out);
        free(err);
        lua_settop(L, 0);
    }
    /* Whatever the script did, a new chunk still sees only the sandbox. */
    if (dsf_host_load(h, "=probe", probe, sizeof probe - 1, &d) == 0 &&
        dsf_host_call(h, 0, 1, "probe", &d) == 0 && !lua_toboolean(L, -1))
        abort();
    dsf_host_free(h);
    dsf_srccache_free(sources);
    dsf_diags_free(&d);
    return 0;
}
