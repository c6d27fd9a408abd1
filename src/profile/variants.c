/* variants.c -- the variants of a gen run: tiers x --matrix cells, their
** params and their file-safe names. */
#include "profile/gen_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"
#include "core/heap.h"
#include "plugin/machine_params.h"

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

/* Reads the JSON file a value of a `file = "json"` param names, once per
** value, into files[param][text], and its sha256 (of the bytes read, for
** the manifest) into ru->param_files[param][text]. */
static int read_param_file(gen_run *ru, cJSON *files, const dsf_param *par,
                           const char *text, dsf_diags *d)
{
    if (!dsf_param_names_file(par, text))
        return 0;
    cJSON *byname = cJSON_GetObjectItemCaseSensitive(files, par->name);
    if (!byname)
        byname = cJSON_AddObjectToObject(files, par->name);
    if (cJSON_GetObjectItemCaseSensitive(byname, text))
        return 0;
    char *bytes;
    size_t len;
    int rc = dsf_read_file(&bytes, &len, text, DSF_JSON_MAX_FILE, d);
    if (rc)
        return rc;
    cJSON *doc;
    rc = dsf_json_parse(&doc, NULL, text, bytes, len, d);
    if (!rc) {
        cJSON_AddItemToObject(byname, text, doc);
        char hex[65];
        dsf_sha256_hex(hex, bytes, len);
        if (!ru->param_files)
            ru->param_files = cJSON_CreateObject();
        cJSON *hashes = cJSON_GetObjectItemCaseSensitive(ru->param_files,
                                                         par->name);
        if (!hashes)
            hashes = cJSON_AddObjectToObject(ru->param_files, par->name);
        cJSON_AddStringToObject(hashes, text, hex);
    }
    free(bytes);
    return rc;
}

/* The argument that gave param name its value (the last --param of it,
** or its --matrix axis), or 0; *opt is "--param" or "--matrix". */
static int argno_of(const dsf_gen_request *r, const char *name,
                    const char **opt)
{
    int argno = 0;
    *opt = "--param";
    for (size_t i = 0; i < r->nparams; i++)
        if (!strcmp(r->params[i].key, name))
            argno = r->params[i].argno;
    for (size_t a = 0; a < r->nmatrix && !argno; a++)
        if (!strcmp(r->matrix[a].key, name)) {
            argno = r->matrix[a].argno;
            *opt = "--matrix";
        }
    return argno;
}

/* The value param par has in variant v (what dsf_gen_variant_inputs
** puts in v->params): its --matrix value, else the command line's, else
** --detect's, else the tier's, else its default. */
static const cJSON *param_value(const gen_run *ru, const gen_variant *v,
                                const dsf_param *par)
{
    const dsf_gen_request *r = ru->r;
    for (size_t a = 0; a < r->nmatrix; a++)
        if (ru->sweeps[a].is_param && !strcmp(r->matrix[a].key, par->name))
            return cJSON_GetArrayItem(ru->axes[a], (int)v->pick[a]);
    const cJSON *layers[3] = {
        ru->overrides,
        ru->detected
            ? cJSON_GetObjectItemCaseSensitive(ru->detected, "params")
            : NULL,
        v->tier ? v->tier->params : NULL};
    for (int l = 0; l < 3; l++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(layers[l],
                                                          par->name);
        if (x)
            return x;
    }
    return par->def;
}

