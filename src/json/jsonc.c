/* jsonc.c -- see jsonc.h. A recursive-descent parser with a depth cap. */
#include "jsonc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/strutil.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "json/jsonalloc.h"

_Static_assert(DSF_JSON_MAX_DEPTH == 200, "DSF_JSON_DEPTH_MESSAGE names 200");

typedef struct posent {
    const cJSON *node;
    dsf_jpos val, key;
} posent;

/* One member of a large object, in the member index: found by its object
** and key in constant time, so neither the duplicate check of a parse
** nor a later lookup walks the object's list (issue 30: both were
** quadratic in the keys of one object). */
typedef struct memb {
    const cJSON *parent;
    cJSON *child; /* NULL: a free slot */
    size_t hash;
} memb;

/* Objects of at most this many members are searched in their list. */
#define SMALL_OBJECT 8

struct dsf_jsrc {
    char *file;
    char *text;
    size_t len;
    bool borrowed;  /* text is the caller's (no positions kept) */
    posent *pos;    /* every value's positions, in parse order */
    size_t npos, cappos;
    dsf_jdup *dups;
    size_t ndups, capdups;
    memb *membs;    /* open addressing, keyed by (object, key) */
    size_t nmembs, usedmembs;
    size_t *lines;  /* offset of each line's start in text */
    size_t nlines;
};

typedef struct parser {
    const char *p, *end, *text;
    int line;
    const char *line_start;
    dsf_jsrc *src;
    dsf_diags *d;
    const char *file;
    int depth;
    dsf_buf path;  /* dotted path of the value being parsed */
} parser;

/* ---- positions ---- */

/* Each value's positions are appended to one array in parse order, and
** the value's node holds its entry's number (valueint, 1-based: cJSON's
** own functions read valuedouble, and dsforge reads numbers through it
** too), so recording is a write at the end of an array and finding one
** is an index, checked against the entry's node: a copy of the node
** (cJSON_Duplicate) or a node whose valueint was set again finds none.
** (A hash map keyed by the node's address cost a cache miss per value of
** a large file: issue 30.) */

static posent *record(dsf_jsrc *s, cJSON *node)
{
    dsf_xgrow((void **)&s->pos, &s->cappos, s->npos + 1, sizeof *s->pos);
    posent *e = &s->pos[s->npos++];
    memset(e, 0, sizeof *e);
    e->node = node;
    /* (past INT_MAX values, a file of many gigabytes: not locatable) */
    node->valueint = s->npos <= INT_MAX ? (int)s->npos : 0;
    return e;
}

static const posent *lookup(const dsf_jsrc *s, const cJSON *node)
{
    if (!s || !node || node->valueint <= 0 ||
        (size_t)node->valueint > s->npos)
        return NULL;
    const posent *e = &s->pos[node->valueint - 1];
    return e->node == node ? e : NULL;
}

/* ---- member index ---- */

static size_t hash_ptr(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static size_t hash_member(const cJSON *parent, const char *key)
{
    size_t h = 1469598103934665603ULL ^ hash_ptr(parent); /* FNV-1a */
    for (const unsigned char *k = (const unsigned char *)key; *k; k++)
        h = (h ^ *k) * 1099511628211ULL;
    return h ^ h >> 29;
}

/* The child of a slot whose member was freed (a duplicate key's old
** value and everything in it): passed over, never compared, as its
** object's address may be reused by a later one. */
static cJSON freed_member;

static memb *memb_slot(memb *slots, size_t n, const cJSON *parent,
                       const char *key, size_t h)
{
    size_t mask = n - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        memb *m = &slots[i];
        if (!m->child || (m->child != &freed_member && m->hash == h &&
                          m->parent == parent &&
                          !strcmp(m->child->string, key)))
            return m;
    }
}

/* Makes child the member of parent under its key (child->string). */
static void memb_put(dsf_jsrc *s, const cJSON *parent, cJSON *child)
{
    if ((s->usedmembs + 1) * 2 > s->nmembs) {
        size_t old_n = s->nmembs;
        memb *old = s->membs;
        s->nmembs = old_n ? old_n * 2 : 64;
        s->membs = dsf_xcalloc(s->nmembs, sizeof *s->membs);
        for (size_t i = 0; i < old_n; i++)
            if (old[i].child && old[i].child != &freed_member)
                *memb_slot(s->membs, s->nmembs, old[i].parent,
                           old[i].child->string, old[i].hash) = old[i];
        free(old);
    }
    size_t h = hash_member(parent, child->string);
    memb *m = memb_slot(s->membs, s->nmembs, parent, child->string, h);
    if (!m->child)
        s->usedmembs++;
    m->parent = parent;
    m->child = child;
    m->hash = h;
}

