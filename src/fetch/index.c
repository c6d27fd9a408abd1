/* index.c -- see index.h. */
#include "index.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "fetch/semver.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

bool dsf_index_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (!n || n > 64 || name[0] == '.' || name[0] == '-')
        return false;
    for (const char *s = name; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
              *s == '.'))
            return false;
    return true;
}

bool dsf_index_path_ok(const char *path)
{
    size_t n = strlen(path);
    if (!n || n > 1024 || path[0] == '/')
        return false;
    const char *seg = path;
    for (const char *s = path;; s++) {
        if (*s == '/' || !*s) {
            size_t len = (size_t)(s - seg);
            if (!len || (len == 1 && seg[0] == '.') ||
                (len == 2 && seg[0] == '.' && seg[1] == '.'))
                return false;
            if (!*s)
                return true;
            seg = s + 1;
            continue;
        }
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || strchr("._-+~@", *s)))
            return false;
    }
}

static bool hex64_ok(const char *s)
{
    if (strlen(s) != 64)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

static bool version_ok(const char *v)
{
    size_t n = strlen(v);
    if (!n || n > 64)
        return false;
    for (; *v; v++)
        if (*v <= ' ' || *v > '~' || *v == '/' || *v == '@')
            return false;
    return true;
}

/* ---- building ---------------------------------------------------------- */

typedef struct builder {
    dsf_index ix;
    size_t cap_profiles, cap_plugins, cap_files, cap_releases;
} builder;

dsf_index *dsf_index_new(const char *name)
{
    builder *b = dsf_xcalloc(1, sizeof *b);
    b->ix.format = 1;
    b->ix.name = dsf_xstrdup(name);
    return &b->ix;
}

static void add_file(dsf_index *ix, const char *remote, const char *local,
                     const char *sha256)
{
    builder *b = (builder *)ix;
    dsf_xgrow((void **)&ix->files, &b->cap_files, ix->n_files + 1,
              sizeof *ix->files);
    dsf_index_file *f = &ix->files[ix->n_files++];
    f->remote = dsf_xstrdup(remote);
    f->local = dsf_xstrdup(local);
    snprintf(f->sha256, sizeof f->sha256, "%s", sha256);
}

static dsf_index_entry *add_entry(dsf_index_entry **items, size_t *n,
                                  size_t *cap, const char *name,
                                  const char *version, const char *path)
{
    dsf_xgrow((void **)items, cap, *n + 1, sizeof **items);
    dsf_index_entry *e = &(*items)[(*n)++];
    e->name = dsf_xstrdup(name);
    e->version = dsf_xstrdup(version);
    e->path = dsf_xstrdup(path);
    return e;
}

void dsf_index_add_profile(dsf_index *ix, const char *name,
                           const char *version, const char *path,
                           const char *sha256)
{
    builder *b = (builder *)ix;
    add_entry(&ix->profiles, &ix->n_profiles, &b->cap_profiles, name,
              version, path);
    char *local = dsf_xasprintf("profiles/%s.lua", name);
    add_file(ix, path, local, sha256);
    free(local);
}

void dsf_index_add_plugin(dsf_index *ix, const char *name,
                          const char *version, const char *path,
                          const char *const *files,
                          const char *const *sha256s, size_t n)
{
    builder *b = (builder *)ix;
    add_entry(&ix->plugins, &ix->n_plugins, &b->cap_plugins, name, version,
              path);
    for (size_t i = 0; i < n; i++) {
        char *remote = dsf_xasprintf("%s/%s", path, files[i]);
        char *local = dsf_xasprintf("plugins/%s/%s", name, files[i]);
        add_file(ix, remote, local, sha256s[i]);
        free(remote);
        free(local);
    }
}

void dsf_index_add_plugin_blobs(dsf_index *ix, const char *name,
                                const char *version,
                                const char *const *files,
                                const char *const *sha256s, size_t n)
{
    builder *b = (builder *)ix;
    char *path = dsf_xasprintf("plugins/%s", name);
    add_entry(&ix->plugins, &ix->n_plugins, &b->cap_plugins, name, version,
              path);
    free(path);
    for (size_t i = 0; i < n; i++) {
        char *remote = dsf_xasprintf(DSF_INDEX_BLOBS "/%s", sha256s[i]);
        char *local = dsf_xasprintf("plugins/%s/%s", name, files[i]);
        add_file(ix, remote, local, sha256s[i]);
        free(remote);
        free(local);
    }
}

void dsf_index_add_release(dsf_index *ix, const char *version,
                           dsf_index *sub)
{
    builder *b = (builder *)ix;
    ix->format = 2;
    for (size_t i = 0; i < ix->n_releases; i++)
        if (!strcmp(ix->releases[i].version, version)) {
            dsf_index_free(ix->releases[i].ix);
            ix->releases[i].ix = sub;
            return;
        }
    dsf_xgrow((void **)&ix->releases, &b->cap_releases, ix->n_releases + 1,
              sizeof *ix->releases);
    dsf_index_release *r = &ix->releases[ix->n_releases++];
    r->version = dsf_xstrdup(version);
    r->ix = sub;
}

static int cmp_release(const void *a, const void *b)
{
    return dsf_semver_cmp(((const dsf_index_release *)a)->version,
                          ((const dsf_index_release *)b)->version);
}

const dsf_index_release *dsf_index_release_find(const dsf_index *ix,
                                                const char *version)
{
    for (size_t i = 0; i < ix->n_releases; i++)
        if (!strcmp(ix->releases[i].version, version))
            return &ix->releases[i];
    return NULL;
}

const dsf_index_release *dsf_index_newest(const dsf_index *ix,
                                          const char *profile,
                                          const dsf_semreq *req)
{
    for (size_t i = ix->n_releases; i-- > 0;) {
        const dsf_index_release *r = &ix->releases[i];
        if ((!req || dsf_semreq_matches(req, r->version)) &&
            (!profile || dsf_index_profile(r->ix, profile)))
            return r;
    }
    return NULL;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const dsf_index_entry *)a)->name,
                  ((const dsf_index_entry *)b)->name);
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const dsf_index_file *)a)->local,
                  ((const dsf_index_file *)b)->local);
}

