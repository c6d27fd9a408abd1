/*
** lock.h -- the project's lock file (dsforge.lock), meant to be committed.
**
** For every repository a project uses it pins the URL, the sha256 of the
** index.json and the sha256 and version of every file, so a run on
** another machine or another day uses exactly the same bytes, and a
** repository that changed is reported (with what changed) instead of
** silently used. Format in contrib/docs/repositories.md; written canonically
** (sorted keys) and atomically.
*/
#ifndef DSF_LOCK_H
#define DSF_LOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/project.h"
#include "fetch/index.h"
#include "fetch/semver.h"

#define DSF_LOCK_FILE DSF_PROJECT_LOCK_FILE
#define DSF_LOCK_FORMAT 1

typedef struct dsf_lock_pin {
    char *key;    /* profiles/NAME.lua, plugins/NAME/FILE */
    char *value;  /* sha256 (files) or version (versions) */
} dsf_lock_pin;

typedef struct dsf_lock_repo {
    char *name;
    char *url;
    char index_sha256[65];
    long long serial;        /* the pinned index's serial (rollbacks); 0 */
    char *index_name;        /* the pinned index's own "name" (an index
                                served under another name is refused);
                                NULL in locks written before it */
    dsf_lock_pin *files;     /* local path -> sha256, sorted */
    size_t n_files;
    dsf_lock_pin *versions;  /* "profile NAME"/"plugin NAME" -> version */
    size_t n_versions;
    /* An index of format 2 (releases side by side): which release each
    ** use resolved to, and files pinned as RELEASE/profiles/NAME.lua. */
    bool releases;
    dsf_lock_pin *selections;  /* "profile NAME", "profile NAME@REQ",
                                  "repository" -> release version */
    size_t n_selections;
} dsf_lock_repo;

typedef struct dsf_lock {
    char *path;              /* the lock file; owned */
    dsf_lock_repo *repos;
    size_t n_repos, cap;
    bool changed;            /* differs from the file on disk */
    char **touched;          /* repositories set or removed in this run */
    size_t n_touched;
} dsf_lock;

/* Loads path into *lock (a missing file is an empty lock). A malformed
** file is DSF_EINPUT with file:line:col. Free with dsf_lock_free. */
int dsf_lock_load(dsf_lock *lock, const char *path, dsf_diags *d);

/* Parses lock file text (path: its name, for messages and for saving).
** Repositories are sorted by name. DSF_EINPUT with file:line:col when
** malformed (including duplicate keys). Free with dsf_lock_free. */
int dsf_lock_parse(dsf_lock *lock, const char *path, const char *text,
                   size_t len, dsf_diags *d);

/* The canonical text of lock (sorted keys, trailing newline), as saved.
** Caller frees. */
char *dsf_lock_text(const dsf_lock *lock);

/* Writes the lock atomically when it changed. Concurrent dsforge
** processes in the same project do not lose each other's entries: under
** an exclusive lock on the project directory the file is read again and
** only the repositories this process set or removed are replaced. */
int dsf_lock_save(dsf_lock *lock, dsf_diags *d);

/* The entry for repository name, or NULL (borrowed from lock). */
const dsf_lock_repo *dsf_lock_find(const dsf_lock *lock, const char *name);

/* Pins repository name to index ix fetched from url, whose text hashes to
** index_sha256 (replaces any previous entry). */
void dsf_lock_set(dsf_lock *lock, const char *name, const char *url,
                  const char *index_sha256, const dsf_index *ix);

/* Format 2: records that selection key resolved to release version of
** ix (which the entry of name must pin) and re-pins the files of every
** selected release. */
void dsf_lock_select(dsf_lock *lock, const char *name, const dsf_index *ix,
                     const char *key, const char *version);

/* The release selection key (see dsf_lock_repo) was resolved to in r, or
** NULL. Borrowed. */
const char *dsf_lock_selected(const dsf_lock_repo *r, const char *key);

/* The selection key of profile (NULL: "repository") with requirement
** text req (NULL: none). Caller frees. */
char *dsf_lock_selection_key(const char *profile, const char *req);

/* Splits a selection key: *profile (NULL for "repository"; caller frees)
** and *has_req and *req. false when key is not a selection key. */
bool dsf_lock_selection_parse(const char *key, char **profile,
                              dsf_semreq *req, bool *has_req);

/* Drops the entry of name; false when there was none. */
bool dsf_lock_remove(dsf_lock *lock, const char *name);

/* Appends to out a human description of how ix differs from the pins of
** r ("profile tiny: 1.0.0 -> 1.1.0, content changed; plugin lint added").
** Returns the number of differences found. */
size_t dsf_lock_diff(dsf_buf *out, const dsf_lock_repo *r,
                     const dsf_index *ix);

/* True when ix matches r's file pins exactly. */
bool dsf_lock_matches(const dsf_lock_repo *r, const dsf_index *ix);

void dsf_lock_free(dsf_lock *lock);

#endif
