/* repo_sync.c -- bringing one repository to a verified tree in the
** cache: the locked copy, or what upstream serves, fetched and pinned
** (repo_ctx.h). */
#include "repo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "fetch/cache.h"
#include "fetch/http.h"
#include "fetch/index.h"
#include "fetch/lock.h"
#include "fetch/semver.h"
#include "fetch/repo_ctx.h"

/* Repositories already revalidated by this process (so a run that loads
** many profiles from one repository asks the server once). Reachable
** until exit, by design. */
static repo_synced *memo;
static size_t n_memo, cap_memo;

static void synced_free(repo_synced *s)
{
    free(s->name);
    free(s->url);
    free(s->dir);
    dsf_index_free(s->ix);
    for (size_t i = 0; i < s->n_sel; i++) {
        free(s->sel[i].key);
        free(s->sel[i].version);
        free(s->sel[i].dir);
    }
    free(s->sel);
    memset(s, 0, sizeof *s);
}

repo_selected *dsf_repo_sel_find(repo_synced *s, const char *key)
{
    for (size_t i = 0; i < s->n_sel; i++)
        if (!strcmp(s->sel[i].key, key))
            return &s->sel[i];
    return NULL;
}

/* Sets key to version (and dir, copied; may be NULL). */
repo_selected *dsf_repo_sel_set(repo_synced *s, const char *key,
                                const char *version,
                                const char *dir)
{
    repo_selected *e = dsf_repo_sel_find(s, key);
    if (!e) {
        s->sel = dsf_xrealloc(s->sel, (s->n_sel + 1) * sizeof *s->sel);
        e = &s->sel[s->n_sel++];
        e->key = dsf_xstrdup(key);
    } else {
        free(e->version);
        free(e->dir);
    }
    e->version = dsf_xstrdup(version);
    e->dir = dir ? dsf_xstrdup(dir) : NULL;
    return e;
}

/* Copies the warnings and notes of src to dst (src keeps everything). */
static void keep_warnings(dsf_diags *dst, const dsf_diags *src)
{
    for (size_t i = 0; i < src->len; i++)
        if (src->items[i].severity != DSF_ERROR)
            dsf_diag_set_rule(dsf_diag_add(dst, src->items[i].severity,
                                           src->items[i].file,
                                           src->items[i].line,
                                           src->items[i].col, "%s",
                                           src->items[i].message),
                              src->items[i].rule);
}

/* The verified tree of ix. online: files missing from the cache (or
** found damaged there) are downloaded first; offline they are DSF_ENET. */
static int open_tree(char **dir, repo_ctx *c, const dsf_index *ix,
                     const char *sha, bool online, dsf_diags *d)
{
    int rc = online ? dsf_repo_fetch_files(c, ix, d) : 0;
    if (rc)
        return rc;
    dsf_diags first = DSF_DIAGS_INIT;
    rc = dsf_cache_tree(dir, &c->cache, ix, sha, &first);
    if (rc == DSF_ENET && online) {
        /* a blob damaged on disk was deleted while building: fetch it
        ** again (it is verified against the pinned sha256) */
        keep_warnings(d, &first);
        rc = dsf_repo_fetch_files(c, ix, d);
        if (!rc)
            rc = dsf_cache_tree(dir, &c->cache, ix, sha, d);
    } else {
        dsf_diags_move(d, &first);
    }
    dsf_diags_free(&first);
    return rc;
}

/* Format 2: the verified tree of one release, named by the sha256 of
** its canonical description (so equal releases share a tree). */
int dsf_repo_open_release(char **dir, repo_ctx *c,
                          const dsf_index_release *rel,
                          bool online, dsf_diags *d)
{
    char *text = dsf_index_write(rel->ix);
    char key[65];
    dsf_sha256_hex(key, text, strlen(text));
    free(text);
    return open_tree(dir, c, rel->ix, key, online, d);
}

