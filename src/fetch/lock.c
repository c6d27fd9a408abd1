/* lock.c -- see lock.h. */
#include "lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

static int cmp_repo(const void *a, const void *b);

static void free_pins(dsf_lock_pin *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].key);
        free(p[i].value);
    }
    free(p);
}

static void free_repo(dsf_lock_repo *r)
{
    free(r->name);
    free(r->url);
    free(r->index_name);
    free_pins(r->files, r->n_files);
    free_pins(r->versions, r->n_versions);
    free_pins(r->selections, r->n_selections);
    memset(r, 0, sizeof *r);
}

static void touch(dsf_lock *lock, const char *name)
{
    for (size_t i = 0; i < lock->n_touched; i++)
        if (!strcmp(lock->touched[i], name))
            return;
    lock->touched = dsf_xrealloc(lock->touched, (lock->n_touched + 1) *
                                                    sizeof *lock->touched);
    lock->touched[lock->n_touched++] = dsf_xstrdup(name);
}

static dsf_lock_pin *copy_pins(const dsf_lock_pin *p, size_t n)
{
    dsf_lock_pin *c = dsf_xcalloc(n ? n : 1, sizeof *c);
    for (size_t i = 0; i < n; i++) {
        c[i].key = dsf_xstrdup(p[i].key);
        c[i].value = dsf_xstrdup(p[i].value);
    }
    return c;
}

void dsf_lock_free(dsf_lock *lock)
{
    for (size_t i = 0; i < lock->n_repos; i++)
        free_repo(&lock->repos[i]);
    free(lock->repos);
    free(lock->path);
    for (size_t i = 0; i < lock->n_touched; i++)
        free(lock->touched[i]);
    free(lock->touched);
    memset(lock, 0, sizeof *lock);
}

static int bad(const dsf_jsrc *src, const cJSON *node, dsf_diags *d,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int bad(const dsf_jsrc *src, const cJSON *node, dsf_diags *d,
               const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dsf_jpos pos = {0, 0};
    if (node)
        dsf_jsrc_pos(src, node, &pos);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, dsf_jsrc_file(src), pos.line,
                               pos.col, "%s", msg);
    const char *line;
    size_t len;
    if (pos.line && dsf_jsrc_line(src, pos.line, &line, &len))
        dsf_diag_set_excerpt(g, line, len);
    dsf_diag_set_hint(g, "fix or delete the lock file, then run 'dsforge "
                         "repo update'");
    return DSF_EINPUT;
}

static bool is_hex64(const char *s)
{
    if (strlen(s) != 64)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

static int read_pins(dsf_lock_pin **out, size_t *n, const cJSON *obj,
                     bool hashes, const dsf_jsrc *src, dsf_diags *d)
{
    *out = NULL;
    *n = 0;
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return bad(src, obj, d, "expected an object");
    size_t cap = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, obj) {
        if (!cJSON_IsString(e) || (hashes && !is_hex64(e->valuestring)))
            return bad(src, e, d, "\"%s\" must be %s", e->string,
                       hashes ? "a lower-case sha256" : "a string");
        if (hashes && !dsf_index_path_ok(e->string))
            return bad(src, e, d, "invalid path \"%s\"", e->string);
        dsf_xgrow((void **)out, &cap, *n + 1, sizeof **out);
        (*out)[*n].key = dsf_xstrdup(e->string);
        (*out)[(*n)++].value = dsf_xstrdup(e->valuestring);
    }
    return 0;
}

