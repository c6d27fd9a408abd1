/* cache.c -- see cache.h. */
#define _XOPEN_SOURCE 700
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/paths.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

#define META_MAX (64u << 10)
#define BLOB_MAX (256u << 20)

int dsf_cache_open(dsf_cache *c, dsf_diags *d)
{
    c->dirty = NULL;
    c->n_dirty = 0;
    c->root = dsf_cache_home();
    if (!c->root)
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "no cache directory: set XDG_CACHE_HOME or "
                              "HOME");
    int rc = dsf_mkdir_p(c->root, NULL, d);
    if (rc) {
        free(c->root);
        c->root = NULL;
    }
    return rc;
}

void dsf_cache_close(dsf_cache *c)
{
    dsf_cache_sync(c);
    free(c->root);
    c->root = NULL;
}

char *dsf_cache_blob_path(const dsf_cache *c, const char *sha256)
{
    return dsf_xasprintf("%s/blobs/sha256/%s", c->root, sha256);
}

/* Where blob sha256 is: its path (caller frees), or NULL. Caches written
** before blobs shared one directory keep them under a two-hex-digit
** directory (blobs/sha256/ab/abcd...): they are read there, never
** written, so an upgrade neither refetches nor breaks --offline. */
static char *find_blob(const dsf_cache *c, const char *sha256)
{
    char *path = dsf_cache_blob_path(c, sha256);
    if (dsf_is_file(path))
        return path;
    free(path);
    path = dsf_xasprintf("%s/blobs/sha256/%.2s/%s", c->root, sha256, sha256);
    if (dsf_is_file(path))
        return path;
    free(path);
    return NULL;
}

bool dsf_cache_has_blob(const dsf_cache *c, const char *sha256)
{
    char *path = find_blob(c, sha256);
    bool found = path != NULL;
    free(path);
    return found;
}

int dsf_cache_get_blob(char **data, size_t *len, const dsf_cache *c,
                       const char *sha256, dsf_diags *d)
{
    *data = NULL;
    *len = 0;
    char *path = find_blob(c, sha256);
    if (!path)
        return 1;
    dsf_diags quiet = DSF_DIAGS_INIT;
    int rc = dsf_read_file(data, len, path, BLOB_MAX, &quiet);
    dsf_diags_free(&quiet);
    if (rc) {
        free(path);
        return 1;
    }
    char hex[65];
    dsf_sha256_hex(hex, *data, *len);
    if (strcmp(hex, sha256)) {
        dsf_diag_add(d, DSF_WARNING, path, 0, 0,
                     "cache entry does not match its hash (sha256 %s); "
                     "removed it", hex);
        unlink(path);
        free(*data);
        *data = NULL;
        *len = 0;
        free(path);
        return 1;
    }
    free(path);
    return 0;
}

static bool is_pending(const dsf_cache *c, const char *dir);

/* mkdir dir, whose parent usually exists: nothing for a directory this
** run already wrote into (its files are waiting for dsf_cache_sync), else
** one mkdir, and dsf_mkdir_p's walk only when a parent is missing. */
static int make_dir(const dsf_cache *c, const char *dir, dsf_diags *d)
{
    if (is_pending(c, dir))
        return 0;
    if (mkdir(dir, 0755) == 0 || (errno == EEXIST && dsf_is_dir(dir)))
        return 0;
    return dsf_mkdir_p(dir, NULL, d);
}

/* Flushes directory path (its entries: the names renamed into it). */
static void sync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

static bool is_pending(const dsf_cache *c, const char *dir)
{
    for (size_t i = 0; i < c->n_dirty; i++)
        if (!strcmp(c->dirty[i], dir))
            return true;
    return false;
}

/* Remembers dir to be flushed by dsf_cache_sync. */
static void pending(dsf_cache *c, const char *dir)
{
    if (is_pending(c, dir))
        return;
    c->dirty = dsf_xrealloc(c->dirty, (c->n_dirty + 1) * sizeof *c->dirty);
    c->dirty[c->n_dirty++] = dsf_xstrdup(dir);
}

void dsf_cache_sync(dsf_cache *c)
{
    for (size_t i = 0; i < c->n_dirty; i++) {
        sync_dir(c->dirty[i]);
        free(c->dirty[i]);
    }
    free(c->dirty);
    c->dirty = NULL;
    c->n_dirty = 0;
}

int dsf_cache_put_blob(dsf_cache *c, const char *sha256, const char *data,
                       size_t len, dsf_diags *d)
{
    char hex[65];
    dsf_sha256_hex(hex, data, len);
    if (strcmp(hex, sha256))
        return dsf_diag_error(d, DSF_ENET, NULL, 0, 0,
                              "content hashes to sha256 %s, expected %s",
                              hex, sha256);
    char *path = dsf_cache_blob_path(c, sha256);
    char *dir = dsf_path_dirname(path);
    int rc = 0;
    if (!dsf_cache_has_blob(c, sha256)) {
        /* No fsync per file: a blob is re-hashed whenever it is read, so
        ** one damaged by a crash is deleted and fetched again. All blobs
        ** share one directory, flushed once by dsf_cache_sync: a fetch of
        ** N files costs one directory flush, not one per hash prefix. */
        char *tmp;
        rc = make_dir(c, dir, d);
        if (!rc)
            rc = dsf_write_temp(&tmp, path, data, len, false, d);
        if (!rc) {
            if (rename(tmp, path) != 0) {
                unlink(tmp);
                rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                    "cannot write: %s", strerror(errno));
            }
            free(tmp);
        }
        if (!rc)
            pending(c, dir);
    }
    free(dir);
    free(path);
    return rc;
}

