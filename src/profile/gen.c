/* gen.c -- see gen.h. */
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "doc/doc.h"
#include "doc/merge.h"
#include "json/jsonc.h"
#include "json/jsonout.h"
#include "lua/dsflib.h"
#include "plugin/plugin.h"
#include "profile/profile.h"

#define MAX_VARIANTS 100000

typedef struct variant {
    char *name;
    const dsf_tier *tier;   /* NULL for a profile without tiers */
    cJSON *params;          /* every param's value */
    cJSON *cell;            /* matrix values of this variant, or NULL */
    cJSON *doc;             /* the final config */
    dsf_prov prov;
    char *bytes;            /* rendered JSON */
    char sha256[65];
    cJSON *extra;           /* plugin summary (memory, HF args), or NULL */
    struct {                /* the summary table's row */
        long long world, micro, gas, global, stage;
        const char *offload, *precision;
        double gpu_bytes, cpu_bytes;  /* < 0: unknown */
        int fits;                     /* 1, 0, or -1: unknown */
    } row;
} variant;

typedef struct override_file {
    const char *path;
    cJSON *doc;
    dsf_jsrc *src;
    char sha256[65];
    dsf_layer layer;
    char *label;
} override_file;

typedef struct run {
    const dsf_gen_request *r;
    dsf_profile *profile;
    dsf_plugins *plugins;
    dsf_srccache *sources;
    dsf_diags warnings;
    override_file *files;
    dsf_layer *chain_layers;
    char **chain_labels;
    dsf_layer tier_layer;
    char *tier_label;
    dsf_layer *edit_layers;
    char **edit_labels;
    variant *v;
    size_t nv;
} run;

/* ------------------------------------------------------------------ */
/* Variants. */

static void sanitize(dsf_buf *b, const char *s)
{
    for (; *s; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-';
        dsf_buf_putc(b, ok ? c : (c == '.' ? 'p' : '_'));
    }
}

static const dsf_param *need_param(const dsf_profile *p, const char *key,
                                   const char *argdesc, dsf_diags *d)
{
    const dsf_param *par = dsf_profile_param(p, key);
    if (par)
        return par;
    dsf_buf known = DSF_BUF_INIT;
    const char **names = dsf_xcalloc(p->nparams + 1, sizeof *names);
    for (size_t i = 0; i < p->nparams; i++) {
        dsf_buf_printf(&known, "%s%s", i ? ", " : "", p->params[i].name);
        names[i] = p->params[i].name;
    }
    const char *close = dsf_closest(key, names, p->nparams);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, argdesc, 0, 0,
                               "unknown param '%s' for profile %s", key,
                               p->chain[p->nchain - 1].name);
    if (close)
        dsf_diag_set_hint(g, "did you mean '%s'? known params: %s", close,
                          known.len ? known.data : "(none)");
    else
        dsf_diag_set_hint(g, "known params: %s",
                          known.len ? known.data : "(none)");
    free(names);
    dsf_buf_free(&known);
    return NULL;
}

