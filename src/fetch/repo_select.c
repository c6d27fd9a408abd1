/* repo_select.c -- the loader API: which release of a repository a
** profile reference means, and the directories the loaders read (repo.h). */
#include "repo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "fetch/index.h"
#include "fetch/lock.h"
#include "fetch/repoconf.h"
#include "fetch/semver.h"
#include "fetch/repo_ctx.h"

/* ---- loader API -------------------------------------------------------- */

/* The configured entry of name: *e borrowed from *v (n entries), which
** the caller frees with dsf_repoconf_free, also on failure. */
static int find_conf(const dsf_repoconf_entry **e, dsf_repoconf_entry **v,
                     size_t *n, const char *name, const dsf_repo_opts *o,
                     dsf_diags *d)
{
    *e = NULL;
    int rc = dsf_repoconf_load(v, n, dsf_repo_project_dir(o), d);
    if (rc)
        return rc;
    *e = dsf_repoconf_find(*v, *n, name);
    if (!*e) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "unknown repository '%s'", name);
        dsf_diag_set_hint(g, "add it with 'dsforge repo add %s URL'; "
                             "'dsforge repo list' shows the configured "
                             "ones", name);
        return DSF_EINPUT;
    }
    return 0;
}

/* The releases that hold profile (all releases when NULL), newest
** first, as "1.1.0, 1.0.0". Caller frees. */
static char *release_list(const dsf_index *ix, const char *profile)
{
    dsf_buf b = DSF_BUF_INIT;
    for (size_t i = ix->n_releases; i-- > 0;)
        if (!profile || dsf_index_profile(ix->releases[i].ix, profile))
            dsf_buf_printf(&b, "%s%s", b.len ? ", " : "",
                           ix->releases[i].version);
    char *out = dsf_xstrdup(dsf_buf_str(&b));
    dsf_buf_free(&b);
    return out;
}

/* Format 2: the release of the repository's own selection (its plugins,
** `list`, `repo path NAME`): the lock's "repository" selection; else the
** newest release another selection of the lock resolved to (so a project
** that only uses @1.0.0 gets the plugins of 1.0.0, and --locked needs
** nothing more); else NULL: the newest release, to be recorded. */
static const dsf_index_release *repository_release(const repo_synced *s)
{
    const dsf_index_release *best = NULL;
    for (size_t i = 0; i < s->n_sel; i++) {
        const dsf_index_release *r =
            dsf_index_release_find(s->ix, s->sel[i].version);
        if (r && !strcmp(s->sel[i].key, "repository"))
            return r;
        if (r && (!best || dsf_semver_cmp(r->version, best->version) > 0))
            best = r;
    }
    return best;
}

/* Format 2: selections made by this process, recorded in the lock by
** dsf_repo_commit once what they select has loaded. Reachable until
** exit or the next commit or discard. */
typedef struct pending {
    char *repo, *key, *version;
    char index_sha256[65];   /* the pinned index they were made in */
} pending;

static pending *pend;
static size_t n_pend, cap_pend;

static void pending_add(const repo_synced *s, const char *key,
                        const char *version)
{
    dsf_xgrow((void **)&pend, &cap_pend, n_pend + 1, sizeof *pend);
    pending *p = &pend[n_pend++];
    p->repo = dsf_xstrdup(s->name);
    p->key = dsf_xstrdup(key);
    p->version = dsf_xstrdup(version);
    snprintf(p->index_sha256, sizeof p->index_sha256, "%s",
             s->index_sha256);
}

void dsf_repo_discard(void)
{
    for (size_t i = 0; i < n_pend; i++) {
        free(pend[i].repo);
        free(pend[i].key);
        free(pend[i].version);
    }
    n_pend = 0;
}

int dsf_repo_commit(const dsf_repo_opts *o, dsf_diags *d)
{
    if (!n_pend)
        return 0;
    dsf_lock lock;
    int rc = dsf_repo_load_lock(&lock, o, d);
    for (size_t i = 0; !rc && i < n_pend; i++) {
        const pending *p = &pend[i];
        const repo_synced *s = dsf_repo_synced_find(p->repo);
        const dsf_lock_repo *lr = dsf_lock_find(&lock, p->repo);
        if (!s || !lr || strcmp(lr->index_sha256, p->index_sha256))
            rc = dsf_diag_error(d, DSF_EINPUT, lock.path, 0, 0,
                                "the pin of repository '%s' changed while "
                                "this command ran; run it again", p->repo);
        else
            dsf_lock_select(&lock, p->repo, s->ix, p->key, p->version);
    }
    if (!rc)
        rc = dsf_repo_save_lock(&lock, d);
    dsf_lock_free(&lock);
    dsf_repo_discard();
    return rc;
}

