/* fixedit.c -- see fixedit.h. */
#include "plugin/fixedit.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jsonout.h"

/* The canonical text of the path p (a string or a list of keys and
** 1-based indices), or NULL when it is neither or does not parse. */
static char *path_text(const cJSON *p)
{
    dsf_buf b = DSF_BUF_INIT;
    if (cJSON_IsString(p)) {
        dsf_jpath jp;
        char *err = NULL;
        if (dsf_jpath_parse(&jp, p->valuestring, &err)) {
            free(err);
            return NULL;
        }
        dsf_jpath_format(&b, &jp, jp.len);
        dsf_jpath_free(&jp);
    } else if (cJSON_IsArray(p)) {
        const cJSON *s;
        cJSON_ArrayForEach(s, p)
        {
            if (cJSON_IsString(s)) {
                dsf_jpath_append_key(&b, s->valuestring);
            } else if (cJSON_IsNumber(s) && s->valuedouble >= 1 &&
                       s->valuedouble < 1e9 &&
                       s->valuedouble == (double)(long)s->valuedouble) {
                dsf_buf_printf(&b, "[%ld]", (long)s->valuedouble - 1);
            } else {
                dsf_buf_free(&b);
                return NULL;
            }
        }
    } else {
        return NULL;
    }
    if (!b.len) {
        dsf_buf_free(&b);
        return NULL; /* the whole config is no member */
    }
    return dsf_buf_take(&b);
}

/* One edit, normalized (caller deletes), or NULL and *why. */
static cJSON *one(const cJSON *e, const char *finding_path, const char **why)
{
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "op");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "path");
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(e, "to");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
    if (!cJSON_IsString(op) || (strcmp(op->valuestring, "rename") &&
                                strcmp(op->valuestring, "set") &&
                                strcmp(op->valuestring, "remove") &&
                                strcmp(op->valuestring, "move"))) {
        *why = "'op' must be \"rename\", \"set\", \"remove\" or \"move\"";
        return NULL;
    }
    char *path = p ? path_text(p)
                   : (finding_path && *finding_path
                          ? dsf_xstrdup(finding_path) : NULL);
    if (!path) {
        *why = "'path' must be a config path of a member (a string or a "
               "list), or the finding's path";
        return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op->valuestring);
    cJSON_AddStringToObject(o, "path", path);
    free(path);
    const char *o_name = op->valuestring;
    if (!strcmp(o_name, "rename")) {
        if (!cJSON_IsString(to) || !*to->valuestring) {
            *why = "a rename needs 'to', the new key";
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddStringToObject(o, "to", to->valuestring);
    } else if (!strcmp(o_name, "move")) {
        char *dest = to ? path_text(to) : NULL;
        if (!dest) {
            *why = "a move needs 'to', the config path it goes to";
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddStringToObject(o, "to", dest);
        free(dest);
    } else if (!strcmp(o_name, "set")) {
        if (!v) {
            *why = "a set needs 'value'";
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, "value", cJSON_Duplicate(v, 1));
    }
    return o;
}

char *dsf_fixedit_normalize(const cJSON *raw, const char *finding_path,
                            const char **why)
{
    cJSON *arr = cJSON_CreateArray();
    if (cJSON_IsObject(raw)) {
        cJSON *o = one(raw, finding_path, why);
        if (!o)
            goto bad;
        cJSON_AddItemToArray(arr, o);
    } else if (cJSON_IsArray(raw) && cJSON_GetArraySize(raw) > 0) {
        const cJSON *e;
        cJSON_ArrayForEach(e, raw)
        {
            cJSON *o = cJSON_IsObject(e) ? one(e, finding_path, why) : NULL;
            if (!o) {
                if (!cJSON_IsObject(e))
                    *why = "a list of edits holds only edits (tables)";
                goto bad;
            }
            cJSON_AddItemToArray(arr, o);
        }
    } else {
        *why = "'edit' must be an edit {op=, path=, ...} or a list of them";
        goto bad;
    }
    char *s = dsf_json_print(arr, false); /* floats stay floats */
    cJSON_Delete(arr);
    return s;
bad:
    cJSON_Delete(arr);
    return NULL;
}
