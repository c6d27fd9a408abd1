/*
** record.h -- what a worker process (core/workers.h) writes for its
** parent: fixed-size integers and length-prefixed strings (a length of 0
** is NULL), in the machine's own byte order (the file never leaves the
** run). A reader that returns false read a partial record: the writer
** died while writing it.
*/
#ifndef DSF_RECORD_H
#define DSF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/diag.h"

void dsf_rec_put_u64(FILE *f, uint64_t x);
/* s may be NULL (read back as NULL). */
void dsf_rec_put_str(FILE *f, const char *s);
/* Writes d->items[from..to). */
void dsf_rec_put_diags(FILE *f, const dsf_diags *d, size_t from, size_t to);

bool dsf_rec_get_u64(FILE *f, uint64_t *x);
/* *s: the string (caller frees) or NULL; NULL too after a failure. */
bool dsf_rec_get_str(FILE *f, char **s);
/* Appends the diagnostics read to d (caller frees them with d, also what
** was read of a partial record). */
bool dsf_rec_get_diags(FILE *f, dsf_diags *d);

#endif
