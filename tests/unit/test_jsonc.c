/*
** test_jsonc.c -- the JSON-with-comments parser (src/json/jsonc.h) and the
** canonical printer (src/json/jsonout.h): extensions, positions, duplicate
** keys, every error with its exact line:col, number literals, printing,
** the depth cap.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

static cJSON *parse_ok(const char *text, dsf_jsrc **src)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = NULL;
    int rc = dsf_json_parse(&doc, src, "t.json", text, strlen(text), &d);
    if (rc)
        dsf_diags_print(&d, stderr, false);
    assert_int_equal(rc, 0);
    assert_int_equal(d.len, 0);
    assert_non_null(doc);
    dsf_diags_free(&d);
    return doc;
}

static char *compact(const char *text)
{
    cJSON *doc = parse_ok(text, NULL);
    char *out = dsf_json_print(doc, false);
    cJSON_Delete(doc);
    return out;
}

static void expect_compact(const char *text, const char *want)
{
    char *got = compact(text);
    assert_string_equal(got, want);
    free(got);
}

/* Parsing text[0..len) fails with exactly one error at line:col. */
static void expect_error_n(const char *text, size_t len, int line, int col,
                           const char *message)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = (cJSON *)&d; /* must be reset */
    dsf_jsrc *src = (dsf_jsrc *)&d;
    int rc = dsf_json_parse(&doc, &src, "t.json", text, len, &d);
    assert_int_equal(rc, DSF_EINPUT);
    assert_null(doc);
    assert_null(src);
    assert_int_equal(d.len, 1);
    const dsf_diag *g = &d.items[0];
    if (g->line != line || g->col != col || strcmp(g->message, message))
        print_error("%s\n  got  %d:%d: %s\n  want %d:%d: %s\n", text,
                    g->line, g->col, g->message, line, col, message);
    assert_int_equal(g->severity, DSF_ERROR);
    assert_string_equal(g->file, "t.json");
    assert_string_equal(g->message, message);
    assert_int_equal(g->line, line);
    assert_int_equal(g->col, col);
    dsf_diags_free(&d);
}

static void expect_error(const char *text, int line, int col,
                         const char *message)
{
    expect_error_n(text, strlen(text), line, col, message);
}

static void expect_pos(const dsf_jsrc *src, const cJSON *node, int line,
                       int col)
{
    dsf_jpos p = {0, 0};
    assert_non_null(node);
    assert_true(dsf_jsrc_pos(src, node, &p));
    if (p.line != line || p.col != col)
        print_error("value at %d:%d, expected %d:%d\n", p.line, p.col, line,
                    col);
    assert_int_equal(p.line, line);
    assert_int_equal(p.col, col);
}

static void expect_key_pos(const dsf_jsrc *src, const cJSON *node, int line,
                           int col)
{
    dsf_jpos p = {0, 0};
    assert_non_null(node);
    assert_true(dsf_jsrc_key_pos(src, node, &p));
    if (p.line != line || p.col != col)
        print_error("key at %d:%d, expected %d:%d\n", p.line, p.col, line,
                    col);
    assert_int_equal(p.line, line);
    assert_int_equal(p.col, col);
}

static cJSON *member(const cJSON *obj, const char *key)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
    assert_non_null(m);
    return m;
}

/* ------------------------------------------------------------------ */
/* Extensions. */

static void test_comments(void **state)
{
    (void)state;
    expect_compact("// leading\n{\"a\": 1, // after a value\n"
                   "/* block\n   over lines */ \"b\": /**/ 2 /* x */}\n"
                   "// trailing, no newline at the end",
                   "{\"a\":1,\"b\":2}");
    expect_compact("[1, /* a * b / c */ 2]", "[1,2]");
    /* Comment markers inside strings are text. */
    expect_compact("{\"url\": \"http://x/*y*/\", \"c\": \"// no\"}",
                   "{\"c\":\"// no\",\"url\":\"http://x/*y*/\"}");
    expect_compact("/* only a comment before */ null // and after", "null");
}

