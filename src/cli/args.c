/* args.c -- see args.h. */
#include "args.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/error.h"
#include "core/project.h"
#include "core/strutil.h"

const dsf_opt dsf_common_opts[] = {
    {"profile-path", 0, "DIR", "look for profiles in DIR first (repeatable)",
     DSF_OPT_PROFILE_PATH, "dir"},
    {"plugin-path", 0, "DIR", "look for plugins in DIR first (repeatable)",
     DSF_OPT_PLUGIN_PATH, "dir"},
    {"max-memory", 0, "MIB", "Lua memory per evaluation (default 64)",
     DSF_OPT_MAX_MEMORY, NULL},
    {"max-instructions", 0, "N",
     "Lua instructions per call (default 200000000)",
     DSF_OPT_MAX_INSTRUCTIONS, NULL},
    {"max-seconds", 0, "S", "wall-clock time per Lua call (default 10)",
     DSF_OPT_MAX_SECONDS, NULL},
    {"offline", 0, NULL, "use only the cache and the lock file",
     DSF_OPT_OFFLINE, NULL},
    {"allow-http", 0, NULL, "allow plain http:// repositories",
     DSF_OPT_ALLOW_HTTP, NULL},
    {"locked", 0, NULL, "fail (exit 4) when using a repository would change "
     "the lock file (also CI=true)", DSF_OPT_LOCKED, NULL},
    {"allow-expired", 0, NULL, "accept a repository index past its expiry",
     DSF_OPT_ALLOW_EXPIRED, NULL},
    {"help", 'h', NULL, "show this help", DSF_OPT_HELP, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

const dsf_opt dsf_help_opts[] = {
    {"help", 'h', NULL, "show this help", DSF_OPT_HELP, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

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
                       const dsf_command *cmd, dsf_cli_env *env,
                       dsf_diags *d)
{
    dsf_optparse_init(&a->p, argc, argv, 1, cmd->name);
    a->cmd = cmd;
    a->env = env;
    a->d = d;
    a->rc = 0;
    a->help_shown = false;
}

int dsf_cli_next(dsf_cli_args *a, const char **arg)
{
    const dsf_opt *common = a->cmd->common ? dsf_common_opts : dsf_help_opts;
    while (a->rc == 0 && !a->help_shown) {
        int id = dsf_opt_next(&a->p, a->cmd->opts, common, arg, a->d);
        if (id == DSF_OPT_END || id == DSF_OPT_POS)
            return id;
        if (id < 0) {
            a->rc = id;
            break;
        }
        if (id == DSF_OPT_HELP) {
            dsf_help_print(stdout, a->cmd, common);
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

int dsf_cli_unknown(dsf_diags *d, const char *cmd, const char *what,
                    const char *word, const char *const *known)
{
    size_t n = 0;
    while (known[n])
        n++;
    const char *close = dsf_closest(word, known, n);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "unknown %s '%s'",
                               what, word);
    if (close)
        dsf_diag_set_hint(g, "did you mean '%s'? (try 'dsforge %s%s--help')",
                          close, cmd ? cmd : "", cmd ? " " : "");
    else
        dsf_diag_set_hint(g, "try 'dsforge %s%s--help'", cmd ? cmd : "",
                          cmd ? " " : "");
    return DSF_EUSAGE;
}

void dsf_cli_print_project(void)
{
    const char *root = dsf_project_root();
    if (root) {
        fputs("project: ", stdout);
        dsf_fputs_clean(root, stdout, true); /* a path: any bytes */
        fputs(" (its profiles/, plugins/, dsforge.repos.json and "
              "dsforge.lock)\n", stdout);
    }
}