void dsf_index_finish(dsf_index *ix)
{
    if (ix->n_profiles)
        qsort(ix->profiles, ix->n_profiles, sizeof *ix->profiles,
              cmp_entry);
    if (ix->n_plugins)
        qsort(ix->plugins, ix->n_plugins, sizeof *ix->plugins, cmp_entry);
    if (ix->n_files)
        qsort(ix->files, ix->n_files, sizeof *ix->files, cmp_file);
    if (ix->n_releases)
        qsort(ix->releases, ix->n_releases, sizeof *ix->releases,
              cmp_release);
}

static void free_entries(dsf_index_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].version);
        free(e[i].path);
    }
    free(e);
}

void dsf_index_free(dsf_index *ix)
{
    if (!ix)
        return;
    free(ix->name);
    free_entries(ix->profiles, ix->n_profiles);
    free_entries(ix->plugins, ix->n_plugins);
    for (size_t i = 0; i < ix->n_files; i++) {
        free(ix->files[i].remote);
        free(ix->files[i].local);
    }
    free(ix->files);
    for (size_t i = 0; i < ix->n_releases; i++) {
        free(ix->releases[i].version);
        dsf_index_free(ix->releases[i].ix);
    }
    free(ix->releases);
    free((builder *)ix);
}

const dsf_index_entry *dsf_index_profile(const dsf_index *ix,
                                         const char *name)
{
    for (size_t i = 0; i < ix->n_profiles; i++)
        if (!strcmp(ix->profiles[i].name, name))
            return &ix->profiles[i];
    return NULL;
}