static void test_trailing_commas(void **state)
{
    (void)state;
    expect_compact("{\"a\": 1,}", "{\"a\":1}");
    expect_compact("[1, 2, ]", "[1,2]");
    expect_compact("{\"a\": [1, {\"b\": [],},], }", "{\"a\":[1,{\"b\":[]}]}");
    expect_error("[1,,2]", 1, 4,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
    expect_error("[,]", 1, 2,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
    expect_error("{,}", 1, 2, "object key (a double-quoted string) expected");
}

static void test_bom(void **state)
{
    (void)state;
    dsf_jsrc *src;
    cJSON *doc = parse_ok("\xEF\xBB\xBF{\"a\": 1}", &src);
    expect_pos(src, doc, 1, 1);
    expect_key_pos(src, member(doc, "a"), 1, 2);
    expect_pos(src, member(doc, "a"), 1, 7);
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    /* Columns after a BOM do not count it. */
    expect_error("\xEF\xBB\xBF{\"a\": x}", 1, 7,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
    /* Only at the very start. */
    expect_error("[\xEF\xBB\xBF]", 1, 2,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
}

/* ------------------------------------------------------------------ */
/* Positions. */

static void test_positions(void **state)
{
    (void)state;
    static const char text[] = "{\n"
                               "  // comment\n"
                               "  \"a\": 1, /* c */ \"b\": [true, null],\n"
                               "  \"c\": {\"d\": \"x\"},\n"
                               "\t\"e\": -2.5e3\n"
                               "}\n";
    dsf_jsrc *src;
    cJSON *doc = parse_ok(text, &src);
    assert_string_equal(dsf_jsrc_file(src), "t.json");
    expect_pos(src, doc, 1, 1);
    dsf_jpos p;
    assert_false(dsf_jsrc_key_pos(src, doc, &p)); /* the root has no key */
    cJSON *a = member(doc, "a"), *b = member(doc, "b"), *c = member(doc, "c");
    expect_key_pos(src, a, 3, 3);
    expect_pos(src, a, 3, 8);
    expect_key_pos(src, b, 3, 19);
    expect_pos(src, b, 3, 24);
    expect_pos(src, cJSON_GetArrayItem(b, 0), 3, 25);
    expect_pos(src, cJSON_GetArrayItem(b, 1), 3, 31);
    /* Array items have a value position but no key position. */
    assert_false(dsf_jsrc_key_pos(src, cJSON_GetArrayItem(b, 0), &p));
    expect_key_pos(src, c, 4, 3);
    expect_pos(src, c, 4, 8);
    expect_key_pos(src, member(c, "d"), 4, 9);
    expect_pos(src, member(c, "d"), 4, 14);
    expect_key_pos(src, member(doc, "e"), 5, 2); /* a tab is one column */
    expect_pos(src, member(doc, "e"), 5, 7);
    /* Nodes from elsewhere have no position. */
    cJSON *other = cJSON_CreateNull();
    assert_false(dsf_jsrc_pos(src, other, &p));
    assert_false(dsf_jsrc_key_pos(src, other, &p));
    cJSON_Delete(other);
    /* Lines of the source. */
    const char *line;
    size_t len;
    assert_true(dsf_jsrc_line(src, 3, &line, &len));
    assert_int_equal(len, strlen("  \"a\": 1, /* c */ \"b\": [true, null],"));
    assert_memory_equal(line, "  \"a\": 1,", 9);
    assert_true(dsf_jsrc_line(src, 1, &line, &len));
    assert_int_equal(len, 1);
    assert_false(dsf_jsrc_line(src, 99, &line, &len));
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
}

/* A node's position is found through the node (parse order): a copy of
** it, a node of another parse, or a number whose value was set again
** (cJSON_SetNumberValue writes valueint) has none, rather than another
** value's. */
static void test_positions_only_for_the_nodes_parsed(void **state)
{
    (void)state;
    dsf_jsrc *src, *other_src;
    cJSON *doc = parse_ok("{\"a\": 1, \"b\": 2, \"c\": 3}", &src);
    cJSON *other = parse_ok("[10, 20, 30, 40]", &other_src);
    dsf_jpos p;
    cJSON *a = member(doc, "a");
    expect_pos(src, a, 1, 7);
    cJSON *copy = cJSON_Duplicate(a, 1);
    assert_false(dsf_jsrc_pos(src, copy, &p));
    assert_false(dsf_jsrc_pos(src, cJSON_GetArrayItem(other, 2), &p));
    assert_false(dsf_jsrc_pos(other_src, member(doc, "c"), &p));
    cJSON_SetNumberValue(member(doc, "c"), 1);
    assert_false(dsf_jsrc_pos(src, member(doc, "c"), &p));
    /* (the value, read as cJSON reads it, is the number's) */
    assert_true(member(doc, "b")->valuedouble == 2);
    cJSON_Delete(copy);
    cJSON_Delete(doc);
    cJSON_Delete(other);
    dsf_jsrc_free(src);
    dsf_jsrc_free(other_src);
}

static void test_positions_crlf(void **state)
{
    (void)state;
    dsf_jsrc *src;
    cJSON *doc = parse_ok("{\r\n\"a\": 1,\r\n  \"b\": \"x\"\r\n}", &src);
    expect_key_pos(src, member(doc, "a"), 2, 1);
    expect_pos(src, member(doc, "a"), 2, 6);
    expect_key_pos(src, member(doc, "b"), 3, 3);
    expect_pos(src, member(doc, "b"), 3, 8);
    const char *line;
    size_t len;
    assert_true(dsf_jsrc_line(src, 2, &line, &len));
    assert_int_equal(len, 7); /* without the \r */
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    expect_error("{\r\n  \"a\": 1,\r\n  \"b\": x\r\n}", 3, 8,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
}

static void test_positions_after_duplicate(void **state)
{
    (void)state;
    /* The first "a" (and its member) is freed when the second replaces
    ** it; nodes allocated afterwards must not inherit its positions. */
    static const char text[] =
        "{\"a\": {\"k\": 1}, \"a\": 2,\n \"b\": [7, {\"z\": [8]}]}";
    dsf_jsrc *src;
    cJSON *doc = parse_ok(text, &src);
    cJSON *b = member(doc, "b");
    dsf_jpos p;
    expect_key_pos(src, b, 2, 2);
    expect_pos(src, b, 2, 7);
    cJSON *seven = cJSON_GetArrayItem(b, 0);
    expect_pos(src, seven, 2, 8);
    assert_false(dsf_jsrc_key_pos(src, seven, &p));
    cJSON *obj = cJSON_GetArrayItem(b, 1);
    expect_pos(src, obj, 2, 11);
    assert_false(dsf_jsrc_key_pos(src, obj, &p));
    cJSON *eight = cJSON_GetArrayItem(member(obj, "z"), 0);
    expect_pos(src, eight, 2, 18);
    assert_false(dsf_jsrc_key_pos(src, eight, &p));
    expect_key_pos(src, member(doc, "a"), 1, 17);
    expect_pos(src, member(doc, "a"), 1, 22);
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
}

/* ------------------------------------------------------------------ */
/* Duplicate keys. */

static void test_duplicate_keys(void **state)
{
    (void)state;
    static const char text[] = "{\"a\": 1,\n"
                               " \"b\": {\"x\": 1, \"x\": 2},\n"
                               " \"a\": 3}";
    dsf_jsrc *src;
    cJSON *doc = parse_ok(text, &src);
    /* The last one wins. */
    assert_int_equal((int)member(doc, "a")->valuedouble, 3);
    assert_int_equal((int)member(member(doc, "b"), "x")->valuedouble, 2);
    assert_int_equal(cJSON_GetArraySize(doc), 2);
    assert_int_equal(cJSON_GetArraySize(member(doc, "b")), 1);
    size_t n;
    const dsf_jdup *dups = dsf_jsrc_duplicates(src, &n);
    assert_int_equal(n, 2);
    assert_string_equal(dups[0].path, "b.x");
    assert_int_equal(dups[0].first.line, 2);
    assert_int_equal(dups[0].first.col, 8);
    assert_int_equal(dups[0].again.line, 2);
    assert_int_equal(dups[0].again.col, 16);
    assert_string_equal(dups[1].path, "a");
    assert_int_equal(dups[1].first.line, 1);
    assert_int_equal(dups[1].first.col, 2);
    assert_int_equal(dups[1].again.line, 3);
    assert_int_equal(dups[1].again.col, 2);
    /* The surviving member has the position of the last occurrence. */
    expect_key_pos(src, member(doc, "a"), 3, 2);
    expect_pos(src, member(doc, "a"), 3, 7);
    cJSON_Delete(doc);
    dsf_jsrc_free(src);

    doc = parse_ok("{\"k\":1,\"k\":2,\"k\":3}", &src);
    dups = dsf_jsrc_duplicates(src, &n);
    assert_int_equal(n, 2);
    assert_int_equal(dups[0].first.col, 2);
    assert_int_equal(dups[0].again.col, 8);
    assert_int_equal(dups[1].first.col, 8);
    assert_int_equal(dups[1].again.col, 14);
    assert_int_equal((int)member(doc, "k")->valuedouble, 3);
    cJSON_Delete(doc);
    dsf_jsrc_free(src);

    /* Inside arrays the path names the index. */
    doc = parse_ok("{\"l\": [{}, {\"q\": 1, \"q\": 2}]}", &src);
    dups = dsf_jsrc_duplicates(src, &n);
    assert_int_equal(n, 1);
    assert_string_equal(dups[0].path, "l[1].q");
    cJSON_Delete(doc);
    dsf_jsrc_free(src);

    doc = parse_ok("{\"a\": 1, \"A\": 2}", &src);
    dsf_jsrc_duplicates(src, &n);
    assert_int_equal(n, 0); /* keys are case-sensitive */
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
}

/* An object past 8 members is indexed while parsing (issue 30): its
** duplicates are found, in order, with the first place and the last value
** kept at the end of the list, exactly as in a small one; every member is
** found by dsf_jsrc_member, absent keys are not; and the last line of a
** long file is found by dsf_jsrc_line. */
static void test_large_object(void **state)
{
    (void)state;
    enum { N = 3000 };
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "{\n");
    for (int i = 0; i < N; i++)
        dsf_buf_printf(&b, "\"k%d\": %d,\n", i, i);
    /* k5 (within the first 8) and k2000 again, then k5 a third time */
    dsf_buf_puts(&b, "\"k5\": -5,\n\"k2000\": -2000,\n\"k5\": -55\n}");
    dsf_jsrc *src;
    cJSON *doc = parse_ok(dsf_buf_str(&b), &src);
    assert_int_equal(cJSON_GetArraySize(doc), N);
    size_t n;
    const dsf_jdup *dups = dsf_jsrc_duplicates(src, &n);
    assert_int_equal(n, 3);
    assert_string_equal(dups[0].path, "k5");
    assert_int_equal(dups[0].first.line, 7);
    assert_int_equal(dups[0].again.line, N + 2);
    assert_string_equal(dups[1].path, "k2000");
    assert_int_equal(dups[1].first.line, 2002);
    assert_string_equal(dups[2].path, "k5");
    assert_int_equal(dups[2].first.line, N + 2);
    assert_int_equal(dups[2].again.line, N + 4);
    /* the last one wins, and goes to the end (as for a small object) */
    cJSON *last = doc->child;
    while (last->next)
        last = last->next;
    assert_string_equal(last->string, "k5");
    assert_int_equal((int)last->valuedouble, -55);
    assert_string_equal(last->prev->string, "k2000");
    char key[16];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i);
        cJSON *m = dsf_jsrc_member(src, doc, key);
        assert_non_null(m);
        assert_ptr_equal(m, cJSON_GetObjectItemCaseSensitive(doc, key));
    }
    assert_null(dsf_jsrc_member(src, doc, "k3000"));
    assert_null(dsf_jsrc_member(src, doc, "K1"));
    assert_null(dsf_jsrc_member(NULL, doc, "k3000"));
    assert_ptr_equal(dsf_jsrc_member(NULL, doc, "k2999"),
                     cJSON_GetObjectItemCaseSensitive(doc, "k2999"));
    expect_key_pos(src, dsf_jsrc_member(src, doc, "k2999"), N + 1, 1);
    /* lines, first to last and one past */
    const char *line;
    size_t len;
    assert_true(dsf_jsrc_line(src, 1, &line, &len));
    assert_int_equal(len, 1);
    assert_true(dsf_jsrc_line(src, N + 1, &line, &len));
    assert_int_equal(len, strlen("\"k2999\": 2999,"));
    assert_memory_equal(line, "\"k2999\": 2999,", len);
    assert_true(dsf_jsrc_line(src, N + 5, &line, &len));
    assert_int_equal(len, 1);
    assert_memory_equal(line, "}", 1);
    assert_false(dsf_jsrc_line(src, N + 6, &line, &len));
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    dsf_buf_free(&b);

    /* A duplicate whose old value was a large object: its index entries
    ** are dropped with it (a later object may reuse its address). */
    dsf_buf_puts(&b, "{\"o\": {");
    for (int i = 0; i < 20; i++)
        dsf_buf_printf(&b, "%s\"m%d\": %d", i ? ", " : "", i, i);
    dsf_buf_puts(&b, "}, \"o\": 1, \"p\": [");
    for (int j = 0; j < 20; j++) {
        dsf_buf_printf(&b, "%s{", j ? ", " : "");
        for (int i = 0; i < 20; i++)
            dsf_buf_printf(&b, "%s\"m%d\": %d", i ? ", " : "", i, j);
        dsf_buf_puts(&b, ", \"m3\": -1}");
    }
    dsf_buf_puts(&b, "]}");
    doc = parse_ok(dsf_buf_str(&b), &src);
    dsf_jsrc_duplicates(src, &n);
    assert_int_equal(n, 21);
    cJSON *p = dsf_jsrc_member(src, doc, "p");
    for (cJSON *o = p->child; o; o = o->next) {
        assert_int_equal((int)dsf_jsrc_member(src, o, "m3")->valuedouble, -1);
        assert_ptr_equal(dsf_jsrc_member(src, o, "m19"),
                         cJSON_GetObjectItemCaseSensitive(o, "m19"));
    }
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    dsf_buf_free(&b);

    /* A small object and a member of another object: searched. */
    doc = parse_ok("{\"a\": {\"x\": 1}, \"b\": 2}", &src);
    assert_ptr_equal(dsf_jsrc_member(src, doc, "b"), doc->child->next);
    assert_null(dsf_jsrc_member(src, doc, "x"));
    assert_non_null(dsf_jsrc_member(src, doc->child, "x"));
    assert_null(dsf_jsrc_member(src, doc->child->next, "x")); /* a number */
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
}

/* ------------------------------------------------------------------ */
/* Errors. */

/* A string is read as runs of plain bytes between escapes: the runs,
** escapes at either end, multi-byte UTF-8 and the empty string come out
** as written, and the error positions inside a string stay exact. */
static void test_string_runs(void **state)
{
    (void)state;
    expect_compact("[\"plain text\", \"\", \"a\\\"b\", \"\\n\\tab\\\\\", "
                   "\"x\\u00e9y\", \"\xc3\xa9t\xc3\xa9\", \"tail\\/\"]",
                   "[\"plain text\",\"\",\"a\\\"b\",\"\\n\\tab\\\\\","
                   "\"x\xc3\xa9y\",\"\xc3\xa9t\xc3\xa9\",\"tail/\"]");
    dsf_jsrc *src = NULL;
    cJSON *doc = parse_ok("{\"key with spaces\": \"long value here\",\n"
                          " \"k\\u0041\": 1}", &src);
    expect_key_pos(src, member(doc, "key with spaces"), 1, 2);
    expect_pos(src, member(doc, "key with spaces"), 1, 21);
    expect_key_pos(src, member(doc, "kA"), 2, 2);
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    expect_error("{\"a\": \"abcdef\tg\"}", 1, 14,
                 "control character in string (escape it)");
    expect_error("{\"a\": \"ab\\ncdef\x01\"}", 1, 16,
                 "control character in string (escape it)");
    expect_error("{\"a\": \"abcdef", 1, 7, "unterminated string");
}

static void test_error_strings(void **state)
{
    (void)state;
    expect_error("{\"a\": \"abc", 1, 7, "unterminated string");
    expect_error("{\"a\": \"ab\ncd\"}", 1, 7, "unterminated string");
    expect_error("[\"abc\\", 1, 2, "unterminated string");
    expect_error("{\"a\": \"\\x\"}", 1, 9, "invalid escape in string");
    expect_error("[\"\\'\"]", 1, 4, "invalid escape in string");
    expect_error("[\"\\u12G4\"]", 1, 5,
                 "bad \\u escape (4 hex digits expected)");
    expect_error("[\"\\u12\"]", 1, 5,
                 "bad \\u escape (4 hex digits expected)");
    expect_error("[\"\\ud800\"]", 1, 9, "unpaired UTF-16 surrogate");
    expect_error("[\"\\ud800\\u0041\"]", 1, 15, "unpaired UTF-16 surrogate");
    expect_error("[\"\\udc00\"]", 1, 9, "unpaired UTF-16 surrogate");
    expect_error("[\"\\u0000\"]", 1, 9, "\\u0000 is not allowed in strings");
    expect_error("[\"a\tb\"]", 1, 4, "control character in string (escape it)");
    expect_error("{\n  \"k\": \"v\",\n  \"k2\": \"oops\n}", 3, 9,
                 "unterminated string");
}

static void test_error_comments(void **state)
{
    (void)state;
    expect_error("{\"a\": 1 /* never closed", 1, 9, "unterminated /* comment");
    expect_error("[1,\n  2 /* open\n  */ 3", 3, 6,
                 "',' or ']' expected after array element");
    expect_error("/* a\n b\n c", 1, 1, "unterminated /* comment");
    expect_error("// c\n/* x\n y */ [1 2]", 3, 10,
                 "',' or ']' expected after array element");
}

static void test_error_structure(void **state)
{
    (void)state;
    expect_error("{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3,
                 "',' or '}' expected after object member");
    expect_error("[1 2]", 1, 4, "',' or ']' expected after array element");
    expect_error("{\"a\": 1 / 2}", 1, 9,
                 "',' or '}' expected after object member");
    expect_error("{a: 1}", 1, 2, "object key (a double-quoted string) expected");
    expect_error("{\"a\" 1}", 1, 6, "':' expected after object key");
    expect_error("[tru]", 1, 2,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
    expect_error("[truex]", 1, 2,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
    expect_error("'single'", 1, 1,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
}

static void test_error_numbers(void **state)
{
    (void)state;
    expect_error("{\"n\": 007}", 1, 7, "numbers may not have leading zeros");
    expect_error("[-01]", 1, 2, "numbers may not have leading zeros");
    expect_error("{\"n\": NaN}", 1, 7, "NaN and Infinity are not JSON numbers");
    expect_error("[1, Infinity]", 1, 5,
                 "NaN and Infinity are not JSON numbers");
    expect_error("[-Infinity]", 1, 2, "invalid number");
    expect_error("[-]", 1, 2, "invalid number");
    expect_error("[1.]", 1, 4, "digit expected after '.'");
    expect_error("[1.e5]", 1, 4, "digit expected after '.'");
    expect_error("[1e+]", 1, 5, "digit expected in exponent");
    expect_error("[1e999]", 1, 2, "number out of range");
    expect_error("[+1]", 1, 2,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
    expect_error("[.5]", 1, 2,
                 "a value (object, array, string, number, true, false or "
                 "null) expected");
    expect_error("[0x10]", 1, 3, "',' or ']' expected after array element");
}

static void test_error_end_and_after(void **state)
{
    (void)state;
    expect_error("", 1, 1, "unexpected end of input: a value expected");
    expect_error("  // nothing\n", 2, 1,
                 "unexpected end of input: a value expected");
    expect_error("{\"a\": ", 1, 7, "unexpected end of input: a value expected");
    expect_error("{\"a\": [1, 2", 1, 12,
                 "unexpected end of input: ']' expected");
    expect_error("{\"a\": 1", 1, 8, "unexpected end of input: '}' expected");
    expect_error("{", 1, 2, "unexpected end of input: '}' expected");
    expect_error("{\"a\": 1} x", 1, 10, "unexpected text after the JSON value");
    expect_error("{\"a\": 1}}", 1, 9, "unexpected text after the JSON value");
    expect_error("{}\n\n  []", 3, 3, "unexpected text after the JSON value");
    /* A NUL byte inside the given length is text, not the end. */
    expect_error_n("{}\0", 3, 1, 3, "unexpected text after the JSON value");
}

static void test_error_excerpt(void **state)
{
    (void)state;
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc;
    static const char text[] = "{\n  \"a\": 1,\n  \"b\": [1 2]\n}\n";
    assert_int_equal(dsf_json_parse(&doc, NULL, "x.json", text,
                                    sizeof text - 1, &d),
                     DSF_EINPUT);
    assert_int_equal(d.len, 1);
    assert_int_equal(d.items[0].line, 3);
    assert_int_equal(d.items[0].col, 11);
    assert_string_equal(d.items[0].excerpt, "  \"b\": [1 2]");
    dsf_diags_free(&d);
}

/* ------------------------------------------------------------------ */
/* Numbers and printing. */

static void test_number_literals(void **state)
{
    (void)state;
    cJSON *doc = parse_ok("{\"a\": 5e8, \"b\": 500, \"c\": 1.0, \"d\": -0, "
                          "\"e\": 12345678901234567890, \"f\": 0.1, "
                          "\"g\": 1E3, \"h\": -42}",
                          NULL);
    static const struct {
        const char *key, *literal;
        bool integer;
    } want[] = {{"a", "5e8", false},
                {"b", NULL, true}, /* (an integer of up to 15 digits keeps */
                {"c", "1.0", false}, /* no literal: its value is exact) */
                {"d", NULL, true},
                {"e", "12345678901234567890", true},
                {"f", "0.1", false},
                {"g", "1E3", false},
                {"h", NULL, true}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const cJSON *n = member(doc, want[i].key);
        assert_true(cJSON_IsNumber(n));
        if (want[i].literal)
            assert_string_equal(n->valuestring, want[i].literal);
        else
            assert_null(n->valuestring);
        assert_int_equal(dsf_json_is_integer_literal(n), want[i].integer);
    }
    assert_true(member(doc, "a")->valuedouble == 5e8);
    char *out = dsf_json_print(doc, false);
    assert_string_equal(out, "{\"a\":500000000,\"b\":500,\"c\":1,\"d\":0,"
                             "\"e\":12345678901234567890,\"f\":0.1,"
                             "\"g\":1000,\"h\":-42}");
    free(out);
    cJSON_Delete(doc);
    /* Numbers built in memory: integral ones count as integers. */
    cJSON *n = cJSON_CreateNumber(3.0);
    assert_true(dsf_json_is_integer_literal(n));
    cJSON_SetNumberValue(n, 3.5);
    assert_false(dsf_json_is_integer_literal(n));
    cJSON_Delete(n);
}

/* Integers of up to 15 digits are read without strtod, and keep no
** literal: the value must be strtod's, sign and negative zero included,
** and print as the literal would; 16 digits and more, and any fraction
** or exponent, still go through strtod and keep theirs. */
static void test_integer_fast_path_is_strtod(void **state)
{
    (void)state;
    const char *lits[] = {
        "0", "-0", "7", "-7", "42", "9007199254740", "999999999999999",
        "-999999999999999", "1000000000000000", "9007199254740993",
        "12345678901234567890", "-9223372036854775809", "1.5", "1e3",
        "123456789012345e2", "100000000000000.0",
    };
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; i++) {
        char text[64];
        snprintf(text, sizeof text, "[%s]", lits[i]);
        cJSON *doc = parse_ok(text, NULL);
        double want = strtod(lits[i], NULL);
        double got = doc->child->valuedouble;
        assert_true(memcmp(&got, &want, sizeof got) == 0); /* bits */
        /* (the literal is kept only where the value may not say it) */
        bool fast = !strpbrk(lits[i], ".eE") &&
                    strlen(lits[i]) - (lits[i][0] == '-') <= 15;
        if (fast)
            assert_null(doc->child->valuestring);
        else
            assert_string_equal(doc->child->valuestring, lits[i]);
        /* printed and read as Lua's integer the same as from its literal */
        char *out = dsf_json_print(doc, false);
        char expect[80];
        if (fast)
            snprintf(expect, sizeof expect, "[%lld]", (long long)want);
        else
            expect[0] = '\0';
        if (fast)
            assert_string_equal(out, expect);
        free(out);
        cJSON_Delete(doc);
    }
}

static void test_canonical_numbers(void **state)
{
    (void)state;
    expect_compact("[0.1, 0.2, 1e-7, 2.5E-5, 1.5e300, -3.25, 1e21, 123.0, "
                   "0.30000000000000004, 3.141592653589793, 100e-2]",
                   "[0.1,0.2,1e-07,2.5e-05,1.5e+300,-3.25,1e+21,123,"
                   "0.30000000000000004,3.141592653589793,1]");
    dsf_buf b = DSF_BUF_INIT;
    cJSON *n = cJSON_CreateNumber(1.0 / 3.0);
    dsf_json_write_number(&b, n);
    assert_string_equal(b.data, "0.3333333333333333");
    cJSON_Delete(n);
    dsf_buf_free(&b);
}

static void test_canonical_printing(void **state)
{
    (void)state;
    /* Keys in byte order (upper case before lower, UTF-8 after ASCII),
    ** never in source order. */
    expect_compact("{\"b\": 1, \"a\": {\"z\": [3, 2, 1], \"y\": null}, "
                   "\"B\": true, \"\\u00e9\": false, \"\": 0, \"a0\": 1}",
                   "{\"\":0,\"B\":true,\"a\":{\"y\":null,\"z\":[3,2,1]},"
                   "\"a0\":1,\"b\":1,\"\xc3\xa9\":false}");
    /* Strings: quotes, backslashes and control characters escaped, '/'
    ** and non-ASCII text as they are. */
    expect_compact("[\"q\\\"b\\\\s\\/\\n\\r\\t\\b\\f\\u0001\\u001F\\u007f"
                   "\\u00e9\\ud83d\\ude00\"]",
                   "[\"q\\\"b\\\\s/\\n\\r\\t\\b\\f\\u0001\\u001f\x7f"
                   "\xc3\xa9\xf0\x9f\x98\x80\"]");
    /* Pretty: two spaces, ": ", a trailing newline; empty containers
    ** stay on one line. */
    cJSON *doc = parse_ok("{\"b\": [1, {}], \"a\": {\"c\": []}}", NULL);
    char *pretty = dsf_json_print(doc, true);
    assert_string_equal(pretty, "{\n"
                                "  \"a\": {\n"
                                "    \"c\": []\n"
                                "  },\n"
                                "  \"b\": [\n"
                                "    1,\n"
                                "    {}\n"
                                "  ]\n"
                                "}\n");
    free(pretty);
    cJSON_Delete(doc);
    /* The same document written differently prints the same bytes. */
    char *x = compact("{\"k\": [1, 2], \"j\": {\"b\": 5e8, \"a\": \"s\"}}");
    char *y = compact("// other order\n{\"j\": {\"a\": \"s\", \"b\": "
                      "500000000,}, \"k\": [1, 2,],}");
    assert_string_equal(x, y);
    free(x);
    free(y);
    dsf_buf b = DSF_BUF_INIT;
    dsf_json_write_string(&b, "tab\there \"q\"");
    assert_string_equal(b.data, "\"tab\\there \\\"q\\\"\"");
    dsf_buf_free(&b);
}

/* {"a":{"a":...{"a":1}...}} with depth + 1 objects. */
static char *nested_pretty_source(int depth)
{
    dsf_buf b = DSF_BUF_INIT;
    for (int i = 0; i <= depth; i++)
        dsf_buf_puts(&b, "{\"a\":");
    dsf_buf_puts(&b, "1");
    for (int i = 0; i <= depth; i++)
        dsf_buf_putc(&b, '}');
    return dsf_buf_take(&b);
}

/* Objects built in memory, as gen's documents are: keys in byte order
** whatever their number (short objects and long ones are sorted by
** different code), members with the same key in the order they were
** added, keys with invalid UTF-8 sorted as they are written. */
static void test_key_order_in_memory(void **state)
{
    (void)state;
    size_t sizes[] = {1, 2, 15, 16, 17, 31, 32, 33, 100, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        cJSON *obj = cJSON_CreateObject();
        for (size_t i = 0; i < n; i++) {
            char key[32];
            /* a permutation of 0..n-1 (n and 7919 are coprime) */
            snprintf(key, sizeof key, "k%04zu", (i * 7919) % n);
            cJSON_AddItemToObject(obj, key, cJSON_CreateNumber((double)i));
        }
        /* two members named "k0000": the earlier one first */
        cJSON_AddItemToObject(obj, "k0000", cJSON_CreateString("later"));
        char *out = dsf_json_print(obj, false);
        const char *p = out;
        char prev[16] = "";
        for (size_t i = 0; i <= n; i++) {
            const char *q = strstr(p, "\"k");
            assert_non_null(q);
            char key[16];
            assert_int_equal(sscanf(q, "\"%5s\"", key), 1);
            assert_true(strcmp(prev, key) <= 0);
            if (i == 1)
                assert_string_equal(key, "k0000");
            strcpy(prev, key);
            p = q + 1;
        }
        assert_non_null(strstr(out, "\"k0000\":0,\"k0000\":\"later\""));
        free(out);
        cJSON_Delete(obj);
    }
    /* "\xff" is written as U+FFFD (EF BF BD): after "\xee", before
    ** "\xf0..."; the key written alike keeps its place by its bytes. */
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddNumberToObject(obj, "\xf0\x9f\x98\x80", 1);
    cJSON_AddNumberToObject(obj, "\xff", 2);
    cJSON_AddNumberToObject(obj, "\xee\x80\x80", 3);
    cJSON_AddNumberToObject(obj, "\xef\xbf\xbd", 4);
    char *out = dsf_json_print(obj, false);
    assert_string_equal(out, "{\"\xee\x80\x80\":3,\"\xef\xbf\xbd\":4,"
                             "\"\xef\xbf\xbd\":2,\"\xf0\x9f\x98\x80\":1}");
    free(out);
    cJSON_Delete(obj);
    /* Integral numbers built in memory, printed without printf. */
    cJSON *arr = cJSON_CreateArray();
    double ints[] = {0, -1, 10, -1234567890123.0, 9007199254740992.0,
                     -9.1e18};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(ints[i]));
    out = dsf_json_print(arr, false);
    assert_string_equal(out, "[0,-1,10,-1234567890123,9007199254740992,"
                             "-9100000000000000000]");
    free(out);
    cJSON_Delete(arr);
}

/* Pretty printing at any depth, and as a nested value (the manifest's
** entries): two spaces a level, however deep. */
static void test_pretty_depth(void **state)
{
    (void)state;
    char *text = nested_pretty_source(24);
    cJSON *doc = parse_ok(text, NULL);
    free(text);
    char *pretty = dsf_json_print(doc, true);
    const char *line = pretty;
    for (int depth = 0; depth <= 24; depth++) {
        line = strchr(line, '\n') + 1; /* the line of the key at depth */
        size_t spaces = strspn(line, " ");
        assert_int_equal(spaces, 2 * (size_t)(depth + 1));
    }
    free(pretty);
    dsf_buf b = DSF_BUF_INIT;
    cJSON *small = parse_ok("{\"b\": [1], \"a\": 2}", NULL);
    dsf_json_write_at(&b, small, 2);
    assert_string_equal(b.data, "{\n"
                                "      \"a\": 2,\n"
                                "      \"b\": [\n"
                                "        1\n"
                                "      ]\n"
                                "    }");
    dsf_buf_free(&b);
    cJSON_Delete(small);
    cJSON_Delete(doc);
}

/* ------------------------------------------------------------------ */
/* Depth. */

static char *nested(int depth, bool objects)
{
    dsf_buf b = DSF_BUF_INIT;
    for (int i = 0; i < depth; i++)
        dsf_buf_puts(&b, objects ? "{\"a\":" : "[");
    dsf_buf_puts(&b, objects ? "1" : "");
    for (int i = 0; i < depth; i++)
        dsf_buf_putc(&b, objects ? '}' : ']');
    return dsf_buf_take(&b);
}

static void test_depth_cap(void **state)
{
    (void)state;
    /* Exactly at the cap: parses and prints back unchanged. */
    char *arrays = nested(DSF_JSON_MAX_DEPTH, false);
    char *out = compact(arrays);
    assert_string_equal(out, arrays);
    free(out);
    free(arrays);
    char *objects = nested(DSF_JSON_MAX_DEPTH, true);
    out = compact(objects);
    assert_string_equal(out, objects);
    free(out);
    free(objects);
    /* One more: an error at the opening bracket that is too deep. */
    arrays = nested(DSF_JSON_MAX_DEPTH + 1, false);
    expect_error(arrays, 1, DSF_JSON_MAX_DEPTH + 1, DSF_JSON_DEPTH_MESSAGE);
    free(arrays);
    objects = nested(DSF_JSON_MAX_DEPTH + 1, true);
    expect_error(objects, 1, DSF_JSON_MAX_DEPTH * 5 + 1,
                 DSF_JSON_DEPTH_MESSAGE);
    free(objects);
    /* Far deeper input fails the same way (no stack exhaustion). */
    arrays = nested(200000, false);
    expect_error(arrays, 1, DSF_JSON_MAX_DEPTH + 1, DSF_JSON_DEPTH_MESSAGE);
    free(arrays);
}

/* dsf_json_too_deep: the parser's limit, for the readers that parse with
** cJSON; brackets in strings (escaped quotes included) do not count. */
static void test_too_deep(void **state)
{
    (void)state;
    char *at = nested(DSF_JSON_MAX_DEPTH, false);
    char *past = nested(DSF_JSON_MAX_DEPTH + 1, true);
    assert_false(dsf_json_too_deep(at, strlen(at)));
    assert_true(dsf_json_too_deep(past, strlen(past)));
    /* the same text inside a string, and after an escaped quote */
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_printf(&b, "{\"s\": \"\\\"%s\", \"t\": %s}", past, at + 1);
    /* (at + 1 drops one level: the object adds it back) */
    assert_false(dsf_json_too_deep(b.data, b.len));
    dsf_buf_free(&b);
    /* siblings do not add up */
    dsf_buf_printf(&b, "[%s, %s]", at + 1, at + 1);
    assert_false(dsf_json_too_deep(b.data, b.len));
    dsf_buf_free(&b);
    free(at);
    free(past);
}

/* ------------------------------------------------------------------ */
/* Files. */

static void test_load_file(void **state)
{
    (void)state;
    char name[] = "/tmp/dsf-jsonc-XXXXXX";
    int fd = mkstemp(name);
    assert_true(fd >= 0);
    static const char text[] = "// config\n{\"a\": [1, 2,],}\n";
    assert_int_equal(write(fd, text, sizeof text - 1),
                     (ssize_t)(sizeof text - 1));
    close(fd);
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc;
    dsf_jsrc *src;
    assert_int_equal(dsf_json_load_file(&doc, &src, name, &d), 0);
    assert_string_equal(dsf_jsrc_file(src), name);
    expect_pos(src, member(doc, "a"), 2, 7);
    cJSON_Delete(doc);
    dsf_jsrc_free(src);
    unlink(name);
    assert_int_equal(dsf_json_load_file(&doc, &src, name, &d), DSF_EINPUT);
    assert_null(doc);
    assert_null(src);
    assert_int_equal(dsf_diags_count(&d, DSF_ERROR), 1);
    dsf_diags_free(&d);
}

/* Keys are printed sorted as they are written: a key with bytes that are
** not UTF-8 (written as U+FFFD) sorts where it will read back, so printing
** what was parsed from the output gives the same text (found by
** fuzz_manifest). */
static void test_print_sorts_keys_as_written(void **state)
{
    (void)state;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "\xff\xff" "am", 1);   /* written as two U+FFFD */
    cJSON_AddNumberToObject(o, "\xff" "dam", 2);       /* one U+FFFD, then "d" */
    cJSON_AddNumberToObject(o, "zeta", 3);
    char *once = dsf_json_print(o, false);
    cJSON *back = cJSON_Parse(once);
    assert_non_null(back);
    char *twice = dsf_json_print(back, false);
    assert_string_equal(once, twice);
    assert_string_equal(once, "{\"zeta\":3,\"\xef\xbf\xbd" "dam\":2,"
                              "\"\xef\xbf\xbd\xef\xbf\xbd" "am\":1}");
    free(once);
    free(twice);
    cJSON_Delete(back);
    cJSON_Delete(o);
}

/* JSON has no infinity: the printer never writes text that is not JSON
** (found by fuzz_manifest: cJSON reads 1e999 as inf). */
static void test_print_non_finite_as_null(void **state)
{
    (void)state;
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(HUGE_VAL));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(-HUGE_VAL));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(1.5));
    char *text = dsf_json_print(a, false);
    assert_string_equal(text, "[null,null,1.5]");
    free(text);
    cJSON_Delete(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_print_sorts_keys_as_written),
        cmocka_unit_test(test_print_non_finite_as_null),
        cmocka_unit_test(test_trailing_commas),
        cmocka_unit_test(test_bom),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_positions_only_for_the_nodes_parsed),
        cmocka_unit_test(test_positions_crlf),
        cmocka_unit_test(test_positions_after_duplicate),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_large_object),
        cmocka_unit_test(test_string_runs),
        cmocka_unit_test(test_error_strings),
        cmocka_unit_test(test_error_comments),
        cmocka_unit_test(test_error_structure),
        cmocka_unit_test(test_error_numbers),
        cmocka_unit_test(test_error_end_and_after),
        cmocka_unit_test(test_error_excerpt),
        cmocka_unit_test(test_number_literals),
        cmocka_unit_test(test_integer_fast_path_is_strtod),
        cmocka_unit_test(test_canonical_numbers),
        cmocka_unit_test(test_canonical_printing),
        cmocka_unit_test(test_key_order_in_memory),
        cmocka_unit_test(test_pretty_depth),
        cmocka_unit_test(test_depth_cap),
        cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_load_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
