/*
** bcsize.h -- Lua 5.4's dumpSize encoding (lundump.c's loadSize reads it):
** 7-bit groups, most significant first, the last byte marked with 0x80.
** Shared by the build's bytecode tools (src/tools/) and the reader that
** streams the built-in chunks with their names spliced in (builtin.c).
*/
#ifndef DSF_BCSIZE_H
#define DSF_BCSIZE_H

#include <stddef.h>

/* Writes the encoding of x to out (at most 10 bytes); returns its
** length. */
static inline size_t dsf_bc_encode_size(unsigned char *out, size_t x)
{
    unsigned char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = x & 0x7f;
        x >>= 7;
    } while (x);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n - 1] |= 0x80;
    return n;
}

#endif
