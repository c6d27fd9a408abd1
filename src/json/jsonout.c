/* jsonout.c -- see jsonout.h. */
#include "json/jsonout.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "json/jsonc.h"
#include "core/utf8.h"

void dsf_json_write_string(dsf_buf *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    dsf_buf_putc(out, '"');
    const char *run = s;
    for (const char *p = s;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
            continue;
        if (c >= 0x80) {
            /* Valid UTF-8 is copied; any other byte becomes U+FFFD, so
            ** the output is always valid JSON text (RFC 8259 8.1). */
            size_t len = dsf_utf8_seq((const unsigned char *)p, strlen(p));
            if (len) {
                p += len - 1;
                continue;
            }
            dsf_buf_add(out, run, (size_t)(p - run));
            dsf_buf_puts(out, "\ufffd");
            run = p + 1;
            continue;
        }
        dsf_buf_add(out, run, (size_t)(p - run));
        if (!c)
            break;
        run = p + 1;
        switch (c) {
        case '"': dsf_buf_puts(out, "\\\""); break;
        case '\\': dsf_buf_puts(out, "\\\\"); break;
        case '\n': dsf_buf_puts(out, "\\n"); break;
        case '\r': dsf_buf_puts(out, "\\r"); break;
        case '\t': dsf_buf_puts(out, "\\t"); break;
        case '\b': dsf_buf_puts(out, "\\b"); break;
        case '\f': dsf_buf_puts(out, "\\f"); break;
        default: {
            char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            dsf_buf_puts(out, u);
        }
        }
    }
    dsf_buf_putc(out, '"');
}

/* Appends the decimal digits of v (what "%lld" prints, without printf). */
static void put_integer(dsf_buf *out, long long v)
{
    char tmp[24];
    char *end = tmp + sizeof tmp, *p = end;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v
                                 : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    dsf_buf_add(out, p, (size_t)(end - p));
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v. A matrix
** writes the same few fractions (learning rates, betas, epsilons) into
** every variant: the last texts are remembered by the bits of v, which
** determine the text. Borrowed until the next call. */
static const char *shortest_text(double v)
{
    static struct {
        uint64_t bits;
        bool used;
        char text[32];
    } memo[64];
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    size_t slot = (size_t)((bits * 0x9E3779B97F4A7C15ull) >> 58);
    if (memo[slot].used && memo[slot].bits == bits)
        return memo[slot].text;
    char *tmp = memo[slot].text;
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof memo[slot].text, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    memo[slot].bits = bits;
    memo[slot].used = true;
    return tmp;
}

void dsf_json_write_number(dsf_buf *out, const cJSON *num)
{
    if (num->valuestring && dsf_json_is_integer_literal(num)) {
        /* Integer literals are kept verbatim: exact beyond 2^53. */
        const char *lit = num->valuestring;
        if (!strcmp(lit, "-0"))
            lit = "0";
        dsf_buf_puts(out, lit);
        return;
    }
    double v = num->valuedouble;
    if (!isfinite(v)) {
        /* JSON has no infinity or NaN, and every dsforge reader refuses
        ** them: never write text that is not JSON. */
        dsf_buf_puts(out, "null");
        return;
    }
    if (v == floor(v) && fabs(v) < 9.2e18) {
        put_integer(out, (long long)v);
        return;
    }
    dsf_buf_puts(out, shortest_text(v));
}

/* Whether s is written as it is: valid UTF-8 (every other byte is
** written as U+FFFD). */
static bool key_is_written_as_is(const char *s)
{
    size_t n = strlen(s), i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t len = dsf_utf8_seq((const unsigned char *)s + i, n - i);
        if (!len)
            return false;
        i += len;
    }
    return true;
}

/* s as it is written, any byte that is not valid UTF-8 as U+FFFD. Caller
** frees. */
static char *key_as_written(const char *s)
{
    size_t n = strlen(s);
    dsf_buf b = DSF_BUF_INIT;
    for (size_t i = 0; i < n;) {
        size_t len = (unsigned char)s[i] < 0x80
                         ? 1
                         : dsf_utf8_seq((const unsigned char *)s + i, n - i);
        if (len)
            dsf_buf_add(&b, s + i, len);
        else
            dsf_buf_puts(&b, "\ufffd");
        i += len ? len : 1;
    }
    return dsf_buf_take(&b);
}

/* A member and the key it is sorted by: its key as written. */
typedef struct member {
    const cJSON *item;
    const char *key;        /* item->string, or owned by sort_members */
} member;

