/* doc.c -- see doc.h. */
#include "doc.h"

#include <stdio.h>
#include <string.h>

#include "core/xalloc.h"

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
            cJSON *t = dsf_doc_tombstone();
            bool ok = c->string ? cJSON_ReplaceItemInObjectCaseSensitive(
                                      doc, c->string, t)
                                : cJSON_ReplaceItemViaPointer(doc, c, t);
            if (!ok) {
                cJSON_Delete(t);
                return;
            }
            c = t;
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
    n->valuestring = dsf_xasprintf("%lld", v);
    return n;
}
