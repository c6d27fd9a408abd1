/* report.c -- see report.h. */
#define _XOPEN_SOURCE 700
#include "report/report.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/units.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "doc/jpath.h"
#include "doc/jsondiff.h"
#include "json/jsonout.h"
#include "report/html.h"
#include "report/measured.h"

static const char style[] =
    ":root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--mut:#59636e;"
    "--line:#d1d9e0;--hi:#fff1b8;--hifg:#1b1f24;--a:#2f6fdd;--b:#8250df;"
    "--c:#1a7f37;--free:#e8ecf0;--bad:#cf222e;--ok:#1a7f37}\n"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;"
    "--mut:#9198a1;--line:#3d444d;--hi:#5a4a00;--hifg:#fff;--a:#4493f8;"
    "--b:#ab7df8;--c:#3fb950;--free:#262c36;--bad:#f85149;--ok:#3fb950}}\n"
    "body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);"
    "background:var(--bg);margin:1.5rem;max-width:100rem}\n"
    "h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}\n"
    "table{border-collapse:collapse;margin:.5rem 0}\n"
    "th,td{border:1px solid var(--line);padding:.25rem .5rem;"
    "text-align:left;vertical-align:top}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "thead th{position:sticky;top:0;background:var(--bg)}\n"
    "tbody th{font-weight:normal;font-family:ui-monospace,monospace}\n"
    "tr.g th{font-weight:bold;font-family:inherit;background:var(--free)}\n"
    "td.d{background:var(--hi);color:var(--hifg);font-weight:600}\n"
    "code,td{font-family:ui-monospace,monospace}\n"
    ".mut{color:var(--mut)}.bad{color:var(--bad)}.ok{color:var(--ok)}\n"
    "svg text{fill:var(--fg);font:12px system-ui,sans-serif}\n"
    ".p0{fill:var(--a)}.p1{fill:var(--b)}.p2{fill:var(--c)}"
    ".free{fill:var(--free)}.budget{stroke:var(--fg);stroke-width:2}\n"
    ".axis{stroke:var(--mut)}.front{fill:none;stroke:var(--c);"
    "stroke-width:2}\n"
    "figure{margin:.5rem 0 1rem}figcaption{font-weight:600}\n"
    "a{color:var(--a)}\n";

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* A value as compact JSON, escaped; "—" when absent. */
static void value(dsf_buf *b, const cJSON *v)
{
    if (!v) {
        dsf_buf_puts(b, "<span class=\"mut\">&#8212;</span>");
        return;
    }
    char *t = dsf_json_print(v, false);
    dsf_html_esc(b, t);
    free(t);
}

static void fmt_amount(dsf_buf *b, double v, const char *unit)
{
    if (!strcmp(unit, "bytes"))
        dsf_buf_printf(b, "%.2f GiB", v / 1073741824.0);
    else
        dsf_buf_printf(b, "%g", v);
}

/* A summary value in the unit a person reads: a number whose key ends in
** "_bytes" (the summary's convention, contrib/docs/plugins.md) in GiB or
** MiB, the exact count in its title. */
static void summary_value(dsf_buf *b, const char *path, const cJSON *v)
{
    size_t n = strlen(path);
    if (!cJSON_IsNumber(v) || n < 6 || strcmp(path + n - 6, "_bytes")) {
        value(b, v);
        return;
    }
    dsf_buf_printf(b, "<span title=\"%.0f bytes\">", v->valuedouble);
    dsf_units_format(b, v->valuedouble, "bytes");
    dsf_buf_puts(b, "</span>");
}

/* A node inside doc by canonical path. */
static const cJSON *at(const cJSON *doc, const char *path)
{
    if (!doc)
        return NULL;
    if (!*path)
        return doc;
    dsf_jpath p;
    char *err;
    if (dsf_jpath_parse(&p, path, &err) != 0) {
        free(err);
        return NULL;
    }
    const cJSON *n = dsf_jpath_get((cJSON *)doc, &p);
    dsf_jpath_free(&p);
    return n;
}

/* Sorted, unique strings. */
typedef struct strset {
    char **s;
    size_t n;
} strset;

