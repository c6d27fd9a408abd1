/*
** test_sandbox.c -- escape attempts against the sandboxed Lua host.
**
** Every test runs a snippet through dsf_host_load + dsf_host_call in a fresh
** state with small limits and expects a clean error: DSF_ESCRIPT, a
** diagnostic that says what happened, nothing left on the stack, a bounded
** run time (the SIGALRM backstop would end this process with exit code 5,
** which fails the test). The last test walks the sandbox environment and
** checks it against the exact allow-list (contrib/docs/lua-environment.md and
** /work/shared/reference/style.md section 3).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "lua/host.h"
#include "lua/limits.h"
#include "lua/sandbox.h"

#define CHUNK "@escape.lua"
#define CHUNK_FILE "escape.lua"

#define assert_contains(hay, needle)                                        \
    do {                                                                    \
        const char *hay_ = (hay), *needle_ = (needle);                      \
        if (!hay_ || !strstr(hay_, needle_)) {                              \
            print_error("expected \"%s\" in \"%s\"\n", needle_,             \
                        hay_ ? hay_ : "(null)");                            \
            fail();                                                         \
        }                                                                   \
    } while (0)

/* ------------------------------------------------------------------ */
/* Harness. */

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static dsf_limits small_limits(void)
{
    dsf_limits lim = {8u << 20, 2000000u, 5.0};
    return lim;
}

typedef struct outcome {
    int rc;
    int top;          /* stack height after the call */
    size_t nerrors;
    char *message;    /* of the last error diagnostic */
    char *file;
    int line;
    char *hint;
    char *trace;
    char *result;     /* first result as a string, when the call worked */
    double seconds;   /* load + call + close */
} outcome;

static void outcome_free(outcome *o)
{
    free(o->message);
    free(o->file);
    free(o->hint);
    free(o->trace);
    free(o->result);
    memset(o, 0, sizeof *o);
}