/* The index that holds the locked content of lr (*ix: caller frees) and
** the key of its tree (format 1): the pinned index.json from the cache,
** else (online) what upstream serves when it still serves every pinned
** file unchanged. 1 when it is not in the cache (offline). */
static int locked_index(dsf_index **ix, char key[65], repo_ctx *c,
                        const dsf_lock_repo *lr, bool online, dsf_diags *d)
{
    *ix = NULL;
    snprintf(key, 65, "%s", lr->index_sha256);
    char *text;
    size_t len;
    int rc = dsf_cache_get_blob(&text, &len, &c->cache, lr->index_sha256, d);
    if (rc == 1 && online)
        return dsf_repo_fetch_pinned(ix, key, c, lr, d);
    if (rc)
        return rc;
    rc = dsf_repo_parse_index(ix, lr->url, text, len, d);
    free(text);
    return rc;
}

/* The locked copy: from the cache, and when online, what is missing there
** is fetched by its pinned sha256 (the server must still serve it). why
** says why only the lock counts (for messages). */
static int use_locked(repo_synced *out, repo_ctx *c, const dsf_lock_repo *lr,
                      const char *why, bool online, dsf_diags *d)
{
    if (!lr) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "%s: repository '%s' is not pinned in "
                                   "%s, so there is no copy to use", why,
                                   c->name, c->lock.path);
        dsf_diag_set_hint(g, "run 'dsforge repo update %s' while online",
                          c->name);
        return DSF_ENET;
    }
    dsf_index *ix;
    char key[65];
    int rc = locked_index(&ix, key, c, lr, online, d);
    if (rc == 1) {
        char *p = dsf_cache_blob_path(&c->cache, lr->index_sha256);
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, p, 0, 0,
                                   "%s: the locked index.json of repository "
                                   "'%s' (sha256 %s) is not in the cache",
                                   why, c->name, lr->index_sha256);
        dsf_diag_set_hint(g, "run 'dsforge repo update %s' while online",
                          c->name);
        free(p);
        return DSF_ENET;
    }
    if (rc)
        return rc;
    if (!dsf_lock_matches(lr, ix)) {
        dsf_index_free(ix);
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, c->lock.path, 0, 0,
                                   "the file pins of repository '%s' do "
                                   "not match its locked index.json",
                                   c->name);
        dsf_diag_set_hint(g, "run 'dsforge repo update %s'", c->name);
        return DSF_EINPUT;
    }
    char *dir = NULL;
    /* format 2: each release's tree is opened when it is selected */
    rc = ix->format == 2 ? 0 : open_tree(&dir, c, ix, key, online, d);
    if (rc) {
        dsf_index_free(ix);
        return rc;
    }
    out->dir = dir;
    out->ix = ix;
    /* the lock's index, whichever copy served its content */
    snprintf(out->index_sha256, sizeof out->index_sha256, "%s",
             lr->index_sha256);
    return 0;
}

static int cmp_file_sha(const void *a, const void *b)
{
    const dsf_index_file *x = *(const dsf_index_file *const *)a;
    const dsf_index_file *y = *(const dsf_index_file *const *)b;
    int c = strcmp(x->sha256, y->sha256);
    return c ? c : strcmp(x->local, y->local);
}