/* Calls the `check` function of every param that has one, once per
** distinct value of the run: a value it rejects is a usage error at its
** argument when the command line gave it, else an input error at the
** profile; an error it puts in the file the value names (in_file) is an
** input error at that file. */
static int check_values(gen_run *ru, dsf_diags *d)
{
    const cJSON *files = ru->pfiles;
    const dsf_profile *p = ru->profile;
    cJSON *seen = cJSON_CreateObject();
    int rc = 0;
    for (size_t i = 0; i < p->nparams && !rc; i++) {
        const dsf_param *par = &p->params[i];
        if (!par->check)
            continue;
        char *module = dsf_xstrdup(par->check);
        char *fn = strrchr(module, '.');
        *fn++ = '\0';
        for (size_t k = 0; k < ru->nv && !rc; k++) {
            const cJSON *val = param_value(ru, &ru->v[k], par);
            char *txt = dsf_json_print(val, false);
            char *key = dsf_xasprintf("%s=%s", par->name, txt);
            bool again = cJSON_GetObjectItemCaseSensitive(seen, key);
            cJSON_AddTrueToObject(seen, key);
            free(key);
            if (again) {
                free(txt);
                continue;
            }
            const cJSON *doc = cJSON_IsString(val)
                ? cJSON_GetObjectItemCaseSensitive(
                      cJSON_GetObjectItemCaseSensitive(files, par->name),
                      val->valuestring)
                : NULL;
            cJSON *args = cJSON_CreateArray(), *res = NULL;
            cJSON_AddItemToArray(args, cJSON_Duplicate(val, 1));
            cJSON_AddItemToArray(args, doc ? cJSON_Duplicate(doc, 1)
                                           : cJSON_CreateNull());
            rc = dsf_plugins_call(ru->plugins, module, fn, args, &res, d);
            const cJSON *err = cJSON_GetObjectItemCaseSensitive(res, "error");
            if (!rc && cJSON_IsString(err)) {
                const cJSON *hint = cJSON_GetObjectItemCaseSensitive(res,
                                                                     "hint");
                const char *opt;
                int argno = argno_of(ru->r, par->name, &opt);
                dsf_diag *g;
                if (doc && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
                               res, "in_file"))) {
                    g = dsf_diag_add(d, DSF_ERROR, val->valuestring, 0, 0,
                                     "%s", err->valuestring);
                    rc = DSF_EINPUT;
                } else if (argno) {
                    char *where = dsf_xasprintf("argument #%d", argno);
                    g = dsf_diag_add(d, DSF_ERROR, where, 0, 0,
                                     "%s %s=%s: %s", opt, par->name,
                                     cJSON_IsString(val) ? val->valuestring
                                                         : txt,
                                     err->valuestring);
                    free(where);
                    rc = DSF_EUSAGE;
                } else {
                    g = dsf_diag_add(d, DSF_ERROR,
                                     dsf_profile_src_where(
                                         &p->chain[p->nchain - 1]),
                                     0, 0,
                                     "param '%s' = %s: %s", par->name, txt,
                                     err->valuestring);
                    rc = DSF_EINPUT;
                }
                if (cJSON_IsString(hint))
                    dsf_diag_set_hint(g, "%s", hint->valuestring);
            }
            cJSON_Delete(res);
            cJSON_Delete(args);
            free(txt);
        }
        free(module);
    }
    cJSON_Delete(seen);
    return rc;
}

static bool listed(const cJSON *names, const char *name)
{
    for (const cJSON *n = names ? names->child : NULL; n; n = n->next)
        if (!strcmp(n->valuestring, name))
            return true;
    return false;
}

/* gen --detect: the params the plugins derive from the machine, for the
** declared params the command line (overrides, the --matrix params) does
** not set, into ru->detected. */
static int detect_params(gen_run *ru, const cJSON *overrides, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    cJSON *declared = cJSON_CreateArray(), *given = cJSON_CreateArray();
    for (size_t i = 0; i < p->nparams; i++)
        cJSON_AddItemToArray(declared, cJSON_CreateString(p->params[i].name));
    for (const cJSON *m = overrides->child; m; m = m->next)
        cJSON_AddItemToArray(given, cJSON_CreateString(m->string));
    for (size_t a = 0; a < r->nmatrix; a++)
        if (ru->sweeps[a].is_param)
            cJSON_AddItemToArray(given, cJSON_CreateString(r->matrix[a].key));
    cJSON *all = NULL;
    int rc = dsf_plugins_machine_params(ru->plugins, r->machine, declared,
                                        given, &all, d);
    if (!rc && !all->child) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "gen --detect: no loaded plugin derives "
                                   "a param of profile %s from the machine",
                                   p->chain[p->nchain - 1].name);
        char *which = dsf_plugins_machine_plugins(ru->plugins);
        dsf_diag_set_hint(g, "plugins declare machine_params (loaded: "
                             "%s; each derives the params it names); or "
                             "set the params with --param",
                          which ? which : "none");
        free(which);
        rc = DSF_EINPUT;
    }
    cJSON *taken = cJSON_CreateObject(), *kept = cJSON_CreateArray();
    for (const cJSON *m = all ? all->child : NULL; !rc && m; m = m->next) {
        if (listed(given, m->string)) {
            cJSON_AddItemToArray(kept, cJSON_CreateString(m->string));
            continue;
        }
        char *err;
        if (dsf_param_check(dsf_profile_param(p, m->string), m, &err)) {
            char *txt = dsf_json_print(m, false);
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                       "gen --detect: param '%s' = %s "
                                       "(from this machine): %s",
                                       m->string, txt, err);
            dsf_diag_set_hint(g, "set it with --param %s=VALUE", m->string);
            free(txt);
            free(err);
            rc = DSF_EINPUT;
        } else {
            cJSON_AddItemToObject(taken, m->string, cJSON_Duplicate(m, 1));
        }
    }
    ru->detected = cJSON_CreateObject();
    cJSON_AddItemToObject(ru->detected, "params", taken);
    cJSON_AddItemToObject(ru->detected, "kept", kept);
    cJSON_Delete(all);
    cJSON_Delete(declared);
    cJSON_Delete(given);
    return rc;
}

