/*
** sandbox.c -- the sandbox every script runs in: the allow-listed
** libraries and globals, chunk environments, the wrapped load, print,
** setmetatable, xpcall and pairs, require for plugin modules, and the
** null/delete sentinels and array/object markers.
*/
#include "lua/host_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "lua/dsflib.h"

const char dsf_null_sentinel = 'n';
const char dsf_delete_sentinel = 'd';

const char *const dsf_sandbox_globals[] = {
    "_VERSION", "assert",  "dsforge",  "error",    "getmetatable",
    "ipairs",   "load",    "math",     "next",     "pairs",
    "pcall",    "print",   "rawequal", "rawget",   "rawlen",
    "rawset",   "require", "select",   "setmetatable", "string",
    "table",    "tonumber", "tostring", "type",     "utf8",
    "xpcall",   NULL};

/* ------------------------------------------------------------------ */
/* The sandbox. */


/* __index of the base table: reached only for names that are neither in
** a chunk's own environment nor in the allow-list. */
static int undefined_global(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING)
        return luaL_error(L, "undefined global '%s'", lua_tostring(L, 2));
    return luaL_error(L, "undefined global");
}

/* Replaces upvalue 1 (_ENV) of the function on top with a new chunk
** environment: its own table, whose misses go to the base allow-list. */
void dsf_sandbox_set_env(lua_State *L)
{
    lua_newtable(L);
    lua_getfield(L, LUA_REGISTRYINDEX, DSF_ENVMT_KEY);
    lua_setmetatable(L, -2);
    if (!lua_setupvalue(L, -2, 1))
        lua_pop(L, 1);
}

static int l_print(lua_State *L)
{
    int n = lua_gettop(L);
    dsf_buf b = DSF_BUF_INIT;
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        if (i > 1)
            dsf_buf_putc(&b, '\t');
        dsf_buf_add(&b, s, len);
        lua_pop(L, 1);
    }
    dsf_buf_putc(&b, '\n');
    fwrite(b.data, 1, b.len, stderr);
    dsf_buf_free(&b);
    return 0;
}

/* The base library's setmetatable plus the __gc check. Done here rather
** than by calling the original from C, so argument errors name
** 'setmetatable' and every error carries the script's file:line. */
static int l_setmetatable(lua_State *L)
{
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    if (t == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "setmetatable: __gc metamethods are not "
                                 "allowed in the sandbox");
        lua_pop(L, 1);
    }
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* A script's xpcall handler, wrapped. Lua runs the handler of an error
** raised by the count hook while hooks are still off (allowhook is 0 until
** the error unwinds), so a loop in the handler could never be stopped:
** once a limit is hit the script's handler is skipped and the limit's
** message passes through unchanged. */
static int guarded_handler(lua_State *L)
{
    if (dsf_host_of(L)->hit != LIMIT_NONE)
        return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* xpcall(f, msgh, ...) as in the base library, with msgh guarded. */
static int l_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2); /* f, msgh, true, f, args... */
    if (lua_pcall(L, n - 2, LUA_MULTRET, 2) != LUA_OK) {
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - 2;
}

static int l_load(lua_State *L)
{
    size_t len;
    const char *chunk = lua_tolstring(L, 1, &len);
    if (!chunk || lua_type(L, 1) != LUA_TSTRING)
        return luaL_error(L, "load: only string chunks are allowed in the "
                             "sandbox");
    const char *name = luaL_optstring(L, 2, "=(load)");
    const char *mode = luaL_optstring(L, 3, "t");
    if (strcmp(mode, "t") != 0)
        return luaL_error(L, "load: binary chunks are not allowed in the "
                             "sandbox (mode must be \"t\")");
    if (luaL_loadbufferx(L, chunk, len, name, "t") != LUA_OK) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        lua_pushvalue(L, 4);
        if (!lua_setupvalue(L, -2, 1))
            lua_pop(L, 1);
    } else {
        dsf_sandbox_set_env(L);
    }
    return 1;
}

static bool valid_module_name(const char *s)
{
    if (!*s || *s == '.')
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        if (!ok || (c == '.' && (p[1] == '.' || p[1] == '\0')))
            return false;
    }
    return true;
}