/* ---- parsing ----------------------------------------------------------- */

typedef struct parser {
    const dsf_jsrc *src;
    const char *label;
    dsf_diags *d;
} parser;

static int bad(const parser *p, const cJSON *node, bool at_key,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int bad(const parser *p, const cJSON *node, bool at_key,
               const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dsf_jpos pos = {0, 0};
    if (node) {
        if (!(at_key && dsf_jsrc_key_pos(p->src, node, &pos)))
            dsf_jsrc_pos(p->src, node, &pos);
    }
    dsf_diag *g = dsf_diag_add(p->d, DSF_ERROR, p->label, pos.line, pos.col,
                               "%s", msg);
    const char *line;
    size_t len;
    if (pos.line && dsf_jsrc_line(p->src, pos.line, &line, &len))
        dsf_diag_set_excerpt(g, line, len);
    dsf_diag_set_rule(g, "repo-index");
    return DSF_ENET;
}

static const char *get_string(const parser *p, const cJSON *obj,
                              const char *key, int *rc)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        *rc = bad(p, obj, false, "index entry has no \"%s\"", key);
        return NULL;
    }
    if (!cJSON_IsString(v)) {
        *rc = bad(p, v, false, "\"%s\" must be a string", key);
        return NULL;
    }
    return v->valuestring;
}

static int parse_common(const parser *p, const cJSON *e, const char **version,
                        const char **path)
{
    int rc = 0;
    if (!dsf_index_name_ok(e->string))
        return bad(p, e, true, "invalid name \"%s\" (letters, digits, "
                               "'_', '-', '.'; at most 64)", e->string);
    if (!cJSON_IsObject(e))
        return bad(p, e, false, "entry \"%s\" must be an object",
                   e->string);
    if (!(*version = get_string(p, e, "version", &rc)))
        return rc;
    if (!version_ok(*version))
        return bad(p, cJSON_GetObjectItemCaseSensitive(e, "version"), false,
                   "invalid version \"%s\"", *version);
    if (!(*path = get_string(p, e, "path", &rc)))
        return rc;
    if (!dsf_index_path_ok(*path))
        return bad(p, cJSON_GetObjectItemCaseSensitive(e, "path"), false,
                   "path \"%s\" leaves the repository or has characters "
                   "outside [A-Za-z0-9._-+~@/]", *path);
    return 0;
}

static int parse_profiles(const parser *p, const cJSON *obj, dsf_index *ix)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, obj) {
        const char *version, *path;
        int rc = parse_common(p, e, &version, &path);
        if (rc)
            return rc;
        const char *sha = get_string(p, e, "sha256", &rc);
        if (!sha)
            return rc;
        if (!hex64_ok(sha))
            return bad(p, cJSON_GetObjectItemCaseSensitive(e, "sha256"),
                       false, "\"%s\" is not a lower-case sha256", sha);
        if (ix->n_files >= DSF_INDEX_MAX_FILES)
            return bad(p, e, true, "too many files (limit %d)", DSF_INDEX_MAX_FILES);
        dsf_index_add_profile(ix, e->string, version, path, sha);
    }
    return 0;
}

/* A plugin's {FILE: SHA} object (both formats): checks every entry and
** fills names and shas (as many slots as files has entries; borrowed
** from files). */
static int read_plugin_files(const parser *p, const cJSON *files,
                             const char **names, const char **shas)
{
    size_t i = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, files) {
        if (!dsf_index_path_ok(f->string))
            return bad(p, f, true, "file name \"%s\" leaves the plugin "
                       "or has characters outside [A-Za-z0-9._-+~@/]",
                       f->string);
        if (!cJSON_IsString(f) || !hex64_ok(f->valuestring))
            return bad(p, f, false, "the sha256 of \"%s\" must be 64 "
                       "lower-case hex digits", f->string);
        names[i] = f->string;
        shas[i++] = f->valuestring;
    }
    return 0;
}

