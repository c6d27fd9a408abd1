/* fsutil.c -- see fsutil.h. */
#define _GNU_SOURCE /* S_ISVTX, statx */
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "xalloc.h"

long dsf_open_wait_ms(void)
{
    const char *env = getenv("DSFORGE_OPEN_WAIT");
    if (env && *env) {
        char *end;
        double s = strtod(env, &end);
        if (!*end && s >= 0 && s <= 3600)
            return (long)(s * 1000 + 0.5);
    }
    return DSF_OPEN_WAIT_MS;
}

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000 +
           (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* fd: a FIFO or pipe opened with O_NONBLOCK. Waits until a writer has
** opened it (or one came, wrote and left: then what it wrote is there to
** read), at most wait_ms: 0, or -1 when no writer came. A read byte is
** returned in *first (*nfirst = 1): reading is how a writer that holds
** the FIFO open without writing yet is told from no writer at all (no
** data: EAGAIN with a writer, end of file without). */
static int await_writer(int fd, long wait_ms, char *first, size_t *nfirst)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *nfirst = 0;
    for (;;) {
        /* POLLIN: data; POLLHUP: a writer came and closed (Linux sets
        ** it only once a writer was seen since this open) */
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 0) > 0)
            return 0;
        ssize_t r = read(fd, first, 1);
        if (r == 1) {
            *nfirst = 1;
            return 0;
        }
        if (r < 0 && errno == EAGAIN)
            return 0; /* a writer, nothing written yet */
        if (r < 0 && errno != EINTR)
            return 0; /* the read loop reports it */
        long left = wait_ms - elapsed_ms(&t0);
        if (left <= 0)
            return -1;
        /* a writer that opens and writes wakes the poll; one that opens
        ** and waits is seen by the next read */
        p.revents = 0;
        poll(&p, 1, left < 50 ? (int)left : 50);
    }
}

int dsf_read_file(char **out, size_t *len, const char *path, size_t max,
                  dsf_diags *d)
{
    *out = NULL;
    *len = 0;
    /* Non-blocking: opening a FIFO for reading otherwise waits for a
    ** writer forever. Cleared once the file is known (below). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot open: %s",
                              strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(fd);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot read: %s",
                              strerror(e));
    }
    char first;
    size_t n = 0;
    if (S_ISFIFO(st.st_mode)) {
        long wait_ms = dsf_open_wait_ms();
        if (await_writer(fd, wait_ms, &first, &n) != 0) {
            close(fd);
            return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                  "cannot read: a FIFO with no writer "
                                  "(waited %ld.%01ld s; "
                                  "DSFORGE_OPEN_WAIT sets the wait)",
                                  wait_ms / 1000, wait_ms % 1000 / 100);
        }
    }
    /* A writer is there, or it is not a FIFO: reads wait for data. */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0
                     ? (size_t)st.st_size + 1
                     : 4096;
    if (cap > max + 1)
        cap = max + 1;
    char *buf = dsf_xmalloc(cap + 1);
    if (n)
        buf[0] = first;
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                      "file is larger than the limit of "
                                      "%zu bytes", max);
            }
            cap *= 2;
            buf = dsf_xrealloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                  "cannot read: %s", strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max) {
        free(buf);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "file is larger than the limit of %zu bytes",
                              max);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

int dsf_write_new(const char *path, const char *data, size_t len,
                  bool *existed, dsf_diags *d)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    *existed = fd < 0 && errno == EEXIST;
    if (*existed)
        return 0;
    if (fd < 0)
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "cannot create: %s", strerror(errno));
    int bad = write_all(fd, data, len) != 0 ? errno : 0;
    if (close(fd) != 0 && !bad)
        bad = errno;
    if (bad) {
        unlink(path);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot write: %s",
                              strerror(bad));
    }
    return 0;
}

long dsf_temp_pid(void)
{
    /* Asked once: a gen -o writes thousands of files. A forked child that
    ** writes reuses it, and O_EXCL then moves on to the next counter
    ** value; the files of a run's workers carry its own id. */
    static long pid;
    if (!pid)
        pid = (long)getpid();
    return pid;
}

