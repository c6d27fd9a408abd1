/*
** host.h -- the sandboxed Lua host.
**
** One dsf_host is one Lua state with dsforge's sandbox (the allow-list in
** contrib/docs/lua-environment.md), a memory budget (custom allocator), an
** instruction budget (count hook that a script's own pcall cannot swallow)
** and a wall-clock limit (checked by the hook; a SIGALRM backstop ends the
** process with exit code 5 when a C function such as a pathological
** string.find never returns to the VM).
**
** Every call into Lua goes through dsf_host_call, the one protected entry.
** Functions tagged DSF_LJMP may raise a Lua error (longjmp) and must only
** run inside a protected call.
*/
#ifndef DSF_HOST_H
#define DSF_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "core/diag.h"
#include "lua/srccache.h"

#define DSF_LJMP /* may longjmp: call only under dsf_host_call */

typedef struct dsf_limits {
    size_t memory;          /* bytes a state may allocate */
    uint64_t instructions;  /* VM instructions per call (granularity 1000) */
    double seconds;         /* wall-clock time per call */
} dsf_limits;

#define DSF_LIMITS_DEFAULT {64u << 20, 200000000u, 10.0}

typedef struct dsf_host_config {
    dsf_limits limits;
    const char *const *module_dirs;  /* where require() looks; borrowed */
    size_t n_module_dirs;
    dsf_srccache *sources;           /* borrowed; required */
    dsf_diags *warnings;             /* dsforge.warn target; borrowed */
} dsf_host_config;

typedef struct dsf_host dsf_host;

/* Creates a sandboxed state. *out is freed with dsf_host_free. */
int dsf_host_new(dsf_host **out, const dsf_host_config *cfg, dsf_diags *d);

/* Closes the state (limits stay armed while finalizers run). NULL is a
** no-op. */
void dsf_host_free(dsf_host *h);

/* The state, for pushing arguments and reading results. */
lua_State *dsf_host_state(dsf_host *h);

/* Loads the script at path (through the source cache) as a text chunk
** named "@path", with its own sandbox environment, and pushes the
** function. DSF_EINPUT if unreadable, DSF_ESCRIPT on a syntax error. */
int dsf_host_load_file(dsf_host *h, const char *path, dsf_diags *d);

/* Loads text as a chunk named name ("@file" or "=label") and pushes it. */
int dsf_host_load(dsf_host *h, const char *name, const char *text,
                  size_t len, dsf_diags *d);

/* The one protected entry into Lua: calls the function below the nargs
** arguments on top of the stack, leaving nres results (LUA_MULTRET not
** allowed). what names the work for messages ("profile 8xa100"). On error
** nothing is left on the stack and a diagnostic with file, line and a
** short traceback is added; returns DSF_ESCRIPT. */
int dsf_host_call(dsf_host *h, int nargs, int nres, const char *what,
                  dsf_diags *d);

/* Calls fn under protection with the limits armed, with ud as a light
** userdata at stack index 1, keeping nres results (for C code that pushes
** or converts values and may raise). */
int dsf_host_cpcall(dsf_host *h, lua_CFunction fn, void *ud, int nres,
                    const char *what, dsf_diags *d);

/* Marks the error being raised in L as an input error (dsforge.fail):
** dsf_host_call then returns DSF_EINPUT, without a traceback. */
void dsf_host_mark_input_error(lua_State *L);

/* Where dsforge.warn reports for the state L (may be NULL: stderr). */
dsf_diags *dsf_host_warnings(lua_State *L);

/* Pops the value on top of the stack and adds it to the sandbox's base
** environment as global name (for embedders and test harnesses; scripts
** see it like any allow-listed global). DSF_LJMP */
void dsf_host_set_global(dsf_host *h, const char *name) DSF_LJMP;

/* The dsforge.null / dsforge.delete sentinels (light userdata keys). */
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

/* The names of the sandbox's global allow-list, NULL-terminated (for the
** test that walks _ENV). */
extern const char *const dsf_sandbox_globals[];

#endif