static void set_add(strset *set, const char *s)
{
    size_t lo = 0, hi = set->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(set->s[mid], s);
        if (!c)
            return;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    set->s = dsf_xrealloc(set->s, (set->n + 1) * sizeof *set->s);
    memmove(set->s + lo + 1, set->s + lo, (set->n - lo) * sizeof *set->s);
    set->s[lo] = dsf_xstrdup(s);
    set->n++;
}

static void set_free(strset *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->s[i]);
    free(set->s);
}

/* Every leaf path of doc (except below skip), into set. */
static void leaves(strset *set, const cJSON *doc, const char *skip)
{
    cJSON *empty = cJSON_CreateObject();
    dsf_jsondiff d = DSF_JSONDIFF_INIT;
    const char *ign[1] = {skip};
    dsf_jsondiff_run(&d, empty, doc, ign, skip ? 1 : 0);
    for (size_t i = 0; i < d.len; i++)
        set_add(set, d.items[i].path);
    dsf_jsondiff_free(&d);
    cJSON_Delete(empty);
}

typedef const cJSON *(*pick_fn)(const cJSON *entry, const cJSON *doc);

static const cJSON *pick_params(const cJSON *e, const cJSON *doc)
{
    (void)doc;
    return cJSON_GetObjectItemCaseSensitive(e, "params");
}

static const cJSON *pick_summary(const cJSON *e, const cJSON *doc)
{
    (void)doc;
    return cJSON_GetObjectItemCaseSensitive(e, "summary");
}

static const cJSON *pick_config(const cJSON *e, const cJSON *doc)
{
    (void)e;
    return doc;
}

/* A group of rows: one per path, a cell per variant, highlighted where
** the value differs from the control's (the first variant). */
static void rows(dsf_buf *b, const char *title, const strset *paths,
                 const cJSON *vs, const cJSON *const *docs, pick_fn pick,
                 size_t nv)
{
    dsf_buf_printf(b, "<tr class=\"g\"><th scope=\"rowgroup\" "
                      "colspan=\"%zu\">", nv + 1);
    dsf_html_esc(b, title);
    dsf_buf_puts(b, "</th></tr>\n");
    if (!paths->n)
        dsf_buf_printf(b, "<tr><td colspan=\"%zu\" class=\"mut\">none"
                          "</td></tr>\n", nv + 1);
    for (size_t r = 0; r < paths->n; r++) {
        dsf_buf_puts(b, "<tr><th scope=\"row\">");
        dsf_html_esc(b, paths->s[r]);
        dsf_buf_puts(b, "</th>");
        const cJSON *control = NULL;
        size_t i = 0;
        for (const cJSON *e = vs->child; e; e = e->next, i++) {
            const cJSON *v = at(pick(e, docs[i]), paths->s[r]);
            if (!i)
                control = v;
            bool differs = i && (!v != !control ||
                                 (v && !dsf_json_equal(v, control)));
            bool n = cJSON_IsNumber(v);
            dsf_buf_printf(b, "<td%s%s%s%s>", n || differs ? " class=\"" : "",
                           n ? "n" : "", n && differs ? " " : "",
                           differs ? "d\"" : n ? "\"" : "");
            if (pick == pick_summary)
                summary_value(b, paths->s[r], v);
            else
                value(b, v);
            dsf_buf_puts(b, "</td>");
        }
        dsf_buf_puts(b, "</tr>\n");
    }
}

static void header_row(dsf_buf *b, const cJSON *vs, const char *const *hrefs)
{
    dsf_buf_puts(b, "<thead><tr><th scope=\"col\">path</th>");
    size_t i = 0;
    for (const cJSON *e = vs->child; e; e = e->next, i++) {
        dsf_buf_puts(b, "<th scope=\"col\">");
        if (hrefs[i]) {
            dsf_buf_puts(b, "<a href=\"");
            dsf_html_esc(b, hrefs[i]);
            dsf_buf_puts(b, "\">");
        }
        dsf_html_esc(b, dsf_html_str(e, "name"));
        if (hrefs[i])
            dsf_buf_puts(b, "</a>");
        if (!i)
            dsf_buf_puts(b, " <span class=\"mut\">(control)</span>");
        dsf_buf_puts(b, "</th>");
    }
    dsf_buf_puts(b, "</tr></thead>\n");
}

