/*
** side.h -- one side of `dsforge diff`: a JSON file, a variant of a
** `gen -o DIR` output (DIR:VARIANT), a whole output directory (DIR), or a
** profile variant PROFILE[@VERSION][:TIER] generated on the spot with its
** provenance, summary and findings.
*/
#ifndef DSF_DIFF_SIDE_H
#define DSF_DIFF_SIDE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "doc/prov.h"
#include "profile/gen.h"

typedef enum dsf_side_kind {
    DSF_SIDE_FILE,     /* a JSON file */
    DSF_SIDE_OUTPUT,   /* DIR:VARIANT */
    DSF_SIDE_DIR,      /* DIR: every variant of its manifest */
    DSF_SIDE_PROFILE   /* PROFILE[@VERSION][:TIER] */
} dsf_side_kind;

/* One variant of a side. Pointers are borrowed from the side. */
typedef struct dsf_side_variant {
    const char *name;        /* variant name; the file name for a file */
    const char *file;        /* its JSON file, or NULL when generated */
    const cJSON *doc;        /* NULL until loaded (DSF_SIDE_DIR: lazily) */
    const dsf_prov *prov;    /* provenance, profile variants only */
    const cJSON *params;     /* or NULL */
    const cJSON *summary;    /* the plugins' summary, or NULL */
    const cJSON *findings;   /* profile variants and manifests, or NULL */
} dsf_side_variant;

typedef struct dsf_side {
    dsf_side_kind kind;
    char *label;             /* the argument as given */
    char *dir;               /* DSF_SIDE_OUTPUT/DIR: the directory */
    cJSON *manifest;         /* DSF_SIDE_OUTPUT/DIR */
    dsf_side_variant *v;
    cJSON **docs;            /* owned documents, parallel to v */
    size_t nv;
    dsf_gen_request req;     /* DSF_SIDE_PROFILE */
    char *profile, *tier;
    dsf_gen_result *res;
} dsf_side;

/* Decides what text names (see the header comment) and, except for a
** profile variant, loads it. DSF_EINPUT for a missing or malformed file
** or manifest, or an unknown VARIANT. */
int dsf_side_open(dsf_side *s, const char *text, dsf_diags *d);

/* Generates a profile side from base (whose profile and tiers are set
** here; the caller fills params, files, edits, target, search paths). A
** profile with several tiers needs one: DSF_EUSAGE. A variant with
** validation errors is an input error (DSF_EINPUT). */
int dsf_side_generate(dsf_side *s, const dsf_gen_request *base,
                      dsf_diags *d);

/* Loads variant i's document (DSF_SIDE_DIR loads on demand). */
int dsf_side_load(dsf_side *s, size_t i, dsf_diags *d);

/* Drops variant i's document again (directory sweeps keep two at a
** time). */
void dsf_side_unload(dsf_side *s, size_t i);

/* Index of the variant named name, or -1. */
long dsf_side_find(const dsf_side *s, const char *name);

void dsf_side_close(dsf_side *s);

#endif
