/*
** test_manifest.c -- reading and merging manifest.json (profile/manifest.c):
** what another run left in an output directory is merged only when it is
** a dsforge manifest, and merging the same run twice changes nothing.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/diag.h"
#include "core/error.h"
#include "json/jsonout.h"
#include "profile/manifest.h"

/* This run: profile "p" with two variants, as output.c builds it. */
static cJSON *this_run(void)
{
    static const char text[] =
        "{\"dsforge_version\": \"0\", \"profile\": \"p\", \"target\": "
        "\"deepspeed\", \"chain\": [{\"name\": \"p\"}], \"layers\": [], "
        "\"variants\": [{\"name\": \"small\", \"profile\": \"p\"}, "
        "{\"name\": \"large\", \"profile\": \"p\"}]}";
    cJSON *m = cJSON_Parse(text);
    assert_non_null(m);
    return m;
}

static int parse(cJSON **out, const char *text, dsf_diags *d)
{
    return dsf_manifest_parse(out, "manifest.json", text, strlen(text), d);
}

/* this run merged into old, printed */
static char *merged(const cJSON *old)
{
    cJSON *m = this_run();
    dsf_manifest_merge(m, old, "p");
    char *s = dsf_json_print(m, true);
    cJSON_Delete(m);
    return s;
}

/* merge once, read back, merge again: same text */
static char *assert_idempotent(const char *old_text)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *old;
    assert_int_equal(parse(&old, old_text, &d), 0);
    char *once = merged(old);
    cJSON *again;
    assert_int_equal(parse(&again, once, &d), 0);
    char *twice = merged(again);
    assert_string_equal(once, twice);
    free(twice);
    cJSON_Delete(again);
    cJSON_Delete(old);
    dsf_diags_free(&d);
    return once;
}

static void assert_refused(const char *text)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *m = (cJSON *)&d; /* must be reset */
    assert_int_equal(parse(&m, text, &d), DSF_EINPUT);
    assert_null(m);
    assert_int_equal(dsf_diags_count(&d, DSF_ERROR), 1);
    dsf_diags_free(&d);
}

/* Another profile's variants are kept, sorted by profile; ours replaced. */
static void test_merge_keeps_other_profiles(void **state)
{
    (void)state;
    char *out = assert_idempotent(
        "{\"dsforge_version\": \"0\", \"profile\": \"q\", \"profiles\": "
        "{\"q\": {\"target\": \"hf\"}, \"p\": {}}, \"variants\": ["
        "{\"name\": \"old\", \"profile\": \"p\"}, "
        "{\"name\": \"x\", \"profile\": \"q\"}]}");
    cJSON *m = cJSON_Parse(out);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "variants");
    assert_int_equal(cJSON_GetArraySize(v), 3);
    const char *want[][2] = {{"p", "small"}, {"p", "large"}, {"q", "x"}};
    for (int i = 0; i < 3; i++) {
        const cJSON *e = cJSON_GetArrayItem(v, i);
        assert_string_equal(
            cJSON_GetObjectItemCaseSensitive(e, "profile")->valuestring,
            want[i][0]);
        assert_string_equal(
            cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring,
            want[i][1]);
    }
    cJSON_Delete(m);
    free(out);
}

/* A manifest written before "profiles" existed names one profile. */
static void test_merge_reads_the_old_layout(void **state)
{
    (void)state;
    char *out = assert_idempotent(
        "{\"dsforge_version\": \"0\", \"profile\": \"8xa100\", \"target\": "
        "\"deepspeed\", \"variants\": [{\"name\": \"small\"}]}");
    assert_non_null(strstr(out, "\"8xa100\""));
    free(out);
}

/* Variants gen never writes: refused, not merged one way and then
** another (fuzz_manifest found a number among the variants kept by the
** first merge and dropped by the second: tests/fuzz/findings). */
static void test_foreign_variant_entries_are_refused(void **state)
{
    (void)state;
    assert_refused("{\"dsforge_version\": \"0\", \"profile\": \"q\", "
                   "\"variants\": [{\"name\": \"a\"}, 0]}");
    assert_refused("{\"dsforge_version\": \"0\", \"variants\": [[]]}");
    assert_refused("{\"dsforge_version\": \"0\", \"variants\": "
                   "[{\"profile\": \"q\"}]}");
    assert_refused("{\"dsforge_version\": \"0\", \"variants\": "
                   "[{\"name\": \"a\", \"profile\": 5}]}");
    assert_refused("{\"dsforge_version\": \"0\", \"variants\": {}}");
    assert_refused("{\"variants\": []}");
    assert_refused("[]");
    assert_refused("{\"dsforge_version\": \"0\", \"variants\": [], }x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_keeps_other_profiles),
        cmocka_unit_test(test_merge_reads_the_old_layout),
        cmocka_unit_test(test_foreign_variant_entries_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
