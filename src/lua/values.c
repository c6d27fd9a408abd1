/* values.c -- see values.h. */
#include "lua/values.h"

#include <lauxlib.h>

const char dsf_null_sentinel = 'n';
const char dsf_delete_sentinel = 'd';

bool dsf_lua_is_null(lua_State *L, int idx)
{
    return lua_type(L, idx) == LUA_TLIGHTUSERDATA &&
           lua_touserdata(L, idx) == (void *)&dsf_null_sentinel;
}

bool dsf_lua_is_delete(lua_State *L, int idx)
{
    return lua_type(L, idx) == LUA_TLIGHTUSERDATA &&
           lua_touserdata(L, idx) == (void *)&dsf_delete_sentinel;
}

void dsf_lua_mark(lua_State *L, int idx, bool array)
{
    idx = lua_absindex(L, idx);
    luaL_getmetatable(L, array ? DSF_ARRAY_MT : DSF_OBJECT_MT);
    lua_setmetatable(L, idx);
}

int dsf_lua_marker(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx))
        return 0;
    luaL_getmetatable(L, DSF_ARRAY_MT);
    if (lua_rawequal(L, -1, -2)) {
        lua_pop(L, 2);
        return 1;
    }
    lua_pop(L, 1);
    luaL_getmetatable(L, DSF_OBJECT_MT);
    int r = lua_rawequal(L, -1, -2) ? 2 : 0;
    lua_pop(L, 2);
    return r;
}

static void new_marker(lua_State *L, const char *key)
{
    luaL_newmetatable(L, key); /* sets __name */
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable"); /* scripts cannot read or swap it */
    lua_pop(L, 1);
}

void dsf_values_setup(lua_State *L)
{
    new_marker(L, DSF_ARRAY_MT);
    new_marker(L, DSF_OBJECT_MT);
}