static int make_variants(run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    int rc = 0;
    /* The selected tiers. */
    const dsf_tier **tiers = dsf_xcalloc(p->ntiers + 1, sizeof *tiers);
    size_t nt = 0;
    if (r->ntiers) {
        for (size_t i = 0; i < r->ntiers && !rc; i++) {
            const dsf_tier *t = dsf_profile_tier(p, r->tiers[i]);
            if (!t) {
                const char **names = dsf_xcalloc(p->ntiers + 1,
                                                 sizeof *names);
                dsf_buf known = DSF_BUF_INIT;
                for (size_t k = 0; k < p->ntiers; k++) {
                    names[k] = p->tiers[k].name;
                    dsf_buf_printf(&known, "%s%s", k ? ", " : "",
                                   p->tiers[k].name);
                }
                const char *close = dsf_closest(r->tiers[i], names,
                                                p->ntiers);
                dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                           "unknown tier '%s' for profile "
                                           "%s", r->tiers[i],
                                           p->chain[p->nchain - 1].name);
                dsf_diag_set_hint(g, "%s%s%stiers: %s",
                                  close ? "did you mean '" : "",
                                  close ? close : "", close ? "'? " : "",
                                  known.len ? known.data : "(none)");
                dsf_buf_free(&known);
                free(names);
                rc = DSF_EUSAGE;
                break;
            }
            bool dup = false;
            for (size_t k = 0; k < nt; k++)
                dup |= tiers[k] == t;
            if (!dup)
                tiers[nt++] = t;
        }
    } else {
        for (size_t i = 0; i < p->ntiers; i++)
            tiers[nt++] = &p->tiers[i];
    }
    if (!rc && !nt && p->ntiers == 0)
        tiers[nt++] = NULL; /* one variant: "default" */

    /* --param values. */
    cJSON *overrides = cJSON_CreateObject();
    for (size_t i = 0; i < r->nparams && !rc; i++) {
        char *desc = dsf_xasprintf("argument #%d", r->params[i].argno);
        const dsf_param *par = need_param(p, r->params[i].key, desc, d);
        char *err;
        cJSON *v;
        if (!par) {
            rc = DSF_EUSAGE;
        } else if (dsf_param_parse(&v, par, r->params[i].value, &err)) {
            dsf_diag_add(d, DSF_ERROR, desc, 0, 0, "--param %s=%s: %s",
                         r->params[i].key, r->params[i].value, err);
            free(err);
            rc = DSF_EUSAGE;
        } else {
            cJSON_DeleteItemFromObjectCaseSensitive(overrides, par->name);
            cJSON_AddItemToObject(overrides, par->name, v);
        }
        free(desc);
    }
    /* --matrix axes, parsed up front. */
    cJSON **axes = dsf_xcalloc(r->nmatrix + 1, sizeof *axes);
    size_t cells = 1;
    for (size_t a = 0; a < r->nmatrix && !rc; a++) {
        const dsf_matrix_axis *ax = &r->matrix[a];
        char *desc = dsf_xasprintf("argument #%d", ax->argno);
        const dsf_param *par = need_param(p, ax->key, desc, d);
        if (!par) {
            rc = DSF_EUSAGE;
        } else if (cJSON_GetObjectItemCaseSensitive(overrides, ax->key)) {
            rc = dsf_diag_error(d, DSF_EUSAGE, desc, 0, 0,
                                "'%s' is given both with --param and "
                                "--matrix", ax->key);
        }
        for (size_t b = 0; b < a && !rc; b++)
            if (!strcmp(r->matrix[b].key, ax->key))
                rc = dsf_diag_error(d, DSF_EUSAGE, desc, 0, 0,
                                    "--matrix names '%s' twice", ax->key);
        axes[a] = cJSON_CreateArray();
        for (size_t k = 0; k < ax->n && !rc; k++) {
            cJSON *v;
            char *err;
            if (dsf_param_parse(&v, par, ax->values[k], &err)) {
                dsf_diag_add(d, DSF_ERROR, desc, 0, 0, "--matrix %s: %s",
                             ax->key, err);
                free(err);
                rc = DSF_EUSAGE;
            } else {
                cJSON_AddItemToArray(axes[a], v);
            }
        }
        if (!rc && cells > MAX_VARIANTS / (ax->n ? ax->n : 1))
            rc = dsf_diag_error(d, DSF_EUSAGE, desc, 0, 0,
                                "the matrix has more than %d variants",
                                MAX_VARIANTS);
        cells *= ax->n ? ax->n : 1;
        free(desc);
    }
    if (!rc) {
        ru->v = dsf_xcalloc(nt * cells, sizeof *ru->v);
        for (size_t ti = 0; ti < nt && !rc; ti++) {
            for (size_t c = 0; c < cells && !rc; c++) {
                variant *v = &ru->v[ru->nv++];
                v->tier = tiers[ti];
                v->params = cJSON_CreateObject();
                for (size_t i = 0; i < p->nparams; i++)
                    cJSON_AddItemToObject(v->params, p->params[i].name,
                                          cJSON_Duplicate(p->params[i].def,
                                                          1));
                const cJSON *layers[2] = {v->tier ? v->tier->params : NULL,
                                          overrides};
                for (int l = 0; l < 2; l++)
                    for (const cJSON *m = layers[l] ? layers[l]->child : NULL;
                         m; m = m->next)
                        cJSON_ReplaceItemInObjectCaseSensitive(
                            v->params, m->string, cJSON_Duplicate(m, 1));
                dsf_buf name = DSF_BUF_INIT;
                dsf_buf_puts(&name, v->tier ? v->tier->name : "default");
                if (r->nmatrix)
                    v->cell = cJSON_CreateObject();
                size_t rest = c;
                size_t stride = cells;
                for (size_t a = 0; a < r->nmatrix; a++) {
                    stride /= r->matrix[a].n;
                    size_t k = rest / stride;
                    rest %= stride;
                    const cJSON *val = cJSON_GetArrayItem(axes[a], (int)k);
                    cJSON_ReplaceItemInObjectCaseSensitive(
                        v->params, r->matrix[a].key, cJSON_Duplicate(val, 1));
                    cJSON_AddItemToObject(v->cell, r->matrix[a].key,
                                          cJSON_Duplicate(val, 1));
                    dsf_buf_printf(&name, ".%s-", r->matrix[a].key);
                    sanitize(&name, r->matrix[a].values[k]);
                }
                v->name = dsf_buf_take(&name);
                for (size_t k = 0; k + 1 < ru->nv; k++)
                    if (!strcmp(ru->v[k].name, v->name))
                        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                                            "two variants are both named "
                                            "'%s' (repeated matrix values?)",
                                            v->name);
            }
        }
    }
    for (size_t a = 0; a < r->nmatrix; a++)
        cJSON_Delete(axes[a]);
    free(axes);
    cJSON_Delete(overrides);
    free(tiers);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Evaluating one variant. */

