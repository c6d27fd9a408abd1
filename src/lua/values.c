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

/* The two marker metatables are in the registry under their names
** (luaL_newmetatable: __name, for messages) and under the addresses of
** these, which is how they are looked up: a pointer's hash, where a name
** is hashed and interned on every lookup (a JSON document marks every
** object and array it pushes). */
static const char array_key, object_key;

void dsf_lua_mark(lua_State *L, int idx, bool array)
{
    idx = lua_absindex(L, idx);
    lua_rawgetp(L, LUA_REGISTRYINDEX, array ? &array_key : &object_key);
    lua_setmetatable(L, idx);
}

int dsf_lua_marker(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx))
        return 0;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &array_key);
    if (lua_rawequal(L, -1, -2)) {
        lua_pop(L, 2);
        return 1;
    }
    lua_pop(L, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &object_key);
    int r = lua_rawequal(L, -1, -2) ? 2 : 0;
    lua_pop(L, 2);
    return r;
}

static void new_marker(lua_State *L, const char *name, const char *key)
{
    luaL_newmetatable(L, name); /* sets __name */
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable"); /* scripts cannot read or swap it */
    lua_rawsetp(L, LUA_REGISTRYINDEX, key);
}

void dsf_values_setup(lua_State *L)
{
    new_marker(L, DSF_ARRAY_MT, &array_key);
    new_marker(L, DSF_OBJECT_MT, &object_key);
}
