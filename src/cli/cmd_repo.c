/* cmd_repo.c -- `dsforge repo`: manage remote profile repositories. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "cli/opts.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "fetch/repo.h"
#include "fetch/sign.h"

enum {
    OPT_PROJECT = 1, OPT_NAME, OPT_VERSION, OPT_NO_PROGRESS, OPT_KEY,
    OPT_SIGN, OPT_EXPIRES, OPT_SERIAL
};

#define MAX_KEYS 8

static const dsf_opt repo_opts[] = {
    {"project", 0, NULL, "add to / remove from the project's "
     "dsforge.repos.json instead of the user's list (outside a project: "
     "makes the current directory one)", OPT_PROJECT, NULL},
    {"name", 0, "NAME", "(index) the repository's name (default: DIR's "
     "name)", OPT_NAME, NULL},
    {"version", 0, "V", "(index) add release V (semver) to the index, "
     "keeping the earlier ones (format 2); without it, format 1: one "
     "snapshot", OPT_VERSION, NULL},
    {"no-progress", 0, NULL, "no progress bar", OPT_NO_PROGRESS, NULL},
    {"key", 0, "PUB", "(add) pin a public key (file or 64 hex digits): "
     "index.json must then be signed by it (repeatable: key rotation)",
     OPT_KEY, "file"},
    {"sign", 0, "KEY", "(index) sign with this secret key file "
     "(repeatable)", OPT_SIGN, "file"},
    {"expires", 0, "D", "(index, signed) expiry: days from now (default 90) "
     "or a UTC time like 2027-01-31T00:00:00Z", OPT_EXPIRES, NULL},
    {"serial", 0, "N", "(index) the index's serial (default: one more than "
     "DIR/index.json's); must be higher than the one clients pinned",
     OPT_SERIAL, NULL},
    {NULL, 0, NULL, NULL, 0, NULL}};

static const char *const subcommands[] = {
    "add", "list", "update", "outdated", "remove", "path", "index", "keygen",
    NULL};

static int run(int argc, char **argv);

const dsf_command dsf_cmd_repo = {
    "repo", "manage remote profile repositories",
    "repo add NAME URL [--project] [--key PUB]...\n"
    "repo list\n"
    "repo update [NAME]\n"
    "repo outdated [NAME]\n"
    "repo remove NAME [--project]\n"
    "repo path NAME[/PROFILE[@REQ]]\n"
    "repo index DIR [--name NAME] [--version V] [--sign KEY]... "
    "[--expires DAYS|TIME] [--serial N]\n"
    "repo keygen FILE",
    "add: fetch, verify, record and pin a repository. list: the configured "
    "repositories. update: fetch again and re-pin the lock file. outdated: "
    "how upstream differs from the lock. remove: forget a repository. "
    "path: the directory holding the locked content (fetched if needed). "
    "index: write DIR/index.json for DIR/profiles/*.lua and "
    "DIR/plugins/NAME/... (signed: also DIR/index.json.sig). keygen: a new "
    "Ed25519 key pair: FILE (secret, mode 0600) and FILE.pub.\n\n"
    "Repositories are listed in the project's dsforge.repos.json (wins) and "
    "$XDG_CONFIG_HOME/dsforge/repos.json (the user's). The project is the "
    "nearest directory up from here (below $HOME) with dsforge.lock or "
    "dsforge.repos.json; what it uses is pinned in its dsforge.lock "
    "(outside a project: in $XDG_STATE_HOME/dsforge/dsforge.lock). Pinned "
    "content is used even when upstream changed (with a note); --locked or "
    "CI=true make an error of whatever would change the lock. Use profiles "
    "as "
    "NAME/PROFILE[@REQ]: REQ is a version (1.2.0, exact) or ^1.2 / ~1.2.3 "
    "(the newest matching release; cargo's rules); without it, the locked "
    "release, or the newest. A bearer token for a private repository is "
    "read from DSFORGE_TOKEN_<NAME>. See contrib/docs/repositories.md.",
    repo_opts, true, NULL, NULL, subcommands, run, NULL};

static int usage(dsf_diags *d, const char *msg)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s", msg);
    dsf_diag_set_hint(g, "try 'dsforge repo --help'");
    return DSF_EUSAGE;
}

/* `repo path REF`: the directory holding the locked content. */
static int print_path(const char *ref, const dsf_repo_opts *o,
                      dsf_buf *report, dsf_diags *d)
{
    const char *at = strchr(ref, '@');
    char *repo = at ? dsf_xstrndup(ref, (size_t)(at - ref))
                    : dsf_xstrdup(ref);
    char *dir;
    int rc = dsf_repo_resolve_dir(&dir, repo, at ? at + 1 : NULL, o, d);
    if (!rc) {
        rc = dsf_repo_commit(o, d); /* nothing to load: recorded now */
        if (!rc)
            dsf_buf_printf(report, "%s\n", dir);
        free(dir);
    }
    free(repo);
    return rc;
}