bool dsf_temp_name_pid(const char *name, long *pid)
{
    /* from the end: digits, '-', digits, ".tmp-" */
    size_t n = strlen(name), i = n;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (i == n || i == 0 || name[i - 1] != '-')
        return false;
    size_t end = --i;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (i == end || end - i > 18 || i < 6 ||
        strncmp(name + i - 5, ".tmp-", 5) != 0)
        return false;
    long v = 0;
    for (size_t k = i; k < end; k++)
        v = v * 10 + (name[k] - '0');
    *pid = v;
    return v > 0;
}

/* What a rename onto path needs to know of it, from one call: its type
** and owner (*st), and whether it has the immutable or append-only
** attribute (chattr +i, +a; *locked), which make a rename onto it (or in
** it) fail however its permissions read. -1 with errno when it cannot be
** known (ENOENT: missing). */
static int dest_stat(const char *path, struct stat *st, bool *locked)
{
    *locked = false;
#if defined(__linux__) && defined(STATX_ATTR_IMMUTABLE)
    struct statx x;
    if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_UID,
              &x) == 0) {
        memset(st, 0, sizeof *st);
        st->st_mode = x.stx_mode;
        st->st_uid = x.stx_uid;
        uint64_t bits = STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND;
        *locked = (x.stx_attributes & x.stx_attributes_mask & bits) != 0;
        return 0;
    }
    if (errno != ENOSYS)
        return -1;
#endif
    return lstat(path, st);
}

int dsf_check_dest_dir(const char *dir, struct stat *st, dsf_diags *d)
{
    struct stat lst;
    bool locked;
    if (stat(dir, st) != 0)
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0, "cannot write: %s",
                              strerror(errno));
    if (!S_ISDIR(st->st_mode))
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                              "cannot write in it: %s", strerror(ENOTDIR));
    if (access(dir, W_OK | X_OK) != 0)
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                              "cannot write in it: %s", strerror(errno));
    if (dest_stat(dir, &lst, &locked) == 0 && locked)
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                              "cannot write in it: it is immutable or "
                              "append-only (chattr)");
    return 0;
}

int dsf_check_dest_file(const char *path, const struct stat *dir_st,
                        dsf_diags *d)
{
    struct stat st;
    bool locked;
    if (dest_stat(path, &st, &locked) != 0)
        return errno == ENOENT
                   ? 0
                   : dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                    "cannot write: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "cannot write: it is a directory, where a "
                              "file goes");
    static uid_t me = (uid_t)-1;
    if (me == (uid_t)-1)
        me = geteuid();
    if (dir_st && (dir_st->st_mode & S_ISVTX) && me != 0 &&
        st.st_uid != me && dir_st->st_uid != me)
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "cannot replace it: another user's file in a "
                              "sticky directory");
    if (locked)
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "cannot replace it: it is immutable or "
                              "append-only (chattr)");
    return 0;
}

bool dsf_free_space(const char *path, unsigned long long *bytes,
                    unsigned long *bsize)
{
    struct statvfs v;
    if (statvfs(path, &v) != 0 || !v.f_frsize)
        return false;
    *bytes = (unsigned long long)v.f_bavail * v.f_frsize;
    *bsize = v.f_bsize ? v.f_bsize : v.f_frsize;
    return true;
}

/* The N of the temporary names (F.tmp-PID-N) this process makes. */
static unsigned long temp_counter;

char *dsf_link_temp(const char *path)
{
    long pid = dsf_temp_pid();
    for (int attempt = 0; attempt < 100; attempt++) {
        char *name = dsf_xasprintf("%s.tmp-%ld-%lu", path, pid,
                                   ++temp_counter);
        if (link(path, name) == 0)
            return name;
        int e = errno;
        free(name);
        errno = e;
        if (e != EEXIST)
            break;
    }
    return NULL;
}

