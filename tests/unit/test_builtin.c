/*
** test_builtin.c -- the built-in chunks (lua/builtin.h) carry the sha256
** of their source computed at build time, and the source cache
** (lua/srccache.h) serves it: for an embedded path, and for a file on disk
** whose text is a built-in's; any other text is hashed as read. The
** embedded bytecode is the source's compilation without the names of
** local variables and of upvalues other than _ENV (bcstrip.h): the same code, constants and functions, the same line
** information (error locations), fewer strings to intern; or, for a
** data module, a snapshot that builds an equal value.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/diag.h"
#include "core/sha256.h"
#include "lua/builtin.h"
#include "lua/scriptfs.h"
#include "lua/srccache.h"
#include "tools/bcstrip.h"

static void test_digests_are_the_sources(void **state)
{
    (void)state;
    size_t n = 0;
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++, n++) {
        char hex[65];
        dsf_sha256_hex(hex, c->src, c->src_len);
        assert_non_null(c->sha256);
        assert_string_equal(c->sha256, hex);
    }
    assert_true(n > 10);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_cache_serves_build_digest(void **state)
{
    (void)state;
    const dsf_builtin_chunk *c = dsf_builtin_chunks;
    char embedded[4200];
    snprintf(embedded, sizeof embedded, "%s/%s", DSF_BUILTIN_ROOT, c->rel);
    dsf_srccache *cache = dsf_srccache_new();
    dsf_diags d = DSF_DIAGS_INIT;
    const dsf_source *s;
    assert_int_equal(dsf_srccache_get(cache, embedded, &s, &d), 0);
    assert_string_equal(dsf_source_sha256(s), c->sha256);

    /* A file on disk named like the built-in, same text: same digest. */
    char dir[] = "/tmp/dsf-test-builtin.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char same[4300], other[4300];
    const char *slash = strrchr(c->rel, '/');
    snprintf(same, sizeof same, "%s/%s", dir, slash ? slash + 1 : c->rel);
    write_file(same, c->src, c->src_len);
    /* Different text: its own digest. */
    snprintf(other, sizeof other, "%s/other.lua", dir);
    write_file(other, "return 1\n", 9);
    const dsf_source *a, *b;
    assert_int_equal(dsf_srccache_get(cache, same, &a, &d), 0);
    assert_int_equal(dsf_srccache_get(cache, other, &b, &d), 0);
    char hex[65];
    dsf_sha256_hex(hex, c->src, c->src_len);
    assert_string_equal(dsf_source_sha256(a), hex);
    dsf_sha256_hex(hex, "return 1\n", 9);
    assert_string_equal(dsf_source_sha256(b), hex);
    dsf_srccache_free(cache);
    dsf_diags_free(&d);
    unlink(same);
    unlink(other);
    rmdir(dir);
}

/* In a plain state with the debug library: f = the embedded chunk,
** g = the source compiled here; both stripped dump to the same bytes, the
** main functions have the same lines, and the embedded one is smaller.
** A data module's embedded chunk (snapshot) instead builds a value equal
** to the module's: the same tables, markers, scalars and their kinds,
** with its parts (a schema section's fields and doc, a release's keys of
** one section) loaded by PART when a key is first read. */
static const char check_lua[] =
    "local f, g, snapshot, part = ...\n"
    "if snapshot then\n"
    "  local ARR, OBJ, NULL = {}, {}, {}\n"
    "  dsforge = { null = NULL,\n"
    "    array = function(t) return setmetatable(t or {}, ARR) end,\n"
    "    object = function(t) return setmetatable(t or {}, OBJ) end }\n"
    "  local seen, n = {}, 0\n"
    "  local function same(a, b)\n"
    "    if type(a) ~= type(b) then return false end\n"
    "    if type(a) ~= 'table' or a == NULL or b == NULL then\n"
    "      return a == b and math.type(a) == math.type(b)\n"
    "    end\n"
    "    if seen[a] then return seen[a] == b end\n"
    "    seen[a], n = b, n + 1\n"
    "    local ma = getmetatable(a)\n"
    "    if ma and ma.__pairs then\n"
    "      for k in next, b do\n"
    "        if rawget(a, k) == nil then\n"
    "          assert(a[k] ~= nil, 'no part has ' .. tostring(k))\n"
    "        end\n"
    "      end\n"
    "      pairs(a)\n"
    "    end\n"
    "    if getmetatable(a) ~= getmetatable(b) then return false end\n"
    "    for k, v in next, a do if not same(v, rawget(b, k)) then\n"
    "      return false end end\n"
    "    for k in next, b do if rawget(a, k) == nil then return false end end\n"
    "    return true\n"
    "  end\n"
    "  assert(same(f(part), g()), 'the snapshot builds another value')\n"
    "  assert(n > 50, 'a small value')\n"
    "  return true\n"
    "end\n"
    "assert(string.dump(f, true) == string.dump(g, true), 'code differs')\n"
    "local a = debug.getinfo(f, 'L').activelines\n"
    "local b = debug.getinfo(g, 'L').activelines\n"
    "for k in pairs(a) do assert(b[k], 'line ' .. k) end\n"
    "for k in pairs(b) do assert(a[k], 'line ' .. k) end\n"
    "assert(debug.getupvalue(f, 1) == '_ENV', 'the main chunk names _ENV')\n"
    "local fi, gi = debug.getinfo(f, 'S'), debug.getinfo(g, 'S')\n"
    "assert(fi.linedefined == gi.linedefined)\n"
    "assert(fi.lastlinedefined == gi.lastlinedefined)\n"
    "return #string.dump(f) < #string.dump(g)\n";

