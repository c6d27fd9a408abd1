/* repo_index.c -- `dsforge repo index DIR`: index.json for a directory. */
#define _XOPEN_SOURCE 700
#include "repo.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "fetch/index.h"
#include "fetch/semver.h"
#include "fetch/sign.h"
#include "json/jsonout.h"
#include "lua/host.h"
#include "lua/srccache.h"

#define FILE_MAX (16u << 20)

static int hash_file(char hex[65], const char *path, dsf_diags *d)
{
    char *data;
    size_t len;
    int rc = dsf_read_file(&data, &len, path, FILE_MAX, d);
    if (rc)
        return rc;
    dsf_sha256_hex(hex, data, len);
    free(data);
    return 0;
}

/* A symbolic link below DIR is refused (DSF_EINPUT naming it): an index
** publishes only regular files that are inside the directory, never one
** a link reaches elsewhere (a secret key next to the tree, /etc/...). */
static int no_symlink(const char *path, dsf_diags *d)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return 0;
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, path, 0, 0,
                               "is a symbolic link: repo index publishes "
                               "only the regular files inside the "
                               "directory");
    dsf_diag_set_hint(g, "copy the file (or directory) in place of the "
                         "link");
    return DSF_EINPUT;
}

/* The `version` field of the table the profile at path returns, run in
** the sandbox; NULL when it has none. Caller frees. */
static int profile_version(char **out, const char *path, const char *dir,
                           dsf_diags *d)
{
    *out = NULL;
    dsf_srccache *sources = dsf_srccache_new();
    const char *mods[] = {dir};
    dsf_diags warnings = DSF_DIAGS_INIT;
    dsf_host_config cfg = {DSF_LIMITS_DEFAULT, mods, 1, sources, &warnings};
    dsf_host *h = NULL;
    int rc = dsf_host_new(&h, &cfg, d);
    if (!rc)
        rc = dsf_host_load_file(h, path, d);
    if (!rc)
        rc = dsf_host_call(h, 0, 1, path, d);
    if (!rc) {
        lua_State *L = dsf_host_state(h);
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_pushliteral(L, "version");
            if (lua_rawget(L, -2) == LUA_TSTRING)
                *out = dsf_xstrdup(lua_tostring(L, -1));
            lua_pop(L, 1);
        } else {
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "a profile must return a table");
        }
        lua_pop(L, 1);
    }
    dsf_host_free(h);
    dsf_srccache_free(sources);
    dsf_diags_free(&warnings);
    return rc;
}

static int add_profiles(dsf_index *ix, const char *dir,
                        const char *default_version, dsf_diags *d)
{
    char *pdir = dsf_path_join(dir, "profiles");
    char **names;
    size_t n;
    dsf_list_dir(&names, &n, pdir);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        size_t len = strlen(names[i]);
        if (len <= 4 || strcmp(names[i] + len - 4, ".lua"))
            continue;
        char *path = dsf_path_join(pdir, names[i]);
        char *name = dsf_xstrndup(names[i], len - 4);
        char hex[65];
        char *version = NULL;
        rc = no_symlink(path, d);
        bool regular = !rc && dsf_is_file(path);
        if (regular && !dsf_index_name_ok(name))
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "profile name '%s' is not a valid name "
                                "(letters, digits, '_', '-', '.')", name);
        else if (regular && !(rc = hash_file(hex, path, d)) &&
                 !(rc = profile_version(&version, path, pdir, d))) {
            char *rel = dsf_xasprintf("profiles/%s", names[i]);
            dsf_index_add_profile(ix, name, version ? version
                                                    : default_version,
                                  rel, hex);
            free(rel);
        }
        free(version);
        free(name);
        free(path);
    }
    dsf_free_strv(names, n);
    free(pdir);
    return rc;
}

typedef struct flist {
    char **names, **hashes;
    size_t n, cap, cap2;
} flist;

