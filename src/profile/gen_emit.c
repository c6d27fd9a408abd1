/* gen_emit.c -- gen's emitters (see gen_run.h): which ones run, running
** them on each finished variant, and the names of their files. Writing
** is output.c's, in the same transaction as the JSON. */
#include "profile/gen_run.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "json/jsonout.h"
#include "plugin/targets.h"

/* The index of the emitter called name, or -1. */
static long find_emitter(const dsf_emitter *em, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(em[i].name, name))
            return (long)i;
    return -1;
}

static int unknown_emitter(const dsf_emitter *em, size_t n, const char *name,
                           int code, const char *file, dsf_diags *d)
{
    const char **names = dsf_xcalloc(n + 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = em[i].name;
    const char *close = dsf_closest(name, names, n);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                               "unknown emitter '%s'", name);
    if (close)
        dsf_diag_set_hint(g, "did you mean '%s'?", close);
    else {
        dsf_buf b = DSF_BUF_INIT;
        for (size_t i = 0; i < n; i++)
            dsf_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
        dsf_diag_set_hint(g, n ? "the plugins declare: %s"
                               : "no plugin declares an emitter%s",
                          b.data ? b.data : "");
        dsf_buf_free(&b);
    }
    free(names);
    return code;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

int dsf_gen_select_emitters(gen_run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    size_t n;
    const dsf_emitter *em = dsf_plugins_emitters(ru->plugins, &n);
    const dsf_profile *p = ru->profile;
    bool none = false;
    for (size_t i = 0; i < r->nemit; i++)
        none |= !strcmp(r->emit[i], "none");
    if (none && r->nemit > 1)
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "--emit none cannot be combined with "
                              "emitter names");
    if (r->emit_given && !none && (r->to_stdout || r->why))
        return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                              "--emit writes files next to the variants' "
                              "JSON: use it with -o DIR (or a dry run), "
                              "not with %s",
                              r->why ? "--why" : "--stdout");
    /* The names: --emit's, else the profile's (not for --stdout and
    ** --why, which write no files, nor for dsf_gen_eval's callers,
    ** which write none either: diff, report). */
    if (ru->keep)
        return 0;
    size_t count = 0;
    const char **names = NULL;
    const char *file = NULL;
    int code = DSF_EUSAGE;
    if (r->emit_given) {
        if (!none) {
            names = dsf_xcalloc(r->nemit + 1, sizeof *names);
            for (size_t i = 0; i < r->nemit; i++)
                names[count++] = r->emit[i];
        }
    } else if (p->emit && !r->to_stdout && !r->why) {
        names = dsf_xcalloc((size_t)cJSON_GetArraySize(p->emit) + 1,
                            sizeof *names);
        for (const cJSON *e = p->emit->child; e; e = e->next)
            if (cJSON_IsString(e))
                names[count++] = e->valuestring;
        file = dsf_profile_src_where(&p->chain[p->emit_from]);
        code = DSF_EINPUT;
    }
    int rc = 0;
    ru->emit_sel = dsf_xcalloc(count + 1, sizeof *ru->emit_sel);
    for (size_t i = 0; i < count && !rc; i++) {
        long k = find_emitter(em, n, names[i]);
        if (k < 0) {
            rc = unknown_emitter(em, n, names[i], code, file, d);
            break;
        }
        if (!dsf_plugins_serves_name(ru->plugins, em[k].plugin)) {
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                       "emitter '%s' (plugin %s) does not "
                                       "serve target '%s'", names[i],
                                       em[k].plugin, ru->target);
            dsf_diag_set_hint(g, "its plugin neither owns nor adds to "
                                 "the target (contrib/docs/plugins.md, "
                                 "Targets)");
            rc = code;
            break;
        }
        bool dup = false;
        for (size_t j = 0; j < ru->nemit_sel; j++)
            dup |= ru->emit_sel[j] == (size_t)k;
        if (!dup)
            ru->emit_sel[ru->nemit_sel++] = (size_t)k;
    }
    free(names);
    /* Declaration order: one v and ctx.cache per plugin, and the same
    ** files in the same order whatever order --emit names them in. */
    if (ru->nemit_sel)
        qsort(ru->emit_sel, ru->nemit_sel, sizeof *ru->emit_sel, cmp_size);
    for (size_t i = 0; i < ru->nemit_sel; i++)
        ru->emit_rows |= em[ru->emit_sel[i]].per_run &&
                         em[ru->emit_sel[i]].row_ref != LUA_NOREF;
    return rc;
}

