/* manifest_build.c -- this run's manifest.json (dsf_gen_manifest) and
** the report layout it records; below output.c (which writes it) and
** report_out.c (which draws the page from it). */
#include "profile/gen_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "doc/jsondiff.h"
#include "lua/dsflib.h"

cJSON *dsf_gen_report_layout(gen_run *ru)
{
    /* The first plugin that declares a report layout draws the page. */
    size_t np;
    const dsf_plugin_info *pi = dsf_plugins_list(ru->plugins, &np);
    for (size_t i = 0; i < np; i++)
        if (pi[i].report)
            return cJSON_Duplicate(pi[i].report, 1);
    return NULL;
}

/* The files the emitters made for v: [{emitter, file, sha256}]. */
static cJSON *emitted_json(const gen_variant *v)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t k = 0; k < v->nemitted; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "emitter", v->emitted[k].by->name);
        cJSON_AddStringToObject(o, "file", v->emitted[k].file);
        cJSON_AddStringToObject(o, "sha256", v->emitted[k].sha256);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

cJSON *dsf_gen_manifest_head(gen_run *ru)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "dsforge_version", dsf_version);
    cJSON_AddStringToObject(m, "profile", p->chain[p->nchain - 1].name);
    cJSON_AddStringToObject(m, "target", ru->target);
    cJSON *chain = cJSON_AddArrayToObject(m, "chain");
    for (size_t i = 0; i < p->nchain; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", p->chain[i].name);
        cJSON_AddStringToObject(c, "origin", p->chain[i].origin);
        cJSON_AddStringToObject(c, "sha256", p->chain[i].sha256);
        cJSON_AddItemToArray(chain, c);
    }
    cJSON *plugs = cJSON_AddArrayToObject(m, "plugins");
    size_t np;
    const dsf_plugin_info *pi = dsf_plugins_list(ru->plugins, &np);
    for (size_t i = 0; i < np; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", pi[i].name);
        cJSON_AddStringToObject(c, "version", pi[i].version);
        cJSON_AddStringToObject(c, "origin", pi[i].origin);
        cJSON_AddStringToObject(c, "init_sha256", pi[i].sha256);
        cJSON_AddItemToArray(plugs, c);
    }
    cJSON *layers = cJSON_AddArrayToObject(m, "layers");
    for (size_t i = 0; i < p->nchain; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "kind", "profile");
        cJSON_AddStringToObject(c, "name", p->chain[i].name);
        cJSON_AddItemToArray(layers, c);
    }
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "kind", "tier");
    cJSON_AddItemToArray(layers, c);
    for (size_t i = 0; i < r->nfiles; i++) {
        c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "kind", "file");
        cJSON_AddStringToObject(c, "path", r->files[i]);
        cJSON_AddStringToObject(c, "sha256", ru->files[i].sha256);
        cJSON_AddItemToArray(layers, c);
    }
    for (size_t i = 0; i < r->nedits; i++) {
        c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "kind", "edit");
        cJSON_AddStringToObject(c, "arg", r->edits[i].arg);
        cJSON_AddItemToArray(layers, c);
    }
    cJSON *pa = cJSON_AddObjectToObject(m, "param_args");
    for (size_t i = 0; i < r->nparams; i++)
        cJSON_AddStringToObject(pa, r->params[i].key, r->params[i].value);
    /* the files params name (a model's config.json), by content */
    if (ru->param_files)
        cJSON_AddItemToObject(m, "param_files",
                              cJSON_Duplicate(ru->param_files, 1));
    cJSON *mx = cJSON_AddObjectToObject(m, "matrix");
    for (size_t a = 0; a < r->nmatrix; a++) {
        if (r->matrix[a].files) {
            cJSON *mf = cJSON_GetObjectItemCaseSensitive(m, "matrix_files");
            if (!mf)
                mf = cJSON_AddArrayToObject(m, "matrix_files");
            cJSON *axis = cJSON_CreateArray();
            for (size_t k = 0; k < r->matrix[a].n; k++) {
                c = cJSON_CreateObject();
                cJSON_AddStringToObject(c, "path", r->matrix[a].values[k]);
                cJSON_AddStringToObject(c, "sha256",
                                        ru->sweeps[a].files[k].sha256);
                cJSON_AddItemToArray(axis, c);
            }
            cJSON_AddItemToArray(mf, axis);
            continue;
        }
        cJSON *vals = cJSON_AddArrayToObject(mx, r->matrix[a].key);
        for (size_t k = 0; k < r->matrix[a].n; k++)
            cJSON_AddItemToArray(vals,
                                 cJSON_CreateString(r->matrix[a].values[k]));
    }
    cJSON *layout = dsf_gen_report_layout(ru);
    if (layout)
        cJSON_AddItemToObject(m, "report_layout", layout);
    if (ru->nv)
        cJSON_AddStringToObject(m, "control", ru->v[0].name);
    return m;
}

cJSON *dsf_gen_manifest_entry(gen_run *ru, gen_variant *v)
{
    const dsf_profile *p = ru->profile;
    const char *pname = p->chain[p->nchain - 1].name;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "profile", pname);
    cJSON_AddStringToObject(e, "name", v->name);
    char *file = dsf_xasprintf("%s-%s.json", pname, v->name);
    cJSON_AddStringToObject(e, "file", file);
    free(file);
    cJSON_AddStringToObject(e, "sha256", v->sha256);
    cJSON_AddStringToObject(e, "tier", v->tier ? v->tier->name : "");
    /* The first variant is the control: each variant lists the paths
    ** where it differs from it, so tools downstream need not diff. */
    bool is_control = v == &ru->v[0];
    if (is_control && !ru->control)
        ru->control = cJSON_Parse(v->bytes);
    cJSON *diff = v->differs;
    v->differs = NULL;
    if (!diff && is_control)
        diff = cJSON_CreateArray();
    if (!diff) { /* the document is gone: read back from its bytes */
        cJSON *doc = cJSON_Parse(v->bytes);
        diff = dsf_jsondiff_paths(ru->control, doc);
        cJSON_Delete(doc);
    }
    cJSON_AddItemToObject(e, "differs_from_control", diff);
    /* The entry is the last use of params, summary and findings: move
    ** them (a 1,000-variant sweep would hold them twice). */
    cJSON_AddItemToObject(e, "params", v->params);
    v->params = NULL;
    if (v->extra) {
        cJSON_AddItemToObject(e, "summary", v->extra);
        v->extra = NULL;
    }
    if (v->findings) {
        cJSON_AddItemToObject(e, "findings", v->findings);
        v->findings = NULL;
    }
    if (ru->nemit_sel)
        cJSON_AddItemToObject(e, "emitted", emitted_json(v));
    return e;
}

cJSON *dsf_gen_manifest(gen_run *ru)
{
    cJSON *m = dsf_gen_manifest_head(ru);
    cJSON_AddItemToObject(m, "variants", ru->entries ? ru->entries
                                                     : cJSON_CreateArray());
    ru->entries = NULL;
    cJSON *emitted = dsf_gen_run_emitted_json(ru);
    if (emitted)
        cJSON_AddItemToObject(m, "emitted", emitted);
    return m;
}
