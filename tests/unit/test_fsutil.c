/*
** test_fsutil.c -- dsf_mkdir_p: makes the missing directories from the
** deepest one that exists down (never calling mkdir on one that exists),
** says whether it made the last one, and fails cleanly when a file is in
** the way; the temporary names' process id; the destination checks a
** gen -o makes before its renames; whether a file's maker is gone.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/diag.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/stale.h"
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

static void test_temp_name_pid(void **state)
{
    (void)state;
    long pid = 0;
    assert_true(dsf_temp_name_pid("a-b.json.tmp-1234-7", &pid));
    assert_int_equal(pid, 1234);
    assert_true(dsf_temp_name_pid("manifest.json.tmp-99-123456", &pid));
    assert_int_equal(pid, 99);
    /* what dsf_write_temp does not make */
    static const char *const no[] = {
        "a.json", "a.tmp-1", "a.tmp--1", "a.tmp-1-", "a.tmp-x-1",
        ".tmp-1-2", "tmp-1-2", "a.tmp-0-1", "a.tmp-1-2x", "a.TMP-1-2",
        "a.tmp-1234567890123456789-1"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_false(dsf_temp_name_pid(no[i], &pid));
    /* the names it makes */
    char *t = tmpdir();
    char *f = dsf_xasprintf("%s/x.json", t);
    char *tmp = NULL;
    dsf_diags d = DSF_DIAGS_INIT;
    assert_int_equal(dsf_write_temp(&tmp, f, "{}", 2, false, &d), 0);
    const char *base = strrchr(tmp, '/') + 1;
    assert_true(dsf_temp_name_pid(base, &pid));
    assert_int_equal(pid, (long)getpid());
    assert_int_equal(dsf_temp_pid(), (long)getpid());
    unlink(tmp);
    rmdir(t);
    free(tmp);
    free(f);
    free(t);
}

static void test_dest_checks(void **state)
{
    (void)state;
    char *t = tmpdir();
    dsf_diags d = DSF_DIAGS_INIT;
    struct stat st;
    assert_int_equal(dsf_check_dest_dir(t, &st, &d), 0);
    char *missing = dsf_xasprintf("%s/missing", t);
    assert_int_equal(dsf_check_dest_file(missing, &st, &d), 0);
    char *file = dsf_xasprintf("%s/file", t);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(dsf_check_dest_file(file, &st, &d), 0);
    assert_int_equal(d.len, 0);
    /* a directory where a file goes */
    char *dir = dsf_xasprintf("%s/dir", t);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(dsf_check_dest_file(dir, &st, &d), DSF_EINPUT);
    assert_non_null(strstr(d.items[0].message, "it is a directory"));
    assert_string_equal(d.items[0].file, dir);
    /* a file or a missing path where the directory goes */
    struct stat fst;
    assert_int_equal(dsf_check_dest_dir(file, &fst, &d), DSF_EINPUT);
    assert_int_equal(dsf_check_dest_dir(missing, &fst, &d), DSF_EINPUT);
    assert_int_equal(d.len, 3);
    unsigned long long bytes;
    unsigned long bsize;
    assert_true(dsf_free_space(t, &bytes, &bsize));
    assert_true(bsize > 0);
    assert_false(dsf_free_space(missing, &bytes, &bsize));
    dsf_diags_free(&d);
    rmdir(dir);
    unlink(file);
    rmdir(t);
    free(dir);
    free(file);
    free(missing);
    free(t);
}

static void test_pid_stale(void **state)
{
    (void)state;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    /* a process that has ended */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_true(dsf_pid_stale((long)child, &now));
    /* this process: live, and a file it made now is its own */
    assert_false(dsf_pid_stale((long)getpid(), &now));
    struct timespec start;
    if (dsf_pid_start((long)getpid(), &start)) {
        assert_true(start.tv_sec <= now.tv_sec + 1);
        /* a file older than this process: an earlier holder's of the id */
        struct timespec old = {start.tv_sec - 3600, 0};
        assert_true(dsf_pid_stale((long)getpid(), &old));
    }
    /* not a process id */
    assert_false(dsf_pid_stale(0, &now));
    assert_false(dsf_pid_stale(-5, &now));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mkdir_p_deep_and_existing),
        cmocka_unit_test(test_temp_name_pid),
        cmocka_unit_test(test_dest_checks),
        cmocka_unit_test(test_pid_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
