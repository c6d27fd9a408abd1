/* cmd_repo.c -- `dsforge repo`: manage remote profile repositories. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "fetch/repo.h"
#include "fetch/sign.h"

enum {
    OPT_PROJECT = 1, OPT_NAME, OPT_VERSION, OPT_NO_PROGRESS, OPT_KEY,
    OPT_SIGN, OPT_EXPIRES
};

#define MAX_KEYS 8

static const dsf_opt repo_opts[] = {
    {"project", 0, false, OPT_PROJECT},
    {"name", 0, true, OPT_NAME},
    {"version", 0, true, OPT_VERSION},
    {"no-progress", 0, false, OPT_NO_PROGRESS},
    {"key", 0, true, OPT_KEY},
    {"sign", 0, true, OPT_SIGN},
    {"expires", 0, true, OPT_EXPIRES},
    DSF_COMMON_OPTS,
    {NULL, 0, false, 0}};

static const char repo_help[] =
    "Usage:\n"
    "  dsforge repo add NAME URL [--project] [--key PUB]...\n"
    "                                         fetch, verify, record and "
    "pin a repository\n"
    "  dsforge repo list                      the configured "
    "repositories\n"
    "  dsforge repo update [NAME]             fetch again and re-pin the "
    "lock file\n"
    "  dsforge repo outdated [NAME]           how upstream differs from "
    "the lock\n"
    "  dsforge repo remove NAME [--project]   forget a repository\n"
    "  dsforge repo path NAME[/PROFILE[@V]]   the directory holding the "
    "locked\n"
    "                                         content (fetched if "
    "needed)\n"
    "  dsforge repo index DIR [--name NAME] [--version V]\n"
    "                         [--sign KEY]... [--expires DAYS|TIME]\n"
    "                                         write DIR/index.json for "
    "DIR/profiles/*.lua\n"
    "                                         and DIR/plugins/NAME/... "
    "(signed: also\n"
    "                                         DIR/index.json.sig)\n"
    "  dsforge repo keygen FILE               a new Ed25519 key pair: FILE "
    "(secret,\n"
    "                                         mode 0600) and FILE.pub\n"
    "\n"
    "Repositories are listed in the project's dsforge.repos.json (wins) "
    "and\n"
    "$XDG_CONFIG_HOME/dsforge/repos.json (the user's). The project is the "
    "nearest\n"
    "directory up from here (below $HOME) with dsforge.lock or "
    "dsforge.repos.json;\n"
    "what it uses is pinned in its dsforge.lock (outside a project: "
    "in\n"
    "$XDG_STATE_HOME/dsforge/dsforge.lock). Pinned content is used even "
    "when\n"
    "upstream changed (with a note); --locked or CI=true make any "
    "difference an\n"
    "error. Use profiles as NAME/PROFILE[@VERSION]. A bearer token for a "
    "private\n"
    "repository is read from DSFORGE_TOKEN_<NAME>.\n"
    "See contrib/docs/repositories.md.\n"
    "\n"
    "Options:\n"
    "  --project       add to / remove from the project's "
    "dsforge.repos.json\n"
    "                  instead of the user's list (outside a project: "
    "makes\n"
    "                  the current directory one)\n"
    "  --name NAME     (index) the repository's name (default: DIR's "
    "name)\n"
    "  --version V     (index) version of profiles without a `version` "
    "field and\n"
    "                  of plugins without a VERSION file (default "
    "0.0.0)\n"
    "  --no-progress   no progress bar\n"
    "  --key PUB       (add) pin a public key (file or 64 hex digits): "
    "index.json\n"
    "                  must then be signed by it (repeatable: key "
    "rotation)\n"
    "  --sign KEY      (index) sign with this secret key file "
    "(repeatable)\n"
    "  --expires D     (index, signed) expiry: days from now (default 90) "
    "or a\n"
    "                  UTC time like 2027-01-31T00:00:00Z\n"
    "\n" DSF_COMMON_HELP;

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
        dsf_buf_printf(report, "%s\n", dir);
        free(dir);
    }
    free(repo);
    return rc;
}

int dsf_cmd_repo(int argc, char **argv)
{
    dsf_cli_env env;
    dsf_cli_env_init(&env);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_cli_args cl;
    dsf_cli_args_init(&cl, argc, argv, "repo", repo_opts, repo_help, &env,
                      &d);
    const char *pos[3] = {NULL, NULL, NULL};
    size_t npos = 0;
    bool project = false, progress = true;
    const char *name = NULL, *version = NULL, *expires = NULL;
    const char *keys[MAX_KEYS], *signs[MAX_KEYS];
    size_t n_keys = 0, n_signs = 0;
    const char *arg;
    int id, rc = 0;
    while (!rc && (id = dsf_cli_next(&cl, &arg)) != DSF_OPT_END) {
        if (id == DSF_OPT_POS) {
            if (npos == 3)
                rc = usage(&d, "too many arguments");
            else
                pos[npos++] = arg;
        } else if (id == OPT_PROJECT) {
            project = true;
        } else if (id == OPT_NAME) {
            name = arg;
        } else if (id == OPT_VERSION) {
            version = arg;
        } else if (id == OPT_NO_PROGRESS) {
            progress = false;
        } else if (id == OPT_KEY || id == OPT_SIGN) {
            size_t *n = id == OPT_KEY ? &n_keys : &n_signs;
            if (*n == MAX_KEYS)
                rc = usage(&d, "at most 8 --key / --sign options");
            else
                (id == OPT_KEY ? keys : signs)[(*n)++] = arg;
        } else if (id == OPT_EXPIRES) {
            expires = arg;
        }
    }
    if (!rc)
        rc = cl.rc;
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
    o.progress = progress;
    dsf_buf report = DSF_BUF_INIT;
    const char *sub = pos[0];
    if (rc) {
        /* reported */
    } else if (!sub) {
        rc = usage(&d, "missing subcommand (add, list, update, outdated, "
                       "remove, path, index, keygen)");
    } else if (!strcmp(sub, "add")) {
        char hex[MAX_KEYS][65];
        const char *pins[MAX_KEYS];
        if (npos != 3)
            rc = usage(&d, "usage: dsforge repo add NAME URL");
        for (size_t i = 0; !rc && i < n_keys; i++) {
            rc = dsf_sign_read_public(hex[i], keys[i], &d);
            pins[i] = hex[i];
        }
        if (!rc)
            rc = dsf_repo_add(pos[1], pos[2], project, pins, n_keys, &o,
                              &report, &d);
    } else if (!strcmp(sub, "update")) {
        if (npos > 2)
            rc = usage(&d, "usage: dsforge repo update [NAME]");
        else
            rc = dsf_repo_update(pos[1], &o, &report, &d);
    } else if (!strcmp(sub, "outdated")) {
        if (npos > 2)
            rc = usage(&d, "usage: dsforge repo outdated [NAME]");
        else
            rc = dsf_repo_outdated(pos[1], &o, &report, &d);
    } else if (!strcmp(sub, "remove")) {
        if (npos != 2)
            rc = usage(&d, "usage: dsforge repo remove NAME");
        else
            rc = dsf_repo_remove(pos[1], project, &o, &report, &d);
    } else if (!strcmp(sub, "index")) {
        if (npos != 2)
            rc = usage(&d, "usage: dsforge repo index DIR");
        else
            rc = dsf_repo_index_dir(pos[1], name, version, signs, n_signs,
                                    expires, &report, &d);
    } else if (!strcmp(sub, "keygen")) {
        if (npos != 2)
            rc = usage(&d, "usage: dsforge repo keygen FILE");
        else
            rc = dsf_sign_keygen(pos[1], &report, &d);
    } else if (!strcmp(sub, "path")) {
        if (npos != 2)
            rc = usage(&d, "usage: dsforge repo path NAME[/PROFILE[@V]]");
        else
            rc = print_path(pos[1], &o, &report, &d);
    } else if (!strcmp(sub, "list")) {
        dsf_repo_info *v;
        size_t n;
        if (npos != 1)
            rc = usage(&d, "usage: dsforge repo list");
        else if ((rc = dsf_repo_list(&v, &n, &o, &d)) == 0) {
            char *proj, *lock;
            dsf_repo_where(&proj, &lock, &o);
            dsf_buf_printf(&report, "project: %s\nlock:    %s\n",
                           proj ? proj : "(none: user-level repositories)",
                           lock ? lock : "(none)");
            free(proj);
            free(lock);
            for (size_t i = 0; i < n; i++)
                dsf_buf_printf(&report, "%-16s %s  (%s%s)%s%.12s\n",
                               v[i].name, v[i].url, v[i].origin,
                               v[i].shadowed ? ", hidden by the project's"
                                             : "",
                               v[i].locked_sha256 ? "  locked " : "",
                               v[i].locked_sha256 ? v[i].locked_sha256
                                                  : "");
            if (!n)
                dsf_buf_puts(&report, "no repositories configured\n");
            dsf_repo_infos_free(v, n);
        }
    } else {
        rc = usage(&d, "unknown subcommand (add, list, update, outdated, "
                       "remove, path, index, keygen)");
    }
    fputs(dsf_buf_str(&report), stdout);
    dsf_buf_free(&report);
    int status = dsf_cli_finish(&env, &d, rc);
    dsf_cli_env_free(&env);
    return status;
}
