/* record.c -- see record.h. */
#include "core/record.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

void dsf_rec_put_u64(FILE *f, uint64_t x)
{
    fwrite(&x, sizeof x, 1, f);
}

void dsf_rec_put_str(FILE *f, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    dsf_rec_put_u64(f, s ? n + 1 : 0);
    if (n)
        fwrite(s, 1, n, f);
}

void dsf_rec_put_diags(FILE *f, const dsf_diags *d, size_t from, size_t to)
{
    dsf_rec_put_u64(f, to - from);
    for (size_t i = from; i < to; i++) {
        const dsf_diag *g = &d->items[i];
        /* (the severity, and bit 8 for a count that sorts last) */
        dsf_rec_put_u64(f, (uint64_t)g->severity | (g->last ? 256u : 0u));
        dsf_rec_put_str(f, g->file);
        dsf_rec_put_u64(f, (uint64_t)(int64_t)g->line);
        dsf_rec_put_u64(f, (uint64_t)(int64_t)g->col);
        dsf_rec_put_str(f, g->rule);
        dsf_rec_put_str(f, g->message);
        dsf_rec_put_str(f, g->hint);
        dsf_rec_put_str(f, g->path);
        dsf_rec_put_str(f, g->excerpt);
        dsf_rec_put_str(f, g->trace);
        dsf_rec_put_str(f, g->edits);
    }
}

bool dsf_rec_get_u64(FILE *f, uint64_t *x)
{
    return fread(x, sizeof *x, 1, f) == 1;
}

bool dsf_rec_get_str(FILE *f, char **s)
{
    uint64_t n;
    *s = NULL;
    if (!dsf_rec_get_u64(f, &n))
        return false;
    if (!n)
        return true;
    if (n > SIZE_MAX / 2)
        return false;
    *s = dsf_xmalloc((size_t)n);
    if (fread(*s, 1, (size_t)n - 1, f) != n - 1) {
        free(*s);
        *s = NULL;
        return false;
    }
    (*s)[n - 1] = '\0';
    return true;
}

bool dsf_rec_get_diags(FILE *f, dsf_diags *d)
{
    uint64_t n;
    if (!dsf_rec_get_u64(f, &n))
        return false;
    for (uint64_t i = 0; i < n; i++) {
        dsf_xgrow((void **)&d->items, &d->cap, d->len + 1, sizeof *d->items);
        dsf_diag *g = &d->items[d->len];
        memset(g, 0, sizeof *g);
        uint64_t sev = 0, line = 0, col = 0; /* a short read leaves them */
        bool ok = dsf_rec_get_u64(f, &sev) && dsf_rec_get_str(f, &g->file) &&
                  dsf_rec_get_u64(f, &line) && dsf_rec_get_u64(f, &col) &&
                  dsf_rec_get_str(f, &g->rule) &&
                  dsf_rec_get_str(f, &g->message) &&
                  dsf_rec_get_str(f, &g->hint) &&
                  dsf_rec_get_str(f, &g->path) &&
                  dsf_rec_get_str(f, &g->excerpt) &&
                  dsf_rec_get_str(f, &g->trace) &&
                  dsf_rec_get_str(f, &g->edits);
        g->severity = (dsf_severity)(sev & 255u);
        g->last = (sev & 256u) != 0;
        g->line = (int)(int64_t)line;
        g->col = (int)(int64_t)col;
        d->len++; /* even half read: freed with the list */
        if (!ok)
            return false;
    }
    return true;
}
