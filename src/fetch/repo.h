/*
** repo.h -- remote profile repositories: configuration, update, and the
** local directories the profile and plugin loaders read from.
**
** Repositories are configured in two places (contrib/docs/repositories.md):
**   PROJECT/dsforge.repos.json            the project's (project.h)
**   $XDG_CONFIG_HOME/dsforge/repos.json   the user's
** both {"repositories": {"NAME": {"url": "https://...", "keys": [...]}}}.
** When both name the same repository the project file wins: it is
** committed with the lock file and describes what the project needs.
**
** Content is used only as pinned in the lock file (PROJECT/dsforge.lock,
** outside a project $XDG_STATE_HOME/dsforge/dsforge.lock); a repository
** not yet in the lock is pinned on first use. Pinned content in the cache
** is used without a request whatever upstream did since, with a note
** when an update check (at most once per check_interval) saw a change;
** with --locked (CI=true), like cargo's, whatever would change the lock
** is DSF_ENET. Every index taken from upstream is checked: signed by a
** pinned key (sign.h, on the raw bytes, before parsing), named as when
** pinned, not expired, not older than the lock's serial.
*/
#ifndef DSF_REPO_H
#define DSF_REPO_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/paths.h"
#include "core/project.h"

#define DSF_REPO_PROJECT_FILE DSF_PROJECT_REPOS_FILE
#define DSF_REPO_USER_FILE "repos.json"

typedef struct dsf_repo_opts {
    bool offline;             /* cache + lock only, no network */
    bool allow_http;          /* plain http:// to non-loopback hosts */
    bool progress;            /* progress bar when stderr is a terminal */
    bool locked;              /* --locked / CI=true: the lock may not
                                 change */
    bool allow_expired;       /* accept an index past its "expires" */
    long check_interval;      /* seconds between update checks (1 day) */
    const char *project_dir;  /* lock + project config; borrowed; NULL:
                                 found from the current directory */
    long connect_timeout_ms;  /* default 10 s */
    long timeout_ms;          /* per transfer; default 120 s */
    long low_speed_secs;      /* abort below 1 KiB/s for this long (20) */
    size_t max_bytes;         /* per file and for index.json (16 MiB) */
} dsf_repo_opts;

/* Fills o with the defaults, then applies the environment overrides
** DSFORGE_FETCH_TIMEOUT (seconds, per transfer), DSFORGE_FETCH_CONNECT_
** TIMEOUT (seconds) and DSFORGE_FETCH_MAX_BYTES; invalid values are
** ignored. */
void dsf_repo_opts_init(dsf_repo_opts *o);

/* ---- the loader API ---------------------------------------------------- */

/* *dir_out (caller frees) is a directory inside the cache that holds
** exactly the locked content of repository repo, laid out as
** <dir>/profiles/NAME.lua and <dir>/plugins/NAME/..., read-only.
**
** repo is "NAME" or "NAME/PROFILE"; version (the text after '@', or
** NULL) is a requirement (semver.h; bad syntax: DSF_EUSAGE naming the
** column). With a PROFILE, the profile must be in the repository
** (DSF_EINPUT otherwise). Format 1: its one version must match version
** (DSF_ENET otherwise, naming the version offered). Format 2 (releases):
** the directory of one release: the one the lock's selection for
** "profile PROFILE@version" names, else the newest matching release of
** the pinned index, which is then recorded in the lock (DSF_ENET with
** the releases holding the profile when none matches, or under --locked).
** A bare "NAME" gives the release of the repository's own selection.
** version must be NULL for a bare "NAME".
**
** Pinned: the locked content from the cache (its tree verified against
** the lock's sha256s, rebuilt or refetched when damaged); online, missing
** pinned files are fetched by hash, and pinned content the server no
** longer serves (a pinned file whose sha256 differs upstream, a pinned
** release gone) is DSF_ENET saying how to fix it; releases and files
** published since change nothing. Not pinned: fetched, verified and
** pinned (the lock is written). o->locked: as pinned, but whatever
** would change the lock (pinning a repository, a new selection, another
** URL) is DSF_ENET. Offline: only cache + lock; anything missing is
** DSF_ENET naming it. Unknown repository or bad config/lock files: DSF_EINPUT. */
int dsf_repo_resolve_dir(char **dir_out, const char *repo,
                         const char *version, const dsf_repo_opts *o,
                         dsf_diags *d);

/* Format 2: the selections dsf_repo_resolve_dir made (a release chosen
** for a requirement the lock did not have yet) are recorded in the lock
** only by dsf_repo_commit, once what they select has loaded, so the lock
** never records a release that failed to load; dsf_repo_discard drops
** them. Commit is DSF_EINPUT when the repository was re-pinned meanwhile
** (by another process). */
int dsf_repo_commit(const dsf_repo_opts *o, dsf_diags *d);
void dsf_repo_discard(void);

