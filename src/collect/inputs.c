/* inputs.c -- see inputs.h. */
#include "collect/inputs.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "collect/scan.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "json/jsonc.h"

int dsf_needles_build(dsf_needles *nd, const dsf_results_decl *rs,
                      dsf_diags *d)
{
    memset(nd, 0, sizeof *nd);
    nd->mask = dsf_xcalloc(rs->nreaders + 1, sizeof *nd->mask);
    for (size_t r = 0; r < rs->nreaders; r++) {
        for (size_t k = 0; k < rs->readers[r].nlines; k++) {
            const char *s = rs->readers[r].lines[k];
            size_t j = 0;
            while (j < nd->n && strcmp(nd->v[j], s))
                j++;
            if (j == nd->n) {
                if (nd->n == 64) {
                    dsf_needles_free(nd);
                    return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                                          "the readers declare more than 64 "
                                          "distinct 'lines' substrings");
                }
                nd->v[nd->n++] = s;
            }
            nd->mask[r] |= (uint64_t)1 << j;
        }
    }
    return 0;
}

void dsf_needles_free(dsf_needles *nd)
{
    free(nd->mask);
    nd->mask = NULL;
}

/* A file of the variant, ready for its readers. */
typedef struct input {
    char *rel;               /* path under the results dir */
    dsf_scan scan;           /* lines (global needle bits) */
    char *text;              /* text and json readers, or NULL */
    size_t len;
    cJSON *json;             /* or NULL (not JSON: a problem) */
    bool unreadable;         /* a problem was recorded */
} input;

/* Whether r reads rel in this pass (a run pass or a variant's: r's scope
** must be the pass's). */
static bool reader_takes(const dsf_reader *r, const char *rel, bool run)
{
    if (r->run_scope != run)
        return false;
    for (size_t g = 0; g < r->nfiles; g++)
        if (fnmatch(r->files[g], rel, FNM_PATHNAME) == 0)
            return true;
    return false;
}

/* The files under dir and its direct subdirectories, sorted by path
** (subdirectory entries right after their directory's name). */
static void list_files(const char *dir, bool subdirs, char ***out,
                       size_t *n)
{
    char **top = NULL;
    size_t ntop = 0;
    *out = NULL;
    *n = 0;
    dsf_list_dir(&top, &ntop, dir);
    for (size_t i = 0; i < ntop && *n < DSF_COLLECT_MAX_FILES; i++) {
        char *full = dsf_path_join(dir, top[i]);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (!subdirs) {
                free(full);
                continue;
            }
            char **sub = NULL;
            size_t nsub = 0;
            dsf_list_dir(&sub, &nsub, full);
            for (size_t k = 0; k < nsub && *n < DSF_COLLECT_MAX_FILES; k++) {
                *out = dsf_xrealloc(*out, (*n + 1) * sizeof **out);
                (*out)[(*n)++] = dsf_xconcat(top[i], "/", sub[k], NULL);
            }
            dsf_free_strv(sub, nsub);
        } else {
            /* not only regular files: a FIFO or a dangling link is a
            ** problem its reader's variant reports (never opened) */
            *out = dsf_xrealloc(*out, (*n + 1) * sizeof **out);
            (*out)[(*n)++] = dsf_xstrdup(top[i]);
        }
        free(full);
    }
    dsf_free_strv(top, ntop);
}

/* A file of the variant that its readers cannot have, as a problem:
** "results/V/FILE[:LINE:COL]: message". */
static int problem(dsf_plugins *p, const char *label, const char *rel,
                   bool run, dsf_diags *tmp, dsf_diags *d)
{
    const dsf_diag *g = tmp->len ? &tmp->items[0] : NULL;
    char *text;
    if (g && g->line)
        text = dsf_xasprintf("%s/%s:%d:%d: %s", label, rel, g->line, g->col,
                             g->message);
    else
        text = dsf_xasprintf("%s/%s: %s", label, rel,
                             g ? g->message : "cannot read");
    int rc = 0;
    if (run) /* the run's own files: a warning of the command */
        dsf_diag_add(d, DSF_WARNING, NULL, 0, 0, "%s", text);
    else
        rc = dsf_results_problem(p, text, d);
    free(text);
    dsf_diags_free(tmp);
    return rc;
}

/* Scans in for the substrings of the lines readers that take it. */
static int prepare_lines(input *in, const dsf_results_decl *rs,
                         const dsf_needles *nd, const char *path, bool run,
                         dsf_diags *tmp)
{
    uint64_t want = 0;
    for (size_t r = 0; r < rs->nreaders; r++)
        if (rs->readers[r].format == DSF_READ_LINES &&
            reader_takes(&rs->readers[r], in->rel, run))
            want |= nd->mask[r];
    if (!want)
        return 0;
    const char *sub[64];
    size_t idx[64], n = 0;
    for (size_t k = 0; k < nd->n; k++)
        if (want & ((uint64_t)1 << k)) {
            sub[n] = nd->v[k];
            idx[n++] = k;
        }
    int rc = dsf_scan_file(&in->scan, path, sub, n, tmp);
    for (size_t i = 0; !rc && i < in->scan.n; i++) {
        uint64_t local = in->scan.lines[i].needles, global = 0;
        for (size_t k = 0; k < n; k++)
            if (local & ((uint64_t)1 << k))
                global |= (uint64_t)1 << idx[k];
        in->scan.lines[i].needles = global;
    }
    return rc;
}

