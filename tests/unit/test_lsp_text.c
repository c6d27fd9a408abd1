/*
** test_lsp_text.c -- the language server's documents: LSP positions
** (UTF-16) against bytes (lsp/utf16.h) with non-ASCII text, surrogate
** pairs and invalid UTF-8; incremental edits (lsp/docs.h); what is under
** the cursor in a JSON text that may not parse (lsp/jcursor.h).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lsp/docs.h"
#include "lsp/jcursor.h"
#include "lsp/utf16.h"

/* "é" is 2 bytes and 1 unit, "😀" 4 bytes and 2 units (a surrogate
** pair), "€" 3 bytes and 1 unit. */
static const char TEXT[] = "{\"\xc3\xa9\": \"\xf0\x9f\x98\x80\xe2\x82\xac\",\n"
                           "  \"k\": 1\n}";

static void test_offsets(void **state)
{
    (void)state;
    size_t n = sizeof TEXT - 1;
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 0), 0);
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 2), 2);  /* é */
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 3), 4);  /* after é */
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 7), 8);  /* 😀 */
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 8), 8);  /* inside it */
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 9), 12); /* € */
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 10), 15);
    assert_int_equal(dsf_utf16_offset(TEXT, n, 0, 999), 17); /* line end */
    assert_int_equal(dsf_utf16_offset(TEXT, n, 1, 2), 20);
    assert_int_equal(dsf_utf16_offset(TEXT, n, 2, 1), n);
    assert_int_equal(dsf_utf16_offset(TEXT, n, 9, 0), n);
    assert_int_equal(dsf_utf16_offset(TEXT, n, -1, 5), 0);
    long l, c;
    dsf_utf16_position(TEXT, n, 12, &l, &c);
    assert_int_equal(l, 0);
    assert_int_equal(c, 9);
    dsf_utf16_position(TEXT, n, 20, &l, &c);
    assert_int_equal(l, 1);
    assert_int_equal(c, 2);
    dsf_utf16_position(TEXT, n, 9999, &l, &c);
    assert_int_equal(l, 2);
    assert_int_equal(c, 1);
    assert_int_equal(dsf_utf16_units(TEXT, 17), 12);
}

/* Bytes that start no valid sequence count one unit each: a truncated
** sequence, a lone continuation byte, 0xFF, an overlong form. */
static void test_invalid_utf8(void **state)
{
    (void)state;
    const char bad[] = "a\xff\x80\xe2\x82 \xc0\xafz";
    size_t n = sizeof bad - 1;
    assert_int_equal(dsf_utf16_units(bad, n), 9);
    for (long c = 0; c <= 9; c++)
        assert_int_equal(dsf_utf16_offset(bad, n, 0, c), (size_t)c);
    long l, c;
    dsf_utf16_position(bad, n, 6, &l, &c);
    assert_int_equal(c, 6);
}

static void test_edits(void **state)
{
    (void)state;
    dsf_lsp_docs docs = DSF_LSP_DOCS_INIT;
    dsf_lsp_doc *d = dsf_lsp_docs_open(&docs, "file:///a", TEXT,
                                       sizeof TEXT - 1, 1);
    /* replace 😀 (units 7-9) by "x" */
    assert_int_equal(dsf_lsp_doc_edit(d, 0, 7, 0, 9, "x", 1), 0);
    assert_string_equal(d->text, "{\"\xc3\xa9\": \"x\xe2\x82\xac\",\n"
                                 "  \"k\": 1\n}");
    /* insert across lines: join line 0's end with line 1's key */
    assert_int_equal(dsf_lsp_doc_edit(d, 0, 11, 1, 2, " ", 1), 0);
    assert_string_equal(d->text, "{\"\xc3\xa9\": \"x\xe2\x82\xac\", "
                                 "\"k\": 1\n}");
    /* an insertion at the end, a range past the end, a reversed range */
    assert_int_equal(dsf_lsp_doc_edit(d, 5, 0, 5, 0, "\n", 1), 0);
    assert_int_equal(d->text[d->len - 1], '\n');
    assert_int_equal(dsf_lsp_doc_edit(d, 0, 3, 0, 1, "Z", 1), 0);
    assert_memory_equal(d->text, "{\"\xc3\xa9Z\"", 6);
    /* deleting everything */
    assert_int_equal(dsf_lsp_doc_edit(d, 0, 0, 99, 0, "", 0), 0);
    assert_int_equal(d->len, 0);
    assert_string_equal(d->text, "");
    /* over the size limit: refused, unchanged */
    assert_int_equal(dsf_lsp_doc_edit(d, 0, 0, 0, 0, "", DSF_LSP_MAX_DOC + 1),
                     -1);
    assert_int_equal(d->len, 0);
    /* invalid bytes in the text, then an edit after them */
    assert_int_equal(dsf_lsp_doc_set(d, "\xff\xfe{}", 4), 0);
    assert_int_equal(dsf_lsp_doc_edit(d, 0, 3, 0, 4, "]", 1), 0);
    assert_memory_equal(d->text, "\xff\xfe{]", 4);
    /* a second document; closing the first keeps the second */
    dsf_lsp_docs_open(&docs, "file:///b", "[]", 2, 1);
    dsf_lsp_docs_close(&docs, "file:///a");
    assert_null(dsf_lsp_docs_find(&docs, "file:///a"));
    assert_string_equal(dsf_lsp_docs_find(&docs, "file:///b")->text, "[]");
    dsf_lsp_docs_close(&docs, "file:///nothing");
    dsf_lsp_docs_free(&docs);
}

