/*
** test_jpath.c -- config paths and command-line edits (src/doc/jpath.h):
** parsing, formatting, lookup, set/+add/~delete with every error, and how
** edit values are read (JSON when valid, else a string).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

/* ------------------------------------------------------------------ */
/* Helpers. */

static cJSON *json(const char *text)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = NULL;
    int rc = dsf_json_parse(&doc, NULL, "t.json", text, strlen(text), &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    assert_int_equal(rc, 0);
    dsf_diags_free(&d);
    return doc;
}

static char *print(const cJSON *v)
{
    return dsf_json_print(v, false);
}

/* Parses text and checks the steps, given as "a", "b", "#0" (an index). */
static void expect_steps(const char *text, size_t n, ...)
{
    dsf_jpath p;
    char *err = NULL;
    int rc = dsf_jpath_parse(&p, text, &err);
    if (rc)
        print_error("%s: %s\n", text, err);
    assert_int_equal(rc, 0);
    assert_null(err);
    assert_int_equal(p.len, n);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        const char *want = va_arg(ap, const char *);
        if (want[0] == '#') {
            assert_null(p.steps[i].key);
            assert_int_equal(p.steps[i].index, atol(want + 1));
        } else {
            assert_non_null(p.steps[i].key);
            assert_string_equal(p.steps[i].key, want);
        }
    }
    va_end(ap);
    dsf_jpath_free(&p);
    assert_null(p.steps);
    assert_int_equal(p.len, 0);
}

static void expect_path_error(const char *text, const char *want)
{
    dsf_jpath p;
    char *err = NULL;
    assert_int_equal(dsf_jpath_parse(&p, text, &err), -1);
    assert_null(p.steps);
    assert_int_equal(p.len, 0);
    assert_string_equal(err, want);
    free(err);
}

static char *format(const char *text, size_t n)
{
    dsf_jpath p;
    char *err = NULL;
    assert_int_equal(dsf_jpath_parse(&p, text, &err), 0);
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "");
    dsf_jpath_format(&b, &p, n);
    dsf_jpath_free(&p);
    return dsf_buf_take(&b);
}

static void expect_format(const char *text, size_t n, const char *want)
{
    char *got = format(text, n);
    assert_string_equal(got, want);
    free(got);
}

static dsf_edit parse_edit(const char *arg)
{
    dsf_edit e;
    char *err = NULL;
    int rc = dsf_edit_parse(&e, arg, 7, &err);
    if (rc)
        print_error("%s: %s\n", arg, err);
    assert_int_equal(rc, 0);
    assert_null(err);
    return e;
}

