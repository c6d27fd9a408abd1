/* cli.c -- see cli.h. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/complete.h"
#include "cli/help.h"
#include "cli/plugin_cmd.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "plugin/cmdcheck.h"
#include "plugin/options.h"
#include "plugin/targets.h"
#include "lua/dsflib.h"

static const dsf_command *const commands[] = {
    &dsf_cmd_gen,     &dsf_cmd_list, &dsf_cmd_show,   &dsf_cmd_check,
    &dsf_cmd_plugins, &dsf_cmd_diff, &dsf_cmd_report, &dsf_cmd_repo,
    &dsf_cmd_detect, &dsf_cmd_lsp,     &dsf_cmd_collect};
#define NCOMMANDS (sizeof commands / sizeof *commands)

/* The commands that are not in the table: `help` and `completion`. */
static const dsf_opt no_opts[] = {{NULL, 0, NULL, NULL, 0, NULL}};
static const dsf_command help_cmd = {
    "help", "show the help of dsforge or of a command", "help [COMMAND] [options]",
    "Without COMMAND: this list of commands. With COMMAND: the same as "
    "'dsforge COMMAND --help'. The common options say where plugin "
    "commands are found, as they do for the command itself.",
    no_opts, true, NULL, "command", NULL, NULL, NULL};
static const char *const shells[] = {"bash", "zsh", "fish", NULL};
static const dsf_command completion_cmd = {
    "completion", "print a shell completion script",
    "completion bash|zsh|fish",
    "Prints a script that completes commands, options, profile names, "
    "tiers and params for the shell. It asks dsforge itself for the "
    "candidates, so new profiles complete without regenerating it. Load "
    "it with, for example: source <(dsforge completion bash) in ~/.bashrc; "
    "dsforge completion zsh > \"${fpath[1]}/_dsforge\"; dsforge completion "
    "fish > ~/.config/fish/completions/dsforge.fish.",
    no_opts, false, NULL, NULL, shells, NULL, NULL};

static const char tail_help[] =
    "Exit codes:\n"
    "  0  success\n"
    "  1  validation found errors\n"
    "  2  usage error (bad command line)\n"
    "  3  input error (missing, unreadable or malformed file; bad "
    "profile)\n"
    "  4  network or integrity error\n"
    "  5  script error or sandbox limit\n"
    "  6  a -j worker process was killed (by a signal)\n"
    "\n"
    "Environment:\n"
    "  (every variable dsforge reads)\n"
    "  DSFORGE_PATH, DSFORGE_PLUGIN_PATH: profile and plugin directories\n"
    "    (colon-separated), after --profile-path and --plugin-path\n"
    "  DSFORGE_DATADIR: where the built-in profiles and plugins are read\n"
    "  HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_STATE_HOME: the user's\n"
    "    profiles and plugins, the repository cache, the user lock file\n"
    "  NO_COLOR: no colour in diagnostics\n"
    "  CI: 'true' or '1' fetches repositories as --locked does\n"
    "  DSFORGE_TOKEN_<REPOSITORY>: the bearer token for a repository\n"
    "  DSFORGE_FETCH_TIMEOUT, DSFORGE_FETCH_CONNECT_TIMEOUT (seconds),\n"
    "    DSFORGE_FETCH_MAX_BYTES, DSFORGE_REPO_CHECK_INTERVAL (seconds):\n"
    "    repository downloads\n"
    "  CURL_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR: the CA certificates\n"
    "  DSFORGE_LIBCURL, DSFORGE_LIBCRYPTO: the libcurl and libcrypto to load\n"
    "  DSFORGE_FULL_TEARDOWN, LD_PRELOAD: free everything at exit (when\n"
    "    set, or under valgrind) instead of leaving it to the OS\n"
    "  DSFORGE_OPEN_WAIT (seconds, default 5): how long an input that is a\n"
    "    FIFO may wait for a writer\n"
    "  DSFORGE_TEST_KILL_WORKER_AT: test only: a -j worker kills itself at\n"
    "    this variant\n";

/* Adds the line of variable name to b unless listed (seen). */
static void env_line(dsf_buf *b, dsf_buf *seen, const char *name,
                     const char *what)
{
    char *key = dsf_xconcat(" ", name, " ", NULL);
    if (!seen->data || !strstr(seen->data, key)) {
        dsf_buf_puts(seen, key);
        dsf_buf_printf(b, "  %s: %s\n", name, what);
    }
    free(key);
}

