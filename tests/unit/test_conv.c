/*
** test_conv.c -- the Lua <-> JSON bridge (src/lua/conv.h): round trips,
** number kinds, markers and sentinels, every error with its path, and
** determinism across states.
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

#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "doc/doc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"
#include "lua/conv.h"
#include "lua/host.h"

typedef struct fixture {
    dsf_srccache *src;
    dsf_host *h;
} fixture;

static int setup(void **state)
{
    fixture *f = dsf_xcalloc(1, sizeof *f);
    f->src = dsf_srccache_new();
    dsf_host_config cfg = {{16u << 20, 20000000u, 10.0}, NULL, 0, f->src,
                           NULL};
    dsf_diags d = DSF_DIAGS_INIT;
    int rc = dsf_host_new(&f->h, &cfg, &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    dsf_diags_free(&d);
    *state = f;
    return rc ? -1 : 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dsf_host_free(f->h);
    dsf_srccache_free(f->src);
    free(f);
    return 0;
}

/* Runs code (one result) and leaves the result on the stack. */
static void eval(dsf_host *h, const char *code)
{
    dsf_diags d = DSF_DIAGS_INIT;
    int rc = dsf_host_load(h, "@conv.lua", code, strlen(code), &d);
    if (!rc)
        rc = dsf_host_call(h, 0, 1, "conv test", &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    dsf_diags_free(&d);
    assert_int_equal(rc, 0);
}

static cJSON not_set;

/* Converts the value on top of the stack (and pops it). Checks the
** contract: the stack is unchanged, *out and *err are set consistently. */
static int convert_top(lua_State *L, unsigned flags, cJSON **tree,
                       char **err)
{
    int top = lua_gettop(L);
    cJSON *out = &not_set;
    char *e = (char *)"not set";
    int rc = dsf_lua_to_json(&out, &e, L, -1, flags);
    assert_int_equal(lua_gettop(L), top);
    if (rc == 0) {
        assert_null(e);
        assert_non_null(out);
        assert_ptr_not_equal(out, &not_set);
    } else {
        assert_int_equal(rc, -1);
        assert_null(out);
        assert_non_null(e);
    }
    lua_pop(L, 1);
    *tree = out;
    *err = e;
    return rc;
}

/* code -> Lua value -> compact canonical JSON (or NULL and *err). */
static char *lua_to_text(dsf_host *h, const char *code, unsigned flags,
                         char **err)
{
    eval(h, code);
    cJSON *tree;
    if (convert_top(dsf_host_state(h), flags, &tree, err))
        return NULL;
    char *text = dsf_json_print(tree, false);
    cJSON_Delete(tree);
    return text;
}

static void expect_json(void **state, const char *code, const char *want)
{
    fixture *f = *state;
    char *err = NULL;
    char *got = lua_to_text(f->h, code, 0, &err);
    if (!got)
        print_error("conversion failed: %s\n", err);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void expect_conv_error(void **state, const char *code, unsigned flags,
                              const char *want)
{
    fixture *f = *state;
    char *err = NULL;
    char *got = lua_to_text(f->h, code, flags, &err);
    if (got)
        print_error("expected an error, got %s\n", got);
    assert_null(got);
    assert_string_equal(err, want);
    free(err);
}

/* ------------------------------------------------------------------ */
/* Round trips. */

static int push_doc(lua_State *L)
{
    const cJSON *doc = lua_touserdata(L, 1);
    dsf_json_push(L, doc);
    return 1;
}

/* JSON text -> cJSON -> Lua (optionally through an identity Lua function)
** -> JSON: the canonical bytes must not change. */
static void round_trip(dsf_host *h, const char *json, bool through_lua)
{
    lua_State *L = dsf_host_state(h);
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = NULL;
    int rc = dsf_json_parse(&doc, NULL, "rt.json", json, strlen(json), &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    assert_int_equal(rc, 0);
    char *want = dsf_json_print(doc, false);
    if (through_lua) {
        static const char id[] = "return function(x) return x end";
        eval(h, id);
    }
    rc = dsf_host_cpcall(h, push_doc, doc, 1, "push", &d);
    assert_int_equal(rc, 0);
    if (through_lua)
        assert_int_equal(dsf_host_call(h, 1, 1, "identity", &d), 0);
    cJSON *back;
    char *err;
    if (convert_top(L, 0, &back, &err))
        print_error("%s: %s\n", json, err);
    assert_null(err);
    char *got = dsf_json_print(back, false);
    assert_string_equal(got, want);
    assert_int_equal(lua_gettop(L), 0);
    free(got);
    free(want);
    cJSON_Delete(back);
    cJSON_Delete(doc);
    dsf_diags_free(&d);
}

static void test_round_trips(void **state)
{
    fixture *f = *state;
    static const char *const docs[] = {
        "{}",
        "[]",
        "{\"a\":{\"b\":{\"c\":[1,2,{\"d\":[]}]}},\"e\":{}}",
        "[[],{},[[]],[{}],null,true,false]",
        "{\"s\":\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\\u00e9\\u20ac"
        "\\ud83d\\ude00\"}",
        "{\"\\u00e9t\\u00e9\":1,\"Z\":2,\"a\":3,\"\\u20ac\":4,\"\":5}",
        "{\"ints\":[0,-1,42,9007199254740992,-9007199254740992,"
        "1000000000000]}",
        "{\"floats\":[0.1,-2.5,1e-7,3.141592653589793,0.30000000000000004,"
        "1.7976931348623157e-300,2.5e-5]}",
        "{\"integral\":[5e8,1.0,-0.0,2E3,1e15]}",
        "{\"n\":null,\"t\":true,\"f\":false,\"list\":[null,null]}",
        "{\"zero_optimization\":{\"stage\":3,\"offload_param\":{"
        "\"device\":\"cpu\",\"pin_memory\":true},"
        "\"reduce_bucket_size\":5e8},\"bf16\":{\"enabled\":\"auto\"}}",
        "\"just a string\"",
        "12",
        "null",
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        round_trip(f->h, docs[i], false);
        round_trip(f->h, docs[i], true);
    }
}

/* An object's members are converted from the pairs kept on the stack up
** to 64 keys and looked up by key beyond (conv.c, KEEP_PAIRS): the same
** JSON either way, at every size around the bound, nested in each other,
** and the same errors. */
static void expect_object_of(dsf_buf *b, int n, int depth)
{
    dsf_buf_putc(b, '{');
    for (int i = 1; i <= n; i++) {
        dsf_buf_printf(b, "%s\"k%03d\":", i > 1 ? "," : "", i);
        if (depth > 0 && i % 16 == 0)
            expect_object_of(b, n, depth - 1);
        else
            dsf_buf_printf(b, "%d", i);
    }
    dsf_buf_putc(b, '}');
}

static void test_objects_of_any_size(void **state)
{
    static const int sizes[] = {1, 2, 16, 63, 64, 65, 66, 130};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        char code[400];
        snprintf(code, sizeof code,
                 "local function obj(n, depth) local t = {} "
                 "for i = n, 1, -1 do local k = string.format('k%%03d', i) "
                 "if depth > 0 and i %% 16 == 0 then t[k] = obj(n, depth - 1) "
                 "else t[k] = i end end return t end "
                 "return obj(%d, 2)", sizes[s]);
        dsf_buf want = DSF_BUF_INIT;
        expect_object_of(&want, sizes[s], 2);
        expect_json(state, code, want.data);
        dsf_buf_free(&want);
    }
    /* A bad key or value found after the first 64 pairs, and before. */
    expect_conv_error(state,
                      "local t = {} for i = 1, 100 do t['k' .. i] = i end "
                      "t[1] = 0 return {a = t}",
                      0, "a table mixes array items and object keys at a");
    expect_conv_error(state,
                      "local t = {} for i = 1, 100 do t['k' .. i] = i end "
                      "t[true] = 0 return {a = t}",
                      0, "a table key is not a positive integer or a "
                         "string at a");
    expect_conv_error(state,
                      "local t = {} for i = 1, 100 do t['k' .. i] = i end "
                      "t.k77 = {x = print} return {a = t}",
                      0, "a function value cannot be converted to JSON at "
                         "a.k77.x");
    expect_conv_error(state,
                      "local t = {} for i = 1, 10 do t['k' .. i] = i end "
                      "t.k7 = {x = print} return {a = t}",
                      0, "a function value cannot be converted to JSON at "
                         "a.k7.x");
}

static void test_json_to_lua_types(void **state)
{
    fixture *f = *state;
    static const char json[] =
        "{\"i\":5,\"f\":1.0,\"e\":5e8,\"big\":12345678901234567890,"
        "\"n\":null,\"o\":{},\"a\":[],\"s\":\"x\",\"b\":false}";
    cJSON *doc = NULL;
    dsf_diags d = DSF_DIAGS_INIT;
    assert_int_equal(dsf_json_parse(&doc, NULL, "t.json", json,
                                    sizeof json - 1, &d),
                     0);
    eval(f->h, "return function(d)\n"
               "  return table.concat({math.type(d.i), math.type(d.f),\n"
               "    math.type(d.e), math.type(d.big), tostring(d.e),\n"
               "    tostring(d.n == dsforge.null), dsforge.kind(d.n),\n"
               "    dsforge.kind(d.o), dsforge.kind(d.a), type(d.s),\n"
               "    tostring(d.b), tostring(getmetatable(d.o))}, ' ')\n"
               "end\n");
    assert_int_equal(dsf_host_cpcall(f->h, push_doc, doc, 1, "push", &d), 0);
    assert_int_equal(dsf_host_call(f->h, 1, 1, "types", &d), 0);
    lua_State *L = dsf_host_state(f->h);
    assert_string_equal(lua_tostring(L, -1),
                        "integer float float float 500000000.0 true null object "
                        "array string false false");
    lua_pop(L, 1);
    cJSON_Delete(doc);
    dsf_diags_free(&d);
}

/* ------------------------------------------------------------------ */
/* Numbers. */

static void test_integers_stay_integers(void **state)
{
    fixture *f = *state;
    expect_json(state, "return {a = 1, b = -7, c = 1 << 53, d = -(1 << 53)}",
                "{\"a\":1,\"b\":-7,\"c\":9007199254740992,"
                "\"d\":-9007199254740992}");
    eval(f->h, "return {n = 42}");
    cJSON *tree;
    char *err;
    assert_int_equal(convert_top(dsf_host_state(f->h), 0, &tree, &err), 0);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(tree, "n");
    assert_true(cJSON_IsNumber(n));
    assert_true(dsf_json_is_integer_literal(n));
    assert_string_equal(n->valuestring, "42");
    cJSON_Delete(tree);
}

static void test_integral_floats_become_integers(void **state)
{
    fixture *f = *state;
    expect_json(state, "return {2e8, 1.0, -0.0, 5e8 / 2, 2^53, -3.0}",
                "[200000000,1,0,250000000,9007199254740992,-3]");
    eval(f->h, "return {x = 2e8}");
    cJSON *tree;
    char *err;
    assert_int_equal(convert_top(dsf_host_state(f->h), 0, &tree, &err), 0);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(tree, "x");
    assert_true(dsf_json_is_integer_literal(x));
    assert_string_equal(x->valuestring, "200000000");
    cJSON_Delete(tree);
}

static void test_fractions_survive(void **state)
{
    fixture *f = *state;
    expect_json(state, "return {0.1, -2.5, 1/3, 1e-300, 2^52 - 0.5, 0.1 + 0.2}",
                "[0.1,-2.5,0.3333333333333333,1e-300,4503599627370495.5,"
                "0.30000000000000004]");
    eval(f->h, "return {x = 0.1}");
    cJSON *tree;
    char *err;
    assert_int_equal(convert_top(dsf_host_state(f->h), 0, &tree, &err), 0);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(tree, "x");
    assert_false(dsf_json_is_integer_literal(x));
    assert_true(x->valuedouble == 0.1);
    cJSON_Delete(tree);
}

/* ------------------------------------------------------------------ */
/* Tables, markers and sentinels. */

static void test_empty_tables_and_markers(void **state)
{
    expect_json(state, "return {}", "{}");
    expect_json(state, "return dsforge.array({})", "[]");
    expect_json(state, "return dsforge.array()", "[]");
    expect_json(state, "return dsforge.object({})", "{}");
    expect_json(state, "return dsforge.object()", "{}");
    expect_json(state,
                "return {a = {}, b = dsforge.array(), c = dsforge.object(),\n"
                "  d = {dsforge.array(), {}}, e = dsforge.array({1, 2})}",
                "{\"a\":{},\"b\":[],\"c\":{},\"d\":[[],{}],\"e\":[1,2]}");
    expect_json(state, "return dsforge.object({x = 1})", "{\"x\":1}");
    /* A marked array that got items stays an array. */
    expect_json(state, "local t = dsforge.array() t[1] = 'a' return t",
                "[\"a\"]");
}

static void test_null(void **state)
{
    expect_json(state,
                "return {a = dsforge.null, b = {dsforge.null, 1}, "
                "c = {d = dsforge.null}}",
                "{\"a\":null,\"b\":[null,1],\"c\":{\"d\":null}}");
    expect_json(state, "return dsforge.null", "null");
}

static void test_delete_needs_flag(void **state)
{
    fixture *f = *state;
    expect_conv_error(state,
                      "return {zero_optimization = {stage = dsforge.delete}}",
                      0,
                      "dsforge.delete is only meaningful in a config layer "
                      "at zero_optimization.stage");
    /* Allowed: a tombstone member. */
    eval(f->h, "return {zero_optimization = {stage = dsforge.delete, "
               "keep = 1}}");
    cJSON *tree;
    char *err;
    assert_int_equal(convert_top(dsf_host_state(f->h), DSF_CONV_ALLOW_DELETE,
                                 &tree, &err),
                     0);
    const cJSON *zo = cJSON_GetObjectItemCaseSensitive(tree,
                                                       "zero_optimization");
    assert_true(dsf_doc_is_tombstone(
        cJSON_GetObjectItemCaseSensitive(zo, "stage")));
    assert_false(dsf_doc_is_tombstone(
        cJSON_GetObjectItemCaseSensitive(zo, "keep")));
    cJSON_Delete(tree);
    /* Never as an array item. */
    expect_conv_error(state, "return {a = {1, dsforge.delete}}",
                      DSF_CONV_ALLOW_DELETE,
                      "dsforge.delete cannot be an array item at a");
    expect_conv_error(state, "return {a = {1, dsforge.delete}}", 0,
                      "dsforge.delete is only meaningful in a config layer "
                      "at a[1]");
}

static void test_shared_subtable_is_not_a_cycle(void **state)
{
    expect_json(state, "local s = {1, 2}\nreturn {a = s, b = s, c = {s, s}}",
                "{\"a\":[1,2],\"b\":[1,2],\"c\":[[1,2],[1,2]]}");
}

static void test_raw_access_only(void **state)
{
    /* Metamethods are never called: the raw contents are converted. */
    expect_json(state,
                "local mt = {__index = function() error('index called') end,\n"
                "  __pairs = function() error('pairs called') end,\n"
                "  __len = function() error('len called') end}\n"
                "return {a = setmetatable({x = 1}, mt), "
                "b = setmetatable({7}, mt)}",
                "{\"a\":{\"x\":1},\"b\":[7]}");
}

/* ------------------------------------------------------------------ */
/* Errors, each naming the path. */

static void test_error_mixed_keys(void **state)
{
    expect_conv_error(
        state,
        "return {zero_optimization = {offload_param = {device = "
        "{1, x = 2}}}}",
        0,
        "a table mixes array items and object keys at "
        "zero_optimization.offload_param.device");
}

static void test_error_sparse_array(void **state)
{
    expect_conv_error(state, "return {a = {b = {[1] = 1, [3] = 3}}}", 0,
                      "an array has holes (keys must be 1..n) at a.b");
    expect_conv_error(state, "return {1, 2, nil, 4}", 0,
                      "an array has holes (keys must be 1..n)");
    expect_conv_error(state, "return {x = {[2] = 'b'}}", 0,
                      "an array has holes (keys must be 1..n) at x");
}

static void test_error_bad_keys(void **state)
{
    expect_conv_error(state, "return {a = {[1.5] = true}}", 0,
                      "a table key is not a positive integer or a string "
                      "at a");
    expect_conv_error(state, "return {a = {b = {[0] = 1}}}", 0,
                      "a table key is not a positive integer or a string "
                      "at a.b");
    expect_conv_error(state, "return {[-1] = 1}", 0,
                      "a table key is not a positive integer or a string");
    expect_conv_error(state, "return {a = {[true] = 1}}", 0,
                      "a table key is not a positive integer or a string "
                      "at a");
    expect_conv_error(state, "return {a = {[{}] = 1}}", 0,
                      "a table key is not a positive integer or a string "
                      "at a");
    /* 2.0 is normalised to the integer key 2 by Lua itself. */
    expect_json(state, "return {[1] = 'a', [2.0] = 'b'}", "[\"a\",\"b\"]");
}

static void test_error_function_value(void **state)
{
    expect_conv_error(
        state,
        "return {zero_optimization = {offload_param = {device = print}}}", 0,
        "a function value cannot be converted to JSON at "
        "zero_optimization.offload_param.device");
    expect_conv_error(state, "return {list = {1, 2, function() end}}", 0,
                      "a function value cannot be converted to JSON at "
                      "list[2]");
}

typedef enum odd_kind {
    ODD_FULL_USERDATA,
    ODD_LIGHT_USERDATA,
    ODD_THREAD
} odd_kind;

static int push_odd(lua_State *L)
{
    odd_kind k = *(odd_kind *)lua_touserdata(L, 1);
    static char marker;
    lua_newtable(L);
    lua_newtable(L);
    switch (k) {
    case ODD_FULL_USERDATA:
        lua_newuserdatauv(L, 16, 0);
        break;
    case ODD_LIGHT_USERDATA:
        lua_pushlightuserdata(L, &marker);
        break;
    case ODD_THREAD:
        lua_newthread(L);
        break;
    }
    lua_setfield(L, -2, "device");
    lua_setfield(L, -2, "offload_param");
    return 1;
}

static void test_error_userdata_and_thread(void **state)
{
    fixture *f = *state;
    lua_State *L = dsf_host_state(f->h);
    static const struct {
        odd_kind kind;
        const char *err;
    } cases[] = {
        {ODD_FULL_USERDATA,
         "a userdata value cannot be converted to JSON at "
         "offload_param.device"},
        {ODD_LIGHT_USERDATA,
         "a userdata value cannot be converted to JSON at "
         "offload_param.device"},
        {ODD_THREAD,
         "a thread value cannot be converted to JSON at "
         "offload_param.device"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dsf_diags d = DSF_DIAGS_INIT;
        odd_kind k = cases[i].kind;
        assert_int_equal(dsf_host_cpcall(f->h, push_odd, &k, 1, "odd", &d),
                         0);
        cJSON *tree;
        char *err;
        assert_int_equal(convert_top(L, DSF_CONV_ALLOW_DELETE, &tree, &err),
                         -1);
        assert_string_equal(err, cases[i].err);
        free(err);
        dsf_diags_free(&d);
    }
}

static void test_error_cycle(void **state)
{
    expect_conv_error(state, "local t = {a = {}}\nt.a.b = t\nreturn t", 0,
                      "a table contains itself (cycle) at a.b");
    expect_conv_error(state, "local t = {}\nt[1] = t\nreturn t", 0,
                      "a table contains itself (cycle) at [0]");
    expect_conv_error(state, "local t = {}\nt.self = t\nreturn {x = t}", 0,
                      "a table contains itself (cycle) at x.self");
}

static void test_error_nan_and_infinities(void **state)
{
    expect_conv_error(state, "return {x = {0/0}}", 0,
                      "NaN and infinities are not JSON numbers at x[0]");
    expect_conv_error(state, "return {a = {b = math.huge}}", 0,
                      "NaN and infinities are not JSON numbers at a.b");
    expect_conv_error(state, "return {a = -math.huge}", 0,
                      "NaN and infinities are not JSON numbers at a");
}

static void test_error_big_integers(void **state)
{
    expect_conv_error(state, "return {n = (1 << 53) + 1}", 0,
                      "an integer beyond +-2^53 cannot be represented "
                      "exactly in JSON at n");
    expect_conv_error(state, "return {n = -(1 << 53) - 1}", 0,
                      "an integer beyond +-2^53 cannot be represented "
                      "exactly in JSON at n");
    expect_conv_error(state, "return {m = {math.maxinteger}}", 0,
                      "an integer beyond +-2^53 cannot be represented "
                      "exactly in JSON at m[0]");
    expect_conv_error(state, "return {m = {math.mininteger}}", 0,
                      "an integer beyond +-2^53 cannot be represented "
                      "exactly in JSON at m[0]");
}

/* Floats too large to be exact integers stay floats (JSON -> Lua -> JSON
** must round-trip 1.5e300); only Lua integers beyond 2^53 are errors. */
static void test_large_floats_stay_floats(void **state)
{
    expect_json(state, "return {f = 2^54}", "{\"f\":18014398509481984}");
    expect_json(state, "return {f = 1.5e300}", "{\"f\":1.5e+300}");
    expect_json(state, "return {f = -2.5e200}", "{\"f\":-2.5e+200}");
}

/* A marker that contradicts the keys is an error, not silently ignored. */
static void test_error_marker_mismatch(void **state)
{
    expect_conv_error(state, "return {a = dsforge.object({1, 2})}", 0,
                      "a table marked with dsforge.object has array items "
                      "at a");
    expect_conv_error(state, "return {a = dsforge.array({x = 1})}", 0,
                      "a table marked with dsforge.array has object keys "
                      "at a");
}

static void test_error_invalid_utf8(void **state)
{
    static const struct {
        const char *code, *err;
    } cases[] = {
        {"return {k = '\\xff'}", "a string is not valid UTF-8 text at k"},
        {"return {k = {'ok', '\\xc0\\x80'}}",
         "a string is not valid UTF-8 text at k[1]"}, /* overlong NUL */
        {"return {k = '\\xed\\xa0\\x80'}",
         "a string is not valid UTF-8 text at k"}, /* a surrogate */
        {"return {k = 'ab\\xe2\\x82'}",
         "a string is not valid UTF-8 text at k"}, /* truncated */
        {"return {k = '\\xf4\\x90\\x80\\x80'}",
         "a string is not valid UTF-8 text at k"}, /* above U+10FFFF */
        {"return {k = '\\x80'}",
         "a string is not valid UTF-8 text at k"}, /* lone continuation */
        {"return {k = 'a\\0b'}", "a string contains a NUL byte at k"},
        {"return {a = {['\\xff'] = 1}}",
         "an object key is not valid UTF-8 text at a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_conv_error(state, cases[i].code, 0, cases[i].err);
    expect_json(state,
                "return {['\\u{e9}'] = '\\u{20ac}\\u{1F600}\\u{10FFFF}\\x7f'}",
                "{\"\xc3\xa9\":\"\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"
                "\x7f\"}");
}

static void test_error_nil_at_top(void **state)
{
    expect_conv_error(state, "return nil", 0,
                      "nil cannot be converted to JSON (use dsforge.null)");
}

static void test_depth_cap(void **state)
{
    fixture *f = *state;
    char code[256];
    /* DSF_CONV_MAX_DEPTH nested tables convert; one more does not. */
    snprintf(code, sizeof code,
             "local t = {} local c = t\n"
             "for i = 2, %d do c.a = {} c = c.a end\n"
             "return t",
             DSF_CONV_MAX_DEPTH);
    char *err = NULL;
    char *got = lua_to_text(f->h, code, 0, &err);
    assert_non_null(got);
    size_t opens = 0;
    for (const char *p = got; p && *p; p++)
        opens += *p == '{';
    assert_int_equal(opens, DSF_CONV_MAX_DEPTH);
    free(got);

    snprintf(code, sizeof code,
             "local t = {} local c = t\n"
             "for i = 2, %d do c.a = {} c = c.a end\n"
             "return t",
             DSF_CONV_MAX_DEPTH + 1);
    got = lua_to_text(f->h, code, 0, &err);
    assert_null(got);
    /* The path of the table that is one too deep: a.a. ... .a */
    dsf_buf want = DSF_BUF_INIT;
    dsf_buf_puts(&want, "tables are nested too deeply (more than 200 levels) "
                        "at a");
    for (int i = 1; i < DSF_CONV_MAX_DEPTH; i++)
        dsf_buf_puts(&want, ".a");
    assert_string_equal(err, want.data);
    dsf_buf_free(&want);
    free(err);

    /* Arrays count too, and much deeper nesting fails the same way. */
    got = lua_to_text(f->h,
                      "local t = {} local c = t\n"
                      "for i = 1, 5000 do c[1] = {} c = c[1] end\n"
                      "return t",
                      0, &err);
    assert_null(got);
    const char *deep = "tables are nested too deeply (more than 200 levels) "
                       "at [0][0]";
    assert_true(strncmp(err, deep, strlen(deep)) == 0);
    free(err);
}

/* ------------------------------------------------------------------ */
/* Determinism. */

static char *build_in_fresh_state(const char *order)
{
    dsf_srccache *src = dsf_srccache_new();
    dsf_host_config cfg = {{16u << 20, 20000000u, 10.0}, NULL, 0, src, NULL};
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_host *h;
    assert_int_equal(dsf_host_new(&h, &cfg, &d), 0);
    /* 300 keys (and nested objects) inserted in the given order, with
    ** churn: extra keys are added and removed to disturb the hash part. */
    char code[2048];
    snprintf(code, sizeof code,
             "local order = '%s'\n"
             "local keys = {}\n"
             "for i = 1, 300 do keys[i] = string.format('key%%03d', i) end\n"
             "if order == 'desc' then\n"
             "  local r = {} for i = 300, 1, -1 do r[#r + 1] = keys[i] end\n"
             "  keys = r\n"
             "elseif order ~= 'asc' then\n"
             "  local seed = tonumber(order)\n"
             "  for i = 300, 2, -1 do\n"
             "    seed = (seed * 1103515245 + 12345) %% 2147483648\n"
             "    local j = seed %% i + 1\n"
             "    keys[i], keys[j] = keys[j], keys[i]\n"
             "  end\n"
             "end\n"
             "local t = {}\n"
             "for n, k in ipairs(keys) do\n"
             "  t['junk' .. n] = true\n"
             "  t[k] = {v = k, w = {z = 1, a = 2, m = {k, 0.5}}}\n"
             "  if n %% 3 == 0 then t['junk' .. n] = nil end\n"
             "end\n"
             "for n = 1, 300 do t['junk' .. n] = nil end\n"
             "return t\n",
             order);
    eval(h, code);
    cJSON *tree;
    char *err;
    assert_int_equal(convert_top(dsf_host_state(h), 0, &tree, &err), 0);
    char *text = dsf_json_print(tree, true);
    cJSON_Delete(tree);
    dsf_host_free(h);
    dsf_srccache_free(src);
    dsf_diags_free(&d);
    return text;
}

static void test_determinism_across_states(void **state)
{
    (void)state;
    static const char *const orders[] = {"asc", "desc", "1", "7", "12345",
                                         "99991"};
    char *first = build_in_fresh_state(orders[0]);
    /* The members come out in byte order of their keys. */
    assert_true(strstr(first, "\"key001\"") < strstr(first, "\"key002\""));
    assert_true(strstr(first, "\"key299\"") < strstr(first, "\"key300\""));
    assert_null(strstr(first, "junk"));
    const char *w = strstr(first, "\"w\": {");
    assert_non_null(w);
    assert_true(strncmp(w,
                        "\"w\": {\n      \"a\": 2,\n      \"m\": [\n"
                        "        \"key001\",\n        0.5\n      ],\n"
                        "      \"z\": 1\n    }",
                        strlen("\"w\": {\n      \"a\": 2,\n      \"m\": [\n"
                               "        \"key001\",\n        0.5\n      ],\n"
                               "      \"z\": 1\n    }")) == 0);
    for (size_t i = 1; i < sizeof orders / sizeof *orders; i++) {
        for (int rep = 0; rep < 2; rep++) {
            char *again = build_in_fresh_state(orders[i]);
            assert_string_equal(again, first);
            free(again);
        }
    }
    free(first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_objects_of_any_size, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_json_to_lua_types, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_integers_stay_integers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_integral_floats_become_integers,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_fractions_survive, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_empty_tables_and_markers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_null, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_needs_flag, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_subtable_is_not_a_cycle,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_access_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_mixed_keys, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_sparse_array, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_bad_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_function_value, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_userdata_and_thread, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_nan_and_infinities, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_big_integers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_large_floats_stay_floats, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_marker_mismatch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_invalid_utf8, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_error_nil_at_top, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_depth_cap, setup, teardown),
        cmocka_unit_test(test_determinism_across_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
