/*
** repo_ctx.h -- what the repository files share (not a public API; the
** public one is repo.h). One job per file:
**   repo_opts.c    options, the project, the lock file, URL checks
**   repo_served.c  what upstream serves now and whether to trust it
**   repo_sync.c    one repository brought to a verified tree (and pinned)
**   repo_select.c  the loader API: releases, directories, plugins
**   repo.c         the `dsforge repo` commands
*/
#ifndef DSF_REPO_CTX_H
#define DSF_REPO_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/diag.h"
#include "fetch/cache.h"
#include "fetch/http.h"
#include "fetch/index.h"
#include "fetch/lock.h"
#include "fetch/repo.h"

/* Format 2: what one selection key resolved to in this process. */
typedef struct repo_selected {
    char *key;         /* "profile NAME[@REQ]" or "repository" */
    char *version;     /* the release (from the lock, or resolved) */
    char *dir;         /* its verified tree, NULL until opened */
} repo_selected;

/* A repository brought to usable content by this process. */
typedef struct repo_synced {
    char *name;
    char *url;
    char *dir;         /* materialized tree (format 1; NULL for 2) */
    dsf_index *ix;
    char index_sha256[65];
    repo_selected *sel;     /* format 2: the lock's selections, then more */
    size_t n_sel;
} repo_synced;

/* One repository at work: its lock, cache and credentials. */
typedef struct repo_ctx {
    const char *name;
    const char *url;      /* base URL */
    const dsf_repo_opts *o;
    dsf_cache cache;
    dsf_lock lock;
    bool accept;          /* repo add/update: re-pin to what is served */
    dsf_buf *report;      /* may be NULL */
    char *token;          /* borrowed from the environment; never printed */
    const char *const *keys;  /* pinned public keys (64 hex); borrowed */
    size_t n_keys;
} repo_ctx;

/* ---- repo_opts.c ------------------------------------------------------- */

/* lim: the transfer limits of o (defaults where o has none). */
void dsf_repo_http_limits(dsf_http_limits *lim, const dsf_repo_opts *o);

/* The project of this run: o->project_dir, else the one found from the
** current directory (once per process), else NULL. Borrowed. */
const char *dsf_repo_project_dir(const dsf_repo_opts *o);

/* Loads the lock of this run (the project's, or the user's outside a
** project) into *lock, which the caller frees with dsf_lock_free (also on
** failure). */
int dsf_repo_load_lock(dsf_lock *lock, const dsf_repo_opts *o,
                       dsf_diags *d);

/* Saves lock when it changed, creating the user's state directory when
** needed. */
int dsf_repo_save_lock(dsf_lock *lock, dsf_diags *d);

/* The base URL of url (no trailing slash, no /index.json). Caller frees. */
char *dsf_repo_base_url(const char *url);

/* DSF_EUSAGE for a URL dsforge refuses (credentials, control
** characters, a scheme or host the options do not allow). */
int dsf_repo_check_url(const char *url, const dsf_repo_opts *o,
                       dsf_diags *d);

/* Fills c for repository name at base URL url (both borrowed, as are o
** and keys), with its bearer token from the environment, and opens its
** lock and cache. The caller closes with dsf_repo_ctx_close, also on
** failure. */
int dsf_repo_ctx_open(repo_ctx *c, const char *name, const char *url,
                      const char *const *keys, size_t n_keys,
                      const dsf_repo_opts *o, dsf_diags *d);
void dsf_repo_ctx_close(repo_ctx *c);

/* ---- repo_served.c ----------------------------------------------------- */

/* Parses text as the index.json at url (for messages). *ix: caller frees
** with dsf_index_free. */
int dsf_repo_parse_index(dsf_index **ix, const char *url, const char *text,
                         size_t len, dsf_diags *d);

/* An index served now (not the pinned copy), text of len bytes: signed by
** a pinned key when the repository has any (checked on these bytes,
** before they are parsed), then parsed into *ix (caller frees), named as
** the repository's index was when it was pinned (an index swap), not
** expired (unless --allow-expired), and not older than the lock's serial
** (a rollback). DSF_ENET otherwise, *ix NULL. */
int dsf_repo_verify_served(dsf_index **ix, repo_ctx *c, const char *text,
                           size_t len, dsf_diags *d);

