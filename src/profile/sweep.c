/* sweep.c -- --matrix axes that are not params: a config path swept with
** an edit per value, or --matrix-file with an override file per value
** (see gen_run.h). */
#include "profile/gen_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "doc/merge.h"

/* Letters, digits, '_' and '-' stay; in a value '.' becomes 'p' (0.5 ->
** 0p5), the rest '_': names are safe as file names. */
static void sanitize_as(dsf_buf *b, const char *s, char dot)
{
    for (; *s; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-';
        dsf_buf_putc(b, ok ? c : (c == '.' ? dot : '_'));
    }
}

static void sanitize(dsf_buf *b, const char *s)
{
    sanitize_as(b, s, 'p');
}

/* A key that is not a param but reads like a misspelt one stays a param
** axis, so that the "unknown param, did you mean" error reports it. */
static bool is_param_axis(const dsf_profile *p, const char *key)
{
    if (dsf_profile_param(p, key))
        return true;
    if (strpbrk(key, ".["))
        return false;
    const char **names = dsf_xcalloc(p->nparams + 1, sizeof *names);
    for (size_t i = 0; i < p->nparams; i++)
        names[i] = p->params[i].name;
    bool close = dsf_closest(key, names, p->nparams) != NULL;
    free(names);
    return close;
}

static int setup_path(gen_run *ru, sweep_axis *s, const dsf_matrix_axis *ax,
                      dsf_diags *d)
{
    s->edits = dsf_xcalloc(ax->n + 1, sizeof *s->edits);
    s->layers = dsf_xcalloc(ax->n + 1, sizeof *s->layers);
    s->labels = dsf_xcalloc(2 * ax->n + 1, sizeof *s->labels);
    for (size_t k = 0; k < ax->n; k++) {
        char *text = dsf_xasprintf("%s=%s", ax->key, ax->values[k]);
        char *err;
        if (dsf_edit_parse(&s->edits[k], text, ax->argno, &err) != 0) {
            dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                         "argument #%d: --matrix %s: %s", ax->argno, text,
                         err);
            free(err);
            free(text);
            return DSF_EUSAGE;
        }
        s->labels[2 * k] = dsf_xasprintf("--matrix %s", text);
        s->labels[2 * k + 1] = dsf_xasprintf("argument #%d", ax->argno);
        s->layers[k].kind = "sweep";
        s->layers[k].label = s->labels[2 * k];
        s->layers[k].file = s->labels[2 * k + 1];
        free(text);
    }
    /* Named by the path's last key, or the whole path when another axis
    ** ends with the same key. */
    const dsf_jpath *jp = &s->edits[0].path;
    const char *last = jp->len && jp->steps[jp->len - 1].key
                           ? jp->steps[jp->len - 1].key
                           : ax->key;
    bool clash = false;
    const dsf_gen_request *r = ru->r;
    for (size_t b = 0; b < r->nmatrix; b++) {
        const char *other = r->matrix[b].key;
        if (&r->matrix[b] == ax || !other)
            continue;
        const char *dot = strrchr(other, '.');
        clash |= !strcmp(dot ? dot + 1 : other, last);
    }
    dsf_buf name = DSF_BUF_INIT;
    sanitize_as(&name, clash ? ax->key : last, '_');
    s->name = dsf_buf_take(&name);
    return 0;
}

int dsf_gen_setup_sweeps(gen_run *ru, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    ru->sweeps = dsf_xcalloc(r->nmatrix + 1, sizeof *ru->sweeps);
    int rc = 0;
    for (size_t a = 0; a < r->nmatrix && !rc; a++) {
        const dsf_matrix_axis *ax = &r->matrix[a];
        sweep_axis *s = &ru->sweeps[a];
        if (!ax->files) {
            s->is_param = is_param_axis(ru->profile, ax->key);
            if (!s->is_param)
                rc = setup_path(ru, s, ax, d);
            continue;
        }
        s->files = dsf_xcalloc(ax->n + 1, sizeof *s->files);
        for (size_t k = 0; k < ax->n && !rc; k++) {
            char *label = dsf_xasprintf("--matrix-file %s", ax->values[k]);
            rc = dsf_gen_load_override(&s->files[k], ax->values[k], label,
                                       d);
            free(label);
        }
    }
    return rc;
}

void dsf_gen_sweep_name(const gen_run *ru, size_t a, size_t k, dsf_buf *name)
{
    const dsf_matrix_axis *ax = &ru->r->matrix[a];
    const sweep_axis *s = &ru->sweeps[a];
    if (ax->files) {
        const char *base = strrchr(ax->values[k], '/');
        base = base ? base + 1 : ax->values[k];
        size_t n = strlen(base);
        if (n > 5 && !strcmp(base + n - 5, ".json"))
            n -= 5;
        char *stem = dsf_xstrndup(base, n);
        dsf_buf_putc(name, '.');
        sanitize_as(name, stem, '_');
        free(stem);
        return;
    }
    dsf_buf_putc(name, '.');
    if (s->is_param)
        dsf_buf_puts(name, ax->key);
    else
        dsf_buf_puts(name, s->name);
    dsf_buf_putc(name, '-');
    sanitize(name, ax->values[k]);
}

int dsf_gen_apply_sweeps(gen_run *ru, gen_variant *v, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    for (size_t a = 0; a < r->nmatrix; a++) {
        const sweep_axis *s = &ru->sweeps[a];
        size_t k = v->pick ? v->pick[a] : 0;
        if (s->files) {
            const override_file *f = &s->files[k];
            dsf_merge(v->doc, f->doc, &f->layer, f->src, &v->prov);
        } else if (s->edits) {
            const dsf_edit *e = &s->edits[k];
            cJSON *touched;
            char *err;
            if (dsf_edit_apply(v->doc, e, &touched, &err) != 0) {
                dsf_diag_add(d, DSF_ERROR, s->layers[k].file, 0, 0,
                             "--matrix: %s (variant %s)", err, v->name);
                free(err);
                return DSF_EUSAGE;
            }
            dsf_prov_record_tree(&v->prov, e->path_text, touched,
                                 DSF_PROV_OVERRIDE, &s->layers[k], NULL);
        }
    }
    return 0;
}

void dsf_gen_free_sweeps(gen_run *ru)
{
    if (!ru->sweeps)
        return;
    for (size_t a = 0; a < ru->r->nmatrix; a++) {
        sweep_axis *s = &ru->sweeps[a];
        size_t n = ru->r->matrix[a].n;
        if (s->edits)
            for (size_t k = 0; k < n; k++) {
                dsf_edit_free(&s->edits[k]);
                free(s->labels[2 * k]);
                free(s->labels[2 * k + 1]);
            }
        if (s->files)
            for (size_t k = 0; k < n; k++) {
                cJSON_Delete(s->files[k].doc);
                dsf_jsrc_free(s->files[k].src);
                free(s->files[k].label);
            }
        free(s->edits);
        free(s->layers);
        free(s->labels);
        free(s->files);
        free(s->name);
    }
    free(ru->sweeps);
    ru->sweeps = NULL;
}
