/*
** test_merge.c -- layering (src/doc/merge.h) and provenance
** (src/doc/prov.h): deep merge of objects, arrays replacing, tombstones,
** SET/OVERRIDE/DELETE events with positions from a parsed layer, and
** dsf_prov_origin.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/diag.h"
#include "doc/doc.h"
#include "doc/merge.h"
#include "doc/prov.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

static cJSON *json_src(const char *text, dsf_jsrc **src)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = NULL;
    int rc = dsf_json_parse(&doc, src, "team.json", text, strlen(text), &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    assert_int_equal(rc, 0);
    dsf_diags_free(&d);
    /* Layers spell a delete as {"$delete": true}. */
    dsf_doc_mark_tombstones(doc);
    return doc;
}

static cJSON *json(const char *text)
{
    return json_src(text, NULL);
}

static void expect_doc(const cJSON *doc, const char *want)
{
    char *got = dsf_json_print(doc, false);
    assert_string_equal(got, want);
    free(got);
}

static const dsf_layer profile_layer = {"profile", "profile p", "p.lua", 12,
                                        0};
static const dsf_layer file_layer = {"file", "-f team.json", "team.json", 0,
                                     0};
static const dsf_layer edit_layer = {"edit", "argument #4", "argument #4", 0,
                                     0};

/* Merges layer text onto doc text (no provenance) and compares. */
static void expect_merge(const char *base, const char *layer,
                         const char *want)
{
    cJSON *doc = json(base), *l = json(layer);
    dsf_merge(doc, l, &file_layer, NULL, NULL);
    expect_doc(doc, want);
    cJSON_Delete(doc);
    cJSON_Delete(l);
}

static void expect_event(const dsf_prov *p, size_t i, const char *path,
                         dsf_prov_action action, const dsf_layer *layer,
                         int line, int col, const char *value)
{
    assert_true(i < p->len);
    const dsf_prov_event *e = &p->ev[i];
    if (strcmp(e->path, path) || e->action != action || e->line != line ||
        e->col != col)
        print_error("event %zu: %s action %d at %d:%d; expected %s action "
                    "%d at %d:%d\n",
                    i, e->path, (int)e->action, e->line, e->col, path,
                    (int)action, line, col);
    assert_string_equal(e->path, path);
    assert_int_equal(e->action, action);
    assert_ptr_equal(e->layer, layer);
    assert_int_equal(e->line, line);
    assert_int_equal(e->col, col);
    if (value)
        assert_string_equal(e->value, value);
    else
        assert_null(e->value);
}

/* ------------------------------------------------------------------ */
/* Merging. */

static void test_objects_deep_merge(void **state)
{
    (void)state;
    expect_merge("{\"a\":{\"x\":1,\"y\":2},\"k\":1}",
                 "{\"a\":{\"y\":3,\"z\":4}}",
                 "{\"a\":{\"x\":1,\"y\":3,\"z\":4},\"k\":1}");
    expect_merge("{\"a\":{\"b\":{\"c\":1,\"d\":2}}}",
                 "{\"a\":{\"b\":{\"d\":5},\"e\":6}}",
                 "{\"a\":{\"b\":{\"c\":1,\"d\":5},\"e\":6}}");
    expect_merge("{\"a\":1}", "{}", "{\"a\":1}");
    expect_merge("{}", "{\"a\":{\"b\":{}}}", "{\"a\":{\"b\":{}}}");
    expect_merge("{\"a\":{\"x\":1}}", "{\"a\":{}}", "{\"a\":{\"x\":1}}");
}

static void test_other_values_replace(void **state)
{
    (void)state;
    expect_merge("{\"l\":[1,2,3]}", "{\"l\":[4]}", "{\"l\":[4]}");
    expect_merge("{\"l\":[{\"a\":1}]}", "{\"l\":[{\"b\":2}]}",
                 "{\"l\":[{\"b\":2}]}");
    expect_merge("{\"a\":{\"x\":1}}", "{\"a\":5}", "{\"a\":5}");
    expect_merge("{\"a\":5}", "{\"a\":{\"x\":1}}", "{\"a\":{\"x\":1}}");
    expect_merge("{\"a\":[1]}", "{\"a\":{\"x\":1}}", "{\"a\":{\"x\":1}}");
    expect_merge("{\"a\":\"s\"}", "{\"a\":null}", "{\"a\":null}");
}

