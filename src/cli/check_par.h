/*
** check_par.h -- `check FILE...` with its files shared out among worker
** processes forked after the plugins loaded (core/workers.h, `-j N`).
** The parent merges the workers' findings in file order, so the output
** and the exit code are those of a serial run: it stops at the first
** file whose check fails (not one that cannot be read: that is noted and
** the run goes on), and a worker ended by a limit's backstop ends the
** run the way a serial run would have ended at that file. A worker killed
** by a signal ends it with DSF_EWORKER, naming the file (names[i], item
** i's) and the signal.
*/
#ifndef DSF_CHECK_PAR_H
#define DSF_CHECK_PAR_H

#include <stddef.h>

#include "core/diag.h"

/* Checks item i, appending its findings to found: 0, DSF_EINPUT (the
** file cannot be read or parsed; the run goes on) or an error that ends
** the run. Runs in the parent and in forked workers. */
typedef int (*dsf_check_item)(void *ctx, size_t i, dsf_diags *found);

/* Checks items [0, n) with check(ctx, i, found) in jobs processes (jobs
** from dsf_workers_count; 1: this process alone). Returns the error that
** ended the run or 0; *input_error is DSF_EINPUT when some file could
** not be read. d: a worker that could not be started or stopped early. */
int dsf_check_par_run(size_t n, size_t jobs, dsf_check_item check, void *ctx,
                      const char *const *names, dsf_diags *found,
                      int *input_error, dsf_diags *d);

#endif
