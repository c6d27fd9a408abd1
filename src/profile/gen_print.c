/* gen_print.c -- what gen shows: --why's layers for a path, and the
** summary table under the run. */
#include "profile/gen_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "doc/jsondiff.h"
#include "json/jsonout.h"
#include "lua/dsflib.h"

void dsf_gen_print_why(gen_run *ru, dsf_diags *d)
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
        gen_variant *v = &ru->v[i];
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
            dsf_buf where = DSF_BUF_INIT;
            dsf_prov_where(&where, e);
            printf("  %zu. %-8s %-9s %s", ++shown, e->layer->kind,
                   dsf_prov_verb(e->action), where.data);
            dsf_buf_free(&where);
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

#define NAME_MIN_WIDTH 28

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

/* Whether column k is shown: always, or (show = "varies") when two rows'
** cells differ. */
static bool column_shown(const gen_run *ru, const dsf_column *c, size_t k)
{
    if (!c->varies)
        return true;
    for (size_t i = 1; i < ru->nv; i++) {
        const char *a = ru->v[0].cells[k], *b = ru->v[i].cells[k];
        if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
            return true;
    }
    return false;
}

static void put_cell(FILE *out, const char *text, int width, bool right,
                     bool last)
{
    if (right)
        fprintf(out, "%*s", width, text);
    else if (last)
        fputs(text, out);
    else
        fprintf(out, "%-*s", width, text);
}

void dsf_gen_print_summary(const gen_run *ru, FILE *out)
{
    size_t ncol;
    const dsf_column *cols = dsf_plugins_columns(ru->plugins, &ncol);
    bool *shown = dsf_xcalloc(ncol + 1, sizeof *shown);
    int *width = dsf_xcalloc(ncol + 1, sizeof *width);
    size_t last = (size_t)-1; /* the last shown column */
    int name_w = max_int(NAME_MIN_WIDTH, (int)strlen("variant"));
    for (size_t i = 0; i < ru->nv; i++)
        name_w = max_int(name_w, (int)strlen(ru->v[i].name));
    for (size_t k = 0; k < ncol; k++) {
        shown[k] = column_shown(ru, &cols[k], k);
        if (!shown[k])
            continue;
        last = k;
        width[k] = max_int(cols[k].width, (int)strlen(cols[k].header));
        for (size_t i = 0; i < ru->nv; i++) {
            const char *c = ru->v[i].cells[k];
            width[k] = max_int(width[k], (int)strlen(c ? c : "-"));
        }
    }
    put_cell(out, "variant", name_w, false, last == (size_t)-1);
    for (size_t k = 0; k < ncol; k++)
        if (shown[k]) {
            fputc(' ', out);
            put_cell(out, cols[k].header, width[k], cols[k].right,
                     k == last);
        }
    fputc('\n', out);
    for (size_t i = 0; i < ru->nv; i++) {
        const gen_variant *v = &ru->v[i];
        put_cell(out, v->name, name_w, false, last == (size_t)-1);
        for (size_t k = 0; k < ncol; k++)
            if (shown[k]) {
                fputc(' ', out);
                put_cell(out, v->cells[k] ? v->cells[k] : "-", width[k],
                         cols[k].right, k == last);
            }
        fputc('\n', out);
    }
    for (size_t k = 0; k < ncol; k++)
        if (shown[k] && cols[k].note)
            fprintf(out, "%s: %s\n", cols[k].header, cols[k].note);
    dsf_gen_print_detected(ru, out);
    free(shown);
    free(width);
}