void dsf_gen_print_detected(const gen_run *ru, FILE *out)
{
    if (!ru->detected)
        return;
    const cJSON *m = ru->r->machine;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(m, "source");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "gpu_count");
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_printf(&b, "detected (%s, %d GPU%s):",
                   cJSON_IsString(src) ? src->valuestring : "?",
                   cJSON_IsNumber(n) ? (int)n->valuedouble : 0,
                   cJSON_IsNumber(n) && n->valuedouble == 1 ? "" : "s");
    const cJSON *taken = cJSON_GetObjectItemCaseSensitive(ru->detected,
                                                          "params");
    for (const cJSON *p = taken->child; p; p = p->next) {
        char *txt = cJSON_IsString(p) ? dsf_xstrdup(p->valuestring)
                                      : dsf_json_print(p, false);
        dsf_buf_printf(&b, " %s=%s", p->string, txt);
        free(txt);
    }
    const cJSON *kept = cJSON_GetObjectItemCaseSensitive(ru->detected,
                                                         "kept");
    for (const cJSON *k = kept->child; k; k = k->next)
        dsf_buf_printf(&b, "%s%s", k == kept->child
                                       ? "; kept from the command line: "
                                       : ", ",
                       k->valuestring);
    dsf_buf_putc(&b, '\n');
    dsf_fputs_clean(dsf_buf_str(&b), out, false);
    dsf_buf_free(&b);
}

typedef struct named_at {
    const char *name;
    size_t at;
} named_at;

static int cmp_named_at(const void *a, const void *b)
{
    const named_at *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Two variants with one name (repeated matrix values) is DSF_EUSAGE,
** reported for the first variant (in order) that repeats an earlier
** one's name; sorted, not pairwise: a sweep has up to 100,000. */
static int check_unique_names(const gen_run *ru, dsf_diags *d)
{
    named_at *all = dsf_xcalloc(ru->nv + 1, sizeof *all);
    for (size_t i = 0; i < ru->nv; i++)
        all[i] = (named_at){ru->v[i].name, i};
    qsort(all, ru->nv, sizeof *all, cmp_named_at);
    size_t first = ru->nv;
    for (size_t i = 1; i < ru->nv; i++)
        if (!strcmp(all[i - 1].name, all[i].name) && all[i].at < first)
            first = all[i].at;
    free(all);
    if (first == ru->nv)
        return 0;
    return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                          "two variants are both named '%s' (repeated "
                          "matrix values?)", ru->v[first].name);
}

/* The unknown tier name: a usage error with the closest name and the
** profile's tiers. */
static int unknown_tier(const dsf_profile *p, const char *name, dsf_diags *d)
{
    const char **names = dsf_xcalloc(p->ntiers + 1, sizeof *names);
    dsf_buf known = DSF_BUF_INIT;
    for (size_t k = 0; k < p->ntiers; k++) {
        names[k] = p->tiers[k].name;
        dsf_buf_printf(&known, "%s%s", k ? ", " : "", p->tiers[k].name);
    }
    const char *close = dsf_closest(name, names, p->ntiers);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "unknown tier '%s' for profile %s", name,
                               p->chain[p->nchain - 1].name);
    dsf_diag_set_hint(g, "%s%s%stiers: %s", close ? "did you mean '" : "",
                      close ? close : "", close ? "'? " : "",
                      known.len ? known.data : "(none)");
    dsf_buf_free(&known);
    free(names);
    return DSF_EUSAGE;
}

