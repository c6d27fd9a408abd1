/*
** fuzz_manifest.c -- libFuzzer target for manifest.json as gen finds it
** in an output directory (another run's, or a file someone edited).
** Properties: no crash, no leak; when the input is accepted, this run's
** manifest merged into it prints as a manifest that parses again, and
** merging the same run once more changes nothing (#11.11).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "json/jsonout.h"
#include "profile/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A run of profile "p" with two variants, as output.c builds it. */
static cJSON *this_run(void)
{
    static const char text[] =
        "{\"dsforge_version\": \"0\", \"profile\": \"p\", \"target\": "
        "\"deepspeed\", \"chain\": [{\"name\": \"p\"}], \"layers\": [], "
        "\"variants\": [{\"name\": \"small\", \"profile\": \"p\"}, "
        "{\"name\": \"large\", \"profile\": \"p\"}]}";
    return cJSON_Parse(text);
}

static char *merged_text(const cJSON *old)
{
    cJSON *m = this_run();
    dsf_manifest_merge(m, old, "p");
    char *s = dsf_json_print(m, true);
    cJSON_Delete(m);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *old;
    if (dsf_manifest_parse(&old, "manifest.json", (const char *)data, size,
                           &d) == 0) {
        char *once = merged_text(old);
        cJSON *again;
        if (dsf_manifest_parse(&again, "again.json", once, strlen(once), &d))
            abort(); /* what gen writes, gen must read */
        char *twice = merged_text(again);
        if (strcmp(once, twice))
            abort(); /* re-running the same profile changes nothing */
        free(twice);
        free(once);
        cJSON_Delete(again);
        cJSON_Delete(old);
    }
    dsf_diags_free(&d);
    return 0;
}
