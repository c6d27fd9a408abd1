/* test_fetch_index.c -- index.json validation, lock diffs and the cache's
** hash checks, without a network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/error.h"
#include "core/sha256.h"
#include "fetch/http.h"
#include "fetch/index.h"
#include "fetch/lock.h"

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static int parse(dsf_index **ix, const char *text, dsf_diags *d)
{
    return dsf_index_parse(ix, "index.json", text, strlen(text), d);
}

static void test_fetch__index_roundtrip(void **state)
{
    (void)state;
    const char *text =
        "{\"format\": 1, \"name\": \"team\", \"profiles\": {\"tiny\": "
        "{\"version\": \"1.0\", \"path\": \"profiles/tiny.lua\", "
        "\"sha256\": \"" SHA "\"}}, \"plugins\": {\"lint\": {\"version\": "
        "\"2\", \"path\": \"plugins/lint\", \"files\": {\"init.lua\": \""
        SHA "\", \"rules/a.lua\": \"" SHA "\"}}}}";
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_index *ix;
    assert_int_equal(parse(&ix, text, &d), 0);
    assert_int_equal(ix->n_files, 3);
    assert_string_equal(ix->files[0].local, "plugins/lint/init.lua");
    assert_string_equal(ix->files[1].remote, "plugins/lint/rules/a.lua");
    assert_string_equal(ix->files[2].local, "profiles/tiny.lua");
    char *out = dsf_index_write(ix);
    dsf_index *again;
    assert_int_equal(parse(&again, out, &d), 0);
    char *out2 = dsf_index_write(again);
    assert_string_equal(out, out2);
    free(out);
    free(out2);
    dsf_index_free(again);
    dsf_index_free(ix);
    dsf_diags_free(&d);
}

static void expect_bad(const char *text, const char *needle, int line)
{
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_index *ix = NULL;
    assert_int_equal(parse(&ix, text, &d), DSF_ENET);
    assert_null(ix);
    assert_true(d.len > 0);
    if (!strstr(d.items[0].message, needle))
        fail_msg("message '%s' lacks '%s'", d.items[0].message, needle);
    if (line)
        assert_int_equal(d.items[0].line, line);
    dsf_diags_free(&d);
}

static void test_fetch__index_rejects(void **state)
{
    (void)state;
    expect_bad("{\"format\": 1,\n \"name\": \"t\",\n \"profiles\": {\"a\": "
               "{\"version\": \"1\", \"path\": \"../a.lua\", \"sha256\": \""
               SHA "\"}}}", "leaves the repository", 3);
    expect_bad("{\"format\": 1, \"name\": \"t\", \"profiles\": {\"a\": "
               "{\"version\": \"1\", \"path\": \"a.lua\", \"sha256\": "
               "\"abc\"}}}", "sha256", 0);
    expect_bad("{\"format\": 1, \"name\": \"t\", \"plugins\": {\"p\": "
               "{\"version\": \"1\", \"path\": \"p\", \"files\": "
               "{\"/etc/x\": \"" SHA "\"}}}}", "leaves the plugin", 0);
    expect_bad("{\"format\": 1,\n\"name\": ", "", 2);
    expect_bad("{\"format\": 3, \"name\": \"t\"}", "unsupported", 1);
    expect_bad("{\"format\": 1, \"name\": \"t\", \"name\": \"u\"}",
               "duplicate", 0);
    /* #11.10: a file that is also a directory is the index's fault */
    expect_bad("{\"format\": 1, \"name\": \"t\", \"plugins\": {\"p\": "
               "{\"version\": \"1\", \"path\": \"p\", \"files\": "
               "{\"a\": \"" SHA "\", \"a-x\": \"" SHA "\", \"a/b\": \""
               SHA "\"}}}}", "is both a file and the directory", 0);
}

/* #11.11: the lock parses from text, rejects duplicate keys (which would
** be written back as two entries) and writes back a fixed point. */
static void test_fetch__lock_text(void **state)
{
    (void)state;
    const char *dup =
        "{\"lock_format\": 1, \"repositories\": {\n\"a\": {\"url\": \"u\", "
        "\"index_sha256\": \"" SHA "\"},\n\"a\": {\"url\": \"v\", "
        "\"index_sha256\": \"" SHA "\"}}}";
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_lock lock;
    assert_int_equal(dsf_lock_parse(&lock, "x.lock", dup, strlen(dup), &d),
                     DSF_EINPUT);
    assert_non_null(strstr(d.items[0].message, "duplicate key"));
    assert_int_equal(d.items[0].line, 3);
    dsf_lock_free(&lock);
    dsf_diags_free(&d);
    const char *two =
        "{\"lock_format\": 1, \"repositories\": {\"b\": {\"url\": \"u\", "
        "\"index_sha256\": \"" SHA "\"}, \"a\": {\"url\": \"v\", "
        "\"index_sha256\": \"" SHA "\", \"files\": {\"profiles/t.lua\": \""
        SHA "\"}}}}";
    assert_int_equal(dsf_lock_parse(&lock, "x.lock", two, strlen(two), &d),
                     0);
    assert_string_equal(lock.repos[0].name, "a");
    char *once = dsf_lock_text(&lock);
    dsf_lock again;
    assert_int_equal(dsf_lock_parse(&again, "y.lock", once, strlen(once),
                                    &d), 0);
    char *twice = dsf_lock_text(&again);
    assert_string_equal(once, twice);
    free(once);
    free(twice);
    dsf_lock_free(&again);
    dsf_lock_free(&lock);
    dsf_diags_free(&d);
}