/* Collects the files below root/rel (hidden names skipped). */
static int walk(flist *f, const char *root, const char *rel, dsf_diags *d)
{
    char *here = rel[0] ? dsf_path_join(root, rel) : dsf_xstrdup(root);
    char **names;
    size_t n;
    dsf_list_dir(&names, &n, here);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (names[i][0] == '.')
            continue;
        char *r = rel[0] ? dsf_xasprintf("%s/%s", rel, names[i])
                         : dsf_xstrdup(names[i]);
        char *full = dsf_path_join(root, r);
        if ((rc = no_symlink(full, d)) != 0) {
            /* reported */
        } else if (dsf_is_dir(full)) {
            rc = walk(f, root, r, d);
        } else if (dsf_is_file(full)) {
            char hex[65];
            if (!dsf_index_path_ok(r))
                rc = dsf_diag_error(d, DSF_EINPUT, full, 0, 0,
                                    "file name has characters outside "
                                    "[A-Za-z0-9._-+~@/]");
            else if (!(rc = hash_file(hex, full, d))) {
                dsf_xgrow((void **)&f->names, &f->cap, f->n + 1,
                          sizeof *f->names);
                dsf_xgrow((void **)&f->hashes, &f->cap2, f->n + 1,
                          sizeof *f->hashes);
                f->names[f->n] = dsf_xstrdup(r);
                f->hashes[f->n++] = dsf_xstrdup(hex);
            }
        }
        free(full);
        free(r);
    }
    dsf_free_strv(names, n);
    free(here);
    return rc;
}

static char *read_version_file(const char *plugin_dir)
{
    char *path = dsf_path_join(plugin_dir, "VERSION");
    char *text = NULL;
    size_t len;
    dsf_diags quiet = DSF_DIAGS_INIT;
    if (dsf_is_file(path) &&
        dsf_read_file(&text, &len, path, 256, &quiet) == 0) {
        text[strcspn(text, "\r\n")] = '\0';
        if (!text[0]) {
            free(text);
            text = NULL;
        }
    }
    dsf_diags_free(&quiet);
    free(path);
    return text;
}

static int add_plugins(dsf_index *ix, const char *dir,
                       const char *default_version, dsf_diags *d)
{
    char *pdir = dsf_path_join(dir, "plugins");
    char **names;
    size_t n;
    dsf_list_dir(&names, &n, pdir);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        char *path = dsf_path_join(pdir, names[i]);
        if (names[i][0] != '.' && (rc = no_symlink(path, d)) != 0) {
            free(path);
            break;
        }
        if (!dsf_is_dir(path) || names[i][0] == '.') {
            free(path);
            continue;
        }
        if (!dsf_index_name_ok(names[i])) {
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "plugin name '%s' is not a valid name",
                                names[i]);
            free(path);
            break;
        }
        flist f = {NULL, NULL, 0, 0, 0};
        rc = walk(&f, path, "", d);
        if (!rc && f.n) {
            char *version = read_version_file(path);
            char *rel = dsf_xasprintf("plugins/%s", names[i]);
            dsf_index_add_plugin(ix, names[i],
                                 version ? version : default_version, rel,
                                 (const char *const *)f.names,
                                 (const char *const *)f.hashes, f.n);
            free(rel);
            free(version);
        }
        dsf_free_strv(f.names, f.n);
        dsf_free_strv(f.hashes, f.n);
        free(path);
    }
    dsf_free_strv(names, n);
    free(pdir);
    return rc;
}

/* ---- format 2: releases side by side ---------------------------------- */

/* The sha256 of the file at src in hex; with blobs, also copies the file
** to blobs/<sha256> (once: a blob already there must hold the same
** bytes). */
static int store_blob(char hex[65], const char *blobs, const char *src,
                      dsf_diags *d)
{
    char *data;
    size_t len;
    int rc = dsf_read_file(&data, &len, src, FILE_MAX, d);
    if (rc)
        return rc;
    dsf_sha256_hex(hex, data, len);
    char *path = blobs ? dsf_path_join(blobs, hex) : NULL;
    if (!path) {
        /* hashing only */
    } else if (dsf_is_file(path)) {
        char have[65];
        rc = hash_file(have, path, d);
        if (!rc && strcmp(have, hex))
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "does not hold the bytes its name says "
                                "(sha256 %s): remove it and index again",
                                have);
    } else {
        rc = dsf_write_atomic(path, data, len, d);
    }
    free(path);
    free(data);
    return rc;
}

