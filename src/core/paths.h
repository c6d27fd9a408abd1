/*
** paths.h -- search paths for profiles and plugins, highest priority first.
*/
#ifndef DSF_PATHS_H
#define DSF_PATHS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct dsf_dir {
    char *path;    /* directory */
    char *origin;  /* where it came from: "--profile-path", "DSFORGE_PATH",
                      "project", "user", "built-in", "repo NAME" */
    bool from_repo;     /* a repository's: its plugins may not replace
                           built-in or local ones of the same name ... */
    bool may_override;  /* ... unless the project allows it explicitly */
} dsf_dir;

typedef struct dsf_dirs {
    dsf_dir *items;
    size_t len, cap;
} dsf_dirs;

#define DSF_DIRS_INIT {NULL, 0, 0}

/* Appends (copies) a directory, unless the same path is already listed. */
void dsf_dirs_add(dsf_dirs *dirs, const char *path, const char *origin);

/* The same for a whole entry, its flags included. */
void dsf_dirs_add_dir(dsf_dirs *dirs, const dsf_dir *dir);

/* Builds the search path for kind ("profiles" or "plugins"): the explicit
** directories (option_name names their option), each directory of the
** colon-separated environment variable env_var, the project's <kind>
** (core/project.h; outside a project ./<kind>), then
** $XDG_CONFIG_HOME/dsforge/<kind> (default ~/.config), then the built-in
** directory (always listed). Directories that do not exist are left
** out. */
void dsf_dirs_build(dsf_dirs *out, const char *kind,
                    const char *const *explicit_dirs, size_t n_explicit,
                    const char *option_name, const char *env_var);

/* The root of the files compiled into the executable: the built-in
** profiles are "<built-in>/profiles/NAME.lua", the plugins
** "<built-in>/plugins/NAME/...". Messages name them so; lua/scriptfs.h
** reads them. */
#define DSF_BUILTIN_ROOT "<built-in>"

/* The built-in directory for kind: $DSFORGE_DATADIR/<kind> when that
** variable is set (a directory on disk standing in for the built-ins,
** for developing them without rebuilding), else DSF_BUILTIN_ROOT/<kind>.
** Caller frees. */
char *dsf_builtin_dir(const char *kind);

/* $XDG_CONFIG_HOME/dsforge (or ~/.config/dsforge), and the cache
** counterpart $XDG_CACHE_HOME/dsforge (or ~/.cache/dsforge). Caller
** frees. */
char *dsf_config_home(void);
char *dsf_cache_home(void);

void dsf_dirs_free(dsf_dirs *dirs);

#endif