static void side_by_side(dsf_buf *b, const cJSON *vs,
                         const cJSON *const *docs, const char *const *hrefs)
{
    size_t nv = (size_t)cJSON_GetArraySize(vs);
    strset params = {NULL, 0}, summary = {NULL, 0}, config = {NULL, 0};
    for (const cJSON *e = vs->child; e; e = e->next) {
        leaves(&params, cJSON_GetObjectItemCaseSensitive(e, "params"), NULL);
        leaves(&summary, cJSON_GetObjectItemCaseSensitive(e, "summary"),
               NULL);
        const cJSON *dc = cJSON_GetObjectItemCaseSensitive(
            e, "differs_from_control");
        for (const cJSON *p = dc ? dc->child : NULL; p; p = p->next)
            if (cJSON_IsString(p))
                set_add(&config, p->valuestring);
    }
    dsf_buf_puts(b, "<h2 id=\"side-by-side\">Side by side</h2>\n"
                    "<p>Cells that differ from the control (the first "
                    "variant) are highlighted. Config rows: the paths where "
                    "some variant differs from the control.</p>\n"
                    "<table>\n<caption class=\"mut\">params, summary and "
                    "config values per variant</caption>\n");
    header_row(b, vs, hrefs);
    dsf_buf_puts(b, "<tbody>\n");
    rows(b, "params", &params, vs, docs, pick_params, nv);
    rows(b, "summary", &summary, vs, docs, pick_summary, nv);
    rows(b, "config (differs from the control)", &config, vs, docs,
         pick_config, nv);
    dsf_buf_puts(b, "</tbody>\n</table>\n");
    set_free(&params);
    set_free(&summary);
    set_free(&config);
}

/* A copy of a layout item with its "budget", "ok" and "value" paths
** replaced by what they name in summary (left out when absent). */
static cJSON *instantiate(const cJSON *item, const cJSON *summary)
{
    if (cJSON_IsArray(item)) {
        cJSON *arr = cJSON_CreateArray();
        for (const cJSON *e = item->child; e; e = e->next)
            cJSON_AddItemToArray(arr, instantiate(e, summary));
        return arr;
    }
    if (!cJSON_IsObject(item))
        return cJSON_Duplicate(item, 1);
    cJSON *obj = cJSON_CreateObject();
    for (const cJSON *e = item->child; e; e = e->next) {
        bool ref = !strcmp(e->string, "budget") || !strcmp(e->string, "ok") ||
                   !strcmp(e->string, "value");
        if (!ref) {
            cJSON_AddItemToObject(obj, e->string, instantiate(e, summary));
            continue;
        }
        const cJSON *v = cJSON_IsString(e) ? at(summary, e->valuestring)
                                           : NULL;
        if (v && !cJSON_IsObject(v) && !cJSON_IsArray(v))
            cJSON_AddItemToObject(obj, e->string, cJSON_Duplicate(v, 1));
    }
    return obj;
}

/* Variant i's bars and products: the layout filled from its summary. A
** bar none of whose parts has a value, or a product without a value, is
** left out. */
static cJSON *variant_report(const cJSON *layout, const cJSON *summary)
{
    cJSON *r = cJSON_CreateObject();
    static const char *const kinds[2] = {"bars", "products"};
    for (int k = 0; k < 2; k++) {
        cJSON *out = cJSON_AddArrayToObject(r, kinds[k]);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(layout,
                                                              kinds[k]);
        for (const cJSON *it = items ? items->child : NULL;
             it && summary; it = it->next) {
            cJSON *x = instantiate(it, summary);
            bool keep = cJSON_GetObjectItemCaseSensitive(x, "value") != NULL;
            const cJSON *parts = cJSON_GetObjectItemCaseSensitive(x, "parts");
            for (const cJSON *p = parts ? parts->child : NULL; p && !keep;
                 p = p->next)
                keep = cJSON_GetObjectItemCaseSensitive(p, "value") != NULL;
            if (keep)
                cJSON_AddItemToArray(out, x);
            else
                cJSON_Delete(x);
        }
    }
    return r;
}