static void test_tombstones(void **state)
{
    (void)state;
    expect_merge("{\"a\":1,\"b\":{\"c\":2,\"d\":3}}",
                 "{\"a\":{\"$delete\":true},\"b\":{\"c\":{\"$delete\":true}}}",
                 "{\"b\":{\"d\":3}}");
    /* Deleting what is not there changes nothing. */
    expect_merge("{\"a\":1}", "{\"zz\":{\"$delete\":true}}", "{\"a\":1}");
    /* Tombstones inside a new subtree have nothing to delete. */
    expect_merge("{}", "{\"n\":{\"x\":1,\"y\":{\"$delete\":true}}}",
                 "{\"n\":{\"x\":1}}");
    expect_merge("{\"n\":5}", "{\"n\":{\"x\":{\"$delete\":true}}}",
                 "{\"n\":{}}");
    /* Only the exact spelling is a directive. */
    expect_merge("{\"a\":1}", "{\"a\":{\"$delete\":false}}",
                 "{\"a\":{\"$delete\":false}}");
    expect_merge("{\"a\":1}", "{\"a\":{\"$delete\":true,\"x\":1}}",
                 "{\"a\":{\"$delete\":true,\"x\":1}}");
}

static void test_merge_copies(void **state)
{
    (void)state;
    cJSON *doc = json("{}"), *l = json("{\"a\":{\"b\":[1]}}");
    dsf_merge(doc, l, &file_layer, NULL, NULL);
    /* Changing the layer afterwards does not touch the document. */
    cJSON_AddNumberToObject(cJSON_GetObjectItem(l, "a"), "c", 2);
    cJSON_Delete(l);
    expect_doc(doc, "{\"a\":{\"b\":[1]}}");
    cJSON_Delete(doc);
}

/* dsf_merge_take moves the layer's members instead of copying them: the
** same document and the same events as dsf_merge, for overrides, new
** keys, nested objects, arrays, empty objects and tombstones (at the top,
** nested, and inside a new subtree, where they are dropped). */
static void test_merge_take_same_as_merge(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"{}", "{\"a\":{\"b\":[1]},\"c\":2}"},
        {"{\"a\":{\"b\":1,\"c\":{\"d\":2}},\"e\":[1]}",
         "{\"a\":{\"c\":{\"d\":3,\"f\":4},\"g\":{}},\"e\":[2,3],"
         "\"h\":null}"},
        {"{\"a\":1,\"b\":{\"c\":1},\"d\":\"x\"}",
         "{\"a\":{\"$delete\":true},\"b\":{\"c\":{\"$delete\":true}},"
         "\"n\":{\"$delete\":true},\"d\":{\"p\":{\"$delete\":true},"
         "\"q\":{\"r\":{\"$delete\":true},\"s\":1}}}"},
        {"{\"a\":[1],\"b\":{}}", "{\"a\":{},\"b\":{},\"c\":{}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dsf_prov p1 = DSF_PROV_INIT, p2 = DSF_PROV_INIT;
        cJSON *d1 = json(cases[i][0]), *d2 = json(cases[i][0]);
        cJSON *l1 = json(cases[i][1]), *l2 = json(cases[i][1]);
        dsf_merge(d1, l1, &profile_layer, NULL, &p1);
        cJSON_Delete(l1);
        dsf_merge_take(d2, l2, &profile_layer, NULL, &p2);
        char *want = dsf_json_print(d1, false);
        expect_doc(d2, want);
        free(want);
        assert_int_equal(p2.len, p1.len);
        for (size_t k = 0; k < p1.len; k++)
            expect_event(&p2, k, p1.ev[k].path, p1.ev[k].action,
                         &profile_layer, p1.ev[k].line, p1.ev[k].col,
                         p1.ev[k].value);
        cJSON_Delete(d1);
        cJSON_Delete(d2);
        dsf_prov_free(&p1);
        dsf_prov_free(&p2);
    }
    /* The members are the layer's own: a new key in the doc, nothing
    ** copied (the layer is gone, the document whole). */
    cJSON *doc = json("{}"), *l = json("{\"a\":{\"b\":[1,{\"c\":2}]}}");
    dsf_merge_take(doc, l, &profile_layer, NULL, NULL);
    expect_doc(doc, "{\"a\":{\"b\":[1,{\"c\":2}]}}");
    cJSON_Delete(doc);
}

