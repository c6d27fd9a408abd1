/*
** rules.h -- what rules.c defines: reading the rules a plugin declares,
** either a list (read while the plugin loads) or a function returning the
** list (`rules = function() ... end`), called once, the first time a
** command runs or lists rules, so that a command that needs none
** (estimate, explain) never loads the modules that define them. Below
** plugin.c (loading) and validate.c (running).
*/
#ifndef DSF_PLUGIN_RULES_H
#define DSF_PLUGIN_RULES_H

#include <lua.h>

#include "core/diag.h"
#include "plugin/plugin_internal.h"

/* Reads the `rules` field of the declaration at t for plugin pi: a list
** is read into p now (*lazy = LUA_NOREF); a function is kept as a
** registry reference in *lazy for dsf_plugins_load_rules. DSF_EINPUT for
** a bad declaration. */
int dsf_plugin_read_rules(dsf_plugins *p, lua_State *L, int t,
                          const dsf_plugin_info *pi, const char *file,
                          int *lazy, dsf_diags *d);

/* Calls the `rules` functions not yet called and reads their lists
** (validate.c before running rules; plugin.c's dsf_plugins_load_rules for
** the CLI). Errors as for loading (DSF_EINPUT for a bad declaration,
** DSF_ESCRIPT when the function raises). */
int dsf_plugin_rules_load(dsf_plugins *p, dsf_diags *d);

#endif