/* Downloads the files of ix that are not in the cache, verifies them
** all, and only then stores them: a bad file leaves the cache as it
** was. */
int dsf_repo_fetch_files(repo_ctx *c, const dsf_index *ix, dsf_diags *d)
{
    dsf_http_req *reqs = dsf_xcalloc(ix->n_files ? ix->n_files : 1,
                                     sizeof *reqs);
    char **urls = dsf_xcalloc(ix->n_files ? ix->n_files : 1,
                              sizeof *urls);
    const dsf_index_file **which = dsf_xcalloc(ix->n_files ? ix->n_files : 1,
                                               sizeof *which);
    size_t n = 0;
    /* content addressed: one request per distinct sha256 (format 2
    ** serves each at blobs/<sha256>; format 1 may list one content twice,
    ** and either copy verifies) */
    const dsf_index_file **by_sha = dsf_xcalloc(ix->n_files ? ix->n_files
                                                            : 1,
                                                sizeof *by_sha);
    for (size_t i = 0; i < ix->n_files; i++)
        by_sha[i] = &ix->files[i];
    if (ix->n_files)
        qsort(by_sha, ix->n_files, sizeof *by_sha, cmp_file_sha);
    for (size_t i = 0; i < ix->n_files; i++) {
        const dsf_index_file *f = by_sha[i];
        if (i && !strcmp(by_sha[i - 1]->sha256, f->sha256))
            continue;
        if (dsf_cache_has_blob(&c->cache, f->sha256))
            continue;
        urls[n] = dsf_xasprintf("%s/%s", c->url, f->remote);
        reqs[n].url = urls[n];
        reqs[n].bearer = c->token;
        which[n++] = f;
    }
    free(by_sha);
    if (!n) {
        free(reqs);
        free(urls);
        free(which);
        return 0;
    }
    dsf_http_limits lim;
    dsf_repo_http_limits(&lim, c->o);
    int rc = dsf_http_fetch(reqs, n, &lim, d);
    for (size_t i = 0; !rc && i < n; i++) {
        dsf_http_req *r = &reqs[i];
        if (r->fail) {
            rc = dsf_diag_error(d, DSF_ENET, NULL, 0, 0,
                                "cannot fetch %s: %s", r->url, r->error);
            continue;
        }
        char hex[65];
        dsf_sha256_hex(hex, r->body.data ? r->body.data : "", r->body.len);
        if (strcmp(hex, which[i]->sha256)) {
            dsf_diag *g = dsf_diag_add(
                d, DSF_ERROR, NULL, 0, 0,
                "integrity check failed for %s (repository '%s'): its "
                "sha256 is %s but index.json says %s", r->url, c->name,
                hex, which[i]->sha256);
            dsf_diag_set_rule(g, "repo-integrity");
            dsf_diag_set_hint(g, "the file or index.json was changed or "
                                 "damaged on the server; nothing was "
                                 "cached or written");
            rc = DSF_ENET;
        }
    }
    for (size_t i = 0; !rc && i < n; i++)
        rc = dsf_cache_put_blob(&c->cache, which[i]->sha256,
                                reqs[i].body.data ? reqs[i].body.data : "",
                                reqs[i].body.len, d);
    for (size_t i = 0; i < n; i++) {
        dsf_http_req_free(&reqs[i]);
        free(urls[i]);
    }
    free(reqs);
    free(urls);
    free(which);
    return rc;
}

/* repo update of a format-2 repository: each selection of lr resolved
** again in ix (the newest matching release; one that no release matches
** any more is dropped, with a line in the report), and the trees of the
** chosen releases fetched and verified. *out: caller frees keys and
** values. */
static int reselect(dsf_lock_pin **out, size_t *n_out, repo_ctx *c,
                    const dsf_lock_repo *lr, const dsf_index *ix,
                    dsf_diags *d)
{
    *out = dsf_xcalloc(lr->n_selections + 1, sizeof **out);
    *n_out = 0;
    int rc = 0;
    for (size_t i = 0; !rc && i < lr->n_selections; i++) {
        char *prof;
        dsf_semreq req;
        bool has;
        if (!dsf_lock_selection_parse(lr->selections[i].key, &prof, &req,
                                      &has))
            continue;
        const dsf_index_release *rel = dsf_index_newest(ix, prof,
                                                        has ? &req : NULL);
        free(prof);
        if (!rel) {
            if (c->report)
                dsf_buf_printf(c->report, "%s: %s: no release matches any "
                               "more (was %s); dropped from the lock\n",
                               c->name, lr->selections[i].key,
                               lr->selections[i].value);
            continue;
        }
        char *dir;
        rc = dsf_repo_open_release(&dir, c, rel, true, d);
        if (rc)
            break;
        free(dir);
        (*out)[*n_out].key = dsf_xstrdup(lr->selections[i].key);
        (*out)[(*n_out)++].value = dsf_xstrdup(rel->version);
    }
    return rc;
}

