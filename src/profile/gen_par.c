/* gen_par.c -- a streamed gen run's variants evaluated by several
** processes (gen -j, see gen_run.h).
**
** The parent loads the profile and the plugins and evaluates the first
** variant (the manifest's control) alone; then it forks one worker per
** further job. The variants after the first are cut into contiguous
** ranges: the parent evaluates the first range, each worker one of the
** others. A worker evaluates (and, with -o, stages the files of) its
** variants as a serial run would, and writes for each a record to a
** temporary file (its diagnostics and warnings, summary cells, hash,
** staged files, manifest entry). After its own range the parent waits
** for each worker in order and merges its records, in variant order,
** exactly as if it had evaluated those variants itself: the diagnostics,
** warnings, staged files, manifest and exit code are a serial run's.
**
** What a worker cannot know is decided at the merge: a serial run stops
** at the first variant whose evaluation fails (later records are dropped
** and their temporary files unlinked), and once any variant has an error
** it neither runs emitters nor stages (a worker's emitter diagnostics
** and files are dropped when an earlier range had an error). A worker
** that dies (a limit's backstop ends the process, as it would end a
** serial run) makes the parent unlink every temporary file and end the
** same way, unless the parent already stopped before that variant. Each
** worker is told to stop (its pipe closed) once the parent knows the
** run failed.
**
** A worker killed by a signal from outside (the OOM killer, a user's
** kill) ends the run with DSF_EWORKER and a message naming the variant
** it was evaluating and the signal; the files it was writing, which no
** record names, carry this process's id (or lie in its staging
** directory) and go with the run's (dsf_gen_out_finish).
**
** A worker's staged files are its own until the parent adopts them: after
** its last record it waits for the parent's verdict, and removes them
** when the run failed or the parent is gone. A limit's backstop ending
** the parent during its own range first stops the workers and waits for
** them, so no temporary file or directory of the run stays behind.
*/
#define _DEFAULT_SOURCE
#include "profile/gen_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/record.h"
#include "core/workers.h"
#include "core/xalloc.h"
#include "core/heap.h"
#include "lua/limits.h"

#define MIN_PER_JOB 16   /* variants that pay for a fork */
#define RECORD_END 0x44534652u

size_t dsf_gen_parallel_jobs(const gen_run *ru)
{
    /* --report's page draws every variant's document: one process. */
    if (!ru->stream || ru->r->report)
        return 1;
    return dsf_workers_count(ru->r->jobs, ru->nv ? ru->nv - 1 : 0,
                             MIN_PER_JOB);
}

/* One variant's results as a worker recorded them. */
typedef struct record {
    uint64_t index;
    uint64_t err_end;      /* the worker's stderr up to here is this
                           ** variant's and earlier ones' (print) */
    int eval_rc, rc;
    bool out;              /* the worker ran its emitters and staging */
    dsf_diags diags;       /* the evaluation's */
    dsf_diags out_diags;   /* the emitters' and the staging's */
    dsf_diags warnings;
    char sha256[65];
    char **cells;
    size_t ncells;
    dsf_emitted *emitted;
    size_t nemitted;
    char **staged;         /* final, tmp (NULL: unchanged) pairs */
    size_t nstaged;
    char *entry;           /* the manifest entry's text, or NULL */
    char **rows;           /* the run emitters' rows (per selected
                           ** emitter), or NULL */
    size_t nrows;
} record;

static void record_free(record *x)
{
    dsf_diags_free(&x->diags);
    dsf_diags_free(&x->out_diags);
    dsf_diags_free(&x->warnings);
    for (size_t i = 0; i < x->ncells; i++)
        free(x->cells[i]);
    free(x->cells);
    for (size_t i = 0; i < x->nemitted; i++)
        dsf_emitted_free(&x->emitted[i]);
    free(x->emitted);
    for (size_t i = 0; i < 2 * x->nstaged; i++)
        free(x->staged[i]);
    free(x->staged);
    free(x->entry);
    for (size_t i = 0; i < x->nrows; i++)
        free(x->rows[i]);
    free(x->rows);
    memset(x, 0, sizeof *x);
}

/* Unlinks the temporary files of a record that is not merged. */
static void record_unlink(const record *x)
{
    for (size_t i = 0; i < x->nstaged; i++)
        if (x->staged[2 * i + 1])
            unlink(x->staged[2 * i + 1]);
}

