/* profdiag.c -- the diagnostics of a profile (.lua) the client opens or
** saves: what `dsforge gen PROFILE` says of the file on disk, found first
** in its own directory: its load errors (a syntax error, a bad
** declaration, a build that raises: at their line) and its variants'
** findings (the rules', at the line gen gives them: the build's). A
** message about another file (a parent profile) is an error at line 1
** naming that file. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "lsp/outdir.h"
#include "lsp/session.h"
#include "profile/gen.h"

bool dsf_lsp_is_profile(const char *uri)
{
    size_t n = strlen(uri);
    return n > 4 && !strcmp(uri + n - 4, ".lua");
}

/* What gen says of the profile at path (its directory first). */
static void gen_profile(dsf_lsp *s, const char *path, dsf_diags *out)
{
    char *dir = dsf_xstrdup(path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    char *stem = dsf_xstrdup(slash + 1);
    stem[strlen(stem) - 4] = '\0';
    dsf_dirs dirs = DSF_DIRS_INIT;
    dsf_dirs_add(&dirs, *dir ? dir : "/", "the open file's directory");
    for (size_t i = 0; i < s->env->profile_dirs->len; i++)
        dsf_dirs_add_dir(&dirs, &s->env->profile_dirs->items[i]);
    const char *none[] = {"none"};
    dsf_gen_request r;
    memset(&r, 0, sizeof r);
    r.profile = stem;
    r.target = s->target;
    r.values = s->values;
    r.emit = none;
    r.nemit = 1;
    r.emit_given = true;
    r.profile_dirs = &dirs;
    r.plugin_dirs = s->env->plugin_dirs;
    r.limits = s->env->limits;
    r.repo = s->env->repo;
    r.jobs = 1;
    dsf_gen_result *res = NULL;
    dsf_gen_eval(&res, &r, out);
    dsf_gen_result_free(res);
    dsf_dirs_free(&dirs);
    free(stem);
    free(dir);
}

void dsf_lsp_publish_profile(dsf_lsp *s, const dsf_lsp_doc *doc)
{
    dsf_diags d = DSF_DIAGS_INIT, mine = DSF_DIAGS_INIT;
    char *path = dsf_lsp_uri_path(doc->uri);
    char real[PATH_MAX], other[PATH_MAX];
    if (s->env && path && realpath(path, real))
        gen_profile(s, real, &d);
    for (size_t i = 0; i < d.len; i++) {
        const dsf_diag *g = &d.items[i];
        bool here = g->file && realpath(g->file, other) &&
                    !strcmp(other, real);
        if (!here && g->severity != DSF_ERROR)
            continue; /* another file's notes are that file's */
        dsf_diag *n;
        if (here)
            n = dsf_diag_add(&mine, g->severity, doc->uri, g->line, g->col,
                             "%s", g->message);
        else if (g->file && g->line > 0)
            n = dsf_diag_add(&mine, g->severity, doc->uri, 1, 1,
                             "%s:%d: %s", g->file, g->line, g->message);
        else
            n = dsf_diag_add(&mine, g->severity, doc->uri, 1, 1, "%s",
                             g->message);
        if (g->rule)
            dsf_diag_set_rule(n, g->rule);
        if (g->hint)
            dsf_diag_set_hint(n, "%s", g->hint);
    }
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", doc->uri);
    cJSON_AddNumberToObject(p, "version", (double)doc->version);
    cJSON_AddItemToObject(p, "diagnostics",
                          dsf_lsp_diagnostics(&mine, doc->text, doc->len));
    dsf_lsp_notify(s, "textDocument/publishDiagnostics", p);
    dsf_diags_free(&mine);
    dsf_diags_free(&d);
    free(path);
}
