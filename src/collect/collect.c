/* collect.c -- see collect.h. The steps: the manifest, the declarations,
** each variant's record (inputs.c reads its files), then results.json,
** best.json and the calibration rows, all written only once every
** variant is read. */
#include "collect/collect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "collect/best.h"
#include "collect/inputs.h"
#include "collect/table.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"
#include "plugin/readers.h"

typedef struct run {
    const dsf_collect_opts *o;
    dsf_plugins *p;
    const dsf_results_decl *rs;
    dsf_needles nd;
    cJSON *manifest;
    const cJSON *variants;
    char manifest_sha[65];
    dsf_buf json;             /* results.json */
    dsf_buf calib;            /* calibration rows, JSON lines */
    dsf_collect_table table;  /* one row per variant */
    int refused;
} run;

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int load_manifest(run *r, dsf_diags *d)
{
    char *path = dsf_path_join(r->o->dir, "manifest.json");
    char *text = NULL;
    size_t len = 0;
    int rc = dsf_read_file(&text, &len, path, DSF_JSON_MAX_FILE, d);
    if (!rc)
        rc = dsf_json_parse(&r->manifest, NULL, path, text, len, d);
    if (!rc) {
        dsf_sha256_hex(r->manifest_sha, text, len);
        r->variants = cJSON_GetObjectItemCaseSensitive(r->manifest,
                                                       "variants");
        const cJSON *v = cJSON_IsArray(r->variants) ? r->variants->child
                                                    : NULL;
        for (; v && !rc; v = v->next)
            if (!str(v, "name") || !str(v, "file") || !str(v, "sha256"))
                rc = DSF_EINPUT;
        if (rc || !cJSON_IsArray(r->variants))
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "not a gen "
                                "manifest: 'variants' must list objects "
                                "with a name, file and sha256");
    }
    if (rc == DSF_EINPUT && !dsf_is_file(path)) {
        dsf_diag *g = dsf_diags_last(d);
        if (g)
            dsf_diag_set_hint(g, "collect reads a 'dsforge gen -o DIR' "
                              "output: DIR/manifest.json");
    }
    free(text);
    free(path);
    return rc;
}

static const cJSON *variant_named(const run *r, const char *name,
                                  size_t len)
{
    for (const cJSON *v = r->variants->child; v; v = v->next)
        if (strlen(str(v, "name")) == len && !strncmp(str(v, "name"), name,
                                                       len))
            return v;
    return NULL;
}

static int check_options(run *r, dsf_diags *d)
{
    for (size_t i = 0; i < r->o->n_results_for; i++) {
        const char *s = r->o->results_for[i], *eq = strchr(s, '=');
        if (!eq || eq == s || !eq[1])
            return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0, "--results-for "
                                  "takes VARIANT=DIR, got '%s'", s);
        if (!variant_named(r, s, (size_t)(eq - s)))
            return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0, "--results-for:"
                                  " no variant '%.*s' in the manifest",
                                  (int)(eq - s), s);
    }
    if (!r->o->best)
        return 0;
    for (size_t i = 0; i < r->rs->nmetrics; i++)
        if (!strcmp(r->rs->metrics[i].name, r->o->best) &&
            r->rs->metrics[i].better != DSF_BETTER_NONE)
            return 0;
    dsf_buf names = DSF_BUF_INIT;
    for (size_t i = 0; i < r->rs->nmetrics; i++)
        if (r->rs->metrics[i].better != DSF_BETTER_NONE)
            dsf_buf_printf(&names, "%s%s", names.len ? ", " : "",
                           r->rs->metrics[i].name);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "--best: '%s' is "
                               "not a metric with a better direction",
                               r->o->best);
    dsf_diag_set_hint(g, "one of: %s", names.len ? dsf_buf_str(&names) : "-");
    dsf_buf_free(&names);
    return DSF_EUSAGE;
}

