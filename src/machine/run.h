/*
** run.h -- runs a helper program (nvidia-smi, rocm-smi) and captures its
** standard output, with a time limit and a size limit.
**
** The program is looked up on PATH, gets /dev/null as standard input and
** standard error, and runs in a process group of its own, so a timeout
** kills it and everything it started.
*/
#ifndef DSF_RUN_H
#define DSF_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"

typedef struct dsf_run_result {
    bool found;         /* false: no such program on PATH (nothing ran) */
    int exit_status;    /* its exit status (128+N when killed by signal N) */
    char *out;          /* its standard output, NUL-terminated; caller
                           frees (NULL when !found) */
    size_t out_len;
} dsf_run_result;

/* Runs argv (argv[0] looked up on PATH) for at most timeout_ms and reads at
** most max_out bytes of its output. Returns 0 with *r filled (also when
** the program is missing or exits non-zero: the caller decides), or
** DSF_EINPUT with a diagnostic naming argv[0] when it does not finish in
** time, writes more than max_out bytes, or cannot be started. */
int dsf_run_capture(dsf_run_result *r, const char *const argv[],
                    int timeout_ms,
                    size_t max_out, dsf_diags *d);

void dsf_run_result_free(dsf_run_result *r);

#endif
