/*
** fuzz_index.c -- libFuzzer target for a repository's index.json (the
** bytes a server sends), formats 1 and 2, and for the version
** requirements that select a release. Properties: no crash, no leak; an
** accepted index written back canonically parses again to the same text
** (#11.11); every format-2 release is a loadable tree on its own (its
** canonical text parses again, its files are served at blobs/<sha256>);
** selection agrees with the requirement: the newest match matches, and
** no newer release does.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "fetch/index.h"
#include "fetch/semver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first line of the input, read as a requirement. */
static void check_selection(const dsf_index *ix, const uint8_t *data,
                            size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size < 64 ? size : 64);
    if (!nl)
        return;
    char req_text[65];
    memcpy(req_text, data, (size_t)(nl - data));
    req_text[nl - data] = '\0';
    dsf_semreq req;
    size_t col;
    const char *why;
    if (!dsf_semreq_parse(&req, req_text, &col, &why)) {
        if (!col || col > strlen(req_text) + 1 || !why)
            abort(); /* an error names a column inside the text */
        return;
    }
    const dsf_index_release *best = dsf_index_newest(ix, NULL, &req);
    for (size_t i = 0; i < ix->n_releases; i++) {
        bool m = dsf_semreq_matches(&req, ix->releases[i].version);
        if (m && (!best || dsf_semver_cmp(ix->releases[i].version,
                                          best->version) > 0))
            abort(); /* a newer match than the one selected */
    }
    if (best && !dsf_semreq_matches(&req, best->version))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_index *ix = NULL;
    /* the index starts at its '{' (a requirement line may come first) */
    const uint8_t *brace = memchr(data, '{', size);
    size_t off = brace ? (size_t)(brace - data) : 0;
    if (dsf_index_parse(&ix, "index.json", (const char *)data + off,
                        size - off, &d) == 0) {
        char *once = dsf_index_write(ix);
        dsf_index *again = NULL;
        if (dsf_index_parse(&again, "again.json", once, strlen(once), &d))
            abort(); /* what we write must parse */
        char *twice = dsf_index_write(again);
        if (strcmp(once, twice))
            abort(); /* and be a fixed point */
        for (size_t i = 0; i < ix->n_releases; i++) {
            const dsf_index *sub = ix->releases[i].ix;
            if (i && dsf_semver_cmp(ix->releases[i - 1].version,
                                    ix->releases[i].version) >= 0)
                abort(); /* releases sorted, no two equal */
            char *text = dsf_index_write(sub);
            dsf_index *tree = NULL;
            if (dsf_index_parse(&tree, "release.json", text, strlen(text),
                                &d))
                abort(); /* a release is a valid tree by itself */
            for (size_t k = 0; k < sub->n_files; k++)
                if (strncmp(sub->files[k].remote, "blobs/", 6) ||
                    strcmp(sub->files[k].remote + 6, sub->files[k].sha256))
                    abort(); /* content addressed */
            dsf_index_free(tree);
            free(text);
        }
        check_selection(ix, data, off);
        free(twice);
        free(once);
        dsf_index_free(again);
        dsf_index_free(ix);
    }
    dsf_diags_free(&d);
    return 0;
}