/* tail_help with the variables the plugins read (pc's; none when they
** did not load): their options' and their command checks'. Caller frees. */
static char *tail_text(dsf_plugin_cmds *pc)
{
    dsf_buf b = DSF_BUF_INIT, seen = DSF_BUF_INIT;
    dsf_buf_puts(&b, tail_help);
    dsf_plugins *p = pc && !pc->rc ? pc->pe.plugins : NULL;
    size_t n = 0;
    dsf_diags ignored = DSF_DIAGS_INIT;
    if (p && dsf_plugins_read_options(p, &ignored))
        p = NULL;
    dsf_diags_free(&ignored);
    const dsf_plugin_option *o = p ? dsf_plugins_options(p, &n) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (!o[i].env)
            continue;
        dsf_buf w = DSF_BUF_INIT;
        for (size_t k = 0; o[i].commands[k]; k++)
            dsf_buf_printf(&w, "%s%s", k ? ", " : "", o[i].commands[k]);
        char *what = dsf_xasprintf("--%s of %s without it (plugin %s)",
                                   o[i].name, w.data, o[i].plugin);
        env_line(&b, &seen, o[i].env, what);
        free(what);
        dsf_buf_free(&w);
    }
    const dsf_cmdcheck *cc = p ? dsf_plugins_cmdchecks(p, &n) : NULL;
    for (size_t i = 0; cc && i < n; i++)
        for (size_t k = 0; k < cc[i].nenv; k++) {
            char *what = dsf_xconcat("check CONFIG -- COMMAND (read by the "
                                     "command check of plugin ",
                                     cc[i].plugin, ")", NULL);
            env_line(&b, &seen, cc[i].env[k], what);
            free(what);
        }
    dsf_buf_free(&seen);
    return dsf_buf_take(&b);
}

#define MAX_COMMANDS 128

static const dsf_command *find_builtin(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i]->name, name))
            return commands[i];
    return NULL;
}

/* Every command for the lists: the table, the plugins' (pc, may be
** NULL), then help and completion. */
static size_t all_commands(const dsf_command **out, dsf_plugin_cmds *pc)
{
    size_t n = 0;
    for (size_t i = 0; i < NCOMMANDS; i++)
        out[n++] = pc ? dsf_plugin_cmds_builtin(pc, commands[i])
                      : commands[i];
    for (size_t i = 0; pc && i < pc->n && n < MAX_COMMANDS - 2; i++)
        if (!find_builtin(pc->cmds[i].name))
            out[n++] = &pc->cmds[i];
    out[n++] = &help_cmd;
    out[n++] = &completion_cmd;
    return n;
}

static int unknown_command(const char *cmd, dsf_plugin_cmds *pc)
{
    dsf_diags d = DSF_DIAGS_INIT;
    const dsf_command *all[MAX_COMMANDS];
    const char *names[MAX_COMMANDS + 1];
    size_t n = all_commands(all, pc);
    for (size_t i = 0; i < n; i++)
        names[i] = all[i]->name;
    names[n] = NULL;
    if (cmd[0] == '-') {
        static const char *const top[] = {"--help", "--version", NULL};
        dsf_cli_unknown(&d, NULL, "option", cmd, top);
    } else {
        dsf_cli_unknown(&d, NULL, "command", cmd, names);
    }
    return dsf_cli_finish(NULL, &d, DSF_EUSAGE);
}

/* When the plugins did not load, cmd (not a built-in) may be one of
** their commands: their error is the answer. Returns the exit status. */
static int plugins_not_loaded(const char *cmd, dsf_plugin_cmds *pc)
{
    dsf_diag *g = dsf_diag_add(&pc->d, DSF_ERROR, NULL, 0, 0,
                               "'%s' is not a built-in command, and the "
                               "plugins that may declare it did not load",
                               cmd);
    dsf_diag_set_hint(g, "fix the plugin above, or try 'dsforge --help'");
    return dsf_cli_finish(&pc->env, &pc->d, pc->rc);
}

/* The top help. When the plugins' commands cannot be read, it lists the
** built-in commands only and says so on stderr, after the plugins'
** error: returns that error's exit status (else 0). */
static int top_help(FILE *out, int argc, char **argv)
{
    dsf_plugin_cmds pc;
    dsf_plugin_cmds_load(&pc, argc, argv, true);
    const dsf_command *all[MAX_COMMANDS];
    size_t n = all_commands(all, &pc);
    char *tail = tail_text(&pc);
    dsf_help_top(out, all, n, tail, dsf_plugin_cmds_family(&pc));
    free(tail);
    int rc = 0;
    if (pc.rc) {
        dsf_diag *g = dsf_diag_add(&pc.d, DSF_ERROR, NULL, 0, 0,
                                   "the plugins' commands could not be "
                                   "read: none is listed above");
        dsf_diag_set_hint(g, "fix the plugin above, or see 'dsforge "
                             "plugins'");
        rc = dsf_cli_finish(&pc.env, &pc.d, pc.rc);
    }
    dsf_plugin_cmds_free(&pc);
    return rc;
}

