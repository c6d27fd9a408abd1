/*
** profile.h -- profiles: discovery on the search path, loading the
** `extends` chain, params and tiers, and running `build` for a variant.
**
** A profile is a Lua file `<name>.lua` returning a table (see
** contrib/docs/profiles.md). Loading evaluates each file of the chain once to read
** its declaration; building a variant evaluates the chain again in a fresh
** sandboxed state, so variants cannot influence each other.
*/
#ifndef DSF_PROFILE_H
#define DSF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "core/paths.h"
#include "doc/prov.h"
#include "fetch/repo.h"
#include "lua/host.h"

typedef enum dsf_param_type {
    DSF_PARAM_INTEGER,
    DSF_PARAM_NUMBER,
    DSF_PARAM_STRING,
    DSF_PARAM_BOOLEAN
} dsf_param_type;

typedef struct dsf_param {
    char *name;
    char *doc;            /* one line; "" when the profile gives none */
    dsf_param_type type;
    cJSON *def;           /* the default value */
    cJSON *values;        /* allowed values (array), or NULL */
    bool has_min, has_max;
    double min, max;
    char *declared_in;    /* name of the profile that declared it */
    char *check;          /* "module.fn" that judges each value, or NULL */
    bool json_file;       /* a value naming a file is read as JSON */
} dsf_param;

typedef struct dsf_tier {
    char *name;
    char *summary;        /* may be "" */
    cJSON *params;        /* object: param -> value */
    cJSON *config;        /* overlay (tombstones allowed), or NULL */
    char *declared_in;
} dsf_tier;

typedef struct dsf_profile_src {
    char *name;
    char *path;           /* file on disk */
    char *display;        /* origin-relative name for messages/manifests;
                          ** "repo NAME@VERSION:profiles/X.lua" for a
                          ** repository's profile */
    char *origin;         /* "built-in", "project", ... */
    char *summary;
    char *extends;        /* parent name or NULL */
    char sha256[65];      /* of the file's bytes */
    int build_line;       /* line where build is defined */
} dsf_profile_src;

typedef struct dsf_profile {
    dsf_profile_src *chain;  /* root first; the requested profile last */
    size_t nchain;
    dsf_param *params;       /* sorted by name */
    size_t nparams;
    dsf_tier *tiers;         /* in the profile's tier order */
    size_t ntiers;
    cJSON *emit;             /* the default emitters: the `emit` list of
                             ** the chain's profile nearest the leaf that
                             ** has one (strings), or NULL */
    size_t emit_from;        /* ... its index in chain */
    char *target;            /* the target (`target` of the chain's profile
                             ** nearest the leaf that has one), or NULL */
    size_t target_from;      /* ... its index in chain */
    struct dsf_profile_state *state; /* where it is evaluated, kept from
                             ** loading to dsf_profile_free (pstate.h) */
} dsf_profile;

/* What loading and building need; everything borrowed. */
typedef struct dsf_profile_ctx {
    const dsf_dirs *dirs;         /* profile search path */
    const dsf_dirs *plugin_dirs;  /* where require() looks */
    dsf_srccache *sources;
    dsf_limits limits;
    dsf_diags *warnings;          /* dsforge.warn target */
    const dsf_repo_opts *repo;    /* for NAME/PROFILE[@VERSION]; NULL: none */
} dsf_profile_ctx;

/* One profile file found on the search path. */
typedef struct dsf_profile_entry {
    char *name;
    char *path;
    char *origin;
    bool shadowed;   /* a higher-priority directory has the same name */
} dsf_profile_entry;

/* Every profile on the search path, sorted by name, then priority. *out is
** freed with dsf_profile_entries_free. */
void dsf_profile_list(dsf_profile_entry **out, size_t *n,
                      const dsf_dirs *dirs);
void dsf_profile_entries_free(dsf_profile_entry *e, size_t n);

/* Loads profile name with its extends chain. name is a profile on the
** search path, or REPO/PROFILE[@VERSION] from a remote repository (its
** locked, verified copy: fetch/repo.h); a repository profile's extends
** resolve in the same repository first. *out is freed with
** dsf_profile_free. DSF_EINPUT for an unknown profile (with close names
** suggested), a bad declaration, an extends cycle; DSF_ESCRIPT when a
** script fails. */
int dsf_profile_load(dsf_profile **out, const dsf_profile_ctx *ctx,
                     const char *name, dsf_diags *d);
void dsf_profile_free(dsf_profile *p);

/* The file of s as people should see it: its path, or for a repository's
** profile its display name (not the cache path). Borrowed from s. */
const char *dsf_profile_src_where(const dsf_profile_src *s);

/* Lookups; NULL when absent. Borrowed from p. */
const dsf_param *dsf_profile_param(const dsf_profile *p, const char *name);
const dsf_tier *dsf_profile_tier(const dsf_profile *p, const char *name);

/* Parses text as a value of param's type. -1 with *err (caller frees). */
int dsf_param_parse(cJSON **out, const dsf_param *param, const char *text,
                    char **err);

/* Checks v against param's type, range and allowed values. -1 with *err. */
int dsf_param_check(const dsf_param *param, const cJSON *v, char **err);

/* True when text, a value of a `file = "json"` param, names a file: it
** ends in ".json" or is an existing regular file (the rule of estimate
** --model). */
bool dsf_param_names_file(const dsf_param *param, const char *text);

/* The range of a numeric param as people write it: "1 .. 64", ">= 1",
** "<= 1", or NULL without one. *buf (size n) holds the text. */
const char *dsf_param_range_text(const dsf_param *param, char *buf,
                                 size_t n);

/* The type's name ("integer", ...). */
const char *dsf_param_type_name(dsf_param_type t);

/* Evaluates a variant in the profile's state, renewed (a fresh sandbox
** environment, library tables and module cache; each file's chunk run
** again in a new environment: see contrib/docs/architecture.md): runs
** each prepare
** function of the chain (root first; each returns param changes, checked
** against the declarations), then each build function (root first) with
** the prepared params, deep-merging their results into a new document
** *doc_out (caller frees). *params_out (when not NULL) receives the
** prepared params (caller frees). layers must hold p->nchain entries that
** outlive prov; each build's changes are recorded in prov (may be NULL).
** ctx_extra (may be NULL) is passed to prepare and build as their second
** argument. */
int dsf_profile_build(cJSON **doc_out, cJSON **params_out,
                      dsf_profile *p, const dsf_profile_ctx *ctx,
                      const cJSON *params, const cJSON *ctx_extra,
                      const dsf_layer *layers, dsf_prov *prov, dsf_diags *d);

#endif
