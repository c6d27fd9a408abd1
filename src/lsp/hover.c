/* hover.c -- textDocument/hover: the `explain KEY` text (the command a
** plugin declares under that name) of the member key under the cursor,
** in the client's language, at the chosen release. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "lsp/jcursor.h"
#include "lsp/session.h"
#include "lsp/utf16.h"

/* The dotted path of the key under c, or NULL (not on a key, or under an
** array: explain takes key paths only). Caller frees. */
static char *key_path(const dsf_jcursor *c)
{
    if (c->at != DSF_JC_KEY || !c->key || !*c->key)
        return NULL;
    dsf_buf b = DSF_BUF_INIT;
    for (size_t i = 0; i < c->depth; i++) {
        if (!c->path[i]) {
            dsf_buf_free(&b);
            return NULL;
        }
        dsf_buf_puts(&b, c->path[i]);
        dsf_buf_putc(&b, '.');
    }
    dsf_buf_puts(&b, c->key);
    return dsf_buf_take(&b);
}

cJSON *dsf_lsp_hover(dsf_lsp *s, const dsf_lsp_doc *doc, long line,
                     long character)
{
    if (!s->explain)
        return NULL;
    size_t off = dsf_utf16_offset(doc->text, doc->len, line, character);
    dsf_jcursor c;
    dsf_jcursor_find(&c, doc->text, doc->len, off);
    char *path = key_path(&c);
    if (!path) {
        dsf_jcursor_free(&c);
        return NULL;
    }
    cJSON *opts = cJSON_CreateObject();
    cJSON_AddStringToObject(opts, "lang", s->lang);
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_CreateString(path));
    char *text = NULL;
    int status = 0;
    dsf_diags d = DSF_DIAGS_INIT;
    /* the key is the command line's word (the command asks whether it
    ** names a file, and may ask only of its own words) */
    char *words[] = {path};
    int rc = dsf_plugins_run_command(s->plugins, s->explain, opts, args,
                                     words, 1, s->values, &text, &status,
                                     &d);
    cJSON *result = NULL;
    if (rc && rc != DSF_ESCRIPT && d.len) {
        /* the command's own answer: not a key it knows, and why */
        free(text);
        const dsf_diag *g = &d.items[d.len - 1];
        text = g->hint ? dsf_xconcat(g->message, "\n", g->hint, NULL)
                       : dsf_xstrdup(g->message);
        rc = 0;
    }
    if (!rc && status == 0 && text && *text) {
        result = cJSON_CreateObject();
        cJSON *mc = cJSON_AddObjectToObject(result, "contents");
        cJSON_AddStringToObject(mc, "kind", "plaintext");
        cJSON_AddStringToObject(mc, "value", text);
        cJSON_AddItemToObject(result, "range",
                              dsf_lsp_range(doc->text, doc->len, c.tok_start,
                                            c.tok_end));
    }
    free(text);
    dsf_diags_free(&d);
    cJSON_Delete(opts);
    cJSON_Delete(args);
    free(path);
    dsf_jcursor_free(&c);
    return result;
}