/* PART(i) for the chunk in upvalue 1 (what lua/chunk.c gives a data
** module's main chunk). */
static int load_part(lua_State *L)
{
    const dsf_builtin_chunk *c = lua_touserdata(L, lua_upvalueindex(1));
    lua_Integer i = luaL_checkinteger(L, 1);
    assert_true(i >= 1 && (size_t)i <= c->nparts);
    dsf_builtin_reader r;
    dsf_builtin_reader_init_part(&r, c, (size_t)i - 1, c->rel);
    assert_int_equal(lua_load(L, dsf_builtin_read, &r, "=x", "b"), LUA_OK);
    return 1;
}

static void test_bytecode_keeps_code_and_lines(void **state)
{
    (void)state;
    size_t smaller = 0, n = 0, snapshots = 0, parts = 0;
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++, n++) {
        snapshots += c->snapshot != 0;
        parts += c->nparts;
        assert_true(c->snapshot || c->nparts == 0);
        lua_State *L = luaL_newstate();
        assert_non_null(L);
        luaL_openlibs(L);
        assert_int_equal(luaL_loadstring(L, check_lua), LUA_OK);
        dsf_builtin_reader r;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", DSF_BUILTIN_ROOT, c->rel);
        dsf_builtin_reader_init(&r, c, path);
        assert_int_equal(lua_load(L, dsf_builtin_read, &r, "=x", "b"),
                         LUA_OK);
        assert_int_equal(luaL_loadbufferx(L, (const char *)c->src,
                                          c->src_len, path, "t"),
                         LUA_OK);
        lua_pushboolean(L, c->snapshot);
        lua_pushlightuserdata(L, (void *)c);
        lua_pushcclosure(L, load_part, 1);
        if (lua_pcall(L, 4, 1, 0) != LUA_OK)
            fail_msg("%s: %s", c->rel, lua_tostring(L, -1));
        smaller += lua_toboolean(L, -1);
        lua_close(L);
    }
    /* Every chunk with a local variable is smaller. */
    assert_true(smaller > n / 2);
    /* The schema, the model catalog and every release's facts. */
    assert_true(snapshots >= 3);
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++)
        if (!strcmp(c->rel, "plugins/deepspeed/catalog.lua") ||
            !strcmp(c->rel, "plugins/deepspeed/schema.lua"))
            assert_true(c->snapshot);
    /* The schema's sections and the releases' keys are parts, and the
    ** catalog's models (one part per name up to its first dot). */
    assert_true(parts >= 100);
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++)
        if (!strcmp(c->rel, "plugins/deepspeed/catalog.lua"))
            assert_true(c->nparts >= 10);
}

typedef struct dumped {
    char data[8192];
    size_t len;
} dumped;

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    dumped *d = ud;
    if (sz > sizeof d->data - d->len)
        return 1;
    memcpy(d->data + d->len, p, sz);
    d->len += sz;
    return 0;
}

/* The error message of calling the stripped compilation of text. */
static const char *stripped_error(lua_State *L, const char *text)
{
    assert_int_equal(luaL_loadbufferx(L, text, strlen(text), "=t", "t"),
                     LUA_OK);
    static dumped d;
    d.len = 0;
    assert_int_equal(lua_dump(L, dump_writer, &d, 0), 0);
    lua_pop(L, 1);
    unsigned char *out;
    size_t out_len;
    assert_int_equal(dsf_bc_strip(&out, &out_len,
                                  (const unsigned char *)d.data, d.len), 0);
    assert_true(out_len < d.len);
    assert_int_equal(luaL_loadbufferx(L, (const char *)out, out_len, "=t",
                                      "b"), LUA_OK);
    free(out);
    assert_int_not_equal(lua_pcall(L, 0, 0, 0), LUA_OK);
    return lua_tostring(L, -1);
}

static void test_strip_keeps_env_name(void **state)
{
    (void)state;
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    luaL_openlibs(L);
    /* A global, read in a nested function through the _ENV upvalue, is
    ** still named; a local and an upvalue are not. */
    assert_string_equal(stripped_error(L, "local up = 1\n"
                                          "local function f() return up + "
                                          "nothing_here() end\n"
                                          "f()\n"),
                        "t:2: attempt to call a nil value (global "
                        "'nothing_here')");
    assert_string_equal(stripped_error(L, "local up\n"
                                          "local function f() return "
                                          "up.x end\n"
                                          "f()\n"),
                        "t:2: attempt to index a nil value (upvalue '?')");
    assert_string_equal(stripped_error(L, "local x\nreturn x.y\n"),
                        "t:2: attempt to index a nil value");
    /* The unstripped compilation named them. */
    assert_int_equal(luaL_loadstring(L, "local up\n"
                                        "local function f() return up.x end\n"
                                        "f()\n"), LUA_OK);
    assert_int_equal(lua_pcall(L, 0, 0, 0), LUA_ERRRUN);
    assert_non_null(strstr(lua_tostring(L, -1), "(upvalue 'up')"));
    /* Not a chunk. */
    unsigned char *out = (unsigned char *)"x";
    size_t out_len = 1;
    assert_int_equal(dsf_bc_strip(&out, &out_len,
                                  (const unsigned char *)"\x1bLua", 4), -1);
    assert_null(out);
    lua_close(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digests_are_the_sources),
        cmocka_unit_test(test_cache_serves_build_digest),
        cmocka_unit_test(test_bytecode_keeps_code_and_lines),
        cmocka_unit_test(test_strip_keeps_env_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
