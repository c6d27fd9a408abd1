/* machine_params.c -- see machine_params.h. */
#include "plugin/machine_params.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "lua/conv.h"
#include "plugin/plugin_internal.h"

int dsf_machine_hooks_read(dsf_machine_hooks *h, lua_State *L, int t,
                           const char *plugin, const char *file,
                           dsf_diags *d)
{
    int rc = dsf_plugin_optional_function(L, t, "machine_params",
                                          "function(machine, ctx)",
                                          "Machine params", plugin, file, d);
    if (rc <= 0)
        return rc;
    h->items = dsf_xrealloc(h->items, (h->n + 1) * sizeof *h->items);
    h->items[h->n].plugin = dsf_xstrdup(plugin);
    h->items[h->n].ref = luaL_ref(L, LUA_REGISTRYINDEX);
    h->n++;
    return 0;
}

void dsf_machine_hooks_free(dsf_machine_hooks *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->items[i].plugin);
    free(h->items);
    h->items = NULL;
    h->n = 0;
}

typedef struct call {
    int ref;
    const cJSON *machine, *declared, *given;
} call;

static int push_call(lua_State *L)
{
    call *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->ref);
    dsf_json_push(L, a->machine);
    lua_createtable(L, 0, 2);
    dsf_json_push(L, a->declared);
    lua_setfield(L, -2, "declared");
    dsf_json_push(L, a->given);
    lua_setfield(L, -2, "given");
    lua_call(L, 2, 1);
    return 1;
}

static bool is_declared(const cJSON *declared, const char *name)
{
    for (const cJSON *n = declared ? declared->child : NULL; n; n = n->next)
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
            return true;
    return false;
}

int dsf_plugins_machine_params(dsf_plugins *p, const cJSON *machine,
                               const cJSON *declared, const cJSON *given,
                               cJSON **params, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    cJSON *all = cJSON_CreateObject(), *from = cJSON_CreateObject();
    int rc = 0;
    for (size_t k = 0; !rc && k < p->machine.n; k++) {
        const dsf_machine_hook *h = &p->machine.items[k];
        if (!dsf_plugins_serves_name(p, h->plugin))
            continue; /* of another target */
        char *what = dsf_xasprintf("plugin %s machine_params", h->plugin);
        call a = {h->ref, machine, declared, given};
        rc = dsf_host_cpcall(p->host, push_call, &a, 1, what, d);
        if (rc) {
            dsf_diag *g = dsf_diags_last(d);
            if (g && !g->hint)
                dsf_diag_set_hint(g, "raised by %s: a bug in the plugin",
                                  what);
        }
        cJSON *res = NULL;
        char *err = NULL;
        if (!rc && !lua_isnil(L, -1) &&
            dsf_lua_to_json(&res, &err, L, -1, 0) != 0) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s returned a value that is not JSON: %s",
                                what, err);
            free(err);
        }
        lua_settop(L, 0);
        if (!rc && res && !cJSON_IsObject(res) &&
            !(cJSON_IsArray(res) && !res->child))
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s must return a table of params (name -> "
                                "value) or nil", what);
        for (const cJSON *m = res && cJSON_IsObject(res) ? res->child : NULL;
             !rc && m; m = m->next) {
            if (!is_declared(declared, m->string))
                continue;
            const cJSON *had = cJSON_GetObjectItemCaseSensitive(all,
                                                                m->string);
            if (!had) {
                cJSON_AddItemToObject(all, m->string, cJSON_Duplicate(m, 1));
                cJSON_AddStringToObject(from, m->string, h->plugin);
            } else if (!cJSON_Compare(had, m, 1)) {
                rc = dsf_diag_error(
                    d, DSF_EINPUT, NULL, 0, 0,
                    "plugins '%s' and '%s' derive different values of "
                    "param '%s' from the machine",
                    cJSON_GetObjectItemCaseSensitive(from, m->string)
                        ->valuestring,
                    h->plugin, m->string);
            }
        }
        cJSON_Delete(res);
        free(what);
    }
    cJSON_Delete(from);
    if (rc) {
        cJSON_Delete(all);
        all = NULL;
    }
    *params = all;
    return rc;
}

char *dsf_plugins_machine_plugins(const dsf_plugins *p)
{
    char *out = NULL;
    for (size_t i = 0; i < p->machine.n; i++) {
        char *next = dsf_xasprintf("%s%s'%s'", out ? out : "",
                                   out ? ", " : "", p->machine.items[i].plugin);
        free(out);
        out = next;
    }
    return out;
}
