/* side.c -- see side.h. */
#include "diff/side.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "json/jsonc.h"

/* gen writes at most DSF_MAX_VARIANTS entries of a few KiB each. */
#define DSF_MANIFEST_MAX ((size_t)1 << 30)

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool has_manifest(const char *dir)
{
    char *m = dsf_xasprintf("%s/manifest.json", dir);
    bool ok = is_file(m);
    free(m);
    return ok;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int load_json(cJSON **out, const char *path, dsf_diags *d)
{
    dsf_jsrc *src = NULL;
    int rc = dsf_json_load_file(out, &src, path, d);
    dsf_jsrc_free(src);
    return rc;
}

static void grow(dsf_side *s)
{
    s->v = dsf_xrealloc(s->v, (s->nv + 1) * sizeof *s->v);
    s->docs = dsf_xrealloc(s->docs, (s->nv + 1) * sizeof *s->docs);
    memset(&s->v[s->nv], 0, sizeof *s->v);
    s->docs[s->nv] = NULL;
}

/* A manifest is large (1,000 variants: megabytes) and written by gen:
** parsed without recording positions, which only a malformed one needs
** (then it is parsed again for the message with file:line:col). */
static int load_manifest(cJSON **out, const char *path, dsf_diags *d)
{
    char *text;
    size_t len;
    int rc = dsf_read_file(&text, &len, path, DSF_MANIFEST_MAX, d);
    if (rc)
        return rc;
    /* (past the nesting limit: parsed again below, for its error) */
    *out = dsf_json_too_deep(text, len) ? NULL
                                        : cJSON_ParseWithLength(text, len);
    free(text);
    if (*out)
        return 0;
    rc = load_json(out, path, d);
    return rc ? rc : dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                    "malformed JSON");
}

/* Reads DIR/manifest.json and lists its variants (documents not loaded). */
static int open_manifest(dsf_side *s, dsf_diags *d)
{
    char *path = dsf_xasprintf("%s/manifest.json", s->dir);
    int rc = load_manifest(&s->manifest, path, d);
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(s->manifest,
                                                       "variants");
    if (!rc && !cJSON_IsArray(vs))
        rc = dsf_diag_error(d, DSF_EINPUT, path, 1, 1,
                            "not a dsforge manifest: no \"variants\" "
                            "array");
    for (const cJSON *e = vs ? vs->child : NULL; e && !rc; e = e->next) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
        if (!cJSON_IsString(name) || !cJSON_IsString(file) ||
            strchr(file->valuestring, '/') || file->valuestring[0] == '.') {
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "manifest variant without a usable "
                                "\"name\" and \"file\"");
            break;
        }
        grow(s);
        dsf_side_variant *v = &s->v[s->nv++];
        v->name = name->valuestring;
        v->file = file->valuestring;
        v->params = cJSON_GetObjectItemCaseSensitive(e, "params");
        v->summary = cJSON_GetObjectItemCaseSensitive(e, "summary");
        v->findings = cJSON_GetObjectItemCaseSensitive(e, "findings");
    }
    free(path);
    return rc;
}

