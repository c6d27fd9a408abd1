/* repo_served.c -- what a repository serves now, and whether to trust
** it: signatures, expiry, rollbacks, the pin it must match (repo_ctx.h). */
#include "repo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "fetch/cache.h"
#include "fetch/http.h"
#include "fetch/index.h"
#include "fetch/lock.h"
#include "fetch/sign.h"
#include "fetch/repo_ctx.h"
#include "json/jsonc.h"

int dsf_repo_parse_index(dsf_index **ix, const char *url,
                         const char *text, size_t len, dsf_diags *d)
{
    char *label = dsf_xasprintf("%s/index.json", url);
    int rc = dsf_index_parse(ix, label, text, len, d);
    free(label);
    return rc;
}

static int sig_refused(repo_ctx *c, const char *why, dsf_diags *d)
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
static int check_signature(repo_ctx *c, const char *text, size_t len,
                           dsf_diags *d)
{
    char *url = dsf_xasprintf("%s/%s", c->url, DSF_SIGN_FILE);
    dsf_http_req req;
    memset(&req, 0, sizeof req);
    req.url = url;
    req.bearer = c->token;
    dsf_http_limits lim;
    dsf_repo_http_limits(&lim, c->o);
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

/* The name the repository's index had when it was pinned: the lock's
** record, else (a lock written before it was recorded) the cached pinned
** index's; NULL when neither is known (not pinned yet). Caller frees. */
static char *pinned_name(repo_ctx *c, const dsf_lock_repo *lr)
{
    if (!lr)
        return NULL;
    if (lr->index_name)
        return dsf_xstrdup(lr->index_name);
    char *text, *name = NULL;
    size_t len;
    dsf_diags quiet = DSF_DIAGS_INIT;
    if (dsf_cache_get_blob(&text, &len, &c->cache, lr->index_sha256,
                           &quiet) == 0) {
        dsf_index *ix;
        if (dsf_repo_parse_index(&ix, c->url, text, len, &quiet) == 0) {
            name = dsf_xstrdup(ix->name);
            dsf_index_free(ix);
        }
        free(text);
    }
    dsf_diags_free(&quiet);
    return name;
}

static int wrong_name(repo_ctx *c, const char *served, const char *pinned,
                      dsf_diags *d)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "index.json served for repository '%s' (%s) "
                               "is the index of repository '%s', not of "
                               "'%s' as pinned", c->name, c->url, served,
                               pinned);
    dsf_diag_set_rule(g, "repo-name");
    dsf_diag_set_hint(g, "another repository's index (signed by the same "
                         "publishers, perhaps) is served at this URL: a "
                         "misconfigured server or an attack; nothing was "
                         "used or pinned. If the repository was renamed "
                         "on purpose, 'dsforge repo remove %s' and add it "
                         "again", c->name);
    return DSF_ENET;
}

static int expired(repo_ctx *c, const dsf_index *ix, dsf_diags *d)
{
    char t[32];
    dsf_index_time_format(t, sizeof t, ix->expires);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "index.json of repository '%s' expired on %s",
                               c->name, t);
    dsf_diag_set_rule(g, "repo-expired");
    dsf_diag_set_hint(g, "its publishers re-sign it to renew it; "
                         "--allow-expired accepts it anyway");
    return DSF_ENET;
}

static int rolled_back(repo_ctx *c, const dsf_index *ix,
                       const dsf_lock_repo *lr, dsf_diags *d)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, c->lock.path, 0, 0,
                               "index.json of repository '%s' goes back: "
                               "serial %lld is served, the lock pins serial "
                               "%lld (a rollback); nothing was used or "
                               "pinned", c->name, ix->serial, lr->serial);
    dsf_diag_set_rule(g, "repo-rollback");
    dsf_diag_set_hint(g, "most likely the publishers indexed a copy of the "
                         "repository without its previous index.json, so "
                         "the serial started again; they repair it with "
                         "'dsforge repo index DIR --serial %lld' (plus "
                         "their --sign keys). Otherwise a stale mirror or "
                         "cache, or an attacker, serves an old index: ask "
                         "the publishers which serial is current",
                      lr->serial + 1);
    return DSF_ENET;
}

int dsf_repo_verify_served(dsf_index **ix, repo_ctx *c, const char *text,
                           size_t len, dsf_diags *d)
{
    *ix = NULL;
    /* the signature first, on the raw bytes: nothing unsigned is parsed */
    int rc = c->n_keys ? check_signature(c, text, len, d) : 0;
    if (!rc)
        rc = dsf_repo_parse_index(ix, c->url, text, len, d);
    if (rc)
        return rc;
    const dsf_lock_repo *lr = dsf_lock_find(&c->lock, c->name);
    char *pinned = pinned_name(c, lr);
    if (pinned && strcmp(pinned, (*ix)->name))
        rc = wrong_name(c, (*ix)->name, pinned, d);
    else if ((*ix)->expires && (long long)time(NULL) >= (*ix)->expires &&
             !c->o->allow_expired)
        rc = expired(c, *ix, d);
    else if (lr && (*ix)->serial < lr->serial)
        rc = rolled_back(c, *ix, lr, d);
    free(pinned);
    if (rc) {
        dsf_index_free(*ix);
        *ix = NULL;
    }
    return rc;
}

