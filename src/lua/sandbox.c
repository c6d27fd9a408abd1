/*
** sandbox.c -- the sandbox every script runs in: the allow-listed
** libraries and globals, chunk environments, the wrapped load, print,
** setmetatable, xpcall and pairs, require for plugin modules, and the
** null/delete sentinels and array/object markers.
*/
#include "lua/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "lua/chunk.h"
#include "lua/dsflib.h"
#include "lua/errobj.h"
#include "lua/limits.h"
#include "lua/values.h"

/* Registry keys of the sandbox. */
#define BASE_KEY "dsforge.base"       /* the allow-listed globals */
#define ENVMT_KEY "dsforge.env_mt"    /* metatable of chunk envs */
#define LOADED_KEY "dsforge.loaded"   /* require's module cache */
#define CONFIG_KEY "dsforge.sandbox"  /* the dsf_sandbox_config */
#define PRISTINE_KEY "dsforge.pristine" /* allow-list as opened, never seen
                                        ** by a script: renewals copy it */
#define BASEMT_KEY "dsforge.base_mt"  /* metatable of every base */

/* ------------------------------------------------------------------ */
/* The sandbox. */


/* __index of the base table: reached only for names that are neither in
** a chunk's own environment nor in the allow-list. */
static int undefined_global(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING)
        return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT, "undefined global '%s'",
                                lua_tostring(L, 2));
    return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT, "undefined global");
}

/* Replaces upvalue 1 (_ENV) of the function on top with a new chunk
** environment: its own table, whose misses go to the base allow-list. */
void dsf_sandbox_set_env(lua_State *L)
{
    lua_newtable(L);
    lua_getfield(L, LUA_REGISTRYINDEX, ENVMT_KEY);
    lua_setmetatable(L, -2);
    if (!lua_setupvalue(L, -2, 1))
        lua_pop(L, 1);
}

/* type(v): luaB_type's answer, with the type names pushed from upvalues
** (pushed once, at set-up) rather than found again by lua_pushstring on
** every call: rules and walks ask type() of every value they read. */
static int l_type(lua_State *L)
{
    int t = lua_type(L, 1);
    luaL_argcheck(L, t != LUA_TNONE, 1, "value expected");
    lua_pushvalue(L, lua_upvalueindex(t + 1));
    return 1;
}

static void push_type(lua_State *L)
{
    for (int t = 0; t < LUA_NUMTYPES; t++)
        lua_pushstring(L, lua_typename(L, t));
    lua_pushcclosure(L, l_type, LUA_NUMTYPES);
}

static int l_print(lua_State *L)
{
    /* Straight to stderr, cleaned and in pieces, within the scripts'
    ** output budget (core/diag.h): no copy of what a script prints. */
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        if (i > 1)
            dsf_write_script_text("\t", 1, stderr, false);
        dsf_write_script_text(s, len, stderr, false);
        lua_pop(L, 1);
    }
    dsf_write_script_text("\n", 1, stderr, false);
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
            return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT,
                                    "setmetatable: __gc metamethods are not "
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
    if (dsf_limits_hit(L) != DSF_HIT_NONE)
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
        return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT,
                                "load: only string chunks are allowed in "
                                "the sandbox");
    const char *name = luaL_optstring(L, 2, "=(load)");
    const char *mode = luaL_optstring(L, 3, "t");
    if (strcmp(mode, "t") != 0)
        return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT,
                                "load: binary chunks are not allowed in the "
                                "sandbox (mode must be \"t\")");
    dsf_limits_untrusted(L); /* text made at run time: counted from now */
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
    const char *name = luaL_checkstring(L, 1);
    if (!valid_module_name(name))
        return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT,
                                "require: invalid module name '%s'", name);
    lua_getfield(L, LUA_REGISTRYINDEX, CONFIG_KEY);
    dsf_sandbox_config *h = lua_touserdata(L, -1);
    lua_pop(L, 1);
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LOADED_KEY); /* 2 */
    lua_pushvalue(L, 1);
    int t = lua_rawget(L, 2);
    if (t == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == (void *)h)
        return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT,
                                "require: module '%s' requires itself "
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
            path = dsf_xconcat(h->module_dirs[i], "/", rel,
                               form ? "/init.lua" : ".lua", NULL);
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
        return dsf_errobj_raise(L, 1, DSF_ERR_SCRIPT,
                                "require: module '%s' not found on the "
                                "plugin path", name);
    /* Compile while marking the module as in progress. */
    lua_pushvalue(L, 1);
    lua_pushlightuserdata(L, h);
    lua_rawset(L, 2);
    lua_pushfstring(L, "@%s", path);
    free(path);
    if (dsf_chunk_load(L, src, lua_tostring(L, -1)) != LUA_OK)
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

