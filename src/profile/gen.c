/* gen.c -- the gen pipeline (see gen.h): load, layer, resolve, validate
** every variant; then show or write the results (output.c). */
#include "profile/gen_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/teardown.h"
#include "core/xalloc.h"
#include "doc/doc.h"
#include "doc/merge.h"
#include "json/jsonout.h"

static void finding_to_diag(run *ru, const variant *v, const dsf_finding *f,
                            dsf_diags *d)
{
    const dsf_prov_event *e = dsf_prov_origin(&v->prov, f->path);
    const char *file = NULL;
    int line = 0, col = 0;
    const dsf_profile_src *leaf = &ru->profile->chain[ru->profile->nchain - 1];
    if (e) {
        file = e->layer->file;
        line = e->line;
        col = e->col;
    } else {
        file = dsf_profile_src_where(leaf);
        line = leaf->build_line;
    }
    dsf_diag *g = dsf_diag_add(d, f->severity, file, line, col,
                               "variant %s: %s%s%s", v->name, f->path,
                               f->path[0] ? ": " : "", f->message);
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
static void keep_summary(run *ru, variant *v)
{
    if (!ru->r->why && !ru->keep) {
        cJSON_Delete(v->doc);
        v->doc = NULL;
        dsf_prov_free(&v->prov);
    }
    cJSON_Delete(v->inputs);
    v->inputs = NULL;
}

static int eval_variant(run *ru, variant *v, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    dsf_profile_ctx pc = {r->profile_dirs, r->plugin_dirs, ru->sources,
                          r->limits, &ru->warnings, r->repo};
    dsf_gen_variant_inputs(ru, v);
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddStringToObject(extra, "profile",
                            ru->profile->chain[ru->profile->nchain - 1].name);
    cJSON_AddStringToObject(extra, "variant", v->name);
    cJSON_AddStringToObject(extra, "tier", v->tier ? v->tier->name : "");
    cJSON_AddStringToObject(extra, "target", r->target);
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
    /* --strict-fit: the warnings of rules of strictness class "fit" are
    ** errors (a rule declares its class; the core knows no rule). */
    dsf_validate_opts vo = {r->target, "gen", v->params, NULL,
                            r->strict_fit ? "fit" : NULL, r->ds_version};
    rc = dsf_plugins_resolve(ru->plugins, &v->doc, &vo, &v->prov, d);
    if (rc)
        return rc;
    /* What the plugins say about the finished variant: their summaries
    ** (for the manifest and their rules) and the summary table's cells. */
    size_t ncol;
    dsf_plugins_columns(ru->plugins, &ncol);
    v->cells = dsf_xcalloc(ncol + 1, sizeof *v->cells);
    dsf_variant_view view = {v->name, v->tier ? v->tier->name : "", v->doc};
    cJSON *per_plugin = NULL;
    rc = dsf_plugins_summarize(ru->plugins, &view, &vo, &per_plugin,
                               &v->extra, v->cells, d);
    if (rc)
        return rc;
    vo.summaries = per_plugin;
    dsf_findings f = DSF_FINDINGS_INIT;
    rc = dsf_plugins_validate(ru->plugins, v->doc, &vo, &f, d);
    cJSON_Delete(per_plugin);
    for (size_t i = 0; i < f.len; i++)
        finding_to_diag(ru, v, &f.items[i], d);
    v->findings = findings_json(&f); /* for the manifest and diff */
    dsf_findings_free(&f);
    if (rc)
        return rc;
    dsf_buf b = DSF_BUF_INIT;
    dsf_json_write(&b, v->doc, true);
    v->bytes = dsf_buf_take(&b);
    dsf_sha256_hex(v->sha256, v->bytes, strlen(v->bytes));
    return 0;
}

int dsf_gen_eval_variant(run *ru, size_t i, dsf_diags *d, int *eval_rc,
                    size_t *out_from)
{
    variant *v = &ru->v[i];
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

/* ------------------------------------------------------------------ */

static int setup_layers(run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    ru->chain_layers = dsf_xcalloc(p->nchain, sizeof *ru->chain_layers);
    ru->chain_labels = dsf_xcalloc(p->nchain, sizeof *ru->chain_labels);
    for (size_t i = 0; i < p->nchain; i++) {
        ru->chain_labels[i] = dsf_xasprintf("profile %s", p->chain[i].name);
        ru->chain_layers[i].kind = "profile";
        ru->chain_layers[i].label = ru->chain_labels[i];
        ru->chain_layers[i].file = dsf_profile_src_where(&p->chain[i]);
        ru->chain_layers[i].line = p->chain[i].build_line;
    }
    ru->tier_label = dsf_xstrdup("tier overlay");
    ru->tier_layer.kind = "tier";
    ru->tier_layer.label = ru->tier_label;
    ru->tier_layer.file = dsf_profile_src_where(&p->chain[p->nchain - 1]);
    ru->files = dsf_xcalloc(r->nfiles + 1, sizeof *ru->files);
    for (size_t i = 0; i < r->nfiles; i++) {
        char *label = dsf_xasprintf("-f %s", r->files[i]);
        int rc = dsf_gen_load_override(&ru->files[i], r->files[i], label, d);
        free(label);
        if (rc)
            return rc;
    }
    ru->edit_layers = dsf_xcalloc(r->nedits + 1, sizeof *ru->edit_layers);
    ru->edit_labels = dsf_xcalloc(r->nedits + 1, sizeof *ru->edit_labels);
    for (size_t i = 0; i < r->nedits; i++) {
        ru->edit_labels[i] = dsf_xasprintf("argument #%d",
                                           r->edits[i].argno);
        ru->edit_layers[i].kind = "edit";
        ru->edit_layers[i].label = r->edits[i].arg;
        ru->edit_layers[i].file = ru->edit_labels[i];
    }
    return 0;
}

static void run_free(run *ru)
{
    const dsf_profile *p = ru->profile;
    for (size_t i = 0; i < ru->nv; i++) {
        variant *v = &ru->v[i];
        free(v->name);
        cJSON_Delete(v->params);
        cJSON_Delete(v->inputs);
        cJSON_Delete(v->doc);
        dsf_prov_free(&v->prov);
        free(v->bytes);
        cJSON_Delete(v->extra);
        if (v->cells) {
            size_t ncol;
            dsf_plugins_columns(ru->plugins, &ncol);
            for (size_t k = 0; k < ncol; k++)
                free(v->cells[k]);
            free(v->cells);
        }
        cJSON_Delete(v->findings);
        free(v->pick);
        dsf_gen_free_emitted(v);
    }
    free(ru->emit_sel);
    cJSON_Delete(ru->control);
    cJSON_Delete(ru->entries);
    dsf_gen_free_variant_inputs(ru);
    dsf_gen_free_sweeps(ru);
    cJSON_Delete(ru->detected);
    free(ru->v);
    cJSON_Delete(ru->param_files);
    if (ru->files)
        for (size_t i = 0; i < ru->r->nfiles; i++) {
            cJSON_Delete(ru->files[i].doc);
            dsf_jsrc_free(ru->files[i].src);
            free(ru->files[i].label);
        }
    free(ru->files);
    if (ru->chain_labels)
        for (size_t i = 0; i < p->nchain; i++)
            free(ru->chain_labels[i]);
    free(ru->chain_labels);
    free(ru->chain_layers);
    free(ru->tier_label);
    if (ru->edit_labels)
        for (size_t i = 0; i < ru->r->nedits; i++)
            free(ru->edit_labels[i]);
    free(ru->edit_labels);
    free(ru->edit_layers);
    dsf_plugins_free(ru->plugins);
    dsf_profile_free(ru->profile);
    dsf_srccache_free(ru->sources);
    dsf_diags_free(&ru->warnings);
}

/* Loads, layers, resolves and validates every variant of ru->r. */
static int evaluate(run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    ru->sources = dsf_srccache_new();
    dsf_profile_ctx pc = {r->profile_dirs, r->plugin_dirs, ru->sources,
                          r->limits, &ru->warnings, r->repo};
    int rc = dsf_profile_load(&ru->profile, &pc, r->profile, d);
    if (!rc)
        rc = dsf_plugins_load(&ru->plugins, r->plugin_dirs, ru->sources,
                              r->limits, &ru->warnings, d);
    if (!rc)
        rc = setup_layers(ru, d);
    if (!rc)
        rc = dsf_gen_setup_sweeps(ru, d);
    if (!rc)
        rc = dsf_gen_make_variants(ru, d);
    if (!rc)
        rc = dsf_gen_select_emitters(ru, d);
    if (!rc && r->to_stdout && ru->nv != 1)
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "--stdout prints exactly one variant, but %zu "
                            "are selected (choose one with --tier)", ru->nv);
    /* Each finished variant is written (staged) at once and dropped,
    ** but for what the summary needs: memory stays flat in a sweep. */
    ru->stream = !ru->keep && !r->why && !r->to_stdout;
    if (!rc && ru->stream && r->outdir)
        rc = dsf_gen_out_begin(ru, d);
    if (!rc && ru->stream && dsf_gen_parallel_jobs(ru) > 1)
        rc = dsf_gen_run_parallel(ru, d);
    else
        for (size_t i = 0; i < ru->nv && !rc; i++) {
            int erc;
            size_t from;
            rc = dsf_gen_eval_variant(ru, i, d, &erc, &from);
        }
    if (!rc)
        rc = dsf_gen_check_emitted_names(ru, d);
    dsf_diags_move(d, &ru->warnings);
    if (!rc && dsf_diags_count(d, DSF_ERROR))
        rc = DSF_EVALID;
    return rc;
}

int dsf_gen_run(const dsf_gen_request *r, dsf_diags *d)
{
    run ru;
    memset(&ru, 0, sizeof ru);
    ru.r = r;
    int rc = evaluate(&ru, d);
    rc = dsf_gen_out_finish(&ru, rc, d); /* -o: all or nothing */
    if (!rc) {
        if (r->why)
            dsf_gen_print_why(&ru, d);
        else if (r->to_stdout)
            fputs(ru.v[0].bytes, stdout);
        else if (r->outdir) {
            dsf_buf em = DSF_BUF_INIT;
            dsf_gen_emit_footer(&ru, &em);
            dsf_gen_print_summary(&ru, stdout);
            printf("%zu variant%s%s%s and manifest.json in %s\n", ru.nv,
                   ru.nv == 1 ? "" : "s", em.data ? ", " : "",
                   em.data ? em.data : "", r->outdir);
            dsf_buf_free(&em);
        } else {
            if (r->report)
                rc = dsf_gen_write_report(&ru, d);
            if (!rc) {
                dsf_buf em = DSF_BUF_INIT;
                dsf_gen_emit_footer(&ru, &em);
                dsf_gen_print_summary(&ru, stdout);
                printf("%zu variant%s%s%s checked; nothing written (use -o "
                       "DIR)\n", ru.nv, ru.nv == 1 ? "" : "s",
                       em.data ? " and " : "", em.data ? em.data : "");
                dsf_buf_free(&em);
            }
        }
    }
    /* The command ends here: the run's Lua states and documents go back
    ** to the OS at exit rather than object by object (core/teardown.h). */
    if (!dsf_teardown_by_exit())
        run_free(&ru);
    return rc;
}

struct dsf_gen_result {
    run ru;
};

int dsf_gen_eval(dsf_gen_result **out, const dsf_gen_request *r,
                 dsf_diags *d)
{
    dsf_gen_result *res = dsf_xcalloc(1, sizeof *res);
    res->ru.r = r;
    res->ru.keep = true;
    int rc = evaluate(&res->ru, d);
    if (rc) {
        dsf_gen_result_free(res);
        res = NULL;
    }
    *out = res;
    return rc;
}

size_t dsf_gen_result_count(const dsf_gen_result *res)
{
    return res->ru.nv;
}

void dsf_gen_result_variant(const dsf_gen_result *res, size_t i,
                            dsf_gen_variant *out)
{
    const variant *v = &res->ru.v[i];
    out->name = v->name;
    out->doc = v->doc;
    out->prov = &v->prov;
    out->params = v->params;
    out->summary = v->extra;
    out->findings = v->findings;
}

void dsf_gen_result_free(dsf_gen_result *res)
{
    if (!res)
        return;
    run_free(&res->ru);
    free(res);
}
