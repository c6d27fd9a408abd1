/*
** variant_tables.c -- the tables a plugin's hooks share on one variant
** (see variant_tables.h): registry references per plugin, made by the
** hook that first converts (validate.c, dsf_plugin_push_cfg_ctx; summary.c,
** hold_tables) and dropped at the release.
*/
#include "plugin/variant_tables.h"

#include <lauxlib.h>
#include <lua.h>

#include "core/xalloc.h"
#include "plugin/plugin_internal.h"

/* (luaL_unref only writes existing slots: it cannot raise) */
static void unref_all(lua_State *L, int *refs, size_t n)
{
    for (size_t i = 0; refs && i < n; i++) {
        luaL_unref(L, LUA_REGISTRYINDEX, refs[i]);
        refs[i] = LUA_NOREF;
    }
}

static int *new_refs(size_t n)
{
    int *refs = dsf_xmalloc((n ? n : 1) * sizeof *refs);
    for (size_t i = 0; i < n; i++)
        refs[i] = LUA_NOREF;
    return refs;
}

void dsf_plugins_begin_variant(dsf_plugins *p, const cJSON *params)
{
    dsf_plugins_release_variant(p);
    if (!p->held_params)
        p->held_params = new_refs(p->n);
    p->held_params_of = params;
}

int *dsf_plugins_params_slot(dsf_plugins *p, size_t pi, const cJSON *params)
{
    if (!params || params != p->held_params_of || !p->held_params)
        return NULL;
    return &p->held_params[pi];
}

void dsf_plugins_hold_variant(dsf_plugins *p, const cJSON *doc)
{
    unref_all(dsf_host_state(p->host), p->held, p->n);
    if (!p->held)
        p->held = new_refs(p->n);
    p->held_doc = doc;
}

void dsf_plugins_release_variant(dsf_plugins *p)
{
    lua_State *L = dsf_host_state(p->host);
    unref_all(L, p->held, p->n);
    unref_all(L, p->held_params, p->n);
    p->held_doc = NULL;
    p->held_params_of = NULL;
}
