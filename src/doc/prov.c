/* prov.c -- see prov.h. */
#include "prov.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "json/jsonout.h"

static size_t hash_path(const char *s, size_t n)
{
    size_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h ^ h >> 29;
}

/* The slot of the path s[0..n): its event's, or the empty one to use. */
static size_t *slot_of(size_t *slots, size_t nslots, const dsf_prov_event *ev,
                       const char *s, size_t n)
{
    size_t mask = nslots - 1;
    for (size_t i = hash_path(s, n) & mask;; i = (i + 1) & mask) {
        size_t *sl = &slots[i];
        if (!*sl)
            return sl;
        const char *q = ev[*sl - 1].path;
        if (!strncmp(q, s, n) && q[n] == '\0')
            return sl;
    }
}

static void index_event(dsf_prov *p, size_t k)
{
    if ((p->used + 1) * 2 > p->nslots) {
        size_t old_n = p->nslots;
        size_t *old = p->slots;
        p->nslots = old_n ? old_n * 2 : 64;
        p->slots = dsf_xcalloc(p->nslots, sizeof *p->slots);
        for (size_t i = 0; i < old_n; i++)
            if (old[i]) {
                const char *q = p->ev[old[i] - 1].path;
                *slot_of(p->slots, p->nslots, p->ev, q, strlen(q)) = old[i];
            }
        free(old);
    }
    const char *path = p->ev[k].path;
    size_t *sl = slot_of(p->slots, p->nslots, p->ev, path, strlen(path));
    if (!*sl)
        p->used++;
    *sl = k + 1; /* the last event of a path is the one that counts */
}

void dsf_prov_add(dsf_prov *p, const char *path, dsf_prov_action action,
                  const dsf_layer *layer, int line, int col,
                  const cJSON *value)
{
    dsf_xgrow((void **)&p->ev, &p->cap, p->len + 1, sizeof *p->ev);
    dsf_prov_event *e = &p->ev[p->len++];
    e->path = dsf_xstrdup(path);
    e->action = action;
    e->layer = layer;
    e->line = line ? line : layer->line;
    e->col = line ? col : layer->col;
    e->value = value && !p->no_values ? dsf_json_print(value, false) : NULL;
    index_event(p, p->len - 1);
}

/* Is a a prefix of b at a step boundary? */
static bool is_prefix(const char *a, const char *b)
{
    size_t n = strlen(a);
    if (strncmp(a, b, n) != 0)
        return false;
    return b[n] == '\0' || b[n] == '.' || b[n] == '[' || n == 0;
}

int dsf_prov_related(const char *a, const char *b)
{
    return is_prefix(a, b) || is_prefix(b, a);
}

const dsf_prov_event *dsf_prov_origin(const dsf_prov *p, const char *path)
{
    /* The longest recorded prefix at a step boundary (is_prefix): the
    ** path itself, then before each '.' or '[' from the end, then "". */
    if (!p->nslots)
        return NULL;
    size_t n = strlen(path);
    for (size_t k = n + 1; k-- > 0;) {
        if (k && k < n && path[k] != '.' && path[k] != '[')
            continue;
        size_t sl = *slot_of(p->slots, p->nslots, p->ev, path, k);
        if (sl)
            return &p->ev[sl - 1];
    }
    return NULL;
}

const dsf_prov_event *dsf_prov_origin_located(const dsf_prov *p,
                                              const char *path)
{
    const dsf_prov_event *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < p->len; i++) {
        const dsf_prov_event *e = &p->ev[i];
        if (!e->layer->file || !is_prefix(e->path, path))
            continue;
        size_t n = strlen(e->path);
        if (!best || n >= best_len) {
            best = e;
            best_len = n;
        }
    }
    return best;
}

const dsf_prov_event *dsf_prov_maker(const dsf_prov *p, const char *path)
{
    const dsf_prov_event *best = NULL;
    for (size_t i = 0; i < p->len; i++)
        if (is_prefix(path, p->ev[i].path) && strcmp(path, p->ev[i].path))
            best = &p->ev[i];
    return best;
}

void dsf_prov_free(dsf_prov *p)
{
    for (size_t i = 0; i < p->len; i++) {
        free(p->ev[i].path);
        free(p->ev[i].value);
    }
    free(p->ev);
    p->ev = NULL;
    p->len = p->cap = 0;
    free(p->slots);
    p->slots = NULL;
    p->nslots = p->used = 0;
}

void dsf_prov_where(dsf_buf *out, const dsf_prov_event *e)
{
    dsf_buf_puts(out, e->layer->label);
    if (!e->layer->file)
        return;
    dsf_buf_printf(out, " (%s", e->layer->file);
    if (e->line)
        dsf_buf_printf(out, ":%d", e->line);
    if (e->col)
        dsf_buf_printf(out, ":%d", e->col);
    dsf_buf_putc(out, ')');
}

const char *dsf_prov_verb(dsf_prov_action action)
{
    return action == DSF_PROV_SET        ? "set"
           : action == DSF_PROV_OVERRIDE ? "override"
                                         : "delete";
}
