/*
** identity.h -- what identity.c defines: a byte string that identifies a
** JSON value as a Lua script receives it from dsf_json_push.
**
** Two values have the same identity exactly when they are the same to a
** script: the same kinds (object, array, string, integer, float, boolean,
** null, the delete marker), the same keys and strings, the same integers,
** and floats with the same bits (so 0.0 and -0.0 differ, and 1 and 1.0).
** Object members are taken in their order, so the same object built in
** another order has another identity: a cache keyed by it then misses,
** and never serves another value's entry. It is the value's encoding (no
** hash, so no collision), a few bytes per scalar.
*/
#ifndef DSF_IDENTITY_H
#define DSF_IDENTITY_H

#include <cjson/cJSON.h>

#include "core/buf.h"

/* Appends the identity of item (borrowed) to b. */
void dsf_json_identity(dsf_buf *b, const cJSON *item);

#endif
