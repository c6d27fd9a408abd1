/* compare.c -- see compare.h. */
#include "diff/compare.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/xalloc.h"
#include "doc/jsondiff.h"
#include "json/jsonout.h"

static const char *change_name(dsf_jd_kind k)
{
    return k == DSF_JD_ADDED     ? "added"
           : k == DSF_JD_REMOVED ? "removed"
                                 : "changed";
}

static cJSON *origin(const dsf_prov *prov, const char *path)
{
    if (!prov)
        return cJSON_CreateNull();
    const dsf_prov_event *e = dsf_prov_origin(prov, path);
    if (!e)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", e->layer->kind);
    cJSON_AddStringToObject(o, "action", dsf_prov_verb(e->action));
    cJSON_AddStringToObject(o, "layer", e->layer->label);
    dsf_buf w = DSF_BUF_INIT;
    dsf_prov_where(&w, e);
    cJSON_AddStringToObject(o, "where", dsf_buf_str(&w));
    dsf_buf_free(&w);
    cJSON_AddStringToObject(o, "path", e->path);
    return o;
}

static void add_values(cJSON *o, const dsf_jd_entry *e)
{
    if (e->a)
        cJSON_AddItemToObject(o, "a", cJSON_Duplicate(e->a, 1));
    if (e->b)
        cJSON_AddItemToObject(o, "b", cJSON_Duplicate(e->b, 1));
}

/* Findings of x whose (rule, path) is not among y's. */
static cJSON *findings_only(const cJSON *x, const cJSON *y)
{
    cJSON *out = cJSON_CreateArray();
    for (const cJSON *f = x ? x->child : NULL; f; f = f->next) {
        const cJSON *rule = cJSON_GetObjectItemCaseSensitive(f, "rule");
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(f, "path");
        bool found = false;
        for (const cJSON *g = y ? y->child : NULL; g && !found; g = g->next)
            found = dsf_json_equal(rule, cJSON_GetObjectItemCaseSensitive(
                                             g, "rule")) &&
                    dsf_json_equal(path, cJSON_GetObjectItemCaseSensitive(
                                             g, "path"));
        if (!found)
            cJSON_AddItemToArray(out, cJSON_Duplicate(f, 1));
    }
    return out;
}

/* Appends {"path", "change", "a", "b"} for every difference of x and y. */
static void add_changes(cJSON *arr, const cJSON *x, const cJSON *y)
{
    dsf_jsondiff sd = DSF_JSONDIFF_INIT;
    dsf_jsondiff_run(&sd, x, y, NULL, 0);
    for (size_t i = 0; i < sd.len; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", sd.items[i].path);
        cJSON_AddStringToObject(o, "change", change_name(sd.items[i].kind));
        add_values(o, &sd.items[i]);
        cJSON_AddItemToArray(arr, o);
    }
    dsf_jsondiff_free(&sd);
}

cJSON *dsf_compare(const dsf_side_variant *a, const char *alabel,
                   const dsf_side_variant *b, const char *blabel,
                   const char *const *ignore, size_t nignore)
{
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "a", alabel);
    cJSON_AddStringToObject(out, "b", blabel);
    dsf_jsondiff jd = DSF_JSONDIFF_INIT;
    dsf_jsondiff_run(&jd, a->doc, b->doc, ignore, nignore);
    cJSON_AddBoolToObject(out, "equal", jd.len == 0);
    cJSON *diffs = cJSON_AddArrayToObject(out, "differences");
    for (size_t i = 0; i < jd.len; i++) {
        const dsf_jd_entry *e = &jd.items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", e->path);
        cJSON_AddStringToObject(o, "change", change_name(e->kind));
        add_values(o, e);
        if (a->prov || b->prov) {
            cJSON_AddItemToObject(o, "a_origin", origin(a->prov, e->path));
            cJSON_AddItemToObject(o, "b_origin", origin(b->prov, e->path));
        }
        cJSON_AddItemToArray(diffs, o);
    }
    dsf_jsondiff_free(&jd);
    cJSON *pars = cJSON_AddArrayToObject(out, "params");
    if (a->params && b->params)
        add_changes(pars, a->params, b->params);
    cJSON *cons = cJSON_AddObjectToObject(out, "consequences");
    cJSON *sum = cJSON_AddArrayToObject(cons, "summary");
    if (a->summary && b->summary)
        add_changes(sum, a->summary, b->summary);
    if (a->findings && b->findings) {
        cJSON_AddItemToObject(cons, "findings_added",
                              findings_only(b->findings, a->findings));
        cJSON_AddItemToObject(cons, "findings_removed",
                              findings_only(a->findings, b->findings));
    }
    return out;
}

/* ------------------------------------------------------------------ */

