/* table.c -- see table.h. */
#include "collect/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "core/diag.h"
#include "core/xalloc.h"

#define MAX_ERROR 300

void dsf_collect_table_init(dsf_collect_table *t, const dsf_results_decl *rs)
{
    memset(t, 0, sizeof *t);
    t->nmetrics = rs->nmetrics;
    t->best = (size_t)-1;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void dsf_collect_table_add(dsf_collect_table *t, const dsf_results_decl *rs,
                           const cJSON *rec)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->rows = dsf_xrealloc(t->rows, t->cap * sizeof *t->rows);
    }
    dsf_collect_row *row = &t->rows[t->n++];
    row->name = dsf_xstrdup(str(rec, "variant"));
    row->status = dsf_xstrdup(str(rec, "status"));
    const char *err = str(rec, "error") ? str(rec, "error")
                                        : str(rec, "message");
    row->error = err ? dsf_xstrndup(err, strnlen(err, MAX_ERROR)) : NULL;
    row->vals = dsf_xmalloc((rs->nmetrics + 1) * sizeof *row->vals);
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(rec, "values");
    for (size_t m = 0; m < rs->nmetrics; m++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            vals, rs->metrics[m].name);
        row->vals[m] = cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
    }
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

cJSON *dsf_collect_table_counts(const dsf_collect_table *t)
{
    char **st = dsf_xmalloc((t->n + 1) * sizeof *st);
    for (size_t i = 0; i < t->n; i++)
        st[i] = t->rows[i].status;
    qsort(st, t->n, sizeof *st, by_string);
    cJSON *c = cJSON_CreateObject();
    for (size_t i = 0, j; i < t->n; i = j) {
        for (j = i; j < t->n && !strcmp(st[j], st[i]); j++)
            ;
        cJSON_AddNumberToObject(c, st[i], (double)(j - i));
    }
    free(st);
    return c;
}

size_t dsf_collect_table_best(const dsf_collect_table *t,
                              const dsf_results_decl *rs, const char *metric)
{
    size_t m = 0;
    while (m < rs->nmetrics && strcmp(rs->metrics[m].name, metric))
        m++;
    if (m == rs->nmetrics)
        return (size_t)-1;
    double sign = rs->metrics[m].better == DSF_BETTER_MIN ? -1.0 : 1.0;
    size_t best = (size_t)-1;
    for (size_t i = 0; i < t->n; i++) {
        double v = t->rows[i].vals[m];
        if (strcmp(t->rows[i].status, "ok") || isnan(v))
            continue;
        if (best == (size_t)-1 || sign * v > sign * t->rows[best].vals[m])
            best = i;
    }
    return best;
}

void dsf_collect_table_set_best(dsf_collect_table *t, size_t k,
                                const char *profile, const char *tier,
                                const char *dir)
{
    t->best = k;
    free(t->best_cmd);
    t->best_cmd = dsf_xasprintf("dsforge gen %s%s%s -f %s/best.json",
                                profile ? profile : "PROFILE",
                                tier ? " --tier " : "", tier ? tier : "",
                                dir);
}

/* The cell of row i, column c (0: variant, 1: status, 2+: metrics),
** cleaned for a terminal. */
static void cell(dsf_buf *b, const dsf_collect_table *t,
                 const dsf_results_decl *rs, const size_t *cols, size_t i,
                 size_t c)
{
    dsf_buf_clear(b);
    if (c == 0) {
        dsf_text_clean(b, t->rows[i].name, true);
    } else if (c == 1) {
        dsf_text_clean(b, t->rows[i].status, true);
    } else {
        double v = t->rows[i].vals[cols[c - 2]];
        if (isnan(v))
            dsf_buf_puts(b, "-");
        else
            dsf_units_format(b, v, rs->metrics[cols[c - 2]].unit);
    }
}

/* Pads the text of b to width w, on the left for numbers (c >= 2). */
static void put_cell(dsf_buf *out, const dsf_buf *b, size_t w, size_t c,
                     bool last)
{
    size_t pad = w > b->len ? w - b->len : 0;
    if (c >= 2)
        for (size_t k = 0; k < pad; k++)
            dsf_buf_putc(out, ' ');
    dsf_buf_add(out, b->data ? b->data : "", b->len);
    if (last)
        return;
    if (c < 2)
        for (size_t k = 0; k < pad; k++)
            dsf_buf_putc(out, ' ');
    dsf_buf_puts(out, "  ");
}