/* The selected tiers (--tier, else all; a profile without tiers has one
** variant, "default": a NULL tier) into tiers[0..*nt). */
static int select_tiers(const gen_run *ru, const dsf_tier **tiers, size_t *nt,
                        dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    *nt = 0;
    for (size_t i = 0; i < r->ntiers; i++) {
        const dsf_tier *t = dsf_profile_tier(p, r->tiers[i]);
        if (!t)
            return unknown_tier(p, r->tiers[i], d);
        bool dup = false;
        for (size_t k = 0; k < *nt; k++)
            dup |= tiers[k] == t;
        if (!dup)
            tiers[(*nt)++] = t;
    }
    if (!r->ntiers)
        for (size_t i = 0; i < p->ntiers; i++)
            tiers[(*nt)++] = &p->tiers[i];
    if (!*nt && p->ntiers == 0)
        tiers[(*nt)++] = NULL; /* one variant: "default" */
    return 0;
}

/* --param values into overrides (and the documents file params name into
** files). */
static int parse_overrides(gen_run *ru, cJSON *overrides, cJSON *files,
                           dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    int rc = 0;
    for (size_t i = 0; i < r->nparams && !rc; i++) {
        char *desc = dsf_xasprintf("argument #%d", r->params[i].argno);
        const dsf_param *par = need_param(ru->profile, r->params[i].key,
                                          desc, d);
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
            rc = read_param_file(ru, files, par, r->params[i].value, d);
        }
        free(desc);
    }
    return rc;
}

/* --matrix axis a's values into axes[a] (a param axis; a path or files
** axis is sweep.c's), and *cells times its length (at most
** DSF_MAX_VARIANTS in all). */
static int parse_axis(gen_run *ru, size_t a, const cJSON *overrides,
                      cJSON *files, cJSON **axes, size_t *cells,
                      dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    const dsf_matrix_axis *ax = &r->matrix[a];
    char *desc = dsf_xasprintf("argument #%d", ax->argno);
    int rc = 0;
    axes[a] = cJSON_CreateArray();
    const dsf_param *par = NULL;
    if (ru->sweeps[a].is_param) {
        par = need_param(ru->profile, ax->key, desc, d);
        if (!par)
            rc = DSF_EUSAGE;
        else if (cJSON_GetObjectItemCaseSensitive(overrides, ax->key))
            rc = dsf_diag_error(d, DSF_EUSAGE, desc, 0, 0,
                                "'%s' is given both with --param and "
                                "--matrix", ax->key);
        for (size_t b = 0; b < a && !rc; b++)
            if (r->matrix[b].key && !strcmp(r->matrix[b].key, ax->key))
                rc = dsf_diag_error(d, DSF_EUSAGE, desc, 0, 0,
                                    "--matrix names '%s' twice", ax->key);
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
                rc = read_param_file(ru, files, par, ax->values[k], d);
            }
        }
    }
    if (!rc && *cells > DSF_MAX_VARIANTS / (ax->n ? ax->n : 1))
        rc = dsf_diag_error(d, DSF_EUSAGE, desc, 0, 0,
                            "the matrix has more than %d variants",
                            DSF_MAX_VARIANTS);
    *cells *= ax->n ? ax->n : 1;
    free(desc);
    return rc;
}

/* ru->v: every tier times every matrix cell, named. */
static void lay_out(gen_run *ru, const dsf_tier **tiers, size_t nt, size_t cells)
{
    const dsf_gen_request *r = ru->r;
    /* A sweep's array and names take megabytes of new heap: faulted in
    ** as the heap grows, not a page at a time (core/heap.h). */
    ru->v = dsf_xmalloc(nt * cells * sizeof *ru->v);
    dsf_heap_populate(ru->v, nt * cells * sizeof *ru->v);
    memset(ru->v, 0, nt * cells * sizeof *ru->v);
    for (size_t ti = 0; ti < nt; ti++) {
        for (size_t c = 0; c < cells; c++) {
            dsf_heap_follow();
            gen_variant *v = &ru->v[ru->nv++];
            v->tier = tiers[ti];
            dsf_buf name = DSF_BUF_INIT;
            dsf_buf_puts(&name, v->tier ? v->tier->name : "default");
            size_t rest = c;
            size_t stride = cells;
            if (r->nmatrix)
                v->pick = dsf_xcalloc(r->nmatrix, sizeof *v->pick);
            for (size_t a = 0; a < r->nmatrix; a++) {
                stride /= r->matrix[a].n;
                size_t k = rest / stride;
                rest %= stride;
                v->pick[a] = k;
                dsf_gen_sweep_name(ru, a, k, &name);
            }
            v->name = dsf_buf_take(&name);
        }
    }
}