/* Reads one record; false at the end of the file or on a partial one (a
** worker that died while writing it), with what was read in x. */
static bool get_record(FILE *f, record *x, size_t ncol)
{
    memset(x, 0, sizeof *x);
    uint64_t erc, rc, out, n, end;
    char *sha = NULL;
    if (!dsf_rec_get_u64(f, &x->index) || !dsf_rec_get_u64(f, &x->err_end) ||
        !dsf_rec_get_u64(f, &erc) || !dsf_rec_get_u64(f, &rc) || !dsf_rec_get_u64(f, &out))
        return false;
    x->eval_rc = (int)(int64_t)erc;
    x->rc = (int)(int64_t)rc;
    x->out = out != 0;
    if (!dsf_rec_get_diags(f, &x->diags) || !dsf_rec_get_diags(f, &x->out_diags) ||
        !dsf_rec_get_diags(f, &x->warnings) || !dsf_rec_get_str(f, &sha))
        return false;
    snprintf(x->sha256, sizeof x->sha256, "%s", sha ? sha : "");
    free(sha);
    x->cells = dsf_xcalloc(ncol + 1, sizeof *x->cells);
    for (; x->ncells < ncol; x->ncells++)
        if (!dsf_rec_get_str(f, &x->cells[x->ncells]))
            return false;
    if (!dsf_rec_get_u64(f, &n) || n > 1u << 20)
        return false;
    x->emitted = dsf_xcalloc((size_t)n + 1, sizeof *x->emitted);
    for (; x->nemitted < n; x->nemitted++) {
        dsf_emitted *e = &x->emitted[x->nemitted];
        uint64_t by, len;
        if (!dsf_rec_get_u64(f, &by) || !dsf_rec_get_str(f, &e->file) || !dsf_rec_get_u64(f, &len) ||
            !dsf_rec_get_str(f, &sha))
            return false;
        /* the worker is a fork: the plugins' emitters are at the same
        ** addresses in both processes */
        e->by = (const dsf_emitter *)(uintptr_t)by;
        e->len = (size_t)len;
        snprintf(e->sha256, sizeof e->sha256, "%s", sha ? sha : "");
        free(sha);
    }
    if (!dsf_rec_get_u64(f, &n) || n > 1u << 20)
        return false;
    x->staged = dsf_xcalloc(2 * (size_t)n + 1, sizeof *x->staged);
    for (; x->nstaged < n; x->nstaged++)
        if (!dsf_rec_get_str(f, &x->staged[2 * x->nstaged]) ||
            !dsf_rec_get_str(f, &x->staged[2 * x->nstaged + 1])) {
            x->nstaged++; /* unlinked with the rest */
            return false;
        }
    if (!dsf_rec_get_str(f, &x->entry) || !dsf_rec_get_u64(f, &n) ||
        n > 1u << 20)
        return false;
    x->rows = n ? dsf_xcalloc((size_t)n, sizeof *x->rows) : NULL;
    for (; x->nrows < n; x->nrows++)
        if (!dsf_rec_get_str(f, &x->rows[x->nrows]))
            return false;
    return dsf_rec_get_u64(f, &end) && end == RECORD_END;
}

/* ------------------------------------------------------------------ */
/* A worker. */