/* Applies arg to the document text and compares the result. */
static void expect_edit(const char *doc_text, const char *arg,
                        const char *want)
{
    cJSON *doc = json(doc_text);
    dsf_edit e = parse_edit(arg);
    cJSON *touched = (cJSON *)&e;
    char *err = NULL;
    int rc = dsf_edit_apply(doc, &e, &touched, &err);
    if (rc)
        print_error("%s on %s: %s\n", arg, doc_text, err);
    assert_int_equal(rc, 0);
    assert_null(err);
    if (e.op == DSF_EDIT_DELETE) {
        assert_null(touched);
    } else {
        /* touched is the node now in the document, at the path. */
        assert_non_null(touched);
        assert_ptr_equal(touched, dsf_jpath_get(doc, &e.path));
        char *a = print(touched), *b = print(e.value);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    char *got = print(doc);
    assert_string_equal(got, want);
    free(got);
    dsf_edit_free(&e);
    cJSON_Delete(doc);
}

static void expect_edit_error(const char *doc_text, const char *arg,
                              const char *want)
{
    cJSON *doc = json(doc_text);
    dsf_edit e = parse_edit(arg);
    cJSON *touched = (cJSON *)&e;
    char *err = NULL;
    assert_int_equal(dsf_edit_apply(doc, &e, &touched, &err), -1);
    assert_null(touched);
    assert_non_null(err);
    assert_string_equal(err, want);
    free(err);
    dsf_edit_free(&e);
    cJSON_Delete(doc);
}

static void expect_edit_parse_error(const char *arg, const char *want)
{
    dsf_edit e;
    char *err = NULL;
    assert_int_equal(dsf_edit_parse(&e, arg, 1, &err), -1);
    assert_string_equal(err, want);
    free(err);
}

/* ------------------------------------------------------------------ */
/* Paths. */

static void test_parse_paths(void **state)
{
    (void)state;
    expect_steps("a", 1, "a");
    expect_steps("a.b[0]", 3, "a", "b", "#0");
    expect_steps("[\"x.y\"].z", 2, "x.y", "z");
    expect_steps("zero_optimization.offload_param.device", 3,
                 "zero_optimization", "offload_param", "device");
    expect_steps("optimizer.params.betas[1]", 4, "optimizer", "params",
                 "betas", "#1");
    expect_steps("a[\"b.c\"][2][\"d\"]", 4, "a", "b.c", "#2", "d");
    expect_steps("[0]", 1, "#0");
    expect_steps("m[0][12]", 3, "m", "#0", "#12");
    expect_steps("[\"\"]", 1, "");
    expect_steps("[\"a[0]\"].b", 2, "a[0]", "b");
    expect_steps("l[1000000]", 2, "l", "#1000000");
    expect_steps("with-dash_and_UNDER", 1, "with-dash_and_UNDER");
}

static void test_parse_path_errors(void **state)
{
    (void)state;
    expect_path_error("", "invalid path '': empty");
    expect_path_error("a..b", "invalid path 'a..b': empty key");
    expect_path_error(".a", "invalid path '.a': empty key");
    expect_path_error("a.", "invalid path 'a.': ends with '.'");
    expect_path_error("a[x]", "invalid path 'a[x]': '[' must be followed by "
                              "an index or a quoted key");
    expect_path_error("a[-1]", "invalid path 'a[-1]': '[' must be followed "
                               "by an index or a quoted key");
    expect_path_error("a[]", "invalid path 'a[]': '[' must be followed by "
                             "an index or a quoted key");
    expect_path_error("a[1", "invalid path 'a[1': bad array index");
    expect_path_error("a[1x]", "invalid path 'a[1x]': bad array index");
    expect_path_error("a[1000001]",
                      "invalid path 'a[1000001]': bad array index");
    expect_path_error("a[\"x]", "invalid path 'a[\"x]': '[\"' without "
                                "'\"]'");
    expect_path_error("a[\"x\"", "invalid path 'a[\"x\"': '[\"' without "
                                 "'\"]'");
    expect_path_error("a[0]b", "invalid path 'a[0]b': '.' or '[' expected");
    expect_path_error("[\"x\"]y",
                      "invalid path '[\"x\"]y': '.' or '[' expected");
}

static void test_format_paths(void **state)
{
    (void)state;
    expect_format("a.b[0]", 3, "a.b[0]");
    expect_format("a[\"b.c\"][2].d", 4, "a[\"b.c\"][2].d");
    expect_format("[\"x\"].y", 2, "x.y"); /* quotes only when needed */
    expect_format("a.b.c", 2, "a.b");
    expect_format("a.b.c", 0, "");
    expect_format("a.b.c", 99, "a.b.c");
    expect_format("[\"\"].a", 2, "[\"\"].a");
    expect_format("[3].a", 2, "[3].a");
    /* Every formatted path parses back to the same steps. */
    static const char *const paths[] = {"a[\"b.c\"][2].d", "[\"x[1]\"].y",
                                        "m[0][1]", "[\"\"]"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char *f = format(paths[i], 99);
        char *g = format(f, 99);
        assert_string_equal(f, g);
        free(f);
        free(g);
    }
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "");
    dsf_jpath_append_key(&b, "a");
    dsf_jpath_append_key(&b, "b.c");
    dsf_jpath_append_key(&b, "d");
    dsf_jpath_append_key(&b, "");
    assert_string_equal(b.data, "a[\"b.c\"].d[\"\"]");
    dsf_buf_free(&b);
}

