/* server.c -- see lsp.h: the message loop, the lifecycle and the
** text-document notifications; hover, completion and diagnostics are
** in their own files. */
#include "lsp/lsp.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "lsp/rpc.h"
#include "lsp/session.h"
#include "plugin/targets.h"
#include "plugin/commands.h"

/* A Position {line, character}, as longs. */
static bool position_of(const cJSON *p, long *line, long *ch)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(p, "line");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(p, "character");
    if (!cJSON_IsNumber(l) || !cJSON_IsNumber(c))
        return false;
    *line = (long)l->valuedouble;
    *ch = (long)c->valuedouble;
    return true;
}

/* params.textDocument.uri, or NULL. */
static const char *uri_of(const cJSON *params)
{
    const cJSON *td = cJSON_GetObjectItemCaseSensitive(params,
                                                       "textDocument");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(td, "uri");
    return cJSON_IsString(u) ? u->valuestring : NULL;
}

static cJSON *capabilities(void)
{
    cJSON *r = cJSON_CreateObject();
    cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
    cJSON *sync = cJSON_AddObjectToObject(caps, "textDocumentSync");
    cJSON_AddBoolToObject(sync, "openClose", 1);
    cJSON_AddNumberToObject(sync, "change", 2); /* incremental */
    cJSON *save = cJSON_AddObjectToObject(sync, "save");
    cJSON_AddBoolToObject(save, "includeText", 0);
    cJSON_AddBoolToObject(caps, "hoverProvider", 1);
    cJSON *cp = cJSON_AddObjectToObject(caps, "completionProvider");
    cJSON *tc = cJSON_AddArrayToObject(cp, "triggerCharacters");
    cJSON_AddItemToArray(tc, cJSON_CreateString("\""));
    cJSON_AddBoolToObject(caps, "inlayHintProvider", 1);
    cJSON_AddBoolToObject(caps, "definitionProvider", 1);
    cJSON *ca = cJSON_AddObjectToObject(caps, "codeActionProvider");
    cJSON *kinds = cJSON_AddArrayToObject(ca, "codeActionKinds");
    cJSON_AddItemToArray(kinds, cJSON_CreateString("quickfix"));
    cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
    cJSON_AddStringToObject(info, "name", "dsforge");
    return r;
}

static void initialize(dsf_lsp *s, const cJSON *id, const cJSON *params)
{
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(params, "locale");
    if (cJSON_IsString(loc) && !strncmp(loc->valuestring, "zh", 2))
        strcpy(s->lang, "zh");
    dsf_lsp_settings(s, cJSON_GetObjectItemCaseSensitive(
                            params, "initializationOptions"));
    s->initialized = true;
    dsf_lsp_reply(s, id, capabilities());
}

static void did_open(dsf_lsp *s, const cJSON *params)
{
    const cJSON *td = cJSON_GetObjectItemCaseSensitive(params,
                                                       "textDocument");
    const cJSON *uri = cJSON_GetObjectItemCaseSensitive(td, "uri");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(td, "text");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(td, "version");
    if (!cJSON_IsString(uri) || !cJSON_IsString(text)) {
        dsf_lsp_log("didOpen without a uri and a text: ignored");
        return;
    }
    size_t n = strlen(text->valuestring);
    if (n > DSF_LSP_MAX_DOC)
        dsf_lsp_log("%s: more than %u bytes: held empty", uri->valuestring,
                    DSF_LSP_MAX_DOC);
    dsf_lsp_doc *doc = dsf_lsp_docs_open(
        &s->docs, uri->valuestring, text->valuestring, n,
        cJSON_IsNumber(ver) ? (long)ver->valuedouble : 0);
    if (dsf_lsp_is_profile(doc->uri))
        dsf_lsp_publish_profile(s, doc);
    else
        dsf_lsp_publish(s, doc);
}

/* A profile's diagnostics are gen's of the saved file. */
static void did_save(dsf_lsp *s, const cJSON *params)
{
    const char *uri = uri_of(params);
    dsf_lsp_doc *doc = uri ? dsf_lsp_docs_find(&s->docs, uri) : NULL;
    if (doc && dsf_lsp_is_profile(uri))
        dsf_lsp_publish_profile(s, doc);
}

/* One entry of didChange's contentChanges: 0, or -1 when it cannot be
** applied (the document is then stale until the next full text). */
static int apply_change(dsf_lsp_doc *doc, const cJSON *ch)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(ch, "text");
    if (!cJSON_IsString(text))
        return -1;
    size_t n = strlen(text->valuestring);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(ch, "range");
    if (!r)
        return dsf_lsp_doc_set(doc, text->valuestring, n);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, "start");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "end");
    long l0, c0, l1, c1;
    if (!position_of(a, &l0, &c0) || !position_of(b, &l1, &c1))
        return -1;
    return dsf_lsp_doc_edit(doc, l0, c0, l1, c1, text->valuestring, n);
}

