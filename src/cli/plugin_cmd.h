/*
** plugin_cmd.h -- the commands plugins declare (plugin/commands.h), seen
** by the command line: loading them from the plugin path the command
** line and the environment give, their dsf_command descriptions (for
** help, completion and the man page), and running one.
*/
#ifndef DSF_PLUGIN_CMD_H
#define DSF_PLUGIN_CMD_H

#include <stdbool.h>

#include "cli/args.h"
#include "cli/help.h"
#include "cli/plugin_env.h"
#include "cli/plugin_opts.h"
#include "plugin/commands.h"

typedef struct dsf_plugin_cmds {
    dsf_cli_env env;
    dsf_plugin_env pe;
    const dsf_plugin_command *pcmds; /* borrowed from pe.plugins */
    dsf_command *cmds;               /* one per pcmds entry */
    dsf_opt **opts;                  /* their tables */
    size_t n;
    dsf_plugin_opts builtins[16];    /* built-in commands with the
                                     ** plugins' options (below) */
    size_t nbuiltins;
    dsf_diags d;                     /* what loading said */
    int rc;                          /* loading's status */
} dsf_plugin_cmds;

/* Loads the plugins on the plugin path given by the common options found
** in argv[1..argc) and the environment; offline: never the network (for
** help and completion). Errors stay in pc->rc and pc->d. Freed with
** dsf_plugin_cmds_free. */
void dsf_plugin_cmds_load(dsf_plugin_cmds *pc, int argc, char **argv,
                          bool offline);
void dsf_plugin_cmds_free(dsf_plugin_cmds *pc);

/* The command called name, or NULL (borrowed from pc). */
const dsf_command *dsf_plugin_cmds_find(const dsf_plugin_cmds *pc,
                                        const char *name);

/* The built-in command c with the options the plugins add to it (for
** help, completion and the man page; borrowed from pc), or c itself when
** the plugins did not load. */
const dsf_command *dsf_plugin_cmds_builtin(dsf_plugin_cmds *pc,
                                           const dsf_command *c);

/* The config family's name the plugins' targets give (that of the
** default target: plugin/targets.h), or NULL. */
const char *dsf_plugin_cmds_family(dsf_plugin_cmds *pc);

/* Runs c (from pc) with argv[0] its name: parses its options, calls the
** plugin, prints its output; returns the exit status. */
int dsf_plugin_cmds_run(dsf_plugin_cmds *pc, const dsf_command *c, int argc,
                        char **argv);

#endif