static int l_require(lua_State *L)
{
    dsf_host *h = dsf_host_of(L);
    const char *name = luaL_checkstring(L, 1);
    if (!valid_module_name(name))
        return luaL_error(L, "require: invalid module name '%s'", name);
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, DSF_LOADED_KEY); /* 2 */
    lua_pushvalue(L, 1);
    int t = lua_rawget(L, 2);
    if (t == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == (void *)h)
        return luaL_error(L, "require: module '%s' requires itself "
                             "(circular require)", name);
    if (t != LUA_TNIL)
        return 1;
    lua_pop(L, 1);

    /* "a.b" -> "a/b.lua" or "a/b/init.lua" under each module directory. */
    char *rel = dsf_xstrdup(name);
    for (char *p = rel; *p; p++)
        if (*p == '.')
            *p = '/';
    const dsf_source *src = NULL;
    char *path = NULL;
    dsf_diags ignore = DSF_DIAGS_INIT;
    for (size_t i = 0; i < h->n_module_dirs && !src; i++) {
        for (int form = 0; form < 2 && !src; form++) {
            path = dsf_xasprintf("%s/%s%s", h->module_dirs[i], rel,
                                 form ? "/init.lua" : ".lua");
            /* A missing candidate is just not this one. */
            if (dsf_srccache_get(h->sources, path, &src, &ignore) != 0)
                src = NULL;
            if (!src) {
                free(path);
                path = NULL;
            }
        }
    }
    dsf_diags_free(&ignore);
    free(rel);
    if (!src)
        return luaL_error(L, "require: module '%s' not found on the plugin "
                             "path", name);
    /* Compile while marking the module as in progress. */
    lua_pushvalue(L, 1);
    lua_pushlightuserdata(L, h);
    lua_rawset(L, 2);
    lua_pushfstring(L, "@%s", path);
    free(path);
    if (dsf_host_load_source(L, src, lua_tostring(L, -1)) != LUA_OK)
        return lua_error(L);
    dsf_sandbox_set_env(L);
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -2);
    lua_rawset(L, 2);
    return 1;
}

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

static void remove_field(lua_State *L, const char *name)
{
    lua_pushnil(L);
    lua_setfield(L, -2, name);
}

/* Builds the sandbox: opens the allowed libraries (never luaL_openlibs),
** then moves the allow-listed names into the base table that every chunk
** environment reads through. Runs protected. */
int dsf_sandbox_setup(lua_State *L)
{
    luaL_requiref(L, LUA_GNAME, luaopen_base, 0);
    lua_pop(L, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0);
    remove_field(L, "dump");
    lua_pop(L, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 0);
    lua_pop(L, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);
    remove_field(L, "random");
    remove_field(L, "randomseed");
    lua_pop(L, 1);
    luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 0);
    lua_pop(L, 1);

    /* Protect the string metatable: getmetatable("") gives false. */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    new_marker(L, DSF_ARRAY_MT);
    new_marker(L, DSF_OBJECT_MT);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, DSF_LOADED_KEY);

    /* The base: the allow-list, with wrapped load, print, setmetatable
    ** and xpcall. */
    lua_pushglobaltable(L);
    int g = lua_gettop(L);
    lua_newtable(L);
    int base = lua_gettop(L);
    static const char *const copied[] = {
        "_VERSION", "assert",   "error",    "getmetatable", "ipairs",
        "next",     "pcall",    "rawequal",     "rawget",
        "rawlen",   "rawset",   "select",   "tonumber",     "tostring",
        "type",     NULL};
    for (int i = 0; copied[i]; i++) {
        lua_getfield(L, g, copied[i]);
        lua_setfield(L, base, copied[i]);
    }
    static const char *const libs[] = {LUA_STRLIBNAME, LUA_TABLIBNAME,
                                       LUA_MATHLIBNAME, LUA_UTF8LIBNAME,
                                       NULL};
    for (int i = 0; libs[i]; i++) {
        luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
        lua_getfield(L, -1, libs[i]);
        lua_setfield(L, base, libs[i]);
        lua_pop(L, 1);
    }
    lua_pushcfunction(L, l_setmetatable);
    lua_setfield(L, base, "setmetatable");
    lua_pushcfunction(L, l_xpcall);
    lua_setfield(L, base, "xpcall");
    lua_pushcfunction(L, l_print);
    lua_setfield(L, base, "print");
    lua_pushcfunction(L, dsf_lua_pairs);
    lua_setfield(L, base, "pairs");
    lua_pushcfunction(L, l_load);
    lua_setfield(L, base, "load");
    lua_pushcfunction(L, l_require);
    lua_setfield(L, base, "require");
    dsf_open_dsforge(L);
    lua_setfield(L, base, "dsforge");
    lua_setfield(L, LUA_REGISTRYINDEX, DSF_BASE_KEY);

    /* Empty the real global table: nothing reaches it but through base. */
    lua_pushnil(L);
    while (lua_next(L, g)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushnil(L);
        lua_rawset(L, g);
    }
    lua_pop(L, 1);

    /* Drop the library cache too (it holds the unsandboxed tables). */
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);

    /* Chunk environments read through to the base with a table __index
    ** (no C call on the hot path of every global read); the base's own
    ** __index raises for names outside the allow-list. Both metatables
    ** are protected, so scripts never reach the base table itself. */
    lua_getfield(L, LUA_REGISTRYINDEX, DSF_BASE_KEY);
    lua_newtable(L);
    lua_pushcfunction(L, undefined_global);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "__index"); /* env_mt.__index = base */
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setfield(L, LUA_REGISTRYINDEX, DSF_ENVMT_KEY);
    return 0;
}