/* The release (format 2) whose verified tree dir is, as
** dsf_repo_resolve_dir returned it in this process; NULL for a format-1
** tree or another directory. Caller frees. */
char *dsf_repo_release_of(const char *dir);

/* Appends <dir>/plugins of every configured repository (resolved as
** above) to out, with origin "repo NAME". Repositories without plugins
** add nothing. Stops at the first repository that fails. */
int dsf_repo_plugin_dirs(dsf_dirs *out, const dsf_repo_opts *o,
                         dsf_diags *d);

/* ---- the `dsforge repo` commands --------------------------------------- */

typedef struct dsf_repo_info {
    char *name;
    char *url;
    char *origin;         /* "project" or "user" (the file that wins) */
    char *config_file;
    char *locked_sha256;  /* index sha256 in the lock, or NULL */
    bool shadowed;        /* the user entry is hidden by the project's */
} dsf_repo_info;

/* The configured repositories, project first, sorted by name; the user
** entries hidden by a project entry are listed with shadowed set. *out
** is freed with dsf_repo_infos_free. DSF_EINPUT on a malformed file. */
int dsf_repo_list(dsf_repo_info **out, size_t *n, const dsf_repo_opts *o,
                  dsf_diags *d);
void dsf_repo_infos_free(dsf_repo_info *v, size_t n);

/* The project in use (NULL outside one) and the lock file (the
** project's, else the user's; NULL without a home). Caller frees both. */
void dsf_repo_where(char **project, char **lock, const dsf_repo_opts *o);

/* Asks every configured repository (or name) for its index.json and
** writes to report how it differs from the lock, changing nothing.
** *n_outdated: how many differ from their pin. */
int dsf_repo_outdated(const char *name, const dsf_repo_opts *o,
                      dsf_buf *report, size_t *n_outdated, dsf_diags *d);

/* Records repository name at url (in the project file when project, else
** the user's), after fetching and verifying its index and every file,
** and pins it in the lock. keys: public keys (64 hex) pinned with it;
** then its index.json must be signed by one of them. A summary line goes
** to report. */
int dsf_repo_add(const char *name, const char *url, bool project,
                 const char *const *keys, size_t n_keys,
                 const dsf_repo_opts *o, dsf_buf *report, dsf_diags *d);

/* Fetches repository name (NULL: every configured one), verifies and
** caches its files and re-pins the lock to what it serves now; report
** gets what changed. */
int dsf_repo_update(const char *name, const dsf_repo_opts *o,
                    dsf_buf *report, dsf_diags *d);

/* Removes name from the project file when project, else from the user's,
** and drops its lock entry. DSF_EINPUT when it is not configured there. */
int dsf_repo_remove(const char *name, bool project, const dsf_repo_opts *o,
                    dsf_buf *report, dsf_diags *d);

/* What `repo index DIR` publishes; every pointer borrowed. */
typedef struct dsf_repo_index_opts {
    const char *name;      /* the repository's name; NULL: the existing
                              index's, else DIR's base name */
    const char *release;   /* "1.2.0": add that release (format 2); NULL:
                              format 1, one snapshot */
    const char *const *sign_keys;  /* secret key files; may be NULL */
    size_t n_sign;
    const char *expires;   /* signed: days from now or a UTC time; NULL:
                              90 days */
    long long serial;      /* 0: one more than DIR/index.json's */
} dsf_repo_index_opts;

/* Writes DIR/index.json for DIR/profiles/NAME.lua and DIR/plugins/NAME/...
** Format 1 (no release): one snapshot; each profile's version is the
** `version` field it returns (loaded in the sandbox), a plugin's the
** first line of its VERSION file, else "0.0.0". DSF_EUSAGE when
** DIR/index.json is format 2 (its releases would be lost).
** Format 2 (a release): the files are copied to DIR/blobs/<sha256> and
** the release is added to the releases of the existing index.json
** (kept, with their blobs, which must be there); the same version with
** other files is DSF_EUSAGE (releases never change).
** Every publish, signed or not, carries the next serial: one more than
** DIR/index.json's (the index being replaced is the one served), or
** o->serial, which must be higher than it (DSF_EUSAGE: clients that
** pinned that serial would refuse a lower one as a rollback). An
** index.json in DIR whose serial cannot be read needs o->serial
** (DSF_EINPUT). With sign_keys the index also expires (o->expires) and
** DIR/index.json.sig gets a signature by each key (several keys: a key
** rotation); without, a stale index.json.sig is removed. report gets a
** summary. */
int dsf_repo_index_dir(const char *dir, const dsf_repo_index_opts *o,
                       dsf_buf *report, dsf_diags *d);

/* The environment variable holding the bearer token of repository name:
** DSFORGE_TOKEN_ + name upper-cased, other characters as '_'. Caller
** frees. */
char *dsf_repo_token_var(const char *name);

#endif
