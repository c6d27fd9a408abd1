/* diag.c -- see diag.h. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xalloc.h"
#include "core/strutil.h"
#include "core/utf8.h"

/* Frees what one diagnostic owns (not the diagnostic itself). */
static void diag_free(dsf_diag *g)
{
    free(g->file);
    free(g->rule);
    free(g->message);
    free(g->hint);
    free(g->path);
    free(g->excerpt);
    free(g->trace);
    free(g->edits);
}

static char *vformat(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0)));

static char *vformat(const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return dsf_xstrdup(fmt);
    char *s = dsf_xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static dsf_diag *vadd(dsf_diags *d, dsf_severity sev, const char *file,
                      int line, int col, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

static dsf_diag *vadd(dsf_diags *d, dsf_severity sev, const char *file,
                      int line, int col, const char *fmt, va_list ap)
{
    dsf_xgrow((void **)&d->items, &d->cap, d->len + 1, sizeof *d->items);
    dsf_diag *g = &d->items[d->len++];
    memset(g, 0, sizeof *g);
    g->severity = sev;
    g->file = dsf_xstrdup(file);
    g->line = line;
    g->col = col;
    g->message = vformat(fmt, ap);
    return g;
}

dsf_diag *dsf_diag_add(dsf_diags *d, dsf_severity sev, const char *file,
                       int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dsf_diag *g = vadd(d, sev, file, line, col, fmt, ap);
    va_end(ap);
    return g;
}

int dsf_diag_error(dsf_diags *d, int code, const char *file, int line,
                   int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(d, DSF_ERROR, file, line, col, fmt, ap);
    va_end(ap);
    return code;
}

void dsf_diag_set_hint(dsf_diag *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(g->hint);
    g->hint = vformat(fmt, ap);
    va_end(ap);
}

static void replace(char **slot, const char *s)
{
    free(*slot);
    *slot = dsf_xstrdup(s);
}

void dsf_diag_set_rule(dsf_diag *g, const char *rule) { replace(&g->rule, rule); }
void dsf_diag_set_path(dsf_diag *g, const char *path) { replace(&g->path, path); }
void dsf_diag_set_trace(dsf_diag *g, const char *t) { replace(&g->trace, t); }
void dsf_diag_set_edits(dsf_diag *g, const char *e) { replace(&g->edits, e); }

void dsf_diag_set_excerpt(dsf_diag *g, const char *line_start, size_t len)
{
    free(g->excerpt);
    g->excerpt = dsf_xstrndup(line_start, len);
}

dsf_diag *dsf_diags_last(dsf_diags *d)
{
    return d->len ? &d->items[d->len - 1] : NULL;
}

size_t dsf_diags_count(const dsf_diags *d, dsf_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < d->len; i++)
        n += d->items[i].severity == sev;
    return n;
}

void dsf_diags_move(dsf_diags *dst, dsf_diags *src)
{
    if (!src->len)
        return;
    dsf_xgrow((void **)&dst->items, &dst->cap, dst->len + src->len,
              sizeof *dst->items);
    memcpy(dst->items + dst->len, src->items, src->len * sizeof *src->items);
    dst->len += src->len;
    src->len = 0;
}

static int strcmp_null(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_diag(const dsf_diag *a, const dsf_diag *b)
{
    int c = strcmp_null(a->file, b->file);
    if (c)
        return c;
    if (a->last != b->last)
        return a->last ? 1 : -1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->col != b->col)
        return a->col < b->col ? -1 : 1;
    c = strcmp_null(a->rule, b->rule);
    if (c)
        return c;
    return strcmp_null(a->path, b->path);
}

/* Stable merge of the sorted runs a[lo..mid) and a[mid..hi) through tmp. */
static void merge_sort(dsf_diag *a, dsf_diag *tmp, size_t lo, size_t hi)
{
    if (hi - lo < 2)
        return;
    if (hi - lo <= 16) { /* insertion sort: stable, and short runs */
        for (size_t i = lo + 1; i < hi; i++) {
            dsf_diag t = a[i];
            size_t j = i;
            while (j > lo && cmp_diag(&a[j - 1], &t) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = t;
        }
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    merge_sort(a, tmp, lo, mid);
    merge_sort(a, tmp, mid, hi);
    if (cmp_diag(&a[mid - 1], &a[mid]) <= 0)
        return; /* already in order (the common case: one file's walk) */
    memcpy(tmp + lo, a + lo, (hi - lo) * sizeof *a);
    size_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        a[k++] = cmp_diag(&tmp[j], &tmp[i]) < 0 ? tmp[j++] : tmp[i++];
    while (i < mid)
        a[k++] = tmp[i++];
    while (j < hi)
        a[k++] = tmp[j++];
}

void dsf_diags_sort(dsf_diags *d)
{
    /* A merge sort: stable, and O(n log n) for the many findings of a
    ** large file (an insertion sort was quadratic in them). */
    if (d->len < 2)
        return;
    dsf_diag *tmp = d->len > 16 ? dsf_xcalloc(d->len, sizeof *tmp) : NULL;
    merge_sort(d->items, tmp, 0, d->len);
    free(tmp);
}

typedef struct capgroup {
    dsf_severity severity;
    const char *rule; /* borrowed from a kept diagnostic; may be NULL */
    size_t seen;
} capgroup;

size_t dsf_diags_cap(dsf_diags *d, size_t max_shown)
{
    if (max_shown < 1)
        max_shown = 1; /* (a file's note names it by a kept one's name) */
    dsf_diags out = DSF_DIAGS_INIT;
    capgroup *groups = NULL;
    size_t ngroups = 0, capgroups = 0, removed = 0;
    size_t start = 0;
    while (start < d->len) {
        /* One file's run of diagnostics: [start, end). */
        size_t end = start + 1;
        while (end < d->len &&
               strcmp_null(d->items[end].file, d->items[start].file) == 0)
            end++;
        ngroups = 0;
        size_t first_out = out.len;
        for (size_t i = start; i < end; i++) {
            dsf_diag *g = &d->items[i];
            capgroup *grp = NULL;
            /* (a file's findings come from a few dozen rules at most) */
            for (size_t k = 0; k < ngroups && !grp; k++)
                if (groups[k].severity == g->severity &&
                    strcmp_null(groups[k].rule, g->rule) == 0)
                    grp = &groups[k];
            if (!grp) {
                dsf_xgrow((void **)&groups, &capgroups, ngroups + 1,
                          sizeof *groups);
                grp = &groups[ngroups++];
                grp->severity = g->severity;
                grp->rule = NULL;
                grp->seen = 0;
            }
            if (grp->seen++ < max_shown) {
                dsf_xgrow((void **)&out.items, &out.cap, out.len + 1,
                          sizeof *out.items);
                out.items[out.len++] = *g;
                if (!grp->rule)
                    grp->rule = out.items[out.len - 1].rule;
            } else {
                diag_free(g);
                removed++;
            }
        }
        /* (a group's rule is a kept diagnostic's string: out's array may
        ** move, the strings do not) */
        for (size_t k = 0; k < ngroups; k++) {
            if (groups[k].seen <= max_shown)
                continue;
            char n[32];
            dsf_thousands(n, groups[k].seen - max_shown);
            const char *file = out.items[first_out].file;
            dsf_diag *g = dsf_diag_add(
                &out, DSF_NOTE, file, 0, 0,
                "%s more %s%s not shown (at most %zu of one rule and "
                "severity per file)",
                n, dsf_severity_name(groups[k].severity),
                groups[k].seen - max_shown == 1 ? "" : "s", max_shown);
            g->last = true;
            if (groups[k].rule)
                dsf_diag_set_rule(g, groups[k].rule);
        }
        start = end;
    }
    free(groups);
    free(d->items);
    *d = out;
    return removed;
}

const char *dsf_severity_name(dsf_severity sev)
{
    switch (sev) {
    case DSF_NOTE:
        return "note";
    case DSF_WARNING:
        return "warning";
    case DSF_ERROR:
        return "error";
    }
    return "error";
}

static const char *sev_color(dsf_severity sev)
{
    switch (sev) {
    case DSF_NOTE:
        return "\033[1;36m";
    case DSF_WARNING:
        return "\033[1;35m";
    case DSF_ERROR:
        return "\033[1;31m";
    }
    return "";
}

static bool is_bidi_control(unsigned cp)
{
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x200E || cp == 0x200F || cp == 0x061C;
}

/* dsf_text_clean of s[0..n) (NUL shown as "^@"); returns how many bytes
** of s it took: n, or less when the last character is cut by n (whole
** characters only, so a caller that cleans in pieces carries the rest
** over). */
static size_t clean_n(dsf_buf *out, const char *s, size_t n, bool one_line,
                      bool last)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            if ((c >= 0x20 && c != 0x7F) || c == '\t' ||
                (c == '\n' && !one_line)) {
                size_t j = i + 1; /* copy the whole run of plain text */
                while (j < n && ((p[j] >= 0x20 && p[j] < 0x7F) ||
                                 p[j] == '\t' || (p[j] == '\n' && !one_line)))
                    j++;
                dsf_buf_add(out, s + i, j - i);
                i = j;
                continue;
            }
            dsf_buf_putc(out, '^');
            dsf_buf_putc(out, c == 0x7F ? '?' : (char)(c + 0x40));
            i++;
            continue;
        }
        size_t len = dsf_utf8_seq(p + i, n - i);
        if (!len && !last && n - i < 4)
            return i; /* maybe a character the next piece completes */
        if (!len) {
            char esc[5] = {'\\', 'x', hex[c >> 4], hex[c & 15], 0};
            dsf_buf_puts(out, esc);
            i++;
            continue;
        }
        unsigned cp = len == 2 ? (unsigned)(c & 0x1F) << 6 | (p[i + 1] & 0x3F)
                      : len == 3 ? (unsigned)(c & 0x0F) << 12 |
                                       (unsigned)(p[i + 1] & 0x3F) << 6 |
                                       (p[i + 2] & 0x3F)
                                 : 0x10000; /* 4 bytes: never a control */
        if ((cp >= 0x80 && cp <= 0x9F) || is_bidi_control(cp))
            dsf_buf_printf(out, "<U+%04X>", cp);
        else
            dsf_buf_add(out, s + i, len);
        i += len;
    }
    return n;
}