/* ------------------------------------------------------------------ */
/* Provenance. */

static const char team_json[] =
    "{\n"
    "  \"zero_optimization\": {\n"
    "    \"stage\": 3,\n"
    "    \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true}\n"
    "  },\n"
    "  \"old\": {\"$delete\": true},\n"
    "  \"arr\": {\"$delete\": true},\n"
    "  \"missing\": {\"$delete\": true},\n"
    "  \"new\": {\"x\": [1, 2]}\n"
    "}\n";

static const char profile_json[] =
    "{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 2, "
    "\"offload_param\": {\"device\": \"none\"}}, \"old\": 1, \"arr\": [1]}";

static void test_provenance_events(void **state)
{
    (void)state;
    dsf_prov prov = DSF_PROV_INIT;
    cJSON *doc = cJSON_CreateObject();
    cJSON *base = json(profile_json);
    dsf_merge(doc, base, &profile_layer, NULL, &prov);
    dsf_jsrc *src;
    cJSON *team = json_src(team_json, &src);
    dsf_merge(doc, team, &file_layer, src, &prov);

    expect_doc(doc, "{\"new\":{\"x\":[1,2]},\"train_batch_size\":8,"
                    "\"zero_optimization\":{\"offload_param\":{"
                    "\"device\":\"cpu\",\"pin_memory\":true},\"stage\":3}}");
    assert_int_equal(prov.len, 11);
    /* Without a source, events take the layer's position. */
    expect_event(&prov, 0, "train_batch_size", DSF_PROV_SET, &profile_layer,
                 12, 0, "8");
    expect_event(&prov, 1, "zero_optimization.stage", DSF_PROV_SET,
                 &profile_layer, 12, 0, "2");
    expect_event(&prov, 2, "zero_optimization.offload_param.device",
                 DSF_PROV_SET, &profile_layer, 12, 0, "\"none\"");
    expect_event(&prov, 3, "old", DSF_PROV_SET, &profile_layer, 12, 0, "1");
    expect_event(&prov, 4, "arr", DSF_PROV_SET, &profile_layer, 12, 0,
                 "[1]");
    /* From the parsed file: the line and column of each setting's key. */
    expect_event(&prov, 5, "zero_optimization.stage", DSF_PROV_OVERRIDE,
                 &file_layer, 3, 5, "3");
    expect_event(&prov, 6, "zero_optimization.offload_param.device",
                 DSF_PROV_OVERRIDE, &file_layer, 4, 23, "\"cpu\"");
    expect_event(&prov, 7, "zero_optimization.offload_param.pin_memory",
                 DSF_PROV_SET, &file_layer, 4, 40, "true");
    /* Deletes too, each at its own key (two of them: a tombstone must not
    ** inherit the position of another). */
    expect_event(&prov, 8, "old", DSF_PROV_DELETE, &file_layer, 6, 3, NULL);
    expect_event(&prov, 9, "arr", DSF_PROV_DELETE, &file_layer, 7, 3, NULL);
    /* "missing" had nothing to delete: no event. */
    expect_event(&prov, 10, "new.x", DSF_PROV_SET, &file_layer, 9, 11,
                 "[1,2]");

    /* The origin of a value: the last event at its path or at the nearest
    ** ancestor. */
    const dsf_prov_event *e = dsf_prov_origin(&prov, "zero_optimization.stage");
    assert_ptr_equal(e, &prov.ev[5]);
    e = dsf_prov_origin(&prov, "train_batch_size");
    assert_ptr_equal(e, &prov.ev[0]);
    e = dsf_prov_origin(&prov, "new.x[1]");
    assert_ptr_equal(e, &prov.ev[10]);
    e = dsf_prov_origin(&prov, "old");
    assert_ptr_equal(e, &prov.ev[8]);
    assert_null(dsf_prov_origin(&prov, "nothing"));
    assert_null(dsf_prov_origin(&prov, "zero_optimization.stagex"));
    assert_null(dsf_prov_origin(&prov, "zero_optimization"));

    dsf_prov_free(&prov);
    assert_int_equal(prov.len, 0);
    cJSON_Delete(team);
    dsf_jsrc_free(src);
    cJSON_Delete(base);
    cJSON_Delete(doc);
}

