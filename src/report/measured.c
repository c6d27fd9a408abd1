/* measured.c -- see measured.h. */
#include "report/measured.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "core/xalloc.h"
#include "report/html.h"

#define PLOT_W 560.0
#define PLOT_H 340.0
#define MARGIN_L 90.0
#define MARGIN_B 46.0
#define MARGIN_T 14.0
#define MAX_LABELS 40

typedef struct point {
    const char *name;
    double x, y;       /* peak memory (bytes), throughput (samples/s) */
    bool front;
} point;

static const cJSON *values_of(const cJSON *rec)
{
    return cJSON_GetObjectItemCaseSensitive(rec, "values");
}

static double value(const cJSON *rec, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(values_of(rec), key);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

static const cJSON *record_of(const cJSON *results, const char *name)
{
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(results, "variants");
    for (const cJSON *r = vs ? vs->child : NULL; r; r = r->next)
        if (!strcmp(dsf_html_str(r, "variant"), name))
            return r;
    return NULL;
}

static void num_cell(dsf_buf *b, double v, const char *unit)
{
    if (isnan(v)) {
        dsf_buf_puts(b, "<td class=\"n mut\">&#8212;</td>");
        return;
    }
    dsf_buf_puts(b, "<td class=\"n\">");
    dsf_buf tmp = DSF_BUF_INIT;
    dsf_units_format(&tmp, v, unit);
    dsf_html_esc(b, dsf_buf_str(&tmp));
    dsf_buf_free(&tmp);
    dsf_buf_puts(b, "</td>");
}

/* Speed-up against the control: the ratio r of samples/s, and its
** spread from how much each side's step time varies (p90 over median, d
** for the variant and d0 for the control): r / d when the variant runs at
** its p90, r * d0 when the control does. */
static bool ok(const cJSON *rec)
{
    return rec && !strcmp(dsf_html_str(rec, "status"), "ok");
}

static void speedup_cell(dsf_buf *b, const cJSON *rec, const cJSON *ctrl)
{
    double s = ok(rec) && ok(ctrl) ? value(rec, "samples_per_sec")
                                   : (double)NAN;
    double s0 = ctrl ? value(ctrl, "samples_per_sec") : (double)NAN;
    if (isnan(s) || isnan(s0) || s0 <= 0) {
        dsf_buf_puts(b, "<td class=\"n mut\">&#8212;</td>");
        return;
    }
    double r = s / s0;
    dsf_buf_printf(b, "<td class=\"n\">%.2f&#215;", r);
    double m = value(rec, "step_time_median_s"), p = value(rec,
                                                           "step_time_p90_s");
    double m0 = value(ctrl, "step_time_median_s"),
           p0 = value(ctrl, "step_time_p90_s");
    if (!isnan(m) && !isnan(p) && !isnan(m0) && !isnan(p0) && m > 0 &&
        m0 > 0)
        dsf_buf_printf(b, " <span class=\"mut\">(%.2f&#8211;%.2f)</span>",
                       r * m / p, r * p0 / m0);
    dsf_buf_puts(b, "</td>");
}

static double estimate(const cJSON *rec, const char *key)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(rec, "estimate");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

static void memory_cells(dsf_buf *b, const cJSON *rec)
{
    double e = estimate(rec, "peak_memory_bytes");
    double m = value(rec, "peak_memory_bytes");
    num_cell(b, e, "bytes");
    num_cell(b, m, "bytes");
    if (isnan(e) || isnan(m) || m <= 0 || !ok(rec)) {
        dsf_buf_puts(b, "<td class=\"n mut\">&#8212;</td>");
        return;
    }
    double err = (e - m) / m * 100.0;
    dsf_buf_printf(b, "<td class=\"n%s\">%+.1f %%</td>",
                   fabs(err) > 15.0 ? " bad" : "", err);
}

static void status_cell(dsf_buf *b, const cJSON *rec)
{
    const char *st = rec ? dsf_html_str(rec, "status") : "not collected";
    bool ok = !strcmp(st, "ok");
    dsf_buf_printf(b, "<td class=\"%s\">", ok ? "ok" : "bad");
    dsf_html_esc(b, st);
    const char *err = rec ? dsf_html_str(rec, "error") : "";
    if (!*err && rec && !ok)
        err = dsf_html_str(rec, "message");
    if (*err) {
        dsf_buf_puts(b, "<br><code class=\"mut\">");
        dsf_html_esc(b, err);
        dsf_buf_puts(b, "</code>");
    }
    dsf_buf_puts(b, "</td>");
}

static void table(dsf_buf *b, const cJSON *manifest, const cJSON *results)
{
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(manifest, "variants");
    const cJSON *ctrl = record_of(results, dsf_html_str(manifest, "control"));
    dsf_buf_puts(b, "<table>\n<caption>Each variant as it ran (speed-up: "
                    "samples/s against the control, with the spread of the "
                    "step times; estimate error: (estimate &#8722; measured)"
                    " / measured)</caption>\n<thead><tr><th scope=\"col\">"
                    "variant</th><th scope=\"col\">status</th>"
                    "<th scope=\"col\">samples/s</th><th scope=\"col\">"
                    "tokens/s</th><th scope=\"col\">step (median)</th>"
                    "<th scope=\"col\">speed-up</th><th scope=\"col\">"
                    "estimated GPU</th><th scope=\"col\">measured peak</th>"
                    "<th scope=\"col\">estimate error</th></tr></thead>\n"
                    "<tbody>\n");
    for (const cJSON *v = vs ? vs->child : NULL; v; v = v->next) {
        const cJSON *rec = record_of(results, dsf_html_str(v, "name"));
        dsf_buf_puts(b, "<tr><th scope=\"row\">");
        dsf_html_esc(b, dsf_html_str(v, "name"));
        dsf_buf_puts(b, "</th>");
        status_cell(b, rec);
        num_cell(b, value(rec, "samples_per_sec"), "1/s");
        num_cell(b, value(rec, "tokens_per_sec"), "1/s");
        num_cell(b, value(rec, "step_time_median_s"), "s");
        speedup_cell(b, rec, ctrl);
        memory_cells(b, rec);
        dsf_buf_puts(b, "</tr>\n");
    }
    dsf_buf_puts(b, "</tbody>\n</table>\n");
}

static int by_memory(const void *a, const void *b)
{
    const point *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return p->y > q->y ? -1 : p->y < q->y;
}

/* The ok variants with both values, sorted by memory, the front marked:
** a point no other point beats on both (less memory and more
** throughput). */
static point *points(const cJSON *results, size_t *n)
{
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(results, "variants");
    point *pts = dsf_xmalloc(((size_t)cJSON_GetArraySize(vs) + 1) *
                             sizeof *pts);
    *n = 0;
    for (const cJSON *r = vs ? vs->child : NULL; r; r = r->next) {
        double x = value(r, "peak_memory_bytes"), y = value(r,
                                                            "samples_per_sec");
        if (strcmp(dsf_html_str(r, "status"), "ok") || isnan(x) || isnan(y))
            continue;
        pts[(*n)++] = (point){dsf_html_str(r, "variant"), x, y, false};
    }
    qsort(pts, *n, sizeof *pts, by_memory);
    double best = -(double)INFINITY;
    for (size_t i = 0; i < *n; i++)
        if (pts[i].y > best) {
            pts[i].front = true;
            best = pts[i].y;
        }
    return pts;
}

static void axis_label(dsf_buf *b, double v, const char *unit)
{
    dsf_buf tmp = DSF_BUF_INIT;
    dsf_units_format(&tmp, v, unit);
    dsf_html_esc(b, dsf_buf_str(&tmp));
    dsf_buf_free(&tmp);
}

static void axes(dsf_buf *b, double xmax, double ymax)
{
    dsf_buf_printf(b, "<line class=\"axis\" x1=\"%.0f\" y1=\"0\" "
                      "x2=\"%.0f\" y2=\"%.0f\"/><line class=\"axis\" "
                      "x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>",
                   MARGIN_L, MARGIN_L, PLOT_H, MARGIN_L, PLOT_H,
                   MARGIN_L + PLOT_W, PLOT_H);
    for (int k = 0; k <= 4; k++) {
        double fx = MARGIN_L + PLOT_W * k / 4.0, fy = PLOT_H * (1 - k / 4.0);
        dsf_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" "
                          "text-anchor=\"middle\">", fx, PLOT_H + 16);
        axis_label(b, xmax * k / 4.0, "bytes");
        dsf_buf_printf(b, "</text><text x=\"%.0f\" y=\"%.1f\" "
                          "text-anchor=\"end\">", MARGIN_L - 6, fy + 4);
        axis_label(b, ymax * k / 4.0, "1/s");
        dsf_buf_puts(b, "</text>");
    }
    dsf_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">"
                      "measured peak GPU memory</text><text x=\"12\" "
                      "y=\"%.0f\" transform=\"rotate(-90 12 %.0f)\" "
                      "text-anchor=\"middle\">samples/s</text>",
                   MARGIN_L + PLOT_W / 2, PLOT_H + 38, PLOT_H / 2, PLOT_H / 2);
}