/* The command line of one `repo` run. */
typedef struct repo_args {
    const char *pos[3];
    size_t npos;
    bool project, progress;
    const char *name, *version, *expires;
    long long serial;
    const char *keys[MAX_KEYS], *signs[MAX_KEYS];
    size_t n_keys, n_signs;
} repo_args;

static int parse_serial(long long *out, const char *arg, dsf_diags *d)
{
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (errno || end == arg || *end || v < 1 || v > 9007199254740992LL)
        return usage(d, "--serial takes an integer from 1 to 2^53");
    *out = v;
    return 0;
}

static int parse_args(repo_args *a, dsf_cli_args *cl, dsf_diags *d)
{
    const char *arg;
    int id, rc = 0;
    while (!rc && (id = dsf_cli_next(cl, &arg)) != DSF_OPT_END) {
        if (id == DSF_OPT_POS) {
            if (a->npos == 3)
                rc = usage(d, "too many arguments");
            else
                a->pos[a->npos++] = arg;
        } else if (id == OPT_PROJECT) {
            a->project = true;
        } else if (id == OPT_NAME) {
            a->name = arg;
        } else if (id == OPT_VERSION) {
            a->version = arg;
        } else if (id == OPT_NO_PROGRESS) {
            a->progress = false;
        } else if (id == OPT_KEY || id == OPT_SIGN) {
            size_t *n = id == OPT_KEY ? &a->n_keys : &a->n_signs;
            if (*n == MAX_KEYS)
                rc = usage(d, "at most 8 --key / --sign options");
            else
                (id == OPT_KEY ? a->keys : a->signs)[(*n)++] = arg;
        } else if (id == OPT_EXPIRES) {
            a->expires = arg;
        } else if (id == OPT_SERIAL) {
            rc = parse_serial(&a->serial, arg, d);
        }
    }
    return rc ? rc : cl->rc;
}

/* One subcommand: its argument count (positional, the subcommand
** included) is checked by the table below. */
typedef int (*sub_fn)(const repo_args *a, const dsf_repo_opts *o,
                      dsf_buf *report, dsf_diags *d);

static int sub_add(const repo_args *a, const dsf_repo_opts *o,
                   dsf_buf *report, dsf_diags *d)
{
    char hex[MAX_KEYS][65];
    const char *pins[MAX_KEYS];
    int rc = 0;
    for (size_t i = 0; !rc && i < a->n_keys; i++) {
        rc = dsf_sign_read_public(hex[i], a->keys[i], d);
        pins[i] = hex[i];
    }
    return rc ? rc : dsf_repo_add(a->pos[1], a->pos[2], a->project, pins,
                                  a->n_keys, o, report, d);
}

static int sub_update(const repo_args *a, const dsf_repo_opts *o,
                      dsf_buf *report, dsf_diags *d)
{
    return dsf_repo_update(a->pos[1], o, report, d);
}

static int sub_outdated(const repo_args *a, const dsf_repo_opts *o,
                        dsf_buf *report, dsf_diags *d)
{
    size_t n_outdated = 0;
    int rc = dsf_repo_outdated(a->pos[1], o, report, &n_outdated, d);
    /* exit 1 when something is outdated, as git diff --exit-code */
    return !rc && n_outdated ? DSF_EVALID : rc;
}

static int sub_remove(const repo_args *a, const dsf_repo_opts *o,
                      dsf_buf *report, dsf_diags *d)
{
    return dsf_repo_remove(a->pos[1], a->project, o, report, d);
}

