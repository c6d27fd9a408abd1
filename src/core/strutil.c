/* strutil.c -- see strutil.h. */
#include "strutil.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

size_t dsf_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = dsf_xmalloc((lb + 1) * sizeof *row);
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t r = row[lb];
    free(row);
    return r;
}

const char *dsf_closest(const char *word, const char *const *candidates,
                        size_t n)
{
    size_t limit = strlen(word) / 3;
    if (limit < 1)
        limit = 1;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        size_t dd = dsf_edit_distance(word, candidates[i]);
        if (dd < best_d) {
            best_d = dd;
            best = candidates[i];
        }
    }
    return best;
}

const char *dsf_plural(size_t n)
{
    return n == 1 ? "" : "s";
}
