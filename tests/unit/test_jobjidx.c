/*
** test_jobjidx.c -- the member index of one object (src/json/jobjidx.h)
** and the provenance lookup by path prefix (src/doc/prov.h), which made
** merging and resolving a large -f file quadratic (issue 30): each finds
** what the list walk found.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc/prov.h"
#include "json/jobjidx.h"

static void test_index_finds_what_cjson_finds(void **state)
{
    (void)state;
    cJSON *obj = cJSON_CreateObject();
    char key[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        cJSON_AddNumberToObject(obj, key, i);
    }
    /* a repeated key (built in memory): the first one is found */
    cJSON_AddNumberToObject(obj, "k7", -7);
    dsf_jobjidx *ix = dsf_jobjidx_new(obj);
    assert_non_null(ix);
    assert_true(dsf_jobjidx_repeats(ix));
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_ptr_equal(dsf_jobjidx_get(ix, obj, key),
                         cJSON_GetObjectItemCaseSensitive(obj, key));
    }
    assert_int_equal(dsf_jobjidx_get(ix, obj, "k7")->valueint, 7);
    assert_null(dsf_jobjidx_get(ix, obj, "k1000"));
    assert_null(dsf_jobjidx_get(ix, obj, "K1"));
    assert_null(dsf_jobjidx_get(ix, obj, ""));
    dsf_jobjidx_free(ix);
    cJSON_Delete(obj);

    /* small objects and non-objects: no index, the list is walked */
    obj = cJSON_CreateObject();
    cJSON_AddNumberToObject(obj, "a", 1);
    assert_null(dsf_jobjidx_new(obj));
    assert_false(dsf_jobjidx_repeats(NULL));
    assert_ptr_equal(dsf_jobjidx_get(NULL, obj, "a"), obj->child);
    assert_null(dsf_jobjidx_get(NULL, obj, "b"));
    cJSON *arr = cJSON_CreateArray();
    assert_null(dsf_jobjidx_new(arr));
    cJSON_Delete(arr);
    cJSON_Delete(obj);
}

/* Members replaced or removed while the index is in use (a merge does
** both): the index follows, so no lookup reads a freed member (under
** ASan a stale slot on another key's probe sequence was a use after
** free), and a removed slot does not hide the keys probed past it. */
static void test_swap_keeps_lookups_safe(void **state)
{
    (void)state;
    cJSON *obj = cJSON_CreateObject();
    char key[16];
    for (int i = 0; i < 500; i++) {
        snprintf(key, sizeof key, "k%d", i);
        cJSON_AddNumberToObject(obj, key, i);
    }
    dsf_jobjidx *ix = dsf_jobjidx_new(obj);
    assert_non_null(ix);
    for (int i = 0; i < 500; i += 2) { /* replace the even ones */
        snprintf(key, sizeof key, "k%d", i);
        cJSON *was = dsf_jobjidx_get(ix, obj, key);
        /* a member of the same key, as a merge makes it */
        cJSON *holder = cJSON_CreateObject();
        cJSON_AddNumberToObject(holder, key, -i);
        cJSON *now = cJSON_DetachItemFromObjectCaseSensitive(holder, key);
        cJSON_Delete(holder);
        dsf_jobjidx_swap(ix, was, now);
        assert_true(cJSON_ReplaceItemViaPointer(obj, was, now));
    }
    for (int i = 1; i < 500; i += 4) { /* remove some odd ones */
        snprintf(key, sizeof key, "k%d", i);
        cJSON *was = dsf_jobjidx_get(ix, obj, key);
        dsf_jobjidx_swap(ix, was, NULL);
        cJSON_Delete(cJSON_DetachItemViaPointer(obj, was));
    }
    for (int i = 0; i < 500; i++) {
        snprintf(key, sizeof key, "k%d", i);
        cJSON *m = dsf_jobjidx_get(ix, obj, key);
        assert_ptr_equal(m, cJSON_GetObjectItemCaseSensitive(obj, key));
        if (i % 2 == 0)
            assert_int_equal(m->valueint, -i);
        else if (i % 4 == 1)
            assert_null(m);
        else
            assert_int_equal(m->valueint, i);
    }
    dsf_jobjidx_swap(NULL, NULL, NULL); /* nothing to do */
    dsf_jobjidx_free(ix);
    cJSON_Delete(obj);
}

/* The origin of a path: the last event of its longest recorded prefix at
** a step boundary ('.', '[' or the end), "" matching every path. */
static void test_prov_origin(void **state)
{
    (void)state;
    dsf_layer a = {"profile", "profile a", NULL, 0, 0};
    dsf_layer b = {"file", "-f b.json", "b.json", 3, 4};
    dsf_prov p = DSF_PROV_INIT;
    assert_null(dsf_prov_origin(&p, "x"));
    dsf_prov_add(&p, "zero", DSF_PROV_SET, &a, 0, 0, NULL);
    dsf_prov_add(&p, "zero.stage", DSF_PROV_SET, &a, 0, 0, NULL);
    dsf_prov_add(&p, "opt.params", DSF_PROV_SET, &a, 0, 0, NULL);
    dsf_prov_add(&p, "zero", DSF_PROV_OVERRIDE, &b, 0, 0, NULL);
    dsf_prov_add(&p, "list", DSF_PROV_SET, &b, 0, 0, NULL);
    char key[24];
    for (int i = 0; i < 2000; i++) { /* enough to grow the index */
        snprintf(key, sizeof key, "k%d", i);
        dsf_prov_add(&p, key, DSF_PROV_SET, &b, i + 1, 1, NULL);
    }
    const dsf_prov_event *e = dsf_prov_origin(&p, "zero.stage");
    assert_string_equal(e->path, "zero.stage");
    e = dsf_prov_origin(&p, "zero.offload.device");
    assert_string_equal(e->path, "zero");
    assert_ptr_equal(e->layer, &b); /* the last event of the path */
    assert_string_equal(dsf_prov_origin(&p, "list[3].x")->path, "list");
    assert_string_equal(dsf_prov_origin(&p, "opt.params.lr")->path,
                        "opt.params");
    assert_null(dsf_prov_origin(&p, "opt.x"));
    assert_null(dsf_prov_origin(&p, "zeroth")); /* not at a boundary */
    assert_int_equal(dsf_prov_origin(&p, "k1999")->line, 2000);
    assert_null(dsf_prov_origin(&p, "k2000"));
    /* "" is an ancestor of everything */
    dsf_prov_add(&p, "", DSF_PROV_SET, &a, 0, 0, NULL);
    assert_string_equal(dsf_prov_origin(&p, "opt.x")->path, "");
    assert_string_equal(dsf_prov_origin(&p, "zero.a")->path, "zero");
    dsf_prov_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_finds_what_cjson_finds),
        cmocka_unit_test(test_swap_keeps_lookups_safe),
        cmocka_unit_test(test_prov_origin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