static int parse_plugins(const parser *p, const cJSON *obj, dsf_index *ix)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, obj) {
        const char *version, *path;
        int rc = parse_common(p, e, &version, &path);
        if (rc)
            return rc;
        const cJSON *files = cJSON_GetObjectItemCaseSensitive(e, "files");
        if (!cJSON_IsObject(files) || !files->child)
            return bad(p, files ? files : e, false,
                       "plugin \"%s\" needs a non-empty \"files\" object",
                       e->string);
        size_t n = (size_t)cJSON_GetArraySize(files);
        if (ix->n_files + n > DSF_INDEX_MAX_FILES)
            return bad(p, e, true, "too many files (limit %d)", DSF_INDEX_MAX_FILES);
        const char **names = dsf_xcalloc(n, sizeof *names);
        const char **shas = dsf_xcalloc(n, sizeof *shas);
        rc = read_plugin_files(p, files, names, shas);
        if (!rc)
            dsf_index_add_plugin(ix, e->string, version, path, names, shas,
                                 n);
        free(names);
        free(shas);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_unique(const parser *p, const dsf_index *ix);

/* Format 2: "releases": {"1.0.0": {"profiles": {NAME: SHA},
** "plugins": {NAME: {FILE: SHA}}}}. */
static int parse_release(const parser *p, const cJSON *rel, dsf_index *sub,
                         size_t *total)
{
    const char *v = rel->string;
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(rel, "profiles");
    const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(rel, "plugins");
    if ((profiles && !cJSON_IsObject(profiles)) ||
        (plugins && !cJSON_IsObject(plugins)))
        return bad(p, profiles && !cJSON_IsObject(profiles) ? profiles
                                                           : plugins,
                   false, "\"profiles\" and \"plugins\" of a release must "
                   "be objects");
    const cJSON *e;
    cJSON_ArrayForEach(e, profiles) {
        if (!dsf_index_name_ok(e->string))
            return bad(p, e, true, "invalid name \"%s\" (letters, digits, "
                       "'_', '-', '.'; at most 64)", e->string);
        if (!cJSON_IsString(e) || !hex64_ok(e->valuestring))
            return bad(p, e, false, "the sha256 of profile \"%s\" must be "
                       "64 lower-case hex digits", e->string);
        if (++*total > DSF_INDEX_MAX_FILES)
            return bad(p, e, true, "too many files (limit %d)",
                       DSF_INDEX_MAX_FILES);
        char *path = dsf_xasprintf(DSF_INDEX_BLOBS "/%s", e->valuestring);
        dsf_index_add_profile(sub, e->string, v, path, e->valuestring);
        free(path);
    }
    cJSON_ArrayForEach(e, plugins) {
        if (!dsf_index_name_ok(e->string))
            return bad(p, e, true, "invalid name \"%s\" (letters, digits, "
                       "'_', '-', '.'; at most 64)", e->string);
        if (!cJSON_IsObject(e) || !e->child)
            return bad(p, e, false, "plugin \"%s\" needs a non-empty object "
                       "of files", e->string);
        size_t n = (size_t)cJSON_GetArraySize(e);
        *total += n;
        if (*total > DSF_INDEX_MAX_FILES)
            return bad(p, e, true, "too many files (limit %d)",
                       DSF_INDEX_MAX_FILES);
        const char **names = dsf_xcalloc(n, sizeof *names);
        const char **shas = dsf_xcalloc(n, sizeof *shas);
        int rc = read_plugin_files(p, e, names, shas);
        if (!rc)
            dsf_index_add_plugin_blobs(sub, e->string, v, names, shas, n);
        free(names);
        free(shas);
        if (rc)
            return rc;
    }
    if (!sub->n_files)
        return bad(p, rel, true, "release \"%s\" has no profiles and no "
                   "plugins", v);
    dsf_index_finish(sub);
    return check_unique(p, sub);
}

static int parse_releases(const parser *p, const cJSON *obj, dsf_index *ix)
{
    if (!cJSON_IsObject(obj) || !obj->child)
        return bad(p, obj, false, "\"releases\" must be a non-empty object "
                   "(format 2)");
    if (cJSON_GetArraySize(obj) > DSF_INDEX_MAX_RELEASES)
        return bad(p, obj, false, "too many releases (limit %d)",
                   DSF_INDEX_MAX_RELEASES);
    size_t total = 0;
    const cJSON *rel;
    cJSON_ArrayForEach(rel, obj) {
        if (!dsf_semver_valid(rel->string))
            return bad(p, rel, true, "release \"%s\" is not a version "
                       "MAJOR.MINOR.PATCH[-PRE] (semver, no +BUILD)",
                       rel->string);
        if (!cJSON_IsObject(rel))
            return bad(p, rel, false, "release \"%s\" must be an object",
                       rel->string);
        dsf_index *sub = dsf_index_new(ix->name);
        int rc = parse_release(p, rel, sub, &total);
        if (rc) {
            dsf_index_free(sub);
            return rc;
        }
        dsf_index_add_release(ix, rel->string, sub);
    }
    return 0;
}

/* No two entries may map to one file, and no file may also be a
** directory ("a" and "a/b"): either would fail only when the tree is
** written, with a temporary path instead of index.json in the message.
** Files are sorted, so the ones below a prefix follow it. */
static int check_unique(const parser *p, const dsf_index *ix)
{
    for (size_t i = 0; i < ix->n_files; i++) {
        const char *a = ix->files[i].local;
        size_t n = strlen(a);
        for (size_t j = i + 1; j < ix->n_files; j++) {
            const char *b = ix->files[j].local;
            if (strncmp(a, b, n))
                break;
            if (!b[n])
                return bad(p, NULL, false, "two entries map to the same "
                           "file \"%s\"", a);
            if (b[n] == '/')
                return bad(p, NULL, false, "\"%s\" is both a file and "
                           "the directory of \"%s\"", a, b);
        }
    }
    return 0;
}

bool dsf_index_time_parse(long long *t, const char *s)
{
    int y, mo, da, h, mi, se, n = 0;
    if (strlen(s) != 20 ||
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &da, &h, &mi, &se,
               &n) != 6 || n != 20 || y < 2000 || mo < 1 || mo > 12 ||
        da < 1 || da > 31 || h > 23 || mi > 59 || se > 60)
        return false;
    for (int i = 0; i < 20; i++)
        if (!strchr("0123456789-:TZ", s[i]))
            return false;
    /* days from the civil date (proleptic Gregorian), no time zone */
    long long yy = mo <= 2 ? y - 1 : y;
    long long era = yy / 400;
    long long yoe = yy - era * 400;
    long long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + da - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long long days = era * 146097 + doe - 719468;
    *t = days * 86400 + h * 3600 + mi * 60 + se;
    return true;
}

