/* best.c -- see best.h. */
#include "collect/best.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "doc/jsondiff.h"

static bool ignored(const char *path, char *const *ignore, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(ignore[i]);
        if (!strncmp(path, ignore[i], k) && (!path[k] || path[k] == '.'))
            return true;
    }
    return false;
}

static cJSON *diff(const cJSON *a, const cJSON *b, const char *prefix,
                   char *const *ignore, size_t n)
{
    cJSON *out = cJSON_CreateObject();
    for (const cJSON *x = b->child; x; x = x->next) {
        char *path = *prefix ? dsf_xconcat(prefix, ".", x->string, NULL)
                             : dsf_xstrdup(x->string);
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(a, x->string);
        if (ignored(path, ignore, n)) {
            /* left as the next gen makes it */
        } else if (cJSON_IsObject(x) && cJSON_IsObject(y)) {
            cJSON *sub = diff(y, x, path, ignore, n);
            if (sub->child)
                cJSON_AddItemToObject(out, x->string, sub);
            else
                cJSON_Delete(sub);
        } else if (!y || !dsf_json_equal(x, y)) {
            cJSON_AddItemToObject(out, x->string, cJSON_Duplicate(x, true));
        }
        free(path);
    }
    for (const cJSON *y = a->child; y; y = y->next) {
        char *path = *prefix ? dsf_xconcat(prefix, ".", y->string, NULL)
                             : dsf_xstrdup(y->string);
        if (!cJSON_GetObjectItemCaseSensitive(b, y->string) &&
            !ignored(path, ignore, n)) {
            cJSON *del = cJSON_CreateObject();
            cJSON_AddTrueToObject(del, "$delete");
            cJSON_AddItemToObject(out, y->string, del);
        }
        free(path);
    }
    return out;
}

cJSON *dsf_best_override(const cJSON *control, const cJSON *best,
                         char *const *ignore, size_t n)
{
    return diff(control, best, "", ignore, n);
}