void dsf_text_clean(dsf_buf *out, const char *s, bool one_line)
{
    clean_n(out, s, strlen(s), one_line, true);
}

/* What scripts have made this process print so far, cleaned. */
static size_t script_output;

size_t dsf_script_output_left(void)
{
    return script_output < DSF_SCRIPT_OUTPUT_MAX
               ? DSF_SCRIPT_OUTPUT_MAX - script_output
               : 0;
}

void dsf_write_script_text(const char *s, size_t n, FILE *f, bool one_line)
{
    static bool noted;
    dsf_buf b = DSF_BUF_INIT;
    size_t i = 0;
    while (i < n && dsf_script_output_left()) {
        /* in pieces: memory stays small whatever a script prints */
        size_t piece = n - i < 4096 ? n - i : 4096;
        b.len = 0;
        size_t took = clean_n(&b, s + i, piece, one_line, i + piece == n);
        if (!took) /* a character longer than what is left: not UTF-8 */
            took = clean_n(&b, s + i, piece, one_line, true);
        i += took;
        size_t w = b.len < dsf_script_output_left() ? b.len
                                                   : dsf_script_output_left();
        if (w && fwrite(b.data, 1, w, f) != w)
            break;
        script_output += w;
    }
    dsf_buf_free(&b);
    if (i < n && !noted) {
        noted = true;
        fprintf(f, "%s[dsforge: output of the profiles and plugins cut at "
                   "%u MiB; the rest is not shown]\n", one_line ? " " : "\n",
                (unsigned)(DSF_SCRIPT_OUTPUT_MAX >> 20));
    }
}

