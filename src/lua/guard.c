/* guard.c -- see guard.h. */
#include "lua/guard.h"

#include <lauxlib.h>

#define GUARD_MT "dsforge.guard"

void dsf_guard_release(dsf_guard *g)
{
    if (g->p && g->release)
        g->release(g->p);
    g->p = NULL;
}

static int guard_gc(lua_State *L)
{
    dsf_guard_release(lua_touserdata(L, 1));
    return 0;
}

dsf_guard *dsf_guard_push(lua_State *L)
{
    dsf_guard *g = lua_newuserdatauv(L, sizeof *g, 0);
    g->p = NULL;
    g->release = NULL;
    if (luaL_newmetatable(L, GUARD_MT)) {
        lua_pushcfunction(L, guard_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return g;
}
