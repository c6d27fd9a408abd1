/*
** plugin_internal.h -- the plugin set's structure, shared by plugin.c
** (loading and declarations) and the files that run plugin code:
** validate.c (rules) and resolve.c (resolvers and helper calls).
*/
#ifndef DSF_PLUGIN_INTERNAL_H
#define DSF_PLUGIN_INTERNAL_H

#include <stdbool.h>

#include <lua.h>

#include "lua/callscope.h"

#include "plugin/cmdcheck.h"
#include "plugin/commands.h"
#include "plugin/decl.h"
#include "plugin/machine_params.h"
#include "plugin/plugin.h"
#include "plugin/readers.h"
#include "plugin/targets.h"

#define MAX_DIRS 64

typedef struct resolver {
    char *plugin;
    char *name;
    char *when;       /* runs only when this param is set (not absent,
                      ** null, false, 0 or ""), or NULL: always */
    int ref;
    dsf_layer layer;  /* provenance layer for its changes */
    char *label;
} resolver;

struct dsf_plugins {
    dsf_host *host;
    const char *dirs[MAX_DIRS];
    char *dir_copies[MAX_DIRS];
    size_t ndirs;
    dsf_plugin_info *items;
    size_t n;
    dsf_rule *rules;
    size_t nrules, cap_rules;
    resolver *resolvers;
    size_t nresolvers;
    dsf_plugin_shadowed *shadowed;
    size_t nshadowed, cap_shadowed;
    int *summarize_refs;     /* per plugin: registry reference or LUA_NOREF */
    int *rules_refs;         /* per plugin: its `rules` function until
                             ** called (dsf_plugins_load_rules), else
                             ** LUA_NOREF */
    char **summarize_what;   /* per plugin: "plugin P summarize" */
    struct {
        int ref;             /* its declaration table (registry) */
        char *file;          /* its init.lua, for messages */
    } *decls;                /* per plugin */
    bool summaries_read;     /* columns and report layouts read
                             ** (dsf_plugins_read_summaries) */
    bool commands_read;      /* dsf_plugins_read_commands ran */
    struct dsf_column *columns;
    size_t ncolumns;
    dsf_plugin_commands commands;  /* declared commands: commands.c */
    struct dsf_emitter *emitters;  /* declared emitters: emit.c */
    size_t nemitters;
    dsf_cmdchecks cmdchecks;       /* check_command: cmdcheck.c */
    dsf_machine_hooks machine;     /* machine_params: machine_params.c */
    struct dsf_plugin_option *options; /* options: options.c */
    size_t noptions;
    bool options_read;             /* dsf_plugins_read_options ran */
    struct dsf_results_decl *results; /* readers and results, read by
                                      ** collect: readers.c */
    dsf_targets targets;           /* targets: targets.c */
    bool *has_check;               /* per plugin: declares a rule with a
                                   ** check (validate.c), found for */
    size_t has_check_rules;        /* ... this many rules read */
    /* Between dsf_plugins_hold_variant and dsf_plugins_release_variant:
    ** the document held (NULL: none), and per plugin a registry reference
    ** to { cfg, summary } as its summarize and columns saw them,
    ** which its rules get (summary.c, validate.c), or LUA_NOREF. */
    const cJSON *held_doc;
    int *held;
    /* Between dsf_plugins_begin_variant and dsf_plugins_release_variant:
    ** the variant's params (NULL: none), and per plugin a registry
    ** reference to the ctx.params table made from them for its first hook
    ** of the variant, which its later hooks get, or LUA_NOREF. */
    const cJSON *held_params_of;
    int *held_params;
};

/* Calls fn for each loaded plugin, in plugin order, with its declaration
** table at stack index t (its init.lua's result, kept by the loader) and
** the collector in loading mode; stops at the first error and returns it.
** For the fields read when a command first needs them (decl.c). */
typedef int (*dsf_plugin_decl_fn)(dsf_plugins *p, lua_State *L, int t,
                                  size_t i, dsf_diags *d);
int dsf_plugins_each_decl(dsf_plugins *p, dsf_plugin_decl_fn fn,
                          dsf_diags *d);

/* The same for a declaration field that is only a list (or a function
** returning one): dsf_plugin_read_lazy_list of field with item, for each
** plugin in turn (commands.c, options.c). */
int dsf_plugins_each_list(dsf_plugins *p, const char *field,
                          dsf_plugin_item_fn item, dsf_diags *d);

/* Frees the columns read (summary.c). */
void dsf_plugin_free_columns(dsf_plugins *p);

/* Reads the `emitters` list of the declaration at t (emit.c). */
int dsf_plugin_read_emitters(dsf_plugins *p, lua_State *L, int t,
                             const char *plugin, const char *file,
                             dsf_diags *d);
void dsf_plugin_free_emitters(dsf_plugins *p);

/* Emitters (emit.c, emit_run.c): ctx.json and ctx.options (an empty
** table without --emit-opt) set on the ctx table at index t (DSF_LJMP:
** allocates); and the hint naming the emitter on the last diagnostic of
** d, a Lua error it raised. */
void dsf_emit_push_common_ctx(lua_State *L, int t, const cJSON *options);
void dsf_emit_blame(dsf_diags *d, const char *what);

/* Pushes the plugin's view of a config and the ctx table (with report,
** bound to collector c) for a call: runs protected (allocates in Lua). */
typedef struct dsf_collector {
    dsf_plugins *p;
    dsf_findings *out;
    const dsf_rule *current;  /* the rule running, NULL in a resolver */
    const char *strict;       /* dsf_validate_opts.strict */
    dsf_callscope scope;      /* open while ctx.report may be called */
    bool edits;               /* dsf_validate_opts.edits */
} dsf_collector;

typedef struct dsf_push_cfg_args {
    const cJSON *doc;
    const dsf_validate_opts *o;
    dsf_collector *c;
    const cJSON *summary;     /* ctx.summary, or NULL */
    bool identities;          /* ctx.identity too (for rules) */
    int held;                 /* LUA_NOREF, or the plugin's held tables
                              ** (cfg and ctx.summary from there, not
                              ** from doc and summary) */
    int *params_ref;          /* NULL, or the plugin's ctx.params table
                              ** of the variant (LUA_NOREF: not made yet,
                              ** made and kept there): params_slot */
} dsf_push_cfg_args;

/* Where plugin pi's ctx.params table made from params is kept for the
** variant begun (dsf_plugins_begin_variant), or NULL when params are not
** that variant's: the caller then makes a table of its own. */
int *dsf_plugins_params_slot(dsf_plugins *p, size_t pi, const cJSON *params);

int dsf_plugin_push_cfg_ctx(lua_State *L);

#endif
