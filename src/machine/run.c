/* run.c -- see run.h. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/error.h"

extern char **environ;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Kills the program's process group and reaps the program. */
static void kill_and_reap(pid_t pid)
{
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

static int spawn(pid_t *pid, int out_fd, const char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
                                     O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null",
                                     O_WRONLY, 0);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    /* posix_spawnp's argv is not const for historical reasons only: it
    ** does not modify the strings. */
    union { const char *const *c; char *const *m; } args = {argv};
    int err = posix_spawnp(pid, argv[0], &fa, &attr, args.m, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return err;
}

int dsf_run_capture(dsf_run_result *r, const char *const argv[],
                    int timeout_ms,
                    size_t max_out, dsf_diags *d)
{
    memset(r, 0, sizeof *r);
    int fds[2];
    if (pipe(fds) != 0)
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "cannot run %s: %s", argv[0], strerror(errno));
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    pid_t pid;
    int err = spawn(&pid, fds[1], argv);
    close(fds[1]);
    if (err == ENOENT) {
        close(fds[0]);
        return 0; /* not installed: found stays false */
    }
    if (err) {
        close(fds[0]);
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "cannot run %s: %s", argv[0], strerror(err));
    }
    dsf_buf out = DSF_BUF_INIT;
    long long deadline = now_ms() + timeout_ms;
    int rc = 0;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                "%s did not finish within %d ms", argv[0],
                                timeout_ms);
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int n = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        char chunk[4096];
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break; /* end of output */
        if (out.len + (size_t)got > max_out) {
            rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                "%s wrote more than %zu bytes", argv[0],
                                max_out);
            break;
        }
        dsf_buf_add(&out, chunk, (size_t)got);
    }
    close(fds[0]);
    if (rc) {
        kill_and_reap(pid);
        dsf_buf_free(&out);
        return rc;
    }
    /* Output closed: the program is ending; wait for it within the limit. */
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            status = 0;
            break;
        }
        if (now_ms() >= deadline) {
            kill_and_reap(pid);
            dsf_buf_free(&out);
            return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                  "%s did not finish within %d ms", argv[0],
                                  timeout_ms);
        }
        struct timespec nap = {0, 2 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    r->found = true;
    r->exit_status = WIFEXITED(status)     ? WEXITSTATUS(status)
                     : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                           : 0;
    r->out_len = out.len;
    r->out = dsf_buf_take(&out);
    return 0;
}

void dsf_run_result_free(dsf_run_result *r)
{
    free(r->out);
    r->out = NULL;
}
