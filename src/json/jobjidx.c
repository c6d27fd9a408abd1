/* jobjidx.c -- see jobjidx.h. Open addressing, keyed by the member's
** key. */
#include "jobjidx.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#define SMALL_OBJECT 8

struct dsf_jobjidx {
    cJSON **slots; /* NULL: free */
    size_t mask;
    bool repeats;
};

static size_t hash_key(const char *key)
{
    size_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const unsigned char *k = (const unsigned char *)key; *k; k++)
        h = (h ^ *k) * 1099511628211ULL;
    return h ^ h >> 29;
}

dsf_jobjidx *dsf_jobjidx_new(const cJSON *obj)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    size_t n = 0;
    for (const cJSON *m = obj->child; m; m = m->next)
        n++;
    if (n <= SMALL_OBJECT)
        return NULL;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    dsf_jobjidx *ix = dsf_xmalloc(sizeof *ix);
    ix->slots = dsf_xcalloc(cap, sizeof *ix->slots);
    ix->mask = cap - 1;
    ix->repeats = false;
    for (cJSON *m = obj->child; m; m = m->next) {
        if (!m->string)
            continue;
        for (size_t i = hash_key(m->string) & ix->mask;;
             i = (i + 1) & ix->mask) {
            if (!ix->slots[i]) {
                ix->slots[i] = m;
                break;
            }
            if (!strcmp(ix->slots[i]->string, m->string)) {
                ix->repeats = true;
                break; /* the first one stays */
            }
        }
    }
    return ix;
}

/* A removed member's slot: kept taken, so the keys placed after it in
** their probe sequence are still found. */
static cJSON removed;

cJSON *dsf_jobjidx_get(const dsf_jobjidx *ix, const cJSON *obj,
                       const char *key)
{
    if (!ix)
        return cJSON_GetObjectItemCaseSensitive(obj, key);
    for (size_t i = hash_key(key) & ix->mask;; i = (i + 1) & ix->mask) {
        cJSON *m = ix->slots[i];
        if (!m)
            return NULL;
        if (m != &removed && !strcmp(m->string, key))
            return m;
    }
}

void dsf_jobjidx_swap(dsf_jobjidx *ix, const cJSON *was, cJSON *now)
{
    if (!ix || !was || !was->string)
        return;
    /* was's slot is on its key's probe sequence; found by identity, so
    ** was itself may already be freed */
    for (size_t i = hash_key(was->string) & ix->mask;;
         i = (i + 1) & ix->mask) {
        if (!ix->slots[i])
            return;
        if (ix->slots[i] == was) {
            ix->slots[i] = now ? now : &removed;
            return;
        }
    }
}

bool dsf_jobjidx_repeats(const dsf_jobjidx *ix)
{
    return ix && ix->repeats;
}

void dsf_jobjidx_free(dsf_jobjidx *ix)
{
    if (!ix)
        return;
    free(ix->slots);
    free(ix);
}
