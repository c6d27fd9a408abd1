/*
** cli.h -- the command line: dispatch to subcommands, shared options,
** diagnostics output and exit codes.
*/
#ifndef DSF_CLI_H
#define DSF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/opts.h"
#include "core/diag.h"
#include "core/paths.h"
#include "fetch/repo.h"
#include "lua/host.h"

/* Runs dsforge with argv; returns the process exit status. */
int dsf_cli_main(int argc, char **argv);

/* Options every command that runs Lua or finds profiles accepts. */
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

#define DSF_COMMON_OPTS                                                   \
    {"profile-path", 0, true, DSF_OPT_PROFILE_PATH},                      \
    {"plugin-path", 0, true, DSF_OPT_PLUGIN_PATH},                        \
    {"max-memory", 0, true, DSF_OPT_MAX_MEMORY},                          \
    {"max-instructions", 0, true, DSF_OPT_MAX_INSTRUCTIONS},              \
    {"max-seconds", 0, true, DSF_OPT_MAX_SECONDS},                        \
    {"offline", 0, false, DSF_OPT_OFFLINE},                               \
    {"allow-http", 0, false, DSF_OPT_ALLOW_HTTP},                         \
    {"locked", 0, false, DSF_OPT_LOCKED},                                 \
    {"allow-expired", 0, false, DSF_OPT_ALLOW_EXPIRED},                   \
    {"help", 'h', false, DSF_OPT_HELP}

#define DSF_COMMON_HELP                                                   \
    "Common options:\n"                                                   \
    "  --profile-path DIR      look for profiles in DIR first "           \
    "(repeatable)\n"                                                      \
    "  --plugin-path DIR       look for plugins in DIR first "            \
    "(repeatable)\n"                                                      \
    "  --max-memory MIB        Lua memory per evaluation (default 64)\n" \
    "  --max-instructions N    Lua instructions per call "                \
    "(default 200000000)\n"                                               \
    "  --max-seconds S         wall-clock time per Lua call "             \
    "(default 10)\n"                                                      \
    "  --offline               use only the cache and the lock file\n"   \
    "  --allow-http            allow plain http:// repositories\n"        \
    "  --locked                fail (exit 4) when a repository differs "   \
    "from\n                          the lock file (also CI=true)\n"         \
    "  --allow-expired         accept a repository index past its "        \
    "expiry\n"                                                              \
    "  -h, --help              show this help\n"

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
** includes the plugins of the configured repositories (before the
** built-in ones), which may revalidate them over the network: DSF_ENET
** or DSF_EINPUT when that fails. */
int dsf_cli_env_finish(dsf_cli_env *env, dsf_diags *d);

void dsf_cli_env_free(dsf_cli_env *env);

/* A command's argument loop: common options are applied to env, --help
** prints help, errors stop the loop. Usage:
**     dsf_cli_args a;
**     dsf_cli_args_init(&a, argc, argv, "check", opts, help, &env, &d);
**     while ((id = dsf_cli_next(&a, &arg)) != DSF_OPT_END)
**         ... set a.rc to stop with an error ...
**     if (a.help_shown) ... return 0 ...
*/
typedef struct dsf_cli_args {
    dsf_optparse p;
    const dsf_opt *opts;
    const char *help;
    dsf_cli_env *env;
    dsf_diags *d;
    int rc;           /* < 0 once an error stopped the loop */
    bool help_shown;  /* --help was given (and printed) */
} dsf_cli_args;

void dsf_cli_args_init(dsf_cli_args *a, int argc, char **argv,
                       const char *cmd, const dsf_opt *opts, const char *help,
                       dsf_cli_env *env, dsf_diags *d);

/* The next command-specific option id, or DSF_OPT_POS with the argument
** in *arg (borrowed from argv); DSF_OPT_END at the end, after --help, or
** when a.rc is set. */
int dsf_cli_next(dsf_cli_args *a, const char **arg);

/* Prints d to stderr (sorted when sort) and returns the exit status for
** rc, turning an rc of 0 with errors in d into 1. */
int dsf_cli_finish(const dsf_cli_env *env, dsf_diags *d, int rc);

/* Subcommands: each returns the exit status. */
int dsf_cmd_gen(int argc, char **argv);
int dsf_cmd_detect(int argc, char **argv);
int dsf_cmd_list(int argc, char **argv);
int dsf_cmd_show(int argc, char **argv);
int dsf_cmd_check(int argc, char **argv);
int dsf_cmd_explain(int argc, char **argv);
int dsf_cmd_schema(int argc, char **argv);
int dsf_cmd_plugins(int argc, char **argv);
int dsf_cmd_estimate(int argc, char **argv);
int dsf_cmd_repo(int argc, char **argv);
int dsf_cmd_diff(int argc, char **argv);
int dsf_cmd_report(int argc, char **argv);

#endif
