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
#include "fetch/semver.h"

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

static bool req_matches(const char *req, const char *v)
{
    dsf_semreq r;
    size_t col;
    const char *why;
    if (!dsf_semreq_parse(&r, req, &col, &why))
        fail_msg("requirement '%s' does not parse: %s", req, why);
    return dsf_semreq_matches(&r, v);
}

/* cargo's requirement semantics, including 0.x carets and pre-releases */
static void test_fetch__semver(void **state)
{
    (void)state;
    static const struct { const char *req, *v; bool ok; } cases[] = {
        {"1.2.3", "1.2.3", true},     {"1.2.3", "1.2.4", false},
        {"=1.2.3", "1.2.3", true},    {"=1.2", "1.2.9", true},
        {"=1.2", "1.3.0", false},     {"1", "1.9.9", true},
        {"1", "2.0.0", false},        {"^1.2.3", "1.2.3", true},
        {"^1.2.3", "1.9.0", true},    {"^1.2.3", "1.2.2", false},
        {"^1.2.3", "2.0.0", false},   {"^1.2", "1.2.0", true},
        {"^1.2", "1.1.9", false},     {"^0.2.3", "0.2.9", true},
        {"^0.2.3", "0.3.0", false},   {"^0.2.3", "0.2.2", false},
        {"^0.0.3", "0.0.3", true},    {"^0.0.3", "0.0.4", false},
        {"^0.0", "0.0.7", true},      {"^0.0", "0.1.0", false},
        {"^0", "0.9.9", true},        {"^0", "1.0.0", false},
        {"^1", "1.0.0", true},        {"~1.2.3", "1.2.9", true},
        {"~1.2.3", "1.3.0", false},   {"~1.2.3", "1.2.2", false},
        {"~1.2", "1.2.0", true},      {"~1", "1.5.0", true},
        {"~1", "2.0.0", false},       {"~0.2.3", "0.2.4", true},
        /* pre-releases only when asked for on the same M.m.p */
        {"^1.2", "1.3.0-rc.1", false},
        {"^1.2.0-rc.1", "1.2.0-rc.2", true},
        {"^1.2.0-rc.1", "1.2.0", true},
        {"^1.2.0-rc.1", "1.4.0-rc.1", false},
        {"^1.2.0-rc.2", "1.2.0-rc.1", false},
        {"1.2.0-rc.1", "1.2.0-rc.1", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (req_matches(cases[i].req, cases[i].v) != cases[i].ok)
            fail_msg("%s vs %s: expected %s", cases[i].req, cases[i].v,
                     cases[i].ok ? "a match" : "no match");
    static const struct { const char *req; size_t col; } bad[] = {
        {"", 1}, {"^", 2}, {"1.x", 3}, {"^1.2.3.4", 7}, {"01.2", 1},
        {"1.2-rc", 4}, {"1.2.3+b", 6}, {"~ 1", 2}, {"^1.2.3-", 8},
        {">=1.0", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dsf_semreq r;
        size_t col = 0;
        const char *why = NULL;
        if (dsf_semreq_parse(&r, bad[i].req, &col, &why))
            fail_msg("'%s' parsed", bad[i].req);
        if (col != bad[i].col)
            fail_msg("'%s': column %zu, expected %zu (%s)", bad[i].req, col,
                     bad[i].col, why);
    }
    /* precedence (semver 2.0, section 11) */
    const char *order[] = {"1.0.0-alpha", "1.0.0-alpha.1",
                           "1.0.0-alpha.beta", "1.0.0-beta",
                           "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",
                           "1.0.0", "1.0.10", "1.10.0", "10.0.0"};
    for (size_t i = 0; i + 1 < sizeof order / sizeof order[0]; i++) {
        assert_true(dsf_semver_valid(order[i]));
        assert_true(dsf_semver_cmp(order[i], order[i + 1]) < 0);
        assert_true(dsf_semver_cmp(order[i + 1], order[i]) > 0);
    }
    assert_false(dsf_semver_valid("1.0"));
    assert_false(dsf_semver_valid("1.0.0+build"));
    assert_false(dsf_semver_valid("1.0.01"));
    assert_false(dsf_semver_valid("1.0.0-01"));
    /* at most 64 bytes, like every version in an index (found by
    ** fuzz_index: a longer release did not make a valid tree) */
    assert_true(dsf_semver_valid("1.0.0-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                 "aaaaaaaaaaaaaaaaaaaaaaa"));
    assert_false(dsf_semver_valid("1.0.0-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                  "aaaaaaaaaaaaaaaaaaaaaaaaa"));
}

#define SHB "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *index2 =
    "{\"format\": 2, \"name\": \"team\", \"releases\": {"
    "\"1.10.0\": {\"profiles\": {\"tiny\": \"" SHB "\"}},"
    "\"1.2.0\": {\"profiles\": {\"tiny\": \"" SHA "\", \"big\": \"" SHA
    "\"}, \"plugins\": {\"lint\": {\"init.lua\": \"" SHA "\"}}}}}";

static void test_fetch__index_format2(void **state)
{
    (void)state;
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_index *ix;
    assert_int_equal(parse(&ix, index2, &d), 0);
    assert_int_equal(ix->format, 2);
    assert_int_equal(ix->n_releases, 2);
    /* semver order, not text order */
    assert_string_equal(ix->releases[0].version, "1.2.0");
    assert_string_equal(ix->releases[1].version, "1.10.0");
    const dsf_index *r = ix->releases[0].ix;
    assert_int_equal(r->n_files, 3);
    assert_string_equal(r->files[0].local, "plugins/lint/init.lua");
    assert_string_equal(r->files[0].remote, "blobs/" SHA);
    assert_string_equal(r->profiles[0].version, "1.2.0");
    dsf_semreq req;
    size_t col;
    const char *why;
    assert_true(dsf_semreq_parse(&req, "^1.2", &col, &why));
    assert_string_equal(dsf_index_newest(ix, "tiny", &req)->version,
                        "1.10.0");
    assert_string_equal(dsf_index_newest(ix, "big", &req)->version, "1.2.0");
    assert_null(dsf_index_newest(ix, "nope", NULL));
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
    expect_bad("{\"format\": 2, \"name\": \"t\",\n \"releases\": {\"1.0\": "
               "{\"profiles\": {\"a\": \"" SHA "\"}}}}", "is not a version", 2);
    expect_bad("{\"format\": 2, \"name\": \"t\", \"releases\": {\"1.0.0\": "
               "{}}}", "has no profiles and no plugins", 0);
    expect_bad("{\"format\": 2, \"name\": \"t\", \"releases\": {}}",
               "non-empty", 0);
    expect_bad("{\"format\": 2, \"name\": \"t\", \"profiles\": {}}",
               "per release", 0);
    expect_bad("{\"format\": 2, \"name\": \"t\", \"releases\": {\"1.0.0\": "
               "{\"plugins\": {\"p\": {\"../x\": \"" SHA "\"}}}}}",
               "leaves the plugin", 0);
}

/* The lock of a format-2 repository pins what each use resolved to and
** the files of those releases only; a diff names the moves. */
static void test_fetch__lock_releases(void **state)
{
    (void)state;
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_index *ix;
    assert_int_equal(parse(&ix, index2, &d), 0);
    dsf_lock lock = {0};
    dsf_lock_set(&lock, "team", "https://x", SHA, ix);
    const dsf_lock_repo *r = dsf_lock_find(&lock, "team");
    assert_true(r->releases);
    assert_int_equal(r->n_files, 0);
    assert_true(dsf_lock_matches(r, ix));
    dsf_lock_select(&lock, "team", ix, "profile tiny@1.2.0", "1.2.0");
    dsf_lock_select(&lock, "team", ix, "profile tiny", "1.2.0");
    r = dsf_lock_find(&lock, "team");
    assert_int_equal(r->n_files, 3); /* 1.2.0 once */
    assert_string_equal(dsf_lock_selected(r, "profile tiny"), "1.2.0");
    assert_true(dsf_lock_matches(r, ix));
    char *text = dsf_lock_text(&lock);
    assert_non_null(strstr(text, "\"1.2.0/profiles/tiny.lua\""));
    assert_non_null(strstr(text, "\"profile tiny@1.2.0\": \"1.2.0\""));
    dsf_lock back;
    assert_int_equal(dsf_lock_parse(&back, "l", text, strlen(text), &d), 0);
    assert_true(dsf_lock_matches(dsf_lock_find(&back, "team"), ix));
    dsf_buf out = DSF_BUF_INIT;
    /* "profile tiny" would move to 1.10.0; the exact one stays */
    assert_int_equal(dsf_lock_diff(&out, r, ix), 2);
    assert_non_null(strstr(dsf_buf_str(&out), "profile tiny: 1.2.0 -> "
                                              "1.10.0"));
    assert_non_null(strstr(dsf_buf_str(&out), "release 1.10.0: published"));
    dsf_buf_free(&out);
    char *key = dsf_lock_selection_key("tiny", "^1.2");
    assert_string_equal(key, "profile tiny@^1.2");
    char *prof;
    dsf_semreq req;
    bool has;
    assert_true(dsf_lock_selection_parse(key, &prof, &req, &has));
    assert_true(has);
    assert_string_equal(prof, "tiny");
    free(prof);
    free(key);
    assert_false(dsf_lock_selection_parse("profile tiny@^x", &prof, &req,
                                          &has));
    const char *bad = "{\"lock_format\": 1, \"repositories\": {\"t\": "
                      "{\"url\": \"u\", \"index_sha256\": \"" SHA "\", "
                      "\"selections\": {\"profile a@1.x\": \"1.0.0\"}}}}";
    dsf_lock bl;
    assert_int_equal(dsf_lock_parse(&bl, "l", bad, strlen(bad), &d),
                     DSF_EINPUT);
    dsf_lock_free(&bl);
    free(text);
    dsf_lock_free(&back);
    dsf_lock_free(&lock);
    dsf_index_free(ix);
    dsf_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fetch__index_roundtrip),
        cmocka_unit_test(test_fetch__semver),
        cmocka_unit_test(test_fetch__index_format2),
        cmocka_unit_test(test_fetch__lock_releases),
        cmocka_unit_test(test_fetch__index_rejects),
        cmocka_unit_test(test_fetch__paths),
        cmocka_unit_test(test_fetch__lock_text),
        cmocka_unit_test(test_fetch__url_policy),
        cmocka_unit_test(test_fetch__lock_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
