/*
** doc.h -- the document model: cJSON trees plus a tombstone ("delete this
** key") that layers can carry and that never reaches the output.
*/
#ifndef DSF_DOC_H
#define DSF_DOC_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* A new tombstone node; caller owns it (cJSON_Delete). */
cJSON *dsf_doc_tombstone(void);

/* True when item is a tombstone. */
bool dsf_doc_is_tombstone(const cJSON *item);

/* True when item is the JSON-file spelling of a tombstone: an object whose
** only member is "$delete": true. */
bool dsf_doc_is_delete_directive(const cJSON *item);

/* Replaces every delete directive in doc (recursively) by a tombstone. */
void dsf_doc_mark_tombstones(cJSON *doc);

/* A number node holding the integer v, typed as an integer literal. */
cJSON *dsf_doc_int(long long v);

#endif
