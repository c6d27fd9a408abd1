/* check_cmd.c -- see check_cmd.h. */
#include "cli/check_cmd.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "doc/jsloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "json/jsonout.h"
#include "plugin/cmdcheck.h"
#include "profile/manifest.h"

/* Appends w as one sh word: as is when made only of characters no shell
** treats specially, else in single quotes (' as '\''). */
static void sh_word(dsf_buf *b, const char *w)
{
    bool plain = *w != '\0';
    for (const char *p = w; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                (*p >= '0' && *p <= '9') || strchr("_@%+=:,./-", *p);
    if (plain) {
        dsf_buf_puts(b, w);
        return;
    }
    dsf_buf_putc(b, '\'');
    for (const char *p = w; *p; p++)
        if (*p == '\'')
            dsf_buf_puts(b, "'\\''");
        else
            dsf_buf_putc(b, *p);
    dsf_buf_putc(b, '\'');
}

void dsf_check_cmd_init(dsf_check_cmd *c, char *const *words, size_t n)
{
    memset(c, 0, sizeof *c);
    c->words = words;
    c->nwords = n;
    c->cols = dsf_xcalloc(n + 1, sizeof *c->cols);
    dsf_buf b = DSF_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (i)
            dsf_buf_putc(&b, ' ');
        c->cols[i] = b.len + 1;
        sh_word(&b, words[i]);
    }
    c->line = dsf_buf_take(&b);
}

void dsf_check_cmd_free(dsf_check_cmd *c)
{
    free(c->line);
    free(c->cols);
    cJSON_Delete(c->params);
    free(c->variant);
    free(c->target);
    free(c->cmd_target);
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void dsf_check_cmd_manifest(dsf_check_cmd *c, const char *file,
                            dsf_diags *notes)
{
    /* (read a second time for its hash: standard input, a FIFO or a pipe
    ** was read once already, and a second read would wait for a writer) */
    if (!strcmp(file, "-") || !dsf_is_file(file))
        return;
    char *dir = dsf_path_dirname(file);
    char *mpath = dsf_path_join(dir, "manifest.json");
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char *text = NULL, *mine = NULL;
    size_t len, mlen;
    dsf_diags ignore = DSF_DIAGS_INIT;
    cJSON *m = NULL;
    if (dsf_is_file(mpath) &&
        !dsf_read_file(&text, &len, mpath, 64u << 20, &ignore) &&
        !dsf_manifest_parse(&m, mpath, text, len, &ignore) &&
        !dsf_read_file(&mine, &mlen, file, 64u << 20, &ignore)) {
        char hex[65];
        dsf_sha256_hex(hex, mine, mlen);
        const cJSON *v;
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(m, "variants"))
        {
            const char *f = jstr(v, "file"), *sum = jstr(v, "sha256");
            const cJSON *params = cJSON_GetObjectItemCaseSensitive(v,
                                                                   "params");
            if (!f || strcmp(f, base) || !sum || !cJSON_IsObject(params))
                continue;
            if (strcmp(sum, hex)) {
                dsf_diag *g = dsf_diag_add(notes, DSF_NOTE, file, 0, 0,
                                           "differs from the file %s lists "
                                           "(sha256): the params gen used "
                                           "for it are not taken as the "
                                           "config's intent", mpath);
                dsf_diag_set_hint(g, "run gen again, or check a copy "
                                     "outside the output directory");
                break;
            }
            const char *prof = jstr(v, "profile");
            const char *name = jstr(v, "name");
            const cJSON *pe = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(m, "profiles"),
                prof ? prof : "");
            const char *target = jstr(pe, "target");
            if (!target)
                target = jstr(m, "target");
            c->params = cJSON_Duplicate(params, 1);
            c->variant = dsf_xasprintf("%s%s%s", prof ? prof : "",
                                       prof && name ? "-" : "",
                                       name ? name : "");
            c->target = target ? dsf_xstrdup(target) : NULL;
            break;
        }
    }
    cJSON_Delete(m);
    dsf_diags_free(&ignore);
    free(text);
    free(mine);
    free(mpath);
    free(dir);
}

/* "argv[4] --flag, argv[6] x" for the words of f. */
static void arg_names(dsf_buf *b, const dsf_check_cmd *c,
                      const dsf_cmd_finding *f)
{
    for (size_t i = 0; i < f->nargs; i++) {
        dsf_buf_printf(b, "%sargv[%zu] ", i ? ", " : "", f->args[i]);
        sh_word(b, c->words[f->args[i]]);
    }
}

