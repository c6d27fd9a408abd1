/*
** lsp.h -- `dsforge lsp`: a Language Server (LSP 3.17) for DeepSpeed
** JSON configs over a pair of file descriptors (standard input and
** output). See contrib/docs/lsp.md for the methods and settings.
*/
#ifndef DSF_LSP_H
#define DSF_LSP_H

#include "core/paths.h"
#include "fetch/repo.h"
#include "lua/limits.h"
#include "plugin/plugin.h"

/* Where profiles and plugins are found, for what the server runs gen for
** (go to definition in a gen -o output, a profile's diagnostics). */
typedef struct dsf_lsp_env {
    const dsf_dirs *profile_dirs, *plugin_dirs;
    dsf_limits limits;
    const dsf_repo_opts *repo; /* may be NULL */
} dsf_lsp_env;

/* Serves one client on in_fd/out_fd (not closed here) with plugins
** (loaded, borrowed) until the client's exit
** notification or the end of in_fd. Returns the exit status the
** protocol asks for: 0 after shutdown then exit (or the input's end
** after shutdown), 1 otherwise. Log lines go to standard error.
** values (borrowed, or NULL) are those of the plugins' options of check
** that reach the hooks' ctx (their environment variables': cli/
** plugin_opts.h) until the client's settings change them. env (borrowed; NULL: no
** profiles) is where gen finds profiles and plugins. */
int dsf_lsp_serve(dsf_plugins *plugins, const cJSON *values,
                  const dsf_lsp_env *env, int in_fd, int out_fd);

#endif
