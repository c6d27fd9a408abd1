/* dsflib.c -- the `dsforge` module (contrib/docs/lua-environment.md). */
#include "dsflib.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "core/diag.h"
#include "version.h"

const char dsf_version[] = DSF_VERSION;

/* The kind of the value at idx, as dsforge.kind names it. */
static const char *kind_of(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        return "nil";
    case LUA_TBOOLEAN:
        return "boolean";
    case LUA_TNUMBER:
        return lua_isinteger(L, idx) ? "integer" : "number";
    case LUA_TSTRING:
        return "string";
    case LUA_TLIGHTUSERDATA:
        if (dsf_lua_is_null(L, idx))
            return "null";
        if (dsf_lua_is_delete(L, idx))
            return "delete";
        return "userdata";
    case LUA_TTABLE: {
        int m = dsf_lua_marker(L, idx);
        if (m == 1)
            return "array";
        if (m == 2)
            return "object";
        lua_rawgeti(L, idx, 1);
        bool has1 = !lua_isnil(L, -1);
        lua_pop(L, 1);
        return has1 ? "array" : "object";
    }
    default:
        return luaL_typename(L, idx);
    }
}

static int l_kind(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_pushstring(L, kind_of(L, 1));
    return 1;
}

static int mark(lua_State *L, bool array)
{
    if (lua_isnoneornil(L, 1))
        lua_newtable(L);
    else
        luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    if (lua_getmetatable(L, 1)) {
        lua_pop(L, 1);
        if (!dsf_lua_marker(L, 1))
            return luaL_error(L, "dsforge.%s: the table already has a "
                                 "metatable", array ? "array" : "object");
    }
    dsf_lua_mark(L, 1, array);
    return 1;
}

static int l_array(lua_State *L) { return mark(L, true); }
static int l_object(lua_State *L) { return mark(L, false); }

static int l_warn(lua_State *L)
{
    const char *msg = luaL_checkstring(L, 1);
    lua_Debug ar;
    const char *file = NULL;
    int line = 0;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) &&
        ar.source[0] == '@') {
        file = ar.source + 1;
        line = ar.currentline > 0 ? ar.currentline : 0;
    }
    dsf_diags *d = dsf_host_warnings(L);
    if (d)
        dsf_diag_add(d, DSF_WARNING, file, line, 0, "%s", msg);
    else
        fprintf(stderr, "%s:%d: warning: %s\n", file ? file : "?", line, msg);
    return 0;
}

/* Integers first (numerically), then strings (byte order); other keys are
** refused because their order cannot be made stable. */
static int key_less(lua_State *L, int a, int b)
{
    int ta = lua_type(L, a), tb = lua_type(L, b);
    if (ta != tb)
        return ta == LUA_TNUMBER;
    if (ta == LUA_TNUMBER)
        return lua_compare(L, a, b, LUA_OPLT);
    size_t la, lb;
    const char *sa = lua_tolstring(L, a, &la), *sb = lua_tolstring(L, b, &lb);
    int c = memcmp(sa, sb, la < lb ? la : lb);
    return c < 0 || (c == 0 && la < lb);
}

static int l_sorted_keys(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_newtable(L); /* 2: result */
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        int t = lua_type(L, -1);
        if (t != LUA_TNUMBER && t != LUA_TSTRING)
            return luaL_error(L, "dsforge.sorted_keys: keys must be numbers "
                                 "or strings (found a %s)", lua_typename(L, t));
        /* Insertion sort into the result array (tables are small). */
        lua_Integer i = n;
        while (i > 0) {
            lua_rawgeti(L, 2, i);
            int less = key_less(L, -2, -1);
            if (!less) {
                lua_pop(L, 1);
                break;
            }
            lua_rawseti(L, 2, i + 1);
            i--;
        }
        lua_pushvalue(L, -1);
        lua_rawseti(L, 2, i + 1);
        n++;
    }
    dsf_lua_mark(L, 2, true);
    return 1;
}

int dsf_open_dsforge(lua_State *L)
{
    static const luaL_Reg fns[] = {{"kind", l_kind},
                                   {"array", l_array},
                                   {"object", l_object},
                                   {"warn", l_warn},
                                   {"sorted_keys", l_sorted_keys},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushlightuserdata(L, (void *)&dsf_null_sentinel);
    lua_setfield(L, -2, "null");
    lua_pushlightuserdata(L, (void *)&dsf_delete_sentinel);
    lua_setfield(L, -2, "delete");
    lua_pushstring(L, dsf_version);
    lua_setfield(L, -2, "version");
    return 1;
}
