/*
** workers.h -- a run's items (gen's variants, check's files) shared out
** among forked worker processes, their results merged by the parent in
** item order so that the output is a serial run's.
**
** The items [first, n) are cut into contiguous ranges as equal as they
** can be; range 0 is the caller's own, each other range is a worker's. A
** worker is a fork (the plugins already loaded): its body writes one
** record per item to w->f (core/record.h) and flushes it before the next
** item, and writes what scripts print to its own stderr, a temporary
** file the parent shows in item order (dsf_worker_show_stderr up to the
** offset the record noted with dsf_worker_stderr_mark). The parent tells
** a worker to stop by closing its end of a pipe (dsf_workers_stop); the
** worker sees it at its next item (dsf_worker_stopped).
*/
#ifndef DSF_WORKERS_H
#define DSF_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/diag.h"

typedef struct dsf_worker {
    pid_t pid;         /* -1: not started (range 0, or a failed start) */
    FILE *f;           /* its records, a temporary file; owned */
    FILE *errf;        /* its stderr, a temporary file; owned */
    uint64_t err_done; /* how much of errf the parent has shown */
    int stop_fd;       /* parent: closing it stops the worker; -1 */
    int done_fd;       /* worker: closing it says "all recorded";
                       ** parent: reads the end of it; -1 */
    size_t from, to;   /* its items */
} dsf_worker;

/* The body of a worker, in the child: handles items [w->from, w->to),
** checks dsf_worker_stopped(stop_fd) before each, and ends with _exit
** (0 when it did what it was given). */
typedef void (*dsf_worker_body)(void *ctx, dsf_worker *w, int stop_fd);

/* The number of processes for n items given --jobs (0: one per CPU), at
** least min_per_job items each, at most 64. */
size_t dsf_workers_count(size_t jobs, size_t n, size_t min_per_job);

/* Fills ws[0..jobs) with the ranges of [first, n) and forks a worker
** running body(ctx, ...) for ws[1..jobs). DSF_EINPUT in d when a worker
** cannot be started (those started run on; the caller stops them). Free
** with dsf_workers_free. */
int dsf_workers_start(dsf_worker *ws, size_t jobs, size_t first, size_t n,
                      dsf_worker_body body, void *ctx, dsf_diags *d);

/* In a worker: whether the parent told it to stop (or is gone). */
bool dsf_worker_stopped(int stop_fd);
/* In a worker: its stderr offset after what it printed so far. */
uint64_t dsf_worker_stderr_mark(void);
/* In a worker: flushes the record just written; a worker that cannot
** ends (the parent then reports that it stopped early). */
void dsf_worker_flush(FILE *f);

/* Workers that leave files for the parent to adopt (gen's staged
** files) must not leave them behind when the parent dies first: after
** its last record the worker calls dsf_worker_await_verdict, which says
** it is done and waits for the parent; true when the parent adopted its
** results (dsf_worker_adopt), false when the parent stopped it or is
** gone: the worker then removes its files itself. The parent waits with
** dsf_worker_await_done before it reads the records. */
bool dsf_worker_await_verdict(dsf_worker *w, int stop_fd);
void dsf_worker_await_done(dsf_worker *w);
/* The parent took over w's results: w ends without removing them. */
void dsf_worker_adopt(dsf_worker *w);
/* Async-signal-safe (a limit's backstop ending the parent): tells every
** started worker of ws[0..jobs) to stop and waits until each has ended
** (and removed its files). */
void dsf_workers_abandon(dsf_worker *ws, size_t jobs);

/* Tells workers ws[from..jobs) to stop at their next item. */
void dsf_workers_stop(dsf_worker *ws, size_t from, size_t jobs);
/* Waits for w to end (w->pid is -1 afterwards); its wait status. */
int dsf_worker_wait(dsf_worker *w);
/* Shows what w wrote on its stderr up to offset end (UINT64_MAX: all). */
void dsf_worker_show_stderr(dsf_worker *w, uint64_t end);
/* Closes what the parent holds of ws[0..jobs) and frees ws. */
void dsf_workers_free(dsf_worker *ws, size_t jobs);

/* The error for a worker killed by a signal (status: its wait status,
** WIFSIGNALED) while it was at item (what: "evaluating variant",
** "checking"; item: the variant's or file's name): DSF_EWORKER in d,
** naming the item, the signal and that the run wrote nothing. */
int dsf_worker_killed(dsf_diags *d, int status, const char *what,
                      const char *item);

/* TEST ONLY: a worker calls it before recording item (a variant's name,
** a file as given); when the environment's DSFORGE_TEST_KILL_WORKER_AT
** names item, the worker raises SIGKILL there, as the OOM killer or a
** user's kill might (its files for item written, not recorded). Never
** set outside the tests. */
void dsf_worker_test_kill(const char *item);

/* Ends this process the way a worker that ended with wait status status
** did (signal, or exit code; a limit's backstop exits with code 5). */
_Noreturn void dsf_die_like(int status);

#endif
