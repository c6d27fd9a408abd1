/*
** decl.h -- reading the fields of a plugin's declaration table, shared by
** the files that read parts of it (plugin.c: resolvers; rules.c: rules;
** summary.c: columns; validate.c: findings). Below all of them.
*/
#ifndef DSF_PLUGIN_DECL_H
#define DSF_PLUGIN_DECL_H

#include <stdbool.h>

#include <lua.h>

#include "core/diag.h"

/* Lower-case "error", "warning" or "note"; false for anything else. */
bool dsf_plugin_parse_severity(const char *s, dsf_severity *out);

/* Raw string field key of the table at t, or NULL (borrowed from Lua: it
** stays alive while t holds it). */
const char *dsf_plugin_raw_string(lua_State *L, int t, const char *key);

#endif