/* Format 2: the release that profile (NULL: the repository's own
** selection, for its plugins, `list` and `repo path NAME`) with
** requirement req (text req_text; NULL: none) resolves to, and its
** verified tree in *dir_out (borrowed from s). The lock's selection is
** used when it has one; otherwise the newest matching release of the
** pinned index is chosen and recorded (DSF_ENET under --locked). */
static int select_release(const char **dir_out, repo_synced *s,
                          const char *profile, const char *req_text,
                          const dsf_semreq *req, const dsf_repo_opts *o,
                          dsf_diags *d)
{
    *dir_out = NULL;
    char *key = dsf_lock_selection_key(profile, req_text);
    repo_selected *m = dsf_repo_sel_find(s, key);
    if (m && m->dir) {
        *dir_out = m->dir;
        free(key);
        return 0;
    }
    const dsf_index_release *rel =
        !profile ? repository_release(s)
        : m      ? dsf_index_release_find(s->ix, m->version)
                 : NULL;
    if (rel && profile && !dsf_index_profile(rel->ix, profile))
        rel = NULL; /* a lock edited by hand: resolve again */
    bool record = rel == NULL;
    repo_ctx c;
    int rc = dsf_repo_ctx_open(&c, s->name, s->url, NULL, 0, o, d);
    if (!rc && record) {
        rel = dsf_index_newest(s->ix, profile, req);
        if (!rel && profile && !dsf_index_newest(s->ix, profile, NULL)) {
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                       "repository '%s' has no profile "
                                       "'%s' in any release", s->name,
                                       profile);
            dsf_diag_set_hint(g, "'dsforge list' shows the profiles it "
                                 "offers");
            rc = DSF_EINPUT;
        } else if (!rel) {
            char *have = release_list(s->ix, profile);
            dsf_diag *g = dsf_diag_add(
                d, DSF_ERROR, NULL, 0, 0,
                "no release of %s%s%s in repository '%s' matches %s "
                "(releases%s: %s)", profile ? "profile '" : "the repository",
                profile ? profile : "", profile ? "'" : "", s->name,
                req_text ? req_text : "*", profile ? " with it" : "", have);
            dsf_diag_set_rule(g, "repo-version");
            dsf_diag_set_hint(g, "pick one of those, or run 'dsforge repo "
                                 "update %s' if the repository published a "
                                 "matching release after it was pinned",
                              s->name);
            free(have);
            rc = DSF_ENET;
        } else if (o->locked) {
            dsf_diag *g = dsf_diag_add(
                d, DSF_ERROR, c.lock.path, 0, 0,
                "repository '%s': '%s' (release %s) is not in the lock "
                "file, and --locked (or CI=true) forbids adding it", s->name,
                key, rel->version);
            dsf_diag_set_rule(g, "repo-lock");
            dsf_diag_set_hint(g, "run the command once without --locked "
                                 "and commit the lock file");
            rc = DSF_ENET;
        }
    }
    const dsf_lock_repo *lr = rc ? NULL : dsf_lock_find(&c.lock, s->name);
    if (!rc && record &&
        (!lr || strcmp(lr->index_sha256, s->index_sha256)))
        rc = dsf_diag_error(d, DSF_EINPUT, c.lock.path, 0, 0,
                            "the pin of repository '%s' changed while "
                            "this command ran; run it again", s->name);
    char *dir = NULL;
    if (!rc)
        rc = dsf_repo_open_release(&dir, &c, rel, !o->offline, d);
    if (!rc && record)
        pending_add(s, key, rel->version);
    if (!rc) {
        m = dsf_repo_sel_set(s, key, rel->version, dir);
        *dir_out = m->dir;
    }
    free(dir);
    dsf_repo_ctx_close(&c);
    free(key);
    return rc;
}

/* Format 1: one version per profile, which req must match (a version
** that is not semver only by the same text). */
static int check_version1(const repo_synced *s, const char *name,
                          const char *profile, const char *version,
                          const dsf_semreq *req, dsf_diags *d)
{
    const dsf_index_entry *e = dsf_index_profile(s->ix, profile);
    if (!e) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "repository '%s' has no profile '%s'",
                                   name, profile);
        dsf_diag_set_hint(g, "'dsforge list' shows the profiles it "
                             "offers");
        return DSF_EINPUT;
    }
    if (!version || !strcmp(e->version, version) ||
        dsf_semreq_matches(req, e->version))
        return 0;
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "repository '%s' offers version %s of "
                               "profile '%s', which does not match %s",
                               name, e->version, profile, version);
    dsf_diag_set_rule(g, "repo-version");
    dsf_diag_set_hint(g, "use %s/%s@%s, or 'dsforge repo update %s' if "
                         "the repository has published %s", name, profile,
                      e->version, name, version);
    return DSF_ENET;
}

