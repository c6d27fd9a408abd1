/* repo.c -- see repo.h: resolving, updating and pinning repositories. */
#include "repo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "fetch/cache.h"
#include "fetch/http.h"
#include "fetch/index.h"
#include "fetch/lock.h"
#include "fetch/project.h"
#include "fetch/repoconf.h"
#include "fetch/semver.h"
#include "fetch/sign.h"
#include "json/jsonc.h"

/* ---- options ----------------------------------------------------------- */

static long env_long(const char *var, long def, long min, long max)
{
    const char *s = getenv(var);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || v < (double)min || v > (double)max)
        return def;
    return (long)v;
}

void dsf_repo_opts_init(dsf_repo_opts *o)
{
    memset(o, 0, sizeof *o);
    o->progress = true;
    o->connect_timeout_ms =
        env_long("DSFORGE_FETCH_CONNECT_TIMEOUT", 10, 1, 3600) * 1000;
    o->timeout_ms = env_long("DSFORGE_FETCH_TIMEOUT", 120, 1, 86400) * 1000;
    o->low_speed_secs = 20;
    if (o->low_speed_secs > o->timeout_ms / 1000)
        o->low_speed_secs = o->timeout_ms / 1000;
    o->max_bytes = (size_t)env_long("DSFORGE_FETCH_MAX_BYTES", 16L << 20, 1,
                                    1L << 30);
    o->check_interval = env_long("DSFORGE_REPO_CHECK_INTERVAL", 86400, 0,
                                 100L * 365 * 86400);
    const char *ci = getenv("CI");
    o->locked = ci && (!strcmp(ci, "true") || !strcmp(ci, "1"));
}

static void http_limits(dsf_http_limits *lim, const dsf_repo_opts *o)
{
    dsf_http_limits def = DSF_HTTP_LIMITS_DEFAULT;
    *lim = def;
    if (o->connect_timeout_ms > 0)
        lim->connect_timeout_ms = o->connect_timeout_ms;
    if (o->timeout_ms > 0)
        lim->timeout_ms = o->timeout_ms;
    if (o->low_speed_secs > 0)
        lim->low_speed_secs = o->low_speed_secs;
    if (o->max_bytes)
        lim->max_bytes = o->max_bytes;
    lim->allow_http = o->allow_http;
    lim->progress = o->progress;
}

char *dsf_repo_token_var(const char *name)
{
    char *v = dsf_xasprintf("DSFORGE_TOKEN_%s", name);
    for (char *s = v + 14; *s; s++)
        *s = isalnum((unsigned char)*s) ? (char)toupper((unsigned char)*s)
                                        : '_';
    return v;
}

/* The project of this run: o->project_dir, else the one found from the
** current directory (once per process), else NULL. */
static const char *project_dir(const dsf_repo_opts *o)
{
    static char *found;
    static bool looked;
    if (o->project_dir)
        return o->project_dir;
    if (!looked) {
        found = dsf_project_find();
        looked = true;
    }
    return found;
}

/* Loads the lock of this run (the project's, or the user's outside a
** project). */
static int load_lock(dsf_lock *lock, const dsf_repo_opts *o, dsf_diags *d)
{
    char *path = dsf_project_lock_path(project_dir(o));
    if (!path) {
        memset(lock, 0, sizeof *lock);
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "no project here and no home for the user's "
                              "lock file: set XDG_STATE_HOME or HOME");
    }
    int rc = dsf_lock_load(lock, path, d);
    free(path);
    return rc;
}

/* Saves the lock, creating the user's state directory when needed. */
static int save_lock(dsf_lock *lock, dsf_diags *d)
{
    if (!lock->changed)
        return 0;
    char *dir = dsf_path_dirname(lock->path);
    int rc = dsf_is_dir(dir) ? 0 : dsf_mkdir_p(dir, NULL, d);
    free(dir);
    return rc ? rc : dsf_lock_save(lock, d);
}

/* ---- URLs -------------------------------------------------------------- */

/* The base URL (no trailing slash, no /index.json). Caller frees. */
static char *base_url(const char *url)
{
    size_t n = strlen(url);
    const char *suffix = "/index.json";
    size_t ls = strlen(suffix);
    if (n > ls && !strcmp(url + n - ls, suffix))
        n -= ls;
    while (n && url[n - 1] == '/')
        n--;
    return dsf_xstrndup(url, n);
}