int dsf_side_open(dsf_side *s, const char *text, dsf_diags *d)
{
    memset(s, 0, sizeof *s);
    s->label = dsf_xstrdup(text);
    const char *colon = strrchr(text, ':');
    if (colon && colon != text) {
        char *dir = dsf_xstrndup(text, (size_t)(colon - text));
        if (dsf_is_dir(dir) && has_manifest(dir)) {
            s->kind = DSF_SIDE_OUTPUT;
            s->dir = dir;
            int rc = open_manifest(s, d);
            if (rc)
                return rc;
            long i = dsf_side_find(s, colon + 1);
            if (i < 0) {
                dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                           "%s: no variant '%s' in its "
                                           "manifest", dir, colon + 1);
                dsf_buf known = DSF_BUF_INIT;
                for (size_t k = 0; k < s->nv; k++)
                    dsf_buf_printf(&known, "%s%s", k ? ", " : "",
                                   s->v[k].name);
                dsf_diag_set_hint(g, "variants: %s",
                                  known.len ? known.data : "(none)");
                dsf_buf_free(&known);
                return DSF_EINPUT;
            }
            /* Keep only the named variant. */
            if (i > 0) {
                s->v[0] = s->v[i];
            }
            s->nv = 1;
            return dsf_side_load(s, 0, d);
        }
        free(dir);
    }
    if (is_file(text) || ends_with(text, ".json")) {
        s->kind = DSF_SIDE_FILE;
        grow(s);
        s->v[0].name = s->label;
        s->v[0].file = s->label;
        s->nv = 1;
        return dsf_side_load(s, 0, d);
    }
    if (dsf_is_dir(text)) {
        if (!has_manifest(text))
            return dsf_diag_error(d, DSF_EINPUT, text, 0, 0,
                                  "a directory to compare must be a 'gen "
                                  "-o' output (it has no manifest.json)");
        s->kind = DSF_SIDE_DIR;
        s->dir = dsf_xstrdup(text);
        return open_manifest(s, d);
    }
    s->kind = DSF_SIDE_PROFILE;
    if (colon && colon != text) {
        s->profile = dsf_xstrndup(text, (size_t)(colon - text));
        s->tier = dsf_xstrdup(colon + 1);
    } else {
        s->profile = dsf_xstrdup(text);
    }
    return 0;
}

int dsf_side_generate(dsf_side *s, const dsf_gen_request *base,
                      dsf_diags *d)
{
    s->req = *base;
    s->req.profile = s->profile;
    s->req.tiers = (const char **)&s->tier;
    s->req.ntiers = s->tier ? 1 : 0;
    s->req.outdir = NULL;
    s->req.to_stdout = false;
    s->req.why = NULL;
    int rc = dsf_gen_eval(&s->res, &s->req, d);
    if (rc == DSF_EVALID)
        rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                            "%s: the variant has errors; nothing to "
                            "compare", s->label);
    if (rc)
        return rc;
    size_t n = dsf_gen_result_count(s->res);
    if (n != 1)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "%s has %zu variants; name one as "
                              "PROFILE:TIER", s->label, n);
    dsf_gen_variant gv;
    dsf_gen_result_variant(s->res, 0, &gv);
    grow(s);
    dsf_side_variant *v = &s->v[s->nv++];
    v->name = gv.name;
    v->doc = gv.doc;
    v->prov = gv.prov;
    v->params = gv.params;
    v->summary = gv.summary;
    v->findings = gv.findings;
    return 0;
}

int dsf_side_load(dsf_side *s, size_t i, dsf_diags *d)
{
    dsf_side_variant *v = &s->v[i];
    if (v->doc || !v->file)
        return 0;
    char *path = s->dir ? dsf_xasprintf("%s/%s", s->dir, v->file)
                        : dsf_xstrdup(v->file);
    int rc = load_json(&s->docs[i], path, d);
    free(path);
    v->doc = s->docs[i];
    return rc;
}

void dsf_side_unload(dsf_side *s, size_t i)
{
    if (!s->docs[i])
        return;
    cJSON_Delete(s->docs[i]);
    s->docs[i] = NULL;
    s->v[i].doc = NULL;
}

long dsf_side_find(const dsf_side *s, const char *name)
{
    for (size_t i = 0; i < s->nv; i++)
        if (!strcmp(s->v[i].name, name))
            return (long)i;
    return -1;
}

void dsf_side_close(dsf_side *s)
{
    for (size_t i = 0; i < s->nv; i++)
        cJSON_Delete(s->docs[i]);
    free(s->docs);
    free(s->v);
    cJSON_Delete(s->manifest);
    dsf_gen_result_free(s->res);
    free(s->label);
    free(s->dir);
    free(s->profile);
    free(s->tier);
    memset(s, 0, sizeof *s);
}
