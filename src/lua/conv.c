/* conv.c -- see conv.h. Recursive, with the depth capped and a stack of
** the tables being converted for cycle detection (as Neovim's converter
** does). */
#include "conv.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "doc/doc.h"
#include "doc/jpath.h"
#include "core/utf8.h"
#include "json/jsonalloc.h"
#include "json/jsonc.h"
#include "lua/values.h"
#include "lua/limits.h"

#define MAX_SAFE_INT 9007199254740992.0 /* 2^53 */

/* What one converted value costs, as counted against the budget: the
** cJSON node and the allocator's overhead; strings and keys add their
** bytes. */
#define NODE_COST (sizeof(cJSON) + 16)
#define CHECK_TIME_EVERY 1024 /* nodes between two looks at the clock */
#define KEEP_PAIRS 64         /* see convert_table */

/* An edit may reach exactly as deep as a converted table, and as a
** parsed file: one limit for every reader (jsonc.h). */
_Static_assert(DSF_CONV_MAX_DEPTH == DSF_JPATH_MAX_DEPTH,
               "edit depth and conversion depth differ");
_Static_assert(DSF_CONV_MAX_DEPTH == DSF_JSON_MAX_DEPTH,
               "parse depth and conversion depth differ");

typedef struct conv {
    lua_State *L;
    unsigned flags;
    const void *open[DSF_CONV_MAX_DEPTH + 1]; /* tables being converted */
    int depth;
    dsf_buf path;
    char *err;
    size_t bytes;   /* counted so far */
    size_t budget;  /* what the result may count */
    bool capped;    /* the budget is DSF_CONV_MAX_BYTES, not the state's */
    size_t nodes;
    bool limit;     /* the failure is a limit, not a shape */
} conv;

static int failf(conv *c, const char *what)
{
    if (!c->err)
        c->err = dsf_xasprintf("%s%s%s", what, c->path.len ? " at " : "",
                               c->path.len ? dsf_buf_str(&c->path)
                                           : "");
    return -1;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
    return dsf_utf8_check((const char *)s, n) == n;
}

static int convert(conv *c, int idx, cJSON **out);

/* Counts bytes of the result being built against the budget and, every
** few nodes, the clock against the call's deadline. A shared sub-table
** is counted each time it is copied: that is the memory it takes. */
static int spend(conv *c, size_t bytes)
{
    c->bytes += bytes;
    if (c->bytes > c->budget) {
        c->limit = true;
        char *m;
        if (c->capped)
            m = dsf_xasprintf("result size limit of %zu MiB exceeded "
                              "while converting the result to JSON",
                              (size_t)DSF_CONV_MAX_BYTES >> 20);
        else
            m = dsf_xasprintf("memory limit of %zu MiB exceeded while "
                              "converting the result to JSON",
                              dsf_limits_of(c->L)->memory >> 20);
        failf(c, m);
        free(m);
        return -1;
    }
    if (++c->nodes % CHECK_TIME_EVERY == 0 && dsf_limits_expired(c->L)) {
        double seconds = dsf_limits_of(c->L)->seconds;
        c->limit = true;
        char *m = dsf_xasprintf("time limit of %.3g s exceeded while "
                                "converting the result to JSON", seconds);
        failf(c, m);
        free(m);
        return -1;
    }
    return 0;
}

static void push_path_key(conv *c, const char *key)
{
    if (c->path.len)
        dsf_buf_putc(&c->path, '.');
    dsf_buf_puts(&c->path, key);
}

static void pop_path(conv *c, size_t mark)
{
    c->path.len = mark;
    if (c->path.data)
        c->path.data[mark] = '\0';
}

typedef struct member {
    const char *key;
    size_t keylen;
    int slot; /* kept: the key's stack slot (its value's is the next) */
} member;

