/* bcstrip.c -- see bcstrip.h. Reads lundump.c's format (Lua 5.4). */
#include "bcstrip.h"

#include <stdlib.h>
#include <string.h>

#include <lua.h>

typedef struct out {
    unsigned char *data;
    size_t len, cap;
    int nomem;
} out;

static void add(out *o, const void *p, size_t n)
{
    if (o->nomem || !n)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        unsigned char *d = realloc(o->data, cap);
        if (!d) {
            o->nomem = 1;
            return;
        }
        o->data = d;
        o->cap = cap;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

static void put_size(out *o, size_t x)
{
    unsigned char enc[16];
    add(o, enc, dsf_bc_encode_size(enc, x));
}

typedef struct cursor {
    const unsigned char *p, *end;
    int bad;
} cursor;

static size_t get_size(cursor *c)
{
    size_t x = 0;
    for (;;) {
        if (c->bad || c->p >= c->end || x > ((size_t)-1 >> 7)) {
            c->bad = 1;
            return 0;
        }
        unsigned b = *c->p++;
        x = (x << 7) | (b & 0x7f);
        if (b & 0x80)
            return x;
    }
}

static const unsigned char *get_bytes(cursor *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return NULL;
    }
    const unsigned char *q = c->p;
    c->p += n;
    return q;
}

/* Copies what the cursor passed over since mark. */
static void copy_since(out *o, const unsigned char *mark, const cursor *c)
{
    if (!c->bad && c->p > mark)
        add(o, mark, (size_t)(c->p - mark));
}

/* A string (dumpString): its bytes in *s and *n; NULL for a NULL string. */
static const unsigned char *get_string(cursor *c, size_t *n)
{
    size_t size = get_size(c);
    *n = size ? size - 1 : 0;
    return size ? get_bytes(c, size - 1) : NULL;
}

static int is_env(const unsigned char *s, size_t n)
{
    return s && n == 4 && !memcmp(s, "_ENV", 4);
}

enum { MAX_DEPTH = 200 };

static void strip_function(out *o, cursor *c, int depth)
{
    if (depth > MAX_DEPTH) {
        c->bad = 1;
        return;
    }
    size_t len;
    const unsigned char *mark = c->p;
    get_string(c, &len);            /* source */
    get_size(c);                    /* linedefined */
    get_size(c);                    /* lastlinedefined */
    get_bytes(c, 3);                /* numparams, is_vararg, maxstacksize */
    size_t n = get_size(c);         /* code */
    if (n > (size_t)(c->end - c->p) / 4)
        c->bad = 1;
    get_bytes(c, n * 4);
    n = get_size(c);                /* constants */
    for (size_t i = 0; i < n && !c->bad; i++) {
        const unsigned char *tt = get_bytes(c, 1);
        if (!tt)
            break;
        switch (*tt) {
        case 3:  /* LUA_VNUMINT */
        case 19: /* LUA_VNUMFLT */
            get_bytes(c, 8);
            break;
        case 4:  /* LUA_VSHRSTR */
        case 20: /* LUA_VLNGSTR */
            get_string(c, &len);
            break;
        case 0: case 1: case 17: /* nil, false, true */
            break;
        default:
            c->bad = 1;
        }
    }
    n = get_size(c);                /* upvalues: instack, idx, kind */
    if (n > (size_t)(c->end - c->p) / 3)
        c->bad = 1;
    get_bytes(c, n * 3);
    n = get_size(c);                /* nested functions */
    copy_since(o, mark, c);
    for (size_t i = 0; i < n && !c->bad; i++)
        strip_function(o, c, depth + 1);
    mark = c->p;
    n = get_size(c);                /* lineinfo */
    get_bytes(c, n);
    n = get_size(c);                /* abslineinfo: pc, line */
    for (size_t i = 0; i < n && !c->bad; i++) {
        get_size(c);
        get_size(c);
    }
    copy_since(o, mark, c);
    n = get_size(c);                /* locvars: name, startpc, endpc */
    for (size_t i = 0; i < n && !c->bad; i++) {
        get_string(c, &len);
        get_size(c);
        get_size(c);
    }
    put_size(o, 0);
    /* Upvalue names: all or none (lundump.c reads as many as the function
    ** has upvalues once the count is not 0); NULL but _ENV's. */
    n = get_size(c);
    mark = c->p;
    int env = 0;
    for (size_t i = 0; i < n && !c->bad; i++) {
        const unsigned char *s = get_string(c, &len);
        env |= is_env(s, len);
    }
    if (c->bad || !env) {
        put_size(o, 0);
        return;
    }
    put_size(o, n);
    cursor again = {mark, c->end, 0};
    for (size_t i = 0; i < n; i++) {
        const unsigned char *at = again.p;
        const unsigned char *s = get_string(&again, &len);
        if (is_env(s, len))
            add(o, at, (size_t)(again.p - at));
        else
            put_size(o, 0);
    }
}

/* The header: signature, version, format, LUAC_DATA, three sizes, the
** test integer and number, then the main function's upvalue count. */
enum { HEADER = 4 + 1 + 1 + 6 + 3 + 8 + 8 + 1 };

int dsf_bc_strip(unsigned char **dst, size_t *dst_len,
                 const unsigned char *bc, size_t len)
{
    *dst = NULL;
    *dst_len = 0;
    cursor c = {bc, bc + len, 0};
    const unsigned char *h = get_bytes(&c, HEADER);
    if (!h || memcmp(h, LUA_SIGNATURE, 4) != 0 || h[4] != 0x54 ||
        h[5] != 0 || h[12] != 4 || h[13] != 8 || h[14] != 8)
        return -1;
    out o = {NULL, 0, 0, 0};
    add(&o, h, HEADER);
    strip_function(&o, &c, 0);
    if (o.nomem || c.bad || c.p != c.end) {
        free(o.data);
        return o.nomem ? -2 : -1;
    }
    *dst = o.data;
    *dst_len = o.len;
    return 0;
}
