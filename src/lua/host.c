/*
** host.c -- the sandboxed Lua host: creating and closing states, loading
** chunks, and the one protected entry into Lua with its error reports.
** The limits are in limits.c, the sandbox in sandbox.c, error objects in
** errobj.c, loading a cached source in chunk.c.
*/
#include "lua/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "lua/chunk.h"
#include "lua/errobj.h"
#include "core/heap.h"
#include "lua/sandbox.h"

struct dsf_host {
    lua_State *L;
    dsf_limiter *limiter;
    dsf_srccache *sources;
    dsf_sandbox_config sandbox; /* the state keeps a pointer to it */
};

#define MAX_MESSAGE 2000
#define MAX_TRACE_LINES 6

/* ------------------------------------------------------------------ */
/* Errors: the message handler and the mapping to diagnostics. */

/* Adds the traceback to an error object (as its traceback field), or
** appends it to any other error value turned into a string. */
static int message_handler(lua_State *L)
{
    dsf_errinfo e;
    if (dsf_errobj_read(L, 1, &e)) {
        luaL_traceback(L, L, NULL, 1);
        lua_setfield(L, 1, "traceback");
        lua_settop(L, 1);
        return 1;
    }
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)",
                                  luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Keeps the useful part of a traceback: script frames, at most a few. */
static char *short_trace(const char *tb)
{
    dsf_buf out = DSF_BUF_INIT;
    int kept = 0;
    for (const char *line = tb; *line && kept < MAX_TRACE_LINES;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *s = line;
        while (s < line + len && (*s == '\t' || *s == ' '))
            s++;
        size_t sl = len - (size_t)(s - line);
        if (sl && strncmp(s, "[C]", 3) != 0 &&
            strncmp(s, "(...tail calls...)", 18) != 0) {
            dsf_buf_puts(&out, "    at ");
            dsf_buf_add(&out, s, sl);
            dsf_buf_putc(&out, '\n');
            kept++;
        }
        if (!end)
            break;
        line = end + 1;
    }
    if (!out.len)
        return NULL;
    out.data[--out.len] = '\0'; /* drop the last newline */
    return dsf_buf_take(&out);
}

/* The hint of an error raised by a limit: which option raises it. */
static void limit_hint(dsf_diag *g, lua_State *L, const char *what)
{
    enum dsf_limit_hit hit = dsf_limits_hit(L);
    dsf_diag_set_hint(g, "the script ran past a sandbox limit while running "
                         "%s; raise it with --max-%s if the work is "
                         "legitimate", what,
                      hit == DSF_HIT_TIME           ? "seconds"
                      : hit == DSF_HIT_INSTRUCTIONS ? "instructions"
                                                    : "memory");
}

/* Splits a traceback off text (after "stack traceback:\n") and keeps the
** script frames. */
static char *trace_of(const char *text)
{
    const char *tb = text ? strstr(text, "stack traceback:\n") : NULL;
    return tb ? short_trace(tb + strlen("stack traceback:\n")) : NULL;
}

/* An error object: its fields say everything. */
static int report_object(lua_State *L, const dsf_errinfo *e,
                         const char *what, dsf_diags *d)
{
    /* dsforge.fail: the script judged its input, it did not break; unless
    ** a limit was hit on the way. Without a line (dsforge.fail(msg, 0)),
    ** the hint names who reported it: the message needs no prefix. */
    bool input = e->kind == DSF_ERR_INPUT &&
                 dsf_limits_hit(L) == DSF_HIT_NONE;
    char *msg = dsf_xstrndup(e->message, strnlen(e->message, MAX_MESSAGE));
    dsf_diag *g = e->source
                      ? dsf_diag_add(d, DSF_ERROR, e->source, e->line, 0, "%s",
                                     msg)
                  : input ? dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s", msg)
                          : dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s: %s",
                                         what, msg);
    free(msg);
    if (e->kind == DSF_ERR_LIMIT || dsf_limits_hit(L) != DSF_HIT_NONE)
        limit_hint(g, L, what);
    if (input) {
        dsf_diag_set_hint(g, "reported by %s", what);
        return DSF_EINPUT;
    }
    char *trace = trace_of(e->trace);
    if (trace)
        dsf_diag_set_trace(g, trace);
    free(trace);
    return DSF_ESCRIPT;
}

/* Any other error value: the message handler made it a string with a
** traceback; its location is parsed (the one place that does). */
static int report_string(lua_State *L, const char *full, const char *what,
                         dsf_diags *d)
{
    char *msg = dsf_xstrndup(full, strnlen(full, MAX_MESSAGE));
    char *tb = strstr(msg, "\nstack traceback:\n");
    char *trace = NULL;
    if (tb) {
        trace = trace_of(tb + 1);
        *tb = '\0';
    }
    char *file = NULL;
    int line = 0;
    const char *rest = msg;
    dsf_diag *g;
    if (dsf_errobj_parse_string(msg, &file, &line, &rest))
        g = dsf_diag_add(d, DSF_ERROR, file, line, 0, "%s", rest);
    else
        g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s: %s", what, rest);
    if (dsf_limits_hit(L) != DSF_HIT_NONE)
        limit_hint(g, L, what);
    if (trace)
        dsf_diag_set_trace(g, trace);
    free(trace);
    free(file);
    free(msg);
    return DSF_ESCRIPT;
}