static int cmp_member(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int r = memcmp(x->key, y->key, x->keylen < y->keylen ? x->keylen
                                                          : y->keylen);
    if (r)
        return r;
    return (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

/* The array at idx, items 1..maxint (converted in order). */
static int convert_array(conv *c, int idx, lua_Integer maxint, cJSON **out)
{
    lua_State *L = c->L;
    int rc = 0;
    cJSON *arr = cJSON_CreateArray();
    if (!arr)
        dsf_xoom();
    for (lua_Integer i = 1; i <= maxint && !rc; i++) {
        size_t mark = c->path.len;
        dsf_buf_printf(&c->path, "[%lld]", (long long)(i - 1));
        lua_rawgeti(L, idx, i);
        cJSON *v = NULL;
        rc = convert(c, lua_gettop(L), &v);
        lua_pop(L, 1);
        pop_path(c, mark);
        if (!rc && dsf_doc_is_tombstone(v)) {
            cJSON_Delete(v);
            rc = failf(c, "dsforge.delete cannot be an array item");
        }
        if (!rc)
            cJSON_AddItemToArray(arr, v);
    }
    *out = rc ? (cJSON_Delete(arr), NULL) : arr;
    return rc;
}

/* The object at idx of nstr string keys, its members in key order. kept:
** its pairs are on the stack from base + 1 on (key, value); otherwise
** each value is looked up by its key. Leaves the stack at base. */
static int convert_object(conv *c, int idx, size_t nstr, bool kept,
                          int base, cJSON **out)
{
    lua_State *L = c->L;
    int rc = 0;
    member *ms = nstr ? dsf_xmalloc(nstr * sizeof *ms) : NULL;
    size_t n = 0;
    if (kept) {
        for (; n < nstr; n++) {
            ms[n].slot = base + 1 + 2 * (int)n;
            ms[n].key = lua_tolstring(L, ms[n].slot, &ms[n].keylen);
        }
    } else {
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            lua_pop(L, 1);
            ms[n].slot = 0;
            ms[n].key = lua_tolstring(L, -1, &ms[n].keylen);
            n++;
        }
    }
    /* The strings stay alive: they are keys of the table. */
    if (n)
        qsort(ms, n, sizeof *ms, cmp_member);
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        dsf_xoom();
    for (size_t i = 0; i < n && !rc; i++) {
        if (strlen(ms[i].key) != ms[i].keylen ||
            !valid_utf8((const unsigned char *)ms[i].key, ms[i].keylen)) {
            rc = failf(c, "an object key is not valid UTF-8 text");
            break;
        }
        if (spend(c, ms[i].keylen + 1)) {
            rc = -1;
            break;
        }
        size_t mark = c->path.len;
        push_path_key(c, ms[i].key);
        int vi = ms[i].slot + 1;
        if (!kept) {
            lua_pushlstring(L, ms[i].key, ms[i].keylen);
            lua_rawget(L, idx);
            vi = lua_gettop(L);
        }
        cJSON *v = NULL;
        rc = convert(c, vi, &v);
        if (!kept)
            lua_pop(L, 1);
        pop_path(c, mark);
        if (!rc)
            cJSON_AddItemToObject(obj, ms[i].key, v);
    }
    lua_settop(L, base);
    free(ms);
    *out = rc ? (cJSON_Delete(obj), NULL) : obj;
    return rc;
}

/* The table at idx: an array (positive integer keys 1..n, or marked with
** dsforge.array) or an object (string keys), after checking it is not a
** cycle, too deep, or a mix of both. */
static int convert_table(conv *c, int idx, cJSON **out)
{
    lua_State *L = c->L;
    const void *self = lua_topointer(L, idx);
    for (int i = 0; i < c->depth; i++)
        if (c->open[i] == self)
            return failf(c, "a table contains itself (cycle)");
    if (c->depth >= DSF_CONV_MAX_DEPTH)
        return failf(c, "tables are nested too deeply (more than 200 "
                        "levels)");
    if (!lua_checkstack(L, 6))
        return failf(c, "Lua stack overflow");

    /* Classify the keys: strings, positive integers, or anything else.
    ** The pairs of a table of up to KEEP_PAIRS keys stay on the stack
    ** (key, value, from base + 1 on), so an object's members are then
    ** converted from there without looking each key up again (hashing
    ** and finding it once more, for every member of every converted
    ** config); a larger table's are looked up as before. */
    size_t nstr = 0, nint = 0;
    lua_Integer maxint = 0;
    int base = lua_gettop(L);
    bool kept = lua_checkstack(L, 2 * KEEP_PAIRS + 4);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            nstr++;
        } else if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1) {
            nint++;
            if (lua_tointeger(L, -2) > maxint)
                maxint = lua_tointeger(L, -2);
        } else {
            lua_settop(L, base);
            return failf(c, "a table key is not a positive integer or a "
                            "string");
        }
        if (kept && nstr + nint <= KEEP_PAIRS) {
            lua_pushvalue(L, -2); /* the key again, for lua_next */
        } else {
            lua_pop(L, 1);
            if (kept) { /* too many to keep: only the key, for lua_next */
                lua_replace(L, base + 1);
                lua_settop(L, base + 1);
                kept = false;
            }
        }
    }
    if (nint || !kept)
        lua_settop(L, base); /* read by index or key, below */
    if (nstr && nint)
        return failf(c, "a table mixes array items and object keys");
    int marker = dsf_lua_marker(L, idx);
    if (marker == 2 && nint)
        return failf(c, "a table marked with dsforge.object has array "
                        "items");
    if (marker == 1 && nstr)
        return failf(c, "a table marked with dsforge.array has object "
                        "keys");
    if (nint && (lua_Integer)nint != maxint)
        return failf(c, "an array has holes (keys must be 1..n)");

    c->open[c->depth++] = self;
    int rc = nint || (!nstr && marker == 1)
                 ? convert_array(c, idx, maxint, out)
                 : convert_object(c, idx, nstr, kept, base, out);
    c->depth--;
    return rc;
}