/* The results directory of v and its label for messages. */
static char *results_dir(const run *r, const cJSON *v, char **label)
{
    const char *name = str(v, "name");
    size_t n = strlen(name);
    for (size_t i = 0; i < r->o->n_results_for; i++) {
        const char *s = r->o->results_for[i];
        if (!strncmp(s, name, n) && s[n] == '=') {
            *label = dsf_xstrdup(s + n + 1);
            return dsf_xstrdup(s + n + 1);
        }
    }
    const char *file = str(v, "file");
    size_t flen = strlen(file);
    if (flen > 5 && !strcmp(file + flen - 5, ".json"))
        flen -= 5;
    char *stem = dsf_xstrndup(file, flen);
    char *root = r->o->results ? dsf_xstrdup(r->o->results)
                               : dsf_path_join(r->o->dir, "results");
    char *dir = dsf_path_join(root, stem);
    *label = r->o->results ? dsf_xstrdup(dir)
                           : dsf_xconcat("results/", stem, NULL);
    free(stem);
    free(root);
    return dir;
}

static void write_header(run *r)
{
    dsf_buf *b = &r->json;
    dsf_buf_puts(b, "{\n  \"manifest_sha256\": ");
    dsf_json_write_string(b, r->manifest_sha);
    dsf_buf_puts(b, ",\n  \"control\": ");
    const char *control = str(r->manifest, "control");
    if (control)
        dsf_json_write_string(b, control);
    else
        dsf_buf_puts(b, "null");
    dsf_buf_puts(b, ",\n  \"metrics\": [");
    for (size_t i = 0; i < r->rs->nmetrics; i++) {
        const dsf_metric *m = &r->rs->metrics[i];
        dsf_buf_puts(b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        dsf_json_write_string(b, m->name);
        dsf_buf_puts(b, ", \"title\": ");
        dsf_json_write_string(b, m->title);
        dsf_buf_puts(b, ", \"unit\": ");
        dsf_json_write_string(b, m->unit);
        dsf_buf_printf(b, ", \"better\": %s}",
                       m->better == DSF_BETTER_MAX   ? "\"max\""
                       : m->better == DSF_BETTER_MIN ? "\"min\""
                                                     : "null");
    }
    dsf_buf_puts(b, "\n  ],\n  \"variants\": [");
}

/* A record marked refused: its message is an error of the run. */
static void note_refused(run *r, const cJSON *rec, dsf_diags *d)
{
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "refused")))
        return;
    const char *msg = str(rec, "message");
    dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s",
                 msg ? msg : "results refused");
    r->refused++;
}

static int one_variant(run *r, const cJSON *v, size_t i, dsf_diags *d)
{
    char *label = NULL;
    char *dir = results_dir(r, v, &label);
    cJSON *rec = NULL;
    int rc = dsf_results_begin(r->p, v, d);
    if (!rc)
        rc = dsf_collect_inputs(r->p, r->rs, &r->nd, dir, label, false, d);
    if (!rc)
        rc = dsf_results_record(r->p, &rec, d);
    if (!rc) {
        cJSON_DeleteItemFromObjectCaseSensitive(rec, "variant");
        cJSON_DeleteItemFromObjectCaseSensitive(rec, "results_dir");
        cJSON_AddItemToObject(rec, "variant",
                              cJSON_CreateString(str(v, "name")));
        cJSON_AddItemToObject(rec, "results_dir", cJSON_CreateString(label));
        dsf_buf_puts(&r->json, i ? ",\n    " : "\n    ");
        dsf_json_write(&r->json, rec, false);
        note_refused(r, rec, d);
        dsf_collect_table_add(&r->table, r->rs, rec);
    }
    if (!rc && r->o->calibration) {
        cJSON *row = NULL;
        rc = dsf_results_calibration(r->p, rec, &row, d);
        if (row) {
            dsf_json_write(&r->calib, row, false);
            dsf_buf_putc(&r->calib, '\n');
        }
        cJSON_Delete(row);
    }
    cJSON_Delete(rec);
    free(dir);
    free(label);
    return rc;
}

static void write_footer(run *r)
{
    dsf_buf *b = &r->json;
    dsf_buf_puts(b, "\n  ],\n  \"counts\": ");
    cJSON *counts = dsf_collect_table_counts(&r->table);
    dsf_json_write(b, counts, false);
    cJSON_Delete(counts);
    dsf_buf_puts(b, "\n}\n");
}

