/*
** test_heap.c -- the Lua states' arena (lua/heap.h): the first call
** populates about DSF_HEAP_ARENA bytes of the C heap (glibc, no
** AddressSanitizer), later calls do nothing, and the memory is usable.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lua/heap.h"

static void test_prefault_once(void **state)
{
    (void)state;
    unsigned long n = dsf_heap_prefault();
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
    unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
    assert_true(n >= DSF_HEAP_ARENA - 2 * page);
    assert_true(n <= DSF_HEAP_ARENA);
#else
    assert_int_equal(n, 0);
#endif
    assert_int_equal(dsf_heap_prefault(), 0);
    /* The heap still works: small and large blocks. */
    char *a = malloc(100), *b = malloc(3u << 20);
    assert_non_null(a);
    assert_non_null(b);
    memset(a, 1, 100);
    memset(b, 2, 3u << 20);
    free(b);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefault_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