/* The widest extent of the bar named label over all variants. */
static double bar_scale(const cJSON *reps, const char *label)
{
    double scale = 0;
    for (const cJSON *rep = reps->child; rep; rep = rep->next) {
        const cJSON *bars = cJSON_GetObjectItemCaseSensitive(rep, "bars");
        for (const cJSON *bar = bars ? bars->child : NULL; bar;
             bar = bar->next) {
            if (strcmp(dsf_html_str(bar, "label"), label))
                continue;
            double total = 0;
            const cJSON *parts = cJSON_GetObjectItemCaseSensitive(bar,
                                                                  "parts");
            for (const cJSON *p = parts ? parts->child : NULL; p; p = p->next)
                total += fmax(0, num(p, "value", 0));
            scale = fmax(scale, fmax(total, num(bar, "budget", 0)));
        }
    }
    return scale;
}

#define BAR_W 520.0

static void bar_svg(dsf_buf *b, const cJSON *bar, double scale)
{
    const char *unit = dsf_html_str(bar, "unit");
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(bar, "parts");
    double budget = num(bar, "budget", -1), total = 0;
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(bar, "ok");
    dsf_buf_printf(b, "<svg role=\"img\" width=\"%.0f\" height=\"64\" "
                      "viewBox=\"0 0 %.0f 64\" "
                      "xmlns=\"http://www.w3.org/2000/svg\"><title>",
                   BAR_W + 20, BAR_W + 20);
    dsf_html_esc(b, dsf_html_str(bar, "label"));
    dsf_buf_puts(b, "</title>");
    dsf_buf_printf(b, "<rect class=\"free\" x=\"0\" y=\"4\" width=\"%.1f\" "
                      "height=\"22\"/>", BAR_W);
    double x = 0;
    int k = 0;
    dsf_buf legend = DSF_BUF_INIT;
    for (const cJSON *p = parts ? parts->child : NULL; p; p = p->next, k++) {
        double v = fmax(0, num(p, "value", 0));
        double w = scale > 0 ? v / scale * BAR_W : 0;
        dsf_buf_printf(b, "<rect class=\"p%d\" x=\"%.1f\" y=\"4\" "
                          "width=\"%.1f\" height=\"22\"><title>",
                       k % 3, x, w);
        dsf_html_esc(b, dsf_html_str(p, "label"));
        dsf_buf_puts(b, ": ");
        fmt_amount(b, v, unit);
        dsf_buf_puts(b, "</title></rect>");
        x += w;
        total += v;
        dsf_buf_printf(&legend, "%s", k ? " + " : "");
        dsf_html_esc(&legend, dsf_html_str(p, "label"));
        dsf_buf_puts(&legend, " ");
        fmt_amount(&legend, v, unit);
    }
    if (budget >= 0 && scale > 0) {
        double bx = budget / scale * BAR_W;
        dsf_buf_printf(b, "<line class=\"budget\" x1=\"%.1f\" y1=\"0\" "
                          "x2=\"%.1f\" y2=\"30\"/>", bx, bx);
    }
    dsf_buf_puts(b, "<text x=\"0\" y=\"46\">");
    dsf_buf_puts(b, legend.data ? legend.data : "");
    dsf_buf_puts(b, "</text><text x=\"0\" y=\"61\">total ");
    fmt_amount(b, total, unit);
    if (budget >= 0) {
        dsf_buf_puts(b, " of ");
        fmt_amount(b, budget, unit);
        dsf_buf_puts(b, ", margin ");
        fmt_amount(b, budget - total, unit);
    }
    if (cJSON_IsBool(ok))
        dsf_buf_puts(b, cJSON_IsTrue(ok) ? " \xe2\x80\x94 fits"
                                         : " \xe2\x80\x94 does NOT fit");
    dsf_buf_puts(b, "</text></svg>");
    dsf_buf_free(&legend);
}