static int read_repo(dsf_lock *lock, const cJSON *e, const dsf_jsrc *src,
                     dsf_diags *d)
{
    if (!cJSON_IsObject(e) || !dsf_index_name_ok(e->string))
        return bad(src, e, d, "invalid repository entry \"%s\"", e->string);
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(e, "url");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(e, "index_sha256");
    if (!cJSON_IsString(url))
        return bad(src, url ? url : e, d, "\"url\" must be a string");
    if (!cJSON_IsString(sha) || !is_hex64(sha->valuestring))
        return bad(src, sha ? sha : e, d,
                   "\"index_sha256\" must be a lower-case sha256");
    dsf_xgrow((void **)&lock->repos, &lock->cap, lock->n_repos + 1,
              sizeof *lock->repos);
    dsf_lock_repo *r = &lock->repos[lock->n_repos++];
    memset(r, 0, sizeof *r);
    r->name = dsf_xstrdup(e->string);
    r->url = dsf_xstrdup(url->valuestring);
    snprintf(r->index_sha256, sizeof r->index_sha256, "%s",
             sha->valuestring);
    const cJSON *serial = cJSON_GetObjectItemCaseSensitive(e, "serial");
    if (serial && (!cJSON_IsNumber(serial) ||
                   !dsf_json_is_integer_literal(serial) ||
                   serial->valuedouble < 0 ||
                   serial->valuedouble > 9007199254740992.0))
        return bad(src, serial, d, "\"serial\" must be an integer from 0 "
                   "to 2^53");
    if (serial)
        r->serial = (long long)serial->valuedouble;
    const cJSON *iname = cJSON_GetObjectItemCaseSensitive(e, "index_name");
    if (iname && (!cJSON_IsString(iname) ||
                  !dsf_index_name_ok(iname->valuestring)))
        return bad(src, iname, d, "\"index_name\" must be a repository "
                   "name");
    if (iname)
        r->index_name = dsf_xstrdup(iname->valuestring);
    int rc = read_pins(&r->files, &r->n_files,
                       cJSON_GetObjectItemCaseSensitive(e, "files"), true,
                       src, d);
    if (!rc)
        rc = read_pins(&r->versions, &r->n_versions,
                       cJSON_GetObjectItemCaseSensitive(e, "versions"),
                       false, src, d);
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(e, "selections");
    r->releases = sel != NULL;
    if (!rc)
        rc = read_pins(&r->selections, &r->n_selections, sel, false, src, d);
    for (size_t i = 0; !rc && i < r->n_selections; i++) {
        char *prof;
        dsf_semreq req;
        bool has;
        if (!dsf_lock_selection_parse(r->selections[i].key, &prof, &req,
                                      &has))
            rc = bad(src, sel, d, "invalid selection \"%s\" (expected "
                     "\"repository\", \"profile NAME\" or \"profile "
                     "NAME@REQ\")", r->selections[i].key);
        else if (!dsf_semver_valid(r->selections[i].value))
            rc = bad(src, sel, d, "selection \"%s\": \"%s\" is not a "
                     "release version", r->selections[i].key,
                     r->selections[i].value);
        else
            free(prof);
    }
    return rc;
}

char *dsf_lock_selection_key(const char *profile, const char *req)
{
    if (!profile)
        return dsf_xstrdup("repository");
    return dsf_xasprintf("profile %s%s%s", profile, req ? "@" : "",
                         req ? req : "");
}

bool dsf_lock_selection_parse(const char *key, char **profile,
                              dsf_semreq *req, bool *has_req)
{
    *profile = NULL;
    *has_req = false;
    memset(req, 0, sizeof *req);
    if (!strcmp(key, "repository"))
        return true;
    if (strncmp(key, "profile ", 8))
        return false;
    const char *name = key + 8, *at = strchr(name, '@');
    char *prof = dsf_xstrndup(name, at ? (size_t)(at - name) : strlen(name));
    size_t col;
    const char *why;
    if (!dsf_index_name_ok(prof) ||
        (at && !dsf_semreq_parse(req, at + 1, &col, &why))) {
        free(prof);
        return false;
    }
    *has_req = at != NULL;
    *profile = prof;
    return true;
}

const char *dsf_lock_selected(const dsf_lock_repo *r, const char *key)
{
    for (size_t i = 0; i < r->n_selections; i++)
        if (!strcmp(r->selections[i].key, key))
            return r->selections[i].value;
    return NULL;
}

int dsf_lock_load(dsf_lock *lock, const char *path, dsf_diags *d)
{
    memset(lock, 0, sizeof *lock);
    if (!dsf_is_file(path)) {
        lock->path = dsf_xstrdup(path);
        return 0;
    }
    char *text;
    size_t len;
    int rc = dsf_read_file(&text, &len, path, DSF_JSON_MAX_FILE, d);
    if (rc) {
        lock->path = dsf_xstrdup(path);
        return rc;
    }
    rc = dsf_lock_parse(lock, path, text, len, d);
    free(text);
    return rc;
}