/* v in decimal, into buf (at least 24 bytes): what "%lld" gives, without
** the cost of snprintf (every integer of every converted config). */
static void int_text(char *buf, long long v)
{
    char tmp[24];
    size_t n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v
                                 : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t k = 0;
    if (v < 0)
        buf[k++] = '-';
    while (n)
        buf[k++] = tmp[--n];
    buf[k] = '\0';
}

static cJSON *number(double v, const char *literal)
{
    cJSON *n = cJSON_CreateNumber(v);
    if (!n)
        dsf_xoom();
    n->valuestring = literal ? dsf_json_strdup(literal) : NULL;
    return n;
}

static int convert(conv *c, int idx, cJSON **out)
{
    lua_State *L = c->L;
    *out = NULL;
    if (spend(c, NODE_COST))
        return -1;
    switch (lua_type(L, idx)) {
    case LUA_TTABLE:
        return convert_table(c, idx, out);
    case LUA_TBOOLEAN:
        *out = cJSON_CreateBool(lua_toboolean(L, idx));
        break;
    case LUA_TNUMBER: {
        char lit[32];
        if (lua_isinteger(L, idx)) {
            lua_Integer v = lua_tointeger(L, idx);
            if (v > (lua_Integer)MAX_SAFE_INT || v < -(lua_Integer)MAX_SAFE_INT)
                return failf(c, "an integer beyond +-2^53 cannot be "
                                "represented exactly in JSON");
            int_text(lit, (long long)v);
            *out = number((double)v, lit);
            return 0;
        }
        double v = lua_tonumber(L, idx);
        if (isnan(v) || isinf(v))
            return failf(c, "NaN and infinities are not JSON numbers");
        if (v == floor(v) && fabs(v) <= MAX_SAFE_INT) {
            /* Lua's 2e8: written as the integer it is. */
            int_text(lit, (long long)v);
            *out = number(v, lit);
        } else {
            /* Fractions, and floats too large to be exact integers
            ** (1.5e300), stay floats. */
            *out = number(v, NULL);
        }
        return 0;
    }
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        if (strlen(s) != len)
            return failf(c, "a string contains a NUL byte");
        if (!valid_utf8((const unsigned char *)s, len))
            return failf(c, "a string is not valid UTF-8 text");
        if (spend(c, len + 1))
            return -1;
        *out = cJSON_CreateString(s);
        break;
    }
    case LUA_TLIGHTUSERDATA:
        if (dsf_lua_is_null(L, idx)) {
            *out = cJSON_CreateNull();
            break;
        }
        if (dsf_lua_is_delete(L, idx)) {
            if (!(c->flags & DSF_CONV_ALLOW_DELETE))
                return failf(c, "dsforge.delete is only meaningful in a "
                                "config layer");
            *out = dsf_doc_tombstone();
            return 0;
        }
        return failf(c, "a userdata value cannot be converted to JSON");
    case LUA_TNIL:
        return failf(c, "nil cannot be converted to JSON (use dsforge.null)");
    default: {
        char *m = dsf_xasprintf("a %s value cannot be converted to JSON",
                                lua_typename(L, lua_type(L, idx)));
        failf(c, m);
        free(m);
        return -1;
    }
    }
    if (!*out)
        dsf_xoom();
    return 0;
}

