/* builtin.c -- see builtin.h. */
#include "builtin.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "lua/bcsize.h"

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

const dsf_builtin_chunk *dsf_builtin_find(const char *path, const char *text,
                                          size_t len)
{
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++)
        if (c->src_len == len && names_builtin(path, c->rel) &&
            memcmp(c->src, text, len) == 0)
            return c;
    return NULL;
}

static void reader_init(dsf_builtin_reader *r, const unsigned char *bc,
                        size_t bc_len, size_t name_off, size_t name_len,
                        const char *path)
{
    r->bc = bc;
    r->bc_len = bc_len;
    r->name_off = name_off;
    r->name_len = name_len;
    r->path = path;
    r->step = 0;
    /* '@' + path + the terminating byte Lua counts in the size */
    r->size_len = dsf_bc_encode_size(r->size, strlen(path) + 2);
}

void dsf_builtin_reader_init(dsf_builtin_reader *r,
                             const dsf_builtin_chunk *chunk,
                             const char *path)
{
    reader_init(r, chunk->bc, chunk->bc_len, chunk->name_off,
                chunk->name_len, path);
}

void dsf_builtin_reader_init_part(dsf_builtin_reader *r,
                                  const dsf_builtin_chunk *chunk, size_t i,
                                  const char *path)
{
    const dsf_builtin_part *part = &chunk->parts[i];
    reader_init(r, chunk->parts_bc + part->off, part->bc_len,
                part->name_off, part->name_len, path);
}

const char *dsf_builtin_read(lua_State *L, void *ud, size_t *size)
{
    (void)L;
    dsf_builtin_reader *r = ud;
    switch (r->step++) {
    case 0:
        *size = r->name_off;
        return (const char *)r->bc;
    case 1:
        *size = r->size_len;
        return (const char *)r->size;
    case 2:
        *size = 1;
        return "@";
    case 3:
        *size = strlen(r->path);
        return r->path;
    case 4:
        *size = r->bc_len - r->name_off - r->name_len;
        return (const char *)r->bc + r->name_off + r->name_len;
    default:
        *size = 0;
        return NULL;
    }
}