static void memory(dsf_buf *b, const cJSON *vs, const cJSON *reps)
{
    dsf_buf_puts(b, "<h2 id=\"memory\">Memory</h2>\n");
    strset labels = {NULL, 0};
    for (const cJSON *rep = reps->child; rep; rep = rep->next) {
        const cJSON *bars = cJSON_GetObjectItemCaseSensitive(rep, "bars");
        for (const cJSON *bar = bars ? bars->child : NULL; bar;
             bar = bar->next) {
            /* In the plugin's order, each label once. */
            bool seen = false;
            for (size_t k = 0; k < labels.n && !seen; k++)
                seen = !strcmp(labels.s[k], dsf_html_str(bar, "label"));
            if (!seen) {
                labels.s = dsf_xrealloc(labels.s,
                                        (labels.n + 1) * sizeof *labels.s);
                labels.s[labels.n++] = dsf_xstrdup(dsf_html_str(bar, "label"));
            }
        }
    }
    if (!labels.n)
        dsf_buf_puts(b, "<p class=\"mut\">No plugin reported memory for "
                        "these variants.</p>\n");
    for (size_t l = 0; l < labels.n; l++) {
        double scale = bar_scale(reps, labels.s[l]);
        dsf_buf_puts(b, "<table>\n<caption>");
        dsf_html_esc(b, labels.s[l]);
        dsf_buf_puts(b, " (a vertical line marks the budget)</caption>\n<thead><tr>"
                        "<th scope=\"col\">variant</th><th scope=\"col\">"
                        "bar</th><th scope=\"col\">fits</th></tr></thead>"
                        "\n<tbody>\n");
        const cJSON *rep = reps->child;
        for (const cJSON *e = vs->child; e && rep;
             e = e->next, rep = rep->next) {
            const cJSON *bars = cJSON_GetObjectItemCaseSensitive(rep, "bars");
            for (const cJSON *bar = bars ? bars->child : NULL; bar;
                 bar = bar->next) {
                if (strcmp(dsf_html_str(bar, "label"), labels.s[l]))
                    continue;
                const cJSON *ok = cJSON_GetObjectItemCaseSensitive(bar, "ok");
                dsf_buf_puts(b, "<tr><th scope=\"row\">");
                dsf_html_esc(b, dsf_html_str(e, "name"));
                dsf_buf_puts(b, "</th><td>");
                bar_svg(b, bar, scale);
                dsf_buf_printf(b, "</td><td%s>%s</td></tr>\n",
                               !cJSON_IsBool(ok)  ? ""
                               : cJSON_IsTrue(ok) ? " class=\"ok\""
                                                  : " class=\"bad\"",
                               !cJSON_IsBool(ok)  ? "&#8212;"
                               : cJSON_IsTrue(ok) ? "yes"
                                                  : "NO");
            }
        }
        dsf_buf_puts(b, "</tbody>\n</table>\n");
    }
    set_free(&labels);
}

static void products(dsf_buf *b, const cJSON *vs, const cJSON *reps)
{
    dsf_buf_puts(b, "<h2 id=\"products\">Composition</h2>\n<table>\n"
                    "<thead><tr><th scope=\"col\">variant</th>"
                    "<th scope=\"col\">what</th><th scope=\"col\">value</th>"
                    "<th scope=\"col\">composition</th></tr></thead>\n"
                    "<tbody>\n");
    size_t shown = 0;
    const cJSON *rep = reps->child;
    for (const cJSON *e = vs->child; e && rep; e = e->next, rep = rep->next) {
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(rep, "products");
        for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
            shown++;
            dsf_buf_puts(b, "<tr><th scope=\"row\">");
            dsf_html_esc(b, dsf_html_str(e, "name"));
            dsf_buf_puts(b, "</th><td>");
            dsf_html_esc(b, dsf_html_str(p, "label"));
            dsf_buf_puts(b, "</td><td class=\"n\">");
            value(b, cJSON_GetObjectItemCaseSensitive(p, "value"));
            dsf_buf_puts(b, "</td><td>");
            const cJSON *fs = cJSON_GetObjectItemCaseSensitive(p, "factors");
            for (const cJSON *f = fs ? fs->child : NULL; f; f = f->next) {
                if (f != fs->child)
                    dsf_buf_puts(b, " &#215; ");
                value(b, cJSON_GetObjectItemCaseSensitive(f, "value"));
                dsf_buf_puts(b, " <span class=\"mut\">");
                dsf_html_esc(b, dsf_html_str(f, "label"));
                dsf_buf_puts(b, "</span>");
            }
            dsf_buf_puts(b, "</td></tr>\n");
        }
    }
    if (!shown)
        dsf_buf_puts(b, "<tr><td colspan=\"4\" class=\"mut\">No plugin "
                        "reported a composition.</td></tr>\n");
    dsf_buf_puts(b, "</tbody>\n</table>\n");
}