static long long int_at(const cJSON *doc, const char *a, const char *b)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(doc, a);
    if (b)
        n = cJSON_GetObjectItemCaseSensitive(n, b);
    return cJSON_IsNumber(n) ? (long long)n->valuedouble : -1;
}

static long long world_size(const variant *v)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(v->params, "world_size");
    return cJSON_IsNumber(w) && w->valuedouble >= 1 ? (long long)w->valuedouble
                                                    : 1;
}

static void finding_to_diag(run *ru, const variant *v, const dsf_finding *f,
                            dsf_diags *d)
{
    const dsf_prov_event *e = dsf_prov_origin(&v->prov, f->path);
    const char *file = NULL;
    int line = 0, col = 0;
    const dsf_profile_src *leaf = &ru->profile->chain[ru->profile->nchain - 1];
    if (e) {
        file = e->layer->file;
        line = e->line;
        col = e->col;
    } else {
        file = leaf->path;
        line = leaf->build_line;
    }
    dsf_diag *g = dsf_diag_add(d, f->severity, file, line, col,
                               "variant %s: %s%s%s", v->name, f->path,
                               f->path[0] ? ": " : "", f->message);
    dsf_diag_set_rule(g, f->rule);
    dsf_diag_set_path(g, f->path);
    if (f->fix)
        dsf_diag_set_hint(g, "%s", f->fix);
}

static const char *precision_of(const cJSON *doc);
static const char *offload_of(const cJSON *doc);

/* Keeps what the summary and the manifest need, then drops the document
** and its provenance: a 1,000-variant sweep holds only the rendered
** files, not 1,000 documents (unless --why needs the provenance). */
static void keep_summary(run *ru, variant *v)
{
    long long stage = int_at(v->doc, "zero_optimization", "stage");
    v->row.world = world_size(v);
    v->row.micro = int_at(v->doc, "train_micro_batch_size_per_gpu", NULL);
    v->row.gas = int_at(v->doc, "gradient_accumulation_steps", NULL);
    v->row.global = int_at(v->doc, "train_batch_size", NULL);
    v->row.stage = stage < 0 ? 0 : stage;
    v->row.offload = offload_of(v->doc);
    v->row.precision = precision_of(v->doc);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(v->extra, "gpu_bytes");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(v->extra, "cpu_bytes");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(v->extra, "fits");
    v->row.gpu_bytes = cJSON_IsNumber(g) ? g->valuedouble : -1;
    v->row.cpu_bytes = cJSON_IsNumber(c) ? c->valuedouble : -1;
    v->row.fits = cJSON_IsBool(f) ? cJSON_IsTrue(f) : -1;
    if (!ru->r->why) {
        cJSON_Delete(v->doc);
        v->doc = NULL;
        dsf_prov_free(&v->prov);
    }
    cJSON_Delete(v->cell);
    v->cell = NULL;
}

