/*
** test_builtin.c -- the built-in chunks (lua/builtin.h) carry the sha256
** of their source computed at build time, and the source cache
** (lua/srccache.h) serves it: for an embedded path, and for a file on disk
** whose text is a built-in's; any other text is hashed as read.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/diag.h"
#include "core/sha256.h"
#include "lua/builtin.h"
#include "lua/scriptfs.h"
#include "lua/srccache.h"

static void test_digests_are_the_sources(void **state)
{
    (void)state;
    size_t n = 0;
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++, n++) {
        char hex[65];
        dsf_sha256_hex(hex, c->src, c->src_len);
        assert_non_null(c->sha256);
        assert_string_equal(c->sha256, hex);
    }
    assert_true(n > 10);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_cache_serves_build_digest(void **state)
{
    (void)state;
    const dsf_builtin_chunk *c = dsf_builtin_chunks;
    char embedded[4200];
    snprintf(embedded, sizeof embedded, "%s/%s", DSF_BUILTIN_ROOT, c->rel);
    dsf_srccache *cache = dsf_srccache_new();
    dsf_diags d = DSF_DIAGS_INIT;
    const dsf_source *s;
    assert_int_equal(dsf_srccache_get(cache, embedded, &s, &d), 0);
    assert_string_equal(dsf_source_sha256(s), c->sha256);

    /* A file on disk named like the built-in, same text: same digest. */
    char dir[] = "/tmp/dsf-test-builtin.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char same[4300], other[4300];
    const char *slash = strrchr(c->rel, '/');
    snprintf(same, sizeof same, "%s/%s", dir, slash ? slash + 1 : c->rel);
    write_file(same, c->src, c->src_len);
    /* Different text: its own digest. */
    snprintf(other, sizeof other, "%s/other.lua", dir);
    write_file(other, "return 1\n", 9);
    const dsf_source *a, *b;
    assert_int_equal(dsf_srccache_get(cache, same, &a, &d), 0);
    assert_int_equal(dsf_srccache_get(cache, other, &b, &d), 0);
    char hex[65];
    dsf_sha256_hex(hex, c->src, c->src_len);
    assert_string_equal(dsf_source_sha256(a), hex);
    dsf_sha256_hex(hex, "return 1\n", 9);
    assert_string_equal(dsf_source_sha256(b), hex);
    dsf_srccache_free(cache);
    dsf_diags_free(&d);
    unlink(same);
    unlink(other);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digests_are_the_sources),
        cmocka_unit_test(test_cache_serves_build_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
