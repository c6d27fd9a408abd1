/* dsflib.c -- the `dsforge` module (contrib/docs/lua-environment.md). */
#include "dsflib.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* One key of a table being sorted. Strings stay alive while the table is
** on the stack (they are its keys). */
typedef struct skey {
    int is_string;
    lua_Integer i;   /* integer keys */
    lua_Number n;    /* float keys */
    int is_int;
    const char *s;
    size_t len;
} skey;

/* Numbers first (numerically), then strings (byte order). */
static int cmp_skey(const void *pa, const void *pb)
{
    const skey *a = pa, *b = pb;
    if (a->is_string != b->is_string)
        return a->is_string - b->is_string;
    if (a->is_string) {
        int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
        if (c)
            return c;
        return (a->len > b->len) - (a->len < b->len);
    }
    if (a->is_int && b->is_int)
        return (a->i > b->i) - (a->i < b->i);
    lua_Number x = a->is_int ? (lua_Number)a->i : a->n;
    lua_Number y = b->is_int ? (lua_Number)b->i : b->n;
    return (x > y) - (x < y);
}

/* The keys of a table, sorted (O(n log n), so the hook is never starved
** by a huge table). Other key types are refused: their order cannot be
** made stable. The key array lives in a Lua userdata, so an error frees
** it with the rest of the state. */
static int l_sorted_keys(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        n++;
    }
    skey *keys = lua_newuserdatauv(L, (n ? n : 1) * sizeof *keys, 0); /* 2 */
    size_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        int t = lua_type(L, -1);
        skey *e = &keys[k++];
        memset(e, 0, sizeof *e);
        if (t == LUA_TSTRING) {
            e->is_string = 1;
            e->s = lua_tolstring(L, -1, &e->len);
        } else if (t == LUA_TNUMBER) {
            e->is_int = lua_isinteger(L, -1);
            if (e->is_int)
                e->i = lua_tointeger(L, -1);
            else
                e->n = lua_tonumber(L, -1);
        } else {
            return luaL_error(L, "dsforge.sorted_keys: keys must be numbers "
                                 "or strings (found a %s)", lua_typename(L, t));
        }
    }
    if (n)
        qsort(keys, n, sizeof *keys, cmp_skey);
    lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0); /* 3 */
    for (size_t i = 0; i < n; i++) {
        if (keys[i].is_string)
            lua_pushlstring(L, keys[i].s, keys[i].len);
        else if (keys[i].is_int)
            lua_pushinteger(L, keys[i].i);
        else
            lua_pushnumber(L, keys[i].n);
        lua_rawseti(L, 3, (lua_Integer)i + 1);
    }
    dsf_lua_mark(L, 3, true);
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
