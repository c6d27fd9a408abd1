/*
** lsp.h -- `dsforge lsp`: a Language Server (LSP 3.17) for DeepSpeed
** JSON configs over a pair of file descriptors (standard input and
** output). See contrib/docs/lsp.md for the methods and settings.
*/
#ifndef DSF_LSP_H
#define DSF_LSP_H

#include "plugin/plugin.h"

/* Serves one client on in_fd/out_fd (not closed here) with plugins
** (loaded, borrowed) until the client's exit
** notification or the end of in_fd. Returns the exit status the
** protocol asks for: 0 after shutdown then exit (or the input's end
** after shutdown), 1 otherwise. Log lines go to standard error.
** ds_version (borrowed, or NULL: the plugins' default) is the release
** until the client's settings choose one. */
int dsf_lsp_serve(dsf_plugins *plugins, const char *ds_version, int in_fd,
                  int out_fd);

#endif