static dsf_host *host_new(dsf_srccache *src, dsf_limits lim)
{
    dsf_host_config cfg = {lim, NULL, 0, src, NULL};
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_host *h = NULL;
    int rc = dsf_host_new(&h, &cfg, &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    dsf_diags_free(&d);
    assert_int_equal(rc, 0);
    assert_non_null(h);
    return h;
}

static void capture(outcome *o, int rc, dsf_host *h, dsf_diags *d)
{
    lua_State *L = dsf_host_state(h);
    o->rc = rc;
    if (rc == 0 && lua_gettop(L) >= 1) {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        o->result = s ? dsf_xstrndup(s, len) : dsf_xstrdup("(non-string)");
        lua_pop(L, 1);
    }
    o->top = lua_gettop(L);
    o->nerrors = dsf_diags_count(d, DSF_ERROR);
    for (size_t i = 0; i < d->len; i++) {
        const dsf_diag *g = &d->items[i];
        if (g->severity != DSF_ERROR)
            continue;
        free(o->message);
        free(o->file);
        free(o->hint);
        free(o->trace);
        o->message = dsf_xstrdup(g->message);
        o->file = dsf_xstrdup(g->file);
        o->line = g->line;
        o->hint = dsf_xstrdup(g->hint);
        o->trace = dsf_xstrdup(g->trace);
    }
}

/* Runs code as the chunk "@escape.lua" in a fresh state; keeps one result
** when the call succeeds. */
static outcome run_with(dsf_limits lim, const char *code)
{
    outcome o;
    memset(&o, 0, sizeof o);
    dsf_srccache *src = dsf_srccache_new();
    double t0 = mono();
    dsf_host *h = host_new(src, lim);
    dsf_diags d = DSF_DIAGS_INIT;
    int rc = dsf_host_load(h, CHUNK, code, strlen(code), &d);
    if (!rc)
        rc = dsf_host_call(h, 0, 1, "escape test", &d);
    capture(&o, rc, h, &d);
    dsf_host_free(h);
    o.seconds = mono() - t0;
    dsf_diags_free(&d);
    dsf_srccache_free(src);
    return o;
}

static outcome run_code(const char *code)
{
    return run_with(small_limits(), code);
}

/* The call failed cleanly with a message containing needle. line > 0: the
** diagnostic points at escape.lua:line; line < 0: it names no file; 0: the
** location is not checked. */
static void expect_error(const outcome *o, const char *needle, int line)
{
    if (o->rc != DSF_ESCRIPT)
        print_error("rc=%d result=%s message=%s\n", o->rc,
                    o->result ? o->result : "(none)",
                    o->message ? o->message : "(none)");
    assert_int_equal(o->rc, DSF_ESCRIPT);
    assert_int_equal(o->nerrors, 1);
    assert_contains(o->message, needle);
    if (line > 0) {
        assert_non_null(o->file);
        assert_string_equal(o->file, CHUNK_FILE);
        assert_int_equal(o->line, line);
    } else if (line < 0) {
        if (o->file)
            print_error("unexpected file %s:%d\n", o->file, o->line);
        assert_null(o->file);
    }
    assert_int_equal(o->top, 0);
}

static void expect_script_error(const char *code, const char *needle,
                                int line)
{
    outcome o = run_code(code);
    expect_error(&o, needle, line);
    outcome_free(&o);
}

/* A limit error: the message names the limit and the hint the option. */
static void expect_limit(const outcome *o, const char *needle,
                         const char *option)
{
    expect_error(o, needle, 0);
    assert_contains(o->hint, option);
}

/* ------------------------------------------------------------------ */
/* Missing libraries. */

static void test_os_execute(void **state)
{
    (void)state;
    expect_script_error("local x = 1\nos.execute('echo escaped')\n",
                        "undefined global 'os'", 2);
}

static void test_io_open(void **state)
{
    (void)state;
    expect_script_error("return io.open('/etc/passwd'):read('a')\n",
                        "undefined global 'io'", 1);
}

static void test_require_os_not_found(void **state)
{
    (void)state;
    expect_script_error("local os = require 'os'\nreturn os.getenv('HOME')\n",
                        "require: module 'os' not found on the plugin path",
                        1);
}

static void test_require_io_not_found(void **state)
{
    (void)state;
    expect_script_error("local io = require('io')\n",
                        "require: module 'io' not found on the plugin path",
                        1);
}

static void test_require_path_traversal(void **state)
{
    (void)state;
    expect_script_error("return require('../../etc/passwd')\n",
                        "require: invalid module name", 1);
    expect_script_error("return require('/etc/passwd')\n",
                        "require: invalid module name", 1);
    expect_script_error("return require('a..b')\n",
                        "require: invalid module name", 1);
}

static void test_package_loadlib(void **state)
{
    (void)state;
    expect_script_error(
        "local f = package.loadlib('libc.so.6', 'system')\nreturn f('id')\n",
        "undefined global 'package'", 1);
}

static void test_debug_getregistry(void **state)
{
    (void)state;
    expect_script_error("\n\nreturn debug.getregistry()\n",
                        "undefined global 'debug'", 3);
}

static void test_collectgarbage_absent(void **state)
{
    (void)state;
    expect_script_error("collectgarbage('stop')\n",
                        "undefined global 'collectgarbage'", 1);
}

static void test_dofile_absent(void **state)
{
    (void)state;
    expect_script_error("return dofile('/etc/passwd')\n",
                        "undefined global 'dofile'", 1);
}

static void test_loadfile_absent(void **state)
{
    (void)state;
    expect_script_error("return loadfile('/etc/passwd')\n",
                        "undefined global 'loadfile'", 1);
}

static void test_warn_and_coroutine_absent(void **state)
{
    (void)state;
    expect_script_error("warn('@on')\n", "undefined global 'warn'", 1);
    expect_script_error("return coroutine.create(print)\n",
                        "undefined global 'coroutine'", 1);
    expect_script_error("return _G.os\n", "undefined global '_G'", 1);
}

static void test_math_random_absent(void **state)
{
    (void)state;
    expect_script_error("assert(math.random == nil)\nreturn math.random(6)\n",
                        "attempt to call a nil value (field 'random')", 2);
    expect_script_error("math.randomseed(42)\n",
                        "attempt to call a nil value (field 'randomseed')",
                        1);
}

static void test_undefined_global(void **state)
{
    (void)state;
    expect_script_error("local a = 1\nlocal b = not_defined_anywhere\n",
                        "undefined global 'not_defined_anywhere'", 2);
    /* Non-string keys are refused too, and rawget sees nothing. */
    expect_script_error("return _ENV[1]\n", "undefined global", 1);
    outcome o = run_code("return tostring(rawget(_ENV, 'os'))\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "nil");
    outcome_free(&o);
}

static void test_env_metatable_protected(void **state)
{
    (void)state;
    outcome o = run_code("return tostring(getmetatable(_ENV))\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "false");
    outcome_free(&o);
    expect_script_error("setmetatable(_ENV, nil)\n",
                        "cannot change a protected metatable", 1);
}

/* ------------------------------------------------------------------ */
/* Bytecode. */

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    dsf_buf_add(ud, p, sz);
    return 0;
}

/* A real binary chunk ("return 42"), made in a plain Lua state. */
static char *real_bytecode(size_t *len)
{
    lua_State *P = luaL_newstate();
    assert_non_null(P);
    assert_int_equal(luaL_loadstring(P, "return 42"), LUA_OK);
    dsf_buf b = DSF_BUF_INIT;
    assert_int_equal(lua_dump(P, dump_writer, &b, 0), 0);
    lua_close(P);
    assert_true(b.len > 4);
    assert_memory_equal(b.data, "\x1bLua", 4);
    *len = b.len;
    return dsf_buf_take(&b);
}

typedef struct blob {
    dsf_host *h;
    const char *data;
    size_t len;
} blob;

static int set_blob(lua_State *L)
{
    blob *b = lua_touserdata(L, 1);
    lua_pushlstring(L, b->data, b->len);
    dsf_host_set_global(b->h, "blob");
    return 0;
}

/* Runs code with the global `blob` holding bytes. */
static outcome run_with_blob(const char *code, const char *bytes,
                             size_t len)
{
    outcome o;
    memset(&o, 0, sizeof o);
    dsf_srccache *src = dsf_srccache_new();
    dsf_host *h = host_new(src, small_limits());
    dsf_diags d = DSF_DIAGS_INIT;
    blob b = {h, bytes, len};
    int rc = dsf_host_cpcall(h, set_blob, &b, 0, "set blob", &d);
    assert_int_equal(rc, 0);
    rc = dsf_host_load(h, CHUNK, code, strlen(code), &d);
    if (!rc)
        rc = dsf_host_call(h, 0, 1, "escape test", &d);
    capture(&o, rc, h, &d);
    dsf_host_free(h);
    dsf_diags_free(&d);
    dsf_srccache_free(src);
    return o;
}

static void test_string_dump_absent(void **state)
{
    (void)state;
    outcome o = run_code("return tostring(string.dump)\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "nil");
    outcome_free(&o);
    expect_script_error("local s = ('x').dump\nreturn s(print)\n",
                        "attempt to call a nil value (local 's')", 2);
}

static void test_load_string_dump(void **state)
{
    (void)state;
    expect_script_error(
        "local f = load(string.dump(function() return 1 end), 'x', 'b')\n",
        "attempt to call a nil value (field 'dump')", 1);
}

static void test_load_real_bytecode_text_only(void **state)
{
    (void)state;
    size_t len;
    char *bc = real_bytecode(&len);
    /* The default mode is text: load refuses and returns nil, msg. */
    outcome o = run_with_blob("local f, err = load(blob)\n"
                              "if f then return f() end\n"
                              "error(err, 0)\n",
                              bc, len);
    expect_error(&o, "attempt to load a binary chunk (mode is 't')", -1);
    outcome_free(&o);
    /* An explicit nil mode is the default mode. */
    o = run_with_blob("local f, err = load(blob, 'b', nil)\n"
                      "if f then return f() end\n"
                      "error(err, 0)\n",
                      bc, len);
    expect_error(&o, "attempt to load a binary chunk (mode is 't')", -1);
    outcome_free(&o);
    free(bc);
}

static void test_load_real_bytecode_mode_b(void **state)
{
    (void)state;
    size_t len;
    char *bc = real_bytecode(&len);
    outcome o = run_with_blob("local x = 0\n"
                              "local f = load(blob, '=b', 'b')\n"
                              "return f()\n",
                              bc, len);
    expect_error(&o, "binary chunks are not allowed", 2);
    outcome_free(&o);
    o = run_with_blob("return load(blob, '=b', 'bt')()\n", bc, len);
    expect_error(&o, "binary chunks are not allowed", 1);
    outcome_free(&o);
    /* A function as the chunk source (a reader) is refused as well. */
    o = run_with_blob("local i = 0\n"
                      "return load(function() i = i + 1\n"
                      "  if i == 1 then return blob end end)()\n",
                      bc, len);
    expect_error(&o, "only string chunks are allowed", 2);
    outcome_free(&o);
    free(bc);
}

static void test_load_handmade_binary(void **state)
{
    (void)state;
    expect_script_error("local f = load('\\27Lua\\84\\0junk', 'x', 'b')\n",
                        "binary chunks are not allowed", 1);
    expect_script_error("local f, err = load('\\27Lua\\84\\0junk')\n"
                        "if f then return f() end\n"
                        "error(err, 0)\n",
                        "attempt to load a binary chunk (mode is 't')", -1);
}

static void test_host_load_refuses_binary(void **state)
{
    (void)state;
    size_t len;
    char *bc = real_bytecode(&len);
    dsf_srccache *src = dsf_srccache_new();
    dsf_host *h = host_new(src, small_limits());
    dsf_diags d = DSF_DIAGS_INIT;
    int rc = dsf_host_load(h, "@blob.luac", bc, len, &d);
    assert_int_equal(rc, DSF_ESCRIPT);
    assert_int_equal(lua_gettop(dsf_host_state(h)), 0);
    assert_int_equal(d.len, 1);
    assert_string_equal(d.items[0].file, "blob.luac");
    assert_contains(d.items[0].message, "syntax error");
    assert_contains(d.items[0].message, "attempt to load a binary chunk");
    dsf_diags_free(&d);
    /* The hand-made header, too. */
    static const char fake[] = "\x1bLua\x54\x00\x19\x93\r\n\x1a\n";
    rc = dsf_host_load(h, "=fake", fake, sizeof fake - 1, &d);
    assert_int_equal(rc, DSF_ESCRIPT);
    assert_contains(d.items[0].message, "attempt to load a binary chunk");
    dsf_diags_free(&d);
    dsf_host_free(h);
    dsf_srccache_free(src);
    free(bc);
}

static void test_loaded_text_runs_in_sandbox(void **state)
{
    (void)state;
    /* A text chunk from load gets the sandbox environment, not _G. */
    expect_script_error("local f = assert(load('return os.exit(1)'))\n"
                        "return f()\n",
                        "undefined global 'os'", 0);
    /* With an explicit environment it sees only that table. */
    outcome o = run_code("local f = assert(load('return x + 1', '=c', 't', "
                         "{x = 41}))\nreturn tostring(f())\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "42");
    outcome_free(&o);
}

/* ------------------------------------------------------------------ */
/* Metatables and finalizers. */

static void test_string_metatable_read(void **state)
{
    (void)state;
    outcome o = run_code("return tostring(getmetatable(''))\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "false");
    outcome_free(&o);
}

static void test_string_metatable_write(void **state)
{
    (void)state;
    expect_script_error("local x = 1\n"
                        "getmetatable('').__index = function() return 1 end\n",
                        "attempt to index a boolean value", 2);
    expect_script_error("setmetatable('', {})\n",
                        "bad argument #1 to 'setmetatable' (table expected, "
                        "got string)",
                        1);
    /* Methods on strings still work. */
    outcome o = run_code("return ('abc'):upper()\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "ABC");
    outcome_free(&o);
}

/* type() is dsforge's (the names pushed from upvalues, sandbox.c), with
** the base library's answers and error: every type, the names usable as
** the strings they are, and no argument refused. */
static void test_type(void **state)
{
    (void)state;
    outcome o = run_code(
        "local r = { type(nil), type(true), type(1), type(1.5), type('s'),\n"
        "  type({}), type(print), type(function() end),\n"
        "  type(dsforge.null), type(type) }\n"
        "local s = type(0)\n"
        "assert(s == 'number' and #s == 6 and s:upper() == 'NUMBER')\n"
        "assert(({ number = 1 })[type(2)] == 1)\n"
        "return table.concat(r, ',')\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "nil,boolean,number,number,string,table,"
                                  "function,function,userdata,function");
    outcome_free(&o);
    expect_script_error("local x = 1\nreturn type()\n",
                        "bad argument #1 to 'type' (value expected)", 2);
    /* (called by pcall, it has no name to give: as the base library's) */
    o = run_code("return select(2, pcall(type))\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "bad argument #1 to '?' (value expected)");
    outcome_free(&o);
}

static void test_gc_metamethod_refused(void **state)
{
    (void)state;
    expect_script_error("local t = setmetatable({}, {__gc = function() end})\n",
                        "__gc metamethods are not allowed", 1);
    expect_script_error("local mt = {}\nrawset(mt, '__gc', false)\n"
                        "setmetatable({}, mt)\n",
                        "__gc metamethods are not allowed", 3);
}

static void test_gc_loop_attempt(void **state)
{
    (void)state;
    /* __gc added after setmetatable (and one inherited through __index)
    ** never marks the object for finalization, so the looping finalizer
    ** never runs: neither during collections nor in lua_close. */
    outcome o = run_code(
        "local mt = {}\n"
        "local t = setmetatable({}, mt)\n"
        "mt.__gc = function() while true do end end\n"
        "local u = setmetatable({}, setmetatable({}, {__index = {\n"
        "  __gc = function() while true do end end}}))\n"
        "t, u = nil, nil\n"
        "for i = 1, 200000 do local x = {i} end\n"
        "return 'done'\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "done");
    outcome_free(&o);
}

/* ------------------------------------------------------------------ */
/* Instruction and time limits. */

static void test_infinite_loop(void **state)
{
    (void)state;
    outcome o = run_code("while true do end\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
}

static void test_infinite_loop_in_pcall(void **state)
{
    (void)state;
    outcome o = run_code("local ok, e = pcall(function() while true do end "
                         "end)\nreturn 'escaped: ' .. tostring(e)\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
    /* Retrying forever does not help either. */
    o = run_code("while true do\n"
                 "  pcall(function() while true do end end)\n"
                 "end\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
}

static void test_infinite_loop_in_xpcall(void **state)
{
    (void)state;
    outcome o = run_code("local ok, e = xpcall(function() while true do end "
                         "end, function(m) return 'handled: ' .. m end)\n"
                         "return 'escaped: ' .. tostring(e)\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
}

static void test_xpcall_handler_loops(void **state)
{
    (void)state;
    /* The handler runs while the limit error is being raised: it must not
    ** become a place where the hook cannot reach. */
    outcome o = run_code("local ok, e = xpcall(function() while true do end "
                         "end, function(m) while true do end end)\n"
                         "return 'escaped: ' .. tostring(e)\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
    o = run_code("local ok, e = xpcall(function() while true do end end,\n"
                 "  function(m) return pcall(function() while true do end "
                 "end) end)\n"
                 "return 'escaped: ' .. tostring(e)\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
}

static void test_xpcall_handler_still_works(void **state)
{
    (void)state;
    outcome o = run_code("local ok, e = xpcall(function() error('x', 0) end,\n"
                         "  function(m) return 'handled ' .. m end)\n"
                         "return tostring(ok) .. ' ' .. e\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "false handled x");
    outcome_free(&o);
    o = run_code("return select('#', xpcall(function(a, b) return a, b, 3 "
                 "end, print, 1, 2))\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "4");
    outcome_free(&o);
    /* A loop inside an ordinary (non-limit) handler is still counted. */
    o = run_code("xpcall(function() error('x') end,\n"
                 "  function(m) while true do end end)\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
    expect_script_error("xpcall(print)\n", "bad argument #2 to 'xpcall'", 1);
}

static void test_close_handler_loops(void **state)
{
    (void)state;
    outcome o = run_code(
        "local x <close> = setmetatable({}, {__close = function()\n"
        "  while true do end end})\n"
        "error('boom')\n");
    expect_limit(&o, "instruction limit of 2000000 exceeded",
                 "--max-instructions");
    outcome_free(&o);
}

static void test_time_limit(void **state)
{
    (void)state;
    dsf_limits lim = small_limits();
    lim.seconds = 0.2;
    lim.instructions = UINT64_C(1000000000000000);
    outcome o = run_with(lim, "local n = 0\nwhile true do n = n + 1 end\n");
    expect_limit(&o, "time limit of 0.2 s exceeded", "--max-seconds");
    assert_true(o.seconds >= 0.2); /* not before the limit */
    outcome_free(&o);
    /* Caught by pcall: still the end of the call. */
    o = run_with(lim, "pcall(function() while true do end end)\n"
                      "while true do end\n");
    expect_limit(&o, "time limit of 0.2 s exceeded", "--max-seconds");
    outcome_free(&o);
}

static void test_limits_rearm_per_call(void **state)
{
    (void)state;
    /* A call that hit a limit does not poison the next call. */
    dsf_srccache *src = dsf_srccache_new();
    dsf_host *h = host_new(src, small_limits());
    dsf_diags d = DSF_DIAGS_INIT;
    static const char spin[] = "while true do end";
    assert_int_equal(dsf_host_load(h, CHUNK, spin, sizeof spin - 1, &d), 0);
    assert_int_equal(dsf_host_call(h, 0, 0, "first", &d), DSF_ESCRIPT);
    static const char ok[] = "local n = 0 for i = 1, 1000 do n = n + i end "
                             "return n";
    assert_int_equal(dsf_host_load(h, CHUNK, ok, sizeof ok - 1, &d), 0);
    assert_int_equal(dsf_host_call(h, 0, 1, "second", &d), 0);
    lua_State *L = dsf_host_state(h);
    assert_int_equal(lua_tointeger(L, -1), 500500);
    lua_pop(L, 1);
    assert_int_equal(dsf_diags_count(&d, DSF_ERROR), 1);
    dsf_diags_free(&d);
    dsf_host_free(h);
    dsf_srccache_free(src);
}

/* ------------------------------------------------------------------ */
/* Memory and stack. */

static void test_string_rep_huge(void **state)
{
    (void)state;
    /* 2^31 is past Lua's own string size limit (INT_MAX): refused before
    ** any allocation. Below it, the memory budget refuses. */
    expect_script_error("local s = string.rep('x', 2^31)\nreturn #s\n",
                        "resulting string too large", 1);
    outcome o = run_code("local s = string.rep('x', 2^30)\nreturn #s\n");
    expect_error(&o, "memory limit of 8 MiB exceeded", -1);
    outcome_free(&o);
    o = run_code("local s = string.rep('ab', 2^29, ',')\nreturn #s\n");
    expect_error(&o, "memory limit of 8 MiB exceeded", -1);
    outcome_free(&o);
    /* Caught by pcall: the memory is not taken, the state stays usable. */
    o = run_code("local ok, e = pcall(string.rep, 'x', 2^30)\n"
                 "return tostring(ok) .. ' ' .. e .. ' ' .. #('y'):rep(10)\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "false not enough memory 10");
    outcome_free(&o);
}

static void test_table_growth_bomb(void **state)
{
    (void)state;
    dsf_limits lim = small_limits();
    lim.instructions = UINT64_C(10000000000);
    outcome o = run_with(lim, "local t, i = {}, 0\n"
                              "while true do i = i + 1; t[i] = {i} end\n");
    expect_error(&o, "memory limit of 8 MiB exceeded", -1);
    outcome_free(&o);
    o = run_with(lim, "local s = 'x'\nwhile true do s = s .. s end\n");
    expect_error(&o, "memory limit of 8 MiB exceeded", -1);
    outcome_free(&o);
}

/* Runs a script that makes some 25 MiB of garbage in one call (200,000
** tables of four values) and checks its result: with an 8 MiB budget it
** passes only if the garbage is collected when the budget refuses an
** allocation. Leaves the stack as it was. */
static void run_garbage(dsf_host *h)
{
    lua_State *L = dsf_host_state(h);
    dsf_diags d = DSF_DIAGS_INIT;
    const char *garbage = "local n = 0\n"
                          "for i = 1, 200000 do n = n + #{i, i, i, i} end\n"
                          "return n\n";
    int rc = dsf_host_load(h, CHUNK, garbage, strlen(garbage), &d);
    if (!rc)
        rc = dsf_host_call(h, 0, 1, "garbage", &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    dsf_diags_free(&d);
    assert_int_equal(rc, 0);
    assert_int_equal(lua_tointeger(L, -1), 800000);
    lua_pop(L, 1);
}

/* The loading pause (dsf_host_gc_loading) is set and put back, and under
** it the memory budget holds exactly as before: garbage far beyond the
** budget is collected, live data past it is refused. */
static void test_gc_loading_pause(void **state)
{
    (void)state;
    dsf_srccache *src = dsf_srccache_new();
    dsf_limits lim = small_limits();
    lim.instructions = UINT64_C(10000000000);
    dsf_host *h = host_new(src, lim);
    lua_State *L = dsf_host_state(h);
    /* LUA_GCSETPAUSE returns the previous pause: read it, put it back. */
    int before = lua_gc(L, LUA_GCSETPAUSE, DSF_GC_PAUSE);
    assert_int_equal(before, DSF_GC_PAUSE);
    dsf_host_gc_loading(h, true);
    assert_int_equal(lua_gc(L, LUA_GCSETPAUSE, DSF_GC_LOAD_PAUSE),
                     DSF_GC_LOAD_PAUSE);
    run_garbage(h);
    dsf_diags d = DSF_DIAGS_INIT;
    const char *live = "local t = {}\n"
                       "for i = 1, 1e7 do t[i] = {i} end\n";
    int rc = dsf_host_load(h, CHUNK, live, strlen(live), &d);
    if (!rc)
        rc = dsf_host_call(h, 0, 0, "live", &d);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(d.items[d.len - 1].message,
                           "memory limit of 8 MiB exceeded"));
    dsf_host_gc_loading(h, false);
    assert_int_equal(lua_gc(L, LUA_GCSETPAUSE, DSF_GC_PAUSE), DSF_GC_PAUSE);
    dsf_diags_free(&d);
    dsf_host_free(h);
    dsf_srccache_free(src);
}

static int finalized;

static int count_finalized(lua_State *L)
{
    (void)L;
    finalized++;
    return 0;
}

/* Pushes and drops n strings of 1,000 bytes (long strings: each one a new
** object), from C: the allocation the collector's pace is charged for. */
static void allocate_garbage(lua_State *L, int n)
{
    char block[1000];
    for (int i = 0; i < n; i++) {
        memset(block, 'a' + i % 26, sizeof block);
        lua_pushlstring(L, block, sizeof block);
        lua_pop(L, 1);
    }
}

/* Leaves one table with a finalizer (counting into finalized) as garbage:
** it is finalized by the first collection cycle that ends after this. */
static void drop_finalizable(lua_State *L)
{
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, count_finalized);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

/* The collector's floor (host.h, DSF_GC_FLOOR): a new state collects
** nothing until that many bytes have been allocated in it (a quarter of
** the memory limit when that is less); past it, Lua's pace; and under it
** the memory budget holds as before: garbage far beyond the budget is
** collected when the budget refuses an allocation. */
static void test_gc_floor(void **state)
{
    (void)state;
    dsf_srccache *src = dsf_srccache_new();
    dsf_limits lim = small_limits();
    lim.memory = 64u << 20; /* the floor is DSF_GC_FLOOR, 4 MiB */
    lim.instructions = UINT64_C(10000000000);
    dsf_host *h = host_new(src, lim);
    lua_State *L = dsf_host_state(h);
    assert_int_not_equal(lua_gc(L, LUA_GCISRUNNING), 0); /* not stopped */
    finalized = 0;
    drop_finalizable(L);
    size_t before = dsf_limits_memory_used(L);
    allocate_garbage(L, 2048); /* 2 MiB: under the floor */
    assert_int_equal(finalized, 0);
    assert_true(dsf_limits_memory_used(L) >= before + (2000u << 10));
    allocate_garbage(L, 8192); /* 8 MiB more: past it, cycles run */
    assert_int_equal(finalized, 1);
    assert_true(dsf_limits_memory_used(L) < before + (6u << 20));
    dsf_host_free(h);

    /* With a limit of 8 MiB the floor is 2 MiB. */
    lim.memory = 8u << 20;
    h = host_new(src, lim);
    L = dsf_host_state(h);
    finalized = 0;
    drop_finalizable(L);
    allocate_garbage(L, 1024);
    assert_int_equal(finalized, 0);
    allocate_garbage(L, 4096);
    assert_int_equal(finalized, 1);
    dsf_host_free(h);

    /* Under the floor, garbage of 25 MiB and more in one call of a script
    ** with an 8 MiB budget: collected when the budget refuses an
    ** allocation, not refused. */
    h = host_new(src, lim);
    run_garbage(h);
    dsf_host_free(h);
    dsf_srccache_free(src);
}

static void test_unbounded_recursion(void **state)
{
    (void)state;
    dsf_limits lim = small_limits();
    lim.memory = 64u << 20;
    lim.instructions = UINT64_C(100000000);
    outcome o = run_with(lim, "local function f(n) return f(n + 1) + 1 end\n"
                              "return f(1)\n");
    expect_error(&o, "stack overflow", 1);
    outcome_free(&o);
    /* With the small budget the memory limit comes first: also clean. */
    o = run_code("local function f(n) return f(n + 1) + 1 end\n"
                 "return f(1)\n");
    assert_int_equal(o.rc, DSF_ESCRIPT);
    assert_true(strstr(o.message, "stack overflow") ||
                strstr(o.message, "memory limit of 8 MiB exceeded"));
    outcome_free(&o);
}

static void test_recursion_through_c(void **state)
{
    (void)state;
    expect_script_error(
        "local t = setmetatable({}, {__index = function(t, k)\n"
        "  return t[k] end})\n"
        "return t.x\n",
        "stack overflow", 0);
    expect_script_error(
        "local t = setmetatable({}, {__tostring = function(t)\n"
        "  return tostring(t) end})\n"
        "return tostring(t)\n",
        "stack overflow", 0);
}

/* ------------------------------------------------------------------ */
/* Error values. */

static void test_error_table(void **state)
{
    (void)state;
    expect_script_error("error({})\n",
                        "escape test: (error object is a table value)", -1);
    expect_script_error("error()\n",
                        "escape test: (error object is a nil value)", -1);
    expect_script_error("error(42)\n", "escape test: 42", -1);
}

static void test_error_tostring(void **state)
{
    (void)state;
    expect_script_error(
        "error(setmetatable({}, {__tostring = function()\n"
        "  return 'custom failure' end}))\n",
        "custom failure", 0);
    expect_script_error(
        "error(setmetatable({}, {__tostring = function()\n"
        "  return {} end}))\n",
        "(error object is a table value)", -1);
    expect_script_error(
        "error(setmetatable({}, {__tostring = function()\n"
        "  error('in tostring') end}))\n",
        "in tostring", 0);
    outcome o = run_code("error(setmetatable({}, {__tostring = function()\n"
                         "  while true do end end}))\n");
    assert_int_equal(o.rc, DSF_ESCRIPT);
    assert_int_equal(o.top, 0);
    outcome_free(&o);
}

/* ------------------------------------------------------------------ */
/* pairs is deterministic: sorted keys, whatever the hash seed. */

static void test_pairs_visits_sorted_keys(void **state)
{
    (void)state;
    outcome o = run_code(
        "local t = {}\n"
        "for _, k in ipairs({'zeta', 'alpha', 'mu', 'beta'}) do t[k] = 1 end\n"
        "t[3] = 1; t[1] = 1; t[2.5] = 1; t[-4] = 1\n"
        "local seen = {}\n"
        "for k, v in pairs(t) do seen[#seen + 1] = tostring(k) end\n"
        "-- removing a later key during the loop skips it\n"
        "local u, got = {a = 1, b = 2, c = 3}, {}\n"
        "for k in pairs(u) do got[#got + 1] = k; u.c = nil end\n"
        "return table.concat(seen, ',') .. '|' .. table.concat(got, ',')\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result,
                        "-4,1,2.5,3,alpha,beta,mu,zeta|a,b");
    outcome_free(&o);
    /* __pairs is honoured */
    o = run_code("local t = setmetatable({}, {__pairs = function(t)\n"
                 "  return function(_, k) if not k then return 'x', 1 end end,"
                 " t, nil end})\n"
                 "local s = ''\nfor k in pairs(t) do s = s .. k end\n"
                 "return s\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "x");
    outcome_free(&o);
}

/* sorted_keys and pairs give the same order for tables of any size (a
** few keys are sorted on the C stack, more in a userdata): numbers, then
** strings in byte order; a key of another type is an error for
** sorted_keys and comes last in pairs, at either size. */
static void test_sorted_keys_sizes(void **state)
{
    (void)state;
    outcome o = run_code(
        "local out = {}\n"
        "for _, n in ipairs({0, 1, 2, 47, 48, 49, 50, 200}) do\n"
        "  local t, want = {}, {}\n"
        "  for i = n, 1, -1 do\n"
        "    local k = (i % 3 == 0) and i or (i % 3 == 1) and i + 0.5\n"
        "              or string.format('k%03d', i)\n"
        "    t[k] = i\n"
        "  end\n"
        "  for k in next, t do want[#want + 1] = k end\n"
        "  table.sort(want, function(a, b)\n"
        "    if type(a) ~= type(b) then return type(a) == 'number' end\n"
        "    return a < b end)\n"
        "  local got, viap = dsforge.sorted_keys(t), {}\n"
        "  for k in pairs(t) do viap[#viap + 1] = k end\n"
        "  assert(#got == n and #viap == n, 'size ' .. n)\n"
        "  for i = 1, n do\n"
        "    assert(got[i] == want[i] and viap[i] == want[i], 'order ' .. n)\n"
        "  end\n"
        "  out[#out + 1] = n .. ':' .. tostring(got[1]) .. '..' .. tostring(got[n])\n"
        "end\n"
        "for _, n in ipairs({3, 60}) do\n"
        "  local t = {}\n"
        "  for i = 1, n do t['s' .. i] = i end\n"
        "  t[true] = 1\n"
        "  local ok, err = pcall(dsforge.sorted_keys, t)\n"
        "  assert(not ok and tostring(err):find('keys must be numbers or strings'), n)\n"
        "  local last\n"
        "  for k in pairs(t) do last = k end\n"
        "  out[#out + 1] = n .. ':' .. tostring(last)\n"
        "end\n"
        "return table.concat(out, ' ')\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result,
                        "0:nil..nil 1:1.5..1.5 2:1.5..k002 47:1.5..k047 "
                        "48:1.5..k047 49:1.5..k047 50:1.5..k050 "
                        "200:1.5..k200 3:true 60:true");
    outcome_free(&o);
}

/* ------------------------------------------------------------------ */
/* print goes to stderr. */

static char *slurp_fd(int fd)
{
    dsf_buf b = DSF_BUF_INIT;
    char tmp[256];
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, tmp, sizeof tmp)) > 0)
        dsf_buf_add(&b, tmp, (size_t)n);
    dsf_buf_puts(&b, "");
    return dsf_buf_take(&b);
}

static void test_print_goes_to_stderr(void **state)
{
    (void)state;
    char out_name[] = "/tmp/dsf-sandbox-out-XXXXXX";
    char err_name[] = "/tmp/dsf-sandbox-err-XXXXXX";
    int out_fd = mkstemp(out_name), err_fd = mkstemp(err_name);
    assert_true(out_fd >= 0 && err_fd >= 0);
    unlink(out_name);
    unlink(err_name);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    assert_true(saved_out >= 0 && saved_err >= 0);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    outcome o = run_code("print('hello', 1, nil, true, 2.5)\n"
                         "print(setmetatable({}, {__tostring = function()\n"
                         "  return 'obj' end}))\n"
                         "return 'ok'\n");
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    char *out = slurp_fd(out_fd), *err = slurp_fd(err_fd);
    close(out_fd);
    close(err_fd);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "ok");
    assert_string_equal(out, "");
    assert_string_equal(err, "hello\t1\tnil\ttrue\t2.5\nobj\n");
    outcome_free(&o);
    free(out);
    free(err);
}

/* ------------------------------------------------------------------ */
/* The environment walk. */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The string keys of the table on top of the stack, sorted and joined
** with spaces; any non-string key fails the test. */
static char *table_keys(lua_State *L)
{
    size_t n = 0, cap = 0;
    char **names = NULL;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        assert_int_equal(lua_type(L, -1), LUA_TSTRING);
        dsf_xgrow((void **)&names, &cap, n + 1, sizeof *names);
        names[n++] = dsf_xstrdup(lua_tostring(L, -1));
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "");
    for (size_t i = 0; i < n; i++) {
        if (i)
            dsf_buf_putc(&b, ' ');
        dsf_buf_puts(&b, names[i]);
        free(names[i]);
    }
    free(names);
    return dsf_buf_take(&b);
}

static char *sorted_list(const char *const *list)
{
    size_t n = 0;
    while (list[n])
        n++;
    const char **copy = dsf_xmalloc((n ? n : 1) * sizeof *copy);
    memcpy(copy, list, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, cmp_str);
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "");
    for (size_t i = 0; i < n; i++) {
        if (i)
            dsf_buf_putc(&b, ' ');
        dsf_buf_puts(&b, copy[i]);
    }
    free(copy);
    return dsf_buf_take(&b);
}

static void expect_library(lua_State *L, const char *lib,
                           const char *expected)
{
    lua_getfield(L, -1, lib);
    assert_int_equal(lua_type(L, -1), LUA_TTABLE);
    char *keys = table_keys(L);
    if (strcmp(keys, expected) != 0)
        print_error("%s: got      %s\n%s: expected %s\n", lib, keys, lib,
                    expected);
    assert_string_equal(keys, expected);
    free(keys);
    lua_pop(L, 1);
}

/* The names of dsf_sandbox_globals, sorted and joined with spaces. */
static char *allow_list(void)
{
    size_t n = 0;
    while (dsf_sandbox_globals[n].name)
        n++;
    const char **names = dsf_xmalloc((n + 1) * sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = dsf_sandbox_globals[i].name;
    names[n] = NULL;
    char *s = sorted_list(names);
    free(names);
    return s;
}

/* The names contrib/docs/lua-environment.md lists under "Globals (the
** exact allow-list)": the backquoted paragraph after the heading. */
static char *documented_list(void)
{
    const char *root = getenv("DSF_SOURCE_DIR");
    assert_non_null(root);
    char *path = dsf_xasprintf("%s/contrib/docs/lua-environment.md", root);
    FILE *f = fopen(path, "rb");
    free(path);
    assert_non_null(f);
    dsf_buf text = DSF_BUF_INIT;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        dsf_buf_add(&text, chunk, got);
    fclose(f);
    const char *sec = strstr(dsf_buf_str(&text),
                             "## Globals (the exact allow-list)\n");
    assert_non_null(sec);
    const char *open = strchr(sec, '`');
    assert_non_null(open);
    const char *close = strchr(open + 1, '`');
    assert_non_null(close);
    /* Split on blanks and newlines. */
    const char *names[128];
    char *copy = dsf_xstrndup(open + 1, (size_t)(close - open - 1));
    size_t n = 0;
    for (char *tok = strtok(copy, " \n"); tok && n < 127;
         tok = strtok(NULL, " \n"))
        names[n++] = tok;
    names[n] = NULL;
    char *s = sorted_list(names);
    free(copy);
    dsf_buf_free(&text);
    return s;
}

static void test_environment_walk(void **state)
{
    (void)state;
    char *allow = allow_list();
    char *doc = documented_list();
    /* The table that drives the set-up is the documented list
    ** (contrib/docs/lua-environment.md). */
    if (strcmp(allow, doc) != 0)
        print_error("table: %s\ndoc:   %s\n", allow, doc);
    assert_string_equal(allow, doc);

    dsf_srccache *src = dsf_srccache_new();
    dsf_host *h = host_new(src, small_limits());
    lua_State *L = dsf_host_state(h);

    /* C side: the base table every chunk environment falls back to. */
    lua_getfield(L, LUA_REGISTRYINDEX, "dsforge.base");
    assert_int_equal(lua_type(L, -1), LUA_TTABLE);
    char *base = table_keys(L);
    assert_string_equal(base, allow);
    free(base);

    expect_library(L, "string",
                   "byte char find format gmatch gsub len lower match pack "
                   "packsize rep reverse sub unpack upper");
    expect_library(L, "table", "concat insert move pack remove sort unpack");
    expect_library(L, "utf8", "char charpattern codepoint codes len offset");
    expect_library(L, "dsforge",
                   "array delete fail kind null object sorted_keys version warn");
    /* math: Lua 5.4's functions, plus exactly the LUA_COMPAT_MATHLIB set
    ** when the system library was built with it (Debian's is). */
    lua_getfield(L, -1, "math");
    char *math = table_keys(L);
    lua_pop(L, 1);
    static const char core_math[] =
        "abs acos asin atan ceil cos deg exp floor fmod huge log max "
        "maxinteger min mininteger modf pi rad sin sqrt tan tointeger type "
        "ult";
    static const char compat_math[] =
        "abs acos asin atan atan2 ceil cos cosh deg exp floor fmod frexp "
        "huge ldexp log log10 max maxinteger min mininteger modf pi pow rad "
        "sin sinh sqrt tan tanh tointeger type ult";
    if (strcmp(math, core_math) != 0 && strcmp(math, compat_math) != 0)
        print_error("math: %s\n", math);
    assert_true(strcmp(math, core_math) == 0 ||
                strcmp(math, compat_math) == 0);
    free(math);
    lua_pop(L, 1); /* base */

    /* The real global table is empty and the library cache gone. */
    lua_pushglobaltable(L);
    char *globals = table_keys(L);
    assert_string_equal(globals, "");
    free(globals);
    lua_pop(L, 1);
    assert_int_equal(lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE),
                     LUA_TNIL);
    lua_pop(L, 1);

    /* Lua side: probe every candidate name from a chunk. */
    static const char probe[] =
        "local names = {\n"
        "  '_VERSION', 'assert', 'error', 'getmetatable', 'ipairs', 'next',\n"
        "  'pairs', 'pcall', 'rawequal', 'rawget', 'rawlen', 'rawset',\n"
        "  'select', 'setmetatable', 'tonumber', 'tostring', 'type',\n"
        "  'xpcall', 'print', 'load', 'require', 'string', 'table', 'math',\n"
        "  'utf8', 'dsforge', 'io', 'os', 'debug', 'package', 'coroutine',\n"
        "  'dofile', 'loadfile', 'collectgarbage', 'warn', '_G', '_ENV',\n"
        "  'module', 'setfenv', 'getfenv', 'unpack', 'loadstring',\n"
        "  'newproxy', 'gcinfo', 'jit', 'bit32', 'arg', 'ffi', 'bit',\n"
        "  'loadlib', 'rawprint', 'utf8lib', 'lfs', 'posix', 'socket'}\n"
        "local seen = {}\n"
        "for _, n in ipairs(names) do\n"
        "  local ok, v = pcall(function() return _ENV[n] end)\n"
        "  if ok and v ~= nil then seen[#seen + 1] = n end\n"
        "end\n"
        "table.sort(seen)\n"
        "return table.concat(seen, ' ')\n";
    dsf_diags d = DSF_DIAGS_INIT;
    assert_int_equal(dsf_host_load(h, CHUNK, probe, sizeof probe - 1, &d), 0);
    assert_int_equal(dsf_host_call(h, 0, 1, "probe", &d), 0);
    assert_string_equal(lua_tostring(L, -1), allow);
    lua_pop(L, 1);
    dsf_diags_free(&d);

    dsf_host_free(h);
    dsf_srccache_free(src);
    free(allow);
    free(doc);
}

/* Every C function a script can reach, called with wrong arguments: the
** allow-listed globals (from dsf_sandbox_globals, so a name added to the
** list is probed too), the functions of each library table, and the C
** closures they hand out (the iterators of pairs, ipairs, string.gmatch,
** utf8.codes, next). Each call must come back through pcall (a Lua error
** or a result), never crash the process (run under ASan in CI). */
static void test_every_c_function_checks_arguments(void **state)
{
    (void)state;
    dsf_srccache *src = dsf_srccache_new();
    dsf_diags warnings = DSF_DIAGS_INIT;
    dsf_host_config cfg = {small_limits(), NULL, 0, src, &warnings};
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_host *h = NULL;
    assert_int_equal(dsf_host_new(&h, &cfg, &d), 0);
    lua_State *L = dsf_host_state(h);
    lua_newtable(L);
    for (int i = 0; dsf_sandbox_globals[i].name; i++) {
        lua_pushstring(L, dsf_sandbox_globals[i].name);
        lua_rawseti(L, -2, i + 1);
    }
    dsf_host_set_global(h, "ALLOWED");
    static const char probe[] =
        "local fns, names = {}, {}\n"
        "local function add(name, f)\n"
        "  if type(f) == 'function' then\n"
        "    fns[#fns + 1] = f; names[#names + 1] = name\n"
        "  end\n"
        "end\n"
        "for _, g in ipairs(ALLOWED) do\n"
        "  local v = _ENV[g]\n"
        "  add(g, v)\n"
        "  if type(v) == 'table' then\n"
        "    for _, k in ipairs(dsforge.sorted_keys(v)) do\n"
        "      add(g .. '.' .. k, v[k])\n"
        "    end\n"
        "  end\n"
        "end\n"
        "add('pairs iterator', (pairs({1, a = 2})))\n"
        "add('pairs iterator (empty)', (pairs({})))\n"
        "add('ipairs iterator', (ipairs({1})))\n"
        "add('gmatch iterator', string.gmatch('a b', '%a'))\n"
        "add('utf8.codes iterator', (utf8.codes('ab')))\n"
        "local values = {n = 6}\n"
        "values[2], values[3], values[4] = 42, 'dsforge', {1, x = 2}\n"
        "values[5], values[6] = true, function() return 1 end\n"
        "values[7], values[8] = dsforge.null, 1.5\n"
        "values.n = 8\n"
        "local calls, errors = 0, 0\n"
        "local function try(f, ...)\n"
        "  calls = calls + 1\n"
        "  if not pcall(f, ...) then errors = errors + 1 end\n"
        "end\n"
        "for i, f in ipairs(fns) do\n"
        "  if names[i] ~= 'error' then\n"
        "    try(f)\n"
        "    for a = 1, values.n do\n"
        "      try(f, values[a])\n"
        "      for b = 1, values.n do try(f, values[a], values[b]) end\n"
        "    end\n"
        "  end\n"
        "end\n"
        "return #fns .. ' functions, ' .. calls .. ' calls, ' .. errors\n";
    assert_int_equal(dsf_host_load(h, CHUNK, probe, sizeof probe - 1, &d), 0);
    int rc = dsf_host_call(h, 0, 1, "probe", &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    assert_int_equal(rc, 0);
    const char *res = lua_tostring(L, -1);
    assert_non_null(res);
    print_message("%s errors\n", res);
    /* The walk really found them (88 with Debian's Lua 5.4). */
    assert_true(atoi(res) > 80);
    assert_true(warnings.len > 0); /* dsforge.warn was reached */
    lua_pop(L, 1);
    dsf_diags_free(&d);
    dsf_diags_free(&warnings);
    dsf_host_free(h);
    dsf_srccache_free(src);
}

/* ------------------------------------------------------------------ */
/* Error objects (errobj.h): the location comes from fields, not text. */

static void test_fail_message_does_not_move_the_location(void **state)
{
    (void)state;
    outcome o = run_code("local x = 1\n"
                         "dsforge.fail('value at b.lua:12: is bad')\n");
    assert_int_equal(o.rc, DSF_EINPUT);
    assert_string_equal(o.file, CHUNK_FILE);
    assert_int_equal(o.line, 2);
    assert_string_equal(o.message, "value at b.lua:12: is bad");
    assert_null(o.trace);
    outcome_free(&o);
    /* Called straight from pcall, dsforge.fail has no Lua caller at
    ** level 1: the location is the chunk's line, never "x a" line 12
    ** read out of the message. */
    o = run_code("local x = 1\n"
                 "local ok, e = pcall(dsforge.fail, 'x a:12: b')\n"
                 "error(e, 0)\n");
    assert_int_equal(o.rc, DSF_EINPUT);
    assert_string_equal(o.file, CHUNK_FILE);
    assert_int_equal(o.line, 2);
    assert_string_equal(o.message, "x a:12: b");
    outcome_free(&o);
}

static void test_caught_fail_is_not_an_input_error(void **state)
{
    (void)state;
    /* No side flag: a dsforge.fail caught by the script does not turn a
    ** later bug into an input error. */
    expect_script_error("pcall(dsforge.fail, 'caught')\n"
                        "error('a real bug')\n", "a real bug", 2);
}

static void test_error_object_reads_as_a_string(void **state)
{
    (void)state;
    outcome o = run_code("local ok, e = pcall(function()\n"
                         "  dsforge.fail('m')\nend)\n"
                         "return tostring(e) .. ' ' .. type(e)\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result, "escape.lua:2: m table");
    outcome_free(&o);
    /* Rethrown, it is still the input error at its first place. */
    o = run_code("local ok, e = pcall(function()\n"
                 "  dsforge.fail('m')\nend)\nerror(e)\n");
    assert_int_equal(o.rc, DSF_EINPUT);
    assert_int_equal(o.line, 2);
    outcome_free(&o);
}

static void test_sandbox_errors_are_objects(void **state)
{
    (void)state;
    outcome o = run_code("local ok, e = pcall(function() return nope end)\n"
                         "return type(e) .. ' ' .. tostring(e)\n");
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.result,
                        "table escape.lua:1: undefined global 'nope'");
    outcome_free(&o);
}

/* ------------------------------------------------------------------ */
/* Nested protected calls: the outer call's limits hold afterwards. */

static dsf_host *nesting_host;

/* A C function a script calls that calls back into Lua through the one
** protected entry. */
static int l_nested(lua_State *L)
{
    (void)L;
    static const char inner[] = "local n = 0\nfor i = 1, 10 do n = n + i end\n"
                                "return n\n";
    dsf_diags d = DSF_DIAGS_INIT;
    int rc = dsf_host_load(nesting_host, "=inner", inner, sizeof inner - 1,
                           &d);
    if (!rc)
        rc = dsf_host_call(nesting_host, 0, 1, "inner call", &d);
    dsf_diags_free(&d);
    if (rc)
        return luaL_error(L, "inner call failed");
    return 1;
}

/* Runs code in a child process with a nested call available as nested();
** returns the child's exit status (the parent only waits, bounded so a
** regression fails instead of hanging). */
static int run_nested_in_child(const char *code, dsf_limits lim)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dsf_srccache *src = dsf_srccache_new();
        nesting_host = host_new(src, lim);
        lua_pushcfunction(dsf_host_state(nesting_host), l_nested);
        dsf_host_set_global(nesting_host, "nested");
        dsf_diags d = DSF_DIAGS_INIT;
        int rc = dsf_host_load(nesting_host, CHUNK, code, strlen(code), &d);
        if (!rc)
            rc = dsf_host_call(nesting_host, 0, 0, "outer call", &d);
        dsf_diags_print(&d, stderr, false);
        bool limit = false;
        for (size_t i = 0; i < d.len; i++)
            if (d.items[i].message && strstr(d.items[i].message, "limit of"))
                limit = true;
        _exit(rc == DSF_ESCRIPT && limit ? 7 : 1);
    }
    int status = 0;
    for (int i = 0; i < 600; i++) { /* a guard, not a measurement */
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        struct timespec nap = {0, 50000000L};
        nanosleep(&nap, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fail_msg("the outer call's limits did not hold after a nested call");
    return -1;
}

static void test_nested_call_keeps_outer_instruction_limit(void **state)
{
    (void)state;
    dsf_limits lim = {8u << 20, 2000000u, 20.0};
    /* 7: the outer call ended with the instruction limit's error. */
    assert_int_equal(run_nested_in_child("assert(nested() == 55)\n"
                                         "while true do end\n", lim), 7);
}

static void test_nested_call_keeps_outer_backstop(void **state)
{
    (void)state;
    /* string.find with this pattern never returns to the VM: only the
    ** SIGALRM backstop (exit code 5) can end it. */
    dsf_limits lim = {8u << 20, 4000000000u, 0.2};
    assert_int_equal(run_nested_in_child(
                         "assert(nested() == 55)\n"
                         "return string.find(string.rep('a', 60),\n"
                         "  string.rep('a*', 60) .. 'b')\n", lim), 5);
}

/* ------------------------------------------------------------------ */
/* The count hook only where code from outside the executable runs. */

static int hook_is_set(lua_State *L)
{
    lua_pushboolean(L, lua_gethook(L) != NULL);
    return 1;
}

/* Whether a protected call on h runs with a hook set. */
static bool call_has_hook(dsf_host *h)
{
    dsf_diags d = DSF_DIAGS_INIT;
    int rc = dsf_host_cpcall(h, hook_is_set, NULL, 1, "hook probe", &d);
    assert_int_equal(rc, 0);
    lua_State *L = dsf_host_state(h);
    bool set = lua_toboolean(L, -1);
    lua_pop(L, 1);
    dsf_diags_free(&d);
    return set;
}

static void test_hook_only_for_loaded_text(void **state)
{
    (void)state;
    dsf_srccache *src = dsf_srccache_new();
    dsf_host *h = host_new(src, small_limits());
    /* Nothing but the executable's own code so far: no count hook. */
    assert_false(dsf_limits_is_untrusted(dsf_host_state(h)));
    assert_false(call_has_hook(h));
    dsf_diags d = DSF_DIAGS_INIT;
    assert_int_equal(dsf_host_load(h, CHUNK, "return 1", 8, &d), 0);
    lua_pop(dsf_host_state(h), 1);
    /* A text chunk marks the state for good. */
    assert_true(dsf_limits_is_untrusted(dsf_host_state(h)));
    assert_true(call_has_hook(h));
    dsf_diags_free(&d);
    dsf_host_free(h);
    dsf_srccache_free(src);
}

/* Runs code in a state that is not marked untrusted (as the built-in,
** embedded chunks are loaded), under lim. */
static outcome run_unmarked(dsf_limits lim, const char *code)
{
    outcome o;
    memset(&o, 0, sizeof o);
    dsf_srccache *src = dsf_srccache_new();
    double t0 = mono();
    dsf_host *h = host_new(src, lim);
    lua_State *L = dsf_host_state(h);
    dsf_diags d = DSF_DIAGS_INIT;
    assert_int_equal(luaL_loadbufferx(L, code, strlen(code), CHUNK, "t"),
                     LUA_OK);
    dsf_sandbox_set_env(L); /* memory is plentiful: cannot raise here */
    assert_false(dsf_limits_is_untrusted(L));
    int rc = dsf_host_call(h, 0, 1, "unmarked test", &d);
    capture(&o, rc, h, &d);
    dsf_host_free(h);
    o.seconds = mono() - t0;
    dsf_diags_free(&d);
    dsf_srccache_free(src);
    return o;
}

static void test_unhooked_state_stopped_by_timer(void **state)
{
    (void)state;
    /* No count hook: the instruction limit does not apply, the time limit
    ** does (the periodic SIGALRM arms the hook once the call is late),
    ** and a pcall cannot swallow it. The backstop (exit code 5) would end
    ** this process at 1.45 s. */
    dsf_limits lim = {8u << 20, 1000000u, 0.3};
    outcome o = run_unmarked(lim, "local n = 0\nwhile true do n = n + 1 end\n");
    expect_limit(&o, "time limit of 0.3 s exceeded", "--max-seconds");
    assert_true(o.seconds >= 0.3);
    outcome_free(&o);
    o = run_unmarked(lim, "while true do\n"
                          "  pcall(function() while true do end end)\n"
                          "end\n");
    expect_limit(&o, "time limit of 0.3 s exceeded", "--max-seconds");
    outcome_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_os_execute),
        cmocka_unit_test(test_fail_message_does_not_move_the_location),
        cmocka_unit_test(test_caught_fail_is_not_an_input_error),
        cmocka_unit_test(test_error_object_reads_as_a_string),
        cmocka_unit_test(test_sandbox_errors_are_objects),
        cmocka_unit_test(test_nested_call_keeps_outer_instruction_limit),
        cmocka_unit_test(test_nested_call_keeps_outer_backstop),
        cmocka_unit_test(test_every_c_function_checks_arguments),
        cmocka_unit_test(test_pairs_visits_sorted_keys),
        cmocka_unit_test(test_sorted_keys_sizes),
        cmocka_unit_test(test_io_open),
        cmocka_unit_test(test_require_os_not_found),
        cmocka_unit_test(test_require_io_not_found),
        cmocka_unit_test(test_require_path_traversal),
        cmocka_unit_test(test_package_loadlib),
        cmocka_unit_test(test_debug_getregistry),
        cmocka_unit_test(test_collectgarbage_absent),
        cmocka_unit_test(test_dofile_absent),
        cmocka_unit_test(test_loadfile_absent),
        cmocka_unit_test(test_warn_and_coroutine_absent),
        cmocka_unit_test(test_math_random_absent),
        cmocka_unit_test(test_undefined_global),
        cmocka_unit_test(test_env_metatable_protected),
        cmocka_unit_test(test_string_dump_absent),
        cmocka_unit_test(test_load_string_dump),
        cmocka_unit_test(test_load_real_bytecode_text_only),
        cmocka_unit_test(test_load_real_bytecode_mode_b),
        cmocka_unit_test(test_load_handmade_binary),
        cmocka_unit_test(test_host_load_refuses_binary),
        cmocka_unit_test(test_loaded_text_runs_in_sandbox),
        cmocka_unit_test(test_string_metatable_read),
        cmocka_unit_test(test_string_metatable_write),
        cmocka_unit_test(test_type),
        cmocka_unit_test(test_gc_metamethod_refused),
        cmocka_unit_test(test_gc_loop_attempt),
        cmocka_unit_test(test_infinite_loop),
        cmocka_unit_test(test_infinite_loop_in_pcall),
        cmocka_unit_test(test_infinite_loop_in_xpcall),
        cmocka_unit_test(test_xpcall_handler_loops),
        cmocka_unit_test(test_xpcall_handler_still_works),
        cmocka_unit_test(test_close_handler_loops),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_hook_only_for_loaded_text),
        cmocka_unit_test(test_unhooked_state_stopped_by_timer),
        cmocka_unit_test(test_limits_rearm_per_call),
        cmocka_unit_test(test_string_rep_huge),
        cmocka_unit_test(test_table_growth_bomb),
        cmocka_unit_test(test_unbounded_recursion),
        cmocka_unit_test(test_recursion_through_c),
        cmocka_unit_test(test_error_table),
        cmocka_unit_test(test_error_tostring),
        cmocka_unit_test(test_print_goes_to_stderr),
        cmocka_unit_test(test_environment_walk),
        cmocka_unit_test(test_gc_loading_pause),
        cmocka_unit_test(test_gc_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