/* Keys are sorted as they are written, so printing what was parsed back
** gives the same order (a key with invalid UTF-8 is written with U+FFFD);
** keys written alike keep a fixed order by their bytes, and members with
** the same key their order in the document (the sort is stable). */
static int cmp_members(const member *x, const member *y)
{
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->item->string, y->item->string);
}

/* A stable sort of m[0..n): insertion for short runs, merged through
** tmp (n elements). */
static void sort_run(member *m, member *tmp, size_t n)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            member x = m[i];
            size_t j = i;
            for (; j > 0 && cmp_members(&m[j - 1], &x) > 0; j--)
                m[j] = m[j - 1];
            m[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    sort_run(m, tmp, h);
    sort_run(m + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_members(&m[j], &m[i]) < 0 ? m[j++] : m[i++];
    while (i < h)
        tmp[k++] = m[i++];
    memcpy(m, tmp, k * sizeof *m); /* m[j..n) is already in place */
}

/* Fills m with the n members of obj in the order they are written. */
static void sort_members(member *m, const cJSON *obj, size_t n)
{
    size_t i = 0;
    for (const cJSON *c = obj->child; c; c = c->next, i++) {
        m[i].item = c;
        m[i].key = key_is_written_as_is(c->string) ? c->string
                                                   : key_as_written(c->string);
    }
    member small[16];
    member *tmp = n <= 16 ? small : dsf_xmalloc(n * sizeof *tmp);
    sort_run(m, tmp, n);
    if (tmp != small)
        free(tmp);
}

static void free_members(member *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].key != m[i].item->string)
            free((char *)m[i].key);
}

static void indent(dsf_buf *out, int depth)
{
    static const char spaces[] = "\n                                ";
    size_t want = 1 + 2 * (size_t)depth;
    const size_t have = sizeof spaces - 1;
    dsf_buf_add(out, spaces, want < have ? want : have);
    for (want = want < have ? 0 : want - have; want; want -= 2)
        dsf_buf_add(out, "  ", 2);
}

static void write_value(dsf_buf *out, const cJSON *item, bool pretty,
                        int depth)
{
    if (cJSON_IsObject(item)) {
        size_t n = 0;
        for (const cJSON *c = item->child; c; c = c->next)
            n++;
        if (!n) {
            dsf_buf_puts(out, "{}");
            return;
        }
        member stack[32];
        member *members = n <= 32 ? stack : dsf_xmalloc(n * sizeof *members);
        sort_members(members, item, n);
        dsf_buf_putc(out, '{');
        for (size_t i = 0; i < n; i++) {
            if (i)
                dsf_buf_putc(out, ',');
            if (pretty)
                indent(out, depth + 1);
            dsf_json_write_string(out, members[i].item->string);
            if (pretty)
                dsf_buf_add(out, ": ", 2);
            else
                dsf_buf_putc(out, ':');
            write_value(out, members[i].item, pretty, depth + 1);
        }
        free_members(members, n);
        if (members != stack)
            free(members);
        if (pretty)
            indent(out, depth);
        dsf_buf_putc(out, '}');
    } else if (cJSON_IsArray(item)) {
        if (!item->child) {
            dsf_buf_puts(out, "[]");
            return;
        }
        dsf_buf_putc(out, '[');
        for (const cJSON *c = item->child; c; c = c->next) {
            if (c != item->child)
                dsf_buf_putc(out, ',');
            if (pretty)
                indent(out, depth + 1);
            write_value(out, c, pretty, depth + 1);
        }
        if (pretty)
            indent(out, depth);
        dsf_buf_putc(out, ']');
    } else if (cJSON_IsString(item)) {
        dsf_json_write_string(out, item->valuestring);
    } else if (cJSON_IsNumber(item)) {
        dsf_json_write_number(out, item);
    } else if (cJSON_IsTrue(item)) {
        dsf_buf_puts(out, "true");
    } else if (cJSON_IsFalse(item)) {
        dsf_buf_puts(out, "false");
    } else {
        dsf_buf_puts(out, "null");
    }
}

void dsf_json_write_at(dsf_buf *out, const cJSON *item, int depth)
{
    write_value(out, item, true, depth);
}

void dsf_json_write(dsf_buf *out, const cJSON *item, bool pretty)
{
    write_value(out, item, pretty, 0);
    if (pretty)
        dsf_buf_putc(out, '\n');
}

char *dsf_json_print(const cJSON *item, bool pretty)
{
    dsf_buf b = DSF_BUF_INIT;
    dsf_json_write(&b, item, pretty);
    return dsf_buf_take(&b);
}
