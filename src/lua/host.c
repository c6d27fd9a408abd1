/*
** host.c -- the sandboxed Lua host: allocator, hook, sandbox, one entry.
*/
#define _POSIX_C_SOURCE 200809L
#include "host.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "lua/builtin.h"
#include "lua/dsflib.h"

#define HOOK_EVERY 1000
#define MAX_MESSAGE 2000
#define MAX_TRACE_LINES 6

const char dsf_null_sentinel = 'n';
const char dsf_delete_sentinel = 'd';

const char *const dsf_sandbox_globals[] = {
    "_VERSION", "assert",  "dsforge",  "error",    "getmetatable",
    "ipairs",   "load",    "math",     "next",     "pairs",
    "pcall",    "print",   "rawequal", "rawget",   "rawlen",
    "rawset",   "require", "select",   "setmetatable", "string",
    "table",    "tonumber", "tostring", "type",     "utf8",
    "xpcall",   NULL};

enum limit_kind { LIMIT_NONE, LIMIT_INSTRUCTIONS, LIMIT_TIME };

struct dsf_host {
    lua_State *L;
    dsf_limits limits;
    size_t mem_used;
    bool mem_hit;
    uint64_t executed;
    struct timespec deadline;
    enum limit_kind hit;
    const char *const *module_dirs;
    size_t n_module_dirs;
    dsf_srccache *sources;
    dsf_diags *warnings;
    char limit_text[80];  /* the backstop message's tail */
};

/* ------------------------------------------------------------------ */
/* Memory: the hlua_alloc model. A free never fails; growth past the
** budget returns NULL, which Lua turns into LUA_ERRMEM. */

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    dsf_host *h = ud;
    if (!ptr)
        osize = 0; /* osize is a type tag then, not a size */
    if (nsize == 0) {
        free(ptr);
        h->mem_used -= osize;
        return NULL;
    }
    if (nsize > osize && h->mem_used + (nsize - osize) > h->limits.memory) {
        h->mem_hit = true;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p)
        return NULL;
    h->mem_used = h->mem_used - osize + nsize;
    return p;
}

/* ------------------------------------------------------------------ */
/* Time and instructions. */

static struct timespec now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

static bool past(struct timespec t, struct timespec deadline)
{
    return t.tv_sec > deadline.tv_sec ||
           (t.tv_sec == deadline.tv_sec && t.tv_nsec >= deadline.tv_nsec);
}

static dsf_host *host_of(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* Once a limit is hit the hook re-arms itself to run on every instruction,
** so a pcall inside the script catches the error only to hit it again on
** its next instruction: the error always reaches dsf_host_call. */
static void limit_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    dsf_host *h = host_of(L);
    if (h->hit == LIMIT_NONE) {
        h->executed += HOOK_EVERY;
        if (h->executed > h->limits.instructions)
            h->hit = LIMIT_INSTRUCTIONS;
        else if (past(now(), h->deadline))
            h->hit = LIMIT_TIME;
        else
            return;
        lua_sethook(L, limit_hook, LUA_MASKCOUNT, 1);
    }
    /* lua_pushfstring knows neither %llu nor %.3g: format here. Level 0
    ** is the function the hook interrupted: the message names its line. */
    char msg[96];
    if (h->hit == LIMIT_INSTRUCTIONS)
        snprintf(msg, sizeof msg, "instruction limit of %llu exceeded",
                 (unsigned long long)h->limits.instructions);
    else
        snprintf(msg, sizeof msg, "time limit of %.3g s exceeded",
                 h->limits.seconds);
    luaL_where(L, 0);
    lua_pushstring(L, msg);
    lua_concat(L, 2);
    lua_error(L);
}

/* The backstop for C functions the hook cannot interrupt (a pathological
** pattern in string.find, a huge table.concat): while any host exists, a
** periodic SIGALRM checks whether the current call has run past its
** backstop deadline (1.5 x the limit + 1 s, so the hook gets the first
** chance to stop the script cleanly); then the process ends with exit
** code 5 and a message prepared before the call. Arming a call costs no
** system call: it only sets the deadline and a flag. The handler does only
** async-signal-safe work (clock_gettime, write, _exit). */
#define BACKSTOP_PERIOD_USEC 200000

static const char *volatile alarm_what;  /* the current call's name */
static const char *volatile alarm_limit; /* ": time limit of 10 s ..." */
static volatile sig_atomic_t in_call;
static struct timespec call_backstop;
static int live_hosts;

