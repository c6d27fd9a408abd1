/* output.c -- what gen shows and writes: --why, the summary table, the
** variant files and manifest.json. */
#define _DEFAULT_SOURCE /* flock(2) on the output directory */
#include "profile/gen_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "doc/jsondiff.h"
#include "json/jsonout.h"
#include "lua/dsflib.h"
#include "profile/manifest.h"

void dsf_gen_print_why(run *ru, dsf_diags *d)
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
static bool column_shown(const run *ru, const dsf_column *c, size_t k)
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

void dsf_gen_print_summary(const run *ru, FILE *out)
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
        const variant *v = &ru->v[i];
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

/* Takes an exclusive lock on the directory itself (no lock file to leave
** behind): concurrent gen runs into one directory write one after the
** other, each seeing the manifest the previous one left. Released when
** *fd is closed. */
static int lock_dir(const char *dir, int *fd, dsf_diags *d)
{
    *fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd < 0)
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                              "cannot open the output directory: %s",
                              strerror(errno));
    while (flock(*fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            int e = errno;
            close(*fd);
            *fd = -1;
            return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                                  "cannot lock the output directory: %s",
                                  strerror(e));
        }
    return 0;
}

/* The manifest already in the directory: *old is NULL when there is
** none. */
static int read_manifest(const char *path, cJSON **old, dsf_diags *d)
{
    *old = NULL;
    if (!dsf_is_file(path))
        return 0;
    char *text;
    size_t len;
    int rc = dsf_read_file(&text, &len, path, DSF_JSON_MAX_FILE, d);
    if (rc)
        return rc;
    rc = dsf_manifest_parse(old, path, text, len, d);
    free(text);
    return rc;
}

typedef struct pending {
    char *final_path;
    char *tmp_path;
} pending;

/* Stages data for final_path (owned by w from now on) as a temporary
** file, unless the file already holds these bytes: same inputs, same
** bytes, and its mtime does not change. */
static int stage(pending *w, char *final_path, const char *data, size_t len,
                 dsf_diags *d)
{
    w->final_path = final_path;
    if (dsf_file_equals(final_path, data, len))
        return 0;
    return dsf_write_temp(&w->tmp_path, final_path, data, len, false, d);
}

/* Stages the files the emitters made for variant v (gen_emit.c), and
** drops their texts (the manifest needs only names and hashes). */
static int stage_emitted(variant *v, const char *dir, pending *w,
                         size_t *nw, dsf_diags *d)
{
    int rc = 0;
    for (size_t k = 0; k < v->nemitted && !rc; k++) {
        dsf_emitted *e = &v->emitted[k];
        rc = stage(&w[(*nw)++], dsf_xasprintf("%s/%s", dir, e->file),
                   e->text, e->len, d);
        free(e->text);
        e->text = NULL;
    }
    return rc;
}

int dsf_gen_write_outputs(run *ru, dsf_diags *d)
{
    const char *dir = ru->r->outdir;
    const char *pname = ru->profile->chain[ru->profile->nchain - 1].name;
    bool created = false;
    int rc = dsf_mkdir_p(dir, &created, d);
    if (rc)
        return rc;
    int lock = -1;
    rc = lock_dir(dir, &lock, d);
    cJSON *old = NULL;
    char *mpath = dsf_xasprintf("%s/manifest.json", dir);
    if (!rc)
        rc = read_manifest(mpath, &old, d);
    free(mpath);
    size_t nfiles = ru->nv + 2;
    for (size_t i = 0; i < ru->nv; i++)
        nfiles += ru->v[i].nemitted;
    pending *w = dsf_xcalloc(nfiles, sizeof *w);
    size_t nw = 0;
    char *page = NULL; /* --report: written with the rest, all or nothing */
    for (size_t i = 0; i <= ru->nv + (page != NULL) && !rc; i++) {
        const char *data;
        char *manifest_text = NULL;
        if (i < ru->nv) {
            rc = stage_emitted(&ru->v[i], dir, w, &nw, d);
            if (rc)
                break;
            w[nw].final_path = dsf_xasprintf("%s/%s-%s.json", dir, pname,
                                             ru->v[i].name);
            data = ru->v[i].bytes;
        } else if (i == ru->nv) {
            w[nw].final_path = dsf_xasprintf("%s/manifest.json", dir);
            cJSON *m = dsf_gen_manifest(ru);
            /* The page shows this run's variants, before the merge with
            ** the directory's earlier manifest. */
            if (ru->r->report)
                page = dsf_gen_report_page(ru, m);
            dsf_manifest_merge(m, old, pname);
            data = manifest_text = dsf_json_print(m, true);
            cJSON_Delete(m);
        } else {
            w[nw].final_path = dsf_xstrdup(ru->r->report);
            data = page;
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
    cJSON_Delete(old);
    /* Everything is on disk: now the renames (the manifest last), which do
    ** not fail in practice on one file system. */
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
    if (lock >= 0)
        close(lock);
    free(page);
    if (rc && created)
        rmdir(dir);
    return rc;
}