/* The report line of a first pin, an update or an unchanged pin. */
static void report_pin(dsf_buf *report, const repo_ctx *c,
                       const dsf_lock_repo *lr, const dsf_index *ix,
                       const char *sha)
{
    if (!lr && ix->format == 2) {
        dsf_buf_printf(report, "%s: pinned %zu release%s, newest %s (index "
                       "sha256 %.12s...) in %s\n", c->name, ix->n_releases,
                       dsf_plural(ix->n_releases),
                       ix->releases[ix->n_releases - 1].version, sha,
                       c->lock.path);
    } else if (!lr) {
        dsf_buf_printf(report, "%s: pinned %zu profile%s, %zu plugin%s "
                       "(index sha256 %.12s...) in %s\n", c->name,
                       ix->n_profiles, dsf_plural(ix->n_profiles),
                       ix->n_plugins, dsf_plural(ix->n_plugins), sha,
                       c->lock.path);
    } else if (strcmp(lr->index_sha256, sha) || strcmp(lr->url, c->url)) {
        dsf_buf what = DSF_BUF_INIT;
        dsf_lock_diff(&what, lr, ix);
        dsf_buf_printf(report, "%s: updated (index sha256 %.12s... -> "
                       "%.12s...)%s\n", c->name, lr->index_sha256, sha,
                       dsf_buf_str(&what));
        dsf_buf_free(&what);
    } else {
        dsf_buf_printf(report, "%s: up to date (index sha256 %.12s...)\n",
                       c->name, sha);
    }
}

/* A repository not pinned yet, or repo add/update: what upstream serves,
** verified, fetched and pinned. */
static int sync_online(repo_synced *out, repo_ctx *c, dsf_diags *d)
{
    const dsf_lock_repo *lr = dsf_lock_find(&c->lock, c->name);
    repo_fetched f;
    int rc = dsf_repo_fetch_index(&f, c, true, d);
    dsf_index *ix = NULL;
    dsf_lock_pin *sel = NULL;   /* format 2, repo update: new selections */
    size_t n_sel = 0;
    if (!rc && f.req.fail) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "cannot fetch %s: %s", f.url,
                                   f.req.error);
        dsf_diag_set_rule(g, "repo-fetch");
        rc = DSF_ENET;
    }
    if (!rc)
        rc = dsf_repo_verify_served(&ix, c, f.text, f.len, d);
    if (rc)
        goto done;
    const char *sha = f.sha;
    if (ix->format == 2) {
        /* repo update: every selection moves to the newest release that
        ** matches it, fetched and verified before anything is recorded */
        if (c->accept && lr && lr->releases &&
            (rc = reselect(&sel, &n_sel, c, lr, ix, d)) != 0)
            goto done;
    } else {
        char *tree = dsf_xasprintf("%s/trees/%s", c->cache.root, sha);
        bool have_tree = dsf_is_dir(tree);
        free(tree);
        if (!have_tree && (rc = dsf_repo_fetch_files(c, ix, d)) != 0)
            goto done;
    }
    /* Everything verified: now record the index and its validators. */
    if ((rc = dsf_repo_record_index(c, &f, d)) != 0)
        goto done;
    if (ix->format != 2 &&
        (rc = open_tree(&out->dir, c, ix, sha, true, d)) != 0)
        goto done;
    /* a first pin, or repo add/update: re-pinned */
    if (c->report)
        report_pin(c->report, c, lr, ix, sha);
    if (!lr || strcmp(lr->index_sha256, sha) || strcmp(lr->url, c->url)) {
        dsf_lock_set(&c->lock, c->name, c->url, sha, ix);
        for (size_t i = 0; i < n_sel; i++)
            dsf_lock_select(&c->lock, c->name, ix, sel[i].key,
                            sel[i].value);
    }
    if ((rc = dsf_repo_save_lock(&c->lock, d)) != 0)
        goto done;
    out->ix = ix;
    ix = NULL;
    snprintf(out->index_sha256, sizeof out->index_sha256, "%s", sha);
done:
    for (size_t i = 0; i < n_sel; i++) {
        free(sel[i].key);
        free(sel[i].value);
    }
    free(sel);
    dsf_index_free(ix);
    dsf_repo_fetched_free(&f);
    if (rc) {
        free(out->dir);
        out->dir = NULL;
    }
    return rc;
}

/* --locked with a repository configured at another URL than the lock's:
** using it would change the lock. */
static int moved_under_locked(repo_ctx *c, const dsf_lock_repo *lr,
                              dsf_diags *d)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, c->lock.path, 0, 0,
                               "repository '%s' is configured at %s but "
                               "pinned at %s, and --locked (or CI=true) "
                               "forbids changing the lock", c->name, c->url,
                               lr->url);
    dsf_diag_set_rule(g, "repo-lock");
    dsf_diag_set_hint(g, "run 'dsforge repo update %s' and commit the lock "
                         "file", c->name);
    return DSF_ENET;
}

