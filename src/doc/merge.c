/* merge.c -- see merge.h. */
#include "merge.h"

#include <stdbool.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "doc/doc.h"
#include "doc/jpath.h"
#include "json/jobjidx.h"

/* Where a value came from: its key when it is an object member (that is
** what a message about the setting points at), else the value. */
static void pos_of(const dsf_jsrc *src, const cJSON *node, int *line,
                   int *col)
{
    dsf_jpos pos;
    *line = *col = 0;
    if (src && (dsf_jsrc_key_pos(src, node, &pos) ||
                dsf_jsrc_pos(src, node, &pos))) {
        *line = pos.line;
        *col = pos.col;
    }
}

void dsf_prov_record_tree(dsf_prov *prov, const char *path,
                          const cJSON *value, dsf_prov_action action,
                          const dsf_layer *layer, const dsf_jsrc *src)
{
    if (!prov || dsf_doc_is_tombstone(value))
        return;
    int line, col;
    if (cJSON_IsObject(value) && value->child) {
        dsf_buf b = DSF_BUF_INIT;
        for (const cJSON *c = value->child; c; c = c->next) {
            dsf_buf_clear(&b);
            dsf_buf_puts(&b, path);
            dsf_jpath_append_key(&b, c->string);
            dsf_prov_record_tree(prov, b.data, c, action, layer, src);
        }
        dsf_buf_free(&b);
        return;
    }
    pos_of(src, value, &line, &col);
    dsf_prov_add(prov, path, action, layer, line, col, value);
}

/* A tombstone inside a new subtree has nothing to delete: drop it. */
static void strip_tombstones(cJSON *node)
{
    for (cJSON *ch = node->child; ch;) {
        cJSON *next = ch->next;
        if (dsf_doc_is_tombstone(ch))
            cJSON_Delete(cJSON_DetachItemViaPointer(node, ch));
        else
            strip_tombstones(ch);
        ch = next;
    }
}

static cJSON *copy_without_tombstones(const cJSON *v)
{
    cJSON *c = cJSON_Duplicate(v, 1);
    if (!c)
        dsf_xoom();
    strip_tombstones(c);
    return c;
}

/* Merges layer_doc's members into doc: copies of them, or (take) the
** members themselves, detached from layer_doc (which the caller then
** deletes): the same document and the same events either way. */
static void merge_into(cJSON *doc, cJSON *layer_doc, bool take,
                       const dsf_layer *layer, const dsf_jsrc *src,
                       dsf_prov *prov, dsf_buf *path)
{
    /* A large layer's keys are looked up in an index of doc. Each key of
    ** layer_doc comes once (checked); a member of doc replaced or removed
    ** is replaced or removed in the index too, so no later lookup probes
    ** a freed member. */
    dsf_jobjidx *lix = dsf_jobjidx_new(layer_doc);
    dsf_jobjidx *ix = lix && !dsf_jobjidx_repeats(lix) ? dsf_jobjidx_new(doc)
                                                       : NULL;
    dsf_jobjidx_free(lix);
    for (cJSON *m = layer_doc->child, *next; m; m = next) {
        next = m->next;
        size_t mark = path->len;
        dsf_jpath_append_key(path, m->string);
        cJSON *existing = dsf_jobjidx_get(ix, doc, m->string);
        if (dsf_doc_is_tombstone(m)) {
            if (existing) {
                dsf_jobjidx_swap(ix, existing, NULL);
                cJSON_Delete(cJSON_DetachItemViaPointer(doc, existing));
                int line, col;
                pos_of(src, m, &line, &col);
                if (prov)
                    dsf_prov_add(prov, path->data, DSF_PROV_DELETE, layer,
                                 line, col, NULL);
            }
        } else if (cJSON_IsObject(m) && cJSON_IsObject(existing)) {
            if (!m->child && prov) /* an explicit empty object: note it */
                dsf_prov_record_tree(prov, path->data, m, DSF_PROV_OVERRIDE,
                                     layer, src);
            merge_into(existing, m, take, layer, src, prov, path);
        } else if (take) {
            /* (recorded first: the events see the tombstones, as below) */
            dsf_prov_record_tree(prov, path->data, m,
                                 existing ? DSF_PROV_OVERRIDE : DSF_PROV_SET,
                                 layer, src);
            cJSON *v = cJSON_DetachItemViaPointer(layer_doc, m);
            strip_tombstones(v);
            dsf_jobjidx_swap(ix, existing, v);
            if (existing)
                cJSON_ReplaceItemViaPointer(doc, existing, v);
            else
                cJSON_AddItemToObject(doc, v->string, v);
        } else {
            cJSON *v = copy_without_tombstones(m);
            dsf_jobjidx_swap(ix, existing, v);
            if (existing)
                cJSON_ReplaceItemViaPointer(doc, existing, v);
            else
                cJSON_AddItemToObject(doc, m->string, v);
            dsf_prov_record_tree(prov, path->data, m,
                                 existing ? DSF_PROV_OVERRIDE : DSF_PROV_SET,
                                 layer, src);
        }
        path->len = mark;
        path->data[mark] = '\0';
    }
    dsf_jobjidx_free(ix);
}

void dsf_merge(cJSON *doc, const cJSON *layer_doc, const dsf_layer *layer,
               const dsf_jsrc *src, dsf_prov *prov)
{
    dsf_buf path = DSF_BUF_INIT;
    dsf_buf_puts(&path, "");
    /* (not written to: take is false) */
    merge_into(doc, (cJSON *)layer_doc, false, layer, src, prov, &path);
    dsf_buf_free(&path);
}

void dsf_merge_take(cJSON *doc, cJSON *layer_doc, const dsf_layer *layer,
                    const dsf_jsrc *src, dsf_prov *prov)
{
    dsf_buf path = DSF_BUF_INIT;
    dsf_buf_puts(&path, "");
    merge_into(doc, layer_doc, true, layer, src, prov, &path);
    dsf_buf_free(&path);
    cJSON_Delete(layer_doc);
}
