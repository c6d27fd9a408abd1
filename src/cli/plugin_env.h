/*
** plugin_env.h -- what the plugin-driven commands (explain, schema,
** plugins, estimate) share: loading the plugins and calling a helper.
*/
#ifndef DSF_PLUGIN_ENV_H
#define DSF_PLUGIN_ENV_H

#include "cli/args.h"
#include "plugin/plugin.h"

typedef struct dsf_plugin_env {
    dsf_srccache *sources;
    dsf_plugins *plugins;
    dsf_diags warnings;
} dsf_plugin_env;

/* Loads the plugins on env's plugin path into pe (freed with
** dsf_plugin_env_free even on failure). */
int dsf_plugin_env_load(dsf_plugin_env *pe, const dsf_cli_env *env,
                        dsf_diags *d);
/* Moves the plugins' warnings to d and ends pe: a command's last step, so
** the plugin state may be left to the OS at exit (core/teardown.h). */
void dsf_plugin_env_free(dsf_plugin_env *pe, dsf_diags *d);

#endif
