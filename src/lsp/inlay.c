/* inlay.c -- textDocument/inlayHint: what the plugins' summary of the
** document says, drawn as their report layout declares it (the core reads
** no field of a summary by name): each product ("global batch = micro
** batch per GPU 4 x gradient accumulation 8 x data-parallel world 4 =
** 128") and each bar ("GPU memory per device ~ 15.6 GiB (model states
** 14.6 + activations 1.0)"), after the document's opening brace. The
** summary is made with the params of the gen -o variant the file is (its
** manifest.json), then the settings' params and world size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "lsp/outdir.h"
#include "lsp/session.h"
#include "plugin/summary.h"

/* The value at the dotted path p of the summary, or NULL. */
static const cJSON *at(const cJSON *sum, const char *p)
{
    char *copy = dsf_xstrdup(p), *save = NULL;
    const cJSON *v = sum;
    for (char *k = strtok_r(copy, ".", &save); k && v;
         k = strtok_r(NULL, ".", &save))
        v = cJSON_GetObjectItemCaseSensitive(v, k);
    free(copy);
    return v;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void number(dsf_buf *b, double x)
{
    if (x == floor(x) && fabs(x) < 1e15)
        dsf_buf_printf(b, "%.0f", x);
    else
        dsf_buf_printf(b, "%g", x);
}

/* "label = f1 v1 × f2 v2 × ... = product", or NULL when a factor has no
** number (then the product's own value, if it has one). */
static char *product_label(const cJSON *sum, const cJSON *pr)
{
    const char *label = str(pr, "label");
    const cJSON *fs = cJSON_GetObjectItemCaseSensitive(pr, "factors");
    if (!label || !cJSON_IsArray(fs) || !cJSON_GetArraySize(fs))
        return NULL;
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_printf(&b, "%s = ", label);
    double prod = 1;
    const cJSON *f;
    cJSON_ArrayForEach(f, fs)
    {
        const char *fl = str(f, "label"), *fv = str(f, "value");
        const cJSON *v = fv ? at(sum, fv) : NULL;
        if (!cJSON_IsNumber(v)) {
            dsf_buf_free(&b);
            const cJSON *whole = str(pr, "value") ? at(sum, str(pr, "value"))
                                                  : NULL;
            if (!cJSON_IsNumber(whole))
                return NULL;
            dsf_buf_printf(&b, "%s ", label);
            number(&b, whole->valuedouble);
            return dsf_buf_take(&b);
        }
        if (f != fs->child)
            dsf_buf_puts(&b, " \xc3\x97 ");
        dsf_buf_printf(&b, "%s ", fl ? fl : fv);
        number(&b, v->valuedouble);
        prod *= v->valuedouble;
    }
    dsf_buf_puts(&b, " = ");
    number(&b, prod);
    return dsf_buf_take(&b);
}

static void amount(dsf_buf *b, double x, bool bytes)
{
    if (bytes)
        dsf_buf_printf(b, "%.1f GiB", x / 1073741824.0);
    else
        number(b, x);
}

/* "label ~ total (part1 a + part2 b)" (the parts that are not 0), or
** NULL without numbers. */
static char *bar_label(const cJSON *sum, const cJSON *bar)
{
    const char *label = str(bar, "label"), *unit = str(bar, "unit");
    bool bytes = unit && !strcmp(unit, "bytes");
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(bar, "parts");
    double total = 0;
    int n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, parts)
    {
        const cJSON *v = str(p, "value") ? at(sum, str(p, "value")) : NULL;
        if (cJSON_IsNumber(v) && v->valuedouble != 0) {
            total += v->valuedouble;
            n++;
        }
    }
    if (!label || !n)
        return NULL;
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_printf(&b, "%s \xe2\x89\x88 ", label);
    amount(&b, total, bytes);
    if (n > 1) {
        const char *sep = " (";
        cJSON_ArrayForEach(p, parts)
        {
            const cJSON *v = str(p, "value") ? at(sum, str(p, "value"))
                                             : NULL;
            if (!cJSON_IsNumber(v) || v->valuedouble == 0)
                continue;
            dsf_buf_printf(&b, "%s%s ", sep, str(p, "label") ? str(p, "label")
                                                             : "");
            amount(&b, v->valuedouble, bytes);
            sep = " + ";
        }
        dsf_buf_putc(&b, ')');
    }
    return dsf_buf_take(&b);
}

