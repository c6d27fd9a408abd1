/* plugin_env.c -- see plugin_env.h. */
#include "plugin_env.h"

#include <string.h>

#include "core/teardown.h"

int dsf_plugin_env_load(dsf_plugin_env *pe, const dsf_cli_env *env,
                        dsf_diags *d)
{
    memset(pe, 0, sizeof *pe);
    pe->sources = dsf_srccache_new();
    return dsf_plugins_load(&pe->plugins, &env->plugin_dirs, pe->sources,
                            env->limits, &pe->warnings, d);
}

void dsf_plugin_env_free(dsf_plugin_env *pe, dsf_diags *d)
{
    /* The command ends after this: the plugin state goes back to the OS
    ** at exit (core/teardown.h). */
    if (!dsf_teardown_by_exit()) {
        dsf_plugins_free(pe->plugins);
        dsf_srccache_free(pe->sources);
    }
    dsf_diags_move(d, &pe->warnings);
    dsf_diags_free(&pe->warnings);
}