int dsf_lock_parse(dsf_lock *lock, const char *path, const char *text,
                   size_t len, dsf_diags *d)
{
    memset(lock, 0, sizeof *lock);
    lock->path = dsf_xstrdup(path);
    cJSON *doc;
    dsf_jsrc *src;
    int rc = dsf_json_parse(&doc, &src, path, text, len, d);
    if (rc)
        return rc;
    size_t ndup;
    const dsf_jdup *dups = dsf_jsrc_duplicates(src, &ndup);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(doc, "lock_format");
    const cJSON *repos = cJSON_GetObjectItemCaseSensitive(doc,
                                                          "repositories");
    if (ndup)
        rc = dsf_diag_error(d, DSF_EINPUT, path, dups[0].again.line,
                            dups[0].again.col, "duplicate key \"%s\"",
                            dups[0].path);
    else if (!cJSON_IsObject(doc))
        rc = bad(src, doc, d, "a lock file must be a JSON object");
    else if (!cJSON_IsNumber(fmt) || fmt->valuedouble != DSF_LOCK_FORMAT)
        rc = bad(src, fmt ? fmt : doc, d,
                 "\"lock_format\" must be %d", DSF_LOCK_FORMAT);
    else if (!cJSON_IsObject(repos))
        rc = bad(src, repos ? repos : doc, d,
                 "\"repositories\" must be an object");
    else {
        const cJSON *e;
        cJSON_ArrayForEach(e, repos) {
            if ((rc = read_repo(lock, e, src, d)) != 0)
                break;
        }
    }
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    if (!rc && lock->n_repos)
        qsort(lock->repos, lock->n_repos, sizeof *lock->repos, cmp_repo);
    return rc;
}

static cJSON *pins_json(const dsf_lock_pin *p, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++)
        cJSON_AddStringToObject(o, p[i].key, p[i].value);
    return o;
}

/* Replaces (or removes) repository name in dst by src's entry. */
static void merge_repo(dsf_lock *dst, const dsf_lock *src, const char *name)
{
    dsf_lock_remove(dst, name);
    const dsf_lock_repo *r = dsf_lock_find(src, name);
    if (!r)
        return;
    dsf_xgrow((void **)&dst->repos, &dst->cap, dst->n_repos + 1,
              sizeof *dst->repos);
    dsf_lock_repo *c = &dst->repos[dst->n_repos++];
    memset(c, 0, sizeof *c);
    c->name = dsf_xstrdup(r->name);
    c->url = dsf_xstrdup(r->url);
    memcpy(c->index_sha256, r->index_sha256, sizeof c->index_sha256);
    c->serial = r->serial;
    c->index_name = r->index_name ? dsf_xstrdup(r->index_name) : NULL;
    c->files = copy_pins(r->files, r->n_files);
    c->n_files = r->n_files;
    c->versions = copy_pins(r->versions, r->n_versions);
    c->n_versions = r->n_versions;
    c->releases = r->releases;
    c->selections = copy_pins(r->selections, r->n_selections);
    c->n_selections = r->n_selections;
}

static int cmp_repo(const void *a, const void *b)
{
    return strcmp(((const dsf_lock_repo *)a)->name,
                  ((const dsf_lock_repo *)b)->name);
}

static int write_lock(dsf_lock *lock, dsf_diags *d);

int dsf_lock_save(dsf_lock *lock, dsf_diags *d)
{
    if (!lock->changed)
        return 0;
    /* Serialise writers in this project: lock the lock file's directory
    ** (the file itself is replaced by a rename, so it cannot carry the
    ** lock), read what is there now and apply only our own changes. */
    char *dir = dsf_path_dirname(lock->path);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (dfd >= 0)
        while (flock(dfd, LOCK_EX) != 0 && errno == EINTR)
            ;
    dsf_lock now;
    int rc = dsf_lock_load(&now, lock->path, d);
    if (!rc) {
        for (size_t i = 0; i < lock->n_touched; i++)
            merge_repo(&now, lock, lock->touched[i]);
        if (now.n_repos)
            qsort(now.repos, now.n_repos, sizeof *now.repos, cmp_repo);
        now.changed = true;
        rc = write_lock(&now, d);
    }
    dsf_lock_free(&now);
    if (dfd >= 0)
        close(dfd); /* releases the flock */
    if (!rc)
        lock->changed = false;
    return rc;
}