/* The release in DIR's working tree (profiles/, plugins/) as a
** format-1-shaped index whose files are DIR/blobs/<sha256>; store: the
** files are copied there too (else only hashed). */
static int build_release(dsf_index **out, const char *dir, const char *name,
                         const char *version, bool store, dsf_diags *d)
{
    *out = NULL;
    char *blobs = store ? dsf_path_join(dir, DSF_INDEX_BLOBS) : NULL;
    int rc = blobs ? dsf_mkdir_p(blobs, NULL, d) : 0;
    dsf_index *sub = dsf_index_new(name);
    char *pdir = dsf_path_join(dir, "profiles");
    char **names;
    size_t n;
    dsf_list_dir(&names, &n, pdir);
    for (size_t i = 0; !rc && i < n; i++) {
        size_t len = strlen(names[i]);
        char *path = dsf_path_join(pdir, names[i]);
        char *prof = len > 4 ? dsf_xstrndup(names[i], len - 4) : NULL;
        char hex[65];
        if ((rc = no_symlink(path, d)) != 0) {
            /* reported */
        } else if (!prof || strcmp(names[i] + len - 4, ".lua") ||
                   !dsf_is_file(path)) {
            /* not a profile */
        } else if (!dsf_index_name_ok(prof)) {
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "profile name '%s' is not a valid name "
                                "(letters, digits, '_', '-', '.')", prof);
        } else if (!(rc = store_blob(hex, blobs, path, d))) {
            char *remote = dsf_xasprintf(DSF_INDEX_BLOBS "/%s", hex);
            dsf_index_add_profile(sub, prof, version, remote, hex);
            free(remote);
        }
        free(prof);
        free(path);
    }
    dsf_free_strv(names, n);
    free(pdir);
    pdir = dsf_path_join(dir, "plugins");
    dsf_list_dir(&names, &n, pdir);
    for (size_t i = 0; !rc && i < n; i++) {
        char *path = dsf_path_join(pdir, names[i]);
        if (names[i][0] != '.' && (rc = no_symlink(path, d)) != 0) {
            free(path);
            break;
        }
        if (!dsf_is_dir(path) || names[i][0] == '.') {
            free(path);
            continue;
        }
        if (!dsf_index_name_ok(names[i]))
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "plugin name '%s' is not a valid name",
                                names[i]);
        flist f = {NULL, NULL, 0, 0, 0};
        if (!rc)
            rc = walk(&f, path, "", d);
        for (size_t k = 0; !rc && k < f.n; k++) {
            char *src = dsf_path_join(path, f.names[k]);
            char hex[65];
            rc = store_blob(hex, blobs, src, d);
            free(src);
        }
        if (!rc && f.n)
            dsf_index_add_plugin_blobs(sub, names[i], version,
                                       (const char *const *)f.names,
                                       (const char *const *)f.hashes, f.n);
        dsf_free_strv(f.names, f.n);
        dsf_free_strv(f.hashes, f.n);
        free(path);
    }
    dsf_free_strv(names, n);
    free(pdir);
    if (!rc) {
        dsf_index_finish(sub);
        if (!sub->n_files)
            rc = dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                                "no profiles (profiles/NAME.lua) and no "
                                "plugins (plugins/NAME/...) found");
    }
    free(blobs);
    if (rc) {
        dsf_index_free(sub);
        return rc;
    }
    *out = sub;
    return 0;
}