static void print_rows(const dsf_collect_table *t, const dsf_results_decl *rs,
                       const size_t *cols, size_t ncols, dsf_buf *out)
{
    size_t nc = ncols + 2;
    size_t *w = dsf_xcalloc(nc, sizeof *w);
    dsf_buf b = DSF_BUF_INIT;
    for (size_t c = 0; c < nc; c++) {
        dsf_buf_clear(&b);
        dsf_buf_puts(&b, c == 0 ? "variant" : c == 1 ? "status"
                                 : rs->metrics[cols[c - 2]].title);
        w[c] = b.len;
        for (size_t i = 0; i < t->n; i++) {
            cell(&b, t, rs, cols, i, c);
            if (b.len > w[c])
                w[c] = b.len;
        }
    }
    for (size_t c = 0; c < nc; c++) {
        dsf_buf_clear(&b);
        dsf_buf_puts(&b, c == 0 ? "variant" : c == 1 ? "status"
                                 : rs->metrics[cols[c - 2]].title);
        put_cell(out, &b, w[c], c, c + 1 == nc);
    }
    dsf_buf_putc(out, '\n');
    for (size_t i = 0; i < t->n; i++) {
        for (size_t c = 0; c < nc; c++) {
            cell(&b, t, rs, cols, i, c);
            put_cell(out, &b, w[c], c, c + 1 == nc);
        }
        dsf_buf_putc(out, '\n');
    }
    dsf_buf_free(&b);
    free(w);
}

static void print_footer(const dsf_collect_table *t,
                         const dsf_results_decl *rs,
                         const dsf_collect_opts *o, dsf_buf *out)
{
    for (size_t i = 0; i < t->n; i++) {
        if (!t->rows[i].error)
            continue;
        dsf_buf_puts(out, "  ");
        dsf_text_clean(out, t->rows[i].name, true);
        dsf_buf_puts(out, ": ");
        dsf_text_clean(out, t->rows[i].status, true);
        dsf_buf_puts(out, ": ");
        dsf_text_clean(out, t->rows[i].error, true);
        dsf_buf_putc(out, '\n');
    }
    cJSON *counts = dsf_collect_table_counts(t);
    dsf_buf_printf(out, "%zu variant%s:", t->n, t->n == 1 ? "" : "s");
    for (const cJSON *c = counts->child; c; c = c->next) {
        dsf_buf_printf(out, "%s %d ", c == counts->child ? "" : ",",
                       (int)c->valuedouble);
        dsf_text_clean(out, c->string, true);
    }
    cJSON_Delete(counts);
    dsf_buf_printf(out, "; wrote %s/results.json\n", o->dir);
    if (!o->best)
        return;
    if (t->best == (size_t)-1) {
        dsf_buf_printf(out, "--best %s: no variant with status ok measured "
                       "it; best.json not written\n", o->best);
        return;
    }
    size_t m = 0;
    while (strcmp(rs->metrics[m].name, o->best))
        m++;
    dsf_buf b = DSF_BUF_INIT;
    dsf_units_format(&b, t->rows[t->best].vals[m], rs->metrics[m].unit);
    dsf_buf_printf(out, "best by %s: ", rs->metrics[m].title);
    dsf_text_clean(out, t->rows[t->best].name, true);
    dsf_buf_printf(out, " (%s); wrote %s/best.json, for: %s\n",
                   dsf_buf_str(&b), o->dir, t->best_cmd);
    dsf_buf_free(&b);
}

void dsf_collect_table_print(const dsf_collect_table *t,
                             const dsf_results_decl *rs,
                             const dsf_collect_opts *o, dsf_buf *out)
{
    size_t *cols = dsf_xcalloc(rs->nmetrics + 1, sizeof *cols);
    size_t ncols = 0;
    for (size_t m = 0; m < rs->nmetrics; m++) {
        bool any = false;
        for (size_t i = 0; i < t->n && !any; i++)
            any = !isnan(t->rows[i].vals[m]);
        if (any)
            cols[ncols++] = m;
    }
    print_rows(t, rs, cols, ncols, out);
    print_footer(t, rs, o, out);
    free(cols);
}

void dsf_collect_table_free(dsf_collect_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->rows[i].name);
        free(t->rows[i].status);
        free(t->rows[i].error);
        free(t->rows[i].vals);
    }
    free(t->rows);
    free(t->best_cmd);
    memset(t, 0, sizeof *t);
}