char *dsf_lock_text(const dsf_lock *lock)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "lock_format", DSF_LOCK_FORMAT);
    cJSON *repos = cJSON_AddObjectToObject(doc, "repositories");
    for (size_t i = 0; i < lock->n_repos; i++) {
        const dsf_lock_repo *r = &lock->repos[i];
        cJSON *o = cJSON_AddObjectToObject(repos, r->name);
        cJSON_AddStringToObject(o, "url", r->url);
        cJSON_AddStringToObject(o, "index_sha256", r->index_sha256);
        if (r->serial > 0)
            cJSON_AddNumberToObject(o, "serial", (double)r->serial);
        if (r->index_name)
            cJSON_AddStringToObject(o, "index_name", r->index_name);
        cJSON_AddItemToObject(o, "files", pins_json(r->files, r->n_files));
        if (r->releases)
            cJSON_AddItemToObject(o, "selections",
                                  pins_json(r->selections, r->n_selections));
        else
            cJSON_AddItemToObject(o, "versions",
                                  pins_json(r->versions, r->n_versions));
    }
    char *text = dsf_json_print(doc, true);
    cJSON_Delete(doc);
    return text;
}

static int write_lock(dsf_lock *lock, dsf_diags *d)
{
    char *text = dsf_lock_text(lock);
    int rc = dsf_write_atomic(lock->path, text, strlen(text), d);
    free(text);
    return rc;
}

const dsf_lock_repo *dsf_lock_find(const dsf_lock *lock, const char *name)
{
    for (size_t i = 0; i < lock->n_repos; i++)
        if (!strcmp(lock->repos[i].name, name))
            return &lock->repos[i];
    return NULL;
}

bool dsf_lock_remove(dsf_lock *lock, const char *name)
{
    for (size_t i = 0; i < lock->n_repos; i++) {
        if (strcmp(lock->repos[i].name, name))
            continue;
        touch(lock, name); /* before name (maybe the entry's) is freed */
        free_repo(&lock->repos[i]);
        memmove(&lock->repos[i], &lock->repos[i + 1],
                (lock->n_repos - i - 1) * sizeof *lock->repos);
        lock->n_repos--;
        lock->changed = true;
        return true;
    }
    return false;
}

void dsf_lock_set(dsf_lock *lock, const char *name, const char *url,
                  const char *index_sha256, const dsf_index *ix)
{
    dsf_lock_remove(lock, name);
    dsf_xgrow((void **)&lock->repos, &lock->cap, lock->n_repos + 1,
              sizeof *lock->repos);
    dsf_lock_repo *r = &lock->repos[lock->n_repos++];
    memset(r, 0, sizeof *r);
    r->name = dsf_xstrdup(name);
    r->url = dsf_xstrdup(url);
    snprintf(r->index_sha256, sizeof r->index_sha256, "%s", index_sha256);
    r->serial = ix->serial;
    r->index_name = dsf_xstrdup(ix->name);
    r->releases = ix->format == 2;
    r->selections = dsf_xcalloc(1, sizeof *r->selections);
    r->files = dsf_xcalloc(ix->n_files ? ix->n_files : 1, sizeof *r->files);
    for (size_t i = 0; i < ix->n_files; i++) {
        r->files[i].key = dsf_xstrdup(ix->files[i].local);
        r->files[i].value = dsf_xstrdup(ix->files[i].sha256);
    }
    r->n_files = ix->n_files;
    size_t nv = ix->n_profiles + ix->n_plugins;
    r->versions = dsf_xcalloc(nv ? nv : 1, sizeof *r->versions);
    for (size_t i = 0; i < ix->n_profiles; i++) {
        r->versions[i].key = dsf_xasprintf("profile %s",
                                           ix->profiles[i].name);
        r->versions[i].value = dsf_xstrdup(ix->profiles[i].version);
    }
    for (size_t i = 0; i < ix->n_plugins; i++) {
        dsf_lock_pin *p = &r->versions[ix->n_profiles + i];
        p->key = dsf_xasprintf("plugin %s", ix->plugins[i].name);
        p->value = dsf_xstrdup(ix->plugins[i].version);
    }
    r->n_versions = nv;
    lock->changed = true;
    touch(lock, name);
}