static int eval_variant(run *ru, variant *v, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    dsf_profile_ctx pc = {r->profile_dirs, r->plugin_dirs, ru->sources,
                          r->limits, &ru->warnings, r->repo};
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddStringToObject(extra, "profile",
                            ru->profile->chain[ru->profile->nchain - 1].name);
    cJSON_AddStringToObject(extra, "variant", v->name);
    cJSON_AddStringToObject(extra, "tier", v->tier ? v->tier->name : "");
    cJSON_AddStringToObject(extra, "target", r->target);
    cJSON *prepared = NULL;
    int rc = dsf_profile_build(&v->doc, &prepared, ru->profile, &pc,
                               v->params, extra, ru->chain_layers, &v->prov,
                               d);
    cJSON_Delete(extra);
    if (rc)
        return rc;
    cJSON_Delete(v->params);
    v->params = prepared; /* what build saw, for resolvers and manifest */
    if (v->tier && v->tier->config) {
        ru->tier_layer.label = ru->tier_label;
        dsf_merge(v->doc, v->tier->config, &ru->tier_layer, NULL, &v->prov);
    }
    for (size_t i = 0; i < r->nfiles; i++)
        dsf_merge(v->doc, ru->files[i].doc, &ru->files[i].layer,
                  ru->files[i].src, &v->prov);
    for (size_t i = 0; i < r->nedits; i++) {
        cJSON *touched;
        char *err;
        const dsf_edit *e = &r->edits[i];
        if (dsf_edit_apply(v->doc, e, &touched, &err) != 0) {
            dsf_diag_add(d, DSF_ERROR, ru->edit_layers[i].file, 0, 0,
                         "%s (variant %s)", err, v->name);
            free(err);
            return DSF_EUSAGE;
        }
        if (e->op == DSF_EDIT_DELETE)
            dsf_prov_add(&v->prov, e->path_text, DSF_PROV_DELETE,
                         &ru->edit_layers[i], 0, 0, NULL);
        else
            dsf_prov_record_tree(&v->prov, e->path_text, touched,
                                 DSF_PROV_OVERRIDE, &ru->edit_layers[i],
                                 NULL);
    }
    dsf_validate_opts vo = {world_size(v), r->target, "gen", v->params};
    rc = dsf_plugins_resolve(ru->plugins, &v->doc, &vo, &v->prov, d);
    if (rc)
        return rc;
    dsf_findings f = DSF_FINDINGS_INIT;
    rc = dsf_plugins_validate(ru->plugins, v->doc, &vo, &f, d);
    for (size_t i = 0; i < f.len; i++)
        finding_to_diag(ru, v, &f.items[i], d);
    dsf_findings_free(&f);
    if (rc)
        return rc;
    /* Per-variant summary from the plugins (memory fit, HF arguments),
    ** when a plugin provides deepspeed.summary. */
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_Duplicate(v->doc, 1));
    cJSON_AddItemToArray(args, cJSON_Duplicate(v->params, 1));
    dsf_diags ignore = DSF_DIAGS_INIT;
    if (dsf_plugins_call(ru->plugins, "deepspeed.summary", "variant", args,
                         &v->extra, &ignore) != 0)
        v->extra = NULL;
    dsf_diags_free(&ignore);
    cJSON_Delete(args);
    if (v->extra) {
        const cJSON *fits = cJSON_GetObjectItemCaseSensitive(v->extra,
                                                             "fits");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(v->extra,
                                                            "fit_message");
        if (cJSON_IsFalse(fits)) {
            const dsf_profile_src *leaf =
                &ru->profile->chain[ru->profile->nchain - 1];
            dsf_diag *g = dsf_diag_add(
                d, r->strict_fit ? DSF_ERROR : DSF_WARNING, leaf->path,
                leaf->build_line, 0, "variant %s: %s", v->name,
                cJSON_IsString(why) ? why->valuestring
                                    : "does not fit the declared GPU memory");
            dsf_diag_set_rule(g, "memory-fit");
            dsf_diag_set_hint(g, "lower the micro batch, raise the ZeRO "
                                 "stage or offload; --strict-fit makes "
                                 "this an error");
        }
    }
    dsf_buf b = DSF_BUF_INIT;
    dsf_json_write(&b, v->doc, true);
    v->bytes = dsf_buf_take(&b);
    dsf_sha256_hex(v->sha256, v->bytes, strlen(v->bytes));
    keep_summary(ru, v);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Output. */