int dsf_gen_make_variants(gen_run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    const dsf_tier **tiers = dsf_xcalloc(p->ntiers + 1, sizeof *tiers);
    size_t nt = 0;
    int rc = select_tiers(ru, tiers, &nt, d);
    cJSON *overrides = cJSON_CreateObject();
    cJSON *files = cJSON_CreateObject(); /* param -> text -> document */
    if (!rc)
        rc = parse_overrides(ru, overrides, files, d);
    if (!rc && r->machine)
        rc = detect_params(ru, overrides, d);
    /* --matrix axes, parsed up front. */
    cJSON **axes = dsf_xcalloc(r->nmatrix + 1, sizeof *axes);
    size_t cells = 1;
    for (size_t a = 0; a < r->nmatrix && !rc; a++)
        rc = parse_axis(ru, a, overrides, files, axes, &cells, d);
    if (!rc)
        lay_out(ru, tiers, nt, cells);
    ru->axes = axes;
    ru->overrides = overrides;
    ru->pfiles = files;
    if (!rc)
        rc = check_unique_names(ru, d);
    if (!rc)
        rc = check_values(ru, d);
    free(tiers);
    return rc;
}

void dsf_gen_variant_inputs(gen_run *ru, gen_variant *v)
{
    const dsf_gen_request *r = ru->r;
    const dsf_profile *p = ru->profile;
    v->params = cJSON_CreateObject();
    for (size_t i = 0; i < p->nparams; i++)
        cJSON_AddItemToObject(v->params, p->params[i].name,
                              cJSON_Duplicate(p->params[i].def, 1));
    /* --detect's values rank above the profile's and the tier's, below
    ** the command line's. */
    const cJSON *layers[3] = {
        v->tier ? v->tier->params : NULL,
        ru->detected
            ? cJSON_GetObjectItemCaseSensitive(ru->detected, "params")
            : NULL,
        ru->overrides};
    for (int l = 0; l < 3; l++)
        for (const cJSON *m = layers[l] ? layers[l]->child : NULL; m;
             m = m->next)
            cJSON_ReplaceItemInObjectCaseSensitive(v->params, m->string,
                                                   cJSON_Duplicate(m, 1));
    for (size_t a = 0; a < r->nmatrix; a++)
        if (ru->sweeps[a].is_param)
            cJSON_ReplaceItemInObjectCaseSensitive(
                v->params, r->matrix[a].key,
                cJSON_Duplicate(cJSON_GetArrayItem(ru->axes[a],
                                                   (int)v->pick[a]),
                                1));
    /* ctx.given: what the command line set, so a planner keeps it
    ** instead of choosing over it. */
    cJSON *given = cJSON_CreateObject();
    for (const cJSON *m = ru->overrides->child; m; m = m->next)
        cJSON_AddTrueToObject(given, m->string);
    for (size_t a = 0; a < r->nmatrix; a++)
        cJSON_AddTrueToObject(given, r->matrix[a].key);
    v->inputs = cJSON_CreateObject();
    cJSON_AddItemToObject(v->inputs, "given", given);
    /* ctx.files: the documents the variant's file params name */
    cJSON *vf = cJSON_AddObjectToObject(v->inputs, "files");
    for (const cJSON *f = ru->pfiles->child; f; f = f->next) {
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(v->params,
                                                            f->string);
        const cJSON *doc = cJSON_IsString(val)
            ? cJSON_GetObjectItemCaseSensitive(f, val->valuestring)
            : NULL;
        if (doc)
            cJSON_AddItemToObject(vf, f->string, cJSON_Duplicate(doc, 1));
    }
}

void dsf_gen_free_variant_inputs(gen_run *ru)
{
    for (size_t a = 0; ru->axes && a < ru->r->nmatrix; a++)
        cJSON_Delete(ru->axes[a]);
    free(ru->axes);
    ru->axes = NULL;
    cJSON_Delete(ru->pfiles);
    ru->pfiles = NULL;
    cJSON_Delete(ru->overrides);
    ru->overrides = NULL;
}
