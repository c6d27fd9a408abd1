/*
** args.h -- what every command shares: the common options (search paths,
** Lua limits, network), the environment they build, the argument loop
** over a command's option table (with --help), and the final printing of
** diagnostics with the exit status. Below cli.c and the commands; calls
** neither.
*/
#ifndef DSF_ARGS_H
#define DSF_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/help.h"
#include "cli/opts.h"
#include "core/diag.h"
#include "core/paths.h"
#include "fetch/repo.h"
#include "lua/host.h"

/* Ids of the common options (above any command's own ids). */
enum dsf_common_opt_ids {
    DSF_OPT_PROFILE_PATH = 1000,
    DSF_OPT_PLUGIN_PATH,
    DSF_OPT_MAX_MEMORY,
    DSF_OPT_MAX_INSTRUCTIONS,
    DSF_OPT_MAX_SECONDS,
    DSF_OPT_OFFLINE,
    DSF_OPT_ALLOW_HTTP,
    DSF_OPT_LOCKED,
    DSF_OPT_ALLOW_EXPIRED,
    DSF_OPT_HELP
};

/* The common options' table; every command takes --help, and those with
** `common` set take the rest. */
extern const dsf_opt dsf_common_opts[];
extern const dsf_opt dsf_help_opts[];

/* The environment a command runs in, filled from the common options. */
typedef struct dsf_cli_env {
    const char *profile_paths[32];
    size_t n_profile_paths;
    const char *plugin_paths[32];
    size_t n_plugin_paths;
    dsf_limits limits;
    bool offline;
    bool allow_http;
    bool color;         /* diagnostics in colour (stderr is a terminal) */
    dsf_repo_opts repo;    /* remote repositories (offline, allow_http) */
    dsf_dirs profile_dirs; /* built by dsf_cli_env_finish */
    dsf_dirs plugin_dirs;
} dsf_cli_env;

/* Defaults, and the colour decision (a terminal, no NO_COLOR). */
void dsf_cli_env_init(dsf_cli_env *env);

/* Handles a common option id with its argument; 1 when it was one, 0 when
** not, DSF_EUSAGE on a bad value. */
int dsf_cli_env_option(dsf_cli_env *env, int id, const char *arg,
                       dsf_diags *d);

/* Builds the search paths once the options are parsed. The plugin path
** includes the plugins of the configured repositories (after the local
** and built-in ones unless the project lets them override), which may
** revalidate them over the network: DSF_ENET or DSF_EINPUT when that
** fails. */
int dsf_cli_env_finish(dsf_cli_env *env, dsf_diags *d);

void dsf_cli_env_free(dsf_cli_env *env);

/* A command's argument loop: common options are applied to env, --help
** prints the command's help (from cmd), errors stop the loop. Usage:
**     dsf_cli_args a;
**     dsf_cli_args_init(&a, argc, argv, &dsf_cmd_check, &env, &d);
**     while ((id = dsf_cli_next(&a, &arg)) != DSF_OPT_END)
**         ... set a.rc to stop with an error ...
**     if (a.help_shown) ... return 0 ...
*/
typedef struct dsf_cli_args {
    dsf_optparse p;
    const dsf_command *cmd;
    dsf_cli_env *env;
    dsf_diags *d;
    int rc;           /* < 0 once an error stopped the loop */
    bool help_shown;  /* --help was given (and printed) */
} dsf_cli_args;

void dsf_cli_args_init(dsf_cli_args *a, int argc, char **argv,
                       const dsf_command *cmd, dsf_cli_env *env,
                       dsf_diags *d);

/* The next command-specific option id, or DSF_OPT_POS with the argument
** in *arg (borrowed from argv); DSF_OPT_END at the end, after --help, or
** when a.rc is set. */
int dsf_cli_next(dsf_cli_args *a, const char **arg);

/* Prints d to stderr and returns the exit status for rc, turning an rc of
** 0 with errors in d into 1. Frees d. env may be NULL. */
int dsf_cli_finish(const dsf_cli_env *env, dsf_diags *d, int rc);

/* Prints to stdout which project the command uses ("project: DIR ...",
** core/project.h), or nothing outside a project. */
void dsf_cli_print_project(void);

/* Adds the usage error "unknown <what> 'word'" with a did-you-mean hint
** from known (NULL-terminated) and the command's --help; DSF_EUSAGE. */
int dsf_cli_unknown(dsf_diags *d, const char *cmd, const char *what,
                    const char *word, const char *const *known);

#endif
