/* gen_variant.c -- one variant of a gen run (see gen_run.h): its layers,
** resolvers, summaries and rules, then its emitters and its output. */
#include "profile/gen_run.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "doc/jsondiff.h"
#include "doc/merge.h"
#include "json/jsonout.h"
#include "plugin/variant_tables.h"

/* Whether name is one of the comma-separated names of list. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',')) {
        if (*p == ',')
            p++;
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
            return true;
    }
    return false;
}

/* The last --param or --matrix argument that set one of the params a
** finding depends on (f->params), as "argument #N" and its text; false
** when none did (the finding is then located by its path). */
static bool param_argument(const gen_run *ru, const dsf_finding *f, int *argno,
                           dsf_buf *text)
{
    const dsf_gen_request *r = ru->r;
    *argno = 0;
    for (size_t i = 0; f->params && i < r->nparams; i++)
        if (listed(f->params, r->params[i].key) &&
            r->params[i].argno > *argno) {
            *argno = r->params[i].argno;
            text->len = 0;
            dsf_buf_printf(text, "--param %s=%s", r->params[i].key,
                           r->params[i].value);
        }
    for (size_t a = 0; f->params && a < r->nmatrix; a++)
        if (ru->sweeps[a].is_param && listed(f->params, r->matrix[a].key) &&
            r->matrix[a].argno > *argno) {
            *argno = r->matrix[a].argno;
            text->len = 0;
            dsf_buf_printf(text, "--matrix %s", r->matrix[a].key);
        }
    return *argno > 0;
}

/* A finding located where its cause is: the --param or --matrix argument
** that set a param it depends on; else the layer that set the value at
** its path (or an ancestor; or, for a value no event names, such as an
** object an edit a.b=1 made, the layer that made it; for a value a
** plugin's resolver set, the layer with a file that set it before); else
** the profile's build. A finding blamed on a command-line argument quotes it. */
static void finding_to_diag(gen_run *ru, const gen_variant *v, const dsf_finding *f,
                            dsf_diags *d)
{
    dsf_buf argtext = DSF_BUF_INIT;
    int argno;
    char *argfile = NULL;
    const char *file = NULL;
    int line = 0, col = 0;
    const dsf_profile_src *leaf = &ru->profile->chain[ru->profile->nchain - 1];
    const dsf_prov_event *e = NULL;
    if (param_argument(ru, f, &argno, &argtext)) {
        argfile = dsf_xasprintf("argument #%d", argno);
        file = argfile;
    } else {
        e = dsf_prov_origin(&v->prov, f->path);
        if (!e)
            e = dsf_prov_maker(&v->prov, f->path);
        /* a plugin's resolver has no file: the layer that wrote what it
        ** replaced (the profile's "auto") has one */
        if (e && !e->layer->file && dsf_prov_origin_located(&v->prov,
                                                            f->path))
            e = dsf_prov_origin_located(&v->prov, f->path);
    }
    if (argfile) {
        /* located at the argument */
    } else if (e) {
        file = e->layer->file;
        line = e->line;
        col = e->col;
        if (!strcmp(e->layer->kind, "edit"))
            dsf_buf_puts(&argtext, e->layer->label);
    } else {
        file = dsf_profile_src_where(leaf);
        line = leaf->build_line;
    }
    dsf_diag *g = dsf_diag_add(d, f->severity, file, line, col,
                               "variant %s: %s%s%s%s%s%s", v->name,
                               argtext.len ? "'" : "",
                               argtext.len ? argtext.data : "",
                               argtext.len ? "': " : "", f->path,
                               f->path[0] ? ": " : "", f->message);
    dsf_buf_free(&argtext);
    free(argfile);
    dsf_diag_set_rule(g, f->rule);
    dsf_diag_set_path(g, f->path);
    if (f->fix)
        dsf_diag_set_hint(g, "%s", f->fix);
}

/* The findings as data, for callers that compare variants. */
static cJSON *findings_json(const dsf_findings *f)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < f->len; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "rule", f->items[i].rule);
        cJSON_AddStringToObject(o, "severity",
                                dsf_severity_name(f->items[i].severity));
        cJSON_AddStringToObject(o, "path", f->items[i].path);
        cJSON_AddStringToObject(o, "message", f->items[i].message);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* Keeps what the summary and the manifest need (the columns' cells and
** the merged plugin summary), then drops the document and its
** provenance: a 1,000-variant sweep holds only the rendered files, not
** 1,000 documents (unless --why needs the provenance). */
static void keep_summary(gen_run *ru, gen_variant *v)
{
    if (!ru->r->why && !ru->keep) {
        cJSON_Delete(v->doc);
        v->doc = NULL;
        dsf_prov_free(&v->prov);
    }
    cJSON_Delete(v->inputs);
    v->inputs = NULL;
}

