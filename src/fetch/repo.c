/* repo.c -- the `dsforge repo` commands: list, add, update, remove,
** outdated (repo.h). */
#include "repo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "fetch/index.h"
#include "fetch/lock.h"
#include "fetch/project.h"
#include "fetch/repoconf.h"
#include "fetch/repo_ctx.h"

/* ---- commands ---------------------------------------------------------- */

int dsf_repo_list(dsf_repo_info **out, size_t *n, const dsf_repo_opts *o,
                  dsf_diags *d)
{
    *out = NULL;
    *n = 0;
    dsf_repoconf_entry *v;
    size_t nv;
    int rc = dsf_repoconf_load(&v, &nv, dsf_repo_project_dir(o), d);
    if (rc)
        return rc;
    dsf_lock lock;
    rc = dsf_repo_load_lock(&lock, o, d);
    if (!rc && nv) {
        *out = dsf_xcalloc(nv, sizeof **out);
        for (size_t i = 0; i < nv; i++) {
            dsf_repo_info *r = &(*out)[i];
            r->name = dsf_xstrdup(v[i].name);
            r->url = dsf_xstrdup(v[i].url);
            r->origin = dsf_xstrdup(v[i].project ? "project" : "user");
            r->config_file = dsf_xstrdup(v[i].file);
            r->shadowed = v[i].shadowed;
            const dsf_lock_repo *lr = dsf_lock_find(&lock, v[i].name);
            if (lr && !v[i].shadowed)
                r->locked_sha256 = dsf_xstrdup(lr->index_sha256);
        }
        *n = nv;
    }
    dsf_lock_free(&lock);
    dsf_repoconf_free(v, nv);
    return rc;
}

void dsf_repo_infos_free(dsf_repo_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].url);
        free(v[i].origin);
        free(v[i].config_file);
        free(v[i].locked_sha256);
    }
    free(v);
}

void dsf_repo_where(char **project, char **lock, const dsf_repo_opts *o)
{
    const char *p = dsf_repo_project_dir(o);
    *project = p ? dsf_xstrdup(p) : NULL;
    *lock = dsf_project_lock_path(p);
}

int dsf_repo_add(const char *name, const char *url, bool project,
                 const char *const *keys, size_t n_keys,
                 const dsf_repo_opts *o, dsf_buf *report, dsf_diags *d)
{
    /* --project outside a project makes the current directory one */
    dsf_repo_opts here;
    if (project && !dsf_repo_project_dir(o)) {
        here = *o;
        here.project_dir = ".";
        o = &here;
    }
    if (!dsf_index_name_ok(name))
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "invalid repository name '%s' (letters, "
                              "digits, '_', '-', '.'; at most 64)", name);
    char *base = dsf_repo_base_url(url);
    int rc = dsf_repo_check_url(base, o, d);
    repo_synced *s;
    /* Fetch and verify everything first: a repository that does not work
    ** is not recorded. */
    if (!rc)
        rc = dsf_repo_sync(&s, name, base, keys, n_keys, true, o, report, d);
    char *file = rc ? NULL
                    : dsf_repoconf_path(project, dsf_repo_project_dir(o));
    if (!rc && !file)
        rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                            "no configuration directory: set "
                            "XDG_CONFIG_HOME or HOME, or use --project");
    if (!rc)
        rc = dsf_repoconf_set(file, name, base, keys, n_keys, d);
    if (!rc && report)
        dsf_buf_printf(report, "added repository '%s' (%s) to %s\n", name,
                       base, file);
    free(file);
    free(base);
    return rc;
}

int dsf_repo_update(const char *name, const dsf_repo_opts *o,
                    dsf_buf *report, dsf_diags *d)
{
    dsf_repoconf_entry *v;
    size_t n;
    int rc = dsf_repoconf_load(&v, &n, dsf_repo_project_dir(o), d);
    if (rc)
        return rc;
    bool found = false;
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].shadowed || (name && strcmp(v[i].name, name)))
            continue;
        found = true;
        repo_synced *s;
        rc = dsf_repo_sync(&s, v[i].name, v[i].url,
                           (const char *const *)v[i].keys, v[i].n_keys,
                           true, o, report, d);
        if (rc && !first)
            first = rc;
    }
    dsf_repoconf_free(v, n);
    if (name && !found) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "unknown repository '%s'", name);
        dsf_diag_set_hint(g, "'dsforge repo list' shows the configured "
                             "ones");
        return DSF_EINPUT;
    }
    if (!found && report)
        dsf_buf_puts(report, "no repositories configured\n");
    return first;
}

