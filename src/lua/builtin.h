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

typedef struct dsf_builtin_chunk {
    const char *rel;                /* "plugins/deepspeed/schema.lua" */
    const unsigned char *src;       /* the source text it was made from */
    size_t src_len;
    const unsigned char *bc;        /* its bytecode, named "@<rel>" */
    size_t bc_len;
    size_t name_off, name_len;      /* where the encoded name sits in bc */
} dsf_builtin_chunk;

/* NULL-terminated (rel == NULL), generated at build time. */
extern const dsf_builtin_chunk dsf_builtin_chunks[];

/* When path ends with a built-in file's relative name and text is exactly
** that file's source, returns its bytecode with the chunk name "@path" in
** *bc_out (caller frees) and its length; else returns 0 and *bc_out is
** NULL. */
int dsf_builtin_bytecode(char **bc_out, size_t *len_out, const char *path,
                         const char *text, size_t len);

#endif