static void test_origin_nearest_layer(void **state)
{
    (void)state;
    dsf_prov prov = DSF_PROV_INIT;
    cJSON *doc = cJSON_CreateObject();
    cJSON *l1 = json("{\"a\":{\"b\":{\"c\":1}},\"x\":1}");
    cJSON *l2 = json("{\"a\":{\"b\":[1,2]},\"x\":2}");
    cJSON *l3 = json("{\"a\":{\"b\":{\"d\":1}}}");
    dsf_merge(doc, l1, &profile_layer, NULL, &prov);
    dsf_merge(doc, l2, &file_layer, NULL, &prov);
    /* a.b is now l2's array: it answers for the array and its items. */
    const dsf_prov_event *e = dsf_prov_origin(&prov, "a.b");
    assert_non_null(e);
    assert_ptr_equal(e->layer, &file_layer);
    assert_int_equal(e->action, DSF_PROV_OVERRIDE);
    assert_string_equal(e->value, "[1,2]");
    e = dsf_prov_origin(&prov, "a.b[1]");
    assert_ptr_equal(e->layer, &file_layer);
    /* The later layer wins for the same path. */
    e = dsf_prov_origin(&prov, "x");
    assert_ptr_equal(e->layer, &file_layer);
    assert_int_equal(e->action, DSF_PROV_OVERRIDE);
    assert_string_equal(e->value, "2");
    dsf_merge(doc, l3, &edit_layer, NULL, &prov);
    e = dsf_prov_origin(&prov, "a.b.d");
    assert_ptr_equal(e->layer, &edit_layer);
    assert_string_equal(e->path, "a.b.d");
    expect_doc(doc, "{\"a\":{\"b\":{\"d\":1}},\"x\":2}");
    dsf_prov_free(&prov);
    /* Without values: the same events, with no value text. */
    dsf_prov bare = DSF_PROV_INIT;
    bare.no_values = true;
    cJSON *doc2 = cJSON_CreateObject();
    dsf_merge(doc2, l1, &profile_layer, NULL, &bare);
    dsf_merge(doc2, l2, &file_layer, NULL, &bare);
    e = dsf_prov_origin(&bare, "a.b");
    assert_non_null(e);
    assert_ptr_equal(e->layer, &file_layer);
    assert_int_equal(e->action, DSF_PROV_OVERRIDE);
    assert_null(e->value);
    e = dsf_prov_origin(&bare, "x");
    assert_int_equal(e->action, DSF_PROV_OVERRIDE);
    assert_null(e->value);
    dsf_prov_free(&bare);
    cJSON_Delete(doc2);
    cJSON_Delete(l1);
    cJSON_Delete(l2);
    cJSON_Delete(l3);
    cJSON_Delete(doc);
}