static int report(dsf_host *h, int status, const char *what, dsf_diags *d)
{
    lua_State *L = h->L;
    int rc;
    if (status == LUA_ERRMEM) {
        if (dsf_limits_memory_hit(L))
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s: memory limit of %zu MiB exceeded", what,
                                dsf_limits_of(L)->memory >> 20);
        else
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s: out of memory", what);
    } else {
        dsf_errinfo e;
        if (dsf_errobj_read(L, -1, &e)) {
            rc = report_object(L, &e, what, d);
        } else {
            const char *full = lua_tostring(L, -1);
            rc = report_string(L, full ? full : "(error object is not a "
                                                "string)", what, d);
        }
    }
    lua_pop(L, 1);
    return rc;
}

int dsf_host_call(dsf_host *h, int nargs, int nres, const char *what,
                  dsf_diags *d)
{
    lua_State *L = h->L;
    int base = lua_gettop(L) - nargs; /* index of the function */
    if (!lua_checkstack(L, nres + 8))
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "%s: Lua stack overflow", what);
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    dsf_limits_saved saved;
    dsf_limits_arm(L, what, &saved);
    int status = lua_pcall(L, nargs, nres, base);
    dsf_limits_disarm(L, &saved);
    lua_remove(L, base);
    if (status != LUA_OK)
        return report(h, status, what, d);
    return 0;
}

int dsf_host_cpcall(dsf_host *h, lua_CFunction fn, void *ud, int nres,
                    const char *what, dsf_diags *d)
{
    lua_pushcfunction(h->L, fn);
    lua_pushlightuserdata(h->L, ud);
    return dsf_host_call(h, 1, nres, what, d);
}

int dsf_host_require(dsf_host *h, const char *name, const char *what,
                     dsf_diags *d)
{
    lua_pushcfunction(h->L, dsf_sandbox_require);
    lua_pushstring(h->L, name);
    return dsf_host_call(h, 1, 1, what, d);
}

/* ------------------------------------------------------------------ */
/* Loading. */


/* Turns a failed load (message on the stack) into a diagnostic. */
static int load_error(dsf_host *h, int status, const char *name,
                      dsf_diags *d)
{
    lua_State *L = h->L;
    if (status == LUA_ERRMEM) {
        lua_pop(L, 1);
        return dsf_diag_error(d, DSF_ESCRIPT, name + (*name == '@'), 0, 0,
                              "memory limit exceeded while compiling");
    }
    const char *full = lua_tostring(L, -1);
    char *file = NULL;
    int line = 0;
    const char *rest = full;
    if (full && dsf_errobj_parse_string(full, &file, &line, &rest))
        dsf_diag_add(d, DSF_ERROR, file, line, 0, "syntax error: %s", rest);
    else
        dsf_diag_add(d, DSF_ERROR, name + (*name == '@'), 0, 0,
                     "syntax error: %s", full ? full : "?");
    free(file);
    lua_pop(L, 1);
    return DSF_ESCRIPT;
}

int dsf_host_load(dsf_host *h, const char *name, const char *text,
                  size_t len, dsf_diags *d)
{
    dsf_limits_clear_memory_hit(h->L);
    dsf_limits_untrusted(h->L);
    int status = luaL_loadbufferx(h->L, text, len, name, "t");
    if (status != LUA_OK)
        return load_error(h, status, name, d);
    dsf_sandbox_set_env(h->L);
    return 0;
}

/* dsf_host_load_file, the chunk named "@shown". */
static int load_file_as(dsf_host *h, const char *path, const char *shown,
                        dsf_diags *d)
{
    const dsf_source *src;
    int rc = dsf_srccache_get(h->sources, path, &src, d);
    if (rc)
        return rc;
    char *name = dsf_xasprintf("@%s", shown);
    dsf_limits_clear_memory_hit(h->L);
    int status = dsf_chunk_load(h->L, src, name);
    rc = status == LUA_OK ? 0 : load_error(h, status, name, d);
    if (!rc)
        dsf_sandbox_set_env(h->L);
    free(name);
    return rc;
}

int dsf_host_load_file(dsf_host *h, const char *path, dsf_diags *d)
{
    return load_file_as(h, path, path, d);
}

#define KEPT_KEY "dsforge.kept" /* path -> compiled chunk (load_kept) */

