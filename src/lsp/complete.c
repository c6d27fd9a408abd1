/* complete.c -- textDocument/completion: the keys the JSON Schema (the
** `schema --draft 07` command a plugin declares, at the chosen release)
** allows in the object under the cursor, and the enum values of the
** member whose value is being written. */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "lsp/jcursor.h"
#include "lsp/session.h"
#include "lsp/utf16.h"
#include "plugin/targets.h"

/* The schema at the session's release (cached; NULL when no plugin
** declares the command or it fails). Borrowed. */
static const cJSON *schema(dsf_lsp *s)
{
    char *at = cJSON_PrintUnformatted(s->values);
    if (s->schema_doc && !strcmp(s->schema_at, at)) {
        cJSON_free(at);
        return s->schema_doc;
    }
    cJSON_Delete(s->schema_doc);
    s->schema_doc = NULL;
    free(s->schema_at);
    s->schema_at = dsf_xstrdup(at);
    cJSON_free(at);
    if (!s->schema)
        return NULL;
    cJSON *opts = cJSON_CreateObject();
    cJSON_AddStringToObject(opts, "draft", "07");
    cJSON *args = cJSON_CreateArray();
    char *text = NULL;
    int status = 0;
    dsf_diags d = DSF_DIAGS_INIT;
    if (!dsf_plugins_run_command(s->plugins, s->schema, opts, args, NULL, 0,
                                 s->values, &text, &status, &d) &&
        !status && text)
        s->schema_doc = cJSON_Parse(text);
    else
        dsf_lsp_log("the schema command failed: %s",
                    d.len ? d.items[0].message : "?");
    free(text);
    dsf_diags_free(&d);
    cJSON_Delete(opts);
    cJSON_Delete(args);
    return s->schema_doc;
}

/* The subschema for the member key (NULL: an array element) of node. */
static const cJSON *child(const cJSON *node, const char *key)
{
    if (!key)
        return cJSON_GetObjectItemCaseSensitive(node, "items");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(node, "properties");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(p, key);
    if (c)
        return c;
    c = cJSON_GetObjectItemCaseSensitive(node, "additionalProperties");
    return cJSON_IsObject(c) ? c : NULL;
}

static cJSON *item(cJSON *items, const char *label, int kind,
                   const char *detail, const char *new_text,
                   const cJSON *range)
{
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "label", label);
    cJSON_AddNumberToObject(it, "kind", kind);
    if (detail)
        cJSON_AddStringToObject(it, "detail", detail);
    cJSON_AddStringToObject(it, "filterText", new_text);
    cJSON *te = cJSON_AddObjectToObject(it, "textEdit");
    cJSON_AddItemToObject(te, "range", cJSON_Duplicate(range, 1));
    cJSON_AddStringToObject(te, "newText", new_text);
    cJSON_AddItemToArray(items, it);
    return it;
}

/* v as JSON text (caller frees). */
static char *json_text(const cJSON *v)
{
    char *p = cJSON_PrintUnformatted(v); /* cJSON's allocator */
    if (!p)
        dsf_xoom();
    char *t = dsf_xstrdup(p);
    cJSON_free(p);
    return t;
}

/* Every key of node's properties (kind 10, Property). */
static void keys(cJSON *items, const cJSON *node, const cJSON *range)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(node, "properties");
    const cJSON *k;
    cJSON_ArrayForEach(k, p)
    {
        const cJSON *desc = cJSON_GetObjectItemCaseSensitive(k,
                                                             "description");
        cJSON *name = cJSON_CreateString(k->string);
        char *quoted = json_text(name);
        cJSON_Delete(name);
        item(items, k->string, 10,
             cJSON_IsString(desc) ? desc->valuestring : NULL, quoted, range);
        free(quoted);
    }
}

/* Adds value v (kind 20, EnumMember) unless already there or a string
** another target than this one fills in (the plugins' targets' `fills`:
** plugin/targets.h). */
static void value(const dsf_lsp *s, cJSON *items, const cJSON *v,
                  const char *target, const cJSON *range)
{
    if (cJSON_IsString(v) &&
        !dsf_plugins_target_fills(s->plugins, target, v->valuestring))
        return;
    char *t = json_text(v);
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(it, "label");
        if (!strcmp(l->valuestring, t)) {
            free(t);
            return;
        }
    }
    item(items, t, 20, NULL, t, range);
    free(t);
}

/* The values node allows by enum, const or a boolean type, also through
** its anyOf/oneOf branches (depth: how far down those go). */
static void values(const dsf_lsp *s, cJSON *items, const cJSON *node, const char *target,
                   const cJSON *range, int depth)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(node, "enum"))
        value(s, items, v, target, range);
    v = cJSON_GetObjectItemCaseSensitive(node, "const");
    if (v)
        value(s, items, v, target, range);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(node, "type");
    bool boolean = cJSON_IsString(type) &&
                   !strcmp(type->valuestring, "boolean");
    if (cJSON_IsArray(type))
        cJSON_ArrayForEach(v, type) boolean =
            boolean ||
            (cJSON_IsString(v) && !strcmp(v->valuestring, "boolean"));
    if (boolean) {
        cJSON *t = cJSON_CreateTrue(), *f = cJSON_CreateFalse();
        value(s, items, t, target, range);
        value(s, items, f, target, range);
        cJSON_Delete(t);
        cJSON_Delete(f);
    }
    if (depth >= 4)
        return;
    const char *branches[] = {"anyOf", "oneOf"};
    for (int b = 0; b < 2; b++)
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(
                                  node, branches[b]))
            values(s, items, v, target, range, depth + 1);
}

cJSON *dsf_lsp_complete(dsf_lsp *s, const dsf_lsp_doc *doc, long line,
                        long character)
{
    size_t off = dsf_utf16_offset(doc->text, doc->len, line, character);
    dsf_jcursor c;
    dsf_jcursor_find(&c, doc->text, doc->len, off);
    const cJSON *node = c.at != DSF_JC_NONE ? schema(s) : NULL;
    for (size_t i = 0; node && i < c.depth; i++)
        node = child(node, c.path[i]);
    if (node && c.at == DSF_JC_VALUE)
        node = c.in_array ? child(node, NULL)
                          : c.key ? child(node, c.key) : NULL;
    cJSON *items = cJSON_CreateArray();
    /* the token under the cursor (a string with its quotes) is replaced */
    size_t a = c.tok_start, b = c.tok_end;
    if (a < b && doc->text[a] != '"' && c.at == DSF_JC_KEY)
        a = b = off; /* a bare word where a key goes: insert */
    cJSON *range = dsf_lsp_range(doc->text, doc->len, a, b);
    if (node && c.at == DSF_JC_KEY)
        keys(items, node, range);
    else if (node)
        values(s, items, node, s->target, range, 0);
    cJSON_Delete(range);
    dsf_jcursor_free(&c);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddBoolToObject(r, "isIncomplete", 0);
    cJSON_AddItemToObject(r, "items", items);
    return r;
}
