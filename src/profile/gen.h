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
#include "fetch/repo.h"
#include "lua/host.h"

typedef struct dsf_matrix_axis {
    char *key;
    char **values;
    size_t n;
    int argno;
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
    const char *target;          /* "deepspeed" (default) or "hf" */
    const char *ds_version;      /* DeepSpeed release for the rules, or NULL */
    bool strict_fit;             /* --strict-fit: not fitting is an error */
    bool color;
    const dsf_dirs *profile_dirs;
    const dsf_dirs *plugin_dirs;
    dsf_limits limits;
    const dsf_repo_opts *repo;   /* for REPO/PROFILE names; may be NULL */
} dsf_gen_request;

/* Runs gen; prints the requested output on stdout and returns 0 or an
** error code, with diagnostics in d. */
int dsf_gen_run(const dsf_gen_request *r, dsf_diags *d);

#endif
