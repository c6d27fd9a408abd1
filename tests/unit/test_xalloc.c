/*
** test_xalloc.c -- the string builders of core/xalloc.h: dsf_xconcat
** (names built on every load without formatting) and dsf_xasprintf on
** both sides of its stack buffer.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/xalloc.h"

static void concat_joins_in_order(void **state)
{
    (void)state;
    char *s = dsf_xconcat("rule ", "zero-stage", " (plugin ", "deepspeed",
                          ")", NULL);
    assert_string_equal(s, "rule zero-stage (plugin deepspeed)");
    free(s);
    s = dsf_xconcat("", "a", "", "b", NULL);
    assert_string_equal(s, "ab");
    free(s);
    s = dsf_xconcat("only", NULL);
    assert_string_equal(s, "only");
    free(s);
    s = dsf_xconcat("", NULL);
    assert_string_equal(s, "");
    free(s);
}

/* The same text as the formatting it replaces, for any length. */
static void concat_equals_asprintf(void **state)
{
    (void)state;
    char id[700];
    for (size_t len = 0; len < sizeof id - 1; len += 37) {
        memset(id, 'x', len);
        id[len] = '\0';
        char *a = dsf_xconcat("rule ", id, " (plugin ", "p", ")", NULL);
        char *b = dsf_xasprintf("rule %s (plugin %s)", id, "p");
        assert_string_equal(a, b);
        assert_int_equal(strlen(a), len + 16);
        free(a);
        free(b);
    }
}

/* Texts shorter than, exactly at and longer than the stack buffer. */
static void asprintf_any_length(void **state)
{
    (void)state;
    static char big[5000];
    for (size_t len = 0; len < sizeof big - 1; len = len ? len * 2 + 1 : 1) {
        for (size_t d = 0; d < 3; d++) {
            size_t n = len + d;
            memset(big, 'a' + (int)(d % 26), n);
            big[n] = '\0';
            char *s = dsf_xasprintf("<%s>%d", big, 7);
            assert_int_equal(strlen(s), n + 3);
            assert_int_equal(s[0], '<');
            assert_memory_equal(s + 1, big, n);
            assert_string_equal(s + 1 + n, ">7");
            free(s);
        }
    }
    for (size_t n = 250; n < 260; n++) { /* around 256 */
        memset(big, 'q', n);
        big[n] = '\0';
        char *s = dsf_xasprintf("%s", big);
        assert_string_equal(s, big);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concat_joins_in_order),
        cmocka_unit_test(concat_equals_asprintf),
        cmocka_unit_test(asprintf_any_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
