/*
** test_identity.c -- the identity of a JSON value as a script receives it
** (lua/identity.h): equal for values a script cannot tell apart, different
** for any two it can, number subtypes and the sign of zero included.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/diag.h"
#include "doc/doc.h"
#include "json/jsonc.h"
#include "lua/identity.h"

/* The identity of the JSON text (parsed as dsforge parses a config, which
** keeps each number's literal: 1.0 stays a float), malloc'd, its length
** in *len. */
static char *identity_of(const char *json, size_t *len)
{
    cJSON *v = NULL;
    dsf_diags d = DSF_DIAGS_INIT;
    assert_int_equal(dsf_json_parse(&v, NULL, "t.json", json, strlen(json),
                                    &d), 0);
    dsf_diags_free(&d);
    dsf_buf b = DSF_BUF_INIT;
    dsf_json_identity(&b, v);
    cJSON_Delete(v);
    *len = b.len;
    return dsf_buf_take(&b);
}

static int same(const char *a, const char *b)
{
    size_t na, nb;
    char *x = identity_of(a, &na), *y = identity_of(b, &nb);
    int eq = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return eq;
}

static void equal_values_are_equal(void **state)
{
    (void)state;
    static const char *const values[] = {
        "{}", "[]", "null", "true", "false", "0", "1", "1.5", "-0.0", "0.0",
        "\"\"", "\"a\"", "{\"a\":1}", "[1,[2,{\"b\":null}]]",
        ("{\"zero_optimization\":{\"stage\":3,\"offload_param\":"
         "{\"device\":\"cpu\"}}}"),
    };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        assert_true(same(values[i], values[i]));
    /* whitespace is not part of the value */
    assert_true(same("{\"a\": [1, 2]}", "{ \"a\" :[1,2] }"));
}

static void what_a_script_tells_apart_differs(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"1", "1.0"},            /* integer and float */
        {"0.0", "-0.0"},         /* the sign of zero */
        {"1", "\"1\""},          /* number and string */
        {"{}", "[]"},            /* empty object and empty array */
        {"null", "false"},
        {"true", "false"},
        {"[\"ab\"]", "[\"a\",\"b\"]"}, /* where one string ends */
        {"{\"ab\":1}", "{\"a\":1}"},
        {"{\"a\":\"b\"}", "{\"ab\":\"\"}"},
        {"{\"a\":1}", "{\"a\":1,\"b\":2}"},
        {"[1]", "[1,1]"},
        {"[[1],2]", "[[1,2]]"},
        {"1e-5", "2e-5"},
        {"5e8", "500000000"},    /* a float literal stays a float */
        {"{\"a\":{\"b\":1}}", "{\"a\":{\"b\":2}}"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        assert_false(same(pairs[i][0], pairs[i][1]));
}

static void the_delete_marker_is_neither_null_nor_a_value(void **state)
{
    (void)state;
    cJSON *t = dsf_doc_tombstone();
    cJSON *n = cJSON_CreateNull();
    dsf_buf a = DSF_BUF_INIT, b = DSF_BUF_INIT;
    dsf_json_identity(&a, t);
    dsf_json_identity(&b, n);
    assert_false(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    dsf_buf_free(&a);
    dsf_buf_free(&b);
    cJSON_Delete(t);
    cJSON_Delete(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_values_are_equal),
        cmocka_unit_test(what_a_script_tells_apart_differs),
        cmocka_unit_test(the_delete_marker_is_neither_null_nor_a_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