void dsf_fputs_clean(const char *s, FILE *f, bool one_line)
{
    dsf_write_script_text(s, strlen(s), f, one_line);
}

/* dsf_fputs_clean outside the scripts' budget: a diagnostic's own parts
** (file names; messages are bounded where they are made). */
static void fputs_clean_all(const char *s, FILE *f, bool one_line)
{
    dsf_buf b = DSF_BUF_INIT;
    dsf_text_clean(&b, s, one_line);
    if (b.len)
        fwrite(b.data, 1, b.len, f);
    dsf_buf_free(&b);
}

static void print_one(const dsf_diag *g, FILE *out, bool color)
{
    const char *bold = color ? "\033[1m" : "";
    const char *reset = color ? "\033[0m" : "";
    fputs(bold, out);
    if (g->file) {
        fputs_clean_all(g->file, out, true);
        if (g->line > 0) {
            fprintf(out, ":%d", g->line);
            if (g->col > 0)
                fprintf(out, ":%d", g->col);
        }
    } else {
        fputs("dsforge", out);
    }
    fprintf(out, ":%s %s%s:%s ", reset, color ? sev_color(g->severity) : "",
            dsf_severity_name(g->severity), reset);
    /* An error may span lines (a profile's table of what was tried):
    ** its newlines stay. A warning is one line (a script reports many:
    ** none may fake a line of its own). Every other control is
    ** neutralised. */
    fputs_clean_all(g->message, out, g->severity == DSF_WARNING);
    if (g->rule) {
        fputs(" [", out);
        fputs_clean_all(g->rule, out, true);
        fputc(']', out);
    }
    fputc('\n', out);
    if (g->excerpt) {
        fputs("    ", out);
        fputs_clean_all(g->excerpt, out, true);
        fputs("\n    ", out);
        /* The caret goes under column col of the cleaned line: tabs keep
        ** their width, everything else is as wide as its cleaned form. */
        size_t upto = strlen(g->excerpt);
        if (g->col > 0 && (size_t)(g->col - 1) < upto)
            upto = (size_t)(g->col - 1);
        char *prefix = dsf_xstrndup(g->excerpt, upto);
        dsf_buf pre = DSF_BUF_INIT;
        dsf_text_clean(&pre, prefix, true);
        for (size_t i = 0; i < pre.len; i++) {
            unsigned char c = (unsigned char)pre.data[i];
            if ((c & 0xC0) == 0x80)
                continue; /* one column per character */
            fputc(c == '\t' ? '\t' : ' ', out);
        }
        dsf_buf_free(&pre);
        free(prefix);
        fprintf(out, "%s^%s\n", color ? sev_color(g->severity) : "", reset);
    }
    if (g->hint) {
        fprintf(out, "  %shint:%s ", bold, reset);
        fputs_clean_all(g->hint, out, false);
        fputc('\n', out);
    }
    if (g->trace) {
        fputs_clean_all(g->trace, out, false);
        fputc('\n', out);
    }
}

void dsf_diags_print(const dsf_diags *d, FILE *out, bool color)
{
    if (!d->len)
        return;
    /* Composed in memory and written at once: stderr is unbuffered, and
    ** printed piece by piece a check of 1,000 files made 16,000 write
    ** calls. Straight to out if memory runs short. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    FILE *to = mem ? mem : out;
    for (size_t i = 0; i < d->len; i++)
        print_one(&d->items[i], to, color);
    if (mem) {
        if (fclose(mem) == 0 && len)
            fwrite(text, 1, len, out);
        free(text);
    }
}

void dsf_diags_free(dsf_diags *d)
{
    for (size_t i = 0; i < d->len; i++)
        diag_free(&d->items[i]);
    free(d->items);
    d->items = NULL;
    d->len = d->cap = 0;
}
