/*
** plugin.h -- plugins: folders with an init.lua that declare, under a
** versioned interface (DSF_PLUGIN_INTERFACE), rules (validators),
** resolvers (run after merging), a summarize hook and summary columns
** (summary.h), and helper modules. The core calls only declared hooks and
** reads no field of a config, a param or a summary by name.
**
** All plugins of a run load into one sandboxed state (they are the same
** code for every variant); each rule, resolver and helper call is a
** separate protected call with its own limits. See contrib/docs/plugins.md.
*/
#ifndef DSF_PLUGIN_H
#define DSF_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "core/paths.h"
#include "doc/prov.h"
#include "lua/host.h"

/* The plugin interface this dsforge provides: a plugin declaring a higher
** `interface` is refused (contrib/docs/plugins.md, "Interface versions"). */
#define DSF_PLUGIN_INTERFACE 1

typedef struct dsf_rule {
    char *id;          /* one block with the strings below (read_rule_list):
                          freeing id frees them all */
    char *plugin;
    dsf_severity severity;
    char *summary;
    char *fix;         /* generic fix, or NULL */
    char *strict;      /* strictness class ("fit": --strict-fit turns its
                          warnings into errors), or NULL */
    int check_ref;     /* registry reference, or LUA_NOREF */
    char *what;        /* "rule ID (plugin NAME)", for messages */
} dsf_rule;

typedef struct dsf_plugin_info {
    char *name;
    char *version;
    char *summary;
    char *dir;
    char *origin;
    char sha256[65];   /* of init.lua */
    int interface;     /* the interface version it declares */
    cJSON *report;     /* its declared A/B report layout, or NULL (also
                       ** until dsf_plugins_read_summaries) */
} dsf_plugin_info;

/* A copy of a plugin that is not used because a directory earlier on
** the plugin path has one of the same name. */
typedef struct dsf_plugin_shadowed {
    char *name;
    char *dir;
    char *origin;
    char *reason;      /* why the other copy is used, for people */
} dsf_plugin_shadowed;

typedef struct dsf_finding {
    char *rule;
    char *plugin;
    dsf_severity severity;
    char *path;        /* canonical config path ("" for the whole config) */
    char *message;
    char *fix;         /* or NULL */
    char *params;      /* the params the finding depends on, comma-separated
                       ** (ctx.report's `param`), or NULL: gen blames the
                       ** --param or --matrix argument that set one */
    int line, col;     /* ctx.report's `at`: a place in the file's text
                       ** (check), or 0: the place of path */
    char *edits;       /* the machine-readable fixes (ctx.report's `edit`,
                       ** plugin/fixedit.h): a JSON array, or NULL */
    size_t more;       /* 0, or this is the note counting the findings of
                       ** its rule that were not kept (plugin/findings.h):
                       ** it has no place in the file */
} dsf_finding;

/* A config's findings: at most DSF_FINDINGS_PER_GROUP of one rule and
** severity are kept, the rest counted (plugin/findings.h). */
typedef struct dsf_findings {
    dsf_finding *items;
    size_t len, cap;
    struct dsf_findings_group *groups; /* the kept and counted per rule and
                                       ** severity (findings.c) */
    size_t ngroups, capgroups;
} dsf_findings;

#define DSF_FINDINGS_INIT {NULL, 0, 0, NULL, 0, 0}

typedef struct dsf_plugins dsf_plugins;

/* Discovers the plugins on dirs (first directory wins for a name) and
** loads each. *out is freed with dsf_plugins_free. A broken plugin gives a
** diagnostic naming the plugin and file: DSF_EINPUT for a bad declaration,
** DSF_ESCRIPT for a Lua error. warnings receives dsforge.warn output. */
int dsf_plugins_load(dsf_plugins **out, const dsf_dirs *dirs,
                     dsf_srccache *sources, dsf_limits limits,
                     dsf_diags *warnings, dsf_diags *d);
void dsf_plugins_free(dsf_plugins *p);

/* Reads the rules of plugins that declare them as a function (`rules =
** function() return {...} end`, called once, on first need): validation
** calls it; a command that lists rules calls it before dsf_plugins_rules.
** Errors as for loading (DSF_EINPUT for a bad declaration, DSF_ESCRIPT
** when the function raises). */
int dsf_plugins_load_rules(dsf_plugins *p, dsf_diags *d);

/* The loaded plugins and all declared rules read so far (borrowed). */
const dsf_plugin_info *dsf_plugins_list(const dsf_plugins *p, size_t *n);
const dsf_rule *dsf_plugins_rules(const dsf_plugins *p, size_t *n);

/* The copies not used, in plugin-path order (borrowed). */
const dsf_plugin_shadowed *dsf_plugins_shadowed(const dsf_plugins *p,
                                                size_t *n);

typedef struct dsf_validate_opts {
    const char *target;      /* --target's value */
    const char *mode;        /* "check" or "gen" */
    const cJSON *params;     /* the variant's params (gen), the command's
                                params (check), or NULL */
    const cJSON *summaries;  /* per plugin, from dsf_plugins_summarize,
                                or NULL (check) */
    const char *strict;      /* a strictness class whose rules' warnings
                                become errors, or NULL */
    const cJSON *values;     /* the values of the plugins' options that
                                declare `ctx` (plugin/options.h): fields
                                of ctx; or NULL */
    const char *variant;     /* gen: the variant's file stem
                                ("<profile>-<variant>"), or NULL */
    const char *text;        /* check: the file's text as read (borrowed;
                                ctx.json_extension), or NULL */
    size_t text_len;
    bool edits;              /* keep the findings' machine-readable edits
                                (ctx.report's `edit`): check --format json
                                and the language server; otherwise they
                                are neither read nor checked */
} dsf_validate_opts;

/* Runs every rule on doc, appending findings (sorted by path, then rule).
** Returns 0 or a script error. */
int dsf_plugins_validate(dsf_plugins *p, const cJSON *doc,
                         const dsf_validate_opts *o, dsf_findings *out,
                         dsf_diags *d);

/* Runs every resolver (plugin order, then declaration order) on *doc,
** replacing it with each resolver's result and recording what changed in
** prov (may be NULL) against layers of kind "plugin". */
int dsf_plugins_resolve(dsf_plugins *p, cJSON **doc,
                        const dsf_validate_opts *o, dsf_prov *prov,
                        dsf_diags *d);

/* Calls require(module)[fn](args...) where args is a JSON array, and
** converts the single result to *result (caller frees). */
int dsf_plugins_call(dsf_plugins *p, const char *module, const char *fn,
                     const cJSON *args, cJSON **result, dsf_diags *d);

void dsf_findings_free(dsf_findings *f);

#endif