int dsf_sandbox_require(lua_State *L) { return l_require(L); }

static const char *const string_removed[] = {"dump", NULL};
static const char *const math_removed[] = {"random", "randomseed", NULL};

/* The allow-list: the set-up below builds the base environment from it
** and from nothing else; contrib/docs/lua-environment.md lists exactly
** these names. */
const dsf_sandbox_global dsf_sandbox_globals[] = {
    {"_VERSION", DSF_FROM_BASE, NULL, NULL},
    {"assert", DSF_FROM_BASE, NULL, NULL},
    {"error", DSF_FROM_BASE, NULL, NULL},
    {"getmetatable", DSF_FROM_BASE, NULL, NULL},
    {"ipairs", DSF_FROM_BASE, NULL, NULL},
    {"next", DSF_FROM_BASE, NULL, NULL},
    {"pcall", DSF_FROM_BASE, NULL, NULL},
    {"rawequal", DSF_FROM_BASE, NULL, NULL},
    {"rawget", DSF_FROM_BASE, NULL, NULL},
    {"rawlen", DSF_FROM_BASE, NULL, NULL},
    {"rawset", DSF_FROM_BASE, NULL, NULL},
    {"select", DSF_FROM_BASE, NULL, NULL},
    {"tonumber", DSF_FROM_BASE, NULL, NULL},
    {"tostring", DSF_FROM_BASE, NULL, NULL},
    {"type", DSF_FROM_SANDBOX, l_type, NULL},
    {"load", DSF_FROM_SANDBOX, l_load, NULL},
    {"pairs", DSF_FROM_SANDBOX, dsf_lua_pairs, NULL},
    {"print", DSF_FROM_SANDBOX, l_print, NULL},
    {"require", DSF_FROM_SANDBOX, l_require, NULL},
    {"setmetatable", DSF_FROM_SANDBOX, l_setmetatable, NULL},
    {"xpcall", DSF_FROM_SANDBOX, l_xpcall, NULL},
    {LUA_STRLIBNAME, DSF_FROM_LIBRARY, luaopen_string, string_removed},
    {LUA_TABLIBNAME, DSF_FROM_LIBRARY, luaopen_table, NULL},
    {LUA_MATHLIBNAME, DSF_FROM_LIBRARY, luaopen_math, math_removed},
    {LUA_UTF8LIBNAME, DSF_FROM_LIBRARY, luaopen_utf8, NULL},
    {"dsforge", DSF_FROM_DSFORGE, NULL, NULL},
    {NULL, DSF_FROM_BASE, NULL, NULL}};

/* Builds the sandbox: opens the base library and the allow-listed
** libraries (never luaL_openlibs), builds the base table that every chunk
** environment reads through from dsf_sandbox_globals, then empties the
** real globals. Runs protected. */
int dsf_sandbox_setup(lua_State *L)
{
    dsf_sandbox_config *cfg = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_pushlightuserdata(L, cfg);
    lua_setfield(L, LUA_REGISTRYINDEX, CONFIG_KEY);
    luaL_requiref(L, LUA_GNAME, luaopen_base, 0);
    lua_pop(L, 1);

    dsf_values_setup(L);
    dsf_errobj_setup(L);

    /* The pristine allow-list: what every base is a copy of. No script
    ** ever holds it or one of its tables (dsforge is made anew). */
    lua_pushglobaltable(L);
    int g = lua_gettop(L);
    lua_newtable(L);
    int base = lua_gettop(L);
    for (const dsf_sandbox_global *e = dsf_sandbox_globals; e->name; e++) {
        switch (e->from) {
        case DSF_FROM_BASE:
            lua_getfield(L, g, e->name);
            break;
        case DSF_FROM_LIBRARY:
            luaL_requiref(L, e->name, e->fn, 0);
            for (int i = 0; e->removed && e->removed[i]; i++) {
                lua_pushnil(L);
                lua_setfield(L, -2, e->removed[i]);
            }
            break;
        case DSF_FROM_SANDBOX:
            if (e->fn == l_type)
                push_type(L); /* a closure: the names as upvalues */
            else
                lua_pushcfunction(L, e->fn);
            break;
        case DSF_FROM_DSFORGE:
            continue; /* made by each renewal (warn counts per base) */
        }
        lua_setfield(L, base, e->name);
    }
    lua_setfield(L, LUA_REGISTRYINDEX, PRISTINE_KEY);

    /* Protect the string metatable: getmetatable("") gives false. Its
    ** __index is the current base's string table (set by renewals). */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);
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
    lua_newtable(L);
    lua_pushcfunction(L, undefined_global);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setfield(L, LUA_REGISTRYINDEX, BASEMT_KEY);
    lua_newtable(L);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setfield(L, LUA_REGISTRYINDEX, ENVMT_KEY);
    return dsf_sandbox_renew(L);
}