/* The releases of the format-2 index old (may be NULL) plus release
** version built from DIR: *out is the new index. Publishing a version
** again with other files is refused (a release is immutable: clients
** that locked it would refuse the change); every kept release's blobs
** must still be in DIR/blobs. */
static int add_release(dsf_index **out, dsf_index *old, const char *dir,
                       const char *name, const char *version,
                       dsf_buf *report, dsf_diags *d)
{
    *out = NULL;
    if (!dsf_semver_valid(version))
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "--version '%s' is not a release version: "
                              "MAJOR.MINOR.PATCH[-PRE] (semver, no +BUILD)",
                              version);
    /* hashed first: nothing is written when the release is refused */
    dsf_index *sub;
    int rc = build_release(&sub, dir, name, version, false, d);
    if (rc)
        return rc;
    dsf_index *ix = dsf_index_new(name);
    ix->format = 2;
    bool same = false;
    for (size_t i = 0; !rc && old && i < old->n_releases; i++) {
        dsf_index_release *r = &old->releases[i];
        if (!strcmp(r->version, version)) {
            char *a = dsf_index_write(r->ix), *b = dsf_index_write(sub);
            same = !strcmp(a, b);
            free(a);
            free(b);
            if (!same) {
                dsf_diag *g = dsf_diag_add(
                    d, DSF_ERROR, NULL, 0, 0,
                    "release %s is already in %s/index.json with other "
                    "files; a release never changes (clients that locked "
                    "it would refuse it)", version, dir);
                dsf_diag_set_hint(g, "publish the change as a new version");
                rc = DSF_EUSAGE;
            }
            continue;
        }
        for (size_t k = 0; !rc && k < r->ix->n_files; k++) {
            char *blob = dsf_path_join(dir, r->ix->files[k].remote);
            if (!dsf_is_file(blob))
                rc = dsf_diag_error(d, DSF_EINPUT, blob, 0, 0,
                                    "missing: release %s needs it for %s "
                                    "(restore it, or start a new index)",
                                    r->version, r->ix->files[k].local);
            free(blob);
        }
        if (!rc) {
            dsf_index_add_release(ix, r->version, r->ix);
            r->ix = NULL; /* moved */
        }
    }
    if (!rc) {
        /* now the blobs (a missing one of an unchanged release comes back) */
        dsf_index_free(sub);
        rc = build_release(&sub, dir, name, version, true, d);
    }
    if (rc) {
        dsf_index_free(sub);
        dsf_index_free(ix);
        return rc;
    }
    if (report)
        dsf_buf_printf(report, "%s release %s: %zu profile%s, %zu plugin%s, "
                       "%zu file%s\n", same ? "unchanged" : "added", version,
                       sub->n_profiles, dsf_plural(sub->n_profiles),
                       sub->n_plugins, dsf_plural(sub->n_plugins),
                       sub->n_files, dsf_plural(sub->n_files));
    dsf_index_add_release(ix, version, sub);
    dsf_index_finish(ix);
    *out = ix;
    return 0;
}

/* The index.json already in DIR: *old (NULL when there is none).
** Malformed: DSF_EINPUT (a release could not be added without dropping
** the others). */
static int load_old(dsf_index **old, const char *path, dsf_diags *d)
{
    *old = NULL;
    if (!dsf_is_file(path))
        return 0;
    char *text;
    size_t len;
    int rc = dsf_read_file(&text, &len, path, FILE_MAX, d);
    if (rc)
        return rc;
    rc = dsf_index_parse(old, path, text, len, d);
    free(text);
    if (rc) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, path, 0, 0,
                                   "cannot read the index to add to");
        dsf_diag_set_hint(g, "fix it, or remove it to start a new index");
        return DSF_EINPUT;
    }
    return 0;
}

/* --expires: a number of days from now, or a UTC time. */
static int parse_expires(long long *t, const char *s, dsf_diags *d)
{
    char *end;
    long days = s ? strtol(s, &end, 10) : 90;
    if (!s || (*s && !*end && days >= 0 && days <= 36500)) {
        *t = (long long)time(NULL) + (long long)days * 86400;
        return 0;
    }
    if (dsf_index_time_parse(t, s))
        return 0;
    return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                          "--expires '%s': a number of days (0 to 36500) "
                          "or a UTC time like 2027-01-31T00:00:00Z", s);
}

