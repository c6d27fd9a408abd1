/*
** srccache.h -- the script files one dsforge run reads, each read once.
**
** Every profile evaluation gets a fresh Lua state, but the sources behind
** it do not change during a run: the cache keeps their text and sha256 so
** a 1,000-variant matrix reads each file once, and the manifest can name
** exactly the bytes that were run.
*/
#ifndef DSF_SRCCACHE_H
#define DSF_SRCCACHE_H

#include <stddef.h>

#include "core/diag.h"

#define DSF_SCRIPT_MAX_BYTES (4u << 20)

typedef struct dsf_srccache dsf_srccache;

typedef struct dsf_source {
    const char *path;  /* as given to dsf_srccache_get */
    const char *text;  /* NUL-terminated */
    size_t len;
    char sha256[65];   /* lower-case hex of text; "" until asked for */
    char *bytecode;    /* this process's compilation of text, or NULL */
    size_t bytecode_len;
    const void *builtin;   /* its precompiled built-in chunk, or NULL */
    int builtin_checked;   /* builtin has been looked up */
    int borrowed;          /* text is the executable's embedded copy */
} dsf_source;

/* A new, empty cache; free with dsf_srccache_free. */
dsf_srccache *dsf_srccache_new(void);

/* The source at path, read on first use (at most DSF_SCRIPT_MAX_BYTES);
** a path under DSF_BUILTIN_ROOT is the executable's embedded copy (see
** lua/scriptfs.h). *out is borrowed from the cache until it is freed.
** DSF_EINPUT when the file cannot be read. */
int dsf_srccache_get(dsf_srccache *c, const char *path,
                     const dsf_source **out, dsf_diags *d);

/* Keeps a copy of the bytecode the host compiled from s->text in this
** process (never read from or written to disk), so later states load it
** instead of compiling the text again. */
void dsf_source_set_bytecode(const dsf_source *s, const char *bc,
                             size_t len);

/* The sha256 (lower-case hex) of a cached source, computed on first use:
** most sources are only run, and hashing them all would cost more than
** compiling them. A source whose text is a built-in's (lua/builtin.h)
** takes the digest computed when the executable was built. Borrowed from
** the cache. */
const char *dsf_source_sha256(const dsf_source *s);

void dsf_srccache_free(dsf_srccache *c);

#endif
