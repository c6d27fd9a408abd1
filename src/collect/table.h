/*
** table.h -- what collect keeps of each record after writing it: enough
** for the table it prints, the counts per status and --best (a name, a
** status, the declared metrics, the first error line), so a sweep's
** records are not held whole.
*/
#ifndef DSF_COLLECT_TABLE_H
#define DSF_COLLECT_TABLE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "collect/collect.h"
#include "core/buf.h"
#include "plugin/readers.h"

typedef struct dsf_collect_row {
    char *name;
    char *status;
    char *error;       /* the record's error, else its message, or NULL */
    double *vals;      /* per declared metric; NAN when not measured */
} dsf_collect_row;

typedef struct dsf_collect_table {
    dsf_collect_row *rows;
    size_t n, cap, nmetrics;
    size_t best;       /* (size_t)-1 until set */
    char *best_cmd;    /* the gen command best.json is for, or NULL */
} dsf_collect_table;

void dsf_collect_table_init(dsf_collect_table *t, const dsf_results_decl *rs);
void dsf_collect_table_add(dsf_collect_table *t, const dsf_results_decl *rs,
                           const cJSON *rec);
/* {status: count} in status order (caller frees). */
cJSON *dsf_collect_table_counts(const dsf_collect_table *t);
/* The row with the best value of metric among the "ok" ones (ties: the
** first), or (size_t)-1. */
size_t dsf_collect_table_best(const dsf_collect_table *t,
                              const dsf_results_decl *rs, const char *metric);
/* Marks row k best; profile and tier (borrowed; NULL when unknown) are
** the control's, dir the output's, for the gen command printed. */
void dsf_collect_table_set_best(dsf_collect_table *t, size_t k,
                                const char *profile, const char *tier,
                                const char *dir);
/* Appends the table, the error lines and the footer to out. */
void dsf_collect_table_print(const dsf_collect_table *t,
                             const dsf_results_decl *rs,
                             const dsf_collect_opts *o, dsf_buf *out);
void dsf_collect_table_free(dsf_collect_table *t);

#endif