static int check_url(const char *url, const dsf_repo_opts *o, dsf_diags *d)
{
    for (const char *s = url; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f || *s == '?' ||
            *s == '#' || *s == '\\')
            return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                                  "repository URL '%s' has a space, "
                                  "control character, '?', '#' or '\\'",
                                  url);
    const char *host = strstr(url, "://");
    if (host && memchr(host + 3, '@', strcspn(host + 3, "/"))) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "repository URL '%s' carries "
                                   "credentials", url);
        dsf_diag_set_hint(g, "put a bearer token in the environment "
                             "variable DSFORGE_TOKEN_<NAME> instead");
        return DSF_EUSAGE;
    }
    if (!dsf_http_url_allowed(url, o->allow_http)) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "repository URL '%s' is not allowed: "
                                   "https:// only (http:// to loopback "
                                   "addresses, or with --allow-http)", url);
        dsf_diag_set_rule(g, "repo-url");
        return DSF_EUSAGE;
    }
    return 0;
}

/* ---- syncing one repository ------------------------------------------- */

/* Format 2: what one selection key resolved to in this process. */
typedef struct selected {
    char *key;         /* "profile NAME[@REQ]" or "repository" */
    char *version;     /* the release (from the lock, or resolved) */
    char *dir;         /* its verified tree, NULL until opened */
} selected;

typedef struct synced {
    char *name;
    char *url;
    char *dir;         /* materialized tree (format 1; NULL for 2) */
    dsf_index *ix;
    char index_sha256[65];
    selected *sel;     /* format 2: the lock's selections, then more */
    size_t n_sel;
} synced;

/* Repositories already revalidated by this process (so a run that loads
** many profiles from one repository asks the server once). Reachable
** until exit, by design. */
static synced *memo;
static size_t n_memo, cap_memo;

static void synced_free(synced *s)
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

static selected *sel_find(synced *s, const char *key)
{
    for (size_t i = 0; i < s->n_sel; i++)
        if (!strcmp(s->sel[i].key, key))
            return &s->sel[i];
    return NULL;
}