static void on_alarm(int sig)
{
    (void)sig;
    if (!in_call || !past(now(), call_backstop))
        return;
    /* write and strlen are async-signal-safe; what stays valid for the
    ** whole call. */
    const char *what = alarm_what ? alarm_what : "a Lua call";
    ssize_t w = write(STDERR_FILENO, "dsforge: error: ", 16);
    w = write(STDERR_FILENO, what, strlen(what));
    if (alarm_limit)
        w = write(STDERR_FILENO, alarm_limit, strlen(alarm_limit));
    (void)w;
    _exit(5);
}

static void start_backstop(void)
{
    if (live_hosts++ > 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART; /* other system calls just continue */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = BACKSTOP_PERIOD_USEC;
    it.it_interval.tv_usec = BACKSTOP_PERIOD_USEC;
    setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_backstop(void)
{
    if (--live_hosts > 0)
        return;
    struct itimerval it;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    in_call = 0;
}

static struct timespec after(struct timespec t, double seconds)
{
    double whole = (double)(long)seconds;
    t.tv_sec += (time_t)whole;
    t.tv_nsec += (long)((seconds - whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void arm(dsf_host *h, const char *what)
{
    h->executed = 0;
    h->hit = LIMIT_NONE;
    h->mem_hit = false;
    struct timespec t = now();
    h->deadline = after(t, h->limits.seconds);
    lua_sethook(h->L, limit_hook, LUA_MASKCOUNT, HOOK_EVERY);
    /* The handler assembles the message from these parts: arming a call
    ** formats nothing. */
    alarm_limit = h->limit_text;
    alarm_what = what;
    call_backstop = after(t, h->limits.seconds * 1.5 + 1.0);
    in_call = 1;
}

static void disarm(dsf_host *h)
{
    in_call = 0;
    lua_sethook(h->L, NULL, 0, 0);
}

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
    if (trace)
        dsf_diag_set_trace(g, trace);
    free(trace);
    free(file);
    free(msg);
    return DSF_ESCRIPT;
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
    arm(h, what);
    int status = lua_pcall(L, nargs, nres, base);
    disarm(h);
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

static void set_sandbox_env(lua_State *L);

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
static int load_source(lua_State *L, const dsf_source *src,
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
    set_sandbox_env(h->L);
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
    int status = load_source(h->L, src, name);
    rc = status == LUA_OK ? 0 : load_error(h, status, name, d);
    if (!rc)
        set_sandbox_env(h->L);
    free(name);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The sandbox. */

#define BASE_KEY "dsforge.base"     /* registry: the allow-listed globals */
#define ENVMT_KEY "dsforge.env_mt"  /* registry: metatable of chunk envs */
#define LOADED_KEY "dsforge.loaded" /* registry: require's module cache */

/* __index of the base table: reached only for names that are neither in
** a chunk's own environment nor in the allow-list. */
static int undefined_global(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING)
        return luaL_error(L, "undefined global '%s'", lua_tostring(L, 2));
    return luaL_error(L, "undefined global");
}

/* Replaces upvalue 1 (_ENV) of the function on top with a new chunk
** environment: its own table, whose misses go to the base allow-list. */
static void set_sandbox_env(lua_State *L)
{
    lua_newtable(L);
    lua_getfield(L, LUA_REGISTRYINDEX, ENVMT_KEY);
    lua_setmetatable(L, -2);
    if (!lua_setupvalue(L, -2, 1))
        lua_pop(L, 1);
}

static int l_print(lua_State *L)
{
    int n = lua_gettop(L);
    dsf_buf b = DSF_BUF_INIT;
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        if (i > 1)
            dsf_buf_putc(&b, '\t');
        dsf_buf_add(&b, s, len);
        lua_pop(L, 1);
    }
    dsf_buf_putc(&b, '\n');
    fwrite(b.data, 1, b.len, stderr);
    dsf_buf_free(&b);
    return 0;
}

/* The base library's setmetatable plus the __gc check. Done here rather
** than by calling the original from C, so argument errors name
** 'setmetatable' and every error carries the script's file:line. */
static int l_setmetatable(lua_State *L)
{
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    if (t == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "setmetatable: __gc metamethods are not "
                                 "allowed in the sandbox");
        lua_pop(L, 1);
    }
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* A script's xpcall handler, wrapped. Lua runs the handler of an error
** raised by the count hook while hooks are still off (allowhook is 0 until
** the error unwinds), so a loop in the handler could never be stopped:
** once a limit is hit the script's handler is skipped and the limit's
** message passes through unchanged. */
static int guarded_handler(lua_State *L)
{
    if (host_of(L)->hit != LIMIT_NONE)
        return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* xpcall(f, msgh, ...) as in the base library, with msgh guarded. */
static int l_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2); /* f, msgh, true, f, args... */
    if (lua_pcall(L, n - 2, LUA_MULTRET, 2) != LUA_OK) {
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - 2;
}

static int l_load(lua_State *L)
{
    size_t len;
    const char *chunk = lua_tolstring(L, 1, &len);
    if (!chunk || lua_type(L, 1) != LUA_TSTRING)
        return luaL_error(L, "load: only string chunks are allowed in the "
                             "sandbox");
    const char *name = luaL_optstring(L, 2, "=(load)");
    const char *mode = luaL_optstring(L, 3, "t");
    if (strcmp(mode, "t") != 0)
        return luaL_error(L, "load: binary chunks are not allowed in the "
                             "sandbox (mode must be \"t\")");
    if (luaL_loadbufferx(L, chunk, len, name, "t") != LUA_OK) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        lua_pushvalue(L, 4);
        if (!lua_setupvalue(L, -2, 1))
            lua_pop(L, 1);
    } else {
        set_sandbox_env(L);
    }
    return 1;
}

static bool valid_module_name(const char *s)
{
    if (!*s || *s == '.')
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        if (!ok || (c == '.' && (p[1] == '.' || p[1] == '\0')))
            return false;
    }
    return true;
}

static int l_require(lua_State *L)
{
    dsf_host *h = host_of(L);
    const char *name = luaL_checkstring(L, 1);
    if (!valid_module_name(name))
        return luaL_error(L, "require: invalid module name '%s'", name);
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LOADED_KEY); /* 2 */
    lua_pushvalue(L, 1);
    int t = lua_rawget(L, 2);
    if (t == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == (void *)h)
        return luaL_error(L, "require: module '%s' requires itself "
                             "(circular require)", name);
    if (t != LUA_TNIL)
        return 1;
    lua_pop(L, 1);

    /* "a.b" -> "a/b.lua" or "a/b/init.lua" under each module directory. */
    char *rel = dsf_xstrdup(name);
    for (char *p = rel; *p; p++)
        if (*p == '.')
            *p = '/';
    const dsf_source *src = NULL;
    char *path = NULL;
    dsf_diags ignore = DSF_DIAGS_INIT;
    for (size_t i = 0; i < h->n_module_dirs && !src; i++) {
        for (int form = 0; form < 2 && !src; form++) {
            path = dsf_xasprintf("%s/%s%s", h->module_dirs[i], rel,
                                 form ? "/init.lua" : ".lua");
            /* A missing candidate is just not this one. */
            if (dsf_srccache_get(h->sources, path, &src, &ignore) != 0)
                src = NULL;
            if (!src) {
                free(path);
                path = NULL;
            }
        }
    }
    dsf_diags_free(&ignore);
    free(rel);
    if (!src)
        return luaL_error(L, "require: module '%s' not found on the plugin "
                             "path", name);
    /* Compile while marking the module as in progress. */
    lua_pushvalue(L, 1);
    lua_pushlightuserdata(L, h);
    lua_rawset(L, 2);
    lua_pushfstring(L, "@%s", path);
    free(path);
    if (load_source(L, src, lua_tostring(L, -1)) != LUA_OK)
        return lua_error(L);
    set_sandbox_env(L);
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -2);
    lua_rawset(L, 2);
    return 1;
}

