/*
** test_lsp_jedit.c -- a finding's machine-readable fix as text edits of
** the JSON text (lsp/jedit.h): rename, set, remove (middle, last, only
** member), move into an object (its layout kept) or a new one, comments
** kept, and the cases that give no edit.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/xalloc.h"
#include "lsp/jedit.h"

/* text with the edit (JSON text) applied, or NULL when it gives none;
** *title its title. Caller frees both. */
static char *apply(const char *text, const char *edit, char **title)
{
    cJSON *e = cJSON_Parse(edit);
    assert_non_null(e);
    dsf_jtextedit te[2];
    size_t n;
    int rc = dsf_jedit_plan(text, strlen(text), e, te, &n, title);
    cJSON_Delete(e);
    if (rc)
        return NULL;
    assert_true(n >= 1 && n <= 2);
    char *out = dsf_xstrdup(text);
    for (size_t i = n; i-- > 0;) { /* from the end: the offsets hold */
        assert_true(te[i].a <= te[i].b);
        if (i + 1 < n)
            assert_true(te[i].b <= te[i + 1].a);
        size_t len = strlen(out), tl = strlen(te[i].text);
        char *r = dsf_xmalloc(len - (te[i].b - te[i].a) + tl + 1);
        memcpy(r, out, te[i].a);
        memcpy(r + te[i].a, te[i].text, tl);
        strcpy(r + te[i].a + tl, out + te[i].b);
        free(out);
        out = r;
    }
    dsf_jedit_free(te, n);
    return out;
}

static void expect(const char *text, const char *edit, const char *want,
                   const char *want_title)
{
    char *title = NULL;
    char *got = apply(text, edit, &title);
    if (!want) {
        assert_null(got);
        assert_null(title);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_string_equal(title, want_title);
    free(got);
    free(title);
}

static const char CFG[] =
    "{\n"
    "  // the batch\n"
    "  \"train_batch_size\": 16,\n"
    "  \"zero_optimization\": {\"stage\": 2, \"overlap_com\": true},\n"
    "  \"bf16\": {\"enabled\": true, \"loss_scale\": 0}\n"
    "}\n";

static void test_rename_and_set(void **state)
{
    (void)state;
    expect(CFG, "{\"op\":\"rename\",\"path\":\"zero_optimization.overlap_com\","
                "\"to\":\"overlap_comm\"}",
           "{\n  // the batch\n  \"train_batch_size\": 16,\n"
           "  \"zero_optimization\": {\"stage\": 2, \"overlap_comm\": true},\n"
           "  \"bf16\": {\"enabled\": true, \"loss_scale\": 0}\n}\n",
           "Rename \"overlap_com\" to \"overlap_comm\"");
    /* onto a key that is there: none */
    expect(CFG, "{\"op\":\"rename\",\"path\":\"zero_optimization.overlap_com\","
                "\"to\":\"stage\"}", NULL, NULL);
    expect(CFG, "{\"op\":\"set\",\"path\":\"train_batch_size\",\"value\":32}",
           "{\n  // the batch\n  \"train_batch_size\": 32,\n"
           "  \"zero_optimization\": {\"stage\": 2, \"overlap_com\": true},\n"
           "  \"bf16\": {\"enabled\": true, \"loss_scale\": 0}\n}\n",
           "Set train_batch_size to 32");
    expect("{\"a\": [1, {\"b\": \"auto\"}]}",
           "{\"op\":\"set\",\"path\":\"a[1].b\",\"value\":false}",
           "{\"a\": [1, {\"b\": false}]}", "Set a[1].b to false");
    /* a path that is not there */
    expect(CFG, "{\"op\":\"set\",\"path\":\"gradient_clipping\",\"value\":1}",
           NULL, NULL);
    expect(CFG, "{\"op\":\"set\",\"path\":\"bf16.enabled.x\",\"value\":1}",
           NULL, NULL);
}

static void test_remove(void **state)
{
    (void)state;
    /* a member with one after it: up to that one */
    expect("{\"a\": 1, /* c */ \"b\": 2, \"c\": 3}",
           "{\"op\":\"remove\",\"path\":\"a\"}",
           "{\"b\": 2, \"c\": 3}", "Remove a");
    /* the last: from the previous one's end */
    expect("{\"a\": 1,\n \"b\": {\"x\": [1, 2]}\n}",
           "{\"op\":\"remove\",\"path\":\"b\"}", "{\"a\": 1\n}", "Remove b");
    /* the only one */
    expect("{\"z\": {\"only\": 1}}", "{\"op\":\"remove\",\"path\":\"z.only\"}",
           "{\"z\": {}}", "Remove z.only");
    /* the last of duplicate keys (the one the parser keeps) */
    expect("{\"a\": 1, \"a\": 2}", "{\"op\":\"remove\",\"path\":\"a\"}",
           "{\"a\": 1}", "Remove a");
}

static void test_move(void **state)
{
    (void)state;
    /* to a section that is not there: made at the top level, on a line
    ** of its own indented as the members */
    expect(CFG, "{\"op\":\"move\",\"path\":\"bf16.loss_scale\","
                "\"to\":\"fp16.loss_scale\"}",
           "{\n  // the batch\n  \"train_batch_size\": 16,\n"
           "  \"zero_optimization\": {\"stage\": 2, \"overlap_com\": true},\n"
           "  \"bf16\": {\"enabled\": true},\n"
           "  \"fp16\": {\"loss_scale\": 0}\n}\n",
           "Move bf16.loss_scale to fp16.loss_scale");
    /* into one that is there, before the source */
    expect("{\"fp16\": {\"enabled\": false}, \"bf16\": {\"loss_scale\": 0, "
           "\"enabled\": true}}",
           "{\"op\":\"move\",\"path\":\"bf16.loss_scale\","
           "\"to\":\"fp16.loss_scale\"}",
           "{\"fp16\": {\"enabled\": false, \"loss_scale\": 0}, \"bf16\": "
           "{\"enabled\": true}}",
           "Move bf16.loss_scale to fp16.loss_scale");
    /* into an empty object; two levels made */
    expect("{\"a\": {}, \"k\": [1]}",
           "{\"op\":\"move\",\"path\":\"k\",\"to\":\"a.b.c\"}",
           "{\"a\": {\"b\": {\"c\": [1]}}}", "Move k to a.b.c");
    /* onto a key that is there, into itself, through an array: none */
    expect(CFG, "{\"op\":\"move\",\"path\":\"bf16.loss_scale\","
                "\"to\":\"train_batch_size\"}", NULL, NULL);
    expect(CFG, "{\"op\":\"move\",\"path\":\"bf16\",\"to\":\"bf16.x.y\"}",
           NULL, NULL);
    expect("{\"a\": [1], \"k\": 1}",
           "{\"op\":\"move\",\"path\":\"k\",\"to\":\"a[0].k\"}", NULL, NULL);
}

static void test_unreadable(void **state)
{
    (void)state;
    expect("{\"a\": 1, \"b\" 2}", "{\"op\":\"remove\",\"path\":\"a\"}", NULL,
           NULL);
    expect("{\"a\": \"unterminated}", "{\"op\":\"remove\",\"path\":\"a\"}",
           NULL, NULL);
    expect("{\"a\": 1}", "{\"op\":\"explode\",\"path\":\"a\"}", NULL, NULL);
    expect("{\"a\": 1}", "{\"op\":\"remove\",\"path\":\"\"}", NULL, NULL);
    expect("{\"a\\u0062\": 1}", "{\"op\":\"remove\",\"path\":\"ab\"}", NULL,
           NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rename_and_set),
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_move),
        cmocka_unit_test(test_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
