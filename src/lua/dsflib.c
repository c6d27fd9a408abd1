/* dsflib.c -- the `dsforge` module (contrib/docs/lua-environment.md). */
#include "lua/dsflib.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "lua/limits.h"
#include "lua/errobj.h"
#include "lua/values.h"
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

/* A warning is one diagnostic line: longer text is cut, and a script
** reports at most MAX_WARNINGS of them (then one note says the rest were
** dropped), so its warnings can neither fill memory nor flood the
** terminal. What is kept counts against the memory budget. */
#define MAX_WARNING_BYTES 2000
#define MAX_WARNINGS 1000

static int l_warn(lua_State *L)
{
    size_t len;
    const char *msg = luaL_checklstring(L, 1, &len);
    lua_Integer count = lua_tointeger(L, lua_upvalueindex(2)) + 1;
    lua_pushinteger(L, count);
    lua_replace(L, lua_upvalueindex(2));
    if (count > MAX_WARNINGS + 1)
        return 0;
    lua_Debug ar;
    const char *file = NULL;
    int line = 0;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) &&
        ar.source[0] == '@') {
        file = ar.source + 1;
        line = ar.currentline > 0 ? ar.currentline : 0;
    }
    dsf_diags *d = lua_touserdata(L, lua_upvalueindex(1));
    /* Never scans more than the kept part (a NUL byte ends it too). */
    int keep = (int)strnlen(msg, MAX_WARNING_BYTES);
    bool cut = len > (size_t)keep;
    /* Not in the middle of a UTF-8 sequence. */
    while (cut && keep > 0 && ((unsigned char)msg[keep] & 0xC0) == 0x80)
        keep--;
    if (!dsf_limits_charge(L, (size_t)keep + (file ? strlen(file) : 0) +
                                  sizeof(dsf_diag) + 64))
        return dsf_errobj_raise(L, 1, DSF_ERR_LIMIT,
                                "dsforge.warn: memory limit of %d MiB "
                                "exceeded (warnings count against it)",
                                (int)(dsf_limits_of(L)->memory >> 20));
    if (count == MAX_WARNINGS + 1) {
        if (d)
            dsf_diag_add(d, DSF_NOTE, file, line, 0,
                         "more than %d warnings: the rest are dropped",
                         MAX_WARNINGS);
        return 0;
    }
    if (d)
        dsf_diag_add(d, DSF_WARNING, file, line, 0, "%.*s%s", keep, msg,
                     cut ? " [...]" : "");
    else {
        char *text = dsf_xasprintf("%s:%d: warning: %.*s%s\n",
                                   file ? file : "?", line, keep, msg,
                                   cut ? " [...]" : "");
        dsf_fputs_clean(text, stderr, false);
        free(text);
    }
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

/* Most tables sorted are a config's objects, of a few keys: they are
** sorted in an array on the C stack, with the keys themselves kept on the
** Lua stack (no string made again) and put in order by insertion. */
#define SMALL_KEYS 48

/* push_sorted_keys for a table of at most SMALL_KEYS keys, all numbers or
** strings: pushes the sorted array and returns true; else leaves the
** stack as it was and returns false. DSF_LJMP */
static bool push_sorted_small(lua_State *L, int idx)
{
    skey keys[SMALL_KEYS];
    int slot[SMALL_KEYS];
    int base = lua_gettop(L);
    luaL_checkstack(L, SMALL_KEYS + 4, "dsforge.sorted_keys");
    int k = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int t = lua_type(L, -1);
        if (k == SMALL_KEYS || (t != LUA_TSTRING && t != LUA_TNUMBER)) {
            lua_settop(L, base);
            return false;
        }
        /* Insert the key (kept at this stack slot) in order. */
        skey e;
        memset(&e, 0, sizeof e);
        if (t == LUA_TSTRING) {
            e.is_string = 1;
            e.s = lua_tolstring(L, -1, &e.len);
        } else {
            e.is_int = lua_isinteger(L, -1);
            if (e.is_int)
                e.i = lua_tointeger(L, -1);
            else
                e.n = lua_tonumber(L, -1);
        }
        int j = k++;
        for (; j > 0 && cmp_skey(&keys[j - 1], &e) > 0; j--) {
            keys[j] = keys[j - 1];
            slot[j] = slot[j - 1];
        }
        keys[j] = e;
        slot[j] = lua_gettop(L);
        lua_pushvalue(L, -1); /* the copy lua_next goes on from */
    }
    lua_createtable(L, k, 0);
    for (int i = 0; i < k; i++) {
        lua_pushvalue(L, slot[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_copy(L, -1, base + 1);
    lua_settop(L, base + 1);
    return true;
}

/* Pushes an array of the keys of the table at idx, sorted: numbers, then
** strings. Keys of other types (booleans, tables, ...) cannot be put in a
** stable order: an error when strict, else appended in `next` order. The
** key array lives in a Lua userdata, so an error frees it with the rest
** of the state. DSF_LJMP */
static void push_sorted_keys(lua_State *L, int idx, bool strict)
{
    idx = lua_absindex(L, idx);
    if (push_sorted_small(L, idx))
        return;
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        n++;
    }
    skey *keys = lua_newuserdatauv(L, (n ? n : 1) * sizeof *keys, 0);
    int ud = lua_gettop(L);
    size_t k = 0, others = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int t = lua_type(L, -1);
        if (t != LUA_TSTRING && t != LUA_TNUMBER) {
            if (strict)
                luaL_error(L, "dsforge.sorted_keys: keys must be numbers or "
                              "strings (found a %s)", lua_typename(L, t));
            others++;
            continue;
        }
        skey *e = &keys[k++];
        memset(e, 0, sizeof *e);
        if (t == LUA_TSTRING) {
            e->is_string = 1;
            e->s = lua_tolstring(L, -1, &e->len);
        } else {
            e->is_int = lua_isinteger(L, -1);
            if (e->is_int)
                e->i = lua_tointeger(L, -1);
            else
                e->n = lua_tonumber(L, -1);
        }
    }
    if (k)
        qsort(keys, k, sizeof *keys, cmp_skey);
    lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0);
    int out = lua_gettop(L);
    for (size_t i = 0; i < k; i++) {
        if (keys[i].is_string)
            lua_pushlstring(L, keys[i].s, keys[i].len);
        else if (keys[i].is_int)
            lua_pushinteger(L, keys[i].i);
        else
            lua_pushnumber(L, keys[i].n);
        lua_rawseti(L, out, (lua_Integer)i + 1);
    }
    if (others) {
        lua_Integer j = (lua_Integer)k;
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            lua_pop(L, 1);
            int t = lua_type(L, -1);
            if (t != LUA_TSTRING && t != LUA_TNUMBER) {
                lua_pushvalue(L, -1);
                lua_rawseti(L, out, ++j);
            }
        }
    }
    lua_remove(L, ud);
}

