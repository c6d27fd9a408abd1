/* decl.c -- see decl.h. */
#include "plugin/decl.h"

#include <string.h>

bool dsf_plugin_parse_severity(const char *s, dsf_severity *out)
{
    if (!strcmp(s, "error"))
        *out = DSF_ERROR;
    else if (!strcmp(s, "warning"))
        *out = DSF_WARNING;
    else if (!strcmp(s, "note"))
        *out = DSF_NOTE;
    else
        return false;
    return true;
}

const char *dsf_plugin_raw_string(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    lua_rawget(L, t);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : NULL;
    lua_pop(L, 1); /* the string stays alive: it is a field of t */
    return s;
}
