/*
** test_jsondiff.c -- the semantic JSON diff (src/doc/jsondiff.h): key order
** ignored, numbers by value, arrays element by element, added/removed
** subtrees as leaves, type changes, quoted keys, --ignore prefixes.
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
#include "doc/jsondiff.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

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

/* The diff of a and b as "K path a->b" lines, K one of + - ~. */
static char *render(const char *a, const char *b, const char *const *ign,
                    size_t nign)
{
    cJSON *ja = json(a), *jb = json(b);
    dsf_jsondiff d = DSF_JSONDIFF_INIT;
    dsf_jsondiff_run(&d, ja, jb, ign, nign);
    dsf_buf out = DSF_BUF_INIT;
    for (size_t i = 0; i < d.len; i++) {
        const dsf_jd_entry *e = &d.items[i];
        char *x = e->a ? dsf_json_print(e->a, false) : NULL;
        char *y = e->b ? dsf_json_print(e->b, false) : NULL;
        dsf_buf_printf(&out, "%c %s %s->%s\n",
                       e->kind == DSF_JD_ADDED     ? '+'
                       : e->kind == DSF_JD_REMOVED ? '-'
                                                   : '~',
                       e->path, x ? x : "_", y ? y : "_");
        free(x);
        free(y);
    }
    dsf_jsondiff_free(&d);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return dsf_buf_take(&out);
}

static void expect(const char *a, const char *b, const char *want)
{
    char *got = render(a, b, NULL, 0);
    assert_string_equal(got, want);
    free(got);
}

static void test_equal_documents(void **state)
{
    (void)state;
    expect("{\"a\":1,\"b\":{\"c\":[1,2]}}", "{\"b\":{\"c\":[1,2]},\"a\":1}",
           "");
    expect("{}", "{}", "");
    expect("[]", "[]", "");
}

static void test_numbers_by_value(void **state)
{
    (void)state;
    expect("{\"r\":5e8,\"x\":1.0,\"y\":0.5}",
           "{\"r\":500000000,\"x\":1,\"y\":5e-1}", "");
    expect("{\"r\":5e8}", "{\"r\":500000001}",
           "~ r 500000000->500000001\n");
    /* A number is not its string spelling. */
    expect("{\"r\":1}", "{\"r\":\"1\"}", "~ r 1->\"1\"\n");
}

static void test_changed_added_removed_sorted(void **state)
{
    (void)state;
    expect("{\"z\":1,\"a\":{\"k\":true,\"gone\":null}}",
           "{\"a\":{\"k\":false,\"new\":\"x\"},\"z\":1,\"b\":2}",
           "- a.gone null->_\n"
           "~ a.k true->false\n"
           "+ a.new _->\"x\"\n"
           "+ b _->2\n");
}

static void test_subtrees_as_leaves(void **state)
{
    (void)state;
    expect("{}", "{\"o\":{\"d\":\"cpu\",\"p\":{\"q\":1},\"e\":{}}}",
           "+ o.d _->\"cpu\"\n"
           "+ o.e _->{}\n"
           "+ o.p.q _->1\n");
    expect("{\"o\":[1,[2]]}", "{}",
           "- o[0] 1->_\n"
           "- o[1][0] 2->_\n");
}

static void test_arrays_element_by_element(void **state)
{
    (void)state;
    expect("{\"b\":[0.9,0.95]}", "{\"b\":[0.9,0.999]}",
           "~ b[1] 0.95->0.999\n");
    expect("{\"b\":[1]}", "{\"b\":[1,2,{\"k\":3}]}",
           "+ b[1] _->2\n"
           "+ b[2].k _->3\n");
    expect("{\"b\":[1,2]}", "{\"b\":[]}",
           "- b[0] 1->_\n"
           "- b[1] 2->_\n");
    expect("[{\"a\":1}]", "[{\"a\":2}]", "~ [0].a 1->2\n");
}

static void test_type_changes(void **state)
{
    (void)state;
    expect("{\"a\":{\"x\":1}}", "{\"a\":3}", "~ a {\"x\":1}->3\n");
    expect("{\"a\":[]}", "{\"a\":{}}", "~ a []->{}\n");
    expect("{\"a\":null}", "{\"a\":false}", "~ a null->false\n");
    expect("1", "2", "~  1->2\n");
}

static void test_quoted_keys(void **state)
{
    (void)state;
    expect("{\"a.b\":{\"c\":1}}", "{\"a.b\":{\"c\":2}}",
           "~ [\"a.b\"].c 1->2\n");
}

static void test_ignore_prefixes(void **state)
{
    (void)state;
    const char *ign[] = {"z", "a.b"};
    char *got = render("{\"z\":{\"q\":1},\"zz\":1,\"a\":{\"b\":1,\"bc\":1,"
                       "\"b2\":[1]}}",
                       "{\"z\":{\"q\":2},\"zz\":2,\"a\":{\"b\":[3],\"bc\":2,"
                       "\"b2\":[2]}}",
                       ign, 2);
    assert_string_equal(got, "~ a.b2[0] 1->2\n"
                             "~ a.bc 1->2\n"
                             "~ zz 1->2\n");
    free(got);
    assert_true(dsf_jpath_under("a.b[0]", "a.b"));
    assert_true(dsf_jpath_under("a.b", "a.b"));
    assert_true(dsf_jpath_under("a.b.c", "a.b"));
    assert_false(dsf_jpath_under("a.bc", "a.b"));
    assert_true(dsf_jpath_under("x", ""));
}

static void test_paths_helper(void **state)
{
    (void)state;
    cJSON *a = json("{\"x\":1,\"y\":{\"z\":[1]}}");
    cJSON *b = json("{\"x\":1e0,\"y\":{\"z\":[2]},\"w\":0}");
    cJSON *p = dsf_jsondiff_paths(a, b);
    char *s = dsf_json_print(p, false);
    assert_string_equal(s, "[\"w\",\"y.z[0]\"]");
    free(s);
    cJSON_Delete(p);
    assert_true(dsf_json_equal(a, a));
    assert_false(dsf_json_equal(a, b));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_documents),
        cmocka_unit_test(test_numbers_by_value),
        cmocka_unit_test(test_changed_added_removed_sorted),
        cmocka_unit_test(test_subtrees_as_leaves),
        cmocka_unit_test(test_arrays_element_by_element),
        cmocka_unit_test(test_type_changes),
        cmocka_unit_test(test_quoted_keys),
        cmocka_unit_test(test_ignore_prefixes),
        cmocka_unit_test(test_paths_helper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