bool dsf_lua_is_null(lua_State *L, int idx)
{
    return lua_type(L, idx) == LUA_TLIGHTUSERDATA &&
           lua_touserdata(L, idx) == (void *)&dsf_null_sentinel;
}

bool dsf_lua_is_delete(lua_State *L, int idx)
{
    return lua_type(L, idx) == LUA_TLIGHTUSERDATA &&
           lua_touserdata(L, idx) == (void *)&dsf_delete_sentinel;
}

void dsf_lua_mark(lua_State *L, int idx, bool array)
{
    idx = lua_absindex(L, idx);
    luaL_getmetatable(L, array ? DSF_ARRAY_MT : DSF_OBJECT_MT);
    lua_setmetatable(L, idx);
}

int dsf_lua_marker(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx))
        return 0;
    luaL_getmetatable(L, DSF_ARRAY_MT);
    if (lua_rawequal(L, -1, -2)) {
        lua_pop(L, 2);
        return 1;
    }
    lua_pop(L, 1);
    luaL_getmetatable(L, DSF_OBJECT_MT);
    int r = lua_rawequal(L, -1, -2) ? 2 : 0;
    lua_pop(L, 2);
    return r;
}

static void new_marker(lua_State *L, const char *key)
{
    luaL_newmetatable(L, key); /* sets __name */
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable"); /* scripts cannot read or swap it */
    lua_pop(L, 1);
}

