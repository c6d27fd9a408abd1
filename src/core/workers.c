/* workers.c -- see workers.h. */
#define _DEFAULT_SOURCE
#include "core/workers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "core/xalloc.h"

#define MAX_JOBS 64

size_t dsf_workers_count(size_t jobs, size_t n, size_t min_per_job)
{
    if (!jobs) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (size_t)cpus : 1;
    }
    if (jobs > MAX_JOBS)
        jobs = MAX_JOBS;
    if (min_per_job && jobs > n / min_per_job)
        jobs = n / min_per_job;
    return jobs ? jobs : 1;
}

int dsf_workers_start(dsf_worker *ws, size_t jobs, size_t first, size_t n,
                      dsf_worker_body body, void *ctx, dsf_diags *d)
{
    size_t rest = n - first;
    for (size_t j = 0; j < jobs; j++) {
        memset(&ws[j], 0, sizeof ws[j]);
        ws[j].from = first + rest * j / jobs;
        ws[j].to = first + rest * (j + 1) / jobs;
        ws[j].pid = -1;
        ws[j].stop_fd = -1;
        ws[j].done_fd = -1;
    }
    fflush(NULL); /* no buffered output is written twice */
    for (size_t j = 1; j < jobs; j++) {
        int fds[2], done[2] = {-1, -1};
        ws[j].f = tmpfile();
        ws[j].errf = tmpfile();
        if (!ws[j].f || !ws[j].errf || pipe(done) != 0 || pipe(fds) != 0) {
            int e = errno;
            if (done[0] >= 0) {
                close(done[0]);
                close(done[1]);
            }
            return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                  "cannot start a worker process: %s",
                                  strerror(e));
        }
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        fcntl(fds[1], F_SETFD, FD_CLOEXEC);
        fcntl(done[0], F_SETFD, FD_CLOEXEC);
        fcntl(done[1], F_SETFD, FD_CLOEXEC);
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[1]);
            close(done[0]);
            ws[j].done_fd = done[1];
            for (size_t k = 1; k < j; k++) {
                close(ws[k].stop_fd); /* only the parent stops a worker */
                close(ws[k].done_fd);
            }
            /* What scripts print goes to the parent in item order. */
            fflush(stderr);
            if (dup2(fileno(ws[j].errf), STDERR_FILENO) < 0)
                _exit(-DSF_EINPUT);
            body(ctx, &ws[j], fds[0]);
            _exit(0);
        }
        close(fds[0]);
        close(done[1]);
        ws[j].done_fd = done[0];
        if (pid < 0) {
            close(fds[1]);
            return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                  "cannot start a worker process: %s",
                                  strerror(errno));
        }
        ws[j].stop_fd = fds[1];
        ws[j].pid = pid;
    }
    return 0;
}

bool dsf_worker_stopped(int stop_fd)
{
    char c;
    ssize_t got = read(stop_fd, &c, 1);
    return got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR);
}

uint64_t dsf_worker_stderr_mark(void)
{
    fflush(stderr);
    off_t end = lseek(STDERR_FILENO, 0, SEEK_CUR);
    return end > 0 ? (uint64_t)end : 0;
}

void dsf_worker_flush(FILE *f)
{
    /* on disk before the next item: a limit's backstop may end this
    ** process during it */
    if (fflush(f) != 0) {
        static const char msg[] = "dsforge: error: a worker process "
                                  "cannot record its results\n";
        ssize_t wr = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)wr;
        _exit(-DSF_EINPUT);
    }
}

bool dsf_worker_await_verdict(dsf_worker *w, int stop_fd)
{
    close(w->done_fd);
    w->done_fd = -1;
    struct pollfd p = {stop_fd, POLLIN, 0};
    for (;;) {
        char c;
        ssize_t got = read(stop_fd, &c, 1);
        if (got == 1)
            return c == 'A';
        if (got == 0 || (errno != EAGAIN && errno != EINTR))
            return false;
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
    }
}

void dsf_worker_await_done(dsf_worker *w)
{
    char c;
    while (w->done_fd >= 0) {
        ssize_t got = read(w->done_fd, &c, 1);
        if (got < 0 && errno == EINTR)
            continue;
        close(w->done_fd);
        w->done_fd = -1;
    }
}

void dsf_worker_adopt(dsf_worker *w)
{
    if (w->stop_fd < 0)
        return;
    /* A worker that died has closed its end: no SIGPIPE for that. */
    struct sigaction ign, was;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &was);
    ssize_t wr = write(w->stop_fd, "A", 1);
    (void)wr;
    sigaction(SIGPIPE, &was, NULL);
    close(w->stop_fd);
    w->stop_fd = -1;
}

void dsf_workers_abandon(dsf_worker *ws, size_t jobs)
{
    for (size_t j = 0; j < jobs; j++)
        if (ws[j].pid > 0 && ws[j].stop_fd >= 0) {
            close(ws[j].stop_fd);
            ws[j].stop_fd = -1;
        }
    for (size_t j = 0; j < jobs; j++)
        if (ws[j].pid > 0)
            while (waitpid(ws[j].pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

void dsf_workers_stop(dsf_worker *ws, size_t from, size_t jobs)
{
    for (size_t k = from; k < jobs; k++)
        if (ws[k].stop_fd >= 0) {
            close(ws[k].stop_fd);
            ws[k].stop_fd = -1;
        }
}

int dsf_worker_wait(dsf_worker *w)
{
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    w->pid = -1;
    return status;
}

void dsf_worker_show_stderr(dsf_worker *w, uint64_t end)
{
    char buf[8192];
    if (!w->errf || fseeko(w->errf, (off_t)w->err_done, SEEK_SET) != 0)
        return;
    while (w->err_done < end) {
        size_t want = end - w->err_done < sizeof buf
                          ? (size_t)(end - w->err_done) : sizeof buf;
        size_t got = fread(buf, 1, want, w->errf);
        if (!got)
            break;
        fwrite(buf, 1, got, stderr);
        w->err_done += got;
    }
    fflush(stderr);
}

void dsf_workers_free(dsf_worker *ws, size_t jobs)
{
    for (size_t j = 0; ws && j < jobs; j++) {
        if (ws[j].f)
            fclose(ws[j].f);
        if (ws[j].errf)
            fclose(ws[j].errf);
        if (ws[j].stop_fd >= 0)
            close(ws[j].stop_fd);
        if (ws[j].done_fd >= 0)
            close(ws[j].done_fd);
    }
    free(ws);
}

int dsf_worker_killed(dsf_diags *d, int status, const char *what,
                      const char *item)
{
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    const char *name = sig ? strsignal(sig) : NULL;
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "a worker process was killed by signal %d "
                               "(%s) while %s %s; the run stopped there "
                               "and wrote nothing",
                               sig, name ? name : "unknown", what, item);
    dsf_diag_set_hint(g, "the system kills a process when memory runs out "
                         "(try fewer --jobs), or another process sent the "
                         "signal");
    return DSF_EWORKER;
}

void dsf_worker_test_kill(const char *item)
{
    const char *at = getenv("DSFORGE_TEST_KILL_WORKER_AT");
    if (at && item && !strcmp(at, item)) {
        fflush(NULL);
        raise(SIGKILL);
    }
}

_Noreturn void dsf_die_like(int status)
{
    fflush(NULL);
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status));
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 5);
}
