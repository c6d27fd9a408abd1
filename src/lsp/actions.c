/* actions.c -- textDocument/codeAction: the quick fixes of check's
** findings that carry a machine-readable fix (their "edits", which the
** rules give: plugin/fixedit.h), each a WorkspaceEdit of the document
** with its diagnostic attached. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lsp/jedit.h"
#include "lsp/session.h"

/* A Position as (line, character). */
static bool pos(const cJSON *p, double *l, double *c)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(p, "line");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(p, "character");
    if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b))
        return false;
    *l = a->valuedouble;
    *c = b->valuedouble;
    return true;
}

/* Position x before position y? */
static bool before(double xl, double xc, double yl, double yc)
{
    return xl < yl || (xl == yl && xc < yc);
}

/* Do the ranges r and q meet (ends included)? */
static bool meet(const cJSON *r, const cJSON *q)
{
    double al, ac, bl, bc, cl, cc, dl, dc;
    if (!pos(cJSON_GetObjectItemCaseSensitive(r, "start"), &al, &ac) ||
        !pos(cJSON_GetObjectItemCaseSensitive(r, "end"), &bl, &bc) ||
        !pos(cJSON_GetObjectItemCaseSensitive(q, "start"), &cl, &cc) ||
        !pos(cJSON_GetObjectItemCaseSensitive(q, "end"), &dl, &dc))
        return false;
    return !before(bl, bc, cl, cc) && !before(dl, dc, al, ac);
}

/* Does the request's context.only (if any) take quick fixes? */
static bool wants_quickfix(const cJSON *params)
{
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(params, "context");
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(ctx, "only");
    if (!cJSON_IsArray(only))
        return true;
    const cJSON *k;
    cJSON_ArrayForEach(k, only)
    {
        if (cJSON_IsString(k) && (!strcmp(k->valuestring, "quickfix") ||
                                  !strncmp(k->valuestring, "quickfix.", 9)))
            return true;
    }
    return false;
}

/* The CodeAction of edit e on doc for diagnostic diag, or NULL. */
static cJSON *action(const dsf_lsp_doc *doc, const cJSON *e,
                     const cJSON *diag, bool preferred)
{
    dsf_jtextedit te[2];
    size_t n;
    char *title;
    if (dsf_jedit_plan(doc->text, doc->len, e, te, &n, &title))
        return NULL;
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddStringToObject(a, "kind", "quickfix");
    cJSON *ds = cJSON_AddArrayToObject(a, "diagnostics");
    cJSON_AddItemToArray(ds, cJSON_Duplicate(diag, 1));
    if (preferred)
        cJSON_AddBoolToObject(a, "isPreferred", 1);
    cJSON *we = cJSON_AddObjectToObject(a, "edit");
    cJSON *ch = cJSON_AddObjectToObject(we, "changes");
    cJSON *list = cJSON_AddArrayToObject(ch, doc->uri);
    for (size_t i = 0; i < n; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddItemToObject(t, "range", dsf_lsp_range(doc->text, doc->len,
                                                        te[i].a, te[i].b));
        cJSON_AddStringToObject(t, "newText", te[i].text);
        cJSON_AddItemToArray(list, t);
    }
    dsf_jedit_free(te, n);
    free(title);
    return a;
}

cJSON *dsf_lsp_code_actions(dsf_lsp *s, const dsf_lsp_doc *doc,
                            const cJSON *params)
{
    cJSON *out = cJSON_CreateArray();
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(params, "range");
    if (!wants_quickfix(params) || !cJSON_IsObject(range))
        return out;
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_lsp_findings(s, doc, &d);
    bool any = false;
    for (size_t i = 0; i < d.len && !any; i++)
        any = d.items[i].edits != NULL;
    cJSON *diags = any ? dsf_lsp_diagnostics(&d, doc->text, doc->len) : NULL;
    for (size_t i = 0; any && i < d.len; i++) {
        const cJSON *diag = cJSON_GetArrayItem(diags, (int)i);
        if (!d.items[i].edits ||
            !meet(cJSON_GetObjectItemCaseSensitive(diag, "range"), range))
            continue;
        cJSON *edits = cJSON_Parse(d.items[i].edits);
        const cJSON *e;
        bool first = true;
        cJSON_ArrayForEach(e, edits)
        {
            cJSON *a = action(doc, e, diag, first);
            if (a) {
                cJSON_AddItemToArray(out, a);
                first = false;
            }
        }
        cJSON_Delete(edits);
    }
    cJSON_Delete(diags);
    dsf_diags_free(&d);
    return out;
}
