/*
** outdir.h -- a document's file and, when it is a variant of a `gen -o`
** output directory, that variant's entry in the manifest.json beside it
** (its params, profile, tier), for inlay hints and go to definition.
*/
#ifndef DSF_LSP_OUTDIR_H
#define DSF_LSP_OUTDIR_H

#include <cjson/cJSON.h>

/* The path of a file: URI (percent-escapes decoded), or NULL for another
** scheme or a malformed escape. Caller frees. */
char *dsf_lsp_uri_path(const char *uri);

/* The file: URI of path (caller frees). */
char *dsf_lsp_path_uri(const char *path);

/* The manifest.json beside the file of uri when it lists that file as a
** variant: returns the manifest (caller deletes) and *variant its entry
** (borrowed from it); NULL when there is none. */
cJSON *dsf_lsp_manifest_of(const char *uri, const cJSON **variant);

#endif
