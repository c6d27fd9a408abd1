/*
** commands.h -- commands that plugins declare (the `commands` field of a
** plugin's declaration, contrib/docs/plugins.md): reading them when the
** plugin loads, and running one in the plugin's sandbox.
**
** A command has the same shape as a built-in one (cli/help.h): a name,
** a summary, usage and description, and an option table whose entries
** carry a long name, an optional short one, an argument name and help.
** Its `run(opts, args, ctx)` gets the parsed options (name -> string, or
** true for a flag), the positional arguments, and ctx with read_json,
** is_file and json (see the doc); it returns the text to print (or a
** table, printed as JSON) and optionally an exit status, or nil and an
** error {message, hint, file, line, col, kind = "usage"|"input"}.
*/
#ifndef DSF_PLUGIN_COMMANDS_H
#define DSF_PLUGIN_COMMANDS_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "core/diag.h"
#include "plugin/options.h"
#include "plugin/plugin.h"

typedef struct dsf_plugin_command {
    char *name;
    char *plugin;        /* the declaring plugin */
    char *summary;
    char *usage;         /* after "dsforge "; defaults to the name */
    char *description;   /* or NULL */
    char *notes;         /* or NULL */
    char *positional;    /* completion kind of the positionals, or NULL */
    dsf_plugin_option *opts;
    size_t nopts;
    int ref;             /* registry reference of run */
} dsf_plugin_command;

typedef struct dsf_plugin_commands {
    dsf_plugin_command *items;
    size_t n;
} dsf_plugin_commands;

/* Reads the `commands` every plugin declares (a list, or a function
** returning one, called now) into p's commands, in plugin order. Loading
** the plugins does not read them: only a command that runs, lists or
** documents plugin commands does (the built-in commands never do, nor
** load the modules a `commands` function requires). The first call reads
** them; later calls return 0 at once. DSF_EINPUT with a diagnostic for a
** bad declaration or a name another plugin declared, or the function's
** script error; nothing is kept then. */
int dsf_plugins_read_commands(dsf_plugins *p, dsf_diags *d);

void dsf_plugin_commands_free(dsf_plugin_commands *cmds);

/* The commands every loaded plugin declares (borrowed from p; none before
** dsf_plugins_read_commands). */
const dsf_plugin_command *dsf_plugins_commands(const dsf_plugins *p,
                                               size_t *n);

/* Runs c with opts (a JSON object: option name -> string or true) and
** args (a JSON array of strings); cmdline[0..ncmdline) are the command
** line's words, the only paths ctx.read_json and ctx.is_file accept;
** values (may be NULL: the values of its options that declare `ctx`,
** options.h) become fields of ctx. On
** success *out is the text to print (caller frees; "" for none) and
** *status the command's exit status (0..5). Errors: the command's own
** (DSF_EUSAGE, DSF_EINPUT with its diagnostic), or a script error. */
int dsf_plugins_run_command(dsf_plugins *p, const dsf_plugin_command *c,
                            const cJSON *opts, const cJSON *args,
                            char *const *cmdline, int ncmdline,
                            const cJSON *values, char **out, int *status,
                            dsf_diags *d);

/* ctx.json(value [, pretty]): the canonical JSON text of a value, as gen
** writes it; a lua_CFunction for the commands' ctx and the emitters'. */
int dsf_plugin_lua_json(lua_State *L);

#endif
