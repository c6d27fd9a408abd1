/*
** cache.h -- the content-addressed cache under $XDG_CACHE_HOME/dsforge.
**
**   blobs/sha256/abcd...      one file per content hash, all in one
**                             directory (so a fetch flushes one
**                             directory); blobs/sha256/ab/abcd... of
**                             older caches is still read
**   repos/<key>/meta.json     per repository URL: ETag, Last-Modified and
**                             the sha256 of the last index.json seen
**   trees/<index sha256>/     a repository's files laid out for use:
**                             profiles/NAME.lua, plugins/NAME/...
**
** Everything is written to a temporary name in the same directory and
** renamed into place, so a concurrent reader or an interrupted process
** never sees a partial entry, and two processes filling the cache at once
** both succeed (the last rename wins with identical bytes). A blob is
** stored only after its hash is checked and re-checked when read.
*/
#ifndef DSF_CACHE_H
#define DSF_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"
#include "fetch/index.h"

typedef struct dsf_cache {
    char *root;    /* owned */
    char **dirty;  /* directories with new entries, not yet flushed */
    size_t n_dirty;
} dsf_cache;

/* The validators of a repository URL's index.json. */
typedef struct dsf_cache_meta {
    char *etag;           /* or NULL; owned */
    char *last_modified;  /* or NULL; owned */
    char index_sha256[65];  /* "" when unknown */
    double checked;         /* when upstream was last asked (Unix time), 0 */
} dsf_cache_meta;

/* Opens (creating) the cache at $XDG_CACHE_HOME/dsforge. DSF_EINPUT when
** neither XDG_CACHE_HOME nor HOME is set or it cannot be created. Free
** with dsf_cache_close. */
int dsf_cache_open(dsf_cache *c, dsf_diags *d);
void dsf_cache_close(dsf_cache *c);

/* The path a blob with hash sha256 is stored at. Caller frees. */
char *dsf_cache_blob_path(const dsf_cache *c, const char *sha256);

/* Whether the blob sha256 is in the cache (at its path, or where an older
** cache kept it); its bytes are checked only when read. */
bool dsf_cache_has_blob(const dsf_cache *c, const char *sha256);

/* Reads the blob sha256 into *data (caller frees) after checking its
** hash. 1 when it is missing; DSF_ENET-free: a blob whose bytes do not
** match its name (edited or damaged on disk) is deleted and reported as
** missing, with a warning in d. */
int dsf_cache_get_blob(char **data, size_t *len, const dsf_cache *c,
                       const char *sha256, dsf_diags *d);

/* Stores data under sha256 after checking that it hashes to it
** (DSF_ENET when not: nothing is written). Atomic, not flushed: blobs are
** re-hashed when read, so the directories are flushed once each by
** dsf_cache_sync (or dsf_cache_close) after a batch. */
int dsf_cache_put_blob(dsf_cache *c, const char *sha256, const char *data,
                       size_t len, dsf_diags *d);

/* Flushes (fsync) every directory that got new entries. */
void dsf_cache_sync(dsf_cache *c);

/* Loads / saves the validators of url. A missing or unreadable meta.json
** gives an empty meta and 0 (it is only an optimisation). Free with
** dsf_cache_meta_free. */
void dsf_cache_meta_load(dsf_cache_meta *m, const dsf_cache *c,
                         const char *url);
int dsf_cache_meta_save(const dsf_cache *c, const char *url,
                        const dsf_cache_meta *m, dsf_diags *d);
void dsf_cache_meta_free(dsf_cache_meta *m);

/* The directory holding the files of index ix (whose text hashes to
** index_sha256), built from verified blobs on first use: every blob must
** be in the cache (DSF_ENET naming the first missing file otherwise).
** An existing tree is verified every time: a file that does not hash to
** ix's sha256, a missing or an extra file makes it rebuilt (with a
** warning in d), so an edit in the cache is never used.
** *dir_out: caller frees. */
int dsf_cache_tree(char **dir_out, dsf_cache *c, const dsf_index *ix,
                   const char *index_sha256, dsf_diags *d);

/* Removes path and everything below it (for temporary trees). */
void dsf_cache_rmtree(const char *path);

#endif