/* Sets key to version (and dir, copied; may be NULL). */
static selected *sel_set(synced *s, const char *key, const char *version,
                         const char *dir)
{
    selected *e = sel_find(s, key);
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

typedef struct ctx {
    const char *name;
    const char *url;      /* base URL */
    const dsf_repo_opts *o;
    dsf_cache cache;
    dsf_lock lock;
    bool accept;          /* repo add/update: re-pin to what is served */
    dsf_buf *report;      /* may be NULL */
    char *token;          /* borrowed from the environment; never printed */
    const char *const *keys;  /* pinned public keys (64 hex); borrowed */
    size_t n_keys;
} ctx;

static int parse_index_text(dsf_index **ix, const char *url,
                            const char *text, size_t len, dsf_diags *d)
{
    char *label = dsf_xasprintf("%s/index.json", url);
    int rc = dsf_index_parse(ix, label, text, len, d);
    free(label);
    return rc;
}

static int fetch_files(ctx *c, const dsf_index *ix, dsf_diags *d);
static int fetch_pinned_index(char **text, size_t *len, ctx *c,
                              const dsf_lock_repo *lr, dsf_diags *d);

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
static int open_tree(char **dir, ctx *c, const dsf_index *ix,
                     const char *sha, bool online, dsf_diags *d)
{
    int rc = online ? fetch_files(c, ix, d) : 0;
    if (rc)
        return rc;
    dsf_diags first = DSF_DIAGS_INIT;
    rc = dsf_cache_tree(dir, &c->cache, ix, sha, &first);
    if (rc == DSF_ENET && online) {
        /* a blob damaged on disk was deleted while building: fetch it
        ** again (it is verified against the pinned sha256) */
        keep_warnings(d, &first);
        rc = fetch_files(c, ix, d);
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
static int open_release(char **dir, ctx *c, const dsf_index_release *rel,
                        bool online, dsf_diags *d)
{
    char *text = dsf_index_write(rel->ix);
    char key[65];
    dsf_sha256_hex(key, text, strlen(text));
    free(text);
    return open_tree(dir, c, rel->ix, key, online, d);
}

/* The locked copy: from the cache, and when online, what is missing there
** is fetched by its pinned sha256 (the server must still serve it). why
** says why only the lock counts (for messages). */
static int use_locked(synced *out, ctx *c, const dsf_lock_repo *lr,
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
    char *text;
    size_t len;
    int rc = dsf_cache_get_blob(&text, &len, &c->cache, lr->index_sha256, d);
    if (rc == 1 && online)
        rc = fetch_pinned_index(&text, &len, c, lr, d);
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
    dsf_index *ix;
    rc = parse_index_text(&ix, lr->url, text, len, d);
    free(text);
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
    rc = ix->format == 2 ? 0 : open_tree(&dir, c, ix, lr->index_sha256,
                                         online, d);
    if (rc) {
        dsf_index_free(ix);
        return rc;
    }
    out->dir = dir;
    out->ix = ix;
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
static int fetch_files(ctx *c, const dsf_index *ix, dsf_diags *d)
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
    http_limits(&lim, c->o);
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

static int stale_pin(ctx *c, const dsf_lock_repo *lr, const dsf_index *ix,
                     const char *sha, dsf_diags *d)
{
    dsf_buf what = DSF_BUF_INIT;
    if (strcmp(lr->url, c->url))
        dsf_buf_printf(&what, "\n  URL: %s -> %s", lr->url, c->url);
    size_t n = dsf_lock_diff(&what, lr, ix);
    if (!n && !what.len)
        dsf_buf_puts(&what, "\n  index.json changed (no file changed)");
    dsf_diag *g = dsf_diag_add(
        d, DSF_ERROR, c->lock.path, 0, 0,
        "repository '%s' differs from its pin in the lock file (index "
        "sha256 %.12s... locked, %.12s... served):%s", c->name,
        lr->index_sha256, sha, dsf_buf_str(&what));
    dsf_diag_set_rule(g, "repo-lock");
    dsf_diag_set_hint(g, "review the change, then run 'dsforge repo update "
                         "%s' to accept it", c->name);
    dsf_buf_free(&what);
    return DSF_ENET;
}

static int sig_refused(ctx *c, const char *why, dsf_diags *d)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "index.json of repository '%s' (%s) is "
                               "refused: %s", c->name, c->url, why);
    dsf_diag_set_rule(g, "repo-signature");
    dsf_diag_set_hint(g, "the repository pins public key%s %.16s%s: its "
                         "publishers sign with 'dsforge repo index DIR "
                         "--sign KEY'; if they rotated keys, pin the new "
                         "one with 'dsforge repo add %s URL --key PUB'",
                      c->n_keys > 1 ? "s" : "", c->keys[0],
                      c->n_keys > 1 ? ", ..." : "", c->name);
    return DSF_ENET;
}

/* With pinned keys: index.json.sig must hold a valid signature of text
** by one of them. */
static int check_signature(ctx *c, const char *text, size_t len,
                           dsf_diags *d)
{
    char *url = dsf_xasprintf("%s/%s", c->url, DSF_SIGN_FILE);
    dsf_http_req req;
    memset(&req, 0, sizeof req);
    req.url = url;
    req.bearer = c->token;
    dsf_http_limits lim;
    http_limits(&lim, c->o);
    lim.progress = false;
    lim.max_bytes = 64u << 10;
    int rc = dsf_http_fetch(&req, 1, &lim, d);
    cJSON *doc = NULL;
    if (!rc && req.fail) {
        char *why = dsf_xasprintf("it is not signed (%s: %s)", url,
                                  req.error);
        rc = sig_refused(c, why, d);
        free(why);
    }
    const cJSON *sigs = NULL;
    if (!rc) {
        doc = req.body.data && dsf_json_too_deep(req.body.data, req.body.len)
                  ? NULL
                  : cJSON_ParseWithLength(req.body.data ? req.body.data
                                                        : "",
                                          req.body.len);
        sigs = cJSON_GetObjectItemCaseSensitive(doc, "signatures");
        const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(doc, "format");
        if (!cJSON_IsArray(sigs) || !cJSON_IsNumber(fmt) ||
            fmt->valuedouble != 1)
            rc = sig_refused(c, "its index.json.sig is not a signature "
                                "file (format 1)", d);
    }
    bool good = false, bad_pinned = false;
    dsf_buf others = DSF_BUF_INIT;
    const cJSON *e;
    const cJSON *list = rc ? NULL : sigs;
    cJSON_ArrayForEach(e, list) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "signature");
        if (!cJSON_IsString(k) || !cJSON_IsString(v))
            continue;
        bool pinned = false;
        for (size_t i = 0; i < c->n_keys; i++)
            if (!strcmp(c->keys[i], k->valuestring))
                pinned = true;
        if (!pinned) {
            dsf_buf_printf(&others, "%s%.16s", others.len ? ", " : "",
                           k->valuestring);
            continue;
        }
        int ok = dsf_sign_verify(k->valuestring, v->valuestring, text, len,
                                 d);
        if (ok < 0 || ok > 1) {
            rc = ok;
            break;
        }
        if (ok)
            good = true;
        else
            bad_pinned = true;
    }
    if (!rc && !good) {
        char *why = bad_pinned
                        ? dsf_xstrdup("the signature by the pinned key does "
                                      "not match its bytes (index.json was "
                                      "changed after signing, or the "
                                      "signature is damaged)")
                    : others.len
                        ? dsf_xasprintf("it is signed by another key (%s), "
                                        "not by a pinned one",
                                        dsf_buf_str(&others))
                        : dsf_xstrdup("it is not signed (index.json.sig "
                                      "has no signature)");
        rc = sig_refused(c, why, d);
        free(why);
    }
    dsf_buf_free(&others);
    cJSON_Delete(doc);
    dsf_http_req_free(&req);
    free(url);
    return rc;
}

