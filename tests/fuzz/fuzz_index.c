/*
** fuzz_index.c -- libFuzzer target for a repository's index.json (the
** bytes a server sends). Properties: no crash, no leak; an accepted index
** written back canonically parses again to the same text (#11.11).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "fetch/index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_index *ix = NULL;
    if (dsf_index_parse(&ix, "index.json", (const char *)data, size, &d) ==
        0) {
        char *once = dsf_index_write(ix);
        dsf_index *again = NULL;
        if (dsf_index_parse(&again, "again.json", once, strlen(once), &d))
            abort(); /* what we write must parse */
        char *twice = dsf_index_write(again);
        if (strcmp(once, twice))
            abort(); /* and be a fixed point */
        free(twice);
        free(once);
        dsf_index_free(again);
        dsf_index_free(ix);
    }
    dsf_diags_free(&d);
    return 0;
}