/* Evaluates variants [w->from, w->to) and records each in w->f; stops
** early when the parent says so, or after a variant whose evaluation
** fails (as a serial run would). */
static void work(void *ctx, dsf_worker *w, int stop_fd)
{
    gen_run *ru = ctx;
    FILE *f = w->f;
    dsf_limits_after_fork();
    dsf_heap_after_fork();
    size_t ncol;
    dsf_plugins_columns(ru->plugins, &ncol);
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_buf *entries = dsf_gen_out_entries(ru, true);
    dsf_gen_out_forked(ru);
    size_t mine = dsf_gen_out_nstaged(ru);
    for (size_t i = w->from; i < w->to; i++) {
        if (dsf_worker_stopped(stop_fd))
            break; /* the run failed (or the parent is gone) */
        size_t d0 = d.len, w0 = ru->warnings.len;
        size_t s0 = dsf_gen_out_nstaged(ru), out_from;
        if (entries)
            dsf_buf_clear(entries);
        dsf_heap_follow();
        int erc, rc = dsf_gen_eval_variant(ru, i, &d, &erc, &out_from);
        gen_variant *v = &ru->v[i];
        dsf_worker_test_kill(v->name); /* (tests only: workers.h) */
        dsf_rec_put_u64(f, i);
        dsf_rec_put_u64(f, dsf_worker_stderr_mark());
        dsf_rec_put_u64(f, (uint64_t)(int64_t)erc);
        dsf_rec_put_u64(f, (uint64_t)(int64_t)rc);
        /* whether the emitters ran: no error in this worker up to and
        ** with this variant's evaluation (dsf_gen_variant's test) */
        bool out = !erc;
        for (size_t k = 0; k < out_from && out; k++)
            out = d.items[k].severity != DSF_ERROR;
        dsf_rec_put_u64(f, out);
        dsf_rec_put_diags(f, &d, d0, out_from);
        dsf_rec_put_diags(f, &d, out_from, d.len);
        dsf_rec_put_diags(f, &ru->warnings, w0, ru->warnings.len);
        dsf_rec_put_str(f, v->sha256);
        for (size_t k = 0; k < ncol; k++)
            dsf_rec_put_str(f, v->cells ? v->cells[k] : NULL);
        dsf_rec_put_u64(f, v->nemitted);
        for (size_t k = 0; k < v->nemitted; k++) {
            dsf_rec_put_u64(f, (uint64_t)(uintptr_t)v->emitted[k].by);
            dsf_rec_put_str(f, v->emitted[k].file);
            dsf_rec_put_u64(f, v->emitted[k].len);
            dsf_rec_put_str(f, v->emitted[k].sha256);
        }
        size_t s1 = dsf_gen_out_nstaged(ru);
        dsf_rec_put_u64(f, s1 - s0);
        for (size_t k = s0; k < s1; k++) {
            const char *fin, *tmp;
            dsf_gen_out_staged(ru, k, &fin, &tmp);
            dsf_rec_put_str(f, fin);
            dsf_rec_put_str(f, tmp);
        }
        dsf_rec_put_str(f, entries && entries->len ? entries->data : NULL);
        dsf_rec_put_u64(f, v->rows ? ru->nemit_sel : 0);
        for (size_t k = 0; v->rows && k < ru->nemit_sel; k++)
            dsf_rec_put_str(f, v->rows[k]);
        dsf_rec_put_u64(f, RECORD_END);
        dsf_worker_flush(f);
        if (erc || rc)
            break;
    }
    /* The parent adopts the staged files, or they go. */
    if (!dsf_worker_await_verdict(w, stop_fd))
        dsf_gen_out_unlink_since(ru, mine);
    _exit(0);
}

/* ------------------------------------------------------------------ */
/* The parent. */

/* Merges record x (of variant x->index) as if this process had evaluated
** it: returns the run's rc after it. */
static int merge(gen_run *ru, record *x, dsf_diags *d)
{
    gen_variant *v = &ru->v[x->index];
    bool earlier_errors = dsf_diags_count(d, DSF_ERROR) > 0;
    dsf_diags_move(d, &x->diags);
    dsf_diags_move(&ru->warnings, &x->warnings);
    memcpy(v->sha256, x->sha256, sizeof v->sha256);
    v->cells = x->cells;
    x->cells = NULL;
    x->ncells = 0;
    if (x->eval_rc) {
        record_unlink(x);
        return x->eval_rc;
    }
    if (!x->out || earlier_errors) {
        /* a serial run would have run no emitter and staged nothing */
        record_unlink(x);
        return 0;
    }
    dsf_diags_move(d, &x->out_diags);
    v->emitted = x->emitted;
    v->nemitted = x->nemitted;
    x->emitted = NULL;
    x->nemitted = 0;
    if (x->nrows == ru->nemit_sel) {
        v->rows = x->rows; /* (the worker's own rows: same selection) */
        x->rows = NULL;
        x->nrows = 0;
    }
    for (size_t i = 0; i < x->nstaged; i++) {
        dsf_gen_out_adopt(ru, x->staged[2 * i], x->staged[2 * i + 1]);
        x->staged[2 * i] = x->staged[2 * i + 1] = NULL;
    }
    int rc = x->entry ? dsf_gen_out_add_entry(ru, x->entry,
                                              strlen(x->entry), d)
                      : 0;
    return rc ? rc : x->rc;
}

