/*
** guard.h -- what guard.c defines: C memory a Lua state frees when a
** raising call unwinds past the C function that holds it.
**
** A C function called from Lua that holds malloc'd memory (a file's text,
** a parsed document, a buffer) while it calls something that may raise
** (lua_pushlstring or dsf_json_push at the memory limit) would leak it:
** the error unwinds with longjmp and its free is never reached. A guard
** is a full userdata on that function's stack, pushed before the memory
** is made, that owns it: on the normal path the function frees the memory
** through the guard; after an error the guard is garbage, and the
** collector's finalizer (or lua_close's) frees what it still holds. A
** script never sees a guard (it is never returned or stored).
*/
#ifndef DSF_GUARD_H
#define DSF_GUARD_H

#include <lua.h>

#include "lua/values.h" /* DSF_LJMP */

typedef struct dsf_guard {
    void *p;                /* what the guard owns, or NULL */
    void (*release)(void *); /* frees p */
} dsf_guard;

/* Pushes an empty guard (owned by L) and returns it; the caller then sets
** g->p and g->release. Raises (at the memory limit) before anything is
** owned, so nothing leaks. DSF_LJMP */
dsf_guard *dsf_guard_push(lua_State *L) DSF_LJMP;

/* Frees what g owns now (when it owns anything) and empties it. Never
** raises. */
void dsf_guard_release(dsf_guard *g);

#endif