/* A copy of the table on top, replacing it (its keys and values; no
** metatable: library tables have none). */
static void replace_with_copy(lua_State *L)
{
    int src = lua_gettop(L);
    lua_createtable(L, 0, 32);
    lua_pushnil(L);
    while (lua_next(L, src)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    lua_replace(L, src);
}

/* Whether the table at t holds exactly the pristine table at p's keys
** and values and has no metatable (nothing a script did to it shows). */
static bool same_as_pristine(lua_State *L, int t, int p)
{
    t = lua_absindex(L, t);
    p = lua_absindex(L, p);
    if (lua_getmetatable(L, t)) {
        lua_pop(L, 1);
        return false;
    }
    size_t n = 0, m = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        n++;
        lua_pushvalue(L, -2);
        lua_rawget(L, p);
        bool same = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        if (!same) {
            lua_pop(L, 1);
            return false;
        }
    }
    lua_pushnil(L);
    while (lua_next(L, p)) {
        m++;
        lua_pop(L, 1);
    }
    return n == m;
}

int dsf_sandbox_renew(lua_State *L)
{
    lua_settop(L, 0);
    lua_getfield(L, LUA_REGISTRYINDEX, CONFIG_KEY);
    dsf_sandbox_config *cfg = lua_touserdata(L, -1);
    lua_getfield(L, LUA_REGISTRYINDEX, PRISTINE_KEY); /* 2 */
    /* 3: the base. No script can write to it (only read through an
    ** environment's protected metatable), so the one there is kept; of
    ** its tables, which scripts can change, those that differ from the
    ** pristine ones in any way are replaced by new copies. */
    bool fresh = lua_getfield(L, LUA_REGISTRYINDEX, BASE_KEY) != LUA_TTABLE;
    if (fresh) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 32);
        lua_getfield(L, LUA_REGISTRYINDEX, BASEMT_KEY);
        lua_setmetatable(L, 3);
        lua_pushvalue(L, 3);
        lua_setfield(L, LUA_REGISTRYINDEX, BASE_KEY);
    }
    for (const dsf_sandbox_global *e = dsf_sandbox_globals; e->name; e++) {
        if (e->from == DSF_FROM_DSFORGE) {
            dsf_open_dsforge(L, cfg->warnings); /* warn's count at 0 */
            lua_setfield(L, 3, e->name);
            continue;
        }
        if (lua_getfield(L, 2, e->name) != LUA_TTABLE) {
            if (fresh)
                lua_setfield(L, 3, e->name);
            else
                lua_pop(L, 1); /* a function: the base's is the same */
            continue;
        }
        if (!fresh) {
            lua_getfield(L, 3, e->name);
            bool same = lua_istable(L, -1) && same_as_pristine(L, -1, -2);
            lua_pop(L, 1);
            if (same) {
                lua_pop(L, 1);
                continue;
            }
        }
        replace_with_copy(L);
        lua_setfield(L, 3, e->name);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, ENVMT_KEY); /* env_mt.__index = base */
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, ""); /* strings' methods: this base's string table */
    lua_getmetatable(L, -1);
    lua_getfield(L, 3, LUA_STRLIBNAME);
    lua_setfield(L, -2, "__index");
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
    lua_settop(L, 0);
    return 0;
}


void dsf_sandbox_set_global(lua_State *L, const char *name)
{
    lua_getfield(L, LUA_REGISTRYINDEX, BASE_KEY);
    lua_insert(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}
