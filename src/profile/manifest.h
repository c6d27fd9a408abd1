/*
** manifest.h -- manifest.json of a `gen -o DIR` output directory: reading
** one that is already there and merging this run's into it, so several
** profiles can share a directory (README "Output").
*/
#ifndef DSF_MANIFEST_H
#define DSF_MANIFEST_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"

/* Parses text (from path, named in messages) as a dsforge manifest into
** *out (caller deletes). Anything that is not one (not JSON, or without
** "dsforge_version" and a "variants" array) is DSF_EINPUT: gen never
** overwrites a file it did not write. */
int dsf_manifest_parse(cJSON **out, const char *path, const char *text,
                       size_t len, dsf_diags *d);

/* Merges the manifest already in the directory (old, may be NULL) into m,
** this run's manifest for profile pname: the other profiles' variants and
** "profiles" entries stay, pname's are replaced by this run's. Variants
** are ordered by profile name, then as each run gave them. Merging the
** same run twice gives the same manifest. */
void dsf_manifest_merge(cJSON *m, const cJSON *old, const char *pname);

#endif
