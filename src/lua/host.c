/*
** host.c -- the sandboxed Lua host: creating and closing states, loading
** chunks, and the one protected entry into Lua with its error reports.
** The limits are in limits.c, the sandbox in sandbox.c.
*/
#include "lua/host_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "lua/builtin.h"

#define MAX_MESSAGE 2000
#define MAX_TRACE_LINES 6

/* ------------------------------------------------------------------ */
/* Errors: the message handler and the mapping to diagnostics. */

static int message_handler(lua_State *L)
{
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

/* Splits "file:line: message" into its parts when it has that shape. */
static bool split_location(const char *msg, char **file, int *line,
                           const char **rest)
{
    for (const char *p = strchr(msg, ':'); p; p = strchr(p + 1, ':')) {
        const char *q = p + 1;
        if (*q < '0' || *q > '9')
            continue;
        long n = 0;
        while (*q >= '0' && *q <= '9' && n < 100000000)
            n = n * 10 + (*q++ - '0');
        if (*q != ':')
            continue;
        *file = dsf_xstrndup(msg, (size_t)(p - msg));
        *line = (int)n;
        *rest = q + 1 + (q[1] == ' ');
        return true;
    }
    return false;
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

static int report(dsf_host *h, int status, const char *what, dsf_diags *d)
{
    lua_State *L = h->L;
    if (status == LUA_ERRMEM) {
        lua_pop(L, 1);
        if (h->mem_hit)
            return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                  "%s: memory limit of %zu MiB exceeded",
                                  what, h->limits.memory >> 20);
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0, "%s: out of memory",
                              what);
    }
    const char *full = lua_tostring(L, -1);
    if (!full)
        full = "(error object is not a string)";
    char *msg = dsf_xstrndup(full, strnlen(full, MAX_MESSAGE));
    lua_pop(L, 1);
    char *tb = strstr(msg, "\nstack traceback:\n");
    char *trace = NULL;
    if (tb) {
        *tb = '\0';
        trace = short_trace(tb + strlen("\nstack traceback:\n"));
    }
    char *file = NULL;
    int line = 0;
    const char *rest = msg;
    dsf_diag *g;
    if (split_location(msg, &file, &line, &rest))
        g = dsf_diag_add(d, DSF_ERROR, file, line, 0, "%s", rest);
    else
        g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s: %s", what, rest);
    if (h->hit != LIMIT_NONE)
        dsf_diag_set_hint(g, "the script ran past a sandbox limit while "
                             "running %s; raise it with --max-%s if the "
                             "work is legitimate", what,
                          h->hit == LIMIT_TIME ? "seconds" : "instructions");
    /* dsforge.fail: the script judged its input, it did not break. */
    bool input = h->input_error && h->hit == LIMIT_NONE;
    if (input)
        dsf_diag_set_hint(g, "reported by %s", what);
    if (trace && !input)
        dsf_diag_set_trace(g, trace);
    free(trace);
    free(file);
    free(msg);
    return input ? DSF_EINPUT : DSF_ESCRIPT;
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
    dsf_limits_arm(h, what);
    int status = lua_pcall(L, nargs, nres, base);
    dsf_limits_disarm(h);
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

/* ------------------------------------------------------------------ */
/* Loading. */


static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    dsf_buf_add(ud, p, sz);
    return 0;
}

/* Loads a cached source: the first time from its text (always text mode:
** sources come from disk or the network and are untrusted), afterwards
** from the bytecode this process made of that same text. The function is
** left on the stack (or the error message). */
int dsf_host_load_source(lua_State *L, const dsf_source *src,
                         const char *chunkname)
{
    if (!src->builtin_checked) {
        dsf_source *m = (dsf_source *)src; /* a cache entry: filled once */
        m->builtin = dsf_builtin_find(src->path, src->text, src->len);
        m->builtin_checked = 1;
    }
    if (src->builtin) {
        /* Streams the embedded bytecode with the name spliced in (the
        ** chunk name argument is ignored for binary chunks). */
        dsf_builtin_reader r;
        dsf_builtin_reader_init(&r, src->builtin, src->path);
        return lua_load(L, dsf_builtin_read, &r, chunkname, "b");
    }
    if (src->bytecode)
        return luaL_loadbufferx(L, src->bytecode, src->bytecode_len,
                                chunkname, "b");
    int status = luaL_loadbufferx(L, src->text, src->len, chunkname, "t");
    if (status == LUA_OK) {
        dsf_buf bc = DSF_BUF_INIT;
        if (lua_dump(L, dump_writer, &bc, 0) == 0 && bc.len)
            dsf_source_set_bytecode(src, bc.data, bc.len);
        dsf_buf_free(&bc);
    }
    return status;
}

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
    if (full && split_location(full, &file, &line, &rest))
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
    h->mem_hit = false;
    int status = luaL_loadbufferx(h->L, text, len, name, "t");
    if (status != LUA_OK)
        return load_error(h, status, name, d);
    dsf_sandbox_set_env(h->L);
    return 0;
}

int dsf_host_load_file(dsf_host *h, const char *path, dsf_diags *d)
{
    const dsf_source *src;
    int rc = dsf_srccache_get(h->sources, path, &src, d);
    if (rc)
        return rc;
    char *name = dsf_xasprintf("@%s", path);
    h->mem_hit = false;
    int status = dsf_host_load_source(h->L, src, name);
    rc = status == LUA_OK ? 0 : load_error(h, status, name, d);
    if (!rc)
        dsf_sandbox_set_env(h->L);
    free(name);
    return rc;
}

static int panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "dsforge: fatal: unprotected Lua error: %s\n",
            msg ? msg : "?");
    _exit(5);
}

int dsf_host_new(dsf_host **out, const dsf_host_config *cfg, dsf_diags *d)
{
    *out = NULL;
    dsf_host *h = dsf_xcalloc(1, sizeof *h);
    h->limits = cfg->limits;
    h->module_dirs = cfg->module_dirs;
    h->n_module_dirs = cfg->n_module_dirs;
    h->sources = cfg->sources;
    h->warnings = cfg->warnings;
    snprintf(h->limit_text, sizeof h->limit_text,
             ": time limit of %.3g s exceeded inside a C function; "
             "stopped\n", h->limits.seconds);
    h->L = lua_newstate(dsf_host_alloc, h);
    if (!h->L) {
        free(h);
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "cannot create a Lua state (memory limit too "
                              "low?)");
    }
    lua_atpanic(h->L, panic);
    dsf_limits_start_backstop();
    lua_pushcfunction(h->L, dsf_sandbox_setup);
    int rc = dsf_host_call(h, 0, 0, "sandbox set-up", d);
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
        dsf_limits_arm(h, "closing a Lua state");
        lua_close(h->L);
        dsf_limits_stop_backstop();
    }
    free(h);
}

lua_State *dsf_host_state(dsf_host *h) { return h->L; }

void dsf_host_set_global(dsf_host *h, const char *name)
{
    lua_State *L = h->L;
    lua_getfield(L, LUA_REGISTRYINDEX, DSF_BASE_KEY);
    lua_insert(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

void dsf_host_mark_input_error(lua_State *L)
{
    dsf_host_of(L)->input_error = true;
}

dsf_diags *dsf_host_warnings(lua_State *L)
{
    return dsf_host_of(L)->warnings;
}