/* dsforge.sorted_keys(t): the keys of t, sorted (O(n log n), so the hook
** is never starved by a huge table); only numbers and strings. */
static int l_sorted_keys(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    push_sorted_keys(L, 1, true);
    dsf_lua_mark(L, -1, true);
    return 1;
}

/* The iterator of pairs: upvalue 1 the sorted keys, 2 the position, 3 the
** table it walks. Keys whose value was removed during the loop are
** skipped. A script can call the iterator itself, with anything: it walks
** only its own table and refuses any other first argument. */
static int sorted_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!lua_rawequal(L, 1, lua_upvalueindex(3)))
        return luaL_argerror(L, 1, "not the table this iterator walks");
    lua_Integer i = lua_tointeger(L, lua_upvalueindex(2));
    for (;;) {
        if (lua_rawgeti(L, lua_upvalueindex(1), ++i) == LUA_TNIL)
            return 0;
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) != LUA_TNIL) {
            lua_pushinteger(L, i);
            lua_replace(L, lua_upvalueindex(2));
            return 2;
        }
        lua_pop(L, 2);
    }
}

int dsf_lua_pairs(lua_State *L)
{
    luaL_checkany(L, 1);
    if (luaL_getmetafield(L, 1, "__pairs") != LUA_TNIL) {
        lua_pushvalue(L, 1);
        lua_call(L, 1, 3);
        return 3;
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    push_sorted_keys(L, 1, false);
    lua_pushinteger(L, 0);
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, sorted_next, 3);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* dsforge.fail(msg): stops the evaluation with an input error (exit 3):
** the script found its params or config unusable, it is not broken. */
static int l_fail(lua_State *L)
{
    const char *msg = luaL_checkstring(L, 1);
    /* like error(msg, level): 1 (the default) blames the caller, 2 its
    ** caller (a helper failing on behalf of the profile that called it),
    ** 0 no line (the input at fault is the command line or a param, which
    ** no line of a script holds) */
    int level = (int)luaL_optinteger(L, 2, 1);
    luaL_argcheck(L, level >= 0 && level <= 16, 2, "level must be 0 to 16");
    return dsf_errobj_raise(L, level ? level : DSF_ERROBJ_NOWHERE,
                            DSF_ERR_INPUT, "%s", msg);
}

int dsf_open_dsforge(lua_State *L, dsf_diags *warnings)
{
    static const luaL_Reg fns[] = {{"kind", l_kind},
                                   {"fail", l_fail},
                                   {"array", l_array},
                                   {"object", l_object},
                                   {"sorted_keys", l_sorted_keys},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushlightuserdata(L, warnings);
    lua_pushinteger(L, 0); /* warnings so far */
    lua_pushcclosure(L, l_warn, 2);
    lua_setfield(L, -2, "warn");
    lua_pushlightuserdata(L, (void *)&dsf_null_sentinel);
    lua_setfield(L, -2, "null");
    lua_pushlightuserdata(L, (void *)&dsf_delete_sentinel);
    lua_setfield(L, -2, "delete");
    lua_pushstring(L, dsf_version);
    lua_setfield(L, -2, "version");
    return 1;
}
