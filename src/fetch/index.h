/*
** index.h -- a repository's index.json: model, parse/validate, write.
**
** One small document describes a repository; the client verifies every
** byte it later downloads against it (format in contrib/docs/repositories.md):
**
**   {"format": 1, "name": "team",
**    "profiles": {"tiny": {"version": "1.0.0", "path": "profiles/tiny.lua",
**                          "sha256": "<64 hex>"}},
**    "plugins": {"lint": {"version": "1.0.0", "path": "plugins/lint",
**                         "files": {"init.lua": "<64 hex>"}}}}
**
** Format 2 carries several releases side by side, each naming its files
** by sha256 only; a file is served once, at blobs/<sha256>, however many
** releases hold it:
**
**   {"format": 2, "name": "team",
**    "releases": {"1.0.0": {"profiles": {"tiny": "<64 hex>"},
**                           "plugins": {"lint": {"init.lua": "<64 hex>"}}},
**                 "1.1.0": {...}}}
**
** Every path is relative to the repository's base URL; names and paths
** that could leave the repository (absolute, "..", backslashes, odd
** characters) are rejected at parse time, with the position in the file.
*/
#ifndef DSF_INDEX_H
#define DSF_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"

#define DSF_INDEX_FORMAT 2       /* the newest format read and written */
#define DSF_INDEX_MAX_FILES 100000
#define DSF_INDEX_MAX_RELEASES 10000
#define DSF_INDEX_BLOBS "blobs"  /* format 2: DIR/blobs/<sha256> */

/* One file of the repository. */
typedef struct dsf_index_file {
    char *remote;      /* path relative to the base URL */
    char *local;       /* path in the materialized tree:
                          profiles/NAME.lua or plugins/NAME/FILE */
    char sha256[65];   /* lower-case hex */
} dsf_index_file;

typedef struct dsf_index_entry {
    char *name;
    char *version;
    char *path;        /* profile: its file; plugin: its directory */
} dsf_index_entry;

typedef struct dsf_index dsf_index;

/* Format 2: one release, laid out like a format-1 index (entries carry
** the release's version; remote paths are blobs/<sha256>). */
typedef struct dsf_index_release {
    char *version;              /* semver, no build metadata */
    dsf_index *ix;              /* owned */
} dsf_index_release;

struct dsf_index {
    int format;                 /* 1 or 2 */
    char *name;                 /* the repository's own name */
    long long serial;           /* grows with every signed publish; 0 */
    long long expires;          /* Unix time after which it is refused; 0 */
    dsf_index_entry *profiles;  /* sorted by name */
    size_t n_profiles;
    dsf_index_entry *plugins;   /* sorted by name */
    size_t n_plugins;
    dsf_index_file *files;      /* every file, sorted by local path */
    size_t n_files;
    /* format 2 (profiles, plugins and files above are then empty) */
    dsf_index_release *releases; /* sorted by semver precedence, oldest
                                    first */
    size_t n_releases;
};

/* Parses and validates index text named label (a URL or file name, for
** messages). *out is freed with dsf_index_free. DSF_ENET with file:line:col
** when the document is malformed or names a path that leaves the
** repository (it came from the network: an integrity problem). */
int dsf_index_parse(dsf_index **out, const char *label, const char *text,
                    size_t len, dsf_diags *d);

/* The canonical JSON text of ix (sorted keys, trailing newline). Caller
** frees. */
char *dsf_index_write(const dsf_index *ix);

/* The profile / plugin entry named name, or NULL. Borrowed from ix. */
const dsf_index_entry *dsf_index_profile(const dsf_index *ix,
                                         const char *name);

/* Format 2: the release with exactly this version, or NULL. Borrowed. */
const dsf_index_release *dsf_index_release_find(const dsf_index *ix,
                                                const char *version);

/* Format 2: the newest release matching req (any release when req is
** NULL) that holds profile (any release when profile is NULL), or NULL.
** Borrowed from ix. */
struct dsf_semreq;
const dsf_index_release *dsf_index_newest(const dsf_index *ix,
                                          const char *profile,
                                          const struct dsf_semreq *req);

/* Format 2: adds release version (whose files are sub, a format-1-shaped
** index built with the functions below; ownership of sub passes to ix).
** Replaces a release of the same version. */
void dsf_index_add_release(dsf_index *ix, const char *version,
                           dsf_index *sub);

/* Parses an "expires" time, "YYYY-MM-DDTHH:MM:SSZ" (UTC), into *t.
** false when s is not exactly that. */
bool dsf_index_time_parse(long long *t, const char *s);

/* Formats t as "YYYY-MM-DDTHH:MM:SSZ" into out (at least 21 bytes). */
void dsf_index_time_format(char *out, size_t size, long long t);

/* True for a safe profile, plugin or repository name: letters, digits,
** '_', '-', '.' (not first), at most 64 bytes. */
bool dsf_index_name_ok(const char *name);

/* True for a safe relative path: '/'-separated segments of letters,
** digits and "._-+~@", none empty, "." or "..", not starting with '/'. */
bool dsf_index_path_ok(const char *path);

/* Adds files to a new index under construction (format 1 unless
** releases are added; used by repo_index.c and tests): appends an entry and its files, then dsf_index_finish sorts
** and links everything. All strings are copied. */
dsf_index *dsf_index_new(const char *name);
void dsf_index_add_profile(dsf_index *ix, const char *name,
                           const char *version, const char *path,
                           const char *sha256);
void dsf_index_add_plugin(dsf_index *ix, const char *name,
                          const char *version, const char *path,
                          const char *const *files,
                          const char *const *sha256s, size_t n);
/* Format 2 releases: a plugin whose files are served at blobs/<sha256>
** (a profile's path is then blobs/<sha256> too). */
void dsf_index_add_plugin_blobs(dsf_index *ix, const char *name,
                                const char *version,
                                const char *const *files,
                                const char *const *sha256s, size_t n);
void dsf_index_finish(dsf_index *ix);

/* NULL is a no-op. */
void dsf_index_free(dsf_index *ix);

#endif