static cJSON *finding_json(const dsf_check_cmd *c, const dsf_cmd_finding *f,
                           const char *file, const dsf_jpos *at)
{
    cJSON *o = cJSON_CreateObject();
    if (f->nargs) {
        cJSON_AddStringToObject(o, "file", "<command>");
        cJSON_AddNumberToObject(o, "line", 1);
        cJSON_AddNumberToObject(o, "col", (double)c->cols[f->args[0]]);
    } else {
        cJSON_AddStringToObject(o, "file", at ? file : "<command>");
        cJSON_AddNumberToObject(o, "line", at ? at->line : 0);
        cJSON_AddNumberToObject(o, "col", at ? at->col : 0);
    }
    cJSON_AddStringToObject(o, "severity", dsf_severity_name(f->severity));
    cJSON_AddStringToObject(o, "rule", f->rule);
    if (f->path)
        cJSON_AddStringToObject(o, "path", f->path);
    cJSON_AddStringToObject(o, "message", f->message);
    if (f->fix)
        cJSON_AddStringToObject(o, "fix", f->fix);
    cJSON *argv = cJSON_AddArrayToObject(o, "argv");
    cJSON *cols = cJSON_AddArrayToObject(o, "columns");
    for (size_t i = 0; i < f->nargs; i++) {
        cJSON_AddItemToArray(argv, cJSON_CreateNumber((double)f->args[i]));
        cJSON_AddItemToArray(cols,
                             cJSON_CreateNumber((double)c->cols[f->args[i]]));
    }
    if (at) {
        cJSON *cf = cJSON_AddObjectToObject(o, "config");
        cJSON_AddStringToObject(cf, "file", file);
        cJSON_AddNumberToObject(cf, "line", at->line);
        cJSON_AddNumberToObject(cf, "col", at->col);
    }
    return o;
}

int dsf_check_cmd_run(dsf_check_cmd *c, dsf_plugins *p, cJSON *doc,
                      const dsf_jsrc *src, const char *file,
                      const dsf_validate_opts *vo, bool target_given,
                      dsf_diags *out, cJSON *json, cJSON *learned,
                      dsf_diags *d)
{
    if (!dsf_plugins_cmdcheck_count(p)) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "no loaded plugin checks commands "
                                   "(check_command), so the command would "
                                   "pass unread");
        dsf_diag_set_hint(g, "the built-in plugin 'launch' does; see "
                             "'dsforge plugins'");
        return DSF_EINPUT;
    }
    dsf_cmd_findings f = {NULL, 0};
    dsf_cmdcheck_in in = {vo, file, c->variant, c->words, c->nwords,
                          target_given};
    int rc = dsf_plugins_check_command(p, doc, &in, &f, learned,
                                       &c->cmd_target, d);
    for (size_t i = 0; !rc && i < f.len; i++) {
        const dsf_cmd_finding *x = &f.items[i];
        dsf_jpos pos;
        bool at = x->path != NULL;
        if (at)
            pos = dsf_jsloc_locate(doc, src, x->path);
        dsf_buf msg = DSF_BUF_INIT;
        dsf_diag *g;
        if (x->nargs) {
            arg_names(&msg, c, x);
            g = dsf_diag_add(out, x->severity, "<command>", 1,
                             (int)c->cols[x->args[0]], "%s: %s", msg.data,
                             x->message);
            if (strlen(c->line) < 2000)
                dsf_diag_set_excerpt(g, c->line, strlen(c->line));
        } else if (at) {
            g = dsf_diag_add(out, x->severity, file, pos.line, pos.col,
                             "%s: %s", x->path, x->message);
            dsf_jsloc_excerpt(g, src);
        } else {
            g = dsf_diag_add(out, x->severity, "<command>", 0, 0, "%s",
                             x->message);
        }
        dsf_diag_set_rule(g, x->rule);
        if (x->path)
            dsf_diag_set_path(g, x->path);
        if (x->fix)
            dsf_diag_set_hint(g, "%s", x->fix);
        if (x->nargs && at) {
            /* ... and the other place: the config key. */
            dsf_buf_free(&msg);
            arg_names(&msg, c, x);
            g = dsf_diag_add(out, DSF_NOTE, file, pos.line, pos.col,
                             "%s: set here; the command's %s disagrees "
                             "(%s, above)", x->path, msg.data, x->rule);
            dsf_diag_set_path(g, x->path);
            dsf_jsloc_excerpt(g, src);
        }
        dsf_buf_free(&msg);
        if (json)
            cJSON_AddItemToArray(json,
                                 finding_json(c, x, file, at ? &pos : NULL));
    }
    dsf_cmd_findings_free(&f);
    return rc;
}
