/*
** collect.h -- `dsforge collect DIR`: what each variant of a `gen -o DIR`
** output measured when it ran, read from its results directory by the
** readers plugins declare (plugin/readers.h), one record per variant,
** written to DIR/results.json in one atomic rename.
**
** A variant's results are DIR/results/<file stem>/ (the layout of
** contrib/docs/results.md), or a directory given for it. Records keep the
** manifest's variant order; the same files give the same bytes.
*/
#ifndef DSF_COLLECT_H
#define DSF_COLLECT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/diag.h"
#include "plugin/plugin.h"

typedef enum dsf_collect_format {
    DSF_COLLECT_TABLE, DSF_COLLECT_JSON
} dsf_collect_format;

typedef struct dsf_collect_opts {
    const char *dir;            /* the gen -o output (borrowed) */
    const char *results;        /* the results root, or NULL: DIR/results */
    char *const *results_for;   /* "VARIANT=PATH" (borrowed), n_results_for */
    size_t n_results_for;
    const char *best;           /* --best METRIC, or NULL */
    const char *calibration;    /* --export-calibration FILE, or NULL */
    dsf_collect_format format;
} dsf_collect_opts;

/* Collects o->dir's results with p's readers. On success out receives
** what to print (the table, or results.json's text), *status 0, or 1
** when a variant's results were refused (a record marked `refused`: its
** message is an error in d), and DIR/results.json (and best.json, the
** calibration file) are written. DSF_EUSAGE for a bad option,
** DSF_EINPUT for a missing or broken manifest, an unknown variant or
** metric, or no plugin declaring `results`; a script error from a
** reader or the record hook names it and the file. Nothing is written on
** an error. */
int dsf_collect_run(dsf_plugins *p, const dsf_collect_opts *o, dsf_buf *out,
                    int *status, dsf_diags *d);

#endif
