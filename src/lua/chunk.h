/*
** chunk.h -- what chunk.c defines: turning a cached source into a Lua
** function (text the first time, then this process's own bytecode, or the
** bytecode embedded for a built-in file).
*/
#ifndef DSF_CHUNK_H
#define DSF_CHUNK_H

#include <lua.h>

#include "lua/srccache.h"

/* Loads src as a chunk named chunkname and leaves the function (or the
** error message) on the stack; returns Lua's status. Text is always
** loaded in text mode: sources come from disk or the network and are
** untrusted, and loading one marks the state untrusted (limits.h: its
** calls count instructions); only the embedded built-in bytecode does
** not. */
/* A built-in data module with parts (builtin.h) is a C function whose
** first upvalue is its environment, as a Lua chunk's is (so
** dsf_sandbox_set_env applies to it alike). May raise a memory error
** only for such a module, which is loaded by require. */
int dsf_chunk_load(lua_State *L, const dsf_source *src,
                   const char *chunkname);

#endif
