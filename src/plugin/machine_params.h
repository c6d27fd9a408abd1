/*
** machine_params.h -- the params plugins derive from the machine (the
** `machine_params` field of a declaration, contrib/docs/plugins.md), for
** `gen --detect`: the core detects the facts (machine/detect.h) and a
** plugin says which params they mean (the GPU count is `gpus_per_node`,
** say); the core knows no param by name.
*/
#ifndef DSF_PLUGIN_MACHINE_PARAMS_H
#define DSF_PLUGIN_MACHINE_PARAMS_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "core/diag.h"
#include "plugin/plugin.h"

typedef struct dsf_machine_hook {
    char *plugin;
    int ref;           /* registry reference of the function */
} dsf_machine_hook;

typedef struct dsf_machine_hooks {
    dsf_machine_hook *items;
    size_t n;
} dsf_machine_hooks;

/* Reads the `machine_params` field (a function) of the declaration at
** stack index t: DSF_EINPUT with a diagnostic when it is not one. Leaves
** the stack as it was. */
int dsf_machine_hooks_read(dsf_machine_hooks *h, lua_State *L, int t,
                           const char *plugin, const char *file,
                           dsf_diags *d);
void dsf_machine_hooks_free(dsf_machine_hooks *h);

/* Calls every declared machine_params(machine, ctx) (plugin order) with
** machine (dsf_machine_to_json's object), ctx.declared, the names in
** declared (a JSON array of strings: the profile's params) and ctx.given
** (the same, of the params the command line sets). *params (a
** new object, caller deletes) maps each param a plugin derived to its
** value, restricted to the declared names. Two plugins giving one param
** different values is DSF_EINPUT; a hook that raises or returns anything
** but a table of JSON values is a script error. */
int dsf_plugins_machine_params(dsf_plugins *p, const cJSON *machine,
                               const cJSON *declared, const cJSON *given,
                               cJSON **params, dsf_diags *d);

/* The loaded plugins that declare machine_params, "'a', 'b'" (caller
** frees), or NULL for none. */
char *dsf_plugins_machine_plugins(const dsf_plugins *p);

#endif
