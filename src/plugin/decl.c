/* decl.c -- see decl.h. */
#include "plugin/decl.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "plugin/plugin_internal.h"

bool dsf_plugin_parse_severity(const char *s, dsf_severity *out)
{
    if (!strcmp(s, "error"))
        *out = DSF_ERROR;
    else if (!strcmp(s, "warning"))
        *out = DSF_WARNING;
    else if (!strcmp(s, "note"))
        *out = DSF_NOTE;
    else
        return false;
    return true;
}

bool dsf_plugin_known_key(lua_State *L, int k, const char *const *known)
{
    if (lua_type(L, k) != LUA_TSTRING)
        return false;
    const char *s = lua_tostring(L, k);
    for (int i = 0; known[i]; i++)
        if (!strcmp(s, known[i]))
            return true;
    return false;
}

const char *dsf_plugin_raw_string(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    lua_rawget(L, t);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : NULL;
    lua_pop(L, 1); /* the string stays alive: it is a field of t */
    return s;
}

int dsf_plugin_read_list(struct dsf_plugins *p, lua_State *L, int t,
                         const char *field, dsf_plugin_item_fn item,
                         const char *plugin, const char *file,
                         dsf_diags *d)
{
    lua_pushstring(L, field);
    int ty = lua_rawget(L, t);
    if (ty != LUA_TTABLE) {
        lua_pop(L, 1);
        if (ty == LUA_TNIL)
            return 0;
        dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                     "plugin '%s': '%s' must be a list", plugin, field);
        return DSF_EINPUT;
    }
    int rc = dsf_plugin_read_items(p, L, lua_gettop(L), item, plugin, file,
                                   d);
    lua_pop(L, 1);
    return rc;
}

int dsf_plugin_push_field(struct dsf_plugins *p, lua_State *L, int t,
                          const char *field, const char *plugin, bool *called,
                          dsf_diags *d)
{
    *called = false;
    lua_pushstring(L, field);
    if (lua_rawget(L, t) != LUA_TFUNCTION)
        return 0;
    *called = true;
    char *what = dsf_xconcat("plugin ", plugin, " ", field, NULL);
    int rc = dsf_host_call(p->host, 0, 1, what, d);
    free(what);
    return rc;
}

int dsf_plugin_read_lazy_list(struct dsf_plugins *p, lua_State *L, int t,
                              const char *field, dsf_plugin_item_fn item,
                              const char *plugin, const char *file,
                              dsf_diags *d)
{
    bool called;
    int rc = dsf_plugin_push_field(p, L, t, field, plugin, &called, d);
    if (rc)
        return rc;
    int ty = lua_type(L, -1);
    if (ty == LUA_TTABLE)
        rc = dsf_plugin_read_items(p, L, lua_gettop(L), item, plugin, file,
                                   d);
    else if (called)
        rc = dsf_diag_error(d, DSF_EINPUT, file, 0, 0,
                            "plugin '%s': the '%s' function must return a "
                            "list of %s", plugin, field, field);
    else if (ty != LUA_TNIL)
        rc = dsf_diag_error(d, DSF_EINPUT, file, 0, 0,
                            "plugin '%s': '%s' must be a list", plugin,
                            field);
    lua_pop(L, 1);
    return rc;
}

int dsf_plugin_read_items(struct dsf_plugins *p, lua_State *L, int lt,
                          dsf_plugin_item_fn item, const char *plugin,
                          const char *file, dsf_diags *d)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, lt);
    int rc = 0;
    for (lua_Integer i = 1; i <= n && !rc; i++) {
        lua_rawgeti(L, lt, i);
        rc = item(p, L, lua_gettop(L), i, plugin, file, d);
        lua_pop(L, 1);
    }
    return rc;
}

/* Each declaration in turn: fn on it, or (fn NULL) its lazy list field
** read with item. */
static int each(dsf_plugins *p, dsf_plugin_decl_fn fn, const char *field,
                dsf_plugin_item_fn item, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    dsf_host_gc_loading(p->host, true);
    int rc = 0;
    for (size_t i = 0; i < p->n && !rc; i++) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, p->decls[i].ref);
        int t = lua_gettop(L);
        rc = fn ? fn(p, L, t, i, d)
                : dsf_plugin_read_lazy_list(p, L, t, field, item,
                                            p->items[i].name,
                                            p->decls[i].file, d);
        lua_settop(L, t - 1);
    }
    dsf_host_gc_loading(p->host, false);
    return rc;
}

int dsf_plugins_each_decl(dsf_plugins *p, dsf_plugin_decl_fn fn,
                          dsf_diags *d)
{
    return each(p, fn, NULL, NULL, d);
}

int dsf_plugins_each_list(dsf_plugins *p, const char *field,
                          dsf_plugin_item_fn item, dsf_diags *d)
{
    return each(p, NULL, field, item, d);
}

int dsf_plugin_optional_function(lua_State *L, int t, const char *field,
                                 const char *signature, const char *section,
                                 const char *plugin, const char *file,
                                 dsf_diags *d)
{
    lua_pushstring(L, field);
    int ty = lua_rawget(L, t); /* raw: no metamethod of a script runs */
    if (ty == LUA_TFUNCTION)
        return 1;
    lua_pop(L, 1);
    if (ty == LUA_TNIL)
        return 0;
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                               "plugin '%s': '%s' must be a %s", plugin,
                               field, signature);
    dsf_diag_set_hint(g, "see '%s' in contrib/docs/plugins.md", section);
    return DSF_EINPUT;
}

const char *dsf_plugin_unknown_field(lua_State *L, int t,
                                     const char *const *known)
{
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (!dsf_plugin_known_key(L, -1, known)) {
            const char *k = lua_type(L, -1) == LUA_TSTRING
                                ? lua_tostring(L, -1)
                                : "(not a string)";
            lua_pop(L, 1);
            return k;
        }
    }
    return NULL;
}