/* The text of index.json.sig: one signature over text per key file.
** *out: caller frees. */
static int sign_index(char **out, const char *text, const char *const *keys,
                      size_t n_keys, dsf_buf *report, dsf_diags *d)
{
    *out = NULL;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "format", 1);
    cJSON *sigs = cJSON_AddArrayToObject(doc, "signatures");
    int rc = 0;
    for (size_t i = 0; !rc && i < n_keys; i++) {
        char sig[129], pub[65];
        rc = dsf_sign_text(sig, pub, keys[i], text, strlen(text), d);
        if (rc)
            break;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", pub);
        cJSON_AddStringToObject(o, "signature", sig);
        cJSON_AddItemToArray(sigs, o);
        if (report)
            dsf_buf_printf(report, "signed with key %.16s (%s)\n", pub,
                           keys[i]);
    }
    if (!rc)
        *out = dsf_json_print(doc, true);
    cJSON_Delete(doc);
    return rc;
}

/* The serial of the index about to be written: one more than that of
** the index.json it replaces (old: NULL when there is none, or when it
** could not be read although it exists), or the one asked for, which must
** be higher. */
static int next_serial(long long *serial, const char *path,
                       const dsf_index *old, long long asked, dsf_diags *d)
{
    bool unreadable = !old && dsf_is_file(path);
    long long prev = old ? old->serial : 0;
    if (asked && !unreadable && asked <= prev) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, path, 0, 0,
                                   "--serial %lld is not above the serial "
                                   "%lld of the index it replaces", asked,
                                   prev);
        dsf_diag_set_hint(g, "clients that pinned serial %lld refuse a "
                             "lower one as a rollback: use --serial %lld "
                             "or more, or leave --serial out", prev,
                          prev + 1);
        return DSF_EUSAGE;
    }
    if (!asked && unreadable) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, path, 0, 0,
                                   "cannot read the serial of the index "
                                   "this would replace");
        dsf_diag_set_hint(g, "pass --serial N, higher than the serial "
                             "clients have pinned (the one served now)");
        return DSF_EINPUT;
    }
    if (!asked && prev >= 9007199254740992LL)
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "the serial %lld cannot grow any more", prev);
    *serial = asked ? asked : prev + 1;
    return 0;
}

/* The index of dir as o asks (*out: caller frees), from the old one
** (format 2 adds to it; NULL: none). */
static int build_index(dsf_index **out, const char *dir, const char *name,
                       const dsf_repo_index_opts *o, dsf_index *old,
                       const char *path, dsf_buf *report, dsf_diags *d)
{
    *out = NULL;
    if (o->release) {
        if (old && old->format == 1 && report)
            dsf_buf_printf(report, "%s was format 1: it becomes format 2, "
                           "and its entries are not kept (index each old "
                           "version with --version to keep it)\n", path);
        return add_release(out, old && old->format == 2 ? old : NULL, dir,
                           name, o->release, report, d);
    }
    dsf_index *ix = dsf_index_new(name);
    int rc = add_profiles(ix, dir, "0.0.0", d);
    if (!rc)
        rc = add_plugins(ix, dir, "0.0.0", d);
    if (!rc) {
        dsf_index_finish(ix);
        if (!ix->n_files)
            rc = dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                                "no profiles (profiles/NAME.lua) and no "
                                "plugins (plugins/NAME/...) found");
    }
    if (rc)
        dsf_index_free(ix);
    else
        *out = ix;
    return rc;
}

static void report_written(dsf_buf *report, const char *path,
                           const dsf_index *ix)
{
    if (ix->format == 2) {
        dsf_buf_printf(report, "wrote %s: repository '%s', format 2, %zu "
                       "release%s:", path, ix->name, ix->n_releases,
                       dsf_plural(ix->n_releases));
        for (size_t i = 0; i < ix->n_releases; i++)
            dsf_buf_printf(report, " %s", ix->releases[i].version);
        dsf_buf_printf(report, " (serial %lld)\n", ix->serial);
    } else {
        dsf_buf_printf(report, "wrote %s: repository '%s', %zu profile%s, "
                       "%zu plugin%s, %zu file%s (serial %lld)\n", path,
                       ix->name, ix->n_profiles, dsf_plural(ix->n_profiles),
                       ix->n_plugins, dsf_plural(ix->n_plugins),
                       ix->n_files, dsf_plural(ix->n_files), ix->serial);
    }
}