static void remove_field(lua_State *L, const char *name)
{
    lua_pushnil(L);
    lua_setfield(L, -2, name);
}

/* Builds the sandbox: opens the allowed libraries (never luaL_openlibs),
** then moves the allow-listed names into the base table that every chunk
** environment reads through. Runs protected. */
static int setup(lua_State *L)
{
    luaL_requiref(L, LUA_GNAME, luaopen_base, 0);
    lua_pop(L, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0);
    remove_field(L, "dump");
    lua_pop(L, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 0);
    lua_pop(L, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);
    remove_field(L, "random");
    remove_field(L, "randomseed");
    lua_pop(L, 1);
    luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 0);
    lua_pop(L, 1);

    /* Protect the string metatable: getmetatable("") gives false. */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    new_marker(L, DSF_ARRAY_MT);
    new_marker(L, DSF_OBJECT_MT);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LOADED_KEY);

    /* The base: the allow-list, with wrapped load, print, setmetatable
    ** and xpcall. */
    lua_pushglobaltable(L);
    int g = lua_gettop(L);
    lua_newtable(L);
    int base = lua_gettop(L);
    static const char *const copied[] = {
        "_VERSION", "assert",   "error",    "getmetatable", "ipairs",
        "next",     "pcall",    "rawequal",     "rawget",
        "rawlen",   "rawset",   "select",   "tonumber",     "tostring",
        "type",     NULL};
    for (int i = 0; copied[i]; i++) {
        lua_getfield(L, g, copied[i]);
        lua_setfield(L, base, copied[i]);
    }
    static const char *const libs[] = {LUA_STRLIBNAME, LUA_TABLIBNAME,
                                       LUA_MATHLIBNAME, LUA_UTF8LIBNAME,
                                       NULL};
    for (int i = 0; libs[i]; i++) {
        luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
        lua_getfield(L, -1, libs[i]);
        lua_setfield(L, base, libs[i]);
        lua_pop(L, 1);
    }
    lua_pushcfunction(L, l_setmetatable);
    lua_setfield(L, base, "setmetatable");
    lua_pushcfunction(L, l_xpcall);
    lua_setfield(L, base, "xpcall");
    lua_pushcfunction(L, l_print);
    lua_setfield(L, base, "print");
    lua_pushcfunction(L, dsf_lua_pairs);
    lua_setfield(L, base, "pairs");
    lua_pushcfunction(L, l_load);
    lua_setfield(L, base, "load");
    lua_pushcfunction(L, l_require);
    lua_setfield(L, base, "require");
    dsf_open_dsforge(L);
    lua_setfield(L, base, "dsforge");
    lua_setfield(L, LUA_REGISTRYINDEX, BASE_KEY);

    /* Empty the real global table: nothing reaches it but through base. */
    lua_pushnil(L);
    while (lua_next(L, g)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushnil(L);
        lua_rawset(L, g);
    }
    lua_pop(L, 1);

    /* Drop the library cache too (it holds the unsandboxed tables). */
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);

    /* Chunk environments read through to the base with a table __index
    ** (no C call on the hot path of every global read); the base's own
    ** __index raises for names outside the allow-list. Both metatables
    ** are protected, so scripts never reach the base table itself. */
    lua_getfield(L, LUA_REGISTRYINDEX, BASE_KEY);
    lua_newtable(L);
    lua_pushcfunction(L, undefined_global);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "__index"); /* env_mt.__index = base */
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setfield(L, LUA_REGISTRYINDEX, ENVMT_KEY);
    return 0;
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
    h->L = lua_newstate(budget_alloc, h);
    if (!h->L) {
        free(h);
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "cannot create a Lua state (memory limit too "
                              "low?)");
    }
    lua_atpanic(h->L, panic);
    start_backstop();
    lua_pushcfunction(h->L, setup);
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
        arm(h, "closing a Lua state");
        lua_close(h->L);
        in_call = 0;
        alarm_limit = NULL;
        alarm_what = NULL;
        stop_backstop();
    }
    free(h);
}

lua_State *dsf_host_state(dsf_host *h) { return h->L; }

void dsf_host_set_global(dsf_host *h, const char *name)
{
    lua_State *L = h->L;
    lua_getfield(L, LUA_REGISTRYINDEX, BASE_KEY);
    lua_insert(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

dsf_diags *dsf_host_warnings(lua_State *L)
{
    return host_of(L)->warnings;
}
