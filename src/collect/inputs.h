/*
** inputs.h -- one variant's results directory through the readers: its
** files listed (one level of subdirectories), each file read once
** (scanned for every lines reader's substrings at once, or read whole and
** parsed once for the text and json readers), then each reader called on
** each file it names, in reader order and then file order.
*/
#ifndef DSF_COLLECT_INPUTS_H
#define DSF_COLLECT_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/diag.h"
#include "plugin/readers.h"

#define DSF_COLLECT_MAX_FILES 1024          /* per variant */
#define DSF_COLLECT_MAX_TEXT (16u << 20)     /* text and json inputs */

/* The substrings of all readers, each once, and per reader its bits. */
typedef struct dsf_needles {
    const char *v[64];       /* borrowed from the readers */
    size_t n;
    uint64_t *mask;          /* per reader (owned) */
} dsf_needles;

/* Builds nd from rs's readers; DSF_EINPUT when they hold more than 64
** distinct substrings. Free with dsf_needles_free. */
int dsf_needles_build(dsf_needles *nd, const dsf_results_decl *rs,
                      dsf_diags *d);
void dsf_needles_free(dsf_needles *nd);

/* Runs the readers on the files under dir: with run false, the variant
** readers on a variant's directory (begun with dsf_results_begin), its
** subdirectories too; with run true, the run readers on the files of the
** results root itself. label names dir in problems ("results/V"). A file
** that cannot be read, is too large or is not JSON for a json reader is
** a problem of the variant (dsf_results_problem; of a run file, a
** warning in d), not an error; errors are the readers' script errors. A
** missing dir has no files. */
int dsf_collect_inputs(dsf_plugins *p, const dsf_results_decl *rs,
                       const dsf_needles *nd, const char *dir,
                       const char *label, bool run, dsf_diags *d);

#endif
