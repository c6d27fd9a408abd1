/* buf.c -- see buf.h. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static void reserve(dsf_buf *b, size_t extra)
{
    dsf_xgrow((void **)&b->data, &b->cap, b->len + extra + 1, 1);
}

void dsf_buf_add(dsf_buf *b, const char *s, size_t n)
{
    if (b->cap - b->len <= n) /* room for n bytes and the NUL? */
        reserve(b, n);
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void dsf_buf_puts(dsf_buf *b, const char *s)
{
    dsf_buf_add(b, s, strlen(s));
}

void dsf_buf_putc(dsf_buf *b, char c)
{
    if (b->cap - b->len <= 1)
        reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void dsf_buf_printf(dsf_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *dsf_buf_str(const dsf_buf *b)
{
    return b->data ? b->data : "";
}

char *dsf_buf_take(dsf_buf *b)
{
    char *s = b->data ? b->data : dsf_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void dsf_buf_clear(dsf_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void dsf_buf_free(dsf_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
