/*
** options.h -- command-line options that plugins declare
** (contrib/docs/plugins.md, "Options"): those of their own commands (a
** command's `options`, commands.c) and those they add to the built-in
** commands (the `options` field of a declaration: each entry names the
** commands that take it). An option says what its value is to the
** plugins, and the core applies that without knowing the option:
**   ctx = true      the value is ctx.<name> of every hook ('-' read as
**                   '_'), in every command that takes the option;
**   param = true    the value is the param <name> ('-' read as '_');
**   strict = CLASS  (a flag) warnings of rules of that strictness class
**                   fail;
**   env = VAR       the value when the option is not given;
**   default = TEXT  the value when neither is (a param option);
**   check = function(value) -> nil, or a message and a hint: the value
**                   is refused, a usage error "<--name or VAR>: message".
*/
#ifndef DSF_PLUGIN_OPTIONS_H
#define DSF_PLUGIN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "core/diag.h"
#include "plugin/plugin.h"

/* One option (the fields of the CLI's option tables, cli/opts.h, and what
** the value does; the plugin layer does not include the CLI's headers). */
typedef struct dsf_plugin_option {
    char *name;          /* long name without dashes */
    char short_name;     /* 0 when none */
    char *arg;           /* argument name, or NULL for a flag */
    char *help;          /* one paragraph (the first command's, below) */
    char *complete;      /* completion kind, or NULL */
    char *key;           /* name with '_' for '-': the ctx field or param */
    char *env;           /* environment variable, or NULL */
    char *deflt;         /* default value, or NULL */
    char *strict;        /* strictness class (a flag), or NULL */
    bool param, ctx;
    int check;           /* registry reference of check, or LUA_NOREF */
    char *plugin;        /* the declaring plugin */
    char **commands;     /* the built-in commands that take it (NULL-
                         ** terminated), or NULL: a plugin command's */
    char **helps;        /* per command (parallel to commands) */
} dsf_plugin_option;

/* Reads the option table at stack index t into o (builtin: an entry of
** the declaration's `options`, which names its `commands`). 0, or -1
** with what is wrong in msg. Leaves the stack as it was. */
int dsf_plugin_option_read(dsf_plugin_option *o, lua_State *L, int t,
                           bool builtin, const char *plugin, char *msg,
                           size_t msgsize);
void dsf_plugin_option_free(dsf_plugin_option *o);

/* Reads the `options` every plugin declares (a list, or a function
** returning one, called now), once: DSF_EINPUT with a diagnostic for a
** bad entry, or two plugins declaring one name for one command. */
int dsf_plugins_read_options(dsf_plugins *p, dsf_diags *d);
void dsf_plugins_options_free(dsf_plugins *p);

/* The options the plugins add to the built-in command, in plugin order,
** *n of them (the array is the caller's to free, the options borrowed);
** none before dsf_plugins_read_options. */
const dsf_plugin_option **dsf_plugins_options_for(const dsf_plugins *p,
                                                  const char *command,
                                                  size_t *n);

/* Every option the plugins add to built-in commands (borrowed). */
const dsf_plugin_option *dsf_plugins_options(const dsf_plugins *p,
                                             size_t *n);

/* The option's help for command (its own, else the first). */
const char *dsf_plugin_option_help(const dsf_plugin_option *o,
                                   const char *command);

/* The value of o: given (NULL when not on the command line), else its
** environment variable (when set and not empty), else its default; NULL
** when none. A value given or from the environment is checked by the
** option's check: DSF_EUSAGE with "<from>: <message>" (from: given_as
** for a value given, NULL meaning --NAME; or the variable) when refused,
** a script error when the check raises or returns something else. */
int dsf_plugins_option_value(dsf_plugins *p, const dsf_plugin_option *o,
                             const char *given, const char *given_as,
                             const char **value, dsf_diags *d);

/* Sets ctx[key] = value for each member of values (may be NULL) in the
** table at stack index ctx. */
void dsf_plugin_push_values(lua_State *L, int ctx, const cJSON *values);

#endif