static char *meta_path(const dsf_cache *c, const char *url)
{
    char hex[65];
    dsf_sha256_hex(hex, url, strlen(url));
    return dsf_xasprintf("%s/repos/%.24s/meta.json", c->root, hex);
}

static char *opt_string(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? dsf_xstrdup(v->valuestring) : NULL;
}

void dsf_cache_meta_load(dsf_cache_meta *m, const dsf_cache *c,
                         const char *url)
{
    memset(m, 0, sizeof *m);
    char *path = meta_path(c, url);
    char *text;
    size_t len;
    dsf_diags quiet = DSF_DIAGS_INIT;
    if (dsf_read_file(&text, &len, path, META_MAX, &quiet) == 0) {
        cJSON *doc = dsf_json_too_deep(text, len)
                         ? NULL
                         : cJSON_ParseWithLength(text, len);
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(doc, "url");
        const cJSON *sha = cJSON_GetObjectItemCaseSensitive(doc,
                                                            "index_sha256");
        /* The URL is stored too so a hash collision of the key (or a
        ** hand-copied file) cannot give another repository's validators. */
        if (cJSON_IsString(u) && !strcmp(u->valuestring, url) &&
            cJSON_IsString(sha) && strlen(sha->valuestring) == 64) {
            m->etag = opt_string(doc, "etag");
            m->last_modified = opt_string(doc, "last_modified");
            snprintf(m->index_sha256, sizeof m->index_sha256, "%s",
                     sha->valuestring);
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc,
                                                              "checked");
            if (cJSON_IsNumber(t))
                m->checked = t->valuedouble;
        }
        cJSON_Delete(doc);
        free(text);
    }
    dsf_diags_free(&quiet);
    free(path);
}

int dsf_cache_meta_save(const dsf_cache *c, const char *url,
                        const dsf_cache_meta *m, dsf_diags *d)
{
    char *path = meta_path(c, url);
    char *dir = dsf_path_dirname(path);
    int rc = dsf_mkdir_p(dir, NULL, d);
    if (!rc) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "url", url);
        if (m->etag)
            cJSON_AddStringToObject(doc, "etag", m->etag);
        if (m->last_modified)
            cJSON_AddStringToObject(doc, "last_modified", m->last_modified);
        cJSON_AddStringToObject(doc, "index_sha256", m->index_sha256);
        if (m->checked > 0)
            cJSON_AddNumberToObject(doc, "checked", m->checked);
        char *text = dsf_json_print(doc, true);
        rc = dsf_write_atomic(path, text, strlen(text), d);
        free(text);
        cJSON_Delete(doc);
    }
    free(dir);
    free(path);
    return rc;
}

void dsf_cache_meta_free(dsf_cache_meta *m)
{
    free(m->etag);
    free(m->last_modified);
    m->etag = m->last_modified = NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void dsf_cache_rmtree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes data to the new file path (in a private temporary tree), mode
** 0444: an edit by hand fails instead of silently changing what later
** runs use (and the tree is verified when opened anyway). */
static int write_new(const char *path, const char *data, size_t len,
                     dsf_diags *d)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    size_t off = 0;
    while (fd >= 0 && off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    int e = errno;
    if (fd < 0 || off < len || close(fd) != 0)
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot write: %s",
                              strerror(fd < 0 || off < len ? e : errno));
    return 0;
}

/* Writes every file of ix under tmp, from verified blobs. Directories
** that were made are added to dirs (for one flush each). A blob missing
** (or found damaged, and so removed) does not stop the walk: every
** missing one is known, and removed, when it returns DSF_ENET, so one
** fetch brings them all back. */
static int fill_tree(const char *tmp, dsf_cache *c, const dsf_index *ix,
                     dsf_diags *d)
{
    char *made = NULL; /* the last directory made (files are sorted) */
    int rc = 0;
    size_t missing = 0;
    const dsf_index_file *first = NULL;
    for (size_t i = 0; i < ix->n_files; i++) {
        const dsf_index_file *f = &ix->files[i];
        char *data;
        size_t len;
        rc = dsf_cache_get_blob(&data, &len, c, f->sha256, d);
        if (rc == 1 || (rc == 0 && missing)) {
            if (rc == 1 && !missing++)
                first = f;
            if (rc == 0)
                free(data);
            rc = 0;
            continue;
        }
        if (rc)
            break;
        char *path = dsf_path_join(tmp, f->local);
        char *dir = dsf_path_dirname(path);
        if (!made || strcmp(made, dir)) {
            rc = make_dir(c, dir, d);
            /* dir and its parents inside tmp get new entries */
            char *p = dsf_xstrdup(dir);
            while (strlen(p) > strlen(tmp)) {
                pending(c, p);
                char *up = dsf_path_dirname(p);
                free(p);
                p = up;
            }
            free(p);
            free(made);
            made = dir;
        } else {
            free(dir);
        }
        if (!rc)
            rc = write_new(path, data, len, d);
        free(path);
        free(data);
        if (rc)
            break;
    }
    free(made);
    if (!rc && missing) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "%s (sha256 %s) is not in the cache%s",
                                   first->remote, first->sha256,
                                   missing > 1 ? " (nor are other files of "
                                                 "the repository)" : "");
        dsf_diag_set_hint(g, "run 'dsforge repo update' while online");
        rc = DSF_ENET;
    }
    if (rc)
        return rc;
    /* No fsync per file (the tree is verified whenever it is opened, so
    ** one damaged by a crash is rebuilt): each directory once, before the
    ** rename makes the tree visible. */
    pending(c, tmp);
    dsf_cache_sync(c);
    return 0;
}

