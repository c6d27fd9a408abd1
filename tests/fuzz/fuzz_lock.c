/*
** fuzz_lock.c -- libFuzzer target for the lock file (dsforge.lock, a file
** people edit and merge). Properties: no crash, no leak; an accepted lock
** written back canonically parses again to the same text (#11.11).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "fetch/lock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_lock lock;
    if (dsf_lock_parse(&lock, "dsforge.lock", (const char *)data, size,
                       &d) == 0) {
        char *once = dsf_lock_text(&lock);
        dsf_lock again;
        if (dsf_lock_parse(&again, "again.lock", once, strlen(once), &d))
            abort(); /* what we write must parse */
        char *twice = dsf_lock_text(&again);
        if (strcmp(once, twice))
            abort(); /* and be a fixed point */
        free(twice);
        free(once);
        dsf_lock_free(&again);
    }
    dsf_lock_free(&lock);
    dsf_diags_free(&d);
    return 0;
}