static void findings(dsf_buf *b, const cJSON *vs)
{
    dsf_buf_puts(b, "<h2 id=\"findings\">Findings</h2>\n<table>\n<thead>"
                    "<tr><th scope=\"col\">variant</th><th scope=\"col\">"
                    "severity</th><th scope=\"col\">rule</th>"
                    "<th scope=\"col\">path</th><th scope=\"col\">message"
                    "</th></tr></thead>\n<tbody>\n");
    for (const cJSON *e = vs->child; e; e = e->next) {
        const cJSON *fs = cJSON_GetObjectItemCaseSensitive(e, "findings");
        if (!fs || !fs->child) {
            dsf_buf_puts(b, "<tr><th scope=\"row\">");
            dsf_html_esc(b, dsf_html_str(e, "name"));
            dsf_buf_puts(b, "</th><td colspan=\"4\" class=\"mut\">none"
                            "</td></tr>\n");
            continue;
        }
        for (const cJSON *f = fs->child; f; f = f->next) {
            dsf_buf_puts(b, "<tr><th scope=\"row\">");
            dsf_html_esc(b, dsf_html_str(e, "name"));
            dsf_buf_puts(b, "</th><td");
            dsf_buf_puts(b, !strcmp(dsf_html_str(f, "severity"), "error")
                                ? " class=\"bad\">"
                                : ">");
            dsf_html_esc(b, dsf_html_str(f, "severity"));
            dsf_buf_puts(b, "</td><td>");
            dsf_html_esc(b, dsf_html_str(f, "rule"));
            dsf_buf_puts(b, "</td><td>");
            dsf_html_esc(b, dsf_html_str(f, "path"));
            dsf_buf_puts(b, "</td><td>");
            dsf_html_esc(b, dsf_html_str(f, "message"));
            dsf_buf_puts(b, "</td></tr>\n");
        }
    }
    dsf_buf_puts(b, "</tbody>\n</table>\n");
}

/* A table of objects: one row each, the given columns. */
static void object_table(dsf_buf *b, const char *caption, const cJSON *arr,
                         const char *const *cols, size_t ncols)
{
    dsf_buf_puts(b, "<table>\n<caption>");
    dsf_html_esc(b, caption);
    dsf_buf_puts(b, "</caption>\n<thead><tr>");
    for (size_t c = 0; c < ncols; c++) {
        dsf_buf_puts(b, "<th scope=\"col\">");
        dsf_html_esc(b, cols[c]);
        dsf_buf_puts(b, "</th>");
    }
    dsf_buf_puts(b, "</tr></thead>\n<tbody>\n");
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) {
        dsf_buf_puts(b, "<tr>");
        for (size_t c = 0; c < ncols; c++) {
            dsf_buf_puts(b, c ? "<td>" : "<th scope=\"row\">");
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, cols[c]);
            if (cJSON_IsString(v))
                dsf_html_esc(b, v->valuestring);
            else
                value(b, v);
            dsf_buf_puts(b, c ? "</td>" : "</th>");
        }
        dsf_buf_puts(b, "</tr>\n");
    }
    dsf_buf_puts(b, "</tbody>\n</table>\n");
}

