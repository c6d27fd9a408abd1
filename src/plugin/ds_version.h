/*
** ds_version.h -- which DeepSpeed releases the plugins cover (the
** `ds_version` field of a declaration, contrib/docs/plugins.md): the core
** checks the form of --ds-version (cli/opts.c) and asks each plugin that
** declares the hook whether it covers the release; the core knows no
** release by name.
*/
#ifndef DSF_PLUGIN_DS_VERSION_H
#define DSF_PLUGIN_DS_VERSION_H

#include <stddef.h>

#include <lua.h>

#include "core/diag.h"
#include "plugin/plugin.h"

typedef struct dsf_ds_version_hook {
    char *plugin;
    size_t index;      /* the plugin's: its declaration holds the function
                       ** (read again at the call, so loading keeps no
                       ** reference of its own) */
} dsf_ds_version_hook;

typedef struct dsf_ds_version_hooks {
    dsf_ds_version_hook *items;
    size_t n;
} dsf_ds_version_hooks;

/* Checks the `ds_version` field (a function) of the declaration at stack
** index t, of the plugin loaded as number index: DSF_EINPUT with a
** diagnostic when it is not one. Leaves the stack as it was. */
int dsf_ds_version_hooks_read(dsf_ds_version_hooks *h, lua_State *L, int t,
                              size_t index, const char *plugin,
                              const char *file, dsf_diags *d);
void dsf_ds_version_hooks_free(dsf_ds_version_hooks *h);

/* Calls every declared ds_version(spec) (plugin order) with spec, the
** release asked for (already of the form X.Y[.Z], optionally with a
** leading v); from says where it came from ("--ds-version" or the
** environment variable's name), for the message. A hook returns nil when
** its plugin covers the release, else a message (and optionally a hint):
** that is DSF_EUSAGE with a diagnostic "<from>: <message>". A hook that
** raises or returns anything else is a script error. */
int dsf_plugins_check_ds_version(dsf_plugins *p, const char *spec,
                                 const char *from, dsf_diags *d);

#endif
