/*
** docs.h -- the open documents of a language server session: their URI,
** version and text, kept in step with the client's didOpen, didChange
** (full or ranged edits, textDocumentSync = 2) and didClose.
*/
#ifndef DSF_LSP_DOCS_H
#define DSF_LSP_DOCS_H

#include <stddef.h>

/* The most bytes a document may hold (the size check reads). */
#define DSF_LSP_MAX_DOC (64u << 20)

typedef struct dsf_lsp_doc {
    char *uri;
    char *text;     /* NUL-terminated, len bytes (may hold other NULs) */
    size_t len, cap;
    long version;
} dsf_lsp_doc;

typedef struct dsf_lsp_docs {
    dsf_lsp_doc *items;
    size_t len, cap;
} dsf_lsp_docs;

#define DSF_LSP_DOCS_INIT {NULL, 0, 0}

/* The document of uri, or NULL (borrowed from docs; valid until the next
** open or close). */
dsf_lsp_doc *dsf_lsp_docs_find(dsf_lsp_docs *docs, const char *uri);

/* Opens (or replaces) uri with text[0..len) (copied). Returns the
** document (borrowed). */
dsf_lsp_doc *dsf_lsp_docs_open(dsf_lsp_docs *docs, const char *uri,
                               const char *text, size_t len, long version);

/* Replaces the UTF-16 range (l0,c0)-(l1,c1) of doc with text[0..n)
** (copied); positions past the end clamp to it, a range whose end is
** before its start is empty at its start. -1 (and doc unchanged) when
** the result would exceed DSF_LSP_MAX_DOC, else 0. */
int dsf_lsp_doc_edit(dsf_lsp_doc *doc, long l0, long c0, long l1, long c1,
                     const char *text, size_t n);

/* Replaces doc's whole text with text[0..n) (copied); -1 as above. */
int dsf_lsp_doc_set(dsf_lsp_doc *doc, const char *text, size_t n);

/* Closes uri (nothing when it is not open). */
void dsf_lsp_docs_close(dsf_lsp_docs *docs, const char *uri);

void dsf_lsp_docs_free(dsf_lsp_docs *docs);

#endif