void dsf_index_time_format(char *out, size_t size, long long t)
{
    long long days = t / 86400, rem = t % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long y = yoe + era * 400;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    long long da = doy - (153 * mp + 2) / 5 + 1;
    long long mo = mp < 10 ? mp + 3 : mp - 9;
    snprintf(out, size, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
             mo <= 2 ? y + 1 : y, mo, da, rem / 3600, rem / 60 % 60,
             rem % 60);
}

/* "serial" (a non-negative integer) and "expires" (a UTC time), both
** optional; 0 when absent. */
static int parse_signed_fields(const parser *p, const cJSON *doc,
                               long long *serial, long long *expires)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "serial");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "expires");
    if (s && (!cJSON_IsNumber(s) || !dsf_json_is_integer_literal(s) ||
              s->valuedouble < 0 || s->valuedouble > 9007199254740992.0))
        return bad(p, s, false, "\"serial\" must be an integer from 0 to "
                   "2^53");
    if (s)
        *serial = (long long)s->valuedouble;
    if (e && (!cJSON_IsString(e) ||
              !dsf_index_time_parse(expires, e->valuestring)))
        return bad(p, e, false, "\"expires\" must be a UTC time like "
                   "\"2027-01-31T00:00:00Z\"");
    return 0;
}

int dsf_index_parse(dsf_index **out, const char *label, const char *text,
                    size_t len, dsf_diags *d)
{
    *out = NULL;
    cJSON *doc;
    dsf_jsrc *src;
    dsf_diags local = DSF_DIAGS_INIT;
    if (dsf_json_parse(&doc, &src, label, text, len, &local)) {
        /* A malformed index came from the network: exit 4, not 3. */
        dsf_diags_move(d, &local);
        dsf_diags_free(&local);
        return DSF_ENET;
    }
    parser p = {src, label, d};
    int rc = 0;
    long long serial = 0, expires = 0;
    dsf_index *ix = NULL;
    size_t ndup;
    const dsf_jdup *dups = dsf_jsrc_duplicates(src, &ndup);
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "name");
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(doc, "profiles");
    const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(doc, "plugins");
    if (ndup) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, label, dups[0].again.line,
                                   dups[0].again.col,
                                   "duplicate key \"%s\"", dups[0].path);
        dsf_diag_set_rule(g, "repo-index");
        rc = DSF_ENET;
    } else if (!cJSON_IsObject(doc)) {
        rc = bad(&p, doc, false, "index.json must be an object");
    } else if (!cJSON_IsNumber(format) ||
               !dsf_json_is_integer_literal(format)) {
        rc = bad(&p, format ? format : doc, false,
                 "\"format\" must be the integer 1 or 2");
    } else if (format->valuedouble != 1 && format->valuedouble != 2) {
        rc = bad(&p, format, false, "unsupported index format %.0f (this "
                 "dsforge reads formats 1 and 2; upgrade dsforge)",
                 format->valuedouble > -1e15 && format->valuedouble < 1e15
                     ? format->valuedouble : 0.0);
    } else if (!cJSON_IsString(name) ||
               !dsf_index_name_ok(name->valuestring)) {
        rc = bad(&p, name ? name : doc, false,
                 "\"name\" must be a repository name (letters, digits, "
                 "'_', '-', '.')");
    } else if ((profiles && !cJSON_IsObject(profiles)) ||
               (plugins && !cJSON_IsObject(plugins))) {
        rc = bad(&p, profiles && !cJSON_IsObject(profiles) ? profiles
                                                           : plugins,
                 false, "\"profiles\" and \"plugins\" must be objects");
    } else if ((rc = parse_signed_fields(&p, doc, &serial, &expires)) != 0) {
        /* reported */
    } else {
        ix = dsf_index_new(name->valuestring);
        ix->serial = serial;
        ix->expires = expires;
        if (format->valuedouble == 2) {
            ix->format = 2;
            const cJSON *rels = cJSON_GetObjectItemCaseSensitive(doc,
                                                                 "releases");
            if (profiles || plugins)
                rc = bad(&p, profiles ? profiles : plugins, true,
                         "format 2 lists profiles and plugins per release, "
                         "under \"releases\"");
            else if (!rels)
                rc = bad(&p, doc, false, "format 2 needs \"releases\": "
                         "{\"1.0.0\": {\"profiles\": {...}}}");
            else
                rc = parse_releases(&p, rels, ix);
        } else {
            if (profiles)
                rc = parse_profiles(&p, profiles, ix);
            if (!rc && plugins)
                rc = parse_plugins(&p, plugins, ix);
        }
        if (!rc) {
            dsf_index_finish(ix);
            rc = check_unique(&p, ix);
        }
    }
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    if (rc) {
        dsf_index_free(ix);
        return rc;
    }
    *out = ix;
    return 0;
}

