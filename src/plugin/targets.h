/*
** targets.h -- config families (the `targets` field of a declaration,
** contrib/docs/plugins.md "Targets"): the targets a plugin owns, those it
** adds to, its default and its recogniser. One target is chosen per
** config (check) or run (gen); only the plugins that serve it run their
** hooks. The core knows no target by name: the list, the default and the
** recognition are the plugins'.
*/
#ifndef DSF_PLUGIN_TARGETS_H
#define DSF_PLUGIN_TARGETS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "core/diag.h"
#include "plugin/plugin.h"

typedef struct dsf_plugin_targets {
    bool neutral;      /* no `targets` field: serves every target */
    char **owns;       /* NULL-terminated (never NULL once read) */
    char **adds;
    char *def;         /* `default`: one of owns, or NULL */
    bool recognises;   /* declares `recognise` (read again at the call) */
    char *family;      /* `family`: the configs' name in prose, or NULL */
    char **help;       /* `help`: command, --target's help, command, ...
                       ** (NULL-terminated pairs) */
    char **fills;      /* `fills`: target, value it fills in, ... (pairs) */
} dsf_plugin_targets;

typedef struct dsf_targets {
    bool read;         /* dsf_plugins_read_targets ran */
    dsf_plugin_targets *items; /* per plugin, in plugin order */
    size_t n;
    char *current;     /* the chosen target, or NULL: every plugin serves */
    bool *serving;     /* per plugin, for current (NULL with none) */
} dsf_targets;

/* Reads every plugin's `targets` field, once (later calls return at
** once): loading the plugins does not, so a command that chooses no
** target (estimate, explain, plugins) neither pays for it nor fails on a
** bad one. DSF_EINPUT with a diagnostic naming the plugin's init.lua when
** one is not { owns = {NAME...}, adds = {NAME...}, default = NAME,
** recognise = function(cfg, ctx) }, or when two plugins own a target.
** Before it, no target is known and every plugin serves. */
int dsf_plugins_read_targets(dsf_plugins *p, dsf_diags *d);
void dsf_targets_free(dsf_targets *ts);

/* The targets the loaded plugins own, in plugin order (NULL-terminated,
** borrowed; caller frees the array only). */
const char **dsf_plugins_target_names(const dsf_plugins *p);

/* The `family` (the configs' name in prose, e.g. for "validate NAME
** config files") of the plugin that owns target, or of the default
** target's when target is NULL; NULL when it declares none. Borrowed. */
const char *dsf_plugins_target_family(const dsf_plugins *p,
                                      const char *target);

/* The help of --target in command that the first plugin declaring one
** gives (its `help` table), or NULL. Borrowed. */
const char *dsf_plugins_target_help(const dsf_plugins *p,
                                    const char *command);

/* Whether value is one a target fills in (a plugin's `fills`, e.g. a
** placeholder another program replaces): -1 for no target, 1 when target
** does, 0 when only others do. */
int dsf_plugins_target_fills(const dsf_plugins *p, const char *target,
                             const char *value);

/* Whether a loaded plugin owns target. */
bool dsf_plugins_target_known(const dsf_plugins *p, const char *target);

/* The plugin that owns target (its name, borrowed), or NULL. */
const char *dsf_plugins_target_owner(const dsf_plugins *p,
                                     const char *target);

/* The target of a run that names none: the `default` of the first plugin
** declaring one, else the first target owned, else NULL (no plugin owns a
** target). Borrowed. */
const char *dsf_plugins_default_target(const dsf_plugins *p);

/* DSF_EUSAGE (usage) or DSF_EINPUT: "<from> must be 'a', 'b' or 'c'" when
** target is not known, 0 when it is. */
int dsf_plugins_check_target(const dsf_plugins *p, const char *target,
                             const char *from, int code, dsf_diags *d);

/* Chooses the target whose plugins run from now on (NULL: all of them):
** those that own it, add to it, or declare no targets. */
void dsf_plugins_use_target(dsf_plugins *p, const char *target);

/* Whether plugin number pi (or the plugin named so) serves the chosen
** target. */
bool dsf_plugins_serves(const dsf_plugins *p, size_t pi);
bool dsf_plugins_serves_name(const dsf_plugins *p, const char *plugin);

/* Asks each plugin's recogniser (plugin order) which target doc is for:
** *target is the first answer (borrowed from the plugin set), or NULL
** when none answers. A recogniser that raises, or names a target no
** plugin owns, is DSF_ESCRIPT. Costs nothing without recognisers. */
int dsf_plugins_recognise(dsf_plugins *p, const cJSON *doc,
                          const char **target, dsf_diags *d);

#endif
