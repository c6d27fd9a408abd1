/*
** fuzz_edit.c -- libFuzzer target for command-line edits: the input is one
** edit (path=value, +path=value, ~path) applied to a small document.
** Properties: no crash, no leak; a successful edit leaves a document that
** prints and parses again.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "doc/jpath.h"
#include "json/jsonc.h"
#include "json/jsonout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base[] =
    "{\"a\": {\"b\": [1, 2, {\"c\": null}]}, \"x.y\": true, \"s\": \"t\"}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096 || memchr(data, 0, size))
        return 0;
    char *arg = malloc(size + 1);
    if (!arg)
        return 0;
    memcpy(arg, data, size);
    arg[size] = '\0';
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *doc = NULL;
    if (dsf_json_parse(&doc, NULL, "base", base, sizeof base - 1, &d) != 0)
        abort();
    dsf_edit e;
    char *err = NULL;
    if (dsf_edit_parse(&e, arg, 1, &err) == 0) {
        cJSON *touched;
        char *aerr = NULL;
        if (dsf_edit_apply(doc, &e, &touched, &aerr) == 0) {
            char *text = dsf_json_print(doc, true);
            cJSON *again = NULL;
            if (dsf_json_parse(&again, NULL, "again", text, strlen(text),
                               &d) != 0)
                abort();
            cJSON_Delete(again);
            free(text);
        }
        free(aerr);
        dsf_edit_free(&e);
    }
    free(err);
    cJSON_Delete(doc);
    dsf_diags_free(&d);
    free(arg);
    return 0;
}
