/*
** values.h -- what values.c defines: the JSON values Lua has no type for
** (the dsforge.null / dsforge.delete sentinels) and the array/object
** markers of tables. The lowest layer of src/lua/: it knows only Lua.
*/
#ifndef DSF_VALUES_H
#define DSF_VALUES_H

#include <stdbool.h>

#include <lua.h>

#define DSF_LJMP /* may longjmp: call only under dsf_host_call */

/* The dsforge.null / dsforge.delete sentinels (light userdata). */
extern const char dsf_null_sentinel;
extern const char dsf_delete_sentinel;

/* Registry keys of the array and object marker metatables. */
#define DSF_ARRAY_MT "dsforge.array"
#define DSF_OBJECT_MT "dsforge.object"

/* True when the value at idx is the null / delete sentinel. */
bool dsf_lua_is_null(lua_State *L, int idx);
bool dsf_lua_is_delete(lua_State *L, int idx);

/* Marks the table at idx as array (or object). DSF_LJMP */
void dsf_lua_mark(lua_State *L, int idx, bool array) DSF_LJMP;

/* 1 = marked array, 2 = marked object, 0 = unmarked. */
int dsf_lua_marker(lua_State *L, int idx);

/* Creates the two marker metatables in a new state (protected: scripts
** can neither read nor swap them). DSF_LJMP */
void dsf_values_setup(lua_State *L) DSF_LJMP;

#endif