/* (path) -> the kept function or nil. Run by lua_pcall: interning the
** path allocates. */
static int find_kept(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    if (lua_getfield(L, LUA_REGISTRYINDEX, KEPT_KEY) != LUA_TTABLE)
        return 1; /* nil */
    lua_getfield(L, -1, path);
    return 1;
}

/* (path, function): keeps it. Run by lua_pcall. */
static int keep(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    if (lua_getfield(L, LUA_REGISTRYINDEX, KEPT_KEY) != LUA_TTABLE) {
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, KEPT_KEY);
    }
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, path);
    return 0;
}

int dsf_host_load_kept(dsf_host *h, const char *path, const char *name,
                       dsf_diags *d)
{
    lua_State *L = h->L;
    if (!lua_checkstack(L, 4))
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "%s: Lua stack overflow", path);
    lua_pushcfunction(L, find_kept);
    lua_pushlightuserdata(L, (void *)path);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isfunction(L, -1)) {
        dsf_sandbox_set_env(L);
        return 0;
    }
    lua_pop(L, 1); /* nil or the error: load it */
    int rc = load_file_as(h, path, name ? name : path, d);
    if (rc)
        return rc;
    lua_pushcfunction(L, keep);
    lua_pushlightuserdata(L, (void *)path);
    lua_pushvalue(L, -3);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK)
        lua_pop(L, 1); /* out of memory: loaded, just not kept */
    return 0;
}

static int panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "dsforge: fatal: unprotected Lua error: %s\n",
            msg ? msg : "?");
    _exit(5);
}

void dsf_host_gc_loading(dsf_host *h, bool loading)
{
    /* Incremental mode, the pause set, step multiplier and size kept. */
    lua_gc(h->L, LUA_GCINC, loading ? DSF_GC_LOAD_PAUSE : DSF_GC_PAUSE, 0,
           0);
}

int dsf_host_new(dsf_host **out, const dsf_host_config *cfg, dsf_diags *d)
{
    *out = NULL;
    dsf_heap_prefault(); /* once: the states' memory, faulted in */
    dsf_host *h = dsf_xcalloc(1, sizeof *h);
    h->sources = cfg->sources;
    h->sandbox.module_dirs = cfg->module_dirs;
    h->sandbox.n_module_dirs = cfg->n_module_dirs;
    h->sandbox.sources = cfg->sources;
    h->sandbox.warnings = cfg->warnings;
    h->limiter = dsf_limiter_new(&cfg->limits);
    h->L = lua_newstate(dsf_limiter_alloc, h->limiter);
    if (!h->L) {
        dsf_limiter_free(h->limiter);
        free(h);
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "cannot create a Lua state (memory limit too "
                              "low?)");
    }
    lua_atpanic(h->L, panic);
    /* The floor (host.h): LUA_GCSTEP adds its argument, in KiB, to the
    ** collector's debt (lapi.c, every 5.4 release); a negative one leaves
    ** it that far below zero, where no step runs. */
    size_t floor = DSF_GC_FLOOR < cfg->limits.memory / 4
                       ? DSF_GC_FLOOR
                       : cfg->limits.memory / 4;
    lua_gc(h->L, LUA_GCSTEP, -(int)(floor >> 10));
    dsf_limits_start_backstop();
    int rc = dsf_host_cpcall(h, dsf_sandbox_setup, &h->sandbox, 0,
                             "sandbox set-up", d);
    if (rc) {
        dsf_host_free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void dsf_host_free(dsf_host *h)
{
    if (!h)
        return;
    /* Finalizers may run in lua_close: keep the limits armed. */
    if (h->L) {
        dsf_limits_saved saved;
        dsf_limits_arm(h->L, "closing a Lua state", &saved);
        lua_close(h->L);
        dsf_limits_closed(&saved);
        dsf_limits_stop_backstop();
    }
    dsf_limiter_free(h->limiter);
    free(h);
}

lua_State *dsf_host_state(dsf_host *h) { return h->L; }

int dsf_host_renew(dsf_host *h, dsf_diags *d)
{
    lua_settop(h->L, 0);
    /* What the last scripts left is garbage now (nothing reachable holds
    ** it). It is not collected here: a full collection per variant cost
    ** 2.5% of a sweep variant's instructions (issue 15), and the budget
    ** does not need it.
    ** When an allocation would pass the memory limit the limiter refuses
    ** it, Lua collects everything unreachable (its emergency collection)
    ** and asks again, so only what is live counts, as in a new state
    ** (tests/cli/test_sandbox.py, GarbageAcrossVariantsTest). */
    dsf_limits_uncharge(h->L);
    dsf_limits_clear_memory_hit(h->L);
    return dsf_host_cpcall(h, dsf_sandbox_renew, NULL, 0, "sandbox renewal",
                           d);
}

void dsf_host_set_global(dsf_host *h, const char *name)
{
    dsf_sandbox_set_global(h->L, name);
}
