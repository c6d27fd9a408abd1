/* define.c -- textDocument/definition in a variant of a `gen -o` output
** directory: the variant is made again from what its manifest.json
** records (profile, tier, --param values, -f files, edits, --matrix
** axes cut to this variant's values) with its
** provenance, as `gen --why` makes it, and the layer that set the value
** under the cursor is where it goes: a profile's line or a -f file's
** line. A value a command-line argument set has no file: null, not a
** made-up location. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "doc/jsondiff.h"
#include "json/jsonc.h"
#include "doc/prov.h"
#include "lsp/jcursor.h"
#include "lsp/outdir.h"
#include "lsp/session.h"
#include "plugin/targets.h"
#include "lsp/utf16.h"
#include "profile/gen.h"

/* The config path of the member under c (its key or its value), up to
** the first array on the way; NULL when not on a member. */
static char *member_path(const dsf_jcursor *c)
{
    if (c->at == DSF_JC_NONE || !c->key || !*c->key)
        return NULL;
    dsf_buf b = DSF_BUF_INIT;
    for (size_t i = 0; i < c->depth; i++) {
        if (!c->path[i]) /* inside an array: the member that holds it */
            return b.len ? dsf_buf_take(&b) : NULL;
        dsf_jpath_append_key(&b, c->path[i]);
    }
    if (c->in_array)
        return b.len ? dsf_buf_take(&b) : NULL;
    dsf_jpath_append_key(&b, c->key);
    return dsf_buf_take(&b);
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* What the request is made of; freed by request_free. */
typedef struct made {
    dsf_gen_request r;
    const char *tier[1];
    const char *none[1];
    dsf_param_arg *params;
    const char **files;
    dsf_edit *edits;
    dsf_matrix_axis *axes;
} made;

static void request_free(made *m)
{
    for (size_t i = 0; i < m->r.nedits; i++)
        dsf_edit_free(&m->edits[i]);
    for (size_t i = 0; i < m->r.nmatrix; i++)
        free(m->axes[i].values);
    free(m->axes);
    free(m->edits);
    free(m->params);
    free(m->files);
}

/* Does the --matrix value text v give x (a variant's param, or its
** config's value at the axis's path)? As gen reads it: JSON when it
** parses as JSON, else a string. */
static bool value_is(const char *v, const cJSON *x)
{
    cJSON *j = cJSON_Parse(v);
    bool eq = j ? dsf_json_equal(j, x)
                : cJSON_IsString(x) && !strcmp(x->valuestring, v);
    cJSON_Delete(j);
    return eq;
}

/* The sweep's axes (the manifest's "matrix"), each cut to the values
** that give this variant (its params; its config at a path, read from
** the file on disk): usually one variant is made, not the whole sweep.
** An axis no value matches keeps all of them (the variant is then
** found among the cells by its params and config). */
static void axes_of(made *m, const cJSON *matrix, const cJSON *variant,
                    const cJSON *disk)
{
    size_t n = (size_t)cJSON_GetArraySize(matrix);
    m->axes = dsf_xcalloc(n + 1, sizeof *m->axes);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(variant,
                                                           "params");
    const cJSON *ax;
    cJSON_ArrayForEach(ax, matrix)
    {
        dsf_matrix_axis *a = &m->axes[m->r.nmatrix++];
        size_t nv = (size_t)cJSON_GetArraySize(ax);
        a->key = ax->string;
        a->values = dsf_xcalloc(nv + 1, sizeof *a->values);
        const cJSON *here = cJSON_GetObjectItemCaseSensitive(params,
                                                             ax->string);
        if (!here) {
            dsf_jpath jp;
            char *err = NULL;
            if (!dsf_jpath_parse(&jp, ax->string, &err)) {
                here = dsf_jpath_get((cJSON *)disk, &jp);
                dsf_jpath_free(&jp);
            }
            free(err);
        }
        const cJSON *v;
        cJSON_ArrayForEach(v, ax)
        {
            if (cJSON_IsString(v) && here && value_is(v->valuestring, here))
                a->values[a->n++] = v->valuestring;
        }
        if (!a->n) {
            cJSON_ArrayForEach(v, ax)
            {
                if (cJSON_IsString(v))
                    a->values[a->n++] = v->valuestring;
            }
        }
    }
    m->r.matrix = m->axes;
}

/* The request that makes the manifest's variant again; -1 when the
** manifest does not say enough (a --matrix-file sweep, an edit that does
** not parse). disk: the variant's config as gen wrote it. */
static int request_of(made *m, const dsf_lsp *s, const cJSON *man,
                      const cJSON *variant, const cJSON *disk)
{
    memset(m, 0, sizeof *m);
    dsf_gen_request *r = &m->r;
    r->profile = str(man, "profile");
    if (!r->profile || cJSON_GetObjectItemCaseSensitive(man, "matrix_files"))
        return -1;
    axes_of(m, cJSON_GetObjectItemCaseSensitive(man, "matrix"), variant,
            disk);
    const char *tier = str(variant, "tier");
    if (tier && *tier) {
        m->tier[0] = tier;
        r->tiers = m->tier;
        r->ntiers = 1;
    }
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(man, "param_args");
    m->params = dsf_xcalloc((size_t)cJSON_GetArraySize(pa) + 1,
                            sizeof *m->params);
    const cJSON *x;
    cJSON_ArrayForEach(x, pa)
    {
        if (!cJSON_IsString(x))
            return -1;
        m->params[r->nparams++] = (dsf_param_arg){x->string, x->valuestring,
                                                  0};
    }
    r->params = m->params;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(man, "layers");
    size_t nl = (size_t)cJSON_GetArraySize(layers);
    m->files = dsf_xcalloc(nl + 1, sizeof *m->files);
    m->edits = dsf_xcalloc(nl + 1, sizeof *m->edits);
    r->files = m->files;
    r->edits = m->edits;
    cJSON_ArrayForEach(x, layers)
    {
        const char *kind = str(x, "kind");
        if (kind && !strcmp(kind, "file") && str(x, "path")) {
            m->files[r->nfiles++] = str(x, "path");
        } else if (kind && !strcmp(kind, "edit") && str(x, "arg")) {
            char *err = NULL;
            if (dsf_edit_parse(&m->edits[r->nedits], str(x, "arg"),
                               (int)r->nedits + 1, &err)) {
                free(err);
                return -1;
            }
            r->nedits++;
        }
    }
    r->target = str(man, "target") ? str(man, "target")
                                   : dsf_plugins_default_target(s->plugins);
    r->values = s->values;
    m->none[0] = "none"; /* the emitters' files are not needed */
    r->emit = m->none;
    r->nemit = 1;
    r->emit_given = true;
    r->profile_dirs = s->env->profile_dirs;
    r->plugin_dirs = s->env->plugin_dirs;
    r->limits = s->env->limits;
    r->repo = s->env->repo;
    r->jobs = 1;
    return 0;
}

/* The Location of e (NULL: a command-line argument, or no file). */
static cJSON *location(const dsf_prov_event *e)
{
    const char *kind = e->layer->kind;
    if (!e->layer->file || !strcmp(kind, "edit") || !strcmp(kind, "sweep"))
        return NULL;
    char real[PATH_MAX];
    if (!realpath(e->layer->file, real))
        return NULL; /* a built-in or a repository's profile: no file */
    int line = e->line > 0 ? e->line : e->layer->line;
    int col = e->line > 0 ? e->col : e->layer->col;
    cJSON *loc = cJSON_CreateObject();
    char *uri = dsf_lsp_path_uri(real);
    cJSON_AddStringToObject(loc, "uri", uri);
    free(uri);
    cJSON *r = cJSON_AddObjectToObject(loc, "range");
    for (int i = 0; i < 2; i++) {
        cJSON *p = cJSON_AddObjectToObject(r, i ? "end" : "start");
        cJSON_AddNumberToObject(p, "line", line > 0 ? line - 1 : 0);
        cJSON_AddNumberToObject(p, "character", col > 0 ? col - 1 : 0);
    }
    return loc;
}

/* The variant's config as gen wrote it (the file of uri), or NULL. */
static cJSON *on_disk(const char *uri)
{
    char *path = dsf_lsp_uri_path(uri);
    cJSON *doc = NULL;
    dsf_diags d = DSF_DIAGS_INIT;
    if (path && dsf_json_load_file(&doc, NULL, path, &d)) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    dsf_diags_free(&d);
    free(path);
    return doc;
}

cJSON *dsf_lsp_definition(dsf_lsp *s, const dsf_lsp_doc *doc, long line,
                          long character)
{
    if (!s->env)
        return NULL;
    const cJSON *variant;
    cJSON *man = dsf_lsp_manifest_of(doc->uri, &variant);
    if (!man)
        return NULL;
    size_t off = dsf_utf16_offset(doc->text, doc->len, line, character);
    dsf_jcursor c;
    dsf_jcursor_find(&c, doc->text, doc->len, off);
    char *path = member_path(&c);
    dsf_jcursor_free(&c);
    cJSON *disk = path ? on_disk(doc->uri) : NULL;
    made m;
    cJSON *loc = NULL;
    if (path && !request_of(&m, s, man, variant, disk)) {
        dsf_gen_result *res = NULL;
        dsf_diags d = DSF_DIAGS_INIT;
        if (dsf_gen_eval(&res, &m.r, &d))
            dsf_lsp_log("go to definition: the variant cannot be made "
                        "again: %s", d.len ? d.items[0].message : "?");
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(variant,
                                                               "params");
        for (size_t i = 0; !loc && res && i < dsf_gen_result_count(res);
             i++) {
            dsf_gen_variant gv;
            dsf_gen_result_variant(res, i, &gv);
            /* the variant: its params and config as the manifest and the
            ** file say (the names of a sweep's cells depend on the order
            ** of its axes, which the manifest does not keep) */
            if ((params && (!gv.params ||
                            !dsf_json_equal(gv.params, params))) ||
                (disk && (!gv.doc || !dsf_json_equal(gv.doc, disk))))
                continue;
            const dsf_prov_event *e = dsf_prov_origin(gv.prov, path);
            if (e && !e->layer->file)
                e = dsf_prov_origin_located(gv.prov, path); /* a plugin's */
            if (!e)
                e = dsf_prov_maker(gv.prov, path);
            if (e)
                loc = location(e);
        }
        dsf_gen_result_free(res);
        dsf_diags_free(&d);
    }
    if (path)
        request_free(&m);
    cJSON_Delete(disk);
    free(path);
    cJSON_Delete(man);
    return loc;
}