/* best.json for --best, when a variant has the metric (*text NULL when
** none has: said in the table's footer). */
static int make_best(run *r, char **text, dsf_diags *d)
{
    *text = NULL;
    size_t k = dsf_collect_table_best(&r->table, r->rs, r->o->best);
    const char *control = str(r->manifest, "control");
    if (k == (size_t)-1 || !control)
        return 0;
    const cJSON *cv = variant_named(r, control, strlen(control));
    const cJSON *bv = variant_named(r, r->table.rows[k].name,
                                    strlen(r->table.rows[k].name));
    if (!cv || !bv)
        return 0;
    cJSON *a = NULL, *b = NULL;
    char *pa = dsf_path_join(r->o->dir, str(cv, "file"));
    char *pb = dsf_path_join(r->o->dir, str(bv, "file"));
    int rc = dsf_json_load_file(&a, NULL, pa, d);
    if (!rc)
        rc = dsf_json_load_file(&b, NULL, pb, d);
    if (!rc) {
        cJSON *ov = dsf_best_override(a, b, r->rs->override_ignore,
                                      r->rs->nignore);
        char *t = dsf_json_print(ov, true);
        size_t n = strlen(t);
        *text = n && t[n - 1] == '\n' ? t : dsf_xconcat(t, "\n", NULL);
        if (*text != t)
            free(t);
        cJSON_Delete(ov);
        dsf_collect_table_set_best(&r->table, k, str(cv, "profile"),
                                   str(cv, "tier"), r->o->dir);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    free(pa);
    free(pb);
    return rc;
}

static int write_outputs(run *r, const char *best, dsf_diags *d)
{
    char *path = dsf_path_join(r->o->dir, "results.json");
    int rc = dsf_write_atomic(path, r->json.data, r->json.len, d);
    free(path);
    if (!rc && best) {
        path = dsf_path_join(r->o->dir, "best.json");
        rc = dsf_write_atomic(path, best, strlen(best), d);
        free(path);
    }
    if (!rc && r->o->calibration)
        rc = dsf_write_atomic(r->o->calibration,
                              r->calib.data ? r->calib.data : "",
                              r->calib.len, d);
    return rc;
}

static int collect_all(run *r, dsf_diags *d)
{
    int rc = load_manifest(r, d);
    if (!rc)
        rc = dsf_plugins_read_results(r->p, &r->rs, d);
    if (!rc && !r->rs->plugin)
        rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0, "no plugin declares "
                            "'results' (the record of a variant): collect "
                            "needs one, as the built-in plugin 'results' "
                            "does");
    if (!rc)
        rc = check_options(r, d);
    if (!rc)
        rc = dsf_needles_build(&r->nd, r->rs, d);
    if (rc)
        return rc;
    char *root = r->o->results ? dsf_xstrdup(r->o->results)
                               : dsf_path_join(r->o->dir, "results");
    rc = dsf_collect_inputs(r->p, r->rs, &r->nd, root,
                            r->o->results ? r->o->results : "results", true,
                            d);
    free(root);
    if (rc)
        return rc;
    dsf_collect_table_init(&r->table, r->rs);
    write_header(r);
    size_t i = 0;
    for (const cJSON *v = r->variants->child; v && !rc; v = v->next)
        rc = one_variant(r, v, i++, d);
    if (!rc)
        write_footer(r);
    return rc;
}

int dsf_collect_run(dsf_plugins *p, const dsf_collect_opts *o, dsf_buf *out,
                    int *status, dsf_diags *d)
{
    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.p = p;
    *status = 0;
    char *best = NULL;
    int rc = collect_all(&r, d);
    if (!rc && o->best)
        rc = make_best(&r, &best, d);
    if (!rc)
        rc = write_outputs(&r, best, d);
    if (!rc && o->format == DSF_COLLECT_JSON)
        dsf_buf_add(out, r.json.data, r.json.len);
    else if (!rc)
        dsf_collect_table_print(&r.table, r.rs, o, out);
    if (!rc && r.refused)
        *status = 1;
    free(best);
    dsf_collect_table_free(&r.table);
    dsf_needles_free(&r.nd);
    dsf_buf_free(&r.json);
    dsf_buf_free(&r.calib);
    cJSON_Delete(r.manifest);
    return rc;
}