static int eval_variant(gen_run *ru, gen_variant *v, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    dsf_profile_ctx pc = {r->profile_dirs, r->plugin_dirs, ru->sources,
                          r->limits, &ru->warnings, r->repo};
    /* Only --why shows the values the layers set (output.c): without it,
    ** and unless the caller keeps the provenance, the events go without
    ** their values' text. */
    v->prov.no_values = !r->why && !ru->keep;
    dsf_gen_variant_inputs(ru, v);
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddStringToObject(extra, "profile",
                            ru->profile->chain[ru->profile->nchain - 1].name);
    cJSON_AddStringToObject(extra, "variant", v->name);
    cJSON_AddStringToObject(extra, "tier", v->tier ? v->tier->name : "");
    cJSON_AddStringToObject(extra, "target", ru->target);
    for (const cJSON *m = v->inputs ? v->inputs->child : NULL; m; m = m->next)
        cJSON_AddItemToObject(extra, m->string, cJSON_Duplicate(m, 1));
    cJSON *prepared = NULL;
    int rc = dsf_profile_build(&v->doc, &prepared, ru->profile, &pc,
                               v->params, extra, ru->chain_layers, &v->prov,
                               d);
    cJSON_Delete(extra);
    if (rc)
        return rc;
    cJSON_Delete(v->params);
    v->params = prepared; /* what build saw, for resolvers and manifest */
    if (v->tier && v->tier->config) {
        ru->tier_layer.label = ru->tier_label;
        dsf_merge(v->doc, v->tier->config, &ru->tier_layer, NULL, &v->prov);
    }
    for (size_t i = 0; i < r->nfiles; i++)
        dsf_merge(v->doc, ru->files[i].doc, &ru->files[i].layer,
                  ru->files[i].src, &v->prov);
    for (size_t i = 0; i < r->nedits; i++) {
        cJSON *touched;
        char *err;
        const dsf_edit *e = &r->edits[i];
        if (dsf_edit_apply(v->doc, e, &touched, &err) != 0) {
            dsf_diag_add(d, DSF_ERROR, ru->edit_layers[i].file, 0, 0,
                         "%s (variant %s)", err, v->name);
            free(err);
            return DSF_EUSAGE;
        }
        if (e->op == DSF_EDIT_DELETE)
            dsf_prov_add(&v->prov, e->path_text, DSF_PROV_DELETE,
                         &ru->edit_layers[i], 0, 0, NULL);
        else
            dsf_prov_record_tree(&v->prov, e->path_text, touched,
                                 DSF_PROV_OVERRIDE, &ru->edit_layers[i],
                                 NULL);
    }
    rc = dsf_gen_apply_sweeps(ru, v, d);
    if (rc)
        return rc;
    /* A plugin's strict option: the warnings of rules of its strictness
    ** class are errors (a rule declares its class; the core knows no
    ** rule). */
    const dsf_profile *pr = ru->profile;
    char *stem = dsf_xasprintf("%s-%s", pr->chain[pr->nchain - 1].name,
                               v->name);
    dsf_validate_opts vo = {.target = ru->target, .mode = "gen",
                            .params = v->params,
                            .strict = r->strict,
                            .values = r->values, .variant = stem};
    dsf_plugins_begin_variant(ru->plugins, v->params);
    rc = dsf_plugins_resolve(ru->plugins, &v->doc, &vo, &v->prov, d);
    if (rc) {
        dsf_plugins_release_variant(ru->plugins);
        free(stem);
        return rc;
    }
    /* What the plugins say about the finished variant: their summaries
    ** (for the manifest and their rules) and the summary table's cells. */
    size_t ncol;
    dsf_plugins_columns(ru->plugins, &ncol);
    v->cells = dsf_xcalloc(ncol + 1, sizeof *v->cells);
    dsf_variant_view view = {v->name, v->tier ? v->tier->name : "", v->doc};
    cJSON *per_plugin = NULL;
    /* Each plugin's rules get the tables its summarize had
    ** (variant_tables.h). */
    dsf_plugins_hold_variant(ru->plugins, v->doc);
    rc = dsf_plugins_summarize(ru->plugins, &view, &vo, &per_plugin,
                               &v->extra, v->cells, d);
    if (rc) {
        dsf_plugins_release_variant(ru->plugins);
        free(stem);
        return rc;
    }
    vo.summaries = per_plugin;
    dsf_findings f = DSF_FINDINGS_INIT;
    rc = dsf_plugins_validate(ru->plugins, v->doc, &vo, &f, d);
    dsf_plugins_release_variant(ru->plugins);
    cJSON_Delete(per_plugin);
    free(stem);
    for (size_t i = 0; i < f.len; i++)
        finding_to_diag(ru, v, &f.items[i], d);
    v->findings = findings_json(&f); /* for the manifest and diff */
    dsf_findings_free(&f);
    if (rc)
        return rc;
    /* A dry sweep shows only the table: no bytes, no hash to make. */
    if (ru->stream && !r->outdir && !r->report)
        return 0;
    dsf_buf b = DSF_BUF_INIT;
    dsf_json_write(&b, v->doc, true);
    v->bytes = dsf_buf_take(&b);
    dsf_sha256_hex(v->sha256, v->bytes, strlen(v->bytes));
    /* The manifest's differs_from_control, from the document itself
    ** rather than from its bytes read back: the same paths (the bytes
    ** are the document, numbers round-trip, strings are valid UTF-8 and
    ** the diff compares numbers by value and keys in sorted order). The
    ** control is read from its bytes when its entry is made (manifest_
    ** build.c), before any other variant's. */
    if ((r->outdir || r->report) && ru->control && v != &ru->v[0])
        v->differs = dsf_jsondiff_paths(ru->control, v->doc);
    return 0;
}

int dsf_gen_eval_variant(gen_run *ru, size_t i, dsf_diags *d, int *eval_rc,
                    size_t *out_from)
{
    gen_variant *v = &ru->v[i];
    int rc = *eval_rc = eval_variant(ru, v, d);
    *out_from = d->len;
    /* The emitters' files, while the document is held (a run with
    ** errors writes nothing: no need). */
    if (!rc && !dsf_diags_count(d, DSF_ERROR))
        rc = dsf_gen_emit_variant(ru, v, d);
    keep_summary(ru, v);
    if (!rc && ru->stream)
        rc = dsf_gen_out_variant(ru, v, d);
    return rc;
}