static void did_change(dsf_lsp *s, const cJSON *params)
{
    const char *uri = uri_of(params);
    dsf_lsp_doc *doc = uri ? dsf_lsp_docs_find(&s->docs, uri) : NULL;
    if (!doc) {
        dsf_lsp_log("didChange of a document not open: ignored");
        return;
    }
    const cJSON *td = cJSON_GetObjectItemCaseSensitive(params,
                                                       "textDocument");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(td, "version");
    if (cJSON_IsNumber(ver))
        doc->version = (long)ver->valuedouble;
    const cJSON *ch;
    cJSON_ArrayForEach(ch, cJSON_GetObjectItemCaseSensitive(params,
                                                            "contentChanges"))
    {
        if (apply_change(doc, ch))
            dsf_lsp_log("%s: a change that cannot be applied (bad range, "
                        "or over %u bytes): ignored", uri, DSF_LSP_MAX_DOC);
    }
    if (!dsf_lsp_is_profile(uri)) /* (a profile: when it is saved) */
        dsf_lsp_publish(s, doc);
}

static void did_close(dsf_lsp *s, const cJSON *params)
{
    const char *uri = uri_of(params);
    if (!uri)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", uri);
    cJSON_AddItemToObject(p, "diagnostics", cJSON_CreateArray());
    dsf_lsp_notify(s, "textDocument/publishDiagnostics", p);
    dsf_lsp_docs_close(&s->docs, uri);
}

static void did_change_configuration(dsf_lsp *s, const cJSON *params)
{
    dsf_lsp_settings(s, cJSON_GetObjectItemCaseSensitive(params,
                                                         "settings"));
    for (size_t i = 0; i < s->docs.len; i++) {
        if (dsf_lsp_is_profile(s->docs.items[i].uri))
            dsf_lsp_publish_profile(s, &s->docs.items[i]);
        else
            dsf_lsp_publish(s, &s->docs.items[i]);
    }
}

/* hover, completion, definition: the document and position of params. */
static void at_position(dsf_lsp *s, const cJSON *id, const cJSON *params,
                        cJSON *(*fn)(dsf_lsp *, const dsf_lsp_doc *, long,
                                     long))
{
    const char *uri = uri_of(params);
    dsf_lsp_doc *doc = uri ? dsf_lsp_docs_find(&s->docs, uri) : NULL;
    long line, ch;
    if (!doc || !position_of(cJSON_GetObjectItemCaseSensitive(params,
                                                              "position"),
                             &line, &ch)) {
        dsf_lsp_error(s, id, DSF_RPC_INVALID_PARAMS,
                      doc ? "no position" : "the document is not open");
        return;
    }
    dsf_lsp_reply(s, id, fn(s, doc, line, ch));
}

/* A request on a whole document (params.textDocument): fn's result. */
static void in_document(dsf_lsp *s, const cJSON *id, const cJSON *params,
                        cJSON *(*fn)(dsf_lsp *, const dsf_lsp_doc *,
                                     const cJSON *))
{
    const char *uri = uri_of(params);
    dsf_lsp_doc *doc = uri ? dsf_lsp_docs_find(&s->docs, uri) : NULL;
    if (!doc) {
        dsf_lsp_error(s, id, DSF_RPC_INVALID_PARAMS,
                      "the document is not open");
        return;
    }
    dsf_lsp_reply(s, id, fn(s, doc, params));
}

/* A notification (id NULL): lifecycle and documents; others ignored. */
static void notification(dsf_lsp *s, const char *m, const cJSON *params)
{
    if (!strcmp(m, "exit"))
        s->exit = true;
    else if (!s->initialized)
        return; /* dropped before initialize, as the protocol says */
    else if (!strcmp(m, "textDocument/didOpen"))
        did_open(s, params);
    else if (!strcmp(m, "textDocument/didChange"))
        did_change(s, params);
    else if (!strcmp(m, "textDocument/didSave"))
        did_save(s, params);
    else if (!strcmp(m, "textDocument/didClose"))
        did_close(s, params);
    else if (!strcmp(m, "workspace/didChangeConfiguration"))
        did_change_configuration(s, params);
}