/* Before node is freed: the entries of the members of every indexed
** object in it (and its own, as a member of parent when that is
** indexed) are marked freed. Linear in node's tree. */
static void memb_forget(dsf_jsrc *s, const cJSON *parent, const cJSON *node)
{
    if (s->nmembs && parent && node->string) {
        size_t h = hash_member(parent, node->string);
        memb *m = memb_slot(s->membs, s->nmembs, parent, node->string, h);
        if (m->child == node)
            m->child = &freed_member;
    }
    if (cJSON_IsObject(node) || cJSON_IsArray(node))
        for (const cJSON *c = node->child; c; c = c->next)
            memb_forget(s, cJSON_IsObject(node) ? node : NULL, c);
}

static cJSON *memb_get(const dsf_jsrc *s, const cJSON *parent,
                       const char *key)
{
    if (!s->nmembs)
        return NULL;
    size_t h = hash_member(parent, key);
    return memb_slot(s->membs, s->nmembs, parent, key, h)->child;
}

cJSON *dsf_jsrc_member(const dsf_jsrc *s, const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    size_t n = 0;
    for (cJSON *m = obj->child; m; m = m->next) {
        if (m->string && !strcmp(m->string, key))
            return m;
        if (++n == SMALL_OBJECT && s && lookup(s, obj))
            return memb_get(s, obj, key);
    }
    return NULL;
}

/* ---- errors ---- */

static dsf_jpos here(const parser *ps)
{
    dsf_jpos pos = {ps->line, (int)(ps->p - ps->line_start) + 1};
    return pos;
}

static int fail_at(parser *ps, dsf_jpos pos, const char *msg)
{
    dsf_diag *g = dsf_diag_add(ps->d, DSF_ERROR, ps->file, pos.line, pos.col,
                               "%s", msg);
    /* Show the offending line (at most 200 bytes of it). */
    const char *ls = ps->text;
    for (int l = 1; l < pos.line && ls < ps->end; ls++)
        if (*ls == '\n')
            l++;
    const char *le = ls;
    while (le < ps->end && *le != '\n' && *le != '\r' && le - ls < 200)
        le++;
    dsf_diag_set_excerpt(g, ls, (size_t)(le - ls));
    return DSF_EINPUT;
}

static int fail(parser *ps, const char *msg)
{
    return fail_at(ps, here(ps), msg);
}

/* ---- lexing ---- */

static void newline(parser *ps)
{
    ps->line++;
    ps->line_start = ps->p;
}

static int skip_space(parser *ps)
{
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '\n') {
            ps->p++;
            newline(ps);
        } else if (c == ' ' || c == '\t' || c == '\r') {
            ps->p++;
        } else if (c == '/' && ps->p + 1 < ps->end && ps->p[1] == '/') {
            while (ps->p < ps->end && *ps->p != '\n')
                ps->p++;
        } else if (c == '/' && ps->p + 1 < ps->end && ps->p[1] == '*') {
            dsf_jpos start = here(ps);
            ps->p += 2;
            for (;;) {
                if (ps->p >= ps->end)
                    return fail_at(ps, start, "unterminated /* comment");
                if (*ps->p == '*' && ps->p + 1 < ps->end && ps->p[1] == '/') {
                    ps->p += 2;
                    break;
                }
                if (*ps->p++ == '\n')
                    newline(ps);
            }
        } else {
            break;
        }
    }
    return 0;
}

static int read_hex4(parser *ps, unsigned *out)
{
    if (ps->end - ps->p < 4)
        return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = dsf_hex_digit(ps->p[i]);
        if (h < 0)
            return -1;
        v = v << 4 | (unsigned)h;
    }
    ps->p += 4;
    *out = v;
    return 0;
}

