/* diagnose.c -- textDocument/publishDiagnostics: what `dsforge check`
** says about a document (plugin/checkdoc.h), at LSP ranges. */
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "json/jsonc.h"
#include "lsp/session.h"
#include "lsp/utf16.h"
#include "plugin/checkdoc.h"
#include "plugin/targets.h"

/* The starts of the text's lines (0-based), for 1-based line numbers. */
typedef struct lines {
    size_t *start;
    size_t n;
} lines;

static void lines_index(lines *ln, const char *t, size_t len)
{
    size_t cap = 64;
    ln->start = dsf_xmalloc(cap * sizeof *ln->start);
    ln->n = 0;
    ln->start[ln->n++] = 0;
    for (const char *p = t; (p = memchr(p, '\n', len - (size_t)(p - t)));) {
        p++;
        if (ln->n == cap) {
            cap *= 2;
            ln->start = dsf_xrealloc(ln->start, cap * sizeof *ln->start);
        }
        ln->start[ln->n++] = (size_t)(p - t);
    }
}

/* The end of the token starting at t[a] (before the line's end e): a
** string with its quotes, a word, or the one byte there. */
static size_t token_end(const char *t, size_t a, size_t e)
{
    if (a >= e)
        return a;
    size_t b = a + 1;
    if (t[a] == '"') {
        while (b < e && t[b] != '"')
            b += t[b] == '\\' ? 2 : 1;
        return b < e ? b + 1 : e;
    }
    while (b < e && !strchr(" \t\r{}[]:,\"/", t[b]))
        b++;
    return b;
}

/* The LSP diagnostic of g (file:line:col, 1-based bytes). */
static cJSON *diagnostic(const dsf_diag *g, const char *t, size_t len,
                         const lines *ln)
{
    size_t line = g->line > 0 ? (size_t)g->line - 1 : 0;
    if (line >= ln->n)
        line = ln->n - 1;
    size_t ls = ln->start[line];
    size_t le = line + 1 < ln->n ? ln->start[line + 1] - 1 : len;
    size_t a = ls + (g->col > 0 ? (size_t)g->col - 1 : 0);
    if (a > le)
        a = le;
    size_t b = token_end(t, a, le);
    cJSON *o = cJSON_CreateObject();
    cJSON *r = cJSON_AddObjectToObject(o, "range");
    cJSON *p = cJSON_AddObjectToObject(r, "start");
    cJSON_AddNumberToObject(p, "line", (double)line);
    cJSON_AddNumberToObject(p, "character",
                            (double)dsf_utf16_units(t + ls, a - ls));
    p = cJSON_AddObjectToObject(r, "end");
    cJSON_AddNumberToObject(p, "line", (double)line);
    cJSON_AddNumberToObject(p, "character",
                            (double)dsf_utf16_units(t + ls, b - ls));
    cJSON_AddNumberToObject(o, "severity", g->severity == DSF_ERROR ? 1
                                           : g->severity == DSF_WARNING
                                               ? 2
                                               : 3);
    if (g->rule)
        cJSON_AddStringToObject(o, "code", g->rule);
    cJSON_AddStringToObject(o, "source", "dsforge");
    char *msg = g->hint ? dsf_xconcat(g->message, "\nfix: ", g->hint, NULL)
                        : dsf_xstrdup(g->message);
    cJSON_AddStringToObject(o, "message", msg);
    free(msg);
    return o;
}

const char *dsf_lsp_world_param(const dsf_lsp *s)
{
    const dsf_plugin_option *o = dsf_lsp_setting_option(s, "worldSize");
    return o && o->param ? o->key : NULL;
}

const char *dsf_lsp_doc_target(dsf_lsp *s, const cJSON *json, dsf_diags *d)
{
    const char *target = s->target;
    const char *recognised = NULL;
    if (!s->target_given && cJSON_IsObject(json) &&
        !dsf_plugins_recognise(s->plugins, json, &recognised, d) &&
        recognised)
        target = recognised;
    dsf_plugins_use_target(s->plugins, target);
    return target;
}

/* check's findings on doc, as `dsforge check` gives them. */
static void check(dsf_lsp *s, const dsf_lsp_doc *doc, dsf_diags *out)
{
    cJSON *json = NULL;
    dsf_jsrc *src = NULL;
    if (dsf_json_parse(&json, &src, doc->uri, doc->text, doc->len, out))
        return; /* the syntax error, at its position */
    dsf_checkdoc_duplicates(s->plugins, doc->uri, src, out);
    const char *target = dsf_lsp_doc_target(s, json, out);
    dsf_validate_opts vo = {.target = target, .mode = "check",
                            .values = s->values, .text = doc->text,
                            .text_len = doc->len, .edits = true};
    cJSON *params = cJSON_CreateObject();
    if (dsf_lsp_world_param(s))
        cJSON_AddNumberToObject(params, dsf_lsp_world_param(s),
                                (double)s->world);
    vo.params = params;
    dsf_checkdoc_rules(s->plugins, json, src, doc->uri, &vo, out);
    cJSON_Delete(params);
    cJSON_Delete(json);
    dsf_jsrc_free(src);
}

void dsf_lsp_findings(dsf_lsp *s, const dsf_lsp_doc *doc, dsf_diags *out)
{
    check(s, doc, out);
    dsf_diags_sort(out);
}

cJSON *dsf_lsp_diagnostics(const dsf_diags *d, const char *text, size_t len)
{
    lines ln;
    lines_index(&ln, text, len);
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < d->len; i++)
        cJSON_AddItemToArray(arr, diagnostic(&d->items[i], text, len, &ln));
    free(ln.start);
    return arr;
}

void dsf_lsp_publish(dsf_lsp *s, const dsf_lsp_doc *doc)
{
    dsf_diags d = DSF_DIAGS_INIT;
    dsf_lsp_findings(s, doc, &d);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", doc->uri);
    cJSON_AddNumberToObject(p, "version", (double)doc->version);
    cJSON_AddItemToObject(p, "diagnostics",
                          dsf_lsp_diagnostics(&d, doc->text, doc->len));
    dsf_diags_free(&d);
    dsf_lsp_notify(s, "textDocument/publishDiagnostics", p);
}