int dsf_write_temp(char **tmp_out, const char *final_path, const char *data,
                   size_t len, bool durable, dsf_diags *d)
{
    *tmp_out = NULL;
    /* mkstemp makes 0600 files; outputs are ordinary 0644 files (less the
    ** umask), so open with a unique name and the right mode at once. */
    unsigned long *counter = &temp_counter;
    long pid = dsf_temp_pid();
    char *tmp = NULL;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        free(tmp);
        tmp = dsf_xasprintf("%s.tmp-%ld-%lu", final_path, pid, ++*counter);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return dsf_diag_error(d, DSF_EINPUT, final_path, 0, 0,
                              "cannot create a temporary file: %s",
                              strerror(e));
    }
    if (write_all(fd, data, len) != 0 ||
        (durable && fsync(fd) != 0)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return dsf_diag_error(d, DSF_EINPUT, final_path, 0, 0,
                              "cannot write: %s", strerror(e));
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return dsf_diag_error(d, DSF_EINPUT, final_path, 0, 0,
                              "cannot write: %s", strerror(e));
    }
    *tmp_out = tmp;
    return 0;
}

int dsf_write_atomic(const char *path, const char *data, size_t len,
                     dsf_diags *d)
{
    char *tmp;
    int rc = dsf_write_temp(&tmp, path, data, len, true, d);
    if (rc)
        return rc;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot write: %s",
                              strerror(e));
    }
    free(tmp);
    return 0;
}

bool dsf_file_equals(const char *path, const char *data, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        (size_t)st.st_size != len)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[8192];
    size_t off = 0;
    bool same = true;
    while (same && off < len) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || (size_t)r > len - off ||
            memcmp(buf, data + off, (size_t)r) != 0)
            same = false;
        else
            off += (size_t)r;
    }
    close(fd);
    return same && off == len;
}

/* The parent of dir (trailing slashes ignored), or NULL at the top. */
static char *parent_of(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    while (n > 0 && dir[n - 1] != '/')
        n--;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return n ? dsf_xstrndup(dir, n) : NULL;
}

/* From the deepest directory that exists down: a directory that exists is
** never passed to mkdir (a cold fetch made hundreds of mkdir calls that
** failed with EEXIST walking down from the root every time). */
int dsf_mkdir_p(const char *dir, bool *created, dsf_diags *d)
{
    if (created)
        *created = false;
    if (dsf_is_dir(dir))
        return 0;
    int err = mkdir(dir, 0755) == 0 ? 0 : errno;
    if (err == ENOENT) { /* a parent is missing: make it, then dir */
        char *parent = parent_of(dir);
        int rc = 0;
        if (parent && strcmp(parent, dir) != 0)
            rc = dsf_mkdir_p(parent, NULL, d);
        free(parent);
        if (rc)
            return rc;
        err = mkdir(dir, 0755) == 0 ? 0 : errno;
    }
    if (err == EEXIST && dsf_is_dir(dir))
        return 0; /* made meanwhile by someone else */
    if (err)
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                              "cannot create directory: %s", strerror(err));
    if (created)
        *created = true;
    return 0;
}

bool dsf_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool dsf_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *dsf_path_join(const char *a, const char *b)
{
    if (b[0] == '/' || !a[0])
        return dsf_xstrdup(b);
    size_t la = strlen(a);
    bool slash = a[la - 1] == '/';
    return dsf_xconcat(a, slash ? "" : "/", b, NULL);
}

char *dsf_path_dirname(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s)
        return dsf_xstrdup(".");
    if (s == path)
        return dsf_xstrdup("/");
    return dsf_xstrndup(path, (size_t)(s - path));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int dsf_list_dir(char ***names, size_t *n, const char *dir)
{
    *names = NULL;
    *n = 0;
    DIR *dh = opendir(dir);
    if (!dh)
        return 0;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        dsf_xgrow((void **)names, &cap, *n + 1, sizeof **names);
        (*names)[(*n)++] = dsf_xstrdup(e->d_name);
    }
    closedir(dh);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
    return 0;
}

void dsf_free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}