/* index.json as served now, fetched by dsf_repo_fetch_index. */
typedef struct repo_fetched {
    char *url;             /* BASE/index.json */
    dsf_cache_meta meta;   /* what the cache knew of it */
    char *cached;          /* the last copy, when the cache had one */
    size_t cached_len;
    dsf_http_req req;      /* the answer: req.fail says why there is none */
    const char *text;      /* what is served (the last copy on a 304) */
    size_t len;
    char sha[65];          /* its sha256 */
} repo_fetched;

/* Asks for index.json, conditionally when its last copy is cached (a
** 304 gives that copy). A failed transfer is f->req.fail, for the caller
** to word; rc is a failure to try at all. Nothing is trusted or stored:
** dsf_repo_verify_served, then dsf_repo_record_index. Free f with
** dsf_repo_fetched_free, also on failure. */
int dsf_repo_fetch_index(repo_fetched *f, repo_ctx *c, bool progress,
                         dsf_diags *d);

/* Stores what f fetched in the cache: the index (when it is new) and its
** validators, with the time of the check. */
int dsf_repo_record_index(repo_ctx *c, const repo_fetched *f, dsf_diags *d);
void dsf_repo_fetched_free(repo_fetched *f);

/* Fetches index.json (conditionally when its last copy is cached),
** verifies it (dsf_repo_verify_served), records what is served in the
** cache (blob, validators, when it asked) and returns its sha256 and
** parsed index (*ix_out: caller frees). It is not trusted beyond that:
** the caller compares it with the lock. DSF_ENET when it cannot be
** fetched or is malformed. */
int dsf_repo_ask_upstream(char sha[65], dsf_index **ix_out, repo_ctx *c,
                          dsf_diags *d);

/* The pinned index.json is not in the cache: what upstream serves now,
** verified (dsf_repo_ask_upstream), is the source of the pinned content
** when it is the pinned index itself or still serves every pinned file
** unchanged (releases or files published since change nothing for the
** lock). *ix: caller frees; sha: its sha256. DSF_ENET otherwise, saying
** what changed (a pinned file whose sha256 differs, a pinned release no
** longer served). */
int dsf_repo_fetch_pinned(dsf_index **ix, char sha[65], repo_ctx *c,
                          const dsf_lock_repo *lr, dsf_diags *d);

/* Pinned content in use: a note (once per process and repository) when
** upstream serves something else; asks the server at most once per
** check_interval. Never fails. */
void dsf_repo_notice_updates(repo_ctx *c, const dsf_lock_repo *lr,
                             dsf_diags *d);

/* ---- repo_sync.c ------------------------------------------------------- */

/* Downloads the files of ix that are not in the cache, verifies them all,
** and only then stores them: a bad file leaves the cache as it was. */
int dsf_repo_fetch_files(repo_ctx *c, const dsf_index *ix, dsf_diags *d);

/* Format 2: the verified tree of one release (*dir: caller frees). online:
** what is missing from the cache is fetched by its sha256. */
int dsf_repo_open_release(char **dir, repo_ctx *c,
                          const dsf_index_release *rel, bool online,
                          dsf_diags *d);

/* Brings repository name (configured at url, with pinned keys) to a
** usable tree. accept: repo add/update, re-pin to what is served. *out is
** borrowed: it lives until the process exits (or dsf_repo_forget). */
int dsf_repo_sync(repo_synced **out, const char *name, const char *url,
                  const char *const *keys, size_t n_keys, bool accept,
                  const dsf_repo_opts *o, dsf_buf *report, dsf_diags *d);

/* What this process synced of repository name, or NULL. Borrowed. */
const repo_synced *dsf_repo_synced_find(const char *name);

/* Drops what this process synced of repository name. */
void dsf_repo_forget(const char *name);

/* Format 2: the selection of key in s (NULL when none), and setting it to
** version with its tree dir (copied; may be NULL). Borrowed from s. */
repo_selected *dsf_repo_sel_find(repo_synced *s, const char *key);
repo_selected *dsf_repo_sel_set(repo_synced *s, const char *key,
                                const char *version, const char *dir);

#endif