/* An index served now (not the pinned copy): signed by a pinned key when
** the repository has any, not expired (unless --allow-expired), and not
** older than the lock's (a rollback). */
static int verify_served(ctx *c, const char *text, size_t len,
                         const dsf_index *ix, dsf_diags *d)
{
    int rc = c->n_keys ? check_signature(c, text, len, d) : 0;
    if (rc)
        return rc;
    if (ix->expires && (long long)time(NULL) >= ix->expires &&
        !c->o->allow_expired) {
        char t[32];
        dsf_index_time_format(t, sizeof t, ix->expires);
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "index.json of repository '%s' expired "
                                   "on %s", c->name, t);
        dsf_diag_set_rule(g, "repo-expired");
        dsf_diag_set_hint(g, "its publishers re-sign it to renew it; "
                             "--allow-expired accepts it anyway");
        return DSF_ENET;
    }
    const dsf_lock_repo *lr = dsf_lock_find(&c->lock, c->name);
    if (lr && ix->serial < lr->serial) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, c->lock.path, 0, 0,
                                   "index.json of repository '%s' is a "
                                   "rollback: serial %lld is served, the "
                                   "lock pins serial %lld", c->name,
                                   ix->serial, lr->serial);
        dsf_diag_set_rule(g, "repo-rollback");
        dsf_diag_set_hint(g, "an older index is being served again (a "
                             "stale mirror or an attack); nothing was "
                             "used or pinned");
        return DSF_ENET;
    }
    return 0;
}

/* Fetches index.json (conditionally when its last copy is cached),
** records what is served in the cache (blob, validators, when it asked)
** and returns its sha256 and parsed index. It is not trusted beyond
** that: the caller compares it with the lock. DSF_ENET when it cannot be
** fetched or is malformed. */
static int ask_upstream(char sha[65], dsf_index **ix_out, ctx *c,
                        dsf_diags *d)
{
    *ix_out = NULL;
    char *index_url = dsf_xasprintf("%s/index.json", c->url);
    dsf_cache_meta meta;
    dsf_cache_meta_load(&meta, &c->cache, index_url);
    char *cached = NULL;
    size_t cached_len = 0;
    if (meta.index_sha256[0] &&
        dsf_cache_get_blob(&cached, &cached_len, &c->cache,
                           meta.index_sha256, d) != 0)
        meta.index_sha256[0] = '\0';
    dsf_http_req req;
    memset(&req, 0, sizeof req);
    req.url = index_url;
    req.bearer = c->token;
    if (cached) {
        req.if_none_match = meta.etag;
        req.if_modified_since = meta.etag ? NULL : meta.last_modified;
    }
    dsf_http_limits lim;
    http_limits(&lim, c->o);
    lim.progress = false;
    int rc = dsf_http_fetch(&req, 1, &lim, d);
    if (!rc && req.fail)
        rc = dsf_diag_error(d, DSF_ENET, NULL, 0, 0, "cannot fetch %s: %s",
                            index_url, req.error);
    const char *text = cached;
    size_t len = cached_len;
    if (!rc && !req.not_modified) {
        text = req.body.data ? req.body.data : "";
        len = req.body.len;
    }
    if (!rc) {
        dsf_sha256_hex(sha, text, len);
        rc = parse_index_text(ix_out, c->url, text, len, d);
    }
    if (!rc)
        rc = verify_served(c, text, len, *ix_out, d);
    if (!rc && !req.not_modified)
        rc = dsf_cache_put_blob(&c->cache, sha, text, len, d);
    if (!rc) {
        dsf_cache_meta m = {req.not_modified ? meta.etag : req.etag,
                            req.not_modified ? meta.last_modified
                                             : req.last_modified,
                            "", (double)time(NULL)};
        snprintf(m.index_sha256, sizeof m.index_sha256, "%s", sha);
        rc = dsf_cache_meta_save(&c->cache, index_url, &m, d);
    }
    if (rc) {
        dsf_index_free(*ix_out);
        *ix_out = NULL;
    }
    free(cached);
    dsf_cache_meta_free(&meta);
    dsf_http_req_free(&req);
    free(index_url);
    return rc;
}

