/* out_debris.c -- see out_debris.h. */
#define _DEFAULT_SOURCE
#include "profile/out_debris.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/fsutil.h"
#include "core/stale.h"
#include "core/xalloc.h"

#define SHOWN_PIDS 3

/* The processes whose debris was removed from one place, for the note. */
typedef struct removed {
    size_t files;
    long pids[SHOWN_PIDS];
    size_t npids;
    bool more;
} removed;

static void note_pid(removed *r, long pid)
{
    for (size_t i = 0; i < r->npids; i++)
        if (r->pids[i] == pid)
            return;
    if (r->npids < SHOWN_PIDS)
        r->pids[r->npids++] = pid;
    else
        r->more = true;
}

static void put_pids(dsf_buf *b, const removed *r)
{
    dsf_buf_printf(b, "process%s ", r->npids > 1 || r->more ? "es" : "");
    for (size_t i = 0; i < r->npids; i++)
        dsf_buf_printf(b, "%s%ld", i ? ", " : "", r->pids[i]);
    if (r->more)
        dsf_buf_puts(b, " and others");
}

/* Whether the entry name of dir is a temporary file of a process that is
** gone (own: of this process, whenever made); its pid in *pid. */
static bool stale_temp(int dfd, const char *name, const char *prefix,
                       bool own, long *pid)
{
    if (prefix && (strncmp(name, prefix, strlen(prefix)) != 0 ||
                   strncmp(name + strlen(prefix), ".tmp-", 5) != 0))
        return false;
    if (!dsf_temp_name_pid(name, pid))
        return false;
    if (own)
        return *pid == dsf_temp_pid();
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
        return false;
    return dsf_pid_stale(*pid, &st.st_mtim);
}

/* Removes the stale (own: this process's) temporary files of dir (only
** prefix's, when not NULL). */
static void sweep_files(const char *dir, const char *prefix, bool own,
                        removed *r)
{
    DIR *dh = opendir(dir);
    if (!dh)
        return;
    int dfd = dirfd(dh);
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        long pid;
        if (stale_temp(dfd, e->d_name, prefix, own, &pid) &&
            unlinkat(dfd, e->d_name, 0) == 0) {
            r->files++;
            note_pid(r, pid);
        }
    }
    closedir(dh);
}

bool dsf_out_remove_stage(const char *stage, size_t *nfiles)
{
    *nfiles = 0;
    DIR *dh = opendir(stage);
    if (dh) {
        int dfd = dirfd(dh);
        struct dirent *e;
        while ((e = readdir(dh)) != NULL) {
            struct stat st;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
                fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                S_ISDIR(st.st_mode)) /* no run makes one: left alone */
                continue;
            if (unlinkat(dfd, e->d_name, 0) == 0)
                ++*nfiles;
        }
        closedir(dh);
    }
    return rmdir(stage) == 0 || errno == ENOENT;
}

/* The process id in a staging directory's name ".base.tmp-PID". */
static bool stage_name_pid(const char *name, const char *base, long *pid)
{
    size_t nb = strlen(base);
    if (name[0] != '.' || strncmp(name + 1, base, nb) != 0 ||
        strncmp(name + 1 + nb, ".tmp-", 5) != 0)
        return false;
    const char *p = name + 1 + nb + 5;
    if (!*p || strlen(p) > 18)
        return false;
    long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
    }
    *pid = v;
    return v > 0;
}

static void sweep_stages(const char *parent, const char *base, dsf_diags *d)
{
    DIR *dh = opendir(parent);
    if (!dh)
        return;
    int dfd = dirfd(dh);
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        long pid;
        struct stat st;
        if (!stage_name_pid(e->d_name, base, &pid) ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode) || !dsf_pid_stale(pid, &st.st_mtim))
            continue;
        char *path = strcmp(parent, ".") ? dsf_path_join(parent, e->d_name)
                                         : dsf_xstrdup(e->d_name);
        size_t n;
        if (dsf_out_remove_stage(path, &n))
            dsf_diag_add(d, DSF_NOTE, path, 0, 0,
                         "removed the staging directory (and its %zu "
                         "file%s) of an interrupted gen -o (process %ld)",
                         n, n == 1 ? "" : "s", pid);
        else
            dsf_diag_add(d, DSF_NOTE, path, 0, 0,
                         "the staging directory of an interrupted gen -o "
                         "(process %ld) holds what no gen writes: left "
                         "as it is (%zu files removed)", pid, n);
        free(path);
    }
    closedir(dh);
}

/* The note for what was removed from dir. */
static void note_removed(const char *dir, const removed *r, dsf_diags *d)
{
    if (r->files) {
        dsf_buf b = DSF_BUF_INIT;
        dsf_buf_printf(&b, "removed %zu temporary file%s of an interrupted "
                       "gen -o (", r->files, r->files == 1 ? "" : "s");
        put_pids(&b, r);
        dsf_buf_puts(&b, ")");
        dsf_diag_add(d, DSF_NOTE, dir, 0, 0, "%s", b.data);
        dsf_buf_free(&b);
    }
}

void dsf_out_sweep_debris(const char *dir, const char *parent,
                          const char *base, dsf_diags *d)
{
    removed r = {0};
    sweep_files(dir, NULL, false, &r);
    note_removed(dir, &r, d);
    if (base && parent)
        sweep_stages(parent, base, d);
}

void dsf_out_sweep_file_debris(const char *path, dsf_diags *d)
{
    char *dir = dsf_path_dirname(path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    removed r = {0};
    if (*base)
        sweep_files(dir, base, false, &r);
    note_removed(dir, &r, d);
    free(dir);
}

void dsf_out_sweep_own(const char *dir)
{
    removed r = {0};
    sweep_files(dir, NULL, true, &r);
}