static void test_empty_object_events(void **state)
{
    (void)state;
    dsf_prov prov = DSF_PROV_INIT;
    cJSON *doc = json("{\"a\":{\"x\":1}}");
    cJSON *l = json("{\"a\":{},\"b\":{}}");
    dsf_merge(doc, l, &file_layer, NULL, &prov);
    assert_int_equal(prov.len, 2);
    expect_event(&prov, 0, "a", DSF_PROV_OVERRIDE, &file_layer, 0, 0, "{}");
    expect_event(&prov, 1, "b", DSF_PROV_SET, &file_layer, 0, 0, "{}");
    /* a.x is still the earlier value: the empty object changed nothing. */
    expect_doc(doc, "{\"a\":{\"x\":1},\"b\":{}}");
    dsf_prov_free(&prov);
    cJSON_Delete(l);
    cJSON_Delete(doc);
}

static void test_keys_needing_quotes(void **state)
{
    (void)state;
    dsf_prov prov = DSF_PROV_INIT;
    cJSON *doc = cJSON_CreateObject();
    cJSON *l = json("{\"a.b\":{\"c\":1},\"l\":{\"[x]\":2}}");
    dsf_merge(doc, l, &file_layer, NULL, &prov);
    assert_int_equal(prov.len, 2);
    assert_string_equal(prov.ev[0].path, "[\"a.b\"].c");
    assert_string_equal(prov.ev[1].path, "l[\"[x]\"]");
    assert_ptr_equal(dsf_prov_origin(&prov, "[\"a.b\"].c"), &prov.ev[0]);
    dsf_prov_free(&prov);
    cJSON_Delete(l);
    cJSON_Delete(doc);
}

static void test_record_tree(void **state)
{
    (void)state;
    dsf_prov prov = DSF_PROV_INIT;
    dsf_jsrc *src;
    cJSON *v = json_src("{\"p\": {\"q\": [1]},\n \"r\": 2}", &src);
    dsf_prov_record_tree(&prov, "root", v, DSF_PROV_OVERRIDE, &edit_layer,
                         src);
    assert_int_equal(prov.len, 2);
    expect_event(&prov, 0, "root.p.q", DSF_PROV_OVERRIDE, &edit_layer, 1, 8,
                 "[1]");
    expect_event(&prov, 1, "root.r", DSF_PROV_OVERRIDE, &edit_layer, 2, 2,
                 "2");
    /* A value without a key (an array item) has its value position. */
    cJSON *one = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(v, "p"), "q"), 0);
    dsf_prov_record_tree(&prov, "root.p.q[0]", one, DSF_PROV_SET,
                         &edit_layer, src);
    expect_event(&prov, 2, "root.p.q[0]", DSF_PROV_SET, &edit_layer, 1, 14,
                 "1");
    /* A tombstone records nothing; NULL provenance is a no-op. */
    cJSON *t = dsf_doc_tombstone();
    dsf_prov_record_tree(&prov, "x", t, DSF_PROV_SET, &edit_layer, NULL);
    dsf_prov_record_tree(NULL, "x", v, DSF_PROV_SET, &edit_layer, NULL);
    assert_int_equal(prov.len, 3);
    cJSON_Delete(t);
    dsf_prov_free(&prov);
    dsf_jsrc_free(src);
    cJSON_Delete(v);
}

static void test_related(void **state)
{
    (void)state;
    assert_true(dsf_prov_related("a.b", "a.b"));
    assert_true(dsf_prov_related("a.b", "a.b.c"));
    assert_true(dsf_prov_related("a.b.c", "a.b"));
    assert_true(dsf_prov_related("a", "a[0]"));
    assert_true(dsf_prov_related("", "x"));
    assert_false(dsf_prov_related("a.b", "a.bc"));
    assert_false(dsf_prov_related("a.b", "a.c"));
    assert_false(dsf_prov_related("ab", "a"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objects_deep_merge),
        cmocka_unit_test(test_other_values_replace),
        cmocka_unit_test(test_tombstones),
        cmocka_unit_test(test_merge_copies),
        cmocka_unit_test(test_merge_take_same_as_merge),
        cmocka_unit_test(test_provenance_events),
        cmocka_unit_test(test_origin_nearest_layer),
        cmocka_unit_test(test_empty_object_events),
        cmocka_unit_test(test_keys_needing_quotes),
        cmocka_unit_test(test_record_tree),
        cmocka_unit_test(test_related),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
