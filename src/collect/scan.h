/*
** scan.h -- the lines of a log that contain one of a few literal
** substrings, found in C so that a 1 MiB log costs about what grep costs
** and only the lines a reader asked for reach Lua.
**
** The file is read in blocks (memory stays flat whatever its size); each
** needle is searched with memmem over the block; a line that holds
** several needles is kept once, with a bit per needle. A file with more
** matching lines than the caps keeps its first DSF_SCAN_HEAD lines and
** its last DSF_SCAN_TAIL ones, and counts the others in dropped. A last
** line without its newline (a log cut mid-write) is kept too: readers
** parse each line and ignore an incomplete one.
*/
#ifndef DSF_COLLECT_SCAN_H
#define DSF_COLLECT_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"

#define DSF_SCAN_MAX_NEEDLES 64
#define DSF_SCAN_HEAD 2000
#define DSF_SCAN_TAIL 20000
#define DSF_SCAN_MAX_LINE 4096   /* longer lines are cut to this */

typedef struct dsf_scan_line {
    char *text;        /* owned, NUL-terminated, without the newline */
    size_t len;
    uint64_t needles;  /* bit k: needle k occurs in the line */
} dsf_scan_line;

typedef struct dsf_scan {
    dsf_scan_line *lines;  /* in file order */
    size_t n;
    size_t dropped;        /* matching lines left out by the caps */
} dsf_scan;

#define DSF_SCAN_INIT {NULL, 0, 0}

/* Scans the regular file at path for needles[0..n) (n <= 64, each non-
** empty). *out (initialised with DSF_SCAN_INIT) receives the matching
** lines; free with dsf_scan_free. DSF_EINPUT naming path when the file
** cannot be opened or read or is not a regular file (a FIFO never
** blocks the scan). */
int dsf_scan_file(dsf_scan *out, const char *path,
                  const char *const *needles, size_t n, dsf_diags *d);

void dsf_scan_free(dsf_scan *s);

#endif
