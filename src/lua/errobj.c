/* errobj.c -- see errobj.h. */
#include "lua/errobj.h"

#include <stdarg.h>
#include <string.h>

#include <lauxlib.h>

#include "core/xalloc.h"

#define ERROBJ_MT "dsforge.error"

static const char *const kind_names[] = {"script", "input", "limit"};

static int errobj_tostring(lua_State *L)
{
    dsf_errinfo e;
    if (!dsf_errobj_read(L, 1, &e))
        return luaL_argerror(L, 1, "not a dsforge error");
    if (e.source && e.line > 0)
        lua_pushfstring(L, "%s:%d: %s", e.source, e.line, e.message);
    else
        lua_pushstring(L, e.message);
    return 1;
}

void dsf_errobj_setup(lua_State *L)
{
    luaL_newmetatable(L, ERROBJ_MT);
    lua_pushcfunction(L, errobj_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

void dsf_errobj_push(lua_State *L, int level, enum dsf_errkind kind,
                     const char *msg)
{
    luaL_checkstack(L, 4, "error object");
    lua_createtable(L, 0, 5);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "message");
    lua_pushstring(L, kind_names[kind]);
    lua_setfield(L, -2, "kind");
    /* The innermost Lua frame with a line: a tail call (return
    ** dsforge.fail(...)) leaves no line at level 1. */
    lua_Debug ar;
    for (int lv = level; lv >= 0 && lv < level + 8 && lua_getstack(L, lv, &ar);
         lv++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            if (ar.source[0] == '@' || ar.source[0] == '=')
                lua_pushstring(L, ar.source + 1);
            else
                lua_pushstring(L, ar.short_src);
            lua_setfield(L, -2, "source");
            lua_pushinteger(L, ar.currentline);
            lua_setfield(L, -2, "line");
            break;
        }
    }
    luaL_setmetatable(L, ERROBJ_MT);
}

int dsf_errobj_raise(lua_State *L, int level, enum dsf_errkind kind,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *msg = lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    dsf_errobj_push(L, level, kind, msg);
    lua_remove(L, -2);
    return lua_error(L);
}

static const char *raw_string(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    const char *s = lua_rawget(L, t) == LUA_TSTRING ? lua_tostring(L, -1)
                                                     : NULL;
    lua_pop(L, 1); /* the string stays alive: it is in the table */
    return s;
}

bool dsf_errobj_read(lua_State *L, int idx, dsf_errinfo *info)
{
    memset(info, 0, sizeof *info);
    if (lua_type(L, idx) != LUA_TTABLE || !lua_checkstack(L, 3))
        return false;
    idx = lua_absindex(L, idx);
    if (!lua_getmetatable(L, idx))
        return false;
    luaL_getmetatable(L, ERROBJ_MT);
    bool ours = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (!ours)
        return false;
    info->message = raw_string(L, idx, "message");
    if (!info->message)
        info->message = "(error object without a message)";
    info->source = raw_string(L, idx, "source");
    info->trace = raw_string(L, idx, "traceback");
    lua_pushliteral(L, "line");
    if (lua_rawget(L, idx) == LUA_TNUMBER && lua_isinteger(L, -1) &&
        lua_tointeger(L, -1) > 0 && lua_tointeger(L, -1) < 1000000000)
        info->line = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (!info->line)
        info->source = NULL;
    const char *kind = raw_string(L, idx, "kind");
    info->kind = DSF_ERR_SCRIPT;
    for (int k = 0; kind && k < 3; k++)
        if (strcmp(kind, kind_names[k]) == 0)
            info->kind = (enum dsf_errkind)k;
    return true;
}

bool dsf_errobj_parse_string(const char *msg, char **file, int *line,
                             const char **rest)
{
    *file = NULL;
    for (const char *p = strchr(msg, ':'); p; p = strchr(p + 1, ':')) {
        const char *q = p + 1;
        if (*q < '0' || *q > '9')
            continue;
        long n = 0;
        while (*q >= '0' && *q <= '9' && n < 100000000)
            n = n * 10 + (*q++ - '0');
        if (*q != ':')
            continue;
        *file = dsf_xstrndup(msg, (size_t)(p - msg));
        *line = (int)n;
        *rest = q + 1 + (q[1] == ' ');
        return true;
    }
    return false;
}
