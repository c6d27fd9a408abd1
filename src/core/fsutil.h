/*
** fsutil.h -- files and directories: bounded reads, atomic writes, listing.
*/
#ifndef DSF_FSUTIL_H
#define DSF_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "diag.h"

/* Reads all of path (at most max bytes) into *out (NUL-terminated; caller
** frees) and its length into *len. DSF_EINPUT with a diagnostic when the
** file is missing, unreadable, a directory or larger than max. Every
** input file of dsforge is opened here, and opening never blocks: a FIFO
** is read once a writer has opened it, and is an error when none has
** after dsf_open_wait_ms (a pipe from a shell's process substitution,
** /dev/fd/N, has its writer already, or has its data and end). */
int dsf_read_file(char **out, size_t *len, const char *path, size_t max,
                  dsf_diags *d);

/* How long dsf_read_file waits for a FIFO's writer: DSF_OPEN_WAIT_MS, or
** the environment's DSFORGE_OPEN_WAIT in seconds (0 to 3600, decimals
** allowed; the tests set a short one). */
#define DSF_OPEN_WAIT_MS 5000
long dsf_open_wait_ms(void);

/* Writes data to a new temporary file in the directory of final_path
** (same file system, so a rename is atomic) and returns its name in
** *tmp_out (caller frees; caller renames or unlinks it). durable: fsync
** the data first (the cache and lock files, which other processes trust);
** generated outputs skip it, as compilers do: a rename still never shows
** a half-written file to another process. */
int dsf_write_temp(char **tmp_out, const char *final_path, const char *data,
                   size_t len, bool durable, dsf_diags *d);

/* Writes data to path atomically: temporary file, fsync, rename. Readers
** see the old content or the new, never a mix. */
int dsf_write_atomic(const char *path, const char *data, size_t len,
                     dsf_diags *d);

/* Before a file is renamed onto path (dsf_write_temp's): DSF_EINPUT
** naming path when the rename cannot work, checked without changing
** anything. dsf_check_dest_dir: dir is a directory this process can
** create files in and rename them (write and search permission); *st
** receives its stat for dsf_check_dest_file. dsf_check_dest_file: path is
** not a directory, not another user's file in a sticky directory
** (dir_st: its directory's stat), not immutable or append-only (Linux's
** chattr +i, +a; the directory neither); a missing path is fine. */
int dsf_check_dest_dir(const char *dir, struct stat *st, dsf_diags *d);
int dsf_check_dest_file(const char *path, const struct stat *dir_st,
                        dsf_diags *d);

/* The free space of the file system holding path, in bytes as an
** unprivileged file's blocks count it (*bsize: its block size); false
** when it cannot be known. */
bool dsf_free_space(const char *path, unsigned long long *bytes,
                    unsigned long *bsize);

/* The process id in the names of dsf_write_temp's files: this process's,
** asked once (a forked child that writes keeps its parent's). */
long dsf_temp_pid(void);

/* A second name for the file at path (a hard link, named as
** dsf_write_temp's files are), or NULL when it cannot be made (a file
** system without hard links; errno says why, ENOENT: no file at path):
** what a rename replacing path can be undone with. Caller frees (and
** unlinks). */
char *dsf_link_temp(const char *path);

/* When name is one of dsf_write_temp's temporary names ("F.tmp-PID-N"),
** its PID. */
bool dsf_temp_name_pid(const char *name, long *pid);

/* True when path is a regular file holding exactly data[0..len). */
bool dsf_file_equals(const char *path, const char *data, size_t len);

/* Creates the file path with data (mode 0644 less the umask). When path
** exists already, writes nothing and sets *existed (no error); otherwise
** *existed is false. On a failure nothing is left at path. */
int dsf_write_new(const char *path, const char *data, size_t len,
                  bool *existed, dsf_diags *d);

/* Creates dir and its missing parents (mode 0755). *created (may be NULL)
** is set to true when dir itself did not exist before. */
int dsf_mkdir_p(const char *dir, bool *created, dsf_diags *d);

bool dsf_is_dir(const char *path);
bool dsf_is_file(const char *path);

/* a + "/" + b (b absolute: a copy of b). Caller frees. */
char *dsf_path_join(const char *a, const char *b);

/* The directory part of path ("." when none). Caller frees. */
char *dsf_path_dirname(const char *path);

/* Sorted names of the entries of dir (no "." or ".."); *names is an array
** of *n strings, freed with dsf_free_strv. A missing dir gives 0 names and
** returns 0. */
int dsf_list_dir(char ***names, size_t *n, const char *dir);
void dsf_free_strv(char **v, size_t n);

#endif