int dsf_gen_emit_variant(gen_run *ru, gen_variant *v, dsf_diags *d)
{
    if (!ru->nemit_sel)
        return 0;
    const dsf_profile *p = ru->profile;
    const char *pname = p->chain[p->nchain - 1].name;
    char *file = dsf_xasprintf("%s-%s.json", pname, v->name);
    /* The JSON's sha256: made with its bytes (-o, --report), else here
    ** (a dry run), from the same bytes gen would write. */
    dsf_buf dry = DSF_BUF_INIT;
    if (!v->bytes) {
        dsf_json_write(&dry, v->doc, true);
        if (!v->sha256[0])
            dsf_sha256_hex(v->sha256, dry.data ? dry.data : "", dry.len);
    }
    const char *text = v->bytes ? v->bytes : dsf_buf_str(&dry);
    dsf_emit_view view = {pname,          v->name,
                          v->tier ? v->tier->name : "",
                          file,           ru->r->outdir,
                          v->doc,         v->params,
                          v->extra,       v->sha256,
                          text,           strlen(text),
                          ru->target,
                          ru->r->train_cmd,
                          ru->r->emit_options,
                          /* the manifest lists them: -o, --report */
                          ru->r->outdir || ru->r->report};
    if (ru->emit_rows && !v->rows)
        v->rows = dsf_xcalloc(ru->nemit_sel, sizeof *v->rows);
    /* Without -o the texts are not kept (only the names: the footer). */
    int rc = dsf_plugins_emit(ru->plugins, &view, ru->emit_sel,
                              ru->nemit_sel, &v->emitted, &v->nemitted,
                              v->rows, d);
    if (rc) {
        dsf_diag *g = dsf_diags_last(d);
        if (g) {
            char *m = dsf_xasprintf("variant %s: %s", v->name, g->message);
            free(g->message);
            g->message = m;
        }
    }
    free(file);
    dsf_buf_free(&dry);
    return rc;
}

/* Variant i of the run as run emitter sel[k] sees it (dsf_emit_run). */
static void run_variant(void *ctx, size_t i, size_t sel,
                        dsf_emit_run_variant *out)
{
    const gen_run *ru = ctx;
    const gen_variant *v = &ru->v[i];
    out->name = v->name;
    out->tier = v->tier ? v->tier->name : "";
    out->sha256 = v->sha256;
    out->row = NULL;
    for (size_t k = 0; v->rows && k < ru->nemit_sel; k++)
        if (ru->emit_sel[k] == sel)
            out->row = v->rows[k];
}

int dsf_gen_emit_run(gen_run *ru, dsf_diags *d)
{
    size_t n;
    const dsf_emitter *em = dsf_plugins_emitters(ru->plugins, &n);
    const dsf_profile *p = ru->profile;
    dsf_emit_run view = {p->chain[p->nchain - 1].name,
                         ru->r->outdir,
                         ru->target,
                         ru->r->train_cmd,
                         ru->r->emit_options,
                         ru->r->outdir || ru->r->report,
                         ru->nv,
                         run_variant,
                         ru};
    int rc = 0;
    for (size_t k = 0; k < ru->nemit_sel && !rc; k++)
        if (em[ru->emit_sel[k]].per_run)
            rc = dsf_plugins_emit_run(ru->plugins, &view, ru->emit_sel[k],
                                      &ru->run_emitted, &ru->nrun_emitted,
                                      d);
    /* The rows were for this: they go. */
    for (size_t i = 0; i < ru->nv; i++) {
        gen_variant *v = &ru->v[i];
        for (size_t k = 0; v->rows && k < ru->nemit_sel; k++)
            free(v->rows[k]);
        free(v->rows);
        v->rows = NULL;
    }
    return rc;
}

