/* manifest.c -- see manifest.h. */
#include "profile/manifest.h"

#include <stdbool.h>
#include <string.h>

#include "core/error.h"
#include "json/jsonc.h"

/* Every entry gen writes is an object with a string "name"; anything
** else is not ours to merge (a number among them would be dropped by one
** merge and kept by another: found by fuzz_manifest). */
static bool variants_are_entries(const cJSON *variants)
{
    for (const cJSON *e = variants->child; e; e = e->next) {
        if (!cJSON_IsObject(e))
            return false;
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "profile");
        if (!cJSON_IsString(n) || (p && !cJSON_IsString(p)))
            return false;
    }
    return true;
}

int dsf_manifest_parse(cJSON **out, const char *path, const char *text,
                       size_t len, dsf_diags *d)
{
    *out = NULL;
    /* dsforge's own reader: valid UTF-8, finite numbers, no duplicate
    ** surprises; its own diagnostics are replaced by the one below. */
    cJSON *m = NULL;
    dsf_diags ignore = DSF_DIAGS_INIT;
    if (dsf_json_parse(&m, NULL, path, text, len, &ignore) != 0)
        m = NULL;
    dsf_diags_free(&ignore);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "variants");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(m, "dsforge_version");
    if (!cJSON_IsObject(m) || !cJSON_IsArray(v) || !cJSON_IsString(ver) ||
        !variants_are_entries(v)) {
        cJSON_Delete(m);
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, path, 0, 0,
                                   "not a dsforge manifest: gen leaves it "
                                   "alone");
        dsf_diag_set_hint(g, "remove it or write to another directory");
        return DSF_EINPUT;
    }
    *out = m;
    return 0;
}

/* This run's part of the manifest's "profiles" object. */
static cJSON *run_entry(const cJSON *m)
{
    static const char *const keys[] = {"target", "chain", "layers",
                                       "param_args", "param_files", "matrix",
                                       NULL};
    cJSON *e = cJSON_CreateObject();
    for (int i = 0; keys[i]; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(m, keys[i]);
        if (x)
            cJSON_AddItemToObject(e, keys[i], cJSON_Duplicate(x, 1));
    }
    return e;
}

static const char *entry_profile(const cJSON *v, const char *dflt)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(v, "profile");
    return cJSON_IsString(p) ? p->valuestring : dflt;
}

void dsf_manifest_merge(cJSON *m, const cJSON *old, const char *pname)
{
    cJSON *profiles = cJSON_CreateObject();
    cJSON *variants = cJSON_DetachItemFromObjectCaseSensitive(m, "variants");
    cJSON *all = cJSON_CreateArray();
    if (old) {
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(old, "profile");
        const char *oname = cJSON_IsString(op) ? op->valuestring : "";
        const cJSON *oprofs = cJSON_GetObjectItemCaseSensitive(old,
                                                               "profiles");
        if (cJSON_IsObject(oprofs)) {
            for (const cJSON *e = oprofs->child; e; e = e->next)
                if (strcmp(e->string, pname) != 0)
                    cJSON_AddItemToObject(profiles, e->string,
                                          cJSON_Duplicate(e, 1));
        } else if (*oname && strcmp(oname, pname) != 0) {
            /* a manifest written before "profiles" existed */
            cJSON_AddItemToObject(profiles, oname, run_entry(old));
        }
        const cJSON *ov = cJSON_GetObjectItemCaseSensitive(old, "variants");
        for (const cJSON *v = cJSON_IsArray(ov) ? ov->child : NULL; v;
             v = v->next) {
            const char *vp = entry_profile(v, oname);
            if (!strcmp(vp, pname) ||
                !cJSON_GetObjectItemCaseSensitive(profiles, vp))
                continue;
            cJSON *c = cJSON_Duplicate(v, 1);
            if (!cJSON_GetObjectItemCaseSensitive(c, "profile"))
                cJSON_AddStringToObject(c, "profile", vp);
            cJSON_AddItemToArray(all, c);
        }
    }
    cJSON_AddItemToObject(profiles, pname, run_entry(m));
    /* Ordered by profile (names sorted), each profile's variants in order. */
    cJSON *sorted = cJSON_CreateArray();
    cJSON_AddItemToArray(all, variants); /* a marker for this run's list */
    for (;;) {
        const char *next = NULL;
        for (const cJSON *e = profiles->child; e; e = e->next)
            if (!next || strcmp(e->string, next) < 0) {
                bool done = false;
                for (const cJSON *s = sorted->child; s && !done;
                     s = s->next)
                    done = !strcmp(entry_profile(s, ""), e->string);
                if (!done)
                    next = e->string;
            }
        if (!next)
            break;
        const cJSON *src = strcmp(next, pname) ? all : variants;
        bool any = false;
        for (const cJSON *v = src->child; v; v = v->next) {
            if (v == variants || strcmp(entry_profile(v, ""), next) != 0)
                continue;
            cJSON_AddItemToArray(sorted, cJSON_Duplicate(v, 1));
            any = true;
        }
        if (!any) /* a profile without variants: drop it */
            cJSON_DeleteItemFromObjectCaseSensitive(profiles, next);
    }
    cJSON_Delete(all); /* frees variants too */
    cJSON_AddItemToObject(m, "profiles", profiles);
    cJSON_AddItemToObject(m, "variants", sorted);
}

