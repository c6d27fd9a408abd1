/*
** out_dir.h -- the output directory as `gen -o` finds it, for output.c:
** its lock, the manifest already there, the names in its path, and
** whether a file there already holds what would be written.
*/
#ifndef DSF_OUT_DIR_H
#define DSF_OUT_DIR_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "core/diag.h"

/* Takes an exclusive lock on the directory itself (no lock file to leave
** behind): concurrent gen runs into one directory write one after the
** other, each seeing the manifest the previous one left. Released when
** *fd is closed. DSF_EINPUT naming dir when it cannot be opened or
** locked. */
int dsf_out_lock_dir(const char *dir, int *fd, dsf_diags *d);

/* The manifest already at path: *old (caller deletes) is NULL when there
** is none; DSF_EINPUT for one that cannot be read or is not a manifest. */
int dsf_out_read_manifest(const char *path, cJSON **old, dsf_diags *d);

/* The last name of path (trailing slashes aside), or NULL when it is
** empty, "." or "..". Caller frees. */
char *dsf_out_last_name(const char *path);

/* The directory of path, trailing slashes aside. Caller frees. */
char *dsf_out_parent(const char *path);

/* True when the files at a and b hold the same bytes. */
bool dsf_out_same_files(const char *a, const char *b);

#endif