static void test_get(void **state)
{
    (void)state;
    cJSON *doc = json("{\"a\": {\"b\": [10, 20, {\"c\": true}]}, "
                      "\"x.y\": 5}");
    static const struct {
        const char *path, *want; /* want NULL: not found */
    } cases[] = {
        {"a.b[1]", "20"},          {"a.b[2].c", "true"},
        {"[\"x.y\"]", "5"},        {"a", "{\"b\":[10,20,{\"c\":true}]}"},
        {"a.b[3]", NULL},          {"a.x", NULL},
        {"a.b.c", NULL},           {"a[0]", NULL},
        {"x.y", NULL},             {"a.b[1].z", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dsf_jpath p;
        char *err;
        assert_int_equal(dsf_jpath_parse(&p, cases[i].path, &err), 0);
        cJSON *n = dsf_jpath_get(doc, &p);
        if (!cases[i].want) {
            assert_null(n);
        } else {
            assert_non_null(n);
            char *got = print(n);
            assert_string_equal(got, cases[i].want);
            free(got);
        }
        dsf_jpath_free(&p);
    }
    cJSON_Delete(doc);
}

/* ------------------------------------------------------------------ */
/* Edit parsing and values. */

static void test_parse_edits(void **state)
{
    (void)state;
    dsf_edit e = parse_edit("a.b=1");
    assert_int_equal(e.op, DSF_EDIT_SET);
    assert_string_equal(e.path_text, "a.b");
    assert_int_equal(e.path.len, 2);
    assert_string_equal(e.arg, "a.b=1");
    assert_int_equal(e.argno, 7);
    assert_true(cJSON_IsNumber(e.value));
    assert_true(dsf_json_is_integer_literal(e.value));
    dsf_edit_free(&e);

    e = parse_edit("+a.b=true");
    assert_int_equal(e.op, DSF_EDIT_ADD);
    assert_string_equal(e.path_text, "a.b");
    assert_true(cJSON_IsTrue(e.value));
    dsf_edit_free(&e);

    e = parse_edit("~a.b[2]");
    assert_int_equal(e.op, DSF_EDIT_DELETE);
    assert_string_equal(e.path_text, "a.b[2]");
    assert_int_equal(e.path.len, 3);
    assert_null(e.value);
    dsf_edit_free(&e);

    /* '=' inside a quoted key belongs to the key. */
    e = parse_edit("[\"k=v\"].x=1");
    assert_string_equal(e.path_text, "[\"k=v\"].x");
    assert_string_equal(e.path.steps[0].key, "k=v");
    assert_string_equal(e.path.steps[1].key, "x");
    dsf_edit_free(&e);

    /* Only the first '=' splits. */
    e = parse_edit("a=b=c");
    assert_string_equal(e.path_text, "a");
    assert_true(cJSON_IsString(e.value));
    assert_string_equal(e.value->valuestring, "b=c");
    dsf_edit_free(&e);
}

static void test_parse_edit_errors(void **state)
{
    (void)state;
    expect_edit_parse_error("~a.b=1",
                            "'~a.b=1': a delete (~path) takes no value");
    expect_edit_parse_error("a.b", "'a.b': expected path=value");
    expect_edit_parse_error("+a.b", "'+a.b': expected path=value");
    expect_edit_parse_error("=1", "invalid path '': empty");
    expect_edit_parse_error("a..b=1", "invalid path 'a..b': empty key");
    expect_edit_parse_error("~", "invalid path '': empty");
    expect_edit_parse_error("a[x]=1", "invalid path 'a[x]': '[' must be "
                                      "followed by an index or a quoted key");
}

static void test_edit_values(void **state)
{
    (void)state;
    static const struct {
        const char *arg, *json;
        int type;
    } cases[] = {
        {"a=5", "5", cJSON_Number},
        {"a=-2.5", "-2.5", cJSON_Number},
        {"a=5e8", "500000000", cJSON_Number},
        {"a=true", "true", cJSON_True},
        {"a=false", "false", cJSON_False},
        {"a=null", "null", cJSON_NULL},
        {"a=cpu", "\"cpu\"", cJSON_String},
        {"a=\"cpu\"", "\"cpu\"", cJSON_String},
        {"a=\"5\"", "\"5\"", cJSON_String},
        {"a=[1, 2]", "[1,2]", cJSON_Array},
        {"a={\"x\": {\"y\": 1}}", "{\"x\":{\"y\":1}}", cJSON_Object},
        {"a=", "\"\"", cJSON_String},
        {"a=1 2", "\"1 2\"", cJSON_String},
        {"a= 5 ", "5", cJSON_Number},
        {"a=01", "\"01\"", cJSON_String},
        {"a=True", "\"True\"", cJSON_String},
        {"a=NaN", "\"NaN\"", cJSON_String},
        {"a=[1,", "\"[1,\"", cJSON_String},
        {"a=// c", "\"// c\"", cJSON_String},
        {"a=/tmp/x", "\"/tmp/x\"", cJSON_String},
        {"a=\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\"", cJSON_String},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dsf_edit e = parse_edit(cases[i].arg);
        assert_int_equal(e.value->type & 0xFF, cases[i].type);
        char *got = print(e.value);
        if (strcmp(got, cases[i].json))
            print_error("%s: %s\n", cases[i].arg, got);
        assert_string_equal(got, cases[i].json);
        free(got);
        dsf_edit_free(&e);
    }
    /* 5e8 keeps its literal: it is not an integer literal. */
    dsf_edit e = parse_edit("a=5e8");
    assert_string_equal(e.value->valuestring, "5e8");
    assert_false(dsf_json_is_integer_literal(e.value));
    dsf_edit_free(&e);
}

/* ------------------------------------------------------------------ */
/* Applying edits. */

static void test_set(void **state)
{
    (void)state;
    expect_edit("{}", "a.b.c=1", "{\"a\":{\"b\":{\"c\":1}}}");
    expect_edit("{\"a\":1}", "a=2", "{\"a\":2}");
    expect_edit("{\"a\":{\"x\":1},\"k\":0}", "a=3", "{\"a\":3,\"k\":0}");
    expect_edit("{\"a\":3}", "a={\"x\":[1]}", "{\"a\":{\"x\":[1]}}");
    expect_edit("{\"a\":{\"x\":1}}", "a.y=cpu",
                "{\"a\":{\"x\":1,\"y\":\"cpu\"}}");
    expect_edit("{}", "[\"x.y\"].z=true", "{\"x.y\":{\"z\":true}}");
    expect_edit("{\"a\":{}}", "a.b=null", "{\"a\":{\"b\":null}}");
}

static void test_add(void **state)
{
    (void)state;
    expect_edit("{\"a\":{}}", "+a.b=1", "{\"a\":{\"b\":1}}");
    expect_edit("{}", "+a.b=1", "{\"a\":{\"b\":1}}");
    expect_edit_error("{\"a\":{\"b\":0}}", "+a.b=2",
                      "'+a.b=2': +path adds a new key, but a value exists "
                      "(use path=value to replace it) at a.b");
    expect_edit_error("{\"a\":null}", "+a=2",
                      "'+a=2': +path adds a new key, but a value exists "
                      "(use path=value to replace it) at a");
}

static void test_delete(void **state)
{
    (void)state;
    expect_edit("{\"a\":{\"b\":1,\"c\":2}}", "~a.b", "{\"a\":{\"c\":2}}");
    expect_edit("{\"a\":{\"b\":1},\"d\":0}", "~a", "{\"d\":0}");
    expect_edit_error("{\"a\":{}}", "~a.x",
                      "'~a.x': nothing to delete: no value at a.x");
    expect_edit_error("{}", "~q.r.s",
                      "'~q.r.s': nothing to delete: no value at q");
    expect_edit_error("{\"q\":{}}", "~q.r.s",
                      "'~q.r.s': nothing to delete: no value at q.r");
}

static void test_through_non_object(void **state)
{
    (void)state;
    expect_edit_error("{\"a\":1}", "a.b=2",
                      "'a.b=2': the path goes through a non-object value "
                      "at a");
    expect_edit_error("{\"a\":1}", "a.b.c=2",
                      "'a.b.c=2': the path goes through a non-object value "
                      "at a");
    expect_edit_error("{\"a\":\"s\"}", "~a.b",
                      "'~a.b': the path goes through a non-object value "
                      "at a");
    expect_edit_error("{\"a\":[1]}", "a.b=1",
                      "'a.b=1': the path goes through a non-object value "
                      "at a");
    expect_edit_error("{\"a\":{\"b\":[1]}}", "+a.b.c=1",
                      "'+a.b.c=1': the path goes through a non-object value "
                      "at a.b");
}

static void test_arrays(void **state)
{
    (void)state;
    expect_edit("{\"arr\":[1,2]}", "arr[0]=9", "{\"arr\":[9,2]}");
    expect_edit("{\"arr\":[1,2]}", "arr[2]=3", "{\"arr\":[1,2,3]}");
    expect_edit("{\"arr\":[]}", "arr[0]=x", "{\"arr\":[\"x\"]}");
    expect_edit("{\"arr\":[1,2]}", "+arr[2]=3", "{\"arr\":[1,2,3]}");
    expect_edit("{\"arr\":[1,2,3]}", "~arr[1]", "{\"arr\":[1,3]}");
    expect_edit("{\"arr\":[{\"x\":1}]}", "arr[0].y=2",
                "{\"arr\":[{\"x\":1,\"y\":2}]}");
    expect_edit("{\"m\":[[1],[2]]}", "m[1][0]=5", "{\"m\":[[1],[5]]}");
    expect_edit_error("{\"arr\":[1,2]}", "arr[5]=1",
                      "'arr[5]=1': array index out of range at arr[5]");
    expect_edit_error("{\"arr\":[1,2]}", "+arr[0]=1",
                      "'+arr[0]=1': +path adds a new key, but a value exists "
                      "(use path=value to replace it) at arr[0]");
    expect_edit_error("{\"arr\":[1,2]}", "~arr[7]",
                      "'~arr[7]': nothing to delete: no value at arr[7]");
    expect_edit_error("{\"arr\":[1,2]}", "arr[0].x=1",
                      "'arr[0].x=1': the path goes through a non-object "
                      "value at arr[0]");
    expect_edit_error("{\"arr\":[1,2]}", "arr[9].x=1",
                      "'arr[9].x=1': array index out of range at arr[9]");
    expect_edit_error("{\"o\":{}}", "o[0]=1",
                      "'o[0]=1': an index needs an array at o");
    expect_edit_error("{}", "[0]=1", "'[0]=1': an index needs an array");
}

static void test_edit_copies_value(void **state)
{
    (void)state;
    /* The same edit applied twice (two variants) gives equal, separate
    ** values. */
    dsf_edit e = parse_edit("a={\"x\":[1,2]}");
    cJSON *d1 = json("{}"), *d2 = json("{\"a\":0}");
    cJSON *t1, *t2;
    char *err;
    assert_int_equal(dsf_edit_apply(d1, &e, &t1, &err), 0);
    assert_int_equal(dsf_edit_apply(d2, &e, &t2, &err), 0);
    assert_ptr_not_equal(t1, t2);
    assert_ptr_not_equal(t1, e.value);
    cJSON_Delete(d1);
    char *s = print(d2);
    assert_string_equal(s, "{\"a\":{\"x\":[1,2]}}");
    free(s);
    cJSON_Delete(d2);
    s = print(e.value);
    assert_string_equal(s, "{\"x\":[1,2]}");
    free(s);
    dsf_edit_free(&e);
}

/* An edit deeper than a config may nest is refused when it is parsed
** (a usage error), not written and rejected later. */
static void test_edit_depth_limit(void **state)
{
    (void)state;
    dsf_buf b = DSF_BUF_INIT;
    for (int i = 0; i < DSF_JPATH_MAX_DEPTH; i++)
        dsf_buf_puts(&b, i ? ".k" : "k");
    dsf_buf_puts(&b, "=1");
    dsf_edit e;
    char *err = NULL;
    /* Exactly the limit: accepted. */
    assert_int_equal(dsf_edit_parse(&e, dsf_buf_str(&b), 1, &err), 0);
    dsf_edit_free(&e);
    /* One more step, or a nested value at the end: refused. */
    b.len -= 2;
    dsf_buf_puts(&b, ".k=1");
    assert_int_equal(dsf_edit_parse(&e, dsf_buf_str(&b), 1, &err), -1);
    assert_non_null(strstr(err, "nests 201 levels deep; a config nests at "
                                "most 200"));
    free(err);
    b.len -= 4;
    dsf_buf_puts(&b, "={\"a\":[1]}");
    assert_int_equal(dsf_edit_parse(&e, dsf_buf_str(&b), 1, &err), -1);
    assert_non_null(strstr(err, "nests 202 levels deep"));
    free(err);
    dsf_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_paths),
        cmocka_unit_test(test_edit_depth_limit),
        cmocka_unit_test(test_parse_path_errors),
        cmocka_unit_test(test_format_paths),
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_parse_edits),
        cmocka_unit_test(test_parse_edit_errors),
        cmocka_unit_test(test_edit_values),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_delete),
        cmocka_unit_test(test_through_non_object),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_edit_copies_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
