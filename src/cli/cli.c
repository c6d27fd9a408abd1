/* cli.c -- see cli.h. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts.h"
#include "core/error.h"
#include "lua/dsflib.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"gen", dsf_cmd_gen, "generate configs for a profile's tiers or a "
                         "sweep matrix"},
    {"list", dsf_cmd_list, "list the profiles on the search path"},
    {"show", dsf_cmd_show, "show a profile: parents, params, tiers"},
    {"check", dsf_cmd_check, "validate DeepSpeed config files"},
    {"explain", dsf_cmd_explain, "explain every key of a config"},
    {"schema", dsf_cmd_schema, "print a JSON Schema of DeepSpeed's config"},
    {"plugins", dsf_cmd_plugins, "list plugins and their rules"},
    {"estimate", dsf_cmd_estimate, "estimate memory per GPU and CPU"},
    {"diff", dsf_cmd_diff, "compare two configs or variants, with reasons"},
    {"report", dsf_cmd_report, "write the A/B report page of a gen output"},
    {"repo", dsf_cmd_repo, "manage remote profile repositories"},
    {"detect", dsf_cmd_detect, "show this machine's GPUs, memory and cores"},
    {NULL, NULL, NULL}};

static const char exit_codes_help[] =
    "Exit codes:\n"
    "  0  success\n"
    "  1  validation found errors\n"
    "  2  usage error (bad command line)\n"
    "  3  input error (missing, unreadable or malformed file; bad "
    "profile)\n"
    "  4  network or integrity error\n"
    "  5  script error or sandbox limit\n";

static void print_usage(FILE *out)
{
    fprintf(out, "Usage: dsforge <command> [options]\n\n"
                 "Generates, validates and explains DeepSpeed configs from "
                 "Lua profiles.\n\nCommands:\n");
    for (const command *c = commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\nRun 'dsforge <command> --help' for a command's "
                 "options.\n\n%s\nEnvironment: DSFORGE_PATH, "
                 "DSFORGE_PLUGIN_PATH, XDG_CONFIG_HOME, XDG_CACHE_HOME, "
                 "NO_COLOR.\n", exit_codes_help);
}

int dsf_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("dsforge %s\n", dsf_version);
        return 0;
    }
    for (const command *c = commands; c->name; c++)
        if (!strcmp(c->name, cmd))
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "dsforge: error: unknown %s '%s'\n"
                    "  hint: try 'dsforge --help'\n",
            cmd[0] == '-' ? "option" : "command", cmd);
    return 2;
}

void dsf_cli_env_init(dsf_cli_env *env)
{
    memset(env, 0, sizeof *env);
    dsf_limits lim = DSF_LIMITS_DEFAULT;
    env->limits = lim;
    const char *nc = getenv("NO_COLOR");
    env->color = isatty(STDERR_FILENO) && !(nc && *nc);
    dsf_repo_opts_init(&env->repo);
    env->repo.progress = isatty(STDERR_FILENO);
}

int dsf_cli_env_option(dsf_cli_env *env, int id, const char *arg,
                       dsf_diags *d)
{
    long long v;
    double s;
    switch (id) {
    case DSF_OPT_PROFILE_PATH:
    case DSF_OPT_PLUGIN_PATH: {
        bool prof = id == DSF_OPT_PROFILE_PATH;
        size_t *n = prof ? &env->n_profile_paths : &env->n_plugin_paths;
        if (*n >= 32)
            return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                                  "too many --%s options (at most 32)",
                                  prof ? "profile-path" : "plugin-path");
        (prof ? env->profile_paths : env->plugin_paths)[(*n)++] = arg;
        return 1;
    }
    case DSF_OPT_MAX_MEMORY:
        if (dsf_opt_int(&v, arg, 1, 65536, "--max-memory", d))
            return DSF_EUSAGE;
        env->limits.memory = (size_t)v << 20;
        return 1;
    case DSF_OPT_MAX_INSTRUCTIONS:
        if (dsf_opt_int(&v, arg, 1000, (long long)4e18, "--max-instructions",
                        d))
            return DSF_EUSAGE;
        env->limits.instructions = (uint64_t)v;
        return 1;
    case DSF_OPT_MAX_SECONDS:
        if (dsf_opt_double(&s, arg, 0.001, 86400, "--max-seconds", d))
            return DSF_EUSAGE;
        env->limits.seconds = s;
        return 1;
    case DSF_OPT_OFFLINE:
        env->offline = env->repo.offline = true;
        return 1;
    case DSF_OPT_ALLOW_HTTP:
        env->allow_http = env->repo.allow_http = true;
        return 1;
    case DSF_OPT_LOCKED:
        env->repo.locked = true;
        return 1;
    case DSF_OPT_ALLOW_EXPIRED:
        env->repo.allow_expired = true;
        return 1;
    default:
        return 0;
    }
}

int dsf_cli_env_finish(dsf_cli_env *env, dsf_diags *d)
{
    dsf_dirs_build(&env->profile_dirs, "profiles", env->profile_paths,
                   env->n_profile_paths, "--profile-path", "DSFORGE_PATH");
    dsf_dirs_build(&env->plugin_dirs, "plugins", env->plugin_paths,
                   env->n_plugin_paths, "--plugin-path",
                   "DSFORGE_PLUGIN_PATH");
    /* Repository plugins come after every local and built-in directory,
    ** so a repository can add plugins but not replace one by taking its
    ** name (first directory wins, for plugins and for require alike);
    ** only those the project allows to ("override_plugins") go before
    ** the built-in ones. */
    dsf_dirs repos = DSF_DIRS_INIT;
    int rc = dsf_repo_plugin_dirs(&repos, &env->repo, d);
    dsf_dirs *pd = &env->plugin_dirs;
    dsf_dir builtin = {NULL, NULL, false, false};
    if (pd->len && !strcmp(pd->items[pd->len - 1].origin, "built-in"))
        builtin = pd->items[--pd->len];
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < repos.len; i++) {
            if (repos.items[i].may_override != (pass == 0))
                continue;
            dsf_dirs_add_dir(pd, &repos.items[i]);
        }
        if (pass == 0 && builtin.path) {
            dsf_dirs_add(pd, builtin.path, builtin.origin);
            free(builtin.path);
            free(builtin.origin);
        }
    }
    dsf_dirs_free(&repos);
    return rc;
}

