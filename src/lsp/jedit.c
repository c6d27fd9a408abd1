/* jedit.c -- see jedit.h. A scanner of the members of a JSON text that
** already parses (the findings come from one that did): strings, comments
** and nesting, nothing more. */
#include "lsp/jedit.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

#define BAD SIZE_MAX

typedef struct scan {
    const char *t;
    size_t len;
} scan;

/* Past white space and comments from i. */
static size_t ws(const scan *s, size_t i)
{
    while (i < s->len) {
        char c = s->t[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
        } else if (c == '/' && i + 1 < s->len && s->t[i + 1] == '/') {
            while (i < s->len && s->t[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < s->len && s->t[i + 1] == '*') {
            i += 2;
            while (i + 1 < s->len && !(s->t[i] == '*' && s->t[i + 1] == '/'))
                i++;
            i = i + 1 < s->len ? i + 2 : s->len;
        } else {
            break;
        }
    }
    return i;
}

/* The end of the string starting at i (a '"'), or BAD. */
static size_t string_end(const scan *s, size_t i)
{
    for (i++; i < s->len; i++) {
        if (s->t[i] == '\\')
            i++;
        else if (s->t[i] == '"')
            return i + 1;
    }
    return BAD;
}

/* The end of the value starting at i, or BAD. */
static size_t value_end(const scan *s, size_t i, int depth)
{
    if (i >= s->len || depth > DSF_JSON_MAX_DEPTH)
        return BAD;
    char c = s->t[i];
    if (c == '"')
        return string_end(s, i);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        i = ws(s, i + 1);
        while (i < s->len && s->t[i] != close) {
            if (c == '{') {
                if (s->t[i] != '"')
                    return BAD;
                i = ws(s, string_end(s, i));
                if (i >= s->len || s->t[i] != ':')
                    return BAD;
                i = ws(s, i + 1);
            }
            i = value_end(s, i, depth + 1);
            if (i == BAD)
                return BAD;
            i = ws(s, i);
            if (i < s->len && s->t[i] == ',')
                i = ws(s, i + 1);
            else if (i < s->len && s->t[i] != close)
                return BAD;
        }
        return i < s->len ? i + 1 : BAD;
    }
    size_t b = i;
    while (b < s->len && !strchr(" \t\r\n,}]/:", s->t[b]))
        b++;
    return b > i ? b : BAD;
}

/* One member of an object or element of an array: its key (quotes
** included; empty for an element) and value. */
typedef struct item {
    size_t ka, kb, va, vb;
} item;

/* The items of the container at a (its '{' or '['): *n of them in a
** new array (caller frees), *close its closing bracket. -1 when it does
** not scan. */
static int items(const scan *s, size_t a, item **out, size_t *n,
                 size_t *close)
{
    bool obj = s->t[a] == '{';
    char cl = obj ? '}' : ']';
    size_t cap = 0, i = ws(s, a + 1);
    *out = NULL;
    *n = 0;
    while (i < s->len && s->t[i] != cl) {
        item it = {i, i, 0, 0};
        if (obj) {
            if (s->t[i] != '"' || (it.kb = string_end(s, i)) == BAD)
                goto bad;
            i = ws(s, it.kb);
            if (i >= s->len || s->t[i] != ':')
                goto bad;
            i = ws(s, i + 1);
        }
        it.va = i;
        if ((it.vb = value_end(s, i, 1)) == BAD)
            goto bad;
        dsf_xgrow((void **)out, &cap, *n + 1, sizeof **out);
        (*out)[(*n)++] = it;
        i = ws(s, it.vb);
        if (i < s->len && s->t[i] == ',')
            i = ws(s, i + 1);
        else if (i < s->len && s->t[i] != cl)
            goto bad;
    }
    if (i >= s->len)
        goto bad;
    *close = i;
    return 0;
bad:
    free(*out);
    *out = NULL;
    return -1;
}

/* Does the quoted key [ka, kb) of s name key? (A key written with
** escapes never does: a fix is not offered there.) */
static bool key_is(const scan *s, const item *it, const char *key)
{
    size_t n = it->kb - it->ka - 2;
    return strlen(key) == n && !memchr(s->t + it->ka + 1, '\\', n) &&
           !memcmp(s->t + it->ka + 1, key, n);
}

/* Where a path's value is, and what holds it. */
typedef struct loc {
    item it;          /* the member (or element) */
    size_t del_a, del_b; /* what removing it removes */
} loc;

/* The index of step in the container at a (its items[0..n)), or -1; the
** last of duplicate keys, as the parser keeps. */
static long find_step(const scan *s, const item *its, size_t n,
                      const dsf_jstep *st, bool obj)
{
    long at = -1;
    if (!st->key)
        return obj || st->index < 0 || (size_t)st->index >= n
                   ? -1 : st->index;
    if (!obj)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (key_is(s, &its[i], st->key))
            at = (long)i;
    return at;
}

/* The start of the value the first nsteps steps of p lead to, or BAD;
** *out (with nsteps >= 1) the last step's member. */
static size_t locate(const scan *s, const dsf_jpath *p, size_t nsteps,
                     loc *out)
{
    size_t v = ws(s, 0);
    if (s->len - v >= 3 && !memcmp(s->t + v, "\xEF\xBB\xBF", 3))
        v = ws(s, v + 3);
    for (size_t k = 0; k < nsteps; k++) {
        if (v >= s->len || (s->t[v] != '{' && s->t[v] != '['))
            return BAD;
        item *its;
        size_t n, close;
        if (items(s, v, &its, &n, &close))
            return BAD;
        long i = find_step(s, its, n, &p->steps[k], s->t[v] == '{');
        if (i < 0) {
            free(its);
            return BAD;
        }
        if (k + 1 == nsteps) {
            out->it = its[i];
            if ((size_t)i + 1 < n) { /* up to the next one */
                out->del_a = its[i].ka;
                out->del_b = its[i + 1].ka;
            } else if (i > 0) { /* from the previous one's end */
                out->del_a = its[i - 1].vb;
                out->del_b = its[i].vb;
            } else { /* the only one: the container is left empty */
                out->del_a = v + 1;
                out->del_b = close;
            }
        }
        v = its[i].va;
        free(its);
    }
    return v;
}

/* The JSON text of the string s (quotes and escapes). */
static char *quoted(const char *s)
{
    cJSON *j = cJSON_CreateString(s);
    char *t = dsf_json_print(j, false);
    cJSON_Delete(j);
    return t;
}

/* The text that puts member (its text) into the object at a: where
** (*at) and what (returned). */
static char *insert_member(const scan *s, size_t a, const char *member,
                           size_t *at)
{
    item *its;
    size_t n, close;
    if (items(s, a, &its, &n, &close))
        return NULL;
    char *r;
    if (!n) {
        *at = a + 1;
        r = dsf_xstrdup(member);
    } else {
        const item *last = &its[n - 1];
        *at = last->vb;
        /* on a line of its own, indented as the last member, when that
        ** one starts its line */
        size_t ls = last->ka;
        while (ls > 0 && (s->t[ls - 1] == ' ' || s->t[ls - 1] == '\t'))
            ls--;
        if (ls > 0 && s->t[ls - 1] == '\n') {
            char *ind = dsf_xstrndup(s->t + ls, last->ka - ls);
            r = dsf_xconcat(",\n", ind, member, NULL);
            free(ind);
        } else {
            r = dsf_xconcat(", ", member, NULL);
        }
    }
    free(its);
    return r;
}

static int plan_rename(const scan *s, const dsf_jpath *p, const char *to,
                       dsf_jtextedit *out, size_t *n)
{
    loc l;
    dsf_jstep st = {(char *)to, 0};
    size_t parent = locate(s, p, p->len - 1, &l);
    if (parent == BAD || s->t[parent] != '{' ||
        p->steps[p->len - 1].key == NULL || locate(s, p, p->len, &l) == BAD)
        return -1;
    item *its;
    size_t ni, close;
    if (items(s, parent, &its, &ni, &close))
        return -1;
    long there = find_step(s, its, ni, &st, true);
    free(its);
    if (there >= 0)
        return -1; /* the new name is given already */
    out[0] = (dsf_jtextedit){l.it.ka, l.it.kb, quoted(to)};
    *n = 1;
    return 0;
}

static int plan_move(const scan *s, const dsf_jpath *p, const char *to,
                     dsf_jtextedit *out, size_t *n)
{
    dsf_jpath q;
    char *err = NULL;
    if (dsf_jpath_parse(&q, to, &err)) {
        free(err);
        return -1;
    }
    int rc = -1;
    loc l, dl;
    size_t k = 0;
    /* the deepest ancestor of the destination that exists */
    size_t a = ws(s, 0), at;
    while (k + 1 < q.len) {
        size_t v = locate(s, &q, k + 1, &dl);
        if (v == BAD)
            break;
        a = v;
        k++;
    }
    bool inside = q.len >= p->len; /* the destination under the source */
    for (size_t i = 0; inside && i < p->len; i++)
        inside = p->steps[i].key && q.steps[i].key &&
                 !strcmp(p->steps[i].key, q.steps[i].key);
    if (!q.len || inside || locate(s, p, p->len, &l) == BAD ||
        locate(s, &q, q.len, &dl) != BAD || s->t[a] != '{')
        goto done;
    for (size_t i = k; i < q.len; i++)
        if (!q.steps[i].key)
            goto done;
    /* "k1": {"k2": ... VALUE} for the steps that do not exist */
    dsf_buf m = DSF_BUF_INIT;
    for (size_t i = k; i < q.len; i++) {
        char *qk = quoted(q.steps[i].key);
        dsf_buf_puts(&m, qk);
        dsf_buf_puts(&m, i + 1 < q.len ? ": {" : ": ");
        free(qk);
    }
    dsf_buf_add(&m, s->t + l.it.va, l.it.vb - l.it.va);
    for (size_t i = k + 1; i < q.len; i++)
        dsf_buf_putc(&m, '}');
    char *ins = insert_member(s, a, m.data, &at);
    dsf_buf_free(&m);
    if (!ins)
        goto done;
    if (at > l.del_a && at < l.del_b) {
        free(ins);
        goto done;
    }
    dsf_jtextedit del = {l.del_a, l.del_b, dsf_xstrdup("")};
    dsf_jtextedit add = {at, at, ins};
    out[0] = at <= l.del_a ? add : del;
    out[1] = at <= l.del_a ? del : add;
    *n = 2;
    rc = 0;
done:
    dsf_jpath_free(&q);
    return rc;
}

int dsf_jedit_plan(const char *text, size_t len, const cJSON *e,
                   dsf_jtextedit out[2], size_t *n, char **title)
{
    scan s = {text, len};
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "op");
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(e, "path");
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(e, "to");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(e, "value");
    *n = 0;
    *title = NULL;
    if (!cJSON_IsString(op) || !cJSON_IsString(path))
        return -1;
    dsf_jpath p;
    char *err = NULL;
    if (dsf_jpath_parse(&p, path->valuestring, &err)) {
        free(err);
        return -1;
    }
    int rc = -1;
    loc l;
    const char *o = op->valuestring, *ps = path->valuestring;
    if (!p.len) {
        /* the whole config is no member */
    } else if (!strcmp(o, "rename") && cJSON_IsString(to)) {
        rc = plan_rename(&s, &p, to->valuestring, out, n);
        const char *old = p.steps[p.len - 1].key;
        if (!rc)
            *title = dsf_xasprintf("Rename \"%s\" to \"%s\"", old,
                                   to->valuestring);
    } else if (!strcmp(o, "move") && cJSON_IsString(to)) {
        rc = plan_move(&s, &p, to->valuestring, out, n);
        if (!rc)
            *title = dsf_xasprintf("Move %s to %s", ps, to->valuestring);
    } else if (!strcmp(o, "remove")) {
        if (locate(&s, &p, p.len, &l) != BAD) {
            out[0] = (dsf_jtextedit){l.del_a, l.del_b, dsf_xstrdup("")};
            *n = 1;
            rc = 0;
            *title = dsf_xasprintf("Remove %s", ps);
        }
    } else if (!strcmp(o, "set") && value) {
        if (locate(&s, &p, p.len, &l) != BAD) {
            char *v = dsf_json_print(value, false);
            out[0] = (dsf_jtextedit){l.it.va, l.it.vb, v};
            *n = 1;
            rc = 0;
            *title = dsf_xasprintf("Set %s to %s", ps, v);
        }
    }
    dsf_jpath_free(&p);
    return rc;
}

void dsf_jedit_free(dsf_jtextedit *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(out[i].text);
}
