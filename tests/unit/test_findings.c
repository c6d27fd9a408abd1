/*
** test_findings.c -- the bound on a config's findings
** (src/plugin/findings.h): of each rule and severity the first 100 by
** path are kept whatever the order they come in, the rest counted in one
** note; ctx.wanted's answer matches what a put would keep.
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
#include "plugin/findings.h"

static dsf_finding make(const char *rule, dsf_severity sev, int key)
{
    return (dsf_finding){.rule = dsf_xstrdup(rule),
                         .plugin = dsf_xstrdup("p"),
                         .severity = sev,
                         .path = dsf_xasprintf("k%05d", key),
                         .message = dsf_xstrdup("m")};
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The kept paths of rule/sev, sorted, joined by spaces (caller frees). */
static char *kept(const dsf_findings *f, const char *rule, dsf_severity sev)
{
    char **paths = dsf_xcalloc(f->len + 1, sizeof *paths);
    size_t n = 0;
    for (size_t i = 0; i < f->len; i++)
        if (!f->items[i].more && f->items[i].severity == sev &&
            !strcmp(f->items[i].rule, rule))
            paths[n++] = f->items[i].path;
    qsort(paths, n, sizeof *paths, cmp_str);
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(paths[i]) + 1;
    char *out = dsf_xcalloc(len, 1);
    for (size_t i = 0; i < n; i++) {
        strcat(out, paths[i]);
        if (i + 1 < n)
            strcat(out, " ");
    }
    free(paths);
    return out;
}

/* 1000 keys in the order of a permutation (stride 7919 mod 1000). */
static void put_permuted(dsf_findings *f, int stride)
{
    for (int i = 0; i < 1000; i++) {
        dsf_finding x = make("r", DSF_WARNING, (i * stride) % 1000);
        dsf_findings_put(f, &x);
    }
}

static void test_keeps_the_first_by_path_in_any_order(void **state)
{
    (void)state;
    dsf_findings a = DSF_FINDINGS_INIT, b = DSF_FINDINGS_INIT;
    put_permuted(&a, 1);   /* in order */
    put_permuted(&b, 7919); /* scattered */
    char *ka = kept(&a, "r", DSF_WARNING), *kb = kept(&b, "r", DSF_WARNING);
    assert_string_equal(ka, kb);
    assert_int_equal(strlen(ka), DSF_FINDINGS_PER_GROUP * 7 - 1);
    assert_non_null(strstr(ka, "k00000 "));
    assert_non_null(strstr(ka, " k00099"));
    assert_null(strstr(ka, "k00100"));
    free(ka);
    free(kb);
    dsf_findings_close(&b);
    assert_int_equal(b.len, DSF_FINDINGS_PER_GROUP + 1);
    const dsf_finding *note = &b.items[b.len - 1];
    assert_int_equal(note->more, 900);
    assert_int_equal(note->severity, DSF_NOTE);
    assert_string_equal(note->rule, "r");
    assert_string_equal(note->message,
                        "900 more warnings not shown (at most 100 of one "
                        "rule and severity per file)");
    dsf_findings_free(&a);
    dsf_findings_free(&b);
}

static void test_groups_are_per_rule_and_severity(void **state)
{
    (void)state;
    dsf_findings f = DSF_FINDINGS_INIT;
    for (int i = 0; i < 150; i++) {
        dsf_finding w = make("r", DSF_WARNING, i);
        dsf_finding e = make("r", DSF_ERROR, i);
        dsf_findings_put(&f, &w);
        dsf_findings_put(&f, &e);
        if (i < 3) {
            dsf_finding o = make("other", DSF_WARNING, i);
            dsf_findings_put(&f, &o);
        }
    }
    assert_int_equal(f.len, 2 * DSF_FINDINGS_PER_GROUP + 3);
    dsf_findings_close(&f);
    size_t notes = 0, warnings = 0, errors = 0;
    for (size_t i = 0; i < f.len; i++)
        if (f.items[i].more) {
            notes++;
            assert_int_equal(f.items[i].more, 50);
            /* (each note says the severity of what it counts) */
            warnings += strstr(f.items[i].message, "50 more warnings") != NULL;
            errors += strstr(f.items[i].message, "50 more errors") != NULL;
        }
    assert_int_equal(notes, 2); /* none for "other" */
    assert_int_equal(warnings, 1);
    assert_int_equal(errors, 1);
    dsf_findings_free(&f);
}

static void test_wanted_answers_as_put_would(void **state)
{
    (void)state;
    dsf_findings f = DSF_FINDINGS_INIT;
    /* not full: everything is wanted, nothing counted */
    assert_true(dsf_findings_wanted(&f, "r", DSF_WARNING, "zzz"));
    for (int i = 100; i < 200; i++) {
        dsf_finding x = make("r", DSF_WARNING, i);
        dsf_findings_put(&f, &x);
    }
    /* full: a path after the last kept one is counted, not wanted */
    assert_false(dsf_findings_wanted(&f, "r", DSF_WARNING, "k00500"));
    /* one before it, or equal (the message decides), is wanted */
    assert_true(dsf_findings_wanted(&f, "r", DSF_WARNING, "k00050"));
    assert_true(dsf_findings_wanted(&f, "r", DSF_WARNING, "k00199"));
    /* another severity is another group */
    assert_true(dsf_findings_wanted(&f, "r", DSF_ERROR, "k00500"));
    dsf_finding x = make("r", DSF_WARNING, 50);
    dsf_findings_put(&f, &x); /* k00199 goes, counted */
    assert_false(dsf_findings_wanted(&f, "r", DSF_WARNING, "k00199"));
    dsf_findings_close(&f);
    /* the unwanted two and the one replaced */
    assert_int_equal(f.items[f.len - 1].more, 3);
    dsf_findings_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeps_the_first_by_path_in_any_order),
        cmocka_unit_test(test_groups_are_per_rule_and_severity),
        cmocka_unit_test(test_wanted_answers_as_put_would),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
