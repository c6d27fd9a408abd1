/*
** gen.h -- `dsforge gen`: variants of a profile, layered, resolved,
** validated, then written all or nothing.
*/
#ifndef DSF_GEN_H
#define DSF_GEN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"
#include "core/paths.h"
#include "doc/jpath.h"
#include "doc/prov.h"
#include "fetch/repo.h"
#include "lua/host.h"
#include "lua/srccache.h"
#include "plugin/plugin.h"

/* A sweep axis: --matrix KEY=V1,V2 (KEY a param, or else a config path
** that gets an edit per value) or --matrix-file F1,F2 (an override file
** per value; key is NULL). */
typedef struct dsf_matrix_axis {
    char *key;
    char **values;
    size_t n;
    int argno;
    bool files;    /* --matrix-file */
} dsf_matrix_axis;

typedef struct dsf_param_arg {
    char *key;
    char *value;
    int argno;
} dsf_param_arg;

typedef struct dsf_gen_request {
    const char *profile;
    const char **tiers;          /* empty: every tier */
    size_t ntiers;
    dsf_matrix_axis *matrix;
    size_t nmatrix;
    dsf_param_arg *params;
    size_t nparams;
    const char **files;          /* -f override files, in order */
    size_t nfiles;
    dsf_edit *edits;             /* command-line edits, in order */
    size_t nedits;
    const char *outdir;          /* -o DIR, or NULL */
    bool to_stdout;              /* --stdout */
    const char *why;             /* --why PATH, or NULL */
    const char *report;          /* --report FILE.html, or NULL */
    const char *target;          /* --target: one the plugins own, or
                                    NULL (the profile's, the default) */
    const cJSON *values;         /* the values of the plugins' options
                                    that declare `ctx` (checked), or NULL */
    dsf_plugins *plugins;        /* the plugins, loaded by the caller (on
                                    plugin_dirs; with sources), or NULL:
                                    the run loads and frees its own */
    dsf_srccache *sources;
    const cJSON *machine;        /* --detect: the machine's facts
                                    (machine/detect.h's JSON), or NULL */
    const char *strict;          /* a strictness class whose rules'
                                    warnings are errors (a plugin's
                                    option), or NULL */
    const char **emit;           /* --emit names (comma lists split), in
                                    order; "none" turns the emitters off */
    size_t nemit;
    bool emit_given;             /* --emit appeared: it replaces the
                                    profile's `emit` list */
    const char *train_cmd;       /* --train-cmd, for the emitters, or NULL */
    const cJSON *emit_options;   /* --emit-opt KEY=VALUE (and --max-parallel,
                                    --canary): an object of strings for the
                                    emitters' ctx.options, or NULL */
    bool color;
    const dsf_dirs *profile_dirs;
    const dsf_dirs *plugin_dirs;
    dsf_limits limits;
    size_t jobs;                 /* -j: processes evaluating a sweep's
                                    variants; 0: one per CPU */
    const dsf_repo_opts *repo;   /* for REPO/PROFILE names; may be NULL */
} dsf_gen_request;

/* The result of evaluating a request without output (dsf_gen_eval). */
typedef struct dsf_gen_result dsf_gen_result;

/* One evaluated variant; every pointer is borrowed from its result. */
typedef struct dsf_gen_variant {
    const char *name;
    const cJSON *doc;          /* the final config */
    const dsf_prov *prov;       /* which layer set each value (--why) */
    const cJSON *params;       /* every param's value as build saw it */
    const cJSON *summary;      /* the plugins' summary, or NULL */
    const cJSON *findings;     /* [{rule, severity, path, message}] */
} dsf_gen_variant;

/* Evaluates every variant of r (r->outdir, to_stdout and why are
** ignored) and keeps the results for the caller: *out is freed with
** dsf_gen_result_free and must not outlive r. Returns 0 or an error
** code (DSF_EVALID when a variant has errors) with diagnostics in d;
** *out is NULL on error. */
int dsf_gen_eval(dsf_gen_result **out, const dsf_gen_request *r,
                 dsf_diags *d);
size_t dsf_gen_result_count(const dsf_gen_result *res);
void dsf_gen_result_variant(const dsf_gen_result *res, size_t i,
                            dsf_gen_variant *out);
void dsf_gen_result_free(dsf_gen_result *res);

/* Runs gen; prints the requested output on stdout and returns 0 or an
** error code, with diagnostics in d. The command's last step: the process
** exits after it, so what the run holds may be left to the OS
** (core/teardown.h). */
int dsf_gen_run(const dsf_gen_request *r, dsf_diags *d);

#endif
