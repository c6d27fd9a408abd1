/* resolve.c -- running the plugins' resolvers on a config (recording what
** they change), and calls into plugin helper modules. */
#include "plugin/plugin_internal.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jobjidx.h"
#include "lua/conv.h"

/* ------------------------------------------------------------------ */
/* Resolvers. */

/* Records in prov what changed between old and new below path. */
static void record_diff(dsf_prov *prov, const cJSON *old, const cJSON *nu,
                        dsf_buf *path, const dsf_layer *layer)
{
    if (cJSON_IsObject(old) && cJSON_IsObject(nu)) {
        /* (indexes of large objects: neither changes here) */
        dsf_jobjidx *oix = dsf_jobjidx_new(old), *nix = dsf_jobjidx_new(nu);
        for (const cJSON *m = nu->child; m; m = m->next) {
            size_t mark = path->len;
            dsf_jpath_append_key(path, m->string);
            const cJSON *o = dsf_jobjidx_get(oix, old, m->string);
            if (!o)
                dsf_prov_add(prov, path->data, DSF_PROV_SET, layer, 0, 0, m);
            else
                record_diff(prov, o, m, path, layer);
            path->len = mark;
            path->data[mark] = '\0';
        }
        for (const cJSON *m = old->child; m; m = m->next) {
            if (dsf_jobjidx_get(nix, nu, m->string))
                continue;
            size_t mark = path->len;
            dsf_jpath_append_key(path, m->string);
            dsf_prov_add(prov, path->data, DSF_PROV_DELETE, layer, 0, 0,
                         NULL);
            path->len = mark;
            path->data[mark] = '\0';
        }
        dsf_jobjidx_free(oix);
        dsf_jobjidx_free(nix);
        return;
    }
    if (!cJSON_Compare(old, nu, true))
        dsf_prov_add(prov, path->data, DSF_PROV_OVERRIDE, layer, 0, 0, nu);
}

/* Whether param name is set in params: present and not null, false, 0
** or "" (a resolver's `when`). */
static bool param_set(const cJSON *params, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, name);
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return false;
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0;
    if (cJSON_IsString(v))
        return v->valuestring[0] != '\0';
    return true;
}

/* The ctx.params slot of the plugin named name (variant_tables.h). */
static int *params_slot_of(dsf_plugins *p, const char *name,
                           const cJSON *params)
{
    for (size_t pi = 0; pi < p->n; pi++)
        if (!strcmp(p->items[pi].name, name))
            return dsf_plugins_params_slot(p, pi, params);
    return NULL;
}

int dsf_plugins_resolve(dsf_plugins *p, cJSON **doc,
                        const dsf_validate_opts *o, dsf_prov *prov,
                        dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    dsf_findings none = DSF_FINDINGS_INIT;
    dsf_collector c = {p, &none, NULL, NULL, {0, NULL}, false};
    int rc = 0;
    dsf_callscope_open(&c.scope);
    for (size_t i = 0; i < p->nresolvers && !rc; i++) {
        resolver *rv = &p->resolvers[i];
        if ((rv->when && !param_set(o->params, rv->when)) ||
            !dsf_plugins_serves_name(p, rv->plugin))
            continue; /* (the config is not even handed over) */
        dsf_push_cfg_args args = {*doc, o, &c, NULL, false, LUA_NOREF,
                                  params_slot_of(p, rv->plugin, o->params)};
        lua_rawgeti(L, LUA_REGISTRYINDEX, rv->ref);
        rc = dsf_host_cpcall(p->host, dsf_plugin_push_cfg_ctx, &args, 2, rv->label, d);
        if (rc) {
            lua_settop(L, 0);
            break;
        }
        rc = dsf_host_call(p->host, 2, 1, rv->label, d);
        if (!rc && lua_istable(L, -1)) {
            cJSON *nu;
            char *err;
            if (dsf_lua_to_json(&nu, &err, L, -1, 0) != 0) {
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s returned a config that is not JSON: "
                                    "%s", rv->label, err);
                free(err);
            } else {
                if (prov) {
                    dsf_buf path = DSF_BUF_INIT;
                    dsf_buf_puts(&path, "");
                    record_diff(prov, *doc, nu, &path, &rv->layer);
                    dsf_buf_free(&path);
                }
                cJSON_Delete(*doc);
                *doc = nu;
            }
        } else if (!rc && !lua_isnil(L, -1)) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s must return the config (a table) or "
                                "nil", rv->label);
        }
        lua_settop(L, 0);
    }
    dsf_callscope_close(&c.scope);
    dsf_findings_free(&none);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Helper calls. */

typedef struct call_args {
    const char *module, *fn;
    const cJSON *args;
} call_args;

static int push_call(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_getfield(L, LUA_REGISTRYINDEX, "dsforge.base");
    lua_getfield(L, -1, "require");
    lua_remove(L, -2);
    lua_pushstring(L, a->module);
    lua_call(L, 1, 1);
    if (!lua_istable(L, -1))
        return luaL_error(L, "module '%s' is not a table", a->module);
    lua_getfield(L, -1, a->fn);
    if (!lua_isfunction(L, -1))
        return luaL_error(L, "module '%s' has no function '%s'", a->module,
                          a->fn);
    lua_remove(L, -2);
    int n = 0;
    for (const cJSON *c = a->args ? a->args->child : NULL; c; c = c->next) {
        dsf_json_push(L, c);
        n++;
    }
    lua_call(L, n, 1);
    return 1;
}

int dsf_plugins_call(dsf_plugins *p, const char *module, const char *fn,
                     const cJSON *args, cJSON **result, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    *result = NULL;
    call_args a = {module, fn, args};
    char *what = dsf_xasprintf("%s.%s", module, fn);
    int rc = dsf_host_cpcall(p->host, push_call, &a, 1, what, d);
    if (!rc) {
        char *err;
        if (dsf_lua_to_json(result, &err, L, -1, 0) != 0) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s returned a value that is not JSON: %s",
                                what, err);
            free(err);
        }
    }
    lua_settop(L, 0);
    free(what);
    return rc;
}
