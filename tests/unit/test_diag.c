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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print_is_one_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
