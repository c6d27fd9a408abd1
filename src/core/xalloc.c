/* xalloc.c -- see xalloc.h. */
#include "xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn static void oom(size_t n)
{
    fprintf(stderr, "dsforge: fatal: out of memory (%zu bytes)\n", n);
    abort();
}

_Noreturn void dsf_xoom(void)
{
    oom(0);
}

void *dsf_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *dsf_xcalloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        oom(SIZE_MAX);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *dsf_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *dsf_xstrdup(const char *s)
{
    return s ? dsf_xstrndup(s, strlen(s)) : NULL;
}

char *dsf_xstrndup(const char *s, size_t n)
{
    char *p = dsf_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *dsf_xasprintf(const char *fmt, ...)
{
    /* One formatting pass when the text fits the stack buffer (most do),
    ** a second only for a longer one. */
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom(0);
    if ((size_t)n < sizeof small)
        return dsf_xstrndup(small, (size_t)n);
    char *p = dsf_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

char *dsf_xconcat(const char *s, ...)
{
    va_list ap;
    size_t n = 0;
    va_start(ap, s);
    for (const char *a = s; a; a = va_arg(ap, const char *)) {
        size_t len = strlen(a);
        if (len > SIZE_MAX - 1 - n)
            oom(SIZE_MAX);
        n += len;
    }
    va_end(ap);
    char *p = dsf_xmalloc(n + 1), *w = p;
    va_start(ap, s);
    for (const char *a = s; a; a = va_arg(ap, const char *)) {
        size_t len = strlen(a);
        memcpy(w, a, len);
        w += len;
    }
    va_end(ap);
    *w = '\0';
    return p;
}

void dsf_xgrow(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            oom(SIZE_MAX);
        ncap *= 2;
    }
    *items = dsf_xrealloc(*items, ncap * elem);
    *cap = ncap;
}
