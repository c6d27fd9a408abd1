/*
** test_diag.c -- printing diagnostics (src/core/diag.h): the text of
** every diagnostic reaches an unbuffered stream (stderr) in one write,
** not piece by piece, and is the same text as before.
*/
#define _GNU_SOURCE /* fopencookie */
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

typedef struct sink {
    dsf_buf text;
    int writes;
} sink;

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
    sink *s = cookie;
    s->writes++;
    dsf_buf_add(&s->text, buf, size);
    return (ssize_t)size;
}

static void test_print_is_one_write(void **state)
{
    (void)state;
    sink s = {DSF_BUF_INIT, 0};
    cookie_io_functions_t io = {NULL, sink_write, NULL, NULL};
    FILE *f = fopencookie(&s, "w", io);
    assert_non_null(f);
    setvbuf(f, NULL, _IONBF, 0); /* like stderr */
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_diag *g = dsf_diag_add(&d, DSF_WARNING, "a.json", 3, 5,
                               "x: not a key");
    dsf_diag_set_rule(g, "unknown-key");
    dsf_diag_set_excerpt(g, "  \"x\": 1", 8);
    dsf_diag_set_hint(g, "remove it");
    g = dsf_diag_add(&d, DSF_ERROR, NULL, 0, 0, "no file");
    dsf_diag_add(&d, DSF_NOTE, "b.json", 1, 0, "a note");
    dsf_diags_print(&d, f, false);
    fclose(f);
    assert_int_equal(s.writes, 1);
    assert_string_equal(dsf_buf_str(&s.text),
                        "a.json:3:5: warning: x: not a key [unknown-key]\n"
                        "      \"x\": 1\n"
                        "        ^\n"
                        "  hint: remove it\n"
                        "dsforge: error: no file\n"
                        "b.json:1: note: a note\n");
    /* nothing to print: nothing written */
    s.writes = 0;
    f = fopencookie(&s, "w", io);
    assert_non_null(f);
    setvbuf(f, NULL, _IONBF, 0);
    dsf_diags_free(&d);
    dsf_diags_print(&d, f, false);
    fclose(f);
    assert_int_equal(s.writes, 0);
    dsf_buf_free(&s.text);
}

/* dsf_diags_sort is stable and orders by file, line, column, rule, path;
** a long list (issue 30: the insertion sort was quadratic) in reverse and
** in runs of equal keys comes out as a stable sort gives it. */
static void test_sort_long_list(void **state)
{
    (void)state;
    enum { N = 5000 };
    dsf_diags d = DSF_DIAGS_INIT;
    for (int i = 0; i < N; i++) {
        /* lines N/2 .. 1, each twice; the message keeps the insertion
        ** order, which a stable sort keeps within equal keys */
        dsf_diag *g = dsf_diag_add(&d, DSF_WARNING, i % 3 ? "b" : "a",
                                   N / 2 - i / 2, 1, "%d", i);
        dsf_diag_set_rule(g, "r");
    }
    dsf_diags_sort(&d);
    for (size_t i = 1; i < d.len; i++) {
        const dsf_diag *a = &d.items[i - 1], *b = &d.items[i];
        int c = strcmp(a->file, b->file);
        assert_true(c <= 0);
        if (c == 0) {
            assert_true(a->line <= b->line);
            if (a->line == b->line)
                assert_true(atoi(a->message) < atoi(b->message));
        }
    }
    dsf_diags_free(&d);
}

static dsf_diag *add(dsf_diags *d, dsf_severity sev, const char *file,
                     int line, const char *rule)
{
    dsf_diag *g = dsf_diag_add(d, sev, file, line, 1, "m%d", line);
    if (rule)
        dsf_diag_set_rule(g, rule);
    return g;
}

/* dsf_diags_cap: per file, per severity and rule, the first max_shown
** stay, the rest are counted in one note at the end of the file's. */
static void test_cap(void **state)
{
    (void)state;
    dsf_diags d = DSF_DIAGS_INIT;
    for (int i = 1; i <= 5; i++)
        add(&d, DSF_WARNING, "a.json", i, "unknown-key");
    add(&d, DSF_ERROR, "a.json", 6, "unknown-key");
    add(&d, DSF_ERROR, "a.json", 7, "unknown-key");
    add(&d, DSF_ERROR, "a.json", 8, "unknown-key");
    add(&d, DSF_WARNING, "a.json", 9, NULL);
    add(&d, DSF_WARNING, "a.json", 10, NULL);
    add(&d, DSF_WARNING, "a.json", 11, NULL);
    add(&d, DSF_NOTE, "b.json", 1, "x");
    add(&d, DSF_NOTE, "b.json", 2, "x");
    add(&d, DSF_NOTE, "b.json", 3, "y");
    size_t removed = dsf_diags_cap(&d, 2);
    assert_int_equal(removed, 3 + 1 + 1 + 0);
    const char *want[][3] = {
        {"a.json", "warning", "m1"}, {"a.json", "warning", "m2"},
        {"a.json", "error", "m6"},   {"a.json", "error", "m7"},
        {"a.json", "warning", "m9"}, {"a.json", "warning", "m10"},
        {"a.json", "note", "3 more warnings not shown (at most 2 of one "
                           "rule and severity per file)"},
        {"a.json", "note", "1 more error not shown (at most 2 of one rule "
                           "and severity per file)"},
        {"a.json", "note", "1 more warning not shown (at most 2 of one rule "
                           "and severity per file)"},
        {"b.json", "note", "m1"}, {"b.json", "note", "m2"},
        {"b.json", "note", "m3"},
    };
    assert_int_equal(d.len, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < d.len; i++) {
        assert_string_equal(d.items[i].file, want[i][0]);
        assert_string_equal(dsf_severity_name(d.items[i].severity),
                            want[i][1]);
        assert_string_equal(d.items[i].message, want[i][2]);
    }
    assert_string_equal(d.items[6].rule, "unknown-key");
    assert_string_equal(d.items[7].rule, "unknown-key");
    assert_null(d.items[8].rule);
    assert_int_equal(d.items[6].line, 0);
    dsf_diags_free(&d);

    /* thousands, and nothing to cut: the list unchanged */
    for (int i = 1; i <= 12347; i++)
        add(&d, DSF_WARNING, "big.json", i, "r");
    assert_int_equal(dsf_diags_cap(&d, 100), 12247);
    assert_int_equal(d.len, 101);
    assert_true(strncmp(d.items[100].message, "12,247 more warnings", 20) ==
                0);
    assert_int_equal(dsf_diags_cap(&d, 100), 0);
    assert_int_equal(d.len, 101);
    dsf_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print_is_one_write),
        cmocka_unit_test(test_sort_long_list),
        cmocka_unit_test(test_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