int dsf_repo_resolve_dir(char **dir_out, const char *repo,
                         const char *version, const dsf_repo_opts *o,
                         dsf_diags *d)
{
    *dir_out = NULL;
    const char *slash = strchr(repo, '/');
    char *name = slash ? dsf_xstrndup(repo, (size_t)(slash - repo))
                       : dsf_xstrdup(repo);
    const char *profile = slash ? slash + 1 : NULL;
    dsf_semreq req;
    memset(&req, 0, sizeof req);
    size_t col = 0;
    const char *why = NULL;
    int rc = 0;
    if (!dsf_index_name_ok(name) || (profile && !dsf_index_name_ok(profile)))
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "invalid repository reference '%s' (expected "
                            "NAME/PROFILE[@VERSION])", repo);
    else if (version && !profile)
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "a version (@%s) needs a profile: "
                            "NAME/PROFILE@VERSION", version);
    else if (version && !dsf_semreq_parse(&req, version, &col, &why)) {
        /* the column in the whole reference, under a caret */
        char *whole = dsf_xasprintf("%s@%s", repo, version);
        size_t at = strlen(repo) + 1 + col;
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, (int)at,
                                   "invalid version requirement '%s' in "
                                   "'%s', column %zu: %s", version, whole,
                                   at, why);
        dsf_diag_set_excerpt(g, whole, strlen(whole));
        dsf_diag_set_rule(g, "repo-version");
        dsf_diag_set_hint(g, "a version (1.2.3, =1.2.3), or ^1.2 / ~1.2.3 "
                             "for the newest compatible release");
        free(whole);
        rc = DSF_EUSAGE;
    }
    const dsf_repoconf_entry *conf = NULL;
    dsf_repoconf_entry *confs = NULL;
    size_t n_confs = 0;
    if (!rc)
        rc = find_conf(&conf, &confs, &n_confs, name, o, d);
    repo_synced *s = NULL;
    if (!rc)
        rc = dsf_repo_sync(&s, name, conf->url,
                           (const char *const *)conf->keys, conf->n_keys,
                           false, o, NULL, d);
    const char *dir = NULL;
    if (!rc && s->ix->format == 2) {
        rc = select_release(&dir, s, profile, version, version ? &req : NULL,
                            o, d);
    } else if (!rc) {
        if (profile)
            rc = check_version1(s, name, profile, version, &req, d);
        dir = s->dir;
    }
    if (!rc)
        *dir_out = dsf_xstrdup(dir);
    dsf_repoconf_free(confs, n_confs);
    free(name);
    return rc;
}

int dsf_repo_plugin_dirs(dsf_dirs *out, const dsf_repo_opts *o,
                         dsf_diags *d)
{
    dsf_repoconf_entry *v;
    size_t n;
    int rc = dsf_repoconf_load(&v, &n, dsf_repo_project_dir(o), d);
    if (rc)
        return rc;
    for (size_t i = 0; !rc && i < n; i++) {
        if (v[i].shadowed)
            continue;
        repo_synced *s;
        rc = dsf_repo_sync(&s, v[i].name, v[i].url,
                           (const char *const *)v[i].keys, v[i].n_keys,
                           false, o, NULL, d);
        if (rc)
            continue;
        const char *tree = s->dir;
        if (s->ix->format == 2) {
            /* the plugins of one release: the repository's selection
            ** (the newest release when first needed) */
            const dsf_index_release *rel = repository_release(s);
            if (!rel)
                rel = dsf_index_newest(s->ix, NULL, NULL);
            if (!rel || !rel->ix->n_plugins)
                continue;
            rc = select_release(&tree, s, NULL, NULL, NULL, o, d);
            if (!rc)
                rc = dsf_repo_commit(o, d); /* nothing more to load */
            if (rc)
                continue;
        } else if (!s->ix->n_plugins) {
            continue;
        }
        char *p = dsf_path_join(tree, "plugins");
        char *origin = dsf_xasprintf("repo %s", v[i].name);
        dsf_dir dir = {p, origin, true, v[i].override_plugins};
        dsf_dirs_add_dir(out, &dir);
        free(origin);
        free(p);
    }
    dsf_repoconf_free(v, n);
    return rc;
}