/* Writes ix (and its signatures) into dir: signed first, so a key that
** does not work leaves both files as they were. */
static int write_index(const char *dir, const char *path,
                       const dsf_index *ix, const dsf_repo_index_opts *o,
                       dsf_buf *report, dsf_diags *d)
{
    char *text = dsf_index_write(ix);
    char *sigs = NULL;
    dsf_index *check = NULL;
    /* what a client will read: the same rules, before anything is
    ** written (a file that is also a directory, too many files) */
    int rc = dsf_index_parse(&check, path, text, strlen(text), d);
    dsf_index_free(check);
    if (rc)
        rc = DSF_EINPUT;
    char *sig = dsf_path_join(dir, DSF_SIGN_FILE);
    if (!rc && o->n_sign)
        rc = sign_index(&sigs, text, o->sign_keys, o->n_sign, report, d);
    if (!rc)
        rc = dsf_write_atomic(path, text, strlen(text), d);
    if (!rc && sigs)
        rc = dsf_write_atomic(sig, sigs, strlen(sigs), d);
    else if (!rc && unlink(sig) == 0 && report)
        dsf_buf_printf(report, "removed %s (it signed the previous "
                       "index.json)\n", sig);
    if (!rc && report)
        report_written(report, path, ix);
    free(sig);
    free(sigs);
    free(text);
    return rc;
}

int dsf_repo_index_dir(const char *dir, const dsf_repo_index_opts *o,
                       dsf_buf *report, dsf_diags *d)
{
    if (!dsf_is_dir(dir))
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                              "not a directory");
    const char *name = o->name;
    char *own = NULL;
    if (!name) {
        char *abs = realpath(dir, NULL);
        const char *base = abs ? strrchr(abs, '/') : NULL;
        own = dsf_xstrdup(base && base[1] ? base + 1 : "repository");
        free(abs);
        name = own;
    }
    char *path = dsf_path_join(dir, "index.json");
    dsf_index *old = NULL;
    int rc = 0;
    for (int k = 0; !rc && k < 2; k++) {
        char *sub = dsf_path_join(dir, k ? "plugins" : "profiles");
        rc = no_symlink(sub, d);
        free(sub);
    }
    if (rc) {
        /* reported */
    } else if (o->release) {
        rc = load_old(&old, path, d);
    } else {
        /* format 1 replaces whatever is there, unless it has releases */
        dsf_diags quiet = DSF_DIAGS_INIT;
        if (load_old(&old, path, &quiet))
            old = NULL;
        dsf_diags_free(&quiet);
    }
    if (!rc && old && !o->release && old->format == 2) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, path, 0, 0,
                                   "this index has releases side by side "
                                   "(format 2): name the new one");
        dsf_diag_set_hint(g, "dsforge repo index %s --version MAJOR.MINOR."
                             "PATCH", dir);
        rc = DSF_EUSAGE;
    }
    if (!rc && old && own && strcmp(old->name, name)) {
        /* no --name: keep the repository's name */
        free(own);
        own = dsf_xstrdup(old->name);
        name = own;
    }
    if (!rc && !dsf_index_name_ok(name))
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "invalid repository name '%s' (use --name)",
                            name);
    long long serial = 0;
    if (!rc)
        rc = next_serial(&serial, path, old, o->serial, d);
    dsf_index *ix = NULL;
    if (!rc)
        rc = build_index(&ix, dir, name, o, old, path, report, d);
    dsf_index_free(old);
    if (!rc && ix) {
        /* every publish grows the serial, signed or not: an unsigned
        ** one in between must not start it again (clients refuse a
        ** lower serial than they pinned) */
        ix->serial = serial;
        if (o->n_sign)
            rc = parse_expires(&ix->expires, o->expires, d);
        else if (o->expires)
            rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                                "--expires needs --sign KEY");
    }
    if (!rc && ix)
        rc = write_index(dir, path, ix, o, report, d);
    free(path);
    dsf_index_free(ix);
    free(own);
    return rc;
}
