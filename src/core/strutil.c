/* strutil.c -- see strutil.h. */
#include "strutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

size_t dsf_edit_distance(const char *a, const char *b)
{
    /* optimal string alignment: insert, delete, substitute, or swap two
    ** adjacent characters ("tire" is one step from "tier") */
    size_t la = strlen(a), lb = strlen(b), w = lb + 1;
    size_t *m = dsf_xmalloc((la + 1) * w * sizeof *m);
    for (size_t i = 0; i <= la; i++)
        m[i * w] = i;
    for (size_t j = 0; j <= lb; j++)
        m[j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = m[(i - 1) * w + j - 1] + cost;
            if (m[(i - 1) * w + j] + 1 < best)
                best = m[(i - 1) * w + j] + 1;
            if (m[i * w + j - 1] + 1 < best)
                best = m[i * w + j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && m[(i - 2) * w + j - 2] + 1 < best)
                best = m[(i - 2) * w + j - 2] + 1;
            m[i * w + j] = best;
        }
    }
    size_t r = m[la * w + lb];
    free(m);
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

char *dsf_thousands(char *buf, size_t n)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%zu", n);
    size_t k = 0;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}

const char *dsf_plural(size_t n)
{
    return n == 1 ? "" : "s";
}

int dsf_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
