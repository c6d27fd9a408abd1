/* identity.c -- see identity.h. */
#include "lua/identity.h"

#include <stdint.h>
#include <string.h>

#include "doc/doc.h"
#include "lua/conv.h"

/* The encoding: a tag byte per value; a string or key as its length
** (prefix-free: 7 bits a byte, the high bit on all but the last) and its
** bytes; an integer or a float's bits as 8 bytes; an object or array as
** its member count, then its members. Every field has a known length or
** a length before it, so no two values encode alike. */

static void put_size(dsf_buf *b, uint64_t n)
{
    char tmp[10];
    size_t k = 0;
    do {
        tmp[k++] = (char)((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
        n >>= 7;
    } while (n);
    dsf_buf_add(b, tmp, k);
}

static void put_u64(dsf_buf *b, char tag, uint64_t v)
{
    char tmp[9];
    tmp[0] = tag;
    for (int i = 0; i < 8; i++)
        tmp[1 + i] = (char)(v >> (8 * i));
    dsf_buf_add(b, tmp, sizeof tmp);
}

static void put_text(dsf_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_size(b, n);
    dsf_buf_add(b, s ? s : "", n);
}

void dsf_json_identity(dsf_buf *b, const cJSON *item)
{
    if (dsf_doc_is_tombstone(item)) {
        dsf_buf_putc(b, 'D');
    } else if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
        bool object = cJSON_IsObject(item);
        dsf_buf_putc(b, object ? 'O' : 'A');
        uint64_t n = 0;
        for (const cJSON *ch = item->child; ch; ch = ch->next)
            n++;
        put_size(b, n);
        for (const cJSON *ch = item->child; ch; ch = ch->next) {
            if (object)
                put_text(b, ch->string);
            dsf_json_identity(b, ch);
        }
    } else if (cJSON_IsString(item)) {
        dsf_buf_putc(b, 'S');
        put_text(b, item->valuestring);
    } else if (cJSON_IsNumber(item)) {
        long long iv;
        if (dsf_json_lua_integer(item, &iv)) {
            put_u64(b, 'I', (uint64_t)iv);
        } else {
            uint64_t bits;
            double d = item->valuedouble;
            memcpy(&bits, &d, sizeof bits);
            put_u64(b, 'F', bits);
        }
    } else if (cJSON_IsBool(item)) {
        dsf_buf_putc(b, cJSON_IsTrue(item) ? 't' : 'f');
    } else {
        dsf_buf_putc(b, 'N'); /* null (and what dsf_json_push makes null) */
    }
}
