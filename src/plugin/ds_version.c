/* ds_version.c -- see ds_version.h. */
#include "plugin/ds_version.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "plugin/plugin_internal.h"

int dsf_ds_version_hooks_read(dsf_ds_version_hooks *h, lua_State *L, int t,
                              size_t index, const char *plugin,
                              const char *file, dsf_diags *d)
{
    int rc = dsf_plugin_optional_function(L, t, "ds_version",
                                          "function(spec)", "The interface",
                                          plugin, file, d);
    if (rc <= 0)
        return rc;
    lua_pop(L, 1); /* read again from the declaration at the call */
    h->items = dsf_xrealloc(h->items, (h->n + 1) * sizeof *h->items);
    h->items[h->n].plugin = dsf_xstrdup(plugin);
    h->items[h->n].index = index;
    h->n++;
    return 0;
}

void dsf_ds_version_hooks_free(dsf_ds_version_hooks *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->items[i].plugin);
    free(h->items);
    h->items = NULL;
    h->n = 0;
}

typedef struct call {
    int decl;          /* registry reference of the declaration */
    const char *spec;
} call;

static int push_call(lua_State *L)
{
    call *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->decl);
    lua_pushliteral(L, "ds_version");
    lua_rawget(L, 1);
    lua_pushstring(L, a->spec);
    lua_call(L, 1, 2);
    return 2;
}

int dsf_plugins_check_ds_version(dsf_plugins *p, const char *spec,
                                 const char *from, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    int rc = 0, top = lua_gettop(L);
    /* A hook loads what lives as long as the host (the plugin's release
    ** facts, which its rules read next): the collector's loading pause
    ** (lua/host.h), as for the rules. */
    dsf_host_gc_loading(p->host, true);
    for (size_t k = 0; !rc && k < p->ds_version.n; k++) {
        const dsf_ds_version_hook *h = &p->ds_version.items[k];
        char *what = dsf_xasprintf("plugin %s ds_version", h->plugin);
        call a = {p->decls[h->index].ref, spec};
        rc = dsf_host_cpcall(p->host, push_call, &a, 2, what, d);
        if (rc) {
            dsf_diag *g = dsf_diags_last(d);
            if (g && !g->hint)
                dsf_diag_set_hint(g, "raised by %s: a bug in the plugin",
                                  what);
        } else if (lua_type(L, -2) == LUA_TSTRING &&
                   (lua_isnil(L, -1) || lua_type(L, -1) == LUA_TSTRING)) {
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s: %s",
                                       from, lua_tostring(L, -2));
            if (lua_type(L, -1) == LUA_TSTRING)
                dsf_diag_set_hint(g, "%s", lua_tostring(L, -1));
            rc = DSF_EUSAGE;
        } else if (!lua_isnil(L, -2) || !lua_isnil(L, -1)) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s must return nil (the release is "
                                "covered) or a message and an optional "
                                "hint (strings)", what);
        }
        lua_settop(L, top);
        free(what);
    }
    dsf_host_gc_loading(p->host, false);
    return rc;
}
