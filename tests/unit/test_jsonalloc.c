/*
** test_jsonalloc.c -- cJSON's memory from the pool (json/jsonalloc.h):
** installed once, before any value exists; documents made, copied,
** parsed and freed through it keep their contents; a freed node's block
** is reused for the next node; strings made for a valuestring are freed
** by cJSON_Delete; and a build that checks memory keeps malloc.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "doc/doc.h"
#include "json/jsonalloc.h"
#include "core/heap.h"

static int setup(void **state)
{
    (void)state;
    dsf_json_alloc_init(); /* first, as main does */
    return 0;
}

static void test_pooled_unless_checked(void **state)
{
    (void)state;
    /* The same decision as the Lua states' pool: on in a plain build,
    ** off under AddressSanitizer (and valgrind's memcheck). */
    assert_int_equal(dsf_json_alloc_pooled(), dsf_heap_may_pool());
    assert_int_equal(dsf_json_alloc_pooled(), dsf_heap_pooled());
#if defined(__SANITIZE_ADDRESS__)
    assert_false(dsf_json_alloc_pooled());
#endif
    dsf_json_alloc_init(); /* a second call changes nothing */
    assert_int_equal(dsf_json_alloc_pooled(), dsf_heap_pooled());
}

static void test_trees_keep_their_contents(void **state)
{
    (void)state;
    cJSON *root = cJSON_CreateObject();
    for (int i = 0; i < 2000; i++) {
        char key[32], text[600]; /* beyond the pool's small blocks too */
        snprintf(key, sizeof key, "key-%d", i);
        memset(text, 'a' + i % 26, sizeof text - 1);
        text[(size_t)(i % 599) + 1] = '\0';
        cJSON *o = cJSON_AddObjectToObject(root, key);
        cJSON_AddStringToObject(o, "text", text);
        cJSON_AddItemToObject(o, "n", dsf_doc_int(i * 1000003LL));
    }
    cJSON *copy = cJSON_Duplicate(root, 1);
    cJSON_Delete(root);
    int i = 0;
    for (const cJSON *o = copy->child; o; o = o->next, i++) {
        char key[32];
        snprintf(key, sizeof key, "key-%d", i);
        assert_string_equal(o->string, key);
        const char *text = cJSON_GetObjectItem(o, "text")->valuestring;
        assert_int_equal(strlen(text), (size_t)(i % 599) + 1);
        assert_int_equal(text[0], 'a' + i % 26);
        const cJSON *n = cJSON_GetObjectItem(o, "n");
        char want[32];
        snprintf(want, sizeof want, "%lld", i * 1000003LL);
        assert_string_equal(n->valuestring, want);
    }
    assert_int_equal(i, 2000);
    cJSON_Delete(copy);
}

static void test_freed_node_is_reused(void **state)
{
    (void)state;
    if (!dsf_json_alloc_pooled())
        skip(); /* malloc's reuse is malloc's business */
    cJSON *a = cJSON_CreateNull();
    cJSON_Delete(a);
    cJSON *b = cJSON_CreateNull();
    assert_ptr_equal(a, b); /* the same size class's free list */
    cJSON_Delete(b);
}

static void test_parse_and_strings(void **state)
{
    (void)state;
    cJSON *doc = cJSON_Parse("{\"a\": [1, 2.5, \"x\"], \"b\": {\"c\": null}}");
    assert_non_null(doc);
    cJSON *n = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "a"), 0);
    n->valuestring = dsf_json_strdup("1"); /* freed by cJSON_Delete */
    cJSON *m = cJSON_CreateNumber(7);
    m->valuestring = dsf_json_strndup("7xyz", 1);
    assert_string_equal(m->valuestring, "7");
    cJSON_AddItemToObject(doc, "m", m);
    cJSON_AddItemToObject(doc, "neg", dsf_doc_int(-9223372036854775807LL - 1));
    assert_string_equal(cJSON_GetObjectItem(doc, "neg")->valuestring,
                        "-9223372036854775808");
    char *s = dsf_json_int_text(42);
    assert_string_equal(s, "42");
    cJSON_free(s);
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pooled_unless_checked),
        cmocka_unit_test(test_trees_keep_their_contents),
        cmocka_unit_test(test_freed_node_is_reused),
        cmocka_unit_test(test_parse_and_strings),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
