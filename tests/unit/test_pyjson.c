/*
** test_pyjson.c -- what Python's json.load rejects in JSONC text
** (src/json/pyjson.h): comments and trailing commas are found with their
** position; the same characters inside strings, and plain JSON, are not.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "json/pyjson.h"

static bool scan(const char *text, dsf_jpos *pos, const char **what)
{
    return dsf_pyjson_first_extension(text, strlen(text), pos, what);
}

static void expect(const char *text, int line, int col, const char *what)
{
    dsf_jpos pos = {0, 0};
    const char *w = NULL;
    assert_true(scan(text, &pos, &w));
    assert_int_equal(pos.line, line);
    assert_int_equal(pos.col, col);
    assert_string_equal(w, what);
}

static void test_plain_json(void **state)
{
    (void)state;
    dsf_jpos pos;
    const char *w;
    assert_false(scan("{}", &pos, &w));
    assert_false(scan("{\"a\": [1, 2], \"b\": {\"c\": null}}\n", &pos, &w));
    /* comment and comma characters inside strings, escaped quotes */
    assert_false(scan("{\"a\": \"// no\", \"b\": \"/* no */\", \"c\": \",]\"}",
                      &pos, &w));
    assert_false(scan("{\"a\": \"x\\\",}\", \"b\": 1}", &pos, &w));
}

static void test_comments(void **state)
{
    (void)state;
    expect("{\n  // note\n  \"a\": 1\n}", 2, 3, "a // comment");
    expect("{\"a\": 1 /* x */}", 1, 9, "a /* */ comment");
    expect("{\"a\": \"s\\\\\"} // after", 1, 14, "a // comment");
}

static void test_trailing_commas(void **state)
{
    (void)state;
    expect("{\"a\": 1,}", 1, 8, "a trailing comma");
    expect("{\"a\": [1, 2,\n  ]}", 1, 12, "a trailing comma");
    expect("{\"a\": 1,\n\t\n}", 1, 8, "a trailing comma");
}

/* Files without a '/' and without a ',' before a closing bracket are
** answered without the scan; a ',' or '/' anywhere still gets it: inside
** a string it is no finding, after it the finding is found. */
static void test_quick_answer(void **state)
{
    (void)state;
    dsf_jpos pos;
    const char *w;
    assert_false(scan("", &pos, &w));
    assert_false(scan("{\"a\": [1, 2], \"b\": \"x, y\"}", &pos, &w));
    assert_false(scan("{\"a\": \"x,\t}\", \"b\": \"c/d\"}", &pos, &w));
    expect("{\"a\": \"x,}\", \"b\": [1,\r\n]}", 1, 21, "a trailing comma");
    expect("{\"a\": \"no / here\", \"b\": 1} // c", 1, 28, "a // comment");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_json),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_trailing_commas),
        cmocka_unit_test(test_quick_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
