/*
** sandbox.h -- what sandbox.c defines: the environment every script runs
** in. One table, dsf_sandbox_globals, is the allow-list: it drives the
** set-up, contrib/docs/lua-environment.md lists exactly its names (a test
** checks), and the tests walk it.
*/
#ifndef DSF_SANDBOX_H
#define DSF_SANDBOX_H

#include <stddef.h>

#include <lua.h>

#include "core/diag.h"
#include "lua/srccache.h"
#include "lua/values.h" /* DSF_LJMP */

/* How one allow-listed global is made. */
enum dsf_global_from {
    DSF_FROM_BASE,     /* the base library's own value */
    DSF_FROM_LIBRARY,  /* a standard library table, less some fields */
    DSF_FROM_SANDBOX,  /* dsforge's own C function (wraps or replaces) */
    DSF_FROM_DSFORGE   /* the dsforge module */
};

typedef struct dsf_sandbox_global {
    const char *name;
    enum dsf_global_from from;
    lua_CFunction fn;               /* library opener or C function */
    const char *const *removed;     /* library fields left out */
} dsf_sandbox_global;

/* The allow-list, ended by an entry whose name is NULL. */
extern const dsf_sandbox_global dsf_sandbox_globals[];

/* What the sandbox of one state needs from its host; borrowed for the
** state's lifetime. */
typedef struct dsf_sandbox_config {
    const char *const *module_dirs;  /* where require() looks */
    size_t n_module_dirs;
    dsf_srccache *sources;
    dsf_diags *warnings;             /* dsforge.warn target (NULL: stderr) */
} dsf_sandbox_config;

/* Builds the sandbox in a new state: a lua_CFunction to run protected,
** with the dsf_sandbox_config as a light userdata at index 1. */
int dsf_sandbox_setup(lua_State *L) DSF_LJMP;

/* Gives the state a base environment as if it had just been set up: a
** fresh copy of each allow-listed library table that differs in any way
** (keys, values, metatable) from the pristine one kept in the registry
** (the string metatable's __index included), a fresh dsforge table
** (warn's count at 0) and an empty module cache, so nothing a script
** stored or changed in them is seen by the chunks loaded after this.
** Chunk environments made earlier read through to the renewed base too.
** A lua_CFunction to run protected (no arguments, no results);
** dsf_sandbox_setup ends with it. */
int dsf_sandbox_renew(lua_State *L) DSF_LJMP;

/* Gives the function on top of the stack its own chunk environment. */
void dsf_sandbox_set_env(lua_State *L) DSF_LJMP;

/* The sandbox's require(name) as a lua_CFunction, for the host to require
** a module without compiling a chunk of its own. DSF_LJMP */
int dsf_sandbox_require(lua_State *L) DSF_LJMP;

/* Pops the value on top of the stack into the base environment as global
** name (until the next dsf_sandbox_renew). DSF_LJMP */
void dsf_sandbox_set_global(lua_State *L, const char *name) DSF_LJMP;

#endif
