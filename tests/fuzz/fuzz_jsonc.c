/*
** fuzz_jsonc.c -- libFuzzer target for the JSON-with-comments parser and
** the canonical printer. Properties: no crash, no leak, and a parsed
** document printed canonically parses again to the same canonical text.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = NULL;
    dsf_jsrc *src = NULL;
    if (dsf_json_parse(&doc, &src, "fuzz.json", (const char *)data, size,
                       &d) == 0) {
        char *once = dsf_json_print(doc, true);
        cJSON *again = NULL;
        if (dsf_json_parse(&again, NULL, "again.json", once, strlen(once),
                           &d) != 0)
            abort(); /* canonical output must parse */
        char *twice = dsf_json_print(again, true);
        if (strcmp(once, twice) != 0)
            abort(); /* and be a fixed point */
        free(twice);
        free(once);
        cJSON_Delete(again);
        cJSON_Delete(doc);
        dsf_jsrc_free(src);
    }
    dsf_diags_free(&d);
    return 0;
}