static void print_why(run *ru, dsf_diags *d)
{
    dsf_jpath jp;
    char *err;
    if (dsf_jpath_parse(&jp, ru->r->why, &err) != 0) {
        dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "--why: %s", err);
        free(err);
        return;
    }
    dsf_buf canon = DSF_BUF_INIT;
    dsf_jpath_format(&canon, &jp, jp.len);
    for (size_t i = 0; i < ru->nv; i++) {
        variant *v = &ru->v[i];
        const cJSON *now = dsf_jpath_get(v->doc, &jp);
        char *nowtxt = now ? dsf_json_print(now, false) : NULL;
        printf("%s (variant %s) = %s\n", canon.data, v->name,
               nowtxt ? nowtxt : "(not set)");
        free(nowtxt);
        size_t shown = 0;
        for (size_t k = 0; k < v->prov.len; k++) {
            const dsf_prov_event *e = &v->prov.ev[k];
            if (!dsf_prov_related(e->path, canon.data))
                continue;
            const char *verb = e->action == DSF_PROV_SET ? "set"
                               : e->action == DSF_PROV_OVERRIDE
                                   ? "override"
                                   : "delete";
            printf("  %zu. %-8s %-9s %s", ++shown, e->layer->kind, verb,
                   e->layer->label);
            if (e->layer->file) {
                printf(" (%s", e->layer->file);
                if (e->line)
                    printf(":%d", e->line);
                if (e->col)
                    printf(":%d", e->col);
                printf(")");
            }
            if (strcmp(e->path, canon.data) != 0)
                printf(" at %s", e->path);
            if (e->value)
                printf(" = %s", e->value);
            printf("\n");
        }
        if (!shown)
            printf("  no layer sets this path\n");
    }
    dsf_buf_free(&canon);
    dsf_jpath_free(&jp);
}

static const char *precision_of(const cJSON *doc)
{
    const cJSON *bf = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "bf16"), "enabled");
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "fp16"), "enabled");
    if (cJSON_IsTrue(bf))
        return "bf16";
    if (cJSON_IsTrue(fp))
        return "fp16";
    if (cJSON_IsString(bf) || cJSON_IsString(fp))
        return "auto";
    return "fp32";
}

static const char *offload_of(const cJSON *doc)
{
    const cJSON *z = cJSON_GetObjectItemCaseSensitive(doc,
                                                      "zero_optimization");
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(z, "offload_optimizer"), "device");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(z, "offload_param"), "device");
    bool oo = cJSON_IsString(o) && strcmp(o->valuestring, "none");
    bool op = cJSON_IsString(p) && strcmp(p->valuestring, "none");
    if (oo && op)
        return "opt+param";
    if (oo)
        return "optimizer";
    if (op)
        return "param";
    return "none";
}

static void fmt_num(char *out, size_t n, long long v)
{
    if (v < 0)
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%lld", v);
}

static void fmt_gib(char *out, size_t n, double bytes)
{
    if (bytes >= 0)
        snprintf(out, n, "%.2f", bytes / 1073741824.0);
    else
        snprintf(out, n, "-");
}

