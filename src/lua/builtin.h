/*
** builtin.h -- the built-in profiles and plugins, precompiled at build
** time (src/tools/precompile.c) into bytecode embedded in the executable.
**
** Compiling ~250 KB of plugin Lua costs more than everything else a `gen`
** does; loading the same code from bytecode is about eight times cheaper.
** The embedded bytecode is used only for a file whose bytes equal the
** embedded source exactly, so an edited or foreign file is always
** compiled from its text, and bytecode never comes from outside the
** executable.
*/
#ifndef DSF_BUILTIN_H
#define DSF_BUILTIN_H

#include <stddef.h>

#include <lua.h>

/* A part of a data module: a chunk its main chunk loads when the tables
** it fills are first read (src/tools/snapshot.lua), named like the main.
** Its bytecode is parts_bc[off .. off + bc_len) of its chunk (offsets, not
** pointers: the table needs no relocation at start-up). */
typedef struct dsf_builtin_part {
    size_t off, bc_len;
    size_t name_off, name_len;
} dsf_builtin_part;

typedef struct dsf_builtin_chunk {
    const char *rel;                /* "plugins/deepspeed/schema.lua" */
    const unsigned char *src;       /* the source text it was made from */
    size_t src_len;
    const unsigned char *bc;        /* its bytecode, named "@<rel>" */
    size_t bc_len;
    size_t name_off, name_len;      /* where the encoded name sits in bc */
    const char *sha256;             /* lower-case hex sha256 of src, computed
                                    ** when the executable was built */
    int snapshot;                   /* bc builds the value src returns (a
                                    ** data module, see precompile.c) */
    const unsigned char *parts_bc;  /* its parts' bytecode, one after the
                                    ** other (a data module), or NULL */
    const dsf_builtin_part *parts;  /* its parts, or NULL */
    size_t nparts;
} dsf_builtin_chunk;

/* NULL-terminated (rel == NULL), generated at build time. */
extern const dsf_builtin_chunk dsf_builtin_chunks[];

/* The built-in chunk whose source text is exactly text[0..len) and whose
** relative name path ends with, or NULL. Borrowed (static). */
const dsf_builtin_chunk *dsf_builtin_find(const char *path, const char *text,
                                          size_t len);

/* A lua_Reader state that streams chunk's bytecode with its chunk name
** replaced by "@path" (so messages name the file that was read), without
** copying the bytecode. */
typedef struct dsf_builtin_reader {
    const unsigned char *bc;
    size_t bc_len, name_off, name_len;
    const char *path;
    int step;                  /* 0 prefix, 1 size, 2 '@', 3 path, 4 rest */
    unsigned char size[16];
    size_t size_len;
} dsf_builtin_reader;

void dsf_builtin_reader_init(dsf_builtin_reader *r,
                             const dsf_builtin_chunk *chunk,
                             const char *path);

/* The same for part i (from 0) of a data module chunk (named "@path"
** too). */
void dsf_builtin_reader_init_part(dsf_builtin_reader *r,
                                  const dsf_builtin_chunk *chunk, size_t i,
                                  const char *path);

/* The lua_Reader (ud is a dsf_builtin_reader). */
const char *dsf_builtin_read(lua_State *L, void *ud, size_t *size);

#endif
