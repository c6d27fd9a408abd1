/*
** gen_run.h -- the state of one `gen` run, shared by gen.c (the pipeline),
** variants.c (tiers x matrix) and output.c (--why, summary, files).
*/
#ifndef DSF_GEN_RUN_H
#define DSF_GEN_RUN_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "doc/prov.h"
#include "json/jsonc.h"
#include "plugin/plugin.h"
#include "plugin/summary.h"
#include "profile/gen.h"
#include "profile/profile.h"

#define DSF_MAX_VARIANTS 100000

typedef struct variant {
    char *name;
    const dsf_tier *tier;   /* NULL for a profile without tiers */
    cJSON *params;          /* every param's value */
    cJSON *cell;            /* matrix values of this variant, or NULL */
    cJSON *inputs;          /* added to prepare/build's ctx: "given" (the
                            ** params set by --param/--matrix), "files"
                            ** (decoded file params); owned */
    cJSON *doc;             /* the final config */
    dsf_prov prov;
    char *bytes;            /* rendered JSON */
    char sha256[65];
    cJSON *extra;           /* the plugins' merged summary, or NULL */
    char **cells;           /* a text (or NULL) per declared column */
} variant;

typedef struct override_file {
    const char *path;
    cJSON *doc;
    dsf_jsrc *src;
    char sha256[65];
    dsf_layer layer;
    char *label;
} override_file;

typedef struct run {
    const dsf_gen_request *r;
    dsf_profile *profile;
    dsf_plugins *plugins;
    dsf_srccache *sources;
    dsf_diags warnings;
    override_file *files;
    dsf_layer *chain_layers;
    char **chain_labels;
    dsf_layer tier_layer;
    char *tier_label;
    dsf_layer *edit_layers;
    char **edit_labels;
    variant *v;
    size_t nv;
} run;

/* Builds ru->v: every selected tier (or "default") times every --matrix
** cell, with each variant's params resolved and checked. DSF_EUSAGE on a
** bad tier, param or matrix value. */
int dsf_gen_make_variants(run *ru, dsf_diags *d);

/* Prints, for each variant, every layer that touched --why's path. */
void dsf_gen_print_why(run *ru, dsf_diags *d);

/* Prints the summary table to out: the variant's name, then every
** declared column (plugin order), each as wide as its widest cell. */
void dsf_gen_print_summary(const run *ru, FILE *out);

/* Writes every variant and manifest.json to -o's directory, all or
** nothing: temporary files first, then the renames; files that already
** hold the same bytes are left alone. */
int dsf_gen_write_outputs(run *ru, dsf_diags *d);

#endif