static void print_summary(run *ru, FILE *out)
{
    fprintf(out, "%-28s %5s %5s %4s %6s %4s %-9s %-5s %8s %8s %s\n",
            "variant", "world", "micro", "gas", "global", "zero", "offload",
            "prec", "gpu_gib", "cpu_gib", "fits");
    for (size_t i = 0; i < ru->nv; i++) {
        variant *v = &ru->v[i];
        char w[24], mb[24], gas[24], tb[24], st[24], g[24], c[24];
        fmt_num(w, sizeof w, v->row.world);
        fmt_num(mb, sizeof mb, v->row.micro);
        fmt_num(gas, sizeof gas, v->row.gas);
        fmt_num(tb, sizeof tb, v->row.global);
        fmt_num(st, sizeof st, v->row.stage);
        fmt_gib(g, sizeof g, v->row.gpu_bytes);
        fmt_gib(c, sizeof c, v->row.cpu_bytes);
        fprintf(out, "%-28s %5s %5s %4s %6s %4s %-9s %-5s %8s %8s %s\n",
                v->name, w, mb, gas, tb, st, v->row.offload,
                v->row.precision, g, c,
                v->row.fits < 0 ? "-" : v->row.fits ? "yes" : "NO");
    }
}

static cJSON *manifest(run *ru)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "dsforge_version", dsf_version);
    cJSON_AddStringToObject(m, "profile", p->chain[p->nchain - 1].name);
    cJSON_AddStringToObject(m, "target", r->target);
    cJSON *chain = cJSON_AddArrayToObject(m, "chain");
    for (size_t i = 0; i < p->nchain; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", p->chain[i].name);
        cJSON_AddStringToObject(c, "origin", p->chain[i].origin);
        cJSON_AddStringToObject(c, "sha256", p->chain[i].sha256);
        cJSON_AddItemToArray(chain, c);
    }
    cJSON *plugs = cJSON_AddArrayToObject(m, "plugins");
    size_t np;
    const dsf_plugin_info *pi = dsf_plugins_list(ru->plugins, &np);
    for (size_t i = 0; i < np; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", pi[i].name);
        cJSON_AddStringToObject(c, "version", pi[i].version);
        cJSON_AddStringToObject(c, "origin", pi[i].origin);
        cJSON_AddStringToObject(c, "init_sha256", pi[i].sha256);
        cJSON_AddItemToArray(plugs, c);
    }
    cJSON *layers = cJSON_AddArrayToObject(m, "layers");
    for (size_t i = 0; i < p->nchain; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "kind", "profile");
        cJSON_AddStringToObject(c, "name", p->chain[i].name);
        cJSON_AddItemToArray(layers, c);
    }
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "kind", "tier");
    cJSON_AddItemToArray(layers, c);
    for (size_t i = 0; i < r->nfiles; i++) {
        c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "kind", "file");
        cJSON_AddStringToObject(c, "path", r->files[i]);
        cJSON_AddStringToObject(c, "sha256", ru->files[i].sha256);
        cJSON_AddItemToArray(layers, c);
    }
    for (size_t i = 0; i < r->nedits; i++) {
        c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "kind", "edit");
        cJSON_AddStringToObject(c, "arg", r->edits[i].arg);
        cJSON_AddItemToArray(layers, c);
    }
    cJSON *pa = cJSON_AddObjectToObject(m, "param_args");
    for (size_t i = 0; i < r->nparams; i++)
        cJSON_AddStringToObject(pa, r->params[i].key, r->params[i].value);
    cJSON *mx = cJSON_AddObjectToObject(m, "matrix");
    for (size_t a = 0; a < r->nmatrix; a++) {
        cJSON *vals = cJSON_AddArrayToObject(mx, r->matrix[a].key);
        for (size_t k = 0; k < r->matrix[a].n; k++)
            cJSON_AddItemToArray(vals,
                                 cJSON_CreateString(r->matrix[a].values[k]));
    }
    cJSON *vs = cJSON_AddArrayToObject(m, "variants");
    for (size_t i = 0; i < ru->nv; i++) {
        variant *v = &ru->v[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", v->name);
        char *file = dsf_xasprintf("%s-%s.json", p->chain[p->nchain - 1].name,
                                   v->name);
        cJSON_AddStringToObject(e, "file", file);
        free(file);
        cJSON_AddStringToObject(e, "sha256", v->sha256);
        cJSON_AddStringToObject(e, "tier", v->tier ? v->tier->name : "");
        /* The manifest is the last use of params and summary: move them. */
        cJSON_AddItemToObject(e, "params", v->params);
        v->params = NULL;
        if (v->extra) {
            cJSON_AddItemToObject(e, "summary", v->extra);
            v->extra = NULL;
        }
        cJSON_AddItemToArray(vs, e);
    }
    return m;
}

