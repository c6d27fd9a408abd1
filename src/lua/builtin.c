/* builtin.c -- see builtin.h. */
#include "builtin.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

/* Is path rel itself (possibly as ./rel) or .../rel? */
static bool names_builtin(const char *path, const char *rel)
{
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    size_t n = strlen(path), m = strlen(rel);
    if (n == m)
        return !strcmp(path, rel);
    return n > m && path[n - m - 1] == '/' && !strcmp(path + n - m, rel);
}

/* Lua 5.4's dumpSize encoding (see precompile.c). */
static size_t encode_size(unsigned char *out, size_t x)
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

int dsf_builtin_bytecode(char **bc_out, size_t *len_out, const char *path,
                         const char *text, size_t len)
{
    *bc_out = NULL;
    *len_out = 0;
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++) {
        if (c->src_len != len || !names_builtin(path, c->rel) ||
            memcmp(c->src, text, len) != 0)
            continue;
        /* Replace the embedded chunk name "@<rel>" by "@<path>", so error
        ** messages and tracebacks name the file that was read. */
        size_t plen = strlen(path);
        unsigned char enc[16];
        size_t elen = encode_size(enc, plen + 2); /* '@' + path + 1 */
        size_t total = c->bc_len - c->name_len + elen + 1 + plen;
        char *bc = dsf_xmalloc(total);
        size_t o = 0;
        memcpy(bc + o, c->bc, c->name_off);
        o += c->name_off;
        memcpy(bc + o, enc, elen);
        o += elen;
        bc[o++] = '@';
        memcpy(bc + o, path, plen);
        o += plen;
        memcpy(bc + o, c->bc + c->name_off + c->name_len,
               c->bc_len - c->name_off - c->name_len);
        *bc_out = bc;
        *len_out = total;
        return 1;
    }
    return 0;
}
