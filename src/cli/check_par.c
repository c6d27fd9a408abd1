/* check_par.c -- see check_par.h. */
#define _DEFAULT_SOURCE
#include "cli/check_par.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "core/record.h"
#include "core/workers.h"
#include "core/xalloc.h"
#include "core/heap.h"
#include "lua/limits.h"

#define RECORD_END 0x44534643u

typedef struct par {
    dsf_check_item check;
    void *ctx;
    const char *const *names;
} par;

/* One file, the C heap's growth faulted in as it happens. */
static int check_item(dsf_check_item check, void *ctx, size_t i,
                      dsf_diags *found)
{
    dsf_heap_follow();
    return check(ctx, i, found);
}

/* A worker: one record per file (index, stderr mark, result, findings),
** on disk before the next file. */
static void work(void *ctx, dsf_worker *w, int stop_fd)
{
    const par *p = ctx;
    dsf_limits_after_fork();
    dsf_heap_after_fork();
    for (size_t i = w->from; i < w->to; i++) {
        if (dsf_worker_stopped(stop_fd))
            break;
        dsf_diags found = DSF_DIAGS_INIT;
        int rc = check_item(p->check, p->ctx, i, &found);
        dsf_worker_test_kill(p->names[i]); /* (tests only: workers.h) */
        dsf_rec_put_u64(w->f, i);
        dsf_rec_put_u64(w->f, dsf_worker_stderr_mark());
        dsf_rec_put_u64(w->f, (uint64_t)(int64_t)rc);
        dsf_rec_put_diags(w->f, &found, 0, found.len);
        dsf_rec_put_u64(w->f, RECORD_END);
        dsf_worker_flush(w->f);
        dsf_diags_free(&found);
        if (rc && rc != DSF_EINPUT)
            break;
    }
    _exit(0);
}

/* The result of item i as a serial loop keeps it. */
static int note(int frc, int *input_error)
{
    if (frc == DSF_EINPUT) {
        *input_error = frc;
        return 0;
    }
    return frc;
}

/* Waits for w and merges its records while rc is 0. *died: w's wait
** status when it ended before its range's end without an error. */
static int collect(dsf_worker *w, const char *const *names, int rc,
                   int *died, dsf_diags *found, int *input_error,
                   dsf_diags *d)
{
    int status = dsf_worker_wait(w);
    rewind(w->f);
    size_t next = w->from;
    for (;;) {
        uint64_t index, err_end, frc, end;
        dsf_diags got = DSF_DIAGS_INIT;
        bool ok = dsf_rec_get_u64(w->f, &index) &&
                  dsf_rec_get_u64(w->f, &err_end) &&
                  dsf_rec_get_u64(w->f, &frc) &&
                  dsf_rec_get_diags(w->f, &got) &&
                  dsf_rec_get_u64(w->f, &end) && end == RECORD_END;
        if (ok && !rc && index == next) {
            dsf_worker_show_stderr(w, err_end);
            dsf_diags_move(found, &got);
            rc = note((int)(int64_t)frc, input_error);
            next++;
        }
        dsf_diags_free(&got);
        if (!ok)
            break;
    }
    if (!rc && next < w->to) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                "a worker process stopped after file %zu "
                                "of %zu", next, w->to);
        else if (WIFSIGNALED(status)) { /* killed from outside */
            dsf_worker_show_stderr(w, UINT64_MAX);
            rc = dsf_worker_killed(d, status, "checking", names[next]);
        } else {
            *died = status;
            dsf_worker_show_stderr(w, UINT64_MAX); /* its last words */
        }
    }
    return rc;
}

int dsf_check_par_run(size_t n, size_t jobs, dsf_check_item check, void *ctx,
                      const char *const *names, dsf_diags *found,
                      int *input_error, dsf_diags *d)
{
    *input_error = 0;
    if (jobs < 2) {
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i++)
            rc = note(check_item(check, ctx, i, found), input_error);
        return rc;
    }
    par p = {check, ctx, names};
    dsf_worker *ws = dsf_xcalloc(jobs, sizeof *ws);
    int rc = dsf_workers_start(ws, jobs, 0, n, work, &p, d);
    dsf_heap_after_fork(); /* the pages the workers share, this side's */
    for (size_t i = ws[0].from; i < ws[0].to && !rc; i++)
        rc = note(check_item(check, ctx, i, found), input_error);
    int died = 0;
    for (size_t j = 1; j < jobs; j++) {
        if (rc || died) /* the others stop at their next file */
            dsf_workers_stop(ws, j, jobs);
        if (ws[j].pid > 0)
            rc = collect(&ws[j], names, rc ? rc : died ? DSF_ESCRIPT : 0,
                         &died, found, input_error, d);
    }
    dsf_workers_free(ws, jobs);
    if (died)
        dsf_die_like(died); /* as a serial run would have ended there */
    return rc;
}
