/* gen.c -- the gen pipeline (see gen.h): load, layer, resolve, validate
** every variant; then show or write the results (output.c). */
#include "profile/gen_run.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/teardown.h"
#include "core/xalloc.h"
#include "doc/doc.h"
#include "core/heap.h"
#include "plugin/targets.h"

/* ------------------------------------------------------------------ */

static int setup_layers(gen_run *ru, dsf_diags *d)
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

static void run_free(gen_run *ru)
{
    const dsf_profile *p = ru->profile;
    for (size_t i = 0; i < ru->nv; i++) {
        gen_variant *v = &ru->v[i];
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
        cJSON_Delete(v->differs);
        free(v->pick);
        dsf_gen_free_emitted(ru, v);
    }
    for (size_t i = 0; i < ru->nrun_emitted; i++)
        dsf_emitted_free(&ru->run_emitted[i]);
    free(ru->run_emitted);
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
    if (!ru->r->plugins) { /* else the caller's */
        dsf_plugins_free(ru->plugins);
        dsf_srccache_free(ru->sources);
    }
    dsf_profile_free(ru->profile);
    dsf_diags_free(&ru->warnings);
}

/* The run's target: --target, else the profile's `target`, else the
** plugins' default; only the plugins serving it run (plugin/targets.h). */
static int choose_target(gen_run *ru, dsf_diags *d)
{
    const dsf_profile *p = ru->profile;
    int rc = dsf_plugins_read_targets(ru->plugins, d);
    if (rc)
        return rc;
    if (ru->r->target) {
        ru->target = ru->r->target;
        rc = dsf_plugins_check_target(ru->plugins, ru->target, "--target",
                                      DSF_EUSAGE, d);
        /* A profile's configs are for its target's family: another
        ** plugin's target would judge them by rules not theirs. */
        const char *own = dsf_plugins_target_owner(ru->plugins, p->target);
        const char *asked = dsf_plugins_target_owner(ru->plugins,
                                                     ru->target);
        if (!rc && own && strcmp(own, asked)) {
            dsf_diag *g = dsf_diag_add(
                d, DSF_ERROR, NULL, 0, 0,
                "--target %s is plugin %s's, but profile '%s' is for "
                "target '%s' (plugin %s)", ru->target, asked,
                p->chain[p->nchain - 1].name, p->target, own);
            dsf_diag_set_hint(g, "choose a target of plugin %s, or a "
                                 "profile for target '%s'", own,
                              ru->target);
            rc = DSF_EUSAGE;
        }
    } else if (p->target) {
        ru->target = p->target;
        rc = dsf_plugins_check_target(ru->plugins, ru->target,
                                      "the profile's 'target'", DSF_EINPUT,
                                      d);
        dsf_diag *g = rc ? dsf_diags_last(d) : NULL;
        if (g) {
            free(g->file);
            g->file = dsf_xstrdup(
                dsf_profile_src_where(&p->chain[p->target_from]));
        }
    } else {
        ru->target = dsf_plugins_default_target(ru->plugins);
    }
    if (!rc)
        dsf_plugins_use_target(ru->plugins, ru->target);
    return rc;
}

/* Loads, layers, resolves and validates every variant of ru->r. */
static int evaluate(gen_run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    ru->sources = r->plugins ? r->sources : dsf_srccache_new();
    ru->plugins = r->plugins;
    dsf_profile_ctx pc = {r->profile_dirs, r->plugin_dirs, ru->sources,
                          r->limits, &ru->warnings, r->repo};
    int rc = dsf_profile_load(&ru->profile, &pc, r->profile, d);
    if (!rc && !ru->plugins)
        rc = dsf_plugins_load(&ru->plugins, r->plugin_dirs, ru->sources,
                              r->limits, &ru->warnings, d);
    if (!rc)
        rc = choose_target(ru, d);
    if (!rc) /* the summary table's columns, the manifest's layout */
        rc = dsf_plugins_read_summaries(ru->plugins, d);
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
            dsf_heap_follow();
            rc = dsf_gen_eval_variant(ru, i, d, &erc, &from);
        }
    /* The run emitters see the whole run: only a run without errors. */
    if (!rc && ru->nemit_sel && !dsf_diags_count(d, DSF_ERROR))
        rc = dsf_gen_emit_run(ru, d);
    if (!rc)
        rc = dsf_gen_check_emitted_names(ru, d);
    if (!rc && ru->out && !dsf_diags_count(d, DSF_ERROR))
        rc = dsf_gen_out_run_files(ru, d);
    dsf_diags_move(d, &ru->warnings);
    if (!rc && dsf_diags_count(d, DSF_ERROR))
        rc = DSF_EVALID;
    return rc;
}

/* Whether every variant was built (has its document): a run stopped by
** its rules' errors, not by a failed build. */
static bool all_built(const gen_run *ru)
{
    if (!ru->nv)
        return false;
    for (size_t i = 0; i < ru->nv; i++)
        if (!ru->v[i].doc)
            return false;
    return true;
}

int dsf_gen_run(const dsf_gen_request *r, dsf_diags *d)
{
    gen_run ru;
    memset(&ru, 0, sizeof ru);
    ru.r = r;
    int rc = evaluate(&ru, d);
    rc = dsf_gen_out_finish(&ru, rc, d); /* -o: all or nothing */
    /* --why shows the provenance even when the rules found errors: that
    ** is when it is needed (the errors follow, and the exit code is 1). */
    if (rc == DSF_EVALID && r->why && all_built(&ru))
        dsf_gen_print_why(&ru, d);
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
    gen_run ru;
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
    const gen_variant *v = &res->ru.v[i];
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
