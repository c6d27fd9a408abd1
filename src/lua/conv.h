/*
** conv.h -- the Lua <-> JSON bridge.
**
** Lua -> JSON: tables with keys 1..n become arrays, tables with string keys
** objects; an empty table is an object unless marked with dsforge.array.
** Mixed or sparse keys, functions, userdata, threads, cycles, NaN and
** infinities, integers beyond +-2^53 and invalid UTF-8 are errors naming
** the path (`zero_optimization.offload_param.device`). Integral floats
** (Lua's 2e8) become integers. dsforge.null is JSON null; dsforge.delete a
** tombstone (where the caller allows one). Object members are sorted, so
** nothing downstream sees `pairs` order.
**
** JSON -> Lua: objects and arrays become marked tables, null the sentinel,
** integer literals Lua integers, other numbers floats.
*/
#ifndef DSF_CONV_H
#define DSF_CONV_H

#include <stdbool.h>

#include <cjson/cJSON.h>
#include <lua.h>

#include "lua/values.h" /* DSF_LJMP */

#define DSF_CONV_MAX_DEPTH 200

/* The most one converted result may count (cJSON nodes and their text):
** a script's result is bounded by what is left of its state's memory
** budget and by this, whichever is smaller, and converting it runs on the
** time budget of the call that produced it. So a result whose tables are
** shared many times (t = {a = t, b = t}) fails fast instead of copying
** every path. Real configs are a few KiB. */
#define DSF_CONV_MAX_BYTES (16u << 20)

enum dsf_conv_flags {
    DSF_CONV_ALLOW_DELETE = 1 /* dsforge.delete becomes a tombstone */
};

/* Converts the value at idx (L must belong to a dsf_host: the budget is
** its). On success *out is a new tree (caller frees with cJSON_Delete)
** and 0 is returned; on error *out is NULL, *err a message naming the
** path (caller frees) and -1 is returned for a value that is not JSON,
** DSF_ESCRIPT for a result past the memory or time budget (the message
** names the limit). Does not raise: uses raw access only and checks the
** stack. */
int dsf_lua_to_json(cJSON **out, char **err, lua_State *L, int idx,
                    unsigned flags);

/* Pushes item as a Lua value. DSF_LJMP (allocates in Lua). */
void dsf_json_push(lua_State *L, const cJSON *item) DSF_LJMP;

/* Whether dsf_json_push gives the number item to Lua as an integer (its
** literal is one, or it has no literal and an integral value within
** +-2^53), and that integer in *out; false: a float, item->valuedouble. */
bool dsf_json_lua_integer(const cJSON *item, long long *out);

#endif