/* The pinned index.json, not in the cache: fetched again, and accepted
** only when the server still serves exactly the pinned bytes. */
static int fetch_pinned_index(char **text, size_t *len, ctx *c,
                              const dsf_lock_repo *lr, dsf_diags *d)
{
    char sha[65];
    dsf_index *ix;
    dsf_diags why = DSF_DIAGS_INIT;
    int rc = ask_upstream(sha, &ix, c, &why);
    if (!rc && !strcmp(sha, lr->index_sha256)) {
        dsf_index_free(ix);
        dsf_diags_free(&why);
        return dsf_cache_get_blob(text, len, &c->cache, sha, d);
    }
    dsf_buf what = DSF_BUF_INIT;
    if (!rc) {
        dsf_lock_diff(&what, lr, ix);
        dsf_index_free(ix);
    } else {
        dsf_buf_printf(&what, "\n  %s", why.items[why.len - 1].message);
    }
    dsf_diag *g = dsf_diag_add(
        d, DSF_ERROR, c->lock.path, 0, 0,
        "the pinned content of repository '%s' (index sha256 %.12s...) is "
        "not in the cache and %s/index.json no longer serves it:%s",
        c->name, lr->index_sha256, c->url,
        what.len ? dsf_buf_str(&what) : "\n  (a different index.json)");
    dsf_diag_set_rule(g, "repo-lock");
    dsf_diag_set_hint(g, "run 'dsforge repo update %s' to pin what it "
                         "serves now (review the change), or restore the "
                         "cache ($XDG_CACHE_HOME/dsforge)", c->name);
    dsf_buf_free(&what);
    dsf_diags_free(&why);
    return DSF_ENET;
}

/* Pinned content in use: says once (per process and repository) on
** stderr when upstream serves something else. Asks the server only when
** the last check is older than o->check_interval; between checks the
** last answer (in the cache) is used. Never fails: the pin keeps
** working whatever the server does. */
static void notice_updates(ctx *c, const dsf_lock_repo *lr, dsf_diags *d)
{
    char *index_url = dsf_xasprintf("%s/index.json", c->url);
    dsf_cache_meta meta;
    dsf_cache_meta_load(&meta, &c->cache, index_url);
    char seen[65];
    snprintf(seen, sizeof seen, "%s", meta.index_sha256);
    if ((double)time(NULL) - meta.checked >= (double)c->o->check_interval) {
        dsf_index *ix;
        dsf_diags quiet = DSF_DIAGS_INIT;
        if (ask_upstream(seen, &ix, c, &quiet) == 0)
            dsf_index_free(ix);
        dsf_diags_free(&quiet);
    }
    if (seen[0] && strcmp(seen, lr->index_sha256)) {
        size_t n = 0;
        char *text;
        size_t len;
        dsf_diags quiet = DSF_DIAGS_INIT;
        if (dsf_cache_get_blob(&text, &len, &c->cache, seen, &quiet) == 0) {
            dsf_index *ix;
            if (parse_index_text(&ix, c->url, text, len, &quiet) == 0) {
                dsf_buf what = DSF_BUF_INIT;
                n = dsf_lock_diff(&what, lr, ix);
                dsf_buf_free(&what);
                dsf_index_free(ix);
            }
            free(text);
        }
        dsf_diags_free(&quiet);
        dsf_diag *g = dsf_diag_add(
            d, DSF_NOTE, NULL, 0, 0,
            "repository '%s' has updates upstream (%zu change%s); using "
            "the pinned copy", c->name, n, n == 1 ? "" : "s");
        dsf_diag_set_rule(g, "repo-outdated");
        dsf_diag_set_hint(g, "'dsforge repo outdated' shows them, "
                             "'dsforge repo update %s' accepts them",
                          c->name);
    }
    dsf_cache_meta_free(&meta);
    free(index_url);
}

/* repo update of a format-2 repository: each selection of lr resolved
** again in ix (the newest matching release; one that no release matches
** any more is dropped, with a line in the report), and the trees of the
** chosen releases fetched and verified. *out: caller frees keys and
** values. */
static int reselect(dsf_lock_pin **out, size_t *n_out, ctx *c,
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
        rc = open_release(&dir, c, rel, true, d);
        if (rc)
            break;
        free(dir);
        (*out)[*n_out].key = dsf_xstrdup(lr->selections[i].key);
        (*out)[(*n_out)++].value = dsf_xstrdup(rel->version);
    }
    return rc;
}

