/* utf16.c -- see utf16.h. */
#include "lsp/utf16.h"

#include <string.h>

#include "core/utf8.h"

/* The bytes and UTF-16 units of the character at s[0..n) (n > 0). */
static size_t step(const char *s, size_t n, long *units)
{
    size_t k = dsf_utf8_seq((const unsigned char *)s, n);
    if (!k) {
        *units = 1;
        return 1;
    }
    *units = k == 4 ? 2 : 1;
    return k;
}

long dsf_utf16_units(const char *s, size_t n)
{
    long total = 0, u;
    size_t i = 0;
    while (i < n) {
        i += step(s + i, n - i, &u);
        total += u;
    }
    return total;
}

size_t dsf_utf16_line_start(const char *text, size_t len, long line)
{
    size_t off = 0;
    while (line > 0) {
        const char *nl = memchr(text + off, '\n', len - off);
        if (!nl)
            return len;
        off = (size_t)(nl - text) + 1;
        line--;
    }
    return off;
}

size_t dsf_utf16_offset(const char *text, size_t len, long line,
                        long character)
{
    if (line < 0)
        return 0;
    size_t off = dsf_utf16_line_start(text, len, line);
    if (off == len)
        return len;
    const char *nl = memchr(text + off, '\n', len - off);
    size_t end = nl ? (size_t)(nl - text) : len;
    long u = 0, su;
    while (off < end && u < character) {
        size_t k = step(text + off, end - off, &su);
        if (u + su > character) /* inside a surrogate pair */
            break;
        u += su;
        off += k;
    }
    return off;
}

void dsf_utf16_position(const char *text, size_t len, size_t off,
                        long *line, long *character)
{
    if (off > len)
        off = len;
    long l = 0;
    size_t start = 0;
    for (;;) {
        const char *nl = memchr(text + start, '\n', off - start);
        if (!nl)
            break;
        start = (size_t)(nl - text) + 1;
        l++;
    }
    *line = l;
    *character = dsf_utf16_units(text + start, off - start);
}
