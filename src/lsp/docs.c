/* docs.c -- see docs.h. */
#include "lsp/docs.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "lsp/utf16.h"

dsf_lsp_doc *dsf_lsp_docs_find(dsf_lsp_docs *docs, const char *uri)
{
    for (size_t i = 0; i < docs->len; i++)
        if (!strcmp(docs->items[i].uri, uri))
            return &docs->items[i];
    return NULL;
}

/* Makes room for n bytes of text (and the NUL). */
static void reserve(dsf_lsp_doc *doc, size_t n)
{
    if (n + 1 <= doc->cap)
        return;
    size_t cap = doc->cap ? doc->cap : 64;
    while (cap < n + 1)
        cap *= 2;
    doc->text = dsf_xrealloc(doc->text, cap);
    doc->cap = cap;
}

int dsf_lsp_doc_set(dsf_lsp_doc *doc, const char *text, size_t n)
{
    if (n > DSF_LSP_MAX_DOC)
        return -1;
    reserve(doc, n);
    if (n)
        memcpy(doc->text, text, n);
    doc->text[n] = '\0';
    doc->len = n;
    return 0;
}

dsf_lsp_doc *dsf_lsp_docs_open(dsf_lsp_docs *docs, const char *uri,
                               const char *text, size_t len, long version)
{
    dsf_lsp_doc *doc = dsf_lsp_docs_find(docs, uri);
    if (!doc) {
        if (docs->len == docs->cap) {
            docs->cap = docs->cap ? docs->cap * 2 : 4;
            docs->items = dsf_xrealloc(docs->items,
                                       docs->cap * sizeof *docs->items);
        }
        doc = &docs->items[docs->len++];
        memset(doc, 0, sizeof *doc);
        doc->uri = dsf_xstrdup(uri);
    }
    doc->version = version;
    if (dsf_lsp_doc_set(doc, text, len))
        dsf_lsp_doc_set(doc, "", 0); /* too large: held empty */
    return doc;
}

int dsf_lsp_doc_edit(dsf_lsp_doc *doc, long l0, long c0, long l1, long c1,
                     const char *text, size_t n)
{
    size_t a = dsf_utf16_offset(doc->text, doc->len, l0, c0);
    size_t b = dsf_utf16_offset(doc->text, doc->len, l1, c1);
    if (b < a)
        b = a;
    size_t len = doc->len - (b - a) + n;
    if (n > DSF_LSP_MAX_DOC || len > DSF_LSP_MAX_DOC)
        return -1;
    reserve(doc, len);
    memmove(doc->text + a + n, doc->text + b, doc->len - b);
    if (n)
        memcpy(doc->text + a, text, n);
    doc->len = len;
    doc->text[len] = '\0';
    return 0;
}

void dsf_lsp_docs_close(dsf_lsp_docs *docs, const char *uri)
{
    dsf_lsp_doc *doc = dsf_lsp_docs_find(docs, uri);
    if (!doc)
        return;
    free(doc->uri);
    free(doc->text);
    size_t i = (size_t)(doc - docs->items);
    memmove(doc, doc + 1, (docs->len - i - 1) * sizeof *doc);
    docs->len--;
}

void dsf_lsp_docs_free(dsf_lsp_docs *docs)
{
    for (size_t i = 0; i < docs->len; i++) {
        free(docs->items[i].uri);
        free(docs->items[i].text);
    }
    free(docs->items);
    memset(docs, 0, sizeof *docs);
}
