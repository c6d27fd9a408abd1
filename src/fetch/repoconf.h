/*
** repoconf.h -- the repository lists: the project's dsforge.repos.json
** and the user's $XDG_CONFIG_HOME/dsforge/repos.json (internal to
** src/fetch; the public view is dsf_repo_list in repo.h).
*/
#ifndef DSF_REPOCONF_H
#define DSF_REPOCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"

typedef struct dsf_repoconf_entry {
    char *name;
    char *url;
    char *file;     /* the file it comes from */
    char **keys;    /* pinned public keys (64 hex), n_keys of them */
    size_t n_keys;
    bool project;   /* from the project file */
    bool shadowed;  /* a user entry hidden by a project entry */
    bool override_plugins; /* the project lets its plugins replace built-in
                              and local plugins of the same name
                              ("override_plugins": true; project file
                              only) */
} dsf_repoconf_entry;

/* The path of the project (project true) or user file; NULL outside a
** project (project_dir NULL) or when the user file has no home (no
** XDG_CONFIG_HOME, no HOME). Caller frees. */
char *dsf_repoconf_path(bool project, const char *project_dir);

/* Every entry of both files, project first, each file sorted by name.
** *out freed with dsf_repoconf_free. DSF_EINPUT with file:line:col on a
** malformed file; missing files are empty. */
int dsf_repoconf_load(dsf_repoconf_entry **out, size_t *n,
                      const char *project_dir, dsf_diags *d);

/* The entry that wins for name (project over user), or NULL. Borrowed. */
const dsf_repoconf_entry *dsf_repoconf_find(const dsf_repoconf_entry *v,
                                            size_t n, const char *name);

/* Sets name to url (and its pinned public keys) in file (url NULL: removes it; returns 1 when it was
** not there). Creates the file and its directory; writes atomically. */
int dsf_repoconf_set(const char *file, const char *name, const char *url,
                     const char *const *keys, size_t n_keys, dsf_diags *d);

void dsf_repoconf_free(dsf_repoconf_entry *v, size_t n);

#endif