static void provenance(dsf_buf *b, const cJSON *m)
{
    static const char *const chain[] = {"name", "origin", "sha256"};
    static const char *const plugins[] = {"name", "version", "origin",
                                          "init_sha256"};
    static const char *const layers[] = {"kind", "name", "path", "arg",
                                         "sha256"};
    static const char *const files[] = {"name", "file", "sha256"};
    dsf_buf_puts(b, "<h2 id=\"manifest\">Versions and hashes</h2>\n<p>");
    dsf_buf_puts(b, "dsforge ");
    dsf_html_esc(b, dsf_html_str(m, "dsforge_version"));
    dsf_buf_puts(b, ", target ");
    dsf_html_esc(b, dsf_html_str(m, "target"));
    dsf_buf_puts(b, "</p>\n");
    object_table(b, "profile chain",
                 cJSON_GetObjectItemCaseSensitive(m, "chain"), chain, 3);
    object_table(b, "plugins", cJSON_GetObjectItemCaseSensitive(m, "plugins"),
                 plugins, 4);
    object_table(b, "layers", cJSON_GetObjectItemCaseSensitive(m, "layers"),
                 layers, 5);
    object_table(b, "variant files",
                 cJSON_GetObjectItemCaseSensitive(m, "variants"), files, 3);
}

void dsf_report_html(dsf_buf *out, const cJSON *m, const cJSON *const *docs,
                     const char *const *hrefs, const cJSON *results,
                     const char *manifest_sha)
{
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(m, "variants");
    dsf_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                      "<meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width,"
                      "initial-scale=1\">\n"
                      "<meta http-equiv=\"Content-Security-Policy\" "
                      "content=\"default-src 'none'; style-src "
                      "'unsafe-inline'; img-src data:\">\n<title>");
    dsf_buf_puts(out, "dsforge A/B: ");
    dsf_html_esc(out, dsf_html_str(m, "profile"));
    dsf_buf_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                        "<h1>", style);
    dsf_html_esc(out, dsf_html_str(m, "profile"));
    dsf_buf_printf(out, ": %d variant%s side by side</h1>\n",
                   cJSON_GetArraySize(vs),
                   cJSON_GetArraySize(vs) == 1 ? "" : "s");
    dsf_buf_puts(out, "<p class=\"mut\">Generated by dsforge ");
    dsf_html_esc(out, dsf_html_str(m, "dsforge_version"));
    dsf_buf_puts(out, " from the manifest; control: ");
    dsf_html_esc(out, dsf_html_str(m, "control"));
    dsf_buf_printf(out, ".</p>\n<nav><a href=\"#side-by-side\">side by side"
                      "</a> &#183; %s<a href=\"#memory\">memory</a> &#183; "
                      "<a href=\"#products\">composition</a> &#183; "
                      "<a href=\"#findings\">findings</a> &#183; "
                      "<a href=\"#manifest\">versions and hashes</a></nav>"
                      "\n", results ? "<a href=\"#measured\">measured</a> "
                                      "&#183; " : "");
    if (vs && vs->child) {
        const cJSON *layout = cJSON_GetObjectItemCaseSensitive(
            m, "report_layout");
        cJSON *reps = cJSON_CreateArray();
        for (const cJSON *e = vs->child; e; e = e->next)
            cJSON_AddItemToArray(
                reps, variant_report(layout, cJSON_GetObjectItemCaseSensitive(
                                                 e, "summary")));
        side_by_side(out, vs, docs, hrefs);
        if (results)
            dsf_report_measured(out, m, results, manifest_sha);
        memory(out, vs, reps);
        products(out, vs, reps);
        cJSON_Delete(reps);
        findings(out, vs);
    }
    provenance(out, m);
    dsf_buf_puts(out, "</body>\n</html>\n");
}

char *dsf_report_href(const char *page_path, const char *dir,
                      const char *name)
{
    const char *slash = strrchr(page_path, '/');
    char *page_dir = slash ? dsf_xstrndup(page_path,
                                          (size_t)(slash - page_path) + 1)
                           : dsf_xstrdup(".");
    char from[PATH_MAX], to[PATH_MAX];
    bool ok = realpath(page_dir, from) && realpath(dir, to);
    free(page_dir);
    if (!ok)
        return NULL;
    /* The common leading directories, then ".." for the rest of from. */
    size_t common = 0;
    for (size_t i = 0;; i++) {
        bool end_f = from[i] == '\0' || from[i] == '/';
        bool end_t = to[i] == '\0' || to[i] == '/';
        if (end_f && end_t)
            common = i;
        if (from[i] != to[i] || !from[i])
            break;
    }
    dsf_buf rel = DSF_BUF_INIT;
    for (const char *f = from + common; *f; f++)
        if (*f == '/')
            dsf_buf_puts(&rel, "../");
    const char *rest = to + common;
    if (*rest == '/')
        rest++;
    dsf_buf path = DSF_BUF_INIT;
    dsf_buf_puts(&path, rel.data ? rel.data : "");
    if (*rest)
        dsf_buf_printf(&path, "%s/", rest);
    dsf_buf_puts(&path, name);
    dsf_buf_free(&rel);
    dsf_buf out = DSF_BUF_INIT;
    for (const unsigned char *c = (const unsigned char *)path.data; *c; c++) {
        bool safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9') || strchr("-._~/", *c);
        if (safe)
            dsf_buf_putc(&out, (char)*c);
        else
            dsf_buf_printf(&out, "%%%02X", *c);
    }
    dsf_buf_free(&path);
    return dsf_buf_take(&out);
}