static void cursor_at(dsf_jcursor *c, const char *text, const char *mark)
{
    const char *p = strstr(text, mark);
    assert_non_null(p);
    dsf_jcursor_find(c, text, strlen(text), (size_t)(p - text));
}

static void test_cursor(void **state)
{
    (void)state;
    const char *t = "{ // note: \"x\": {\n  \"a\": {\"bb\": [1, {\"c\": tr}],"
                    " \"d\": \"q\" /* \"e\": */ }, \"f\" ";
    dsf_jcursor c;
    cursor_at(&c, t, "bb\"");
    assert_int_equal(c.at, DSF_JC_KEY);
    assert_string_equal(c.key, "bb");
    assert_int_equal(c.depth, 1);
    assert_string_equal(c.path[0], "a");
    assert_int_equal(c.tok_start, (size_t)(strstr(t, "\"bb") - t));
    assert_int_equal(c.tok_end, (size_t)(strstr(t, ": [") - t));
    dsf_jcursor_free(&c);
    cursor_at(&c, t, "tr}");
    assert_int_equal(c.at, DSF_JC_VALUE);
    assert_string_equal(c.key, "c");
    assert_int_equal(c.depth, 3);
    assert_null(c.path[2]); /* an array element */
    assert_string_equal(c.path[1], "bb");
    dsf_jcursor_free(&c);
    cursor_at(&c, t, "1, ");
    assert_int_equal(c.at, DSF_JC_VALUE);
    assert_true(c.in_array);
    dsf_jcursor_free(&c);
    cursor_at(&c, t, "q\"");
    assert_int_equal(c.at, DSF_JC_VALUE);
    assert_string_equal(c.key, "d");
    dsf_jcursor_free(&c);
    /* inside a comment (its "e" is no key): after d's value */
    cursor_at(&c, t, "e\":");
    assert_int_equal(c.at, DSF_JC_VALUE);
    assert_string_equal(c.key, "d");
    assert_int_equal(c.tok_start, c.tok_end);
    dsf_jcursor_free(&c);
    cursor_at(&c, t, "f\"");
    assert_int_equal(c.at, DSF_JC_KEY);
    assert_string_equal(c.key, "f");
    assert_int_equal(c.depth, 0);
    dsf_jcursor_free(&c);
    /* the end of an unfinished text: after "f" a value goes */
    dsf_jcursor_find(&c, t, strlen(t), strlen(t));
    assert_int_equal(c.at, DSF_JC_KEY);
    dsf_jcursor_free(&c);
    /* outside any object */
    dsf_jcursor_find(&c, t, strlen(t), 0);
    assert_int_equal(c.at, DSF_JC_NONE);
    dsf_jcursor_free(&c);
}

/* Deeper than the scanner follows: nothing, then the right place again
** once the deep containers close. */
static void test_cursor_deep(void **state)
{
    (void)state;
    char t[1000];
    size_t n = 0;
    t[n++] = '{';
    memcpy(t + n, "\"k\": ", 5);
    n += 5;
    for (int i = 0; i < 100; i++)
        t[n++] = '[';
    size_t deep = n;
    for (int i = 0; i < 100; i++)
        t[n++] = ']';
    memcpy(t + n, ", \"z\": 1}", 9);
    n += 9;
    dsf_jcursor c;
    dsf_jcursor_find(&c, t, n, deep);
    assert_int_equal(c.at, DSF_JC_NONE);
    dsf_jcursor_free(&c);
    dsf_jcursor_find(&c, t, n, n - 6);
    assert_int_equal(c.at, DSF_JC_KEY);
    assert_string_equal(c.key, "z");
    dsf_jcursor_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_edits),
        cmocka_unit_test(test_cursor),
        cmocka_unit_test(test_cursor_deep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