int dsf_lua_to_json(cJSON **out, char **err, lua_State *L, int idx,
                    unsigned flags)
{
    conv c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.flags = flags;
    c.budget = dsf_limits_memory_left(L);
    if (c.budget > DSF_CONV_MAX_BYTES) {
        c.budget = DSF_CONV_MAX_BYTES;
        c.capped = true;
    }
    int top = lua_gettop(L);
    int rc = convert(&c, lua_absindex(L, idx), out);
    lua_settop(L, top);
    dsf_buf_free(&c.path);
    if (rc) {
        *out = NULL;
        *err = c.err ? c.err : dsf_xstrdup("conversion failed");
        return c.limit ? DSF_ESCRIPT : -1;
    }
    *err = NULL;
    return 0;
}

/* The integer a literal of at most 18 digits (and an optional '-')
** writes, into *v; false for any other text. */
static bool short_integer(const char *s, long long *v)
{
    bool neg = *s == '-';
    s += neg;
    long long n = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (digits == 18)
            return false; /* longer: strtoll decides */
        n = n * 10 + (*s - '0');
    }
    if (*s || !digits)
        return false;
    *v = neg ? -n : n;
    return true;
}

bool dsf_json_lua_integer(const cJSON *item, long long *out)
{
    long long iv;
    if (item->valuestring && short_integer(item->valuestring, &iv)) {
        *out = iv;
        return true;
    }
    if (item->valuestring && !strpbrk(item->valuestring, ".eE")) {
        errno = 0;
        char *end;
        long long v = strtoll(item->valuestring, &end, 10);
        if (!errno && !*end) {
            *out = v;
            return true;
        }
    } else if (!item->valuestring) {
        double v = item->valuedouble;
        if (v == floor(v) && fabs(v) <= MAX_SAFE_INT) {
            *out = (long long)v;
            return true;
        }
    }
    return false;
}

static void push_number(lua_State *L, const cJSON *item)
{
    long long iv;
    if (dsf_json_lua_integer(item, &iv))
        lua_pushinteger(L, (lua_Integer)iv);
    else
        lua_pushnumber(L, item->valuedouble);
}

/* lua_pushstring without its cache of recently pushed C strings (the
** cache is keyed by the text's address: a document's strings are at new
** addresses every time, so every look there misses, at two strcmp). */
static void push_text(lua_State *L, const char *s)
{
    if (s)
        lua_pushlstring(L, s, strlen(s));
    else
        lua_pushnil(L); /* as lua_pushstring */
}

/* A member count (cJSON_GetArraySize without the call into the shared
** library). */
static int count_members(const cJSON *item)
{
    int n = 0;
    for (const cJSON *ch = item->child; ch; ch = ch->next)
        n++;
    return n;
}

void dsf_json_push(lua_State *L, const cJSON *item)
{
    /* (the type tested here, not through cJSON_Is*: one call each into
    ** the shared library, for every value of every document pushed) */
    switch (item->type & 0xFF) {
    case cJSON_String:
        push_text(L, item->valuestring);
        return;
    case cJSON_Number:
        push_number(L, item);
        return;
    case cJSON_True:
        lua_pushboolean(L, 1);
        return;
    case cJSON_False:
        lua_pushboolean(L, 0);
        return;
    case cJSON_Object:
    case cJSON_Array:
        /* a table, a key and the value being pushed, per level */
        luaL_checkstack(L, 4, "JSON nesting");
        break;
    default:
        break;
    }
    if (dsf_doc_is_tombstone(item)) {
        lua_pushlightuserdata(L, (void *)&dsf_delete_sentinel);
    } else if (cJSON_IsObject(item)) {
        lua_createtable(L, 0, count_members(item));
        /* (a new table, with no metatable yet: a raw set is the same as
        ** lua_setfield, without looking for a __newindex) */
        for (const cJSON *ch = item->child; ch; ch = ch->next) {
            push_text(L, ch->string);
            dsf_json_push(L, ch);
            lua_rawset(L, -3);
        }
        dsf_lua_mark(L, -1, false);
    } else if (cJSON_IsArray(item)) {
        lua_createtable(L, count_members(item), 0);
        lua_Integer i = 1;
        for (const cJSON *ch = item->child; ch; ch = ch->next) {
            dsf_json_push(L, ch);
            lua_rawseti(L, -2, i++);
        }
        dsf_lua_mark(L, -1, true);
    } else if (cJSON_IsString(item)) {
        push_text(L, item->valuestring);
    } else if (cJSON_IsNumber(item)) {
        push_number(L, item);
    } else if (cJSON_IsBool(item)) {
        lua_pushboolean(L, cJSON_IsTrue(item));
    } else {
        lua_pushlightuserdata(L, (void *)&dsf_null_sentinel);
    }
}
