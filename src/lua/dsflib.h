/*
** dsflib.h -- the `dsforge` module that scripts get instead of io/os.
*/
#ifndef DSF_DSFLIB_H
#define DSF_DSFLIB_H

#include <lua.h>

#include "core/diag.h"
#include "lua/values.h" /* DSF_LJMP */

/* Pushes a new `dsforge` module table; dsforge.warn adds its warnings to
** warnings (borrowed for the state's lifetime; NULL: stderr). DSF_LJMP */
int dsf_open_dsforge(lua_State *L, dsf_diags *warnings) DSF_LJMP;

/* The sandbox's pairs: like Lua's (a __pairs metamethod is honoured),
** but it visits numbers, then strings, in sorted order, so a script's
** output never depends on the per-state hash seed. Keys of other types
** come last, in unspecified order. DSF_LJMP */
int dsf_lua_pairs(lua_State *L) DSF_LJMP;

/* The dsforge version string. */
extern const char dsf_version[];

#endif
