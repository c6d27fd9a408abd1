/* jsondiff.c -- see jsondiff.h. */
#include "doc/jsondiff.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "doc/jpath.h"

bool dsf_jpath_under(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (!n)
        return true;
    if (strncmp(path, prefix, n) != 0)
        return false;
    return path[n] == '\0' || path[n] == '.' || path[n] == '[';
}

static bool is_container(const cJSON *v)
{
    return cJSON_IsObject(v) || cJSON_IsArray(v);
}

bool dsf_json_equal(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        return a->valuedouble == b->valuedouble;
    if ((a->type & 0xFF) != (b->type & 0xFF))
        return false;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsArray(a)) {
        const cJSON *x = a->child, *y = b->child;
        for (; x && y; x = x->next, y = y->next)
            if (!dsf_json_equal(x, y))
                return false;
        return !x && !y;
    }
    if (cJSON_IsObject(a)) {
        size_t na = 0, nb = 0;
        for (const cJSON *x = a->child; x; x = x->next, na++) {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
            if (!y || !dsf_json_equal(x, y))
                return false;
        }
        for (const cJSON *y = b->child; y; y = y->next)
            nb++;
        return na == nb;
    }
    return true; /* null, true, false: same type */
}

typedef struct walker {
    dsf_jsondiff *out;
    const char *const *ignore;
    size_t nignore;
    dsf_buf path;
} walker;

static bool ignored(const walker *w)
{
    const char *p = dsf_buf_str(&w->path);
    for (size_t i = 0; i < w->nignore; i++)
        if (dsf_jpath_under(p, w->ignore[i]))
            return true;
    return false;
}

static void emit(walker *w, dsf_jd_kind kind, const cJSON *a, const cJSON *b)
{
    if (ignored(w))
        return;
    dsf_jsondiff *o = w->out;
    if (o->len == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 16;
        o->items = dsf_xrealloc(o->items, o->cap * sizeof *o->items);
    }
    dsf_jd_entry *e = &o->items[o->len++];
    e->kind = kind;
    e->path = dsf_xstrdup(dsf_buf_str(&w->path));
    e->a = a;
    e->b = b;
}

/* The members of an object, sorted by key; caller frees the array. */
static const cJSON **sorted_members(const cJSON *obj, size_t *n)
{
    size_t k = 0;
    for (const cJSON *m = obj ? obj->child : NULL; m; m = m->next)
        k++;
    const cJSON **v = dsf_xcalloc(k + 1, sizeof *v);
    k = 0;
    for (const cJSON *m = obj ? obj->child : NULL; m; m = m->next)
        v[k++] = m;
    for (size_t i = 1; i < k; i++) { /* insertion sort: objects are small */
        const cJSON *x = v[i];
        size_t j = i;
        while (j && strcmp(v[j - 1]->string, x->string) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    *n = k;
    return v;
}

static void walk(walker *w, const cJSON *a, const cJSON *b);

/* Emits every leaf of v (a subtree present on one side only). */
static void one_side(walker *w, const cJSON *v, bool in_a)
{
    if (ignored(w))
        return;
    if (!is_container(v) || !v->child) {
        emit(w, in_a ? DSF_JD_REMOVED : DSF_JD_ADDED, in_a ? v : NULL,
             in_a ? NULL : v);
        return;
    }
    size_t mark = w->path.len;
    if (cJSON_IsArray(v)) {
        size_t i = 0;
        for (const cJSON *m = v->child; m; m = m->next, i++) {
            dsf_buf_printf(&w->path, "[%zu]", i);
            one_side(w, m, in_a);
            w->path.len = mark;
            w->path.data[mark] = '\0';
        }
        return;
    }
    size_t n;
    const cJSON **mem = sorted_members(v, &n);
    for (size_t i = 0; i < n; i++) {
        dsf_jpath_append_key(&w->path, mem[i]->string);
        one_side(w, mem[i], in_a);
        w->path.len = mark;
        w->path.data[mark] = '\0';
    }
    free(mem);
}

static void walk_objects(walker *w, const cJSON *a, const cJSON *b)
{
    size_t na, nb;
    const cJSON **ma = sorted_members(a, &na);
    const cJSON **mb = sorted_members(b, &nb);
    size_t i = 0, j = 0, mark = w->path.len;
    while (i < na || j < nb) {
        int c = i == na   ? 1
                : j == nb ? -1
                          : strcmp(ma[i]->string, mb[j]->string);
        dsf_jpath_append_key(&w->path, c <= 0 ? ma[i]->string
                                              : mb[j]->string);
        if (c == 0)
            walk(w, ma[i++], mb[j++]);
        else if (c < 0)
            one_side(w, ma[i++], true);
        else
            one_side(w, mb[j++], false);
        w->path.len = mark;
        if (w->path.data)
            w->path.data[mark] = '\0';
    }
    free(ma);
    free(mb);
}

static void walk(walker *w, const cJSON *a, const cJSON *b)
{
    if (ignored(w))
        return;
    if (cJSON_IsObject(a) && cJSON_IsObject(b) && (a->child || b->child)) {
        walk_objects(w, a, b);
        return;
    }
    if (cJSON_IsArray(a) && cJSON_IsArray(b) && (a->child || b->child)) {
        size_t mark = w->path.len, i = 0;
        const cJSON *x = a->child, *y = b->child;
        for (; x || y; i++) {
            dsf_buf_printf(&w->path, "[%zu]", i);
            if (x && y)
                walk(w, x, y);
            else
                one_side(w, x ? x : y, x != NULL);
            w->path.len = mark;
            w->path.data[mark] = '\0';
            x = x ? x->next : NULL;
            y = y ? y->next : NULL;
        }
        return;
    }
    if (!dsf_json_equal(a, b))
        emit(w, DSF_JD_CHANGED, a, b);
}

void dsf_jsondiff_run(dsf_jsondiff *out, const cJSON *a, const cJSON *b,
                      const char *const *ignore, size_t nignore)
{
    walker w = {out, ignore, nignore, DSF_BUF_INIT};
    if (a && b)
        walk(&w, a, b);
    else if (a || b)
        one_side(&w, a ? a : b, a != NULL);
    dsf_buf_free(&w.path);
}

void dsf_jsondiff_free(dsf_jsondiff *d)
{
    for (size_t i = 0; i < d->len; i++)
        free(d->items[i].path);
    free(d->items);
    d->items = NULL;
    d->len = d->cap = 0;
}

cJSON *dsf_jsondiff_paths(const cJSON *a, const cJSON *b)
{
    dsf_jsondiff d = DSF_JSONDIFF_INIT;
    dsf_jsondiff_run(&d, a, b, NULL, 0);
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < d.len; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(d.items[i].path));
    dsf_jsondiff_free(&d);
    return arr;
}
