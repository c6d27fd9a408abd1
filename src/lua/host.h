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
#include "lua/limits.h"
#include "lua/srccache.h"
#include "lua/values.h" /* DSF_LJMP */

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

/* Makes the state as good as a new one for the next scripts (see
** dsf_sandbox_renew: a fresh base environment, library copies and module
** cache; nothing charged). The last scripts' garbage is left to the
** collector: it never counts against the memory limit, since an
** allocation the limit refuses is retried after a full collection. Only
** what the caller keeps itself (registry references, e.g. compiled chunks
** whose environment it replaces before calling them) survives. Empties
** the stack. */
int dsf_host_renew(dsf_host *h, dsf_diags *d);

/* The collector's floor: a new state runs no collection until DSF_GC_FLOOR
** bytes (a quarter of the memory limit when that is less) have been
** allocated in it, as Go's collector does nothing below its 4 MB minimum
** heap. Lua's own pace starts a cycle each time the heap has doubled from
** a few kilobytes, so a short run (check of one file, gen of three tiers,
** whose states allocate less than 4 MiB) marked the plugins' tables again
** and again to free little; with the floor it marks nothing. The state is
** created with the collector's debt that many bytes below zero (where Lua
** takes no step; dsf_host_new); past the floor Lua's pace applies (below).
** Nothing is stopped: memory limits are unchanged (an allocation past the
** budget is retried after a full collection). Measured
** (contrib/bench/README.md): check of a real config -7 % instructions,
** explain -5 %, gen of three tiers -5 %; a 2,000-variant sweep's peak RSS
** from 9.7 to 15.2 MB (the floor, once per state; at 8 MiB it was 22 MB
** for nothing more saved).
**
** The collector's pause while the host loads what lives as long as it
** does (plugin modules, rule lists) and after. Loading allocates mostly
** objects that stay alive; with Lua's default pause (a cycle each time
** the heap doubles) they are marked again at every doubling. While
** loading, a cycle starts when the heap has grown by DSF_GC_LOAD_PAUSE
** percent; after it, Lua's default applies again, so per-variant garbage
** is collected as before. At 600 check and explain of one file ran 5%
** fewer instructions than at 400, and a sweep's peak RSS grew by 0.2 MiB;
** 1000 saved nothing more and added 2.5 MiB to a 2,000-variant sweep
** (garbage of loading kept until the next cycle). */
#define DSF_GC_FLOOR (4u << 20)
#define DSF_GC_LOAD_PAUSE 600
#define DSF_GC_PAUSE 200 /* Lua 5.4's LUAI_GCPAUSE */
void dsf_host_gc_loading(dsf_host *h, bool loading);

/* Loads the script at path (through the source cache) as a text chunk
** named "@path", with its own sandbox environment, and pushes the
** function. DSF_EINPUT if unreadable, DSF_ESCRIPT on a syntax error. */
int dsf_host_load_file(dsf_host *h, const char *path, dsf_diags *d);

/* Like dsf_host_load_file, but the compiled function is kept in the state
** and pushed again by later calls for the same path, each time with a
** new environment (top-level locals are made anew by each call). For a
** state renewed (dsf_host_renew) between runs of the same file: a run
** that reached nothing shared cannot leave anything for the next. name:
** what messages call the file (the chunk is named "@name"; a file in a
** repository's cache is named by its repository, not its cache path);
** NULL: path. Borrowed. */
int dsf_host_load_kept(dsf_host *h, const char *path, const char *name,
                       dsf_diags *d);

/* Loads text as a chunk named name ("@file" or "=label") and pushes it.
** The state counts instructions from then on (limits.h). */
int dsf_host_load(dsf_host *h, const char *name, const char *text,
                  size_t len, dsf_diags *d);

/* The one protected entry into Lua: calls the function below the nargs
** arguments on top of the stack, leaving nres results (LUA_MULTRET not
** allowed). what names the work for messages ("profile 8xa100"). On error
** nothing is left on the stack and a diagnostic with file, line and a
** short traceback is added; returns DSF_EINPUT for an input error
** (dsforge.fail: no traceback), else DSF_ESCRIPT. The location comes from
** the error object's fields (errobj.h); only a plain error string is
** parsed. Calls may nest (a C function called from Lua may call back in):
** the outer call's limits hold again when the inner one returns. */
int dsf_host_call(dsf_host *h, int nargs, int nres, const char *what,
                  dsf_diags *d);

/* require(name) through the sandbox's module loader, as a protected call
** named what; leaves the module's value on the stack. Errors as for
** dsf_host_call. */
int dsf_host_require(dsf_host *h, const char *name, const char *what,
                     dsf_diags *d);

/* Calls fn under protection with the limits armed, with ud as a light
** userdata at stack index 1, keeping nres results (for C code that pushes
** or converts values and may raise). */
int dsf_host_cpcall(dsf_host *h, lua_CFunction fn, void *ud, int nres,
                    const char *what, dsf_diags *d);

/* Pops the value on top of the stack and adds it to the sandbox's base
** environment as global name (for embedders and test harnesses; scripts
** see it like any allow-listed global). DSF_LJMP */
void dsf_host_set_global(dsf_host *h, const char *name) DSF_LJMP;

#endif