/* The params the summary is made with (caller deletes). */
static cJSON *params_for(dsf_lsp *s, const dsf_lsp_doc *doc)
{
    const cJSON *variant;
    cJSON *m = dsf_lsp_manifest_of(doc->uri, &variant);
    const cJSON *vp = cJSON_GetObjectItemCaseSensitive(variant, "params");
    cJSON *p = cJSON_IsObject(vp) ? cJSON_Duplicate(vp, 1)
                                  : cJSON_CreateObject();
    cJSON_Delete(m);
    const cJSON *x;
    cJSON_ArrayForEach(x, s->params)
    {
        cJSON_DeleteItemFromObjectCaseSensitive(p, x->string);
        cJSON_AddItemToObject(p, x->string, cJSON_Duplicate(x, 1));
    }
    const char *key = dsf_lsp_world_param(s);
    if (key && (s->world_set || !cJSON_GetObjectItemCaseSensitive(p, key))) {
        cJSON_DeleteItemFromObjectCaseSensitive(p, key);
        cJSON_AddNumberToObject(p, key, (double)s->world);
    }
    return p;
}

/* The merged summary of doc, or NULL. */
static cJSON *summary_of(dsf_lsp *s, const dsf_lsp_doc *doc, cJSON *cfg)
{
    dsf_diags d = DSF_DIAGS_INIT;
    if (!s->summaries_read) {
        s->summaries_read = true;
        s->summaries_rc = dsf_plugins_read_summaries(s->plugins, &d);
        if (s->summaries_rc)
            dsf_lsp_log("the plugins' summaries cannot be read: %s",
                        d.len ? d.items[0].message : "?");
    }
    cJSON *merged = NULL, *per = NULL;
    if (!s->summaries_rc) {
        cJSON *params = params_for(s, doc);
        dsf_validate_opts vo = {.target = dsf_lsp_doc_target(s, cfg, &d),
                                .mode = "check", .params = params,
                                .values = s->values};
        dsf_variant_view view = {"", "", cfg};
        size_t ncol;
        dsf_plugins_columns(s->plugins, &ncol);
        char **cells = dsf_xcalloc(ncol + 1, sizeof *cells);
        if (dsf_plugins_summarize(s->plugins, &view, &vo, &per, &merged,
                                  cells, &d)) {
            cJSON_Delete(merged);
            merged = NULL;
        }
        for (size_t i = 0; i < ncol; i++)
            free(cells[i]);
        free(cells);
        cJSON_Delete(per);
        cJSON_Delete(params);
    }
    dsf_diags_free(&d);
    return merged;
}

/* The layout the first plugin that declares one gives (borrowed). */
static const cJSON *layout(const dsf_lsp *s)
{
    size_t np;
    const dsf_plugin_info *pi = dsf_plugins_list(s->plugins, &np);
    for (size_t i = 0; i < np; i++)
        if (pi[i].report)
            return pi[i].report;
    return NULL;
}

static void hint(cJSON *arr, long line, long ch, char *label)
{
    if (!label)
        return;
    cJSON *h = cJSON_CreateObject();
    cJSON *p = cJSON_AddObjectToObject(h, "position");
    cJSON_AddNumberToObject(p, "line", (double)line);
    cJSON_AddNumberToObject(p, "character", (double)ch);
    cJSON_AddStringToObject(h, "label", label);
    cJSON_AddBoolToObject(h, "paddingLeft", 1);
    cJSON_AddBoolToObject(h, "paddingRight", 1);
    cJSON_AddItemToArray(arr, h);
    free(label);
}

cJSON *dsf_lsp_inlay_hints(dsf_lsp *s, const dsf_lsp_doc *doc,
                           const cJSON *params)
{
    (void)params; /* the hints are all on the first line: any range */
    cJSON *out = cJSON_CreateArray();
    cJSON *cfg = NULL;
    dsf_diags d = DSF_DIAGS_INIT;
    int rc = dsf_json_parse(&cfg, NULL, doc->uri, doc->text, doc->len, &d);
    dsf_diags_free(&d);
    if (rc || !cJSON_IsObject(cfg)) {
        cJSON_Delete(cfg);
        return out;
    }
    cJSON *sum = summary_of(s, doc, cfg);
    const cJSON *lay = sum ? layout(s) : NULL;
    /* after the opening brace */
    const char *brace = memchr(doc->text, '{', doc->len);
    long line = 0, ch = 0;
    for (const char *p = doc->text; brace && p <= brace; p++) {
        if (*p == '\n') {
            line++;
            ch = 0;
        } else if (((unsigned char)*p & 0xC0) != 0x80) {
            ch += ((unsigned char)*p >= 0xF0) ? 2 : 1;
        }
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(lay, "products"))
        hint(out, line, ch, product_label(sum, x));
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(lay, "bars"))
        hint(out, line, ch, bar_label(sum, x));
    cJSON_Delete(sum);
    cJSON_Delete(cfg);
    return out;
}