static int sync_online(synced *out, ctx *c, dsf_diags *d)
{
    const dsf_lock_repo *lr = dsf_lock_find(&c->lock, c->name);
    char *index_url = dsf_xasprintf("%s/index.json", c->url);
    dsf_cache_meta meta;
    dsf_cache_meta_load(&meta, &c->cache, index_url);
    char *cached = NULL;
    size_t cached_len = 0;
    if (meta.index_sha256[0] &&
        dsf_cache_get_blob(&cached, &cached_len, &c->cache,
                           meta.index_sha256, d) != 0)
        meta.index_sha256[0] = '\0';
    dsf_http_req req;
    memset(&req, 0, sizeof req);
    req.url = index_url;
    req.bearer = c->token;
    if (cached) {
        req.if_none_match = meta.etag;
        req.if_modified_since = meta.etag ? NULL : meta.last_modified;
    }
    dsf_http_limits lim;
    http_limits(&lim, c->o);
    int rc = dsf_http_fetch(&req, 1, &lim, d);
    dsf_index *ix = NULL;
    dsf_lock_pin *sel = NULL;   /* format 2, repo update: new selections */
    size_t n_sel = 0;
    char sha[65] = "";
    const char *text = NULL;
    size_t len = 0;
    if (!rc && req.fail == DSF_HTTP_NETWORK && lr && !c->accept) {
        char *why = dsf_xasprintf("cannot fetch %s (%s)", index_url,
                                  req.error);
        dsf_diags quiet = DSF_DIAGS_INIT;
        rc = use_locked(out, c, lr, why, false, &quiet);
        if (!rc)
            dsf_diag_add(d, DSF_WARNING, NULL, 0, 0,
                         "%s; using the locked copy of repository '%s' "
                         "from the cache", why, c->name);
        else
            dsf_diags_move(d, &quiet);
        dsf_diags_free(&quiet);
        free(why);
        goto done;
    }
    if (!rc && req.fail) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "cannot fetch %s: %s", index_url,
                                   req.error);
        dsf_diag_set_rule(g, "repo-fetch");
        rc = DSF_ENET;
        goto done;
    }
    if (rc)
        goto done;
    if (req.not_modified) {
        text = cached;
        len = cached_len;
        snprintf(sha, sizeof sha, "%s", meta.index_sha256);
    } else {
        text = req.body.data ? req.body.data : "";
        len = req.body.len;
        dsf_sha256_hex(sha, text, len);
    }
    if ((rc = parse_index_text(&ix, c->url, text, len, d)) != 0)
        goto done;
    if ((rc = verify_served(c, text, len, ix, d)) != 0)
        goto done;
    if (lr && !c->accept &&
        (strcmp(lr->index_sha256, sha) || strcmp(lr->url, c->url))) {
        rc = stale_pin(c, lr, ix, sha, d);
        goto done;
    }
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
        if (!have_tree && (rc = fetch_files(c, ix, d)) != 0)
            goto done;
    }
    /* Everything verified: now record the index and its validators. */
    if (!req.not_modified &&
        (rc = dsf_cache_put_blob(&c->cache, sha, text, len, d)) != 0)
        goto done;
    if (!req.not_modified || strcmp(meta.index_sha256, sha)) {
        dsf_cache_meta m = {req.etag, req.last_modified, "",
                            (double)time(NULL)};
        snprintf(m.index_sha256, sizeof m.index_sha256, "%s", sha);
        if ((rc = dsf_cache_meta_save(&c->cache, index_url, &m, d)) != 0)
            goto done;
    }
    if (ix->format != 2 &&
        (rc = open_tree(&out->dir, c, ix, sha, true, d)) != 0)
        goto done;
    if (!lr || c->accept) {
        if (c->report) {
            if (!lr && ix->format == 2)
                dsf_buf_printf(c->report, "%s: pinned %zu release%s, newest "
                               "%s (index sha256 %.12s...) in %s\n",
                               c->name, ix->n_releases,
                               dsf_plural(ix->n_releases),
                               ix->releases[ix->n_releases - 1].version, sha,
                               c->lock.path);
            else if (!lr)
                dsf_buf_printf(c->report, "%s: pinned %zu profile%s, %zu "
                               "plugin%s (index sha256 %.12s...) in %s\n",
                               c->name, ix->n_profiles,
                               dsf_plural(ix->n_profiles), ix->n_plugins,
                               dsf_plural(ix->n_plugins), sha, c->lock.path);
            else if (strcmp(lr->index_sha256, sha) ||
                     strcmp(lr->url, c->url)) {
                dsf_buf what = DSF_BUF_INIT;
                dsf_lock_diff(&what, lr, ix);
                dsf_buf_printf(c->report, "%s: updated (index sha256 "
                               "%.12s... -> %.12s...)%s\n", c->name,
                               lr->index_sha256, sha, dsf_buf_str(&what));
                dsf_buf_free(&what);
            } else
                dsf_buf_printf(c->report, "%s: up to date (index sha256 "
                               "%.12s...)\n", c->name, sha);
        }
        if (!lr || strcmp(lr->index_sha256, sha) ||
            strcmp(lr->url, c->url)) {
            dsf_lock_set(&c->lock, c->name, c->url, sha, ix);
            for (size_t i = 0; i < n_sel; i++)
                dsf_lock_select(&c->lock, c->name, ix, sel[i].key,
                                sel[i].value);
        }
        rc = save_lock(&c->lock, d);
        if (rc)
            goto done;
    }
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
    free(cached);
    dsf_cache_meta_free(&meta);
    dsf_http_req_free(&req);
    free(index_url);
    if (rc) {
        free(out->dir);
        out->dir = NULL;
    }
    return rc;
}

