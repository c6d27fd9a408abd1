/*
** test_lua_suites.c -- runs a tests/lua/test_*.lua suite inside the real
** sandbox (contrib/docs/lua-tests.md): every test in a fresh state, with the
** plugins directory and then the suite's own directory (for shared fixtures
** such as fixtures/configs.lua) on require's path, and the assertion table T.
**
** Usage: test_lua_suites SUITE.lua PLUGINS_DIR
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>

#include "core/diag.h"
#include "core/xalloc.h"
#include "lua/host.h"

static const char prelude[] =
    "local function show(v, depth)\n"
    "  depth = depth or 0\n"
    "  if type(v) == 'string' then return string.format('%q', v) end\n"
    "  if type(v) ~= 'table' or depth > 4 then return tostring(v) end\n"
    "  local parts = {}\n"
    "  for _, k in ipairs(dsforge.sorted_keys(v)) do\n"
    "    parts[#parts + 1] = tostring(k) .. '=' .. show(v[k], depth + 1)\n"
    "  end\n"
    "  return '{' .. table.concat(parts, ', ') .. '}'\n"
    "end\n"
    "local function deq(a, b)\n"
    "  if type(a) == 'number' and type(b) == 'number' then return a == b end\n"
    "  if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end\n"
    "  for _, k in ipairs(dsforge.sorted_keys(a)) do\n"
    "    if not deq(a[k], b[k]) then return false end\n"
    "  end\n"
    "  for _, k in ipairs(dsforge.sorted_keys(b)) do\n"
    "    if a[k] == nil then return false end\n"
    "  end\n"
    "  return true\n"
    "end\n"
    "local function pre(m) return m and (m .. ': ') or '' end\n"
    "return {\n"
    "  eq = function(a, e, m)\n"
    "    if not deq(a, e) then\n"
    "      error(pre(m) .. 'expected ' .. show(e) .. ', got ' .. show(a), 2)\n"
    "    end\n"
    "  end,\n"
    "  near = function(a, e, tol, m)\n"
    "    if type(a) ~= 'number' or math.abs(a - e) > tol * math.abs(e) then\n"
    "      error(pre(m) .. 'expected ~' .. tostring(e) .. ', got ' ..\n"
    "            tostring(a), 2)\n"
    "    end\n"
    "  end,\n"
    "  truthy = function(v, m) if not v then error(m or 'expected truthy', 2) end end,\n"
    "  falsy = function(v, m) if v then error(m or 'expected falsy', 2) end end,\n"
    "  errors = function(fn, pat, m)\n"
    "    local ok, err = pcall(fn)\n"
    "    if ok then error(pre(m) .. 'expected an error', 2) end\n"
    "    local s = tostring(err)\n"
    "    if not string.find(s, pat) and not string.find(s, pat, 1, true) then\n"
    "      error(pre(m) .. \"error '\" .. s .. \"' does not match '\" .. pat ..\n"
    "            \"'\", 2)\n"
    "    end\n"
    "  end,\n"
    "  fail = function(m) error(m, 2) end,\n"
    "}\n";

static const char *suite_path;
static const char *plugin_dir;
static char *suite_dir; /* owned: suite_path up to its last '/', or "." */

/* A fresh host with T installed and the suite's table on the stack. */
static dsf_host *open_suite(dsf_srccache *src, dsf_diags *d)
{
    static const char *dirs[2];
    dirs[0] = plugin_dir;
    dirs[1] = suite_dir;
    dsf_limits lim = DSF_LIMITS_DEFAULT;
    lim.memory = 256u << 20;
    /* A suite tests plugin logic, not the limits (tests/cli/test_sandbox.py
    ** does): a sanitizer build on a loaded machine runs several times
    ** slower, and ctest's TIMEOUT still bounds a hang. */
    lim.seconds = 60.0;
    dsf_host_config hc = {lim, dirs, 2, src, d};
    dsf_host *h;
    if (dsf_host_new(&h, &hc, d) != 0)
        return NULL;
    if (dsf_host_load(h, "=T", prelude, sizeof prelude - 1, d) != 0 ||
        dsf_host_call(h, 0, 1, "test prelude", d) != 0) {
        dsf_host_free(h);
        return NULL;
    }
    dsf_host_set_global(h, "T");
    if (dsf_host_load_file(h, suite_path, d) != 0 ||
        dsf_host_call(h, 0, 1, "test suite", d) != 0) {
        dsf_host_free(h);
        return NULL;
    }
    return h;
}

static void run_one(void **state)
{
    const char *name = *state;
    dsf_srccache *src = dsf_srccache_new();
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_host *h = open_suite(src, &d);
    int rc = -1;
    if (h) {
        lua_State *L = dsf_host_state(h);
        lua_getfield(L, -1, name);
        char *what = dsf_xasprintf("test %s", name);
        rc = dsf_host_call(h, 0, 0, what, &d);
        free(what);
    }
    if (rc != 0 || dsf_diags_count(&d, DSF_ERROR))
        dsf_diags_print(&d, stderr, false);
    dsf_host_free(h);
    dsf_srccache_free(src);
    size_t errors = dsf_diags_count(&d, DSF_ERROR);
    dsf_diags_free(&d);
    assert_int_equal(rc, 0);
    assert_int_equal(errors, 0);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_lua_suites SUITE.lua PLUGINS_DIR\n");
        return 2;
    }
    suite_path = argv[1];
    plugin_dir = argv[2];
    const char *slash = strrchr(suite_path, '/');
    suite_dir = slash ? dsf_xasprintf("%.*s", (int)(slash - suite_path), suite_path)
                      : dsf_xasprintf(".");
    /* Collect the test names (sorted) from one evaluation of the suite. */
    dsf_srccache *src = dsf_srccache_new();
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_host *h = open_suite(src, &d);
    if (!h) {
        dsf_diags_print(&d, stderr, false);
        free(suite_dir);
        return 1;
    }
    lua_State *L = dsf_host_state(h);
    size_t n = 0, cap = 0;
    char **names = NULL;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_isfunction(L, -1)) {
            dsf_xgrow((void **)&names, &cap, n + 1, sizeof *names);
            names[n++] = dsf_xstrdup(lua_tostring(L, -2));
        }
        lua_pop(L, 1);
    }
    dsf_host_free(h);
    dsf_srccache_free(src);
    dsf_diags_free(&d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    struct CMUnitTest *tests = dsf_xcalloc(n ? n : 1, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        tests[i].name = names[i];
        tests[i].test_func = run_one;
        tests[i].initial_state = names[i];
    }
    int failed = _cmocka_run_group_tests(suite_path, tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(tests);
    free(suite_dir);
    return failed ? 1 : 0;
}