static void request(dsf_lsp *s, const char *m, const cJSON *id,
                    const cJSON *params)
{
    if (!strcmp(m, "initialize")) {
        if (s->initialized)
            dsf_lsp_error(s, id, DSF_RPC_INVALID_REQUEST,
                          "initialize was already sent");
        else
            initialize(s, id, params);
    } else if (!s->initialized) {
        dsf_lsp_error(s, id, DSF_RPC_NOT_INITIALIZED,
                      "the server is not initialized yet");
    } else if (s->shutdown) {
        dsf_lsp_error(s, id, DSF_RPC_INVALID_REQUEST,
                      "the server is shut down: only exit is accepted");
    } else if (!strcmp(m, "shutdown")) {
        s->shutdown = true;
        dsf_lsp_reply(s, id, NULL);
    } else if (!strcmp(m, "textDocument/hover")) {
        at_position(s, id, params, dsf_lsp_hover);
    } else if (!strcmp(m, "textDocument/completion")) {
        at_position(s, id, params, dsf_lsp_complete);
    } else if (!strcmp(m, "textDocument/definition")) {
        at_position(s, id, params, dsf_lsp_definition);
    } else if (!strcmp(m, "textDocument/inlayHint")) {
        in_document(s, id, params, dsf_lsp_inlay_hints);
    } else if (!strcmp(m, "textDocument/codeAction")) {
        in_document(s, id, params, dsf_lsp_code_actions);
    } else {
        char *msg = dsf_xasprintf("unknown method '%s'", m);
        dsf_lsp_error(s, id, DSF_RPC_METHOD_NOT_FOUND, msg);
        free(msg);
    }
}

/* One message body: a request, a notification, or a response (ignored). */
static void handle(dsf_lsp *s, const char *body, size_t len)
{
    cJSON *msg = cJSON_ParseWithLength(body, len);
    if (!msg) {
        dsf_lsp_error(s, NULL, DSF_RPC_PARSE_ERROR,
                      "the message is not JSON");
        return;
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    bool id_ok = cJSON_IsString(id) || cJSON_IsNumber(id);
    if (!cJSON_IsObject(msg) || (id && !id_ok) ||
        (m && !cJSON_IsString(m))) {
        dsf_lsp_error(s, id_ok ? id : NULL, DSF_RPC_INVALID_REQUEST,
                      "not a JSON-RPC 2.0 request or notification");
    } else if (!m) {
        /* a response to a request of ours (none are sent): ignored */
    } else if (id) {
        request(s, m->valuestring, id, params);
    } else {
        notification(s, m->valuestring, params);
    }
    cJSON_Delete(msg);
}

/* The commands the server runs for hover and completion, when a plugin
** declares them. */
static void find_commands(dsf_lsp *s)
{
    dsf_diags d = DSF_DIAGS_INIT;
    if (dsf_plugins_read_commands(s->plugins, &d))
        dsf_lsp_log("the plugins' commands cannot be read: %s",
                    d.len ? d.items[0].message : "?");
    dsf_diags_free(&d);
    size_t n;
    const dsf_plugin_command *c = dsf_plugins_commands(s->plugins, &n);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(c[i].name, "explain"))
            s->explain = &c[i];
        else if (!strcmp(c[i].name, "schema"))
            s->schema = &c[i];
    }
}

int dsf_lsp_serve(dsf_plugins *plugins, const cJSON *values,
                  const dsf_lsp_env *env, int in_fd, int out_fd)
{
    signal(SIGPIPE, SIG_IGN); /* a closed client is a write error */
    dsf_lsp s;
    memset(&s, 0, sizeof s);
    s.plugins = plugins;
    s.env = env;
    s.out_fd = out_fd;
    const char *def = dsf_plugins_default_target(plugins);
    snprintf(s.target, sizeof s.target, "%s", def ? def : "");
    strcpy(s.lang, "en");
    s.world = 1;
    s.values = values ? cJSON_Duplicate(values, 1) : cJSON_CreateObject();
    find_commands(&s);
    dsf_rpc_in in;
    dsf_rpc_in_init(&in, in_fd);
    while (!s.exit && !s.gone) {
        char *body;
        size_t len;
        const char *why = NULL;
        int st = dsf_rpc_read(&in, &body, &len, &why);
        if (st == DSF_RPC_EOF) {
            dsf_lsp_log("the input ended%s", s.shutdown ? "" :
                        " before shutdown: the client is gone");
            break;
        }
        if (st == DSF_RPC_BAD_HEADER) {
            dsf_lsp_log("a malformed message header (%s): skipped", why);
        } else if (st == DSF_RPC_TOO_BIG) {
            dsf_lsp_log("a message over %u bytes: skipped", DSF_RPC_MAX_BODY);
            dsf_lsp_error(&s, NULL, DSF_RPC_INVALID_REQUEST,
                          "the message is over the size limit (64 MiB)");
        } else {
            handle(&s, body, len);
            free(body);
        }
    }
    dsf_rpc_in_free(&in);
    dsf_lsp_docs_free(&s.docs);
    cJSON_Delete(s.schema_doc);
    cJSON_Delete(s.params);
    free(s.schema_at);
    cJSON_Delete(s.values);
    return s.shutdown ? 0 : 1;
}