typedef struct pending {
    char *final_path;
    char *tmp_path;
} pending;

static int write_outputs(run *ru, dsf_diags *d)
{
    const char *dir = ru->r->outdir;
    const char *pname = ru->profile->chain[ru->profile->nchain - 1].name;
    bool created = false;
    int rc = dsf_mkdir_p(dir, &created, d);
    if (rc)
        return rc;
    pending *w = dsf_xcalloc(ru->nv + 1, sizeof *w);
    size_t nw = 0;
    for (size_t i = 0; i <= ru->nv && !rc; i++) {
        const char *data;
        char *manifest_text = NULL;
        if (i < ru->nv) {
            w[nw].final_path = dsf_xasprintf("%s/%s-%s.json", dir, pname,
                                             ru->v[i].name);
            data = ru->v[i].bytes;
        } else {
            w[nw].final_path = dsf_xasprintf("%s/manifest.json", dir);
            cJSON *m = manifest(ru);
            data = manifest_text = dsf_json_print(m, true);
            cJSON_Delete(m);
        }
        /* A file that already holds these bytes is left alone: same
        ** inputs, same bytes, and its mtime does not change. */
        size_t len = strlen(data);
        if (!dsf_file_equals(w[nw].final_path, data, len))
            rc = dsf_write_temp(&w[nw].tmp_path, w[nw].final_path, data,
                                len, false, d);
        free(manifest_text);
        nw++;
    }
    /* Everything is on disk: now the renames, which do not fail in
    ** practice on one file system. */
    for (size_t i = 0; i < nw && !rc; i++) {
        if (!w[i].tmp_path)
            continue; /* unchanged */
        if (rename(w[i].tmp_path, w[i].final_path) != 0)
            rc = dsf_diag_error(d, DSF_EINPUT, w[i].final_path, 0, 0,
                                "cannot rename the finished file into "
                                "place");
        else {
            free(w[i].tmp_path);
            w[i].tmp_path = NULL;
        }
    }
    for (size_t i = 0; i < nw; i++) {
        if (w[i].tmp_path)
            unlink(w[i].tmp_path);
        free(w[i].tmp_path);
        free(w[i].final_path);
    }
    free(w);
    if (rc && created)
        rmdir(dir);
    return rc;
}

/* ------------------------------------------------------------------ */

static int setup_layers(run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    ru->chain_layers = dsf_xcalloc(p->nchain, sizeof *ru->chain_layers);
    ru->chain_labels = dsf_xcalloc(p->nchain, sizeof *ru->chain_labels);
    for (size_t i = 0; i < p->nchain; i++) {
        ru->chain_labels[i] = dsf_xasprintf("profile %s", p->chain[i].name);
        ru->chain_layers[i].kind = "profile";
        ru->chain_layers[i].label = ru->chain_labels[i];
        ru->chain_layers[i].file = p->chain[i].path;
        ru->chain_layers[i].line = p->chain[i].build_line;
    }
    ru->tier_label = dsf_xstrdup("tier overlay");
    ru->tier_layer.kind = "tier";
    ru->tier_layer.label = ru->tier_label;
    ru->tier_layer.file = p->chain[p->nchain - 1].path;
    ru->files = dsf_xcalloc(r->nfiles + 1, sizeof *ru->files);
    for (size_t i = 0; i < r->nfiles; i++) {
        override_file *f = &ru->files[i];
        f->path = r->files[i];
        int rc = dsf_json_load_file(&f->doc, &f->src, f->path, d);
        if (rc)
            return rc;
        if (!cJSON_IsObject(f->doc))
            return dsf_diag_error(d, DSF_EINPUT, f->path, 1, 1,
                                  "an override file must hold a JSON "
                                  "object");
        size_t nd;
        const dsf_jdup *dups = dsf_jsrc_duplicates(f->src, &nd);
        if (nd) {
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, f->path,
                                       dups[0].again.line, dups[0].again.col,
                                       "duplicate key '%s' (first at line "
                                       "%d)", dups[0].path,
                                       dups[0].first.line);
            dsf_diag_set_rule(g, "duplicate-key");
            return DSF_EINPUT;
        }
        dsf_doc_mark_tombstones(f->doc);
        const char *text;
        size_t len;
        dsf_jsrc_line(f->src, 1, &text, &len);
        char *all;
        size_t alen;
        if (dsf_read_file(&all, &alen, f->path, DSF_JSON_MAX_FILE, d) == 0) {
            dsf_sha256_hex(f->sha256, all, alen);
            free(all);
        }
        f->label = dsf_xasprintf("-f %s", f->path);
        f->layer.kind = "file";
        f->layer.label = f->label;
        f->layer.file = f->path;
    }
    ru->edit_layers = dsf_xcalloc(r->nedits + 1, sizeof *ru->edit_layers);
    ru->edit_labels = dsf_xcalloc(r->nedits + 1, sizeof *ru->edit_labels);
    for (size_t i = 0; i < r->nedits; i++) {
        ru->edit_labels[i] = dsf_xasprintf("argument #%d",
                                           r->edits[i].argno);
        ru->edit_layers[i].kind = "edit";
        ru->edit_layers[i].label = r->edits[i].arg;
        ru->edit_layers[i].file = ru->edit_labels[i];
    }
    return 0;
}

