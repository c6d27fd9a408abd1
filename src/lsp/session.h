/*
** session.h -- the state of one language server session (server.c) and
** what its method handlers share: sending messages, the settings.
*/
#ifndef DSF_LSP_SESSION_H
#define DSF_LSP_SESSION_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "lsp/docs.h"
#include "lsp/lsp.h"
#include "plugin/options.h"
#include "plugin/commands.h"
#include "plugin/plugin.h"

/* JSON-RPC and LSP error codes. */
enum {
    DSF_RPC_PARSE_ERROR = -32700,
    DSF_RPC_INVALID_REQUEST = -32600,
    DSF_RPC_METHOD_NOT_FOUND = -32601,
    DSF_RPC_INVALID_PARAMS = -32602,
    DSF_RPC_NOT_INITIALIZED = -32002
};

typedef struct dsf_lsp {
    dsf_plugins *plugins;      /* borrowed */
    const dsf_lsp_env *env;    /* borrowed, or NULL */
    int out_fd;
    dsf_lsp_docs docs;
    cJSON *values;             /* the values of the plugins' ctx options
                                  of check (the environment's, then the
                                  settings'): ctx fields of the hooks */
    char target[16];           /* the target set (dsforge.target), else
                               ** the plugins' default */
    bool target_given;         /* set by dsforge.target: no recogniser */
    long world;                /* the world size the rules see */
    bool world_set;            /* ...given by the settings */
    cJSON *params;             /* the settings' params (inlay hints), or
                                  NULL */
    bool summaries_read;       /* dsf_plugins_read_summaries was called */
    int summaries_rc;          /* ...and returned this */
    char lang[4];              /* hover language: "en" or "zh" */
    bool initialized, shutdown, exit, gone;
    const dsf_plugin_command *explain, *schema; /* or NULL */
    cJSON *schema_doc;         /* the schema at schema_at, or NULL */
    char *schema_at;           /* the values it was made with (JSON) */
} dsf_lsp;

/* Sends msg (deleted here) to the client; marks the session gone when
** the client cannot be written to. */
void dsf_lsp_send(dsf_lsp *s, cJSON *msg);

/* Sends the result (deleted here; NULL sends null) of request id. */
void dsf_lsp_reply(dsf_lsp *s, const cJSON *id, cJSON *result);

/* Sends an error response to id (NULL: null). */
void dsf_lsp_error(dsf_lsp *s, const cJSON *id, int code,
                   const char *message);

/* Sends a notification (params deleted here). */
void dsf_lsp_notify(dsf_lsp *s, const char *method, cJSON *params);

/* Writes one line to standard error: "dsforge lsp: ...". */
void dsf_lsp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Applies the settings object {"dsforge": {"dsVersion", "target",
** "worldSize", "params"}} (or
** the inner object itself); a bad value is shown to the user and the
** previous one kept. */
void dsf_lsp_settings(dsf_lsp *s, const cJSON *settings);

/* Publishes doc's diagnostics (diagnose.c). */
void dsf_lsp_publish(dsf_lsp *s, const dsf_lsp_doc *doc);

/* Is uri a profile (a .lua file)? Its diagnostics are gen's of the
** file on disk, published when it is opened or saved (profdiag.c). */
bool dsf_lsp_is_profile(const char *uri);
void dsf_lsp_publish_profile(dsf_lsp *s, const dsf_lsp_doc *doc);

/* The target doc's config json is judged at: the one set (dsforge.target),
** else the one the plugins recognise it as (as check without --target),
** else the default; the plugins are set to serve it (diagnose.c). */
const char *dsf_lsp_doc_target(dsf_lsp *s, const cJSON *json, dsf_diags *d);

/* The plugin option of check that the setting key names (its name in
** camelCase: "fooBar" for --foo-bar), or NULL (session.c). */
const dsf_plugin_option *dsf_lsp_setting_option(const dsf_lsp *s,
                                                const char *key);

/* The param the world size (dsforge.worldSize) is given to the rules as:
** that of the plugins' param option of check the setting names, or NULL
** when none declares one (diagnose.c; borrowed). */
const char *dsf_lsp_world_param(const dsf_lsp *s);

/* What check says about doc, sorted as published (diagnose.c). */
void dsf_lsp_findings(dsf_lsp *s, const dsf_lsp_doc *doc, dsf_diags *out);

/* The LSP Diagnostic objects of d on text[0..len) (caller deletes). */
cJSON *dsf_lsp_diagnostics(const dsf_diags *d, const char *text, size_t len);

/* textDocument/definition (define.c): in a variant of a gen -o output,
** the profile line or -f file that set the value under the cursor, as
** gen --why finds it; NULL (null) elsewhere and for a value a command-line
** argument set. */
cJSON *dsf_lsp_definition(dsf_lsp *s, const dsf_lsp_doc *doc, long line,
                          long character);

/* textDocument/inlayHint (inlay.c): the global batch at the world size in
** use and the memory estimate per GPU, as the plugins' summary and report
** layout give them (caller deletes). */
cJSON *dsf_lsp_inlay_hints(dsf_lsp *s, const dsf_lsp_doc *doc,
                           const cJSON *params);

/* textDocument/codeAction (actions.c): the quick fixes of the findings
** whose range meets params.range (caller deletes). */
cJSON *dsf_lsp_code_actions(dsf_lsp *s, const dsf_lsp_doc *doc,
                            const cJSON *params);

/* textDocument/hover (hover.c) and textDocument/completion
** (complete.c) at (line, character) of doc: the result (caller
** deletes), or NULL for null. */
cJSON *dsf_lsp_hover(dsf_lsp *s, const dsf_lsp_doc *doc, long line,
                     long character);
cJSON *dsf_lsp_complete(dsf_lsp *s, const dsf_lsp_doc *doc, long line,
                        long character);

/* An LSP Range of the bytes [a, b) of doc's text (caller deletes). */
cJSON *dsf_lsp_range(const char *text, size_t len, size_t a, size_t b);

#endif