static void print_value(FILE *out, const char *key, const cJSON *v)
{
    if (!v) {
        fputs("(absent)", out);
        return;
    }
    char *t = dsf_json_print(v, false);
    fputs(t, out);
    free(t);
    /* Byte counts read better in GiB; the suffix is the plugins'
    ** convention for a size in bytes. */
    size_t n = strlen(key);
    if (cJSON_IsNumber(v) && n > 6 && !strcmp(key + n - 6, "_bytes"))
        fprintf(out, " (%.2f GiB)", v->valuedouble / 1073741824.0);
}

static char mark(const char *change)
{
    return !strcmp(change, "added") ? '+' : !strcmp(change, "removed") ? '-'
                                                                       : '~';
}

static void print_origin(FILE *out, const char *side, const cJSON *o,
                         const char *path)
{
    if (!o)
        return;
    if (cJSON_IsNull(o)) {
        fprintf(out, "    %s: no layer sets it\n", side);
        return;
    }
    const char *kind = cJSON_GetObjectItemCaseSensitive(o, "kind")
                           ->valuestring;
    const char *act = cJSON_GetObjectItemCaseSensitive(o, "action")
                          ->valuestring;
    const char *where = cJSON_GetObjectItemCaseSensitive(o, "where")
                            ->valuestring;
    const char *at = cJSON_GetObjectItemCaseSensitive(o, "path")->valuestring;
    fprintf(out, "    %s: %s %s %s", side, kind, act, where);
    if (strcmp(at, path) != 0)
        fprintf(out, " at %s", at[0] ? at : "(root)");
    fputc('\n', out);
}

static void print_finding(FILE *out, char sign, const cJSON *f)
{
    const cJSON *sev = cJSON_GetObjectItemCaseSensitive(f, "severity");
    const cJSON *rule = cJSON_GetObjectItemCaseSensitive(f, "rule");
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(f, "path");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(f, "message");
    fprintf(out, "  %c %s [%s] %s%s%s\n", sign, sev->valuestring,
            rule->valuestring, path->valuestring,
            path->valuestring[0] ? ": " : "", msg->valuestring);
}

static void print_changes(FILE *out, const cJSON *arr)
{
    for (const cJSON *e = arr->child; e; e = e->next) {
        const char *path = cJSON_GetObjectItemCaseSensitive(e, "path")
                               ->valuestring;
        const char *ch = cJSON_GetObjectItemCaseSensitive(e, "change")
                             ->valuestring;
        fprintf(out, "  %c %s: ", mark(ch), path);
        print_value(out, path, cJSON_GetObjectItemCaseSensitive(e, "a"));
        fputs(" -> ", out);
        print_value(out, path, cJSON_GetObjectItemCaseSensitive(e, "b"));
        fputc('\n', out);
    }
}

void dsf_compare_print(FILE *out, const cJSON *cmp)
{
    fprintf(out, "--- a: %s\n+++ b: %s\n",
            cJSON_GetObjectItemCaseSensitive(cmp, "a")->valuestring,
            cJSON_GetObjectItemCaseSensitive(cmp, "b")->valuestring);
    const cJSON *diffs = cJSON_GetObjectItemCaseSensitive(cmp,
                                                          "differences");
    size_t n = 0;
    for (const cJSON *e = diffs->child; e; e = e->next, n++) {
        const char *path = cJSON_GetObjectItemCaseSensitive(e, "path")
                               ->valuestring;
        const char *ch = cJSON_GetObjectItemCaseSensitive(e, "change")
                             ->valuestring;
        fprintf(out, "%c %s: ", mark(ch), path[0] ? path : "(root)");
        print_value(out, path, cJSON_GetObjectItemCaseSensitive(e, "a"));
        fputs(" -> ", out);
        print_value(out, path, cJSON_GetObjectItemCaseSensitive(e, "b"));
        fputc('\n', out);
        print_origin(out, "a",
                     cJSON_GetObjectItemCaseSensitive(e, "a_origin"), path);
        print_origin(out, "b",
                     cJSON_GetObjectItemCaseSensitive(e, "b_origin"), path);
    }
    const cJSON *cons = cJSON_GetObjectItemCaseSensitive(cmp,
                                                         "consequences");
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(cons, "summary");
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(cons,
                                                       "findings_added");
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(cons,
                                                       "findings_removed");
    const cJSON *pars = cJSON_GetObjectItemCaseSensitive(cmp, "params");
    if (pars && pars->child) {
        fputs("params:\n", out);
        print_changes(out, pars);
    }
    if (sum->child || (fa && fa->child) || (fr && fr->child)) {
        fputs("consequences:\n", out);
        print_changes(out, sum);
        for (const cJSON *f = fa ? fa->child : NULL; f; f = f->next)
            print_finding(out, '+', f);
        for (const cJSON *f = fr ? fr->child : NULL; f; f = f->next)
            print_finding(out, '-', f);
    }
    if (n)
        fprintf(out, "%zu difference%s\n", n, n == 1 ? "" : "s");
    else
        fputs("no differences\n", out);
}
