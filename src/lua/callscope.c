/* callscope.c -- see callscope.h. */
#include "lua/callscope.h"

#include <lauxlib.h>

/* The open scopes, innermost first. The process has one thread running
** Lua (a worker of gen -j is a process of its own). */
static dsf_callscope *open_scopes;
static unsigned long last_id;

void dsf_callscope_open(dsf_callscope *s)
{
    s->id = ++last_id;
    s->outer = open_scopes;
    open_scopes = s;
}

void dsf_callscope_close(dsf_callscope *s)
{
    /* (the innermost, in practice; wherever it is, it leaves the list) */
    for (dsf_callscope **p = &open_scopes; *p; p = &(*p)->outer)
        if (*p == s) {
            *p = s->outer;
            break;
        }
    s->id = 0;
}

void dsf_callscope_push(lua_State *L, const dsf_callscope *s,
                        lua_CFunction fn, void *data)
{
    lua_pushlightuserdata(L, data);
    lua_pushinteger(L, (lua_Integer)s->id);
    lua_pushcclosure(L, fn, 2);
}

void *dsf_callscope_data(lua_State *L, const char *name)
{
    unsigned long id = (unsigned long)lua_tointeger(L, lua_upvalueindex(2));
    for (const dsf_callscope *s = open_scopes; s; s = s->outer)
        if (s->id == id)
            return lua_touserdata(L, lua_upvalueindex(1));
    luaL_error(L, "%s was kept past the call that handed it over: it works "
                  "only during that call", name);
    return NULL;
}
