/*
** compare.h -- what differs between two variants, why, and what follows
** from it: the semantic diff of their configs (doc/jsondiff), the layer
** that set each differing value on each side (provenance), and the
** consequences, read from the plugins' summary and findings (no config key
** is named here).
*/
#ifndef DSF_DIFF_COMPARE_H
#define DSF_DIFF_COMPARE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "diff/side.h"

/* Compares a and b (documents loaded). Returns a new object the caller
** owns:
**   {"a": NAME, "b": NAME, "equal": bool,
**    "differences": [{"path", "change": "changed"|"added"|"removed",
**                     "a", "b", "a_origin", "b_origin"}],
**    "params": [{"path", "change", "a", "b"}]   (the inputs that differ),
**    "consequences": {"summary": [{"path", "change", "a", "b"}],
**                     "findings_added": [...], "findings_removed": [...]}}
** Values absent on a side are left out; an origin is {"kind", "action",
** "layer", "where", "path"} or null when that side has no provenance.
** Differences at or below the nignore canonical paths in ignore are left
** out. */
cJSON *dsf_compare(const dsf_side_variant *a, const char *alabel,
                   const dsf_side_variant *b, const char *blabel,
                   const char *const *ignore, size_t nignore);

/* Prints a comparison made by dsf_compare as text. */
void dsf_compare_print(FILE *out, const cJSON *cmp);

#endif
