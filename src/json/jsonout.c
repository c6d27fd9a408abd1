/* jsonout.c -- see jsonout.h. */
#include "json/jsonout.h"

#include <math.h>
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
        dsf_buf_printf(out, "%lld", (long long)v);
        return;
    }
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    dsf_buf_puts(out, tmp);
}

/* s as it is written (any byte that is not valid UTF-8 as U+FFFD), or
** NULL when that is s itself. Caller frees. */
static char *key_as_written(const char *s)
{
    size_t n = strlen(s), i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t len = dsf_utf8_seq((const unsigned char *)s + i, n - i);
        if (!len)
            break;
        i += len;
    }
    if (i == n)
        return NULL;
    dsf_buf b = DSF_BUF_INIT;
    for (i = 0; i < n;) {
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

/* Keys are sorted as they are written, so printing what was parsed back
** gives the same order (a key with invalid UTF-8 is written with U+FFFD);
** keys written alike keep a fixed order by their bytes. */
static int cmp_members(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a;
    const cJSON *y = *(const cJSON *const *)b;
    char *wx = key_as_written(x->string), *wy = key_as_written(y->string);
    int c = strcmp(wx ? wx : x->string, wy ? wy : y->string);
    free(wx);
    free(wy);
    return c ? c : strcmp(x->string, y->string);
}

static void indent(dsf_buf *out, int depth)
{
    dsf_buf_putc(out, '\n');
    for (int i = 0; i < depth; i++)
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
        const cJSON **members = dsf_xmalloc(n * sizeof *members);
        size_t i = 0;
        for (const cJSON *c = item->child; c; c = c->next)
            members[i++] = c;
        qsort(members, n, sizeof *members, cmp_members);
        dsf_buf_putc(out, '{');
        for (i = 0; i < n; i++) {
            if (i)
                dsf_buf_putc(out, ',');
            if (pretty)
                indent(out, depth + 1);
            dsf_json_write_string(out, members[i]->string);
            dsf_buf_puts(out, pretty ? ": " : ":");
            write_value(out, members[i], pretty, depth + 1);
        }
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
