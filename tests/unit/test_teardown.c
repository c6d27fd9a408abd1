/*
** test_teardown.c -- when a command may leave its memory to the OS at
** exit (core/teardown.h): never in a build a leak checker reads (debug,
** AddressSanitizer), never with DSFORGE_FULL_TEARDOWN=1, and in a release
** build otherwise (DSFORGE_FULL_TEARDOWN=0 forces it there, even under
** valgrind).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/teardown.h"

#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__)
#define CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define CHECKED 1
#endif
#endif
#ifndef CHECKED
#define CHECKED 0
#endif

static void test_full_teardown_asked(void **state)
{
    (void)state;
    setenv("DSFORGE_FULL_TEARDOWN", "1", 1);
    assert_false(dsf_teardown_by_exit());
    unsetenv("DSFORGE_FULL_TEARDOWN");
}

static void test_skip_forced(void **state)
{
    (void)state;
    setenv("DSFORGE_FULL_TEARDOWN", "0", 1);
    assert_int_equal(dsf_teardown_by_exit(), !CHECKED);
    unsetenv("DSFORGE_FULL_TEARDOWN");
}

static void test_default(void **state)
{
    (void)state;
    unsetenv("DSFORGE_FULL_TEARDOWN");
    const char *pre = getenv("LD_PRELOAD");
    if (pre && *pre)
        skip(); /* maybe valgrind: covered by the two tests above */
    assert_int_equal(dsf_teardown_by_exit(), !CHECKED);
    /* A preloaded valgrind core means a leak checker is watching. */
    setenv("LD_PRELOAD", "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so", 1);
    assert_false(dsf_teardown_by_exit());
    unsetenv("LD_PRELOAD");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_teardown_asked),
        cmocka_unit_test(test_skip_forced),
        cmocka_unit_test(test_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