static void test_fetch__paths(void **state)
{
    (void)state;
    assert_true(dsf_index_path_ok("profiles/a.lua"));
    assert_true(dsf_index_path_ok("a/b-c_d+e~f@g.lua"));
    assert_false(dsf_index_path_ok(""));
    assert_false(dsf_index_path_ok("/abs"));
    assert_false(dsf_index_path_ok("a/../b"));
    assert_false(dsf_index_path_ok(".."));
    assert_false(dsf_index_path_ok("a//b"));
    assert_false(dsf_index_path_ok("a/./b"));
    assert_false(dsf_index_path_ok("a\\b"));
    assert_false(dsf_index_path_ok("a/b/"));
    assert_false(dsf_index_path_ok("a b"));
    assert_false(dsf_index_name_ok("../x"));
    assert_false(dsf_index_name_ok(".hidden"));
    assert_true(dsf_index_name_ok("8xa100"));
}

static void test_fetch__url_policy(void **state)
{
    (void)state;
    assert_true(dsf_http_url_allowed("https://example.com/r", false));
    assert_true(dsf_http_url_allowed("http://127.0.0.1:8000/r", false));
    assert_true(dsf_http_url_allowed("http://127.1.2.3/r", false));
    assert_true(dsf_http_url_allowed("http://localhost/r", false));
    assert_true(dsf_http_url_allowed("http://[::1]:80/r", false));
    assert_false(dsf_http_url_allowed("http://example.com/r", false));
    assert_false(dsf_http_url_allowed("http://127.0.0.1.evil.com/", false));
    assert_false(dsf_http_url_allowed("http://x@evil.com/", false));
    assert_true(dsf_http_url_allowed("http://example.com/r", true));
    assert_false(dsf_http_url_allowed("file:///etc/passwd", true));
    assert_false(dsf_http_url_allowed("ftp://127.0.0.1/", true));
}

static void test_fetch__lock_diff(void **state)
{
    (void)state;
    dsf_index *a = dsf_index_new("t");
    dsf_index_add_profile(a, "tiny", "1.0", "profiles/tiny.lua", SHA);
    dsf_index_add_profile(a, "gone", "1.0", "profiles/gone.lua", SHA);
    dsf_index_finish(a);
    dsf_lock lock = {0};
    dsf_lock_set(&lock, "t", "https://x", SHA, a);
    char other[65];
    dsf_sha256_hex(other, "x", 1);
    dsf_index *b = dsf_index_new("t");
    dsf_index_add_profile(b, "tiny", "1.1", "profiles/tiny.lua", other);
    dsf_index_add_profile(b, "new", "1.0", "profiles/new.lua", SHA);
    dsf_index_finish(b);
    const dsf_lock_repo *r = dsf_lock_find(&lock, "t");
    assert_true(dsf_lock_matches(r, a));
    assert_false(dsf_lock_matches(r, b));
    dsf_buf out = DSF_BUF_INIT;
    assert_int_equal(dsf_lock_diff(&out, r, b), 4);
    const char *s = dsf_buf_str(&out);
    assert_non_null(strstr(s, "profiles/new.lua: added"));
    assert_non_null(strstr(s, "profiles/gone.lua: removed"));
    assert_non_null(strstr(s, "profiles/tiny.lua: content changed"));
    assert_non_null(strstr(s, "profile tiny: version 1.0 -> 1.1"));
    dsf_buf_free(&out);
    dsf_index_free(a);
    dsf_index_free(b);
    dsf_lock_free(&lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fetch__index_roundtrip),
        cmocka_unit_test(test_fetch__index_rejects),
        cmocka_unit_test(test_fetch__paths),
        cmocka_unit_test(test_fetch__lock_text),
        cmocka_unit_test(test_fetch__url_policy),
        cmocka_unit_test(test_fetch__lock_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