static void run_free(run *ru)
{
    const dsf_profile *p = ru->profile;
    for (size_t i = 0; i < ru->nv; i++) {
        variant *v = &ru->v[i];
        free(v->name);
        cJSON_Delete(v->params);
        cJSON_Delete(v->cell);
        cJSON_Delete(v->doc);
        dsf_prov_free(&v->prov);
        free(v->bytes);
        cJSON_Delete(v->extra);
    }
    free(ru->v);
    if (ru->files)
        for (size_t i = 0; i < ru->r->nfiles; i++) {
            cJSON_Delete(ru->files[i].doc);
            dsf_jsrc_free(ru->files[i].src);
            free(ru->files[i].label);
        }
    free(ru->files);
    if (ru->chain_labels)
        for (size_t i = 0; i < p->nchain; i++)
            free(ru->chain_labels[i]);
    free(ru->chain_labels);
    free(ru->chain_layers);
    free(ru->tier_label);
    if (ru->edit_labels)
        for (size_t i = 0; i < ru->r->nedits; i++)
            free(ru->edit_labels[i]);
    free(ru->edit_labels);
    free(ru->edit_layers);
    dsf_plugins_free(ru->plugins);
    dsf_profile_free(ru->profile);
    dsf_srccache_free(ru->sources);
    dsf_diags_free(&ru->warnings);
}

int dsf_gen_run(const dsf_gen_request *r, dsf_diags *d)
{
    run ru;
    memset(&ru, 0, sizeof ru);
    ru.r = r;
    ru.sources = dsf_srccache_new();
    dsf_profile_ctx pc = {r->profile_dirs, r->plugin_dirs, ru.sources,
                          r->limits, &ru.warnings, r->repo};
    int rc = dsf_profile_load(&ru.profile, &pc, r->profile, d);
    if (!rc)
        rc = dsf_plugins_load(&ru.plugins, r->plugin_dirs, ru.sources,
                              r->limits, &ru.warnings, d);
    if (!rc)
        rc = setup_layers(&ru, d);
    if (!rc)
        rc = make_variants(&ru, d);
    if (!rc && r->to_stdout && ru.nv != 1)
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "--stdout prints exactly one variant, but %zu "
                            "are selected (choose one with --tier)", ru.nv);
    for (size_t i = 0; i < ru.nv && !rc; i++)
        rc = eval_variant(&ru, &ru.v[i], d);
    dsf_diags_move(d, &ru.warnings);
    if (!rc && dsf_diags_count(d, DSF_ERROR))
        rc = DSF_EVALID;
    if (!rc) {
        if (r->why)
            print_why(&ru, d);
        else if (r->to_stdout)
            fputs(ru.v[0].bytes, stdout);
        else if (r->outdir) {
            rc = write_outputs(&ru, d);
            if (!rc)
                print_summary(&ru, stdout);
        } else {
            print_summary(&ru, stdout);
        }
    }
    run_free(&ru);
    return rc;
}
