/*
** test_fsutil.c -- dsf_mkdir_p: makes the missing directories from the
** deepest one that exists down (never calling mkdir on one that exists),
** says whether it made the last one, and fails cleanly when a file is in
** the way.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/diag.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"

static char *tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *t = dsf_xasprintf("%s/dsf-fsutil-XXXXXX", base ? base : "/tmp");
    assert_non_null(mkdtemp(t));
    return t;
}

static void test_mkdir_p_deep_and_existing(void **state)
{
    (void)state;
    char *t = tmpdir();
    char *deep = dsf_xasprintf("%s/a/b/c/", t);
    dsf_diags d = DSF_DIAGS_INIT;
    bool created = false;
    assert_int_equal(dsf_mkdir_p(deep, &created, &d), 0);
    assert_true(created);
    char *c = dsf_xasprintf("%s/a/b/c", t);
    assert_true(dsf_is_dir(c));
    /* Existing: nothing to do, nothing made. */
    assert_int_equal(dsf_mkdir_p(c, &created, &d), 0);
    assert_false(created);
    /* One level below an existing one. */
    char *e = dsf_xasprintf("%s/a/b/e", t);
    assert_int_equal(dsf_mkdir_p(e, &created, &d), 0);
    assert_true(created);
    assert_true(dsf_is_dir(e));
    assert_int_equal(d.len, 0);
    /* A file in the way: an error naming the path, nothing made. */
    char *f = dsf_xasprintf("%s/file", t);
    FILE *fp = fopen(f, "w");
    assert_non_null(fp);
    fclose(fp);
    char *under = dsf_xasprintf("%s/file/x/y", t);
    assert_int_equal(dsf_mkdir_p(under, &created, &d), DSF_EINPUT);
    assert_false(created);
    assert_int_equal(dsf_diags_count(&d, DSF_ERROR), 1);
    assert_non_null(strstr(d.items[0].message, "cannot create directory"));
    assert_int_equal(dsf_mkdir_p(f, &created, &d), DSF_EINPUT);
    dsf_diags_free(&d);
    char *cmd = dsf_xasprintf("rm -rf '%s'", t);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(under);
    free(f);
    free(e);
    free(c);
    free(deep);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mkdir_p_deep_and_existing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