/* The files of every release selected by sel[0..nsel) in ix, keyed
** RELEASE/LOCAL. false (with what was found) when ix lacks one. */
static bool release_files(dsf_lock_pin **out, size_t *n,
                          const dsf_lock_pin *sel, size_t nsel,
                          const dsf_index *ix)
{
    size_t cap = 0;
    bool ok = true;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < nsel; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen = seen || !strcmp(sel[j].value, sel[i].value);
        if (seen)
            continue;
        const dsf_index_release *rel =
            dsf_index_release_find(ix, sel[i].value);
        if (!rel) {
            ok = false;
            continue;
        }
        for (size_t k = 0; k < rel->ix->n_files; k++) {
            dsf_xgrow((void **)out, &cap, *n + 1, sizeof **out);
            (*out)[*n].key = dsf_xasprintf("%s/%s", rel->version,
                                           rel->ix->files[k].local);
            (*out)[(*n)++].value = dsf_xstrdup(rel->ix->files[k].sha256);
        }
    }
    return ok;
}

void dsf_lock_select(dsf_lock *lock, const char *name, const dsf_index *ix,
                     const char *key, const char *version)
{
    dsf_lock_repo *r = NULL;
    for (size_t i = 0; i < lock->n_repos; i++)
        if (!strcmp(lock->repos[i].name, name))
            r = &lock->repos[i];
    if (!r)
        return;
    size_t i = 0;
    while (i < r->n_selections && strcmp(r->selections[i].key, key))
        i++;
    if (i < r->n_selections) {
        free(r->selections[i].value);
    } else {
        r->selections = dsf_xrealloc(r->selections, (r->n_selections + 1) *
                                                        sizeof *r->selections);
        r->selections[r->n_selections++].key = dsf_xstrdup(key);
    }
    r->selections[i].value = dsf_xstrdup(version);
    free_pins(r->files, r->n_files);
    release_files(&r->files, &r->n_files, r->selections, r->n_selections,
                  ix);
    if (!r->files)
        r->files = dsf_xcalloc(1, sizeof *r->files);
    r->releases = true;
    lock->changed = true;
    touch(lock, name);
}

static const char *pin(const dsf_lock_pin *p, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].key, key))
            return p[i].value;
    return NULL;
}

static const char *ix_file(const dsf_index *ix, const char *local)
{
    for (size_t i = 0; i < ix->n_files; i++)
        if (!strcmp(ix->files[i].local, local))
            return ix->files[i].sha256;
    return NULL;
}