/* Reads in whole when a text or json reader takes it. */
static int prepare_whole(input *in, const dsf_results_decl *rs,
                         const char *path, bool run, dsf_diags *tmp)
{
    bool text = false, json = false;
    for (size_t r = 0; r < rs->nreaders; r++) {
        const dsf_reader *x = &rs->readers[r];
        if (x->format != DSF_READ_LINES && reader_takes(x, in->rel, run)) {
            text |= x->format == DSF_READ_TEXT;
            json |= x->format == DSF_READ_JSON;
        }
    }
    if (!text && !json)
        return 0;
    int rc = dsf_read_file(&in->text, &in->len, path, DSF_COLLECT_MAX_TEXT,
                           tmp);
    if (!rc && json)
        rc = dsf_json_parse(&in->json, NULL, in->rel, in->text, in->len,
                            tmp);
    return rc;
}

/* Only a regular file is opened: a FIFO would block a whole read. */
static int check_regular(const char *path, dsf_diags *tmp)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return dsf_diag_error(tmp, DSF_EINPUT, path, 0, 0, "cannot read: %s",
                              strerror(errno));
    if (!S_ISREG(st.st_mode))
        return dsf_diag_error(tmp, DSF_EINPUT, path, 0, 0,
                              "not a regular file");
    return 0;
}

static bool wanted(const dsf_results_decl *rs, const char *rel, bool run)
{
    for (size_t r = 0; r < rs->nreaders; r++)
        if (reader_takes(&rs->readers[r], rel, run))
            return true;
    return false;
}

static void free_input(input *in)
{
    free(in->rel);
    dsf_scan_free(&in->scan);
    free(in->text);
    cJSON_Delete(in->json);
}

/* Calls lines reader r (index ri) on in's lines that hold its substrings;
** not called when none does. */
static int call_lines(dsf_plugins *p, const dsf_reader *r, uint64_t mask,
                      const input *in, dsf_diags *d)
{
    size_t n = 0;
    for (size_t i = 0; i < in->scan.n; i++)
        n += (in->scan.lines[i].needles & mask) != 0;
    if (!n)
        return 0;
    const char **lines = dsf_xmalloc(n * sizeof *lines);
    size_t *lens = dsf_xmalloc(n * sizeof *lens);
    n = 0;
    for (size_t i = 0; i < in->scan.n; i++)
        if (in->scan.lines[i].needles & mask) {
            lines[n] = in->scan.lines[i].text;
            lens[n++] = in->scan.lines[i].len;
        }
    dsf_read_input ri = {in->rel, NULL, 0, NULL, lines, lens, n,
                         in->scan.dropped};
    int rc = dsf_results_read(p, r, &ri, d);
    free(lines);
    free(lens);
    return rc;
}

static int call_readers(dsf_plugins *p, const dsf_results_decl *rs,
                        const dsf_needles *nd, const input *ins, size_t n,
                        bool run, dsf_diags *d)
{
    int rc = 0;
    for (size_t r = 0; !rc && r < rs->nreaders; r++) {
        const dsf_reader *x = &rs->readers[r];
        for (size_t f = 0; !rc && f < n; f++) {
            const input *in = &ins[f];
            if (in->unreadable || !reader_takes(x, in->rel, run))
                continue;
            if (x->format == DSF_READ_LINES) {
                rc = call_lines(p, x, nd->mask[r], in, d);
            } else if (x->format == DSF_READ_TEXT || in->json) {
                dsf_read_input ri = {in->rel, in->text, in->len,
                                     x->format == DSF_READ_JSON ? in->json
                                                                : NULL,
                                     NULL, NULL, 0, 0};
                rc = dsf_results_read(p, x, &ri, d);
            }
        }
    }
    return rc;
}

int dsf_collect_inputs(dsf_plugins *p, const dsf_results_decl *rs,
                       const dsf_needles *nd, const char *dir,
                       const char *label, bool run, dsf_diags *d)
{
    char **names;
    size_t n;
    list_files(dir, !run, &names, &n);
    input *ins = dsf_xcalloc(n + 1, sizeof *ins);
    int rc = 0;
    for (size_t f = 0; !rc && f < n; f++) {
        input *in = &ins[f];
        in->rel = names[f];
        names[f] = NULL;
        char *path = dsf_path_join(dir, in->rel);
        dsf_diags tmp = DSF_DIAGS_INIT;
        if (!wanted(rs, in->rel, run)) {
            in->unreadable = true; /* no reader takes it: never opened */
        } else if (check_regular(path, &tmp) ||
                   prepare_lines(in, rs, nd, path, run, &tmp) ||
                   prepare_whole(in, rs, path, run, &tmp)) {
            in->unreadable = true;
            rc = problem(p, label, in->rel, run, &tmp, d);
        }
        dsf_diags_free(&tmp);
        free(path);
    }
    if (n == DSF_COLLECT_MAX_FILES && !rc) {
        char *t = dsf_xasprintf("%s: more than %d files; the rest are not "
                                "read", label, DSF_COLLECT_MAX_FILES);
        if (run)
            dsf_diag_add(d, DSF_WARNING, NULL, 0, 0, "%s", t);
        else
            rc = dsf_results_problem(p, t, d);
        free(t);
    }
    if (!rc)
        rc = call_readers(p, rs, nd, ins, n, run, d);
    for (size_t f = 0; f < n; f++)
        free_input(&ins[f]);
    free(ins);
    dsf_free_strv(names, n);
    return rc;
}