int dsf_repo_fetch_index(repo_fetched *f, repo_ctx *c, bool progress,
                         dsf_diags *d)
{
    memset(f, 0, sizeof *f);
    f->url = dsf_xasprintf("%s/index.json", c->url);
    dsf_cache_meta_load(&f->meta, &c->cache, f->url);
    if (f->meta.index_sha256[0] &&
        dsf_cache_get_blob(&f->cached, &f->cached_len, &c->cache,
                           f->meta.index_sha256, d) != 0)
        f->meta.index_sha256[0] = '\0';
    dsf_http_req *req = &f->req;
    req->url = f->url;
    req->bearer = c->token;
    if (f->cached) {
        req->if_none_match = f->meta.etag;
        req->if_modified_since = f->meta.etag ? NULL
                                              : f->meta.last_modified;
    }
    dsf_http_limits lim;
    dsf_repo_http_limits(&lim, c->o);
    lim.progress = progress;
    int rc = dsf_http_fetch(req, 1, &lim, d);
    if (rc || req->fail)
        return rc;
    if (req->not_modified) {
        f->text = f->cached;
        f->len = f->cached_len;
        snprintf(f->sha, sizeof f->sha, "%s", f->meta.index_sha256);
    } else {
        f->text = req->body.data ? req->body.data : "";
        f->len = req->body.len;
        dsf_sha256_hex(f->sha, f->text, f->len);
    }
    return 0;
}

int dsf_repo_record_index(repo_ctx *c, const repo_fetched *f, dsf_diags *d)
{
    bool fresh = !f->req.not_modified;
    int rc = fresh ? dsf_cache_put_blob(&c->cache, f->sha, f->text, f->len,
                                        d)
                   : 0;
    if (!rc) {
        dsf_cache_meta m = {fresh ? f->req.etag : f->meta.etag,
                            fresh ? f->req.last_modified
                                  : f->meta.last_modified,
                            "", (double)time(NULL)};
        snprintf(m.index_sha256, sizeof m.index_sha256, "%s", f->sha);
        rc = dsf_cache_meta_save(&c->cache, f->url, &m, d);
    }
    return rc;
}

void dsf_repo_fetched_free(repo_fetched *f)
{
    free(f->cached);
    dsf_cache_meta_free(&f->meta);
    dsf_http_req_free(&f->req);
    free(f->url);
    memset(f, 0, sizeof *f);
}

int dsf_repo_ask_upstream(char sha[65], dsf_index **ix_out, repo_ctx *c,
                          dsf_diags *d)
{
    *ix_out = NULL;
    repo_fetched f;
    int rc = dsf_repo_fetch_index(&f, c, false, d);
    if (!rc && f.req.fail)
        rc = dsf_diag_error(d, DSF_ENET, NULL, 0, 0, "cannot fetch %s: %s",
                            f.url, f.req.error);
    if (!rc) {
        memcpy(sha, f.sha, 65);
        rc = dsf_repo_verify_served(ix_out, c, f.text, f.len, d);
    }
    if (!rc)
        rc = dsf_repo_record_index(c, &f, d);
    if (rc) {
        dsf_index_free(*ix_out);
        *ix_out = NULL;
    }
    dsf_repo_fetched_free(&f);
    return rc;
}

int dsf_repo_fetch_pinned(dsf_index **ix, char sha[65], repo_ctx *c,
                          const dsf_lock_repo *lr, dsf_diags *d)
{
    dsf_diags why = DSF_DIAGS_INIT;
    int rc = dsf_repo_ask_upstream(sha, ix, c, &why);
    if (!rc && (!strcmp(sha, lr->index_sha256) ||
                dsf_lock_matches(lr, *ix))) {
        dsf_diags_free(&why);
        return 0;
    }
    dsf_buf what = DSF_BUF_INIT;
    if (!rc) {
        dsf_lock_diff(&what, lr, *ix);
        dsf_index_free(*ix);
        *ix = NULL;
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
void dsf_repo_notice_updates(repo_ctx *c, const dsf_lock_repo *lr,
                             dsf_diags *d)
{
    char *index_url = dsf_xasprintf("%s/index.json", c->url);
    dsf_cache_meta meta;
    dsf_cache_meta_load(&meta, &c->cache, index_url);
    char seen[65];
    snprintf(seen, sizeof seen, "%s", meta.index_sha256);
    if ((double)time(NULL) - meta.checked >= (double)c->o->check_interval) {
        dsf_index *ix;
        dsf_diags quiet = DSF_DIAGS_INIT;
        if (dsf_repo_ask_upstream(seen, &ix, c, &quiet) == 0)
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
            if (dsf_repo_parse_index(&ix, c->url, text, len, &quiet) == 0) {
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