void dsf_cli_env_free(dsf_cli_env *env)
{
    dsf_dirs_free(&env->profile_dirs);
    dsf_dirs_free(&env->plugin_dirs);
}

void dsf_cli_args_init(dsf_cli_args *a, int argc, char **argv,
                       const char *cmd, const dsf_opt *opts, const char *help,
                       dsf_cli_env *env, dsf_diags *d)
{
    dsf_optparse_init(&a->p, argc, argv, 1, cmd);
    a->opts = opts;
    a->help = help;
    a->env = env;
    a->d = d;
    a->rc = 0;
    a->help_shown = false;
}

int dsf_cli_next(dsf_cli_args *a, const char **arg)
{
    while (a->rc == 0 && !a->help_shown) {
        int id = dsf_opt_next(&a->p, a->opts, arg, a->d);
        if (id == DSF_OPT_END || id == DSF_OPT_POS)
            return id;
        if (id < 0) {
            a->rc = id;
            break;
        }
        if (id == DSF_OPT_HELP) {
            fputs(a->help, stdout);
            a->help_shown = true;
            break;
        }
        int c = dsf_cli_env_option(a->env, id, *arg, a->d);
        if (c < 0)
            a->rc = c;
        else if (!c)
            return id;
    }
    return DSF_OPT_END;
}

int dsf_cli_finish(const dsf_cli_env *env, dsf_diags *d, int rc)
{
    fflush(stdout);
    dsf_diags_print(d, stderr, env ? env->color : false);
    if (!rc && dsf_diags_count(d, DSF_ERROR))
        rc = DSF_EVALID;
    dsf_diags_free(d);
    return dsf_exit_status(rc);
}
