/*
** scriptfs.h -- where profile and plugin files are read from: the disk,
** or, for paths under DSF_BUILTIN_ROOT ("<built-in>/profiles/8xa100.lua"),
** the copies compiled into the executable (builtin.h).
**
** The built-ins are always there: a binary copied alone, an installed one
** and one run from its build tree see the same profiles and plugins, and
** none of them reads a built-in file from disk. Only the loaders of
** profiles and plugins use these functions; user files (configs, override
** files) are plain files and go through core/fsutil.h.
*/
#ifndef DSF_SCRIPTFS_H
#define DSF_SCRIPTFS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/paths.h"
#include "lua/builtin.h"

/* True when path names a file: an embedded one under DSF_BUILTIN_ROOT, or
** a regular file on disk. */
bool dsf_scriptfs_is_file(const char *path);

/* True when path names a directory: a directory of embedded files, or one
** on disk. */
bool dsf_scriptfs_is_dir(const char *path);

/* Sorted names of the entries of dir, as dsf_list_dir (core/fsutil.h):
** for an embedded directory, the files and subdirectories directly in it.
** *names is freed with dsf_free_strv. */
void dsf_scriptfs_list_dir(char ***names, size_t *n, const char *dir);

/* True when the files at a and b (on disk or embedded) both exist and
** hold the same bytes. */
bool dsf_scriptfs_same(const char *a, const char *b);

/* True when path is under DSF_BUILTIN_ROOT (whether or not such an
** embedded file exists). */
bool dsf_scriptfs_is_builtin_path(const char *path);

/* The embedded file at path (under DSF_BUILTIN_ROOT), or NULL. Borrowed
** (static). */
const dsf_builtin_chunk *dsf_scriptfs_embedded(const char *path);

#endif
