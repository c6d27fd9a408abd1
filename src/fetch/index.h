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
** Every path is relative to the repository's base URL; names and paths
** that could leave the repository (absolute, "..", backslashes, odd
** characters) are rejected at parse time, with the position in the file.
*/
#ifndef DSF_INDEX_H
#define DSF_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"

#define DSF_INDEX_FORMAT 1
#define DSF_INDEX_MAX_FILES 100000

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

typedef struct dsf_index {
    char *name;                 /* the repository's own name */
    long long serial;           /* grows with every signed publish; 0 */
    long long expires;          /* Unix time after which it is refused; 0 */
    dsf_index_entry *profiles;  /* sorted by name */
    size_t n_profiles;
    dsf_index_entry *plugins;   /* sorted by name */
    size_t n_plugins;
    dsf_index_file *files;      /* every file, sorted by local path */
    size_t n_files;
} dsf_index;

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

/* Adds files to a new index under construction (used by index_build.c
** and tests): appends an entry and its files, then dsf_index_finish sorts
** and links everything. All strings are copied. */
dsf_index *dsf_index_new(const char *name);
void dsf_index_add_profile(dsf_index *ix, const char *name,
                           const char *version, const char *path,
                           const char *sha256);
void dsf_index_add_plugin(dsf_index *ix, const char *name,
                          const char *version, const char *path,
                          const char *const *files,
                          const char *const *sha256s, size_t n);
void dsf_index_finish(dsf_index *ix);

/* NULL is a no-op. */
void dsf_index_free(dsf_index *ix);

#endif