/* Brings repository name (configured at url) to a usable tree. */
static int sync_repo(synced **out, const char *name, const char *url,
                     const char *const *keys, size_t n_keys, bool accept,
                     const dsf_repo_opts *o, dsf_buf *report, dsf_diags *d)
{
    *out = NULL;
    char *base = base_url(url);
    if (!accept)
        for (size_t i = 0; i < n_memo; i++)
            if (!strcmp(memo[i].name, name) && !strcmp(memo[i].url, base)) {
                free(base);
                *out = &memo[i];
                return 0;
            }
    int rc = check_url(base, o, d);
    if (rc) {
        free(base);
        return rc;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.url = base;
    c.o = o;
    c.accept = accept;
    c.report = report;
    c.keys = keys;
    c.n_keys = n_keys;
    char *var = dsf_repo_token_var(name);
    c.token = getenv(var);
    if (c.token && !*c.token)
        c.token = NULL;
    free(var);
    rc = load_lock(&c.lock, o, d);
    if (!rc)
        rc = dsf_cache_open(&c.cache, d);
    synced s;
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
    } else if (!lr || o->locked) {
        /* first use pins; --locked compares with upstream strictly */
        rc = sync_online(&s, &c, d);
    } else {
        /* pinned: the locked content, whatever upstream did since */
        rc = use_locked(&s, &c, lr, "pinned", true, d);
        if (!rc)
            notice_updates(&c, lr, d);
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
            sel_set(&s, now->selections[i].key, now->selections[i].value,
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

/* ---- loader API -------------------------------------------------------- */

/* The configured entry of name: *e borrowed from *v (n entries), which
** the caller frees with dsf_repoconf_free, also on failure. */
static int find_conf(const dsf_repoconf_entry **e, dsf_repoconf_entry **v,
                     size_t *n, const char *name, const dsf_repo_opts *o,
                     dsf_diags *d)
{
    *e = NULL;
    int rc = dsf_repoconf_load(v, n, project_dir(o), d);
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
static const dsf_index_release *repository_release(const synced *s)
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

/* Format 2: the release that profile (NULL: the repository's own
** selection, for its plugins, `list` and `repo path NAME`) with
** requirement req (text req_text; NULL: none) resolves to, and its
** verified tree in *dir_out (borrowed from s). The lock's selection is
** used when it has one; otherwise the newest matching release of the
** pinned index is chosen and recorded (DSF_ENET under --locked). */
static int select_release(const char **dir_out, synced *s,
                          const char *profile, const char *req_text,
                          const dsf_semreq *req, const dsf_repo_opts *o,
                          dsf_diags *d)
{
    *dir_out = NULL;
    char *key = dsf_lock_selection_key(profile, req_text);
    selected *m = sel_find(s, key);
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
    ctx c;
    memset(&c, 0, sizeof c);
    c.name = s->name;
    c.url = s->url;
    c.o = o;
    char *var = dsf_repo_token_var(s->name);
    c.token = getenv(var);
    if (c.token && !*c.token)
        c.token = NULL;
    free(var);
    int rc = load_lock(&c.lock, o, d);
    if (!rc)
        rc = dsf_cache_open(&c.cache, d);
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
        rc = open_release(&dir, &c, rel, !o->offline, d);
    if (!rc && record) {
        dsf_lock_select(&c.lock, s->name, s->ix, key, rel->version);
        rc = save_lock(&c.lock, d);
    }
    if (!rc) {
        m = sel_set(s, key, rel->version, dir);
        *dir_out = m->dir;
    }
    free(dir);
    dsf_cache_close(&c.cache);
    dsf_lock_free(&c.lock);
    free(key);
    return rc;
}

/* Format 1: one version per profile, which req must match (a version
** that is not semver only by the same text). */
static int check_version1(const synced *s, const char *name,
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
    synced *s = NULL;
    if (!rc)
        rc = sync_repo(&s, name, conf->url,
                       (const char *const *)conf->keys, conf->n_keys, false,
                       o, NULL, d);
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
    int rc = dsf_repoconf_load(&v, &n, project_dir(o), d);
    if (rc)
        return rc;
    for (size_t i = 0; !rc && i < n; i++) {
        if (v[i].shadowed)
            continue;
        synced *s;
        rc = sync_repo(&s, v[i].name, v[i].url,
                       (const char *const *)v[i].keys, v[i].n_keys, false, o,
                       NULL, d);
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

/* ---- commands ---------------------------------------------------------- */

int dsf_repo_list(dsf_repo_info **out, size_t *n, const dsf_repo_opts *o,
                  dsf_diags *d)
{
    *out = NULL;
    *n = 0;
    dsf_repoconf_entry *v;
    size_t nv;
    int rc = dsf_repoconf_load(&v, &nv, project_dir(o), d);
    if (rc)
        return rc;
    dsf_lock lock;
    rc = load_lock(&lock, o, d);
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
    const char *p = project_dir(o);
    *project = p ? dsf_xstrdup(p) : NULL;
    *lock = dsf_project_lock_path(p);
}

int dsf_repo_add(const char *name, const char *url, bool project,
                 const char *const *keys, size_t n_keys,
                 const dsf_repo_opts *o, dsf_buf *report, dsf_diags *d)
{
    /* --project outside a project makes the current directory one */
    dsf_repo_opts here;
    if (project && !project_dir(o)) {
        here = *o;
        here.project_dir = ".";
        o = &here;
    }
    if (!dsf_index_name_ok(name))
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "invalid repository name '%s' (letters, "
                              "digits, '_', '-', '.'; at most 64)", name);
    char *base = base_url(url);
    int rc = check_url(base, o, d);
    synced *s;
    /* Fetch and verify everything first: a repository that does not work
    ** is not recorded. */
    if (!rc)
        rc = sync_repo(&s, name, base, keys, n_keys, true, o, report, d);
    char *file = rc ? NULL : dsf_repoconf_path(project, project_dir(o));
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
    int rc = dsf_repoconf_load(&v, &n, project_dir(o), d);
    if (rc)
        return rc;
    bool found = false;
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].shadowed || (name && strcmp(v[i].name, name)))
            continue;
        found = true;
        synced *s;
        rc = sync_repo(&s, v[i].name, v[i].url,
                       (const char *const *)v[i].keys, v[i].n_keys, true, o,
                       report, d);
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
    char *file = dsf_repoconf_path(project, project_dir(o));
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
        rc = load_lock(&lock, o, d);
        if (!rc && dsf_lock_remove(&lock, name))
            rc = save_lock(&lock, d);
        dsf_lock_free(&lock);
        for (size_t i = 0; i < n_memo; i++)
            if (!strcmp(memo[i].name, name)) {
                synced_free(&memo[i]);
                memo[i] = memo[--n_memo];
                break;
            }
    }
    if (!rc && report)
        dsf_buf_printf(report, "removed repository '%s' from %s\n", name,
                       file);
    free(file);
    return rc;
}

int dsf_repo_outdated(const char *name, const dsf_repo_opts *o,
                      dsf_buf *report, dsf_diags *d)
{
    if (o->offline)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "checking for updates needs the network "
                              "(drop --offline)");
    dsf_repoconf_entry *v;
    size_t n;
    int rc = dsf_repoconf_load(&v, &n, project_dir(o), d);
    if (rc)
        return rc;
    ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    rc = load_lock(&c.lock, o, d);
    if (!rc)
        rc = dsf_cache_open(&c.cache, d);
    bool found = false;
    int first = rc;
    for (size_t i = 0; !rc && i < n; i++) {
        if (v[i].shadowed || (name && strcmp(v[i].name, name)))
            continue;
        found = true;
        char *base = base_url(v[i].url);
        char *var = dsf_repo_token_var(v[i].name);
        c.name = v[i].name;
        c.url = base;
        c.keys = (const char *const *)v[i].keys;
        c.n_keys = v[i].n_keys;
        c.token = getenv(var);
        if (c.token && !*c.token)
            c.token = NULL;
        free(var);
        const dsf_lock_repo *lr = dsf_lock_find(&c.lock, v[i].name);
        char sha[65];
        dsf_index *ix;
        int r = check_url(base, o, d);
        if (!r)
            r = ask_upstream(sha, &ix, &c, d);
        if (r) {
            if (!first)
                first = r;
        } else if (!lr) {
            dsf_buf_printf(report, "%s: not pinned (serves index sha256 "
                           "%.12s...)\n", c.name, sha);
        } else if (!strcmp(lr->index_sha256, sha) &&
                   !strcmp(lr->url, base)) {
            dsf_buf_printf(report, "%s: up to date (index sha256 "
                           "%.12s...)\n", c.name, sha);
        } else {
            dsf_buf what = DSF_BUF_INIT;
            if (strcmp(lr->url, base))
                dsf_buf_printf(&what, "\n  URL: %s -> %s", lr->url, base);
            dsf_lock_diff(&what, lr, ix);
            dsf_buf_printf(report, "%s: outdated (index sha256 %.12s... "
                           "locked, %.12s... served)%s\n", c.name,
                           lr->index_sha256, sha, dsf_buf_str(&what));
            dsf_buf_free(&what);
        }
        if (!r)
            dsf_index_free(ix);
        free(base);
    }
    dsf_cache_close(&c.cache);
    dsf_lock_free(&c.lock);
    dsf_repoconf_free(v, n);
    if (!first && name && !found) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "unknown repository '%s'", name);
        dsf_diag_set_hint(g, "'dsforge repo list' shows the configured "
                             "ones");
        return DSF_EINPUT;
    }
    if (!first && !found)
        dsf_buf_puts(report, "no repositories configured\n");
    return first;
}
