/*
** jobjidx.h -- the members of one cJSON object by key, in constant time.
**
** cJSON finds a member by walking the object's list: a loop over the
** members of one object that looks each up in another is quadratic in
** their number (issue 30: merging a -f file of 40,000 keys). An index is
** built once, in one pass; it stays valid while the indexed keys'
** members are not removed (a caller that replaces or deletes the member
** of a key it has looked up, and looks up each key once, may go on using
** it).
*/
#ifndef DSF_JOBJIDX_H
#define DSF_JOBJIDX_H

#include <stdbool.h>

#include <cjson/cJSON.h>

typedef struct dsf_jobjidx dsf_jobjidx;

/* An index of obj's members (the first of a repeated key, as cJSON's
** lookup finds it). NULL for an object of at most 8 members (or not an
** object): dsf_jobjidx_get then walks the list, which is as fast. */
dsf_jobjidx *dsf_jobjidx_new(const cJSON *obj);

/* The member key of obj, as cJSON_GetObjectItemCaseSensitive(obj, key);
** ix is dsf_jobjidx_new(obj) (may be NULL). */
cJSON *dsf_jobjidx_get(const dsf_jobjidx *ix, const cJSON *obj,
                       const char *key);

/* The indexed member was, or is about to be, replaced by now (a member of
** the same key) or, now NULL, removed from the object: the index follows,
** so no lookup ever reads a member that was freed. Nothing for a NULL ix
** or a member the index does not hold. */
void dsf_jobjidx_swap(dsf_jobjidx *ix, const cJSON *was, cJSON *now);

/* Whether a key of the indexed object is repeated (false for NULL). */
bool dsf_jobjidx_repeats(const dsf_jobjidx *ix);

void dsf_jobjidx_free(dsf_jobjidx *ix);

#endif