static void note(dsf_buf *out, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(dsf_buf *out, size_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (*n < 20)
        dsf_buf_printf(out, "\n  %s", msg);
    else if (*n == 20)
        dsf_buf_puts(out, "\n  ...");
    (*n)++;
}

/* Format 2 (either side): the selected releases' files, then where each
** selection would move (the newest matching release). */
static size_t diff_releases(dsf_buf *out, const dsf_lock_repo *r,
                            const dsf_index *ix)
{
    size_t n = 0;
    if (!r->releases || ix->format != 2) {
        note(out, &n, "index format %d -> %d", r->releases ? 2 : 1,
             ix->format);
        return n;
    }
    for (size_t i = 0; i < r->n_selections; i++) {
        const char *v = r->selections[i].value;
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen = seen || !strcmp(r->selections[j].value, v);
        if (seen)
            continue;
        const dsf_index_release *rel = dsf_index_release_find(ix, v);
        if (!rel) {
            note(out, &n, "release %s: removed", v);
            continue;
        }
        size_t lv = strlen(v);
        for (size_t k = 0; k < rel->ix->n_files; k++) {
            char *key = dsf_xasprintf("%s/%s", v, rel->ix->files[k].local);
            const char *old = pin(r->files, r->n_files, key);
            if (!old)
                note(out, &n, "%s: added (release %s was republished)", key,
                     v);
            else if (strcmp(old, rel->ix->files[k].sha256))
                note(out, &n, "%s: content changed (sha256 %.12s... -> "
                     "%.12s...; release %s was republished)", key, old,
                     rel->ix->files[k].sha256, v);
            free(key);
        }
        for (size_t k = 0; k < r->n_files; k++)
            if (!strncmp(r->files[k].key, v, lv) &&
                r->files[k].key[lv] == '/' &&
                !ix_file(rel->ix, r->files[k].key + lv + 1))
                note(out, &n, "%s: removed (release %s was republished)",
                     r->files[k].key, v);
    }
    for (size_t i = 0; i < r->n_selections; i++) {
        char *prof;
        dsf_semreq req;
        bool has;
        if (!dsf_lock_selection_parse(r->selections[i].key, &prof, &req,
                                      &has))
            continue;
        const dsf_index_release *to = dsf_index_newest(ix, prof,
                                                       has ? &req : NULL);
        if (to && strcmp(to->version, r->selections[i].value))
            note(out, &n, "%s: %s -> %s", r->selections[i].key,
                 r->selections[i].value, to->version);
        free(prof);
    }
    /* releases newer than every selected one (none of the selections
    ** moves to them: a new major version, say) */
    const char *top = NULL;
    for (size_t i = 0; i < r->n_selections; i++)
        if (dsf_semver_valid(r->selections[i].value) &&
            (!top || dsf_semver_cmp(r->selections[i].value, top) > 0))
            top = r->selections[i].value;
    for (size_t i = 0; top && i < ix->n_releases; i++)
        if (dsf_semver_cmp(ix->releases[i].version, top) > 0)
            note(out, &n, "release %s: published", ix->releases[i].version);
    return n;
}

size_t dsf_lock_diff(dsf_buf *out, const dsf_lock_repo *r,
                     const dsf_index *ix)
{
    if (r->releases || ix->format == 2)
        return diff_releases(out, r, ix);
    size_t n = 0;
    for (size_t i = 0; i < ix->n_files; i++) {
        const dsf_index_file *f = &ix->files[i];
        const char *old = pin(r->files, r->n_files, f->local);
        if (!old)
            note(out, &n, "%s: added", f->local);
        else if (strcmp(old, f->sha256))
            note(out, &n, "%s: content changed (sha256 %.12s... -> "
                 "%.12s...)", f->local, old, f->sha256);
    }
    for (size_t i = 0; i < r->n_files; i++)
        if (!ix_file(ix, r->files[i].key))
            note(out, &n, "%s: removed", r->files[i].key);
    for (size_t k = 0; k < 2; k++) {
        const dsf_index_entry *es = k ? ix->plugins : ix->profiles;
        size_t ne = k ? ix->n_plugins : ix->n_profiles;
        for (size_t i = 0; i < ne; i++) {
            char *key = dsf_xasprintf("%s %s", k ? "plugin" : "profile",
                                      es[i].name);
            const char *old = pin(r->versions, r->n_versions, key);
            if (old && strcmp(old, es[i].version))
                note(out, &n, "%s: version %s -> %s", key, old,
                     es[i].version);
            free(key);
        }
    }
    return n;
}

bool dsf_lock_matches(const dsf_lock_repo *r, const dsf_index *ix)
{
    if (r->releases != (ix->format == 2))
        return false;
    if (r->releases) {
        dsf_lock_pin *want;
        size_t n;
        bool ok = release_files(&want, &n, r->selections, r->n_selections,
                                ix) && n == r->n_files;
        for (size_t i = 0; ok && i < n; i++) {
            const char *old = pin(r->files, r->n_files, want[i].key);
            ok = old && !strcmp(old, want[i].value);
        }
        free_pins(want, n);
        return ok;
    }
    if (r->n_files != ix->n_files)
        return false;
    for (size_t i = 0; i < ix->n_files; i++) {
        const char *old = pin(r->files, r->n_files, ix->files[i].local);
        if (!old || strcmp(old, ix->files[i].sha256))
            return false;
    }
    return true;
}