static void put_utf8(dsf_buf *b, unsigned cp)
{
    char s[4];
    size_t n;
    if (cp < 0x80) {
        s[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        s[0] = (char)(0xC0 | cp >> 6);
        s[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        s[0] = (char)(0xE0 | cp >> 12);
        s[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        s[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        s[0] = (char)(0xF0 | cp >> 18);
        s[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        s[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        s[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    dsf_buf_add(b, s, n);
}

/* Parses a string at ps->p (which is '"') into a new heap string. */
/* *out is made by cJSON's allocator (a node takes it as its key or
** value: jsonalloc.h); the caller frees it with cJSON_free otherwise. */
static int parse_string(parser *ps, char **out)
{
    /* (most strings hold no escape: copied once, straight from the text) */
    const char *plain = ps->p + 1, *q = plain;
    while (q < ps->end && *q != '"' && *q != '\\' &&
           (unsigned char)*q >= 0x20)
        q++;
    if (q < ps->end && *q == '"') {
        *out = dsf_json_strndup(plain, (size_t)(q - plain));
        ps->p = q + 1;
        return 0;
    }
    dsf_jpos start = here(ps);
    dsf_buf b = DSF_BUF_INIT;
    ps->p++;
    for (;;) {
        if (ps->p >= ps->end || *ps->p == '\n') {
            dsf_buf_free(&b);
            return fail_at(ps, start, "unterminated string");
        }
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) {
            dsf_buf_free(&b);
            return fail(ps, "control character in string (escape it)");
        }
        if (c != '\\') {
            /* The run of plain bytes up to the next quote, backslash or
            ** control character, in one append. */
            const char *run = ps->p;
            do
                ps->p++;
            while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' &&
                   (unsigned char)*ps->p >= 0x20);
            dsf_buf_add(&b, run, (size_t)(ps->p - run));
            continue;
        }
        ps->p++;
        if (ps->p >= ps->end)
            continue;
        char e = *ps->p++;
        switch (e) {
        case '"': dsf_buf_putc(&b, '"'); break;
        case '\\': dsf_buf_putc(&b, '\\'); break;
        case '/': dsf_buf_putc(&b, '/'); break;
        case 'b': dsf_buf_putc(&b, '\b'); break;
        case 'f': dsf_buf_putc(&b, '\f'); break;
        case 'n': dsf_buf_putc(&b, '\n'); break;
        case 'r': dsf_buf_putc(&b, '\r'); break;
        case 't': dsf_buf_putc(&b, '\t'); break;
        case 'u': {
            unsigned cp;
            if (read_hex4(ps, &cp) != 0) {
                dsf_buf_free(&b);
                return fail(ps, "bad \\u escape (4 hex digits expected)");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (ps->end - ps->p < 6 || ps->p[0] != '\\' ||
                    ps->p[1] != 'u') {
                    dsf_buf_free(&b);
                    return fail(ps, "unpaired UTF-16 surrogate");
                }
                ps->p += 2;
                if (read_hex4(ps, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF) {
                    dsf_buf_free(&b);
                    return fail(ps, "unpaired UTF-16 surrogate");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                dsf_buf_free(&b);
                return fail(ps, "unpaired UTF-16 surrogate");
            }
            if (cp == 0) {
                dsf_buf_free(&b);
                return fail(ps, "\\u0000 is not allowed in strings");
            }
            put_utf8(&b, cp);
            break;
        }
        default:
            dsf_buf_free(&b);
            ps->p--;
            return fail(ps, "invalid escape in string");
        }
    }
    *out = dsf_json_strndup(b.data ? b.data : "", b.len);
    dsf_buf_free(&b);
    return 0;
}

static int parse_number(parser *ps, cJSON **out)
{
    const char *s = ps->p;
    const char *q = s;
    if (q < ps->end && *q == '-')
        q++;
    if (q >= ps->end || !(*q >= '0' && *q <= '9'))
        return fail(ps, "invalid number");
    if (*q == '0' && q + 1 < ps->end && q[1] >= '0' && q[1] <= '9')
        return fail(ps, "numbers may not have leading zeros");
    while (q < ps->end && *q >= '0' && *q <= '9')
        q++;
    const char *int_end = q; /* the integer part's end */
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || !(*q >= '0' && *q <= '9')) {
            ps->p = q;
            return fail(ps, "digit expected after '.'");
        }
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= ps->end || !(*q >= '0' && *q <= '9')) {
            ps->p = q;
            return fail(ps, "digit expected in exponent");
        }
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    char *lit = NULL; /* n's, below */
    double v;
    const char *digits = s + (*s == '-');
    if (q == int_end && q - digits <= 15) {
        /* An integer of at most 15 digits is below 2^53: exact as a
        ** double, so this is the value strtod gives, at a fraction of
        ** its cost (configs and manifests are mostly such numbers). Its
        ** literal is not kept either: every reader of a number without
        ** one takes an integral value below 2^53 for the integer it is,
        ** and prints it as such (jsonout.c, lua/conv.c), the same text
        ** and value as from the literal ("-0" included: both give 0). */
        uint64_t u = 0;
        for (const char *d = digits; d < q; d++)
            u = u * 10 + (uint64_t)(*d - '0');
        v = *s == '-' ? -(double)u : (double)u;
    } else {
        lit = dsf_json_strndup(s, (size_t)(q - s));
        errno = 0;
        v = strtod(lit, NULL);
    }
    if (!isfinite(v)) {
        cJSON_free(lit);
        return fail(ps, "number out of range");
    }
    cJSON *n = cJSON_CreateNumber(v);
    if (!n) {
        cJSON_free(lit);
        return fail(ps, "out of memory");
    }
    n->valuestring = lit;
    ps->p = q;
    *out = n;
    return 0;
}

static int parse_value(parser *ps, cJSON **out);

static bool word(parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
        return false;
    const char *after = ps->p + n;
    if (after < ps->end &&
        ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z')
         || (*after >= '0' && *after <= '9') || *after == '_'))
        return false;
    ps->p += n;
    return true;
}

static void note_duplicate(parser *ps, const cJSON *old, dsf_jpos again)
{
    dsf_jsrc *s = ps->src;
    dsf_xgrow((void **)&s->dups, &s->capdups, s->ndups + 1, sizeof *s->dups);
    dsf_jdup *dp = &s->dups[s->ndups++];
    dp->path = dsf_xstrdup(dsf_buf_str(&ps->path));
    const posent *e = lookup(s, old);
    dp->first = e ? e->key : again;
    dp->again = again;
}

static int parse_object(parser *ps, cJSON *obj)
{
    size_t nmembers = 0;
    ps->p++; /* '{' */
    for (;;) {
        int rc = skip_space(ps);
        if (rc)
            return rc;
        if (ps->p >= ps->end)
            return fail(ps, "unexpected end of input: '}' expected");
        if (*ps->p == '}') {
            ps->p++;
            return 0;
        }
        if (*ps->p != '"')
            return fail(ps, "object key (a double-quoted string) expected");
        dsf_jpos kpos = here(ps);
        char *key;
        if ((rc = parse_string(ps, &key)))
            return rc;
        if ((rc = skip_space(ps))) {
            cJSON_free(key);
            return rc;
        }
        if (ps->p >= ps->end || *ps->p != ':') {
            cJSON_free(key);
            return fail(ps, "':' expected after object key");
        }
        ps->p++;
        if ((rc = skip_space(ps))) {
            cJSON_free(key);
            return rc;
        }
        size_t mark = ps->path.len;
        if (mark)
            dsf_buf_putc(&ps->path, '.');
        dsf_buf_puts(&ps->path, key);
        cJSON *val = NULL;
        rc = parse_value(ps, &val);
        if (rc) {
            cJSON_free(key);
            return rc;
        }
        cJSON *old = nmembers <= SMALL_OBJECT
                         ? cJSON_GetObjectItemCaseSensitive(obj, key)
                         : memb_get(ps->src, obj, key);
        if (old) {
            /* The last one wins, at the end of the list (as before). */
            note_duplicate(ps, old, kpos);
            memb_forget(ps->src, obj, old);
            cJSON_Delete(cJSON_DetachItemViaPointer(obj, old));
            nmembers--;
        }
        ps->path.len = mark;
        ps->path.data[mark] = '\0';
        posent *ve = (posent *)lookup(ps->src, val); /* (recorded) */
        if (ve)
            ve->key = kpos;
        /* (the node takes the key: no copy of it) */
        val->string = key;
        cJSON_AddItemToArray(obj, val);
        /* An object past SMALL_OBJECT members is indexed, all of it. */
        if (++nmembers == SMALL_OBJECT + 1) {
            for (cJSON *m = obj->child; m; m = m->next)
                memb_put(ps->src, obj, m);
        } else if (nmembers > SMALL_OBJECT) {
            memb_put(ps->src, obj, val);
        }
        if ((rc = skip_space(ps)))
            return rc;
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            return 0;
        }
        return fail(ps, ps->p >= ps->end
                            ? "unexpected end of input: '}' expected"
                            : "',' or '}' expected after object member");
    }
}

static int parse_array(parser *ps, cJSON *arr)
{
    ps->p++; /* '[' */
    for (int index = 0;; index++) {
        int rc = skip_space(ps);
        if (rc)
            return rc;
        if (ps->p >= ps->end)
            return fail(ps, "unexpected end of input: ']' expected");
        if (*ps->p == ']') {
            ps->p++;
            return 0;
        }
        size_t mark = ps->path.len;
        dsf_buf_printf(&ps->path, "[%d]", index);
        cJSON *val = NULL;
        if ((rc = parse_value(ps, &val)))
            return rc;
        ps->path.len = mark;
        ps->path.data[mark] = '\0';
        if (!cJSON_AddItemToArray(arr, val)) {
            cJSON_Delete(val);
            return fail(ps, "out of memory");
        }
        if ((rc = skip_space(ps)))
            return rc;
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            return 0;
        }
        return fail(ps, ps->p >= ps->end
                            ? "unexpected end of input: ']' expected"
                            : "',' or ']' expected after array element");
    }
}

static int parse_value(parser *ps, cJSON **out)
{
    *out = NULL;
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end of input: a value expected");
    dsf_jpos pos = here(ps);
    cJSON *v = NULL;
    int rc = 0;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        if (++ps->depth > DSF_JSON_MAX_DEPTH)
            return fail(ps, DSF_JSON_DEPTH_MESSAGE);
        v = c == '{' ? cJSON_CreateObject() : cJSON_CreateArray();
        if (!v)
            return fail(ps, "out of memory");
        rc = c == '{' ? parse_object(ps, v) : parse_array(ps, v);
        ps->depth--;
    } else if (c == '"') {
        char *s;
        if ((rc = parse_string(ps, &s)))
            return rc;
        v = cJSON_CreateNull();
        if (v) { /* (a string node holding s, without another copy) */
            v->type = cJSON_String;
            v->valuestring = s;
        } else {
            cJSON_free(s);
        }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        rc = parse_number(ps, &v);
    } else if (word(ps, "true")) {
        v = cJSON_CreateTrue();
    } else if (word(ps, "false")) {
        v = cJSON_CreateFalse();
    } else if (word(ps, "null")) {
        v = cJSON_CreateNull();
    } else if (word(ps, "NaN") || word(ps, "Infinity")) {
        ps->p = ps->line_start + pos.col - 1;
        return fail(ps, "NaN and Infinity are not JSON numbers");
    } else {
        return fail(ps, "a value (object, array, string, number, true, "
                        "false or null) expected");
    }
    if (rc) {
        cJSON_Delete(v);
        return rc;
    }
    if (!v)
        return fail(ps, "out of memory");
    record(ps->src, v)->val = pos;
    *out = v;
    return 0;
}

/* JSON text is UTF-8 (RFC 8259 8.1): the whole text, comments included,
** is checked before parsing, and the first bad byte is reported at its
** line and column. */
static int check_utf8(parser *ps)
{
    size_t n = (size_t)(ps->end - ps->p);
    size_t bad = dsf_utf8_check(ps->p, n);
    if (bad == n)
        return 0;
    const char *at = ps->p + bad;
    dsf_jpos pos = {1, 1};
    const char *ls = ps->p;
    for (const char *q = ps->p; q < at; q++)
        if (*q == '\n') {
            pos.line++;
            ls = q + 1;
        }
    pos.col = (int)(at - ls) + 1;
    if (pos.line == 1 && ls == ps->p)
        pos.col += (int)(ps->p - ps->text); /* after a byte-order mark */
    char msg[80];
    snprintf(msg, sizeof msg, "invalid UTF-8 (byte 0x%02X): JSON text must "
             "be UTF-8", (unsigned char)*at);
    return fail_at(ps, pos, msg);
}

/* The start of every line, so that dsf_jsrc_line costs the same for the
** last line of a large file as for the first. */
static void index_lines(dsf_jsrc *s)
{
    size_t n = 1;
    for (const char *p = s->text, *end = s->text + s->len;
         (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
        n++;
    s->lines = dsf_xmalloc(n * sizeof *s->lines);
    s->lines[0] = 0;
    s->nlines = 1;
    for (const char *p = s->text, *end = s->text + s->len;
         (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
        s->lines[s->nlines++] = (size_t)(p + 1 - s->text);
}

/* dsf_json_parse, of own (malloc'd text, which src takes) or of a copy
** of text (only when src_out keeps it: a parse that keeps no positions
** reads text where it is). */
static int parse_text(cJSON **out, dsf_jsrc **src_out, const char *file,
                      char *own, const char *text, size_t len, dsf_diags *d)
{
    *out = NULL;
    if (src_out)
        *src_out = NULL;
    dsf_jsrc *src = dsf_xcalloc(1, sizeof *src);
    src->file = dsf_xstrdup(file);
    if (own)
        src->text = own;
    else if (src_out)
        src->text = dsf_xstrndup(text, len);
    else
        src->text = (char *)text, src->borrowed = true;
    src->len = len;
    parser ps = {0};
    ps.text = ps.p = ps.line_start = src->text;
    ps.end = src->text + len;
    ps.line = 1;
    ps.src = src;
    ps.d = d;
    ps.file = file;
    if (len >= 3 && memcmp(ps.p, "\xEF\xBB\xBF", 3) == 0)
        ps.p += 3, ps.line_start += 3;
    cJSON *doc = NULL;
    int rc = check_utf8(&ps);
    if (!rc)
        rc = skip_space(&ps);
    if (!rc)
        rc = parse_value(&ps, &doc);
    if (!rc)
        rc = skip_space(&ps);
    if (!rc && ps.p < ps.end)
        rc = fail(&ps, "unexpected text after the JSON value");
    dsf_buf_free(&ps.path);
    if (rc) {
        cJSON_Delete(doc);
        dsf_jsrc_free(src);
        return rc;
    }
    *out = doc;
    if (src_out) {
        index_lines(src);
        *src_out = src;
    }
    else
        dsf_jsrc_free(src);
    return 0;
}

int dsf_json_parse(cJSON **out, dsf_jsrc **src_out, const char *file,
                   const char *text, size_t len, dsf_diags *d)
{
    return parse_text(out, src_out, file, NULL, text, len, d);
}

int dsf_json_parse_take(cJSON **out, dsf_jsrc **src_out, const char *file,
                        char *text, size_t len, dsf_diags *d)
{
    if (!src_out) {
        int rc = parse_text(out, NULL, file, NULL, text, len, d);
        free(text);
        return rc;
    }
    return parse_text(out, src_out, file, text, text, len, d);
}

const char *dsf_jsrc_text(const dsf_jsrc *s, size_t *len)
{
    *len = s->len;
    return s->text;
}

int dsf_json_load_file(cJSON **out, dsf_jsrc **src_out, const char *path,
                       dsf_diags *d)
{
    char *text;
    size_t len;
    *out = NULL;
    if (src_out)
        *src_out = NULL;
    int rc = dsf_read_file(&text, &len, path, DSF_JSON_MAX_FILE, d);
    if (rc)
        return rc;
    return dsf_json_parse_take(out, src_out, path, text, len, d);
}

bool dsf_jsrc_pos(const dsf_jsrc *s, const cJSON *node, dsf_jpos *out)
{
    const posent *e = lookup(s, node);
    if (!e || !e->val.line)
        return false;
    *out = e->val;
    return true;
}

bool dsf_jsrc_key_pos(const dsf_jsrc *s, const cJSON *node, dsf_jpos *out)
{
    const posent *e = lookup(s, node);
    if (!e || !e->key.line)
        return false;
    *out = e->key;
    return true;
}

const char *dsf_jsrc_file(const dsf_jsrc *s) { return s->file; }

bool dsf_jsrc_line(const dsf_jsrc *s, int line, const char **start,
                   size_t *len)
{
    size_t i = line > 1 ? (size_t)line - 1 : 0;
    if (i >= s->nlines)
        return false;
    const char *p = s->text + s->lines[i];
    /* the end from the index: constant time however long the line (a
    ** file of one long line gets a finding per key) */
    const char *end = s->text + (i + 1 < s->nlines ? s->lines[i + 1] - 1
                                                   : s->len);
    /* a CR ends the shown line too; looked for only in a line short
    ** enough to be shown (a long one is measured by its newline) */
    if (end - p <= DSF_JSRC_LINE_SCAN) {
        const char *cr = memchr(p, '\r', (size_t)(end - p));
        if (cr)
            end = cr;
    }
    *start = p;
    *len = (size_t)(end - p);
    return true;
}

const dsf_jdup *dsf_jsrc_duplicates(const dsf_jsrc *s, size_t *n)
{
    *n = s->ndups;
    return s->dups;
}

void dsf_jsrc_free(dsf_jsrc *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ndups; i++)
        free(s->dups[i].path);
    free(s->dups);
    free(s->pos);
    free(s->membs);
    free(s->lines);
    if (!s->borrowed)
        free(s->text);
    free(s->file);
    free(s);
}