/* Waits for worker w and merges its records while rc is 0; unlinks the
** temporary files of those it does not merge. *died is the worker's
** wait status when it ended otherwise than by returning from work. */
static int collect(gen_run *ru, dsf_worker *w, int rc, int *died, dsf_diags *d)
{
    dsf_worker_await_done(w);
    size_t ncol;
    dsf_plugins_columns(ru->plugins, &ncol);
    rewind(w->f);
    record x;
    size_t next = w->from;
    while (dsf_heap_follow(), get_record(w->f, &x, ncol)) {
        if (!rc && x.index == next) {
            dsf_worker_show_stderr(w, x.err_end);
            rc = merge(ru, &x, d);
            next++;
        } else {
            record_unlink(&x);
        }
        record_free(&x);
    }
    record_unlink(&x); /* a partial record's files */
    record_free(&x);
    fclose(w->f);
    w->f = NULL;
    /* Its files are this process's now, unless the run failed: then the
    ** worker removes them (and this process those it knows of). */
    if (!rc)
        dsf_worker_adopt(w);
    else
        dsf_workers_stop(w, 0, 1);
    int status = dsf_worker_wait(w);
    bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    /* The worker stopped before its range's end without an error of its
    ** own: it died (a limit's backstop, or it could not write). */
    if (!rc && next < w->to) {
        if (clean)
            rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                "a worker process stopped after variant "
                                "%zu of %zu", next, w->to);
        else if (WIFSIGNALED(status)) {
            /* not a limit's backstop (that exits): killed from outside,
            ** in the middle of variant next; its files go with the run's
            ** (dsf_gen_out_finish) */
            dsf_worker_show_stderr(w, UINT64_MAX);
            rc = dsf_worker_killed(d, status, "evaluating variant",
                                   ru->v[next].name);
        } else {
            *died = status;
            dsf_worker_show_stderr(w, UINT64_MAX); /* its last words */
        }
    }
    fclose(w->errf);
    w->errf = NULL;
    return rc;
}

/* While workers run: a limit's backstop ending this process first waits
** for them to stop and remove their staged files, then removes this
** process's own (core/workers.h). */
static dsf_worker *volatile live_workers;
static volatile size_t live_jobs;
static volatile dsf_cleanup_fn out_cleanup;

static void abandon_workers(void)
{
    if (live_workers)
        dsf_workers_abandon(live_workers, live_jobs);
    if (out_cleanup)
        out_cleanup();
}

int dsf_gen_run_parallel(gen_run *ru, dsf_diags *d)
{
    int erc;
    size_t from;
    /* The control first: every worker compares its variants with it. */
    int rc = dsf_gen_eval_variant(ru, 0, d, &erc, &from);
    if (rc || ru->nv < 2)
        return rc;
    size_t jobs = dsf_gen_parallel_jobs(ru);
    dsf_worker *ws = dsf_xcalloc(jobs, sizeof *ws);
    rc = dsf_workers_start(ws, jobs, 1, ru->nv, work, ru, d);
    dsf_heap_after_fork(); /* the pages the workers share, this side's */
    /* (after the forks: a worker keeps the plain clean-up) */
    live_jobs = jobs;
    live_workers = ws;
    out_cleanup = dsf_limits_backstop_cleanup(abandon_workers);
    for (size_t i = ws[0].from; i < ws[0].to && !rc; i++) {
        dsf_heap_follow();
        rc = dsf_gen_eval_variant(ru, i, d, &erc, &from);
    }
    dsf_limits_backstop_cleanup(out_cleanup);
    live_workers = NULL;
    int died = 0; /* the wait status of a worker that died */
    for (size_t j = 1; j < jobs; j++) {
        if (rc || died) /* the others stop at their next variant */
            dsf_workers_stop(ws, j, jobs);
        if (ws[j].pid > 0)
            rc = collect(ru, &ws[j], rc ? rc : died ? DSF_ESCRIPT : 0, &died,
                         d);
    }
    dsf_workers_free(ws, jobs);
    if (died) {
        /* A serial run would have ended at that variant: no file of this
        ** run stays, and no message but the worker's. */
        dsf_gen_out_finish(ru, DSF_ESCRIPT, d);
        dsf_die_like(died);
    }
    return rc;
}