int dsf_repo_remove(const char *name, bool project, const dsf_repo_opts *o,
                    dsf_buf *report, dsf_diags *d)
{
    char *file = dsf_repoconf_path(project, dsf_repo_project_dir(o));
    if (!file)
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "%s", project ? "not in a project (no "
                              "dsforge.lock or dsforge.repos.json here or "
                              "above)" : "no configuration directory: set "
                              "XDG_CONFIG_HOME or HOME");
    int rc = dsf_repoconf_set(file, name, NULL, NULL, 0, d);
    if (rc == 1) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                   "repository '%s' is not configured here",
                                   name);
        dsf_diag_set_hint(g, "%s", project
                                       ? "it may be in the user list: drop "
                                         "--project"
                                       : "it may be in the project list: "
                                         "add --project");
        rc = DSF_EINPUT;
    }
    if (!rc) {
        dsf_lock lock;
        rc = dsf_repo_load_lock(&lock, o, d);
        if (!rc && dsf_lock_remove(&lock, name))
            rc = dsf_repo_save_lock(&lock, d);
        dsf_lock_free(&lock);
        dsf_repo_forget(name);
    }
    if (!rc && report)
        dsf_buf_printf(report, "removed repository '%s' from %s\n", name,
                       file);
    free(file);
    return rc;
}

/* repo outdated of one configured repository: a line in report; *differs
** set when upstream differs from the pin. */
static int outdated_one(const dsf_repoconf_entry *e, const dsf_repo_opts *o,
                        dsf_buf *report, bool *differs, dsf_diags *d)
{
    char *base = dsf_repo_base_url(e->url);
    repo_ctx c;
    int rc = dsf_repo_ctx_open(&c, e->name, base,
                               (const char *const *)e->keys, e->n_keys, o,
                               d);
    char sha[65];
    dsf_index *ix = NULL;
    if (!rc)
        rc = dsf_repo_check_url(base, o, d);
    if (!rc)
        rc = dsf_repo_ask_upstream(sha, &ix, &c, d);
    const dsf_lock_repo *lr = rc ? NULL : dsf_lock_find(&c.lock, e->name);
    if (rc) {
        /* reported */
    } else if (!lr) {
        dsf_buf_printf(report, "%s: not pinned (serves index sha256 "
                       "%.12s...)\n", e->name, sha);
    } else if (!strcmp(lr->index_sha256, sha) && !strcmp(lr->url, base)) {
        dsf_buf_printf(report, "%s: up to date (index sha256 %.12s...)\n",
                       e->name, sha);
    } else {
        dsf_buf what = DSF_BUF_INIT;
        *differs = true;
        if (strcmp(lr->url, base))
            dsf_buf_printf(&what, "\n  URL: %s -> %s", lr->url, base);
        dsf_lock_diff(&what, lr, ix);
        dsf_buf_printf(report, "%s: outdated (index sha256 %.12s... "
                       "locked, %.12s... served)%s\n", e->name,
                       lr->index_sha256, sha, dsf_buf_str(&what));
        dsf_buf_free(&what);
    }
    dsf_index_free(ix);
    dsf_repo_ctx_close(&c);
    free(base);
    return rc;
}

int dsf_repo_outdated(const char *name, const dsf_repo_opts *o,
                      dsf_buf *report, size_t *n_outdated, dsf_diags *d)
{
    *n_outdated = 0;
    if (o->offline)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "checking for updates needs the network "
                              "(drop --offline)");
    dsf_repoconf_entry *v;
    size_t n;
    int rc = dsf_repoconf_load(&v, &n, dsf_repo_project_dir(o), d);
    if (rc)
        return rc;
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i].shadowed || (name && strcmp(v[i].name, name)))
            continue;
        found = true;
        bool differs = false;
        int r = outdated_one(&v[i], o, report, &differs, d);
        *n_outdated += differs;
        if (!rc)
            rc = r; /* the first failure; the others are still asked */
    }
    dsf_repoconf_free(v, n);
    if (!rc && name && !found) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "unknown repository '%s'", name);
        dsf_diag_set_hint(g, "'dsforge repo list' shows the configured "
                             "ones");
        return DSF_EINPUT;
    }
    if (!rc && !found)
        dsf_buf_puts(report, "no repositories configured\n");
    return rc;
}