cJSON *dsf_gen_run_emitted_json(const gen_run *ru)
{
    if (!ru->nrun_emitted)
        return NULL;
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < ru->nrun_emitted; i++) {
        const dsf_emitted *e = &ru->run_emitted[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "emitter", e->by->name);
        cJSON_AddStringToObject(o, "file", e->file);
        cJSON_AddStringToObject(o, "sha256", e->sha256);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

typedef struct named {
    const char *file;
    const char *by;       /* emitter name, or NULL for a variant's JSON */
} named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->file, ((const named *)b)->file);
}

int dsf_gen_check_emitted_names(const gen_run *ru, dsf_diags *d)
{
    if (!ru->nemit_sel)
        return 0;
    const dsf_profile *p = ru->profile;
    const char *pname = p->chain[p->nchain - 1].name;
    size_t total = ru->nv + ru->nrun_emitted;
    for (size_t i = 0; i < ru->nv; i++)
        total += ru->v[i].nemitted;
    named *all = dsf_xcalloc(total + 1, sizeof *all);
    char **json = dsf_xcalloc(ru->nv + 1, sizeof *json);
    size_t k = 0;
    for (size_t i = 0; i < ru->nv; i++) {
        json[i] = dsf_xasprintf("%s-%s.json", pname, ru->v[i].name);
        all[k++] = (named){json[i], NULL};
        for (size_t e = 0; e < ru->v[i].nemitted; e++)
            all[k++] = (named){ru->v[i].emitted[e].file,
                               ru->v[i].emitted[e].by->name};
    }
    for (size_t i = 0; i < ru->nrun_emitted; i++)
        all[k++] = (named){ru->run_emitted[i].file,
                           ru->run_emitted[i].by->name};
    qsort(all, k, sizeof *all, cmp_named);
    int rc = 0;
    for (size_t i = 0; i < k && !rc; i++)
        if (!strcmp(all[i].file, "manifest.json"))
            rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                                "emitter %s would write manifest.json",
                                all[i].by ? all[i].by : "?");
    for (size_t i = 1; i < k && !rc; i++)
        if (!strcmp(all[i - 1].file, all[i].file))
            rc = dsf_diag_error(
                d, DSF_EUSAGE, NULL, 0, 0,
                "two files of this run are named '%s' (%s%s and %s%s): "
                "rename the variant or choose other emitters",
                all[i].file, all[i - 1].by ? "emitter " : "",
                all[i - 1].by ? all[i - 1].by : "a variant's JSON",
                all[i].by ? "emitter " : "",
                all[i].by ? all[i].by : "a variant's JSON");
    for (size_t i = 0; i < ru->nv; i++)
        free(json[i]);
    free(json);
    free(all);
    return rc;
}

void dsf_gen_emit_footer(const gen_run *ru, dsf_buf *b)
{
    if (!ru->nemit_sel)
        return;
    size_t files = ru->nrun_emitted;
    for (size_t i = 0; i < ru->nv; i++)
        files += ru->v[i].nemitted;
    size_t n;
    const dsf_emitter *em = dsf_plugins_emitters(ru->plugins, &n);
    dsf_buf_printf(b, "%zu file%s (", files, files == 1 ? "" : "s");
    for (size_t i = 0; i < ru->nemit_sel; i++)
        dsf_buf_printf(b, "%s%s", i ? ", " : "", em[ru->emit_sel[i]].name);
    dsf_buf_puts(b, ")");
}

void dsf_gen_free_emitted(gen_run *ru, gen_variant *v)
{
    for (size_t i = 0; i < v->nemitted; i++)
        dsf_emitted_free(&v->emitted[i]);
    free(v->emitted);
    v->emitted = NULL;
    v->nemitted = 0;
    for (size_t k = 0; v->rows && k < ru->nemit_sel; k++)
        free(v->rows[k]);
    free(v->rows);
    v->rows = NULL;
}