/* help [COMMAND] [common options]: the options (--plugin-path, --repo,
** ...) choose where plugin commands are found, as for the command. */
static int run_help(int argc, char **argv)
{
    if (argc < 2)
        return top_help(stdout, argc, argv);
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &help_cmd, &env, &d);
    const char *name = NULL, *arg;
    int rc = 0, id;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == DSF_OPT_POS && !name) {
            name = arg;
        } else {
            dsf_diag *g = dsf_diag_add(&d, DSF_ERROR, NULL, 0, 0,
                                       "help takes one COMMAND");
            dsf_diag_set_hint(g, "try 'dsforge help gen'");
            rc = DSF_EUSAGE;
        }
    }
    if (!rc)
        rc = cl.rc;
    dsf_cli_env_free(&env);
    if (rc && !cl.help_shown)
        return dsf_cli_finish(NULL, &d, rc);
    dsf_diags_free(&d);
    if (cl.help_shown)
        return 0;
    if (!name)
        return top_help(stdout, argc, argv);
    const dsf_command *c = find_builtin(name);
    if (!c && !strcmp(name, "help"))
        c = &help_cmd;
    if (!c && !strcmp(name, "completion"))
        c = &completion_cmd;
    dsf_plugin_cmds pc;
    dsf_plugin_cmds_load(&pc, argc, argv, true);
    if (c && find_builtin(name))
        c = dsf_plugin_cmds_builtin(&pc, c);
    if (!c)
        c = dsf_plugin_cmds_find(&pc, name);
    if (c)
        dsf_help_print(stdout, c,
                       c->common ? dsf_common_opts : dsf_help_opts);
    else if (pc.rc && name[0] != '-')
        rc = plugins_not_loaded(name, &pc);
    else
        rc = unknown_command(name, &pc);
    dsf_plugin_cmds_free(&pc);
    return rc;
}

static int run_completion(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        dsf_help_print(stdout, &completion_cmd, dsf_help_opts);
        return 0;
    }
    dsf_diags d = DSF_DIAGS_INIT;
    if (argc != 2) {
        dsf_diag *g = dsf_diag_add(&d, DSF_ERROR, NULL, 0, 0,
                                   "completion takes one SHELL (bash, zsh "
                                   "or fish)");
        dsf_diag_set_hint(g, "try 'source <(dsforge completion bash)'");
        return dsf_cli_finish(NULL, &d, DSF_EUSAGE);
    }
    if (!dsf_help_completion(stdout, argv[1]))
        return dsf_cli_finish(NULL, &d,
                              dsf_cli_unknown(&d, "completion", "shell",
                                              argv[1], shells));
    return 0;
}

int dsf_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        top_help(stderr, argc, argv); /* (a usage error, whatever else) */
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return run_help(argc - 1, argv + 1); /* as "help" */
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("dsforge %s\n", dsf_version);
        return 0;
    }
    if (!strcmp(cmd, "help"))
        return run_help(argc - 1, argv + 1);
    if (!strcmp(cmd, "completion"))
        return run_completion(argc - 1, argv + 1);
    const dsf_command *c = find_builtin(cmd);
    if (c)
        return c->run(argc - 1, argv + 1);
    /* the hidden ones, and the plugins' commands */
    bool man = !strcmp(cmd, "__man"), comp = !strcmp(cmd, "__complete");
    dsf_plugin_cmds pc;
    dsf_plugin_cmds_load(&pc, argc - 1, argv + 1, man || comp);
    const dsf_command *all[MAX_COMMANDS];
    /* (the built-in commands' texts from the plugins: only for these) */
    size_t n = man || comp ? all_commands(all, &pc) : 0;
    int rc;
    if (man) {
        char *tail = tail_text(&pc);
        dsf_help_man(stdout, all, n, dsf_common_opts, tail, dsf_version,
                     dsf_plugin_cmds_family(&pc));
        free(tail);
        rc = 0;
    } else if (comp) {
        rc = dsf_complete(argc - 2, argv + 2, all, n);
    } else if ((c = dsf_plugin_cmds_find(&pc, cmd)) != NULL) {
        rc = dsf_plugin_cmds_run(&pc, c, argc - 1, argv + 1);
    } else if (pc.rc && cmd[0] != '-') {
        rc = plugins_not_loaded(cmd, &pc);
    } else {
        rc = unknown_command(cmd, &pc);
    }
    dsf_plugin_cmds_free(&pc);
    return rc;
}
