/*
** out_debris.h -- what interrupted `gen -o` runs leave, and its removal.
**
** A run writes its files as temporary ones ("F.tmp-PID-N", fsutil.h)
** beside their final names in an existing directory, or a new directory
** as a staging directory ".NAME.tmp-PID" beside it, and renames them at
** the end. A run killed before that (kill -9, a crash, a power cut)
** leaves them. The next run into the directory removes those whose
** process is gone (core/stale.h), with a note saying what it removed; a
** run that fails removes its own (a worker killed while writing a file
** leaves one nobody recorded).
*/
#ifndef DSF_OUT_DEBRIS_H
#define DSF_OUT_DEBRIS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"

/* Removes the stale temporary files in dir (under its lock) and, when
** base is not NULL, the stale staging directories parent/.base.tmp-PID
** and what they hold; a note in d for each place something was removed
** (or could not be). */
void dsf_out_sweep_debris(const char *dir, const char *parent,
                          const char *base, dsf_diags *d);

/* Removes the stale temporary files of path alone (path.tmp-PID-N beside
** it: --report's page, outside the directory), with a note. */
void dsf_out_sweep_file_debris(const char *path, dsf_diags *d);

/* After a failed run: removes the temporary files in dir that carry this
** process's id (dsf_temp_pid), whoever wrote them. */
void dsf_out_sweep_own(const char *dir);

/* Removes the files in the staging directory stage (this run's: a failed
** run's), then the directory; true when it is gone. */
bool dsf_out_remove_stage(const char *stage, size_t *nfiles);

#endif