static int sub_index(const repo_args *a, const dsf_repo_opts *o,
                     dsf_buf *report, dsf_diags *d)
{
    (void)o;
    dsf_repo_index_opts io = {a->name,    a->version, a->signs,
                              a->n_signs, a->expires, a->serial};
    return dsf_repo_index_dir(a->pos[1], &io, report, d);
}

static int sub_keygen(const repo_args *a, const dsf_repo_opts *o,
                      dsf_buf *report, dsf_diags *d)
{
    (void)o;
    return dsf_sign_keygen(a->pos[1], report, d);
}

static int sub_path(const repo_args *a, const dsf_repo_opts *o,
                    dsf_buf *report, dsf_diags *d)
{
    return print_path(a->pos[1], o, report, d);
}

static int sub_list(const repo_args *a, const dsf_repo_opts *o,
                    dsf_buf *report, dsf_diags *d)
{
    (void)a;
    dsf_repo_info *v;
    size_t n;
    int rc = dsf_repo_list(&v, &n, o, d);
    if (rc)
        return rc;
    char *proj, *lock;
    dsf_repo_where(&proj, &lock, o);
    dsf_buf_printf(report, "project: %s\nlock:    %s\n",
                   proj ? proj : "(none: user-level repositories)",
                   lock ? lock : "(none)");
    free(proj);
    free(lock);
    for (size_t i = 0; i < n; i++)
        dsf_buf_printf(report, "%-16s %s  (%s%s)%s%.12s\n", v[i].name,
                       v[i].url, v[i].origin,
                       v[i].shadowed ? ", hidden by the project's" : "",
                       v[i].locked_sha256 ? "  locked " : "",
                       v[i].locked_sha256 ? v[i].locked_sha256 : "");
    if (!n)
        dsf_buf_puts(report, "no repositories configured\n");
    dsf_repo_infos_free(v, n);
    return 0;
}

static const struct {
    const char *name;
    sub_fn fn;
    size_t min_pos, max_pos;   /* positional words, the subcommand's own */
    const char *usage;
} subs[] = {
    {"add", sub_add, 3, 3, "usage: dsforge repo add NAME URL"},
    {"update", sub_update, 1, 2, "usage: dsforge repo update [NAME]"},
    {"outdated", sub_outdated, 1, 2, "usage: dsforge repo outdated [NAME]"},
    {"remove", sub_remove, 2, 2, "usage: dsforge repo remove NAME"},
    {"index", sub_index, 2, 2, "usage: dsforge repo index DIR"},
    {"keygen", sub_keygen, 2, 2, "usage: dsforge repo keygen FILE"},
    {"path", sub_path, 2, 2,
     "usage: dsforge repo path NAME[/PROFILE[@REQ]]"},
    {"list", sub_list, 1, 1, "usage: dsforge repo list"},
};

static int run_sub(const repo_args *a, const dsf_repo_opts *o,
                   dsf_buf *report, dsf_diags *d)
{
    const char *sub = a->pos[0];
    if (!sub)
        return usage(d, "missing subcommand (add, list, update, outdated, "
                        "remove, path, index, keygen)");
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (strcmp(sub, subs[i].name))
            continue;
        if (a->npos < subs[i].min_pos || a->npos > subs[i].max_pos)
            return usage(d, subs[i].usage);
        return subs[i].fn(a, o, report, d);
    }
    return dsf_cli_unknown(d, "repo", "subcommand", sub, subcommands);
}

static int run(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, &dsf_cmd_repo, &env, &d);
    repo_args a;
    memset(&a, 0, sizeof a);
    a.progress = true;
    int rc = parse_args(&a, &cl, &d);
    if (cl.help_shown) {
        dsf_cli_env_free(&env);
        dsf_diags_free(&d);
        return 0;
    }
    dsf_repo_opts o;
    dsf_repo_opts_init(&o);
    o.offline = env.offline;
    o.allow_http = env.allow_http;
    o.locked = env.repo.locked;
    o.allow_expired = env.repo.allow_expired;
    o.progress = a.progress;
    dsf_buf report = DSF_BUF_INIT;
    if (!rc)
        rc = run_sub(&a, &o, &report, &d);
    fputs(dsf_buf_str(&report), stdout);
    dsf_buf_free(&report);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