static void scatter(dsf_buf *b, const cJSON *results)
{
    size_t n;
    point *pts = points(results, &n);
    if (!n) {
        dsf_buf_puts(b, "<p class=\"mut\">No variant measured both its "
                        "throughput and its peak memory: no scatter.</p>\n");
        free(pts);
        return;
    }
    double xmax = 0, ymax = 0;
    for (size_t i = 0; i < n; i++) {
        xmax = fmax(xmax, pts[i].x);
        ymax = fmax(ymax, pts[i].y);
    }
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(results, "variants");
    double budget = estimate(vs ? vs->child : NULL, "budget_bytes");
    if (!isnan(budget))
        xmax = fmax(xmax, budget);
    xmax *= 1.05;
    ymax *= 1.10;
    dsf_buf_printf(b, "<figure><figcaption>Throughput against peak memory "
                      "(the Pareto front joined: no other variant has more "
                      "throughput for less memory)</figcaption>\n<svg "
                      "id=\"scatter\" role=\"img\" width=\"%.0f\" "
                      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                      "xmlns=\"http://www.w3.org/2000/svg\"><title>"
                      "throughput x peak memory</title>",
                   MARGIN_L + PLOT_W + 50, MARGIN_T + PLOT_H + MARGIN_B,
                   MARGIN_L + PLOT_W + 50, MARGIN_T + PLOT_H + MARGIN_B);
    dsf_buf_printf(b, "<g transform=\"translate(0 %.0f)\">", MARGIN_T);
    axes(b, xmax, ymax);
    dsf_buf_puts(b, "</g>");
#define PX(v) (MARGIN_L + (v) / xmax * PLOT_W)
#define PY(v) (MARGIN_T + PLOT_H - (v) / ymax * PLOT_H)
    if (!isnan(budget))
        dsf_buf_printf(b, "<line class=\"budget\" x1=\"%.1f\" y1=\"0\" "
                          "x2=\"%.1f\" y2=\"%.0f\"><title>GPU memory budget"
                          "</title></line>", PX(budget), PX(budget),
                       MARGIN_T + PLOT_H);
    dsf_buf_puts(b, "<polyline class=\"front\" points=\"");
    for (size_t i = 0; i < n; i++)
        if (pts[i].front)
            dsf_buf_printf(b, "%.1f,%.1f ", PX(pts[i].x), PY(pts[i].y));
    dsf_buf_puts(b, "\"/>");
    for (size_t i = 0; i < n; i++) {
        dsf_buf_printf(b, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" "
                          "r=\"%d\"><title>", pts[i].front ? "p2" : "p0",
                       PX(pts[i].x), PY(pts[i].y), pts[i].front ? 6 : 4);
        dsf_html_esc(b, pts[i].name);
        dsf_buf_puts(b, "</title></circle>");
        if (n <= MAX_LABELS && pts[i].front) {
            bool right = PX(pts[i].x) > MARGIN_L + PLOT_W * 0.55;
            dsf_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\"%s>",
                           PX(pts[i].x) + (right ? -8 : 8), PY(pts[i].y) - 6,
                           right ? " text-anchor=\"end\"" : "");
            dsf_html_esc(b, pts[i].name);
            dsf_buf_puts(b, "</text>");
        }
    }
#undef PX
#undef PY
    dsf_buf_puts(b, "</svg></figure>\n");
    free(pts);
}

void dsf_report_measured(dsf_buf *b, const cJSON *manifest,
                         const cJSON *results, const char *manifest_sha)
{
    dsf_buf_puts(b, "<h2 id=\"measured\">Measured</h2>\n");
    if (strcmp(dsf_html_str(results, "manifest_sha256"), manifest_sha)) {
        dsf_buf_puts(b, "<p class=\"bad\">results.json was collected from "
                        "another manifest (the sweep was generated again "
                        "since): run <code>dsforge collect</code> again to "
                        "show what these variants measured.</p>\n");
        return;
    }
    table(b, manifest, results);
    scatter(b, results);
}