/* The manifest at path, and the sha256 of its bytes (what collect
** recorded in results.json). */
static int load_with_sha(cJSON **m, char sha[65], const char *path,
                         dsf_diags *d)
{
    char *text = NULL;
    size_t len = 0;
    int rc = dsf_read_file(&text, &len, path, DSF_JSON_MAX_FILE, d);
    if (!rc)
        rc = dsf_json_parse(m, NULL, path, text, len, d);
    if (!rc)
        dsf_sha256_hex(sha, text, len);
    free(text);
    return rc;
}

/* DIR/results.json when collect wrote one (*out NULL when absent). */
static int load_results(cJSON **out, const char *dir, dsf_diags *d)
{
    *out = NULL;
    char *path = dsf_path_join(dir, "results.json");
    int rc = 0;
    if (dsf_is_file(path)) {
        rc = dsf_json_load_file(out, NULL, path, d);
        if (!rc && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(
                       *out, "variants")))
            rc = dsf_diag_error(d, DSF_EINPUT, path, 1, 1, "not a collect "
                                "results file: no \"variants\" array");
    }
    free(path);
    return rc;
}

int dsf_report_dir(const char *dir, const char *page_path, dsf_diags *d)
{
    char *mpath = dsf_xasprintf("%s/manifest.json", dir);
    cJSON *m = NULL, *results = NULL;
    dsf_jsrc *src = NULL;
    char sha[65] = "";
    int rc = load_with_sha(&m, sha, mpath, d);
    if (!rc)
        rc = load_results(&results, dir, d);
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(m, "variants");
    if (!rc && !cJSON_IsArray(vs))
        rc = dsf_diag_error(d, DSF_EINPUT, mpath, 1, 1,
                            "not a dsforge manifest: no \"variants\" "
                            "array");
    size_t n = rc ? 0 : (size_t)cJSON_GetArraySize(vs);
    cJSON **docs = dsf_xcalloc(n + 1, sizeof *docs);
    char **hrefs = dsf_xcalloc(n + 1, sizeof *hrefs);
    size_t i = 0;
    for (const cJSON *e = vs ? vs->child : NULL; e && !rc; e = e->next, i++) {
        const char *file = dsf_html_str(e, "file");
        if (!*file || strchr(file, '/') || file[0] == '.') {
            rc = dsf_diag_error(d, DSF_EINPUT, mpath, 0, 0,
                                "manifest variant without a usable "
                                "\"file\"");
            break;
        }
        char *path = dsf_xasprintf("%s/%s", dir, file);
        rc = dsf_json_load_file(&docs[i], &src, path, d);
        dsf_jsrc_free(src);
        src = NULL;
        free(path);
        hrefs[i] = dsf_report_href(page_path, dir, file);
    }
    if (!rc) {
        dsf_buf page = DSF_BUF_INIT;
        dsf_report_html(&page, m, (const cJSON *const *)docs,
                        (const char *const *)hrefs, results, sha);
        rc = dsf_write_atomic(page_path, page.data, page.len, d);
        dsf_buf_free(&page);
    }
    for (size_t k = 0; k < n; k++) {
        cJSON_Delete(docs[k]);
        free(hrefs[k]);
    }
    free(docs);
    free(hrefs);
    cJSON_Delete(m);
    cJSON_Delete(results);
    free(mpath);
    return rc;
}