/* Brings repository name (configured at url) to a usable tree. */
int dsf_repo_sync(repo_synced **out, const char *name, const char *url,
                  const char *const *keys, size_t n_keys, bool accept,
                  const dsf_repo_opts *o, dsf_buf *report, dsf_diags *d)
{
    *out = NULL;
    char *base = dsf_repo_base_url(url);
    if (!accept)
        for (size_t i = 0; i < n_memo; i++)
            if (!strcmp(memo[i].name, name) && !strcmp(memo[i].url, base)) {
                free(base);
                *out = &memo[i];
                return 0;
            }
    int rc = dsf_repo_check_url(base, o, d);
    if (rc) {
        free(base);
        return rc;
    }
    repo_ctx c;
    rc = dsf_repo_ctx_open(&c, name, base, keys, n_keys, o, d);
    c.accept = accept;
    c.report = report;
    repo_synced s;
    memset(&s, 0, sizeof s);
    const dsf_lock_repo *lr = rc ? NULL : dsf_lock_find(&c.lock, name);
    if (rc) {
        /* reported */
    } else if (o->offline && accept) {
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "updating repository '%s' needs the "
                            "network (drop --offline)", name);
    } else if (o->offline) {
        rc = use_locked(&s, &c, lr, "--offline", false, d);
    } else if (accept) {
        rc = sync_online(&s, &c, d);
    } else if (!lr && o->locked) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, c.lock.path, 0, 0,
                                   "repository '%s' is not pinned in the "
                                   "lock file, and --locked (or CI=true) "
                                   "forbids pinning it now", name);
        dsf_diag_set_rule(g, "repo-lock");
        dsf_diag_set_hint(g, "run 'dsforge repo update %s' and commit the "
                             "lock file", name);
        rc = DSF_ENET;
    } else if (!lr) {
        rc = sync_online(&s, &c, d); /* first use pins */
    } else if (o->locked && strcmp(lr->url, c.url)) {
        rc = moved_under_locked(&c, lr, d);
    } else {
        /* pinned: the locked content, whatever upstream published since
        ** (so --locked, like cargo's, fails only where using it would
        ** change the lock) */
        rc = use_locked(&s, &c, lr, "pinned", true, d);
        if (!rc)
            dsf_repo_notice_updates(&c, lr, d);
    }
    dsf_cache_close(&c.cache);
    if (rc) {
        dsf_lock_free(&c.lock);
        free(base);
        synced_free(&s);
        return rc;
    }
    s.name = dsf_xstrdup(name);
    s.url = base;
    const dsf_lock_repo *now = dsf_lock_find(&c.lock, name);
    if (s.ix->format == 2 && now && now->releases &&
        !strcmp(now->index_sha256, s.index_sha256))
        for (size_t i = 0; i < now->n_selections; i++)
            dsf_repo_sel_set(&s, now->selections[i].key,
                             now->selections[i].value,
                             NULL);
    dsf_lock_free(&c.lock);
    /* Replace an older memo entry of the same repository (after update). */
    for (size_t i = 0; i < n_memo; i++)
        if (!strcmp(memo[i].name, name)) {
            synced_free(&memo[i]);
            memo[i] = s;
            *out = &memo[i];
            return 0;
        }
    dsf_xgrow((void **)&memo, &cap_memo, n_memo + 1, sizeof *memo);
    memo[n_memo] = s;
    *out = &memo[n_memo++];
    return 0;
}

void dsf_repo_forget(const char *name)
{
    for (size_t i = 0; i < n_memo; i++)
        if (!strcmp(memo[i].name, name)) {
            synced_free(&memo[i]);
            memo[i] = memo[--n_memo];
            return;
        }
}

char *dsf_repo_release_of(const char *dir)
{
    for (size_t i = 0; i < n_memo; i++)
        for (size_t k = 0; k < memo[i].n_sel; k++)
            if (memo[i].sel[k].dir && !strcmp(memo[i].sel[k].dir, dir))
                return dsf_xstrdup(memo[i].sel[k].version);
    return NULL;
}

const repo_synced *dsf_repo_synced_find(const char *name)
{
    for (size_t i = 0; i < n_memo; i++)
        if (!strcmp(memo[i].name, name))
            return &memo[i];
    return NULL;
}
