/* doc.c -- see doc.h. */
#include "doc.h"

#include <stdio.h>
#include <string.h>

#include "core/xalloc.h"
#include "json/jsonalloc.h"

/* cJSON_Raw never comes out of our parser or the Lua bridge, so it is free
** to mean "tombstone". */
#define TOMBSTONE_TEXT "\"$delete\""

cJSON *dsf_doc_tombstone(void)
{
    cJSON *t = cJSON_CreateRaw(TOMBSTONE_TEXT);
    if (!t)
        dsf_xoom();
    return t;
}

bool dsf_doc_is_tombstone(const cJSON *item)
{
    return item && cJSON_IsRaw(item);
}

bool dsf_doc_is_delete_directive(const cJSON *item)
{
    return cJSON_IsObject(item) && item->child && !item->child->next &&
           !strcmp(item->child->string, "$delete") &&
           cJSON_IsTrue(item->child);
}

void dsf_doc_mark_tombstones(cJSON *doc)
{
    for (cJSON *c = doc ? doc->child : NULL; c; c = c->next) {
        if (dsf_doc_is_delete_directive(c)) {
            /* Turn the node itself into the tombstone rather than replace
            ** it, so it keeps its source position (merge reports deletes
            ** there): a new node would have none, or the stale one of a
            ** node freed earlier at the same address. */
            cJSON *t = dsf_doc_tombstone();
            cJSON_Delete(c->child);
            c->child = NULL;
            c->type = t->type | (c->type & cJSON_StringIsConst);
            c->valuestring = t->valuestring;
            t->valuestring = NULL;
            cJSON_Delete(t);
        } else {
            dsf_doc_mark_tombstones(c);
        }
    }
}

cJSON *dsf_doc_int(long long v)
{
    cJSON *n = cJSON_CreateNumber((double)v);
    if (!n)
        dsf_xoom();
    n->valuestring = dsf_json_int_text(v);
    return n;
}