static size_t n_tree_entries;

static int count_entry(const char *path, const struct stat *st, int flag,
                       struct FTW *ftw)
{
    (void)path;
    (void)st;
    (void)ftw;
    if (flag != FTW_D && flag != FTW_DP)
        n_tree_entries++;
    return 0;
}

/* What is wrong with tree dir compared with ix (a file changed or
** missing, or one ix does not list), or NULL. Caller frees. */
static char *tree_damage(const char *dir, const dsf_index *ix)
{
    for (size_t i = 0; i < ix->n_files; i++) {
        char *path = dsf_path_join(dir, ix->files[i].local);
        char *data;
        size_t len;
        dsf_diags quiet = DSF_DIAGS_INIT;
        bool ok = dsf_read_file(&data, &len, path, BLOB_MAX, &quiet) == 0;
        dsf_diags_free(&quiet);
        free(path);
        if (ok) {
            char hex[65];
            dsf_sha256_hex(hex, data, len);
            free(data);
            ok = !strcmp(hex, ix->files[i].sha256);
        }
        if (!ok)
            return dsf_xasprintf("cached file %s does not match the "
                                 "lock's sha256", ix->files[i].local);
    }
    n_tree_entries = 0;
    if (nftw(dir, count_entry, 16, FTW_PHYS) != 0 ||
        n_tree_entries != ix->n_files)
        return dsf_xstrdup("the cached tree has a file the lock does not "
                           "list");
    return NULL;
}

int dsf_cache_tree(char **dir_out, dsf_cache *c, const dsf_index *ix,
                   const char *index_sha256, dsf_diags *d)
{
    *dir_out = NULL;
    char *trees = dsf_path_join(c->root, "trees");
    char *final = dsf_xasprintf("%s/%s", trees, index_sha256);
    if (dsf_is_dir(final)) {
        char *bad = tree_damage(final, ix);
        if (!bad) {
            free(trees);
            *dir_out = final;
            return 0;
        }
        /* Edited in the cache: never used. Move it aside atomically (a
        ** concurrent reader sees the old or no tree) and rebuild it from
        ** blobs, which are verified when read. */
        dsf_diag *g = dsf_diag_add(d, DSF_WARNING, final, 0, 0,
                                   "%s; rebuilding the tree from verified "
                                   "copies", bad);
        free(bad);
        dsf_diag_set_rule(g, "repo-cache");
        char *aside = dsf_xasprintf("%s/.tmp-XXXXXX", trees);
        if (mkdtemp(aside) && rename(final, aside) == 0)
            dsf_cache_rmtree(aside);
        else if (dsf_is_dir(aside))
            rmdir(aside);
        free(aside);
        if (dsf_is_dir(final)) {
            int rc = dsf_diag_error(d, DSF_ENET, final, 0, 0,
                                    "cannot remove the damaged cached tree "
                                    "(remove it by hand)");
            free(final);
            free(trees);
            return rc;
        }
    }
    int rc = dsf_mkdir_p(trees, NULL, d);
    char *tmp = dsf_xasprintf("%s/.tmp-XXXXXX", trees);
    if (!rc && !mkdtemp(tmp))
        rc = dsf_diag_error(d, DSF_EINPUT, trees, 0, 0,
                            "cannot create a temporary directory: %s",
                            strerror(errno));
    else if (!rc) {
        chmod(tmp, 0755);
        rc = fill_tree(tmp, c, ix, d);
        /* rename() of a directory is atomic; when another process got
        ** there first the target exists (ENOTEMPTY/EEXIST) and holds the
        ** same verified content, so ours is thrown away. */
        if (!rc && rename(tmp, final) != 0) {
            if (!dsf_is_dir(final))
                rc = dsf_diag_error(d, DSF_EINPUT, final, 0, 0,
                                    "cannot create: %s", strerror(errno));
        } else if (!rc) {
            sync_dir(trees);
        }
        if (dsf_is_dir(tmp))
            dsf_cache_rmtree(tmp);
    }
    free(tmp);
    free(trees);
    if (rc) {
        free(final);
        return rc;
    }
    *dir_out = final;
    return 0;
}