/* ---- writing ----------------------------------------------------------- */

/* A format-2 release as {"profiles": {NAME: SHA}, "plugins": {NAME:
** {FILE: SHA}}}. */
static cJSON *release_json(const dsf_index *sub)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *profiles = cJSON_AddObjectToObject(o, "profiles");
    cJSON *plugins = cJSON_AddObjectToObject(o, "plugins");
    for (size_t i = 0; i < sub->n_files; i++) {
        const dsf_index_file *f = &sub->files[i];
        if (!strncmp(f->local, "profiles/", 9)) {
            char *name = dsf_xstrndup(f->local + 9, strlen(f->local) - 13);
            cJSON_AddStringToObject(profiles, name, f->sha256);
            free(name);
            continue;
        }
        const char *nm = f->local + 8;
        const char *slash = strchr(nm, '/');
        char *name = dsf_xstrndup(nm, (size_t)(slash - nm));
        cJSON *pl = cJSON_GetObjectItemCaseSensitive(plugins, name);
        if (!pl)
            pl = cJSON_AddObjectToObject(plugins, name);
        cJSON_AddStringToObject(pl, slash + 1, f->sha256);
        free(name);
    }
    return o;
}

char *dsf_index_write(const dsf_index *ix)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "format", ix->format);
    cJSON_AddStringToObject(doc, "name", ix->name);
    if (ix->serial > 0)
        cJSON_AddNumberToObject(doc, "serial", (double)ix->serial);
    if (ix->expires) {
        char t[32];
        dsf_index_time_format(t, sizeof t, ix->expires);
        cJSON_AddStringToObject(doc, "expires", t);
    }
    if (ix->format == 2) {
        cJSON *rels = cJSON_AddObjectToObject(doc, "releases");
        for (size_t i = 0; i < ix->n_releases; i++)
            cJSON_AddItemToObject(rels, ix->releases[i].version,
                                  release_json(ix->releases[i].ix));
        char *text = dsf_json_print(doc, true);
        cJSON_Delete(doc);
        return text;
    }
    cJSON *profiles = cJSON_AddObjectToObject(doc, "profiles");
    cJSON *plugins = cJSON_AddObjectToObject(doc, "plugins");
    for (size_t i = 0; i < ix->n_files; i++) {
        const dsf_index_file *f = &ix->files[i];
        if (!strncmp(f->local, "profiles/", 9)) {
            size_t n = strlen(f->local) - 9 - 4; /* drop ".lua" */
            char *name = dsf_xstrndup(f->local + 9, n);
            const dsf_index_entry *e = dsf_index_profile(ix, name);
            cJSON *o = cJSON_AddObjectToObject(profiles, name);
            cJSON_AddStringToObject(o, "version", e ? e->version : "");
            cJSON_AddStringToObject(o, "path", f->remote);
            cJSON_AddStringToObject(o, "sha256", f->sha256);
            free(name);
            continue;
        }
        /* plugins/NAME/FILE */
        const char *nm = f->local + 8;
        const char *slash = strchr(nm, '/');
        char *name = dsf_xstrndup(nm, (size_t)(slash - nm));
        cJSON *o = cJSON_GetObjectItemCaseSensitive(plugins, name);
        if (!o) {
            const dsf_index_entry *e = NULL;
            for (size_t k = 0; k < ix->n_plugins; k++)
                if (!strcmp(ix->plugins[k].name, name))
                    e = &ix->plugins[k];
            o = cJSON_AddObjectToObject(plugins, name);
            cJSON_AddStringToObject(o, "version", e ? e->version : "");
            cJSON_AddStringToObject(o, "path", e ? e->path : "");
            cJSON_AddObjectToObject(o, "files");
        }
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(o, "files"),
                                slash + 1, f->sha256);
        free(name);
    }
    char *text = dsf_json_print(doc, true);
    cJSON_Delete(doc);
    return text;
}
