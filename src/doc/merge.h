/*
** merge.h -- layering: deep-merge a layer onto the document.
**
** Object members merge recursively; every other value (arrays included)
** replaces; a tombstone deletes the key (a no-op when it is absent). Each
** change is recorded in the provenance, with the value's own position when
** the layer came from a parsed file.
*/
#ifndef DSF_MERGE_H
#define DSF_MERGE_H

#include <cjson/cJSON.h>

#include "doc/prov.h"
#include "json/jsonc.h"

/* Merges (copies of) layer_doc's members into doc (both objects). src,
** when not NULL, gives positions of layer_doc's nodes. prov may be
** NULL. */
void dsf_merge(cJSON *doc, const cJSON *layer_doc, const dsf_layer *layer,
               const dsf_jsrc *src, dsf_prov *prov);

/* dsf_merge, with layer_doc's members moved into doc rather than copied
** (the same document, the same events): takes layer_doc (deleted; a
** result the caller made only to merge it). */
void dsf_merge_take(cJSON *doc, cJSON *layer_doc, const dsf_layer *layer,
                    const dsf_jsrc *src, dsf_prov *prov);

/* Records a SET/OVERRIDE event for value at path and for every leaf below
** it (used by merge and by command-line edits). */
void dsf_prov_record_tree(dsf_prov *prov, const char *path,
                          const cJSON *value, dsf_prov_action action,
                          const dsf_layer *layer, const dsf_jsrc *src);

#endif
