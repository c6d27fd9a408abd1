/* output.c -- what gen writes: the variant files, the emitters' files and
** manifest.json, all or nothing (what it shows: gen_print.c). */
#include "profile/gen_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "doc/jsondiff.h"
#include "json/jsonout.h"
#include "lua/dsflib.h"
#include "lua/limits.h"
#include "profile/manifest.h"
#include "profile/out_debris.h"
#include "profile/out_dir.h"

typedef struct pending {
    char *final_path;
    char *tmp_path;         /* NULL: the file already holds these bytes */
} pending;

/* What -o has staged so far: the run's transaction (gen_run.h). */
struct dsf_gen_out {
    const char *dir;
    char *top;              /* the outermost directory of dir this run
                            ** creates, or NULL */
    char **made;            /* the directories this run creates, dir (when
                            ** not staged) then its parents up to top */
    size_t nmade, capmade;
    char *stage;            /* a new dir: where its files are written under
                            ** their own names, renamed to dir at the end
                            ** (one rename instead of one per file); NULL
                            ** when dir existed */
    size_t stage_len;
    int lock;
    pending *w;             /* staged files, renamed in this order */
    size_t nw, cap;
    char *mpath;            /* manifest.json */
    char *mtmp;             /* its temporary file, written as we go */
    FILE *mf;
    char *mtail;            /* the merged manifest after this run's
                            ** entries */
    size_t nentries;
    dsf_buf mtext;          /* entries not yet written to mf */
    bool hold;              /* a worker: entries stay in mtext */
    struct stat dir_st;     /* dir's, when it existed (checked) */
    bool dir_checked;
    unsigned long long space;   /* free bytes when last measured */
    unsigned long long spent;   /* what this process wrote since */
    unsigned long bsize;        /* 0: the free space is not known */
    unsigned long long mbytes;  /* the manifest's bytes so far */
    unsigned long long mroom;   /* ... and the room reserved for them */
};

/* When a limit's backstop ends the process (limits.h), the run's
** temporary files go with it: the staged ones from live_from on, and in
** the process that owns the run (not a worker) the manifest's and the
** directories it made. Only unlink and rmdir: it runs in a signal
** handler, during a Lua call, never while the list grows. */
static dsf_gen_out *volatile live_out;
static volatile size_t live_from;
static volatile bool live_owner;

static void unlink_on_backstop(void)
{
    dsf_gen_out *o = live_out;
    if (!o)
        return;
    for (size_t i = live_from; i < o->nw; i++)
        if (o->w[i].tmp_path)
            unlink(o->w[i].tmp_path);
    if (!live_owner)
        return;
    if (o->mtmp)
        unlink(o->mtmp);
    if (o->stage)
        rmdir(o->stage);
    for (size_t i = 0; i < o->nmade; i++)
        if (rmdir(o->made[i]) != 0)
            break;
}

/* Whether path is a file in the staging directory. */
static bool in_stage(const dsf_gen_out *o, const char *path)
{
    return o->stage && path && !strncmp(path, o->stage, o->stage_len) &&
           path[o->stage_len] == '/';
}

/* Before len bytes are written for path: an error when the file system
** (of dir, or of the staging directory) has not room for them, so that
** a full disk is told as such before a file is half-written. Measured
** once and counted down by this process's own writes, measured again
** when they reach it; the writes' own ENOSPC stays the last word (and
** either way the run changes nothing). */
static int reserve(dsf_gen_out *o, const char *path, size_t len,
                   dsf_diags *d)
{
    if (!o->bsize || !len)
        return 0;
    unsigned long long need =
        ((unsigned long long)len + o->bsize - 1) / o->bsize * o->bsize;
    if (o->spent + need > o->space) {
        unsigned long long now;
        unsigned long bs;
        if (dsf_free_space(o->stage ? o->stage : o->dir, &now, &bs)) {
            o->space = now;
            o->bsize = bs;
            o->spent = 0;
        }
        if (o->spent + need > o->space)
            return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                  "not enough free space on its file "
                                  "system: %llu bytes needed (whole "
                                  "blocks), %llu free",
                                  need, o->space - o->spent);
    }
    o->spent += need;
    return 0;
}

/* Before n more bytes of the manifest are written: room for them (the
** blocks beyond those already reserved for it). */
static int manifest_room(dsf_gen_out *o, const char *path, size_t n,
                         dsf_diags *d)
{
    o->mbytes += n;
    if (!o->bsize || o->mbytes <= o->mroom)
        return 0;
    unsigned long long extra = o->mbytes - o->mroom;
    int rc = reserve(o, path, (size_t)extra, d);
    if (!rc)
        o->mroom += (extra + o->bsize - 1) / o->bsize * o->bsize;
    return rc;
}

/* Whether a file can be renamed onto final_path in the existing
** directory (fsutil.h); nothing is checked in a directory this run
** makes. */
static int check_dest(dsf_gen_out *o, const char *final_path, dsf_diags *d)
{
    size_t n = strlen(o->dir);
    bool in_dir = !strncmp(final_path, o->dir, n) && final_path[n] == '/';
    return dsf_check_dest_file(final_path,
                               in_dir && o->dir_checked ? &o->dir_st : NULL,
                               d);
}

/* Stages data for final_path (owned by o from now on) as a temporary
** file, unless the file already holds these bytes: same inputs, same
** bytes, and its mtime does not change. fresh: final_path is in a
** directory this run made, with no earlier file to compare with. */
static int stage(dsf_gen_out *o, char *final_path, const char *data,
                 size_t len, bool fresh, dsf_diags *d)
{
    dsf_xgrow((void **)&o->w, &o->cap, o->nw + 1, sizeof *o->w);
    pending *w = &o->w[o->nw++];
    w->final_path = final_path;
    w->tmp_path = NULL;
    size_t n = strlen(o->dir);
    if (o->stage && !strncmp(final_path, o->dir, n) && final_path[n] == '/') {
        /* a new directory: the file's own name, in the staging one */
        char *path = dsf_xasprintf("%s%s", o->stage, final_path + n);
        bool taken;
        int rc = reserve(o, final_path, len, d);
        if (rc) {
            free(path);
            return rc;
        }
        rc = dsf_write_new(path, data, len, &taken, d);
        if (!rc && taken) /* two files of the run with one name: gen's */
            rc = dsf_write_temp(&w->tmp_path, path, data, len, false, d);
        if (rc || taken)  /* check of the names refuses the run */
            free(path);
        else
            w->tmp_path = path;
        return rc;
    }
    if (!fresh) {
        int rc = check_dest(o, final_path, d);
        if (rc)
            return rc;
        if (dsf_file_equals(final_path, data, len))
            return 0;
    }
    /* (--report's page may be elsewhere) */
    int rc = !strncmp(final_path, o->dir, n) && final_path[n] == '/'
                 ? reserve(o, final_path, len, d)
                 : 0;
    if (rc)
        return rc;
    return dsf_write_temp(&w->tmp_path, final_path, data, len, false, d);
}

/* The merged manifest is printed once with a marker where this run's
** variants go: an array element of "variants" (the last top-level key)
** that is a string, which no entry is (entries are objects). */
#define ENTRY_MARK "\x01"
#define ENTRY_MARK_TEXT "\n    \"\\u0001\""

/* Splits the text of the merged manifest m into what precedes this
** run's entries (*head, the returned length) and what follows them
** (*tail, owned by the caller). */
static size_t split_manifest(const cJSON *m, const char *pname, char **text,
                             char **tail)
{
    cJSON *vs = cJSON_GetObjectItemCaseSensitive(m, "variants");
    for (cJSON *e = vs ? vs->child : NULL; e; e = e->next) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "profile");
        if (cJSON_IsString(p) && !strcmp(p->valuestring, pname)) {
            cJSON_ReplaceItemViaPointer(vs, e,
                                        cJSON_CreateString(ENTRY_MARK));
            break;
        }
    }
    *text = dsf_json_print(m, true);
    char *at = NULL;
    for (char *k = strstr(*text, "\n  \"variants\": "); k;
         k = strstr(k + 1, "\n  \"variants\": "))
        at = k;
    at = at ? strstr(at, ENTRY_MARK_TEXT) : NULL;
    if (!at) { /* no variants: the whole text, nothing after */
        *tail = dsf_xstrdup("");
        return strlen(*text);
    }
    *tail = dsf_xstrdup(at + strlen(ENTRY_MARK_TEXT));
    return (size_t)(at - *text);
}

/* Before any variant is evaluated: an existing directory can take this
** run's files (it is one, this process may write in it, manifest.json
** and --report's page are not directories), and how much free space its
** file system has. */
static int check_out(gen_run *ru, dsf_gen_out *o, dsf_diags *d)
{
    int rc = 0;
    if (!o->stage) {
        rc = dsf_check_dest_dir(o->dir, &o->dir_st, d);
        o->dir_checked = !rc;
        if (!rc)
            rc = check_dest(o, o->mpath, d);
    }
    if (!rc && ru->r->report) {
        char *up = dsf_path_dirname(ru->r->report);
        struct stat st;
        dsf_out_sweep_file_debris(ru->r->report, d);
        rc = dsf_check_dest_dir(up, &st, d);
        if (!rc)
            rc = dsf_check_dest_file(ru->r->report, &st, d);
        free(up);
    }
    if (!rc && !dsf_free_space(o->stage ? o->stage : o->dir, &o->space,
                               &o->bsize))
        o->bsize = 0;
    return rc;
}

/* The outermost directory of o->dir that does not exist yet (o->top), so
** that a run that fails leaves no directory it made. */
static void note_top(dsf_gen_out *o)
{
    for (char *p = dsf_xstrdup(o->dir); p;) {
        bool missing = access(p, F_OK) != 0 && errno == ENOENT;
        if (!missing) {
            free(p);
            break;
        }
        free(o->top);
        o->top = p;
        p = dsf_path_dirname(p);
        if (!strcmp(p, o->top)) {
            free(p);
            break;
        }
    }
}

/* Appends p (owned) to the directories the run makes. */
static void made(dsf_gen_out *o, char *p)
{
    dsf_xgrow((void **)&o->made, &o->capmade, o->nmade + 1,
              sizeof *o->made);
    o->made[o->nmade++] = p;
}

/* The directories the run makes (o->made): a staged new directory is made
** by the final rename, so its missing parents (below parent); otherwise
** o->dir and its parents up to o->top. */
static void list_made(dsf_gen_out *o, const char *parent)
{
    for (char *p = parent ? dsf_xstrdup(parent) : NULL; p;) {
        if (access(p, F_OK) == 0 || errno != ENOENT) {
            free(p);
            break;
        }
        made(o, p);
        char *up = dsf_path_dirname(p);
        p = strcmp(up, p) ? up : (free(up), NULL);
    }
    for (char *p = o->top && !parent ? dsf_xstrdup(o->dir) : NULL; p;) {
        made(o, p);
        p = strcmp(p, o->top) ? dsf_path_dirname(p) : NULL;
    }
}

/* A new directory: its parent made, what interrupted runs left beside it
** removed, and the staging directory .BASE.tmp-PID made in parent. */
static int make_stage(dsf_gen_out *o, const char *parent, const char *base,
                      dsf_diags *d)
{
    int rc = dsf_mkdir_p(parent, NULL, d);
    if (!rc) /* what interrupted runs left beside it */
        dsf_out_sweep_debris(o->dir, parent, base, d);
    if (rc)
        return rc;
    char *stage = dsf_xasprintf("%s/.%s.tmp-%ld", parent, base,
                                dsf_temp_pid());
    if (mkdir(stage, 0755) != 0) {
        rc = dsf_diag_error(d, DSF_EINPUT, o->dir, 0, 0,
                            "cannot create its staging directory %s: %s",
                            stage, strerror(errno));
        free(stage);
        return rc;
    }
    o->stage = stage;
    o->stage_len = strlen(stage);
    return 0;
}

/* An existing directory (or one made now): locked, and under the lock
** what interrupted runs left in it removed. */
static int take_dir(dsf_gen_out *o, dsf_diags *d)
{
    int rc = dsf_mkdir_p(o->dir, NULL, d);
    if (!rc)
        rc = dsf_out_lock_dir(o->dir, &o->lock, d);
    if (rc)
        return rc;
    char *name = dsf_out_last_name(o->dir);
    char *up = name ? dsf_out_parent(o->dir) : NULL;
    dsf_out_sweep_debris(o->dir, up, name, d);
    free(name);
    free(up);
    return 0;
}

/* The manifest's temporary file, started with what is known before any
** variant: the run's description, the other profiles' entries (merged
** from the manifest already there), up to where this run's go. */
static int start_manifest(gen_run *ru, dsf_gen_out *o, const char *pname,
                          dsf_diags *d)
{
    cJSON *old = NULL;
    int rc = 0;
    if (!o->stage) /* (a staged one is merged at the end) */
        rc = dsf_out_read_manifest(o->mpath, &old, d);
    if (rc)
        return rc;
    cJSON *m = dsf_gen_manifest_head(ru);
    cJSON *vs = cJSON_AddArrayToObject(m, "variants");
    if (ru->nv) { /* a marker for this run's entries */
        cJSON *mark = cJSON_CreateObject();
        cJSON_AddStringToObject(mark, "profile", pname);
        cJSON_AddStringToObject(mark, "name", "");
        cJSON_AddItemToArray(vs, mark);
    }
    dsf_manifest_merge(m, old, pname);
    cJSON_Delete(old);
    char *text;
    size_t head = split_manifest(m, pname, &text, &o->mtail);
    cJSON_Delete(m);
    rc = manifest_room(o, o->mpath, head, d);
    if (!rc && o->stage) {
        o->mtmp = dsf_xasprintf("%s/manifest.json", o->stage);
        bool taken; /* not in a directory just made */
        rc = dsf_write_new(o->mtmp, text, head, &taken, d);
        if (!rc && taken)
            rc = dsf_diag_error(d, DSF_EINPUT, o->mtmp, 0, 0,
                                "cannot create: %s", strerror(EEXIST));
        if (rc) {
            free(o->mtmp);
            o->mtmp = NULL;
        }
    } else if (!rc) {
        rc = dsf_write_temp(&o->mtmp, o->mpath, text, head, false, d);
    }
    free(text);
    if (!rc) {
        o->mf = fopen(o->mtmp, "a");
        if (!o->mf)
            rc = dsf_diag_error(d, DSF_EINPUT, o->mtmp, 0, 0,
                                "cannot open: %s", strerror(errno));
    }
    return rc;
}

int dsf_gen_out_begin(gen_run *ru, dsf_diags *d)
{
    const char *pname = ru->profile->chain[ru->profile->nchain - 1].name;
    dsf_gen_out *o = dsf_xcalloc(1, sizeof *o);
    ru->out = o;
    o->dir = ru->r->outdir;
    o->lock = -1;
    note_top(o);
    /* A new directory is written as a staging one beside it, renamed
    ** into place at the end. Not with --report, whose page may be meant
    ** for the new directory: its path names it, not the staging one. */
    struct stat st; /* (not a dangling symbolic link either) */
    char *base = o->top && !ru->r->report && lstat(o->dir, &st) != 0 &&
                         errno == ENOENT
                     ? dsf_out_last_name(o->dir)
                     : NULL;
    char *parent = base ? dsf_out_parent(o->dir) : NULL;
    list_made(o, parent);
    live_out = o;
    live_from = 0;
    live_owner = true;
    dsf_limits_backstop_cleanup(unlink_on_backstop);
    int rc = base ? make_stage(o, parent, base, d) : take_dir(o, d);
    free(parent);
    free(base);
    o->mpath = dsf_xasprintf("%s/manifest.json", o->dir);
    if (!rc) /* before any variant: what the renames need */
        rc = check_out(ru, o, d);
    if (!rc)
        rc = start_manifest(ru, o, pname, d);
    return rc;
}

/* Writes the entries' text gathered so far to the manifest's temporary
** file (when its file system has room for it). */
static int flush_entries(dsf_gen_out *o, dsf_diags *d)
{
    int rc = 0;
    if (o->mtext.len) {
        rc = manifest_room(o, o->mpath, o->mtext.len, d);
        if (!rc)
            fwrite(o->mtext.data, 1, o->mtext.len, o->mf);
    }
    dsf_buf_clear(&o->mtext);
    return rc;
}

/* Appends entry to the manifest's text, indented as an element of
** "variants". */
static int put_entry(dsf_gen_out *o, const cJSON *entry, dsf_diags *d)
{
    dsf_buf_puts(&o->mtext, o->nentries++ ? ",\n    " : "\n    ");
    dsf_json_write_at(&o->mtext, entry, 2);
    if (!o->hold && o->mtext.len >= 1u << 16)
        return flush_entries(o, d);
    return 0;
}

void dsf_gen_out_forked(gen_run *ru)
{
    if (!ru->out)
        return;
    live_from = ru->out->nw;
    live_owner = false;
}

void dsf_gen_out_unlink_since(gen_run *ru, size_t from)
{
    for (size_t i = from; ru->out && i < ru->out->nw; i++)
        if (ru->out->w[i].tmp_path)
            unlink(ru->out->w[i].tmp_path);
}

size_t dsf_gen_out_nstaged(const gen_run *ru)
{
    return ru->out ? ru->out->nw : 0;
}

void dsf_gen_out_staged(const gen_run *ru, size_t k, const char **final_path,
                        const char **tmp_path)
{
    *final_path = ru->out->w[k].final_path;
    *tmp_path = ru->out->w[k].tmp_path;
}

void dsf_gen_out_adopt(gen_run *ru, char *final_path, char *tmp_path)
{
    dsf_gen_out *o = ru->out;
    dsf_xgrow((void **)&o->w, &o->cap, o->nw + 1, sizeof *o->w);
    o->w[o->nw++] = (pending){final_path, tmp_path};
}

dsf_buf *dsf_gen_out_entries(gen_run *ru, bool hold)
{
    if (!ru->out)
        return NULL;
    ru->out->hold = hold;
    return &ru->out->mtext;
}

int dsf_gen_out_add_entry(gen_run *ru, const char *text, size_t len,
                          dsf_diags *d)
{
    dsf_gen_out *o = ru->out;
    dsf_buf_add(&o->mtext, text, len);
    o->nentries++;
    if (o->mtext.len >= 1u << 16)
        return flush_entries(o, d);
    return 0;
}

int dsf_gen_out_variant(gen_run *ru, gen_variant *v, dsf_diags *d)
{
    const dsf_gen_request *r = ru->r;
    dsf_gen_out *o = ru->out;
    int rc = 0;
    /* A run with errors writes nothing: nothing to stage. */
    bool failed = dsf_diags_count(d, DSF_ERROR) > 0;
    if (o && !failed) {
        const char *pname = ru->profile->chain[ru->profile->nchain - 1].name;
        for (size_t k = 0; k < v->nemitted && !rc; k++) {
            dsf_emitted *e = &v->emitted[k];
            rc = stage(o, dsf_xasprintf("%s/%s", o->dir, e->file), e->text,
                       e->len, o->top != NULL, d);
        }
        if (!rc)
            rc = stage(o, dsf_xasprintf("%s/%s-%s.json", o->dir, pname,
                                        v->name),
                       v->bytes, strlen(v->bytes), o->top != NULL, d);
    }
    /* The emitters' texts are on disk (or not to be written): the
    ** manifest needs only their names and hashes. */
    for (size_t k = 0; k < v->nemitted; k++) {
        free(v->emitted[k].text);
        v->emitted[k].text = NULL;
    }
    if (!rc && !failed && (o || r->report)) {
        cJSON *e = dsf_gen_manifest_entry(ru, v);
        if (o)
            rc = put_entry(o, e, d);
        if (r->report) {
            if (!ru->entries)
                ru->entries = cJSON_CreateArray();
            cJSON_AddItemToArray(ru->entries, e);
        } else {
            cJSON_Delete(e);
        }
    }
    /* What is left is what the summary table and the footer need. */
    cJSON_Delete(v->params);
    v->params = NULL;
    cJSON_Delete(v->extra);
    v->extra = NULL;
    cJSON_Delete(v->findings);
    v->findings = NULL;
    cJSON_Delete(v->differs);
    v->differs = NULL;
    if (!r->report) { /* the page draws every variant's document */
        free(v->bytes);
        v->bytes = NULL;
    }
    return rc;
}

/* Adds "emitted" (the run emitters' files) as the manifest's last
** top-level key: in the text after this run's entries, before its
** closing brace. */
static void tail_add_emitted(gen_run *ru, dsf_gen_out *o)
{
    cJSON *a = dsf_gen_run_emitted_json(ru);
    char *close = a ? strrchr(o->mtail, '}') : NULL;
    if (!close) {
        cJSON_Delete(a);
        return;
    }
    char *text = dsf_json_print(a, true);
    cJSON_Delete(a);
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_add(&b, o->mtail, (size_t)(close - o->mtail));
    while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' '))
        b.len--;
    dsf_buf_puts(&b, ",\n  \"emitted\": ");
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n')
        n--;
    for (size_t i = 0; i < n; i++) { /* one level deeper */
        dsf_buf_add(&b, &text[i], 1);
        if (text[i] == '\n')
            dsf_buf_puts(&b, "  ");
    }
    dsf_buf_puts(&b, "\n");
    dsf_buf_puts(&b, close);
    free(text);
    free(o->mtail);
    o->mtail = dsf_buf_take(&b);
}

int dsf_gen_out_run_files(gen_run *ru, dsf_diags *d)
{
    dsf_gen_out *o = ru->out;
    if (!o)
        return 0;
    int rc = 0;
    for (size_t k = 0; k < ru->nrun_emitted && !rc; k++) {
        dsf_emitted *e = &ru->run_emitted[k];
        rc = stage(o, dsf_xasprintf("%s/%s", o->dir, e->file), e->text,
                   e->len, o->top != NULL, d);
    }
    for (size_t k = 0; k < ru->nrun_emitted; k++) {
        free(ru->run_emitted[k].text);
        ru->run_emitted[k].text = NULL;
    }
    if (!rc)
        tail_add_emitted(ru, o);
    return rc;
}

/* Finishes manifest.json's temporary file, and stages it (and --report's
** page) after the variants' files. */
static int finish_manifest(gen_run *ru, dsf_gen_out *o, dsf_diags *d)
{
    int rc = flush_entries(o, d);
    if (!rc)
        rc = manifest_room(o, o->mpath, strlen(o->mtail), d);
    if (!rc)
        fputs(o->mtail, o->mf);
    int bad = ferror(o->mf);
    bad |= fclose(o->mf) != 0;
    o->mf = NULL;
    dsf_xgrow((void **)&o->w, &o->cap, o->nw + 1, sizeof *o->w);
    pending *w = &o->w[o->nw++];
    w->final_path = o->mpath;
    w->tmp_path = o->mtmp;
    o->mpath = o->mtmp = NULL;
    if (rc)
        return rc;
    if (bad)
        return dsf_diag_error(d, DSF_EINPUT, w->tmp_path, 0, 0,
                              "cannot write the manifest: %s",
                              strerror(errno));
    if (!in_stage(o, w->tmp_path) &&
        dsf_out_same_files(w->tmp_path, w->final_path)) {
        unlink(w->tmp_path);
        free(w->tmp_path);
        w->tmp_path = NULL;
    }
    if (!ru->r->report)
        return 0;
    /* --report: written with the rest, all or nothing. The page shows
    ** this run's variants, before the merge with the directory's earlier
    ** manifest. */
    cJSON *m = dsf_gen_manifest(ru);
    char *page = dsf_gen_report_page(ru, m);
    cJSON_Delete(m);
    rc = stage(o, dsf_xstrdup(ru->r->report), page, strlen(page), false,
                   d);
    free(page);
    return rc;
}

/* A new directory's files are in the staging one: it becomes dir. When
** dir appeared meanwhile (another run made it), the files are moved in
** one by one instead, under dir's lock, and the manifest is merged with
** the one found there, as if this run had started after the other. */
static int place_stage(gen_run *ru, dsf_gen_out *o, dsf_diags *d)
{
    size_t n = strlen(o->dir);
    while (n > 1 && o->dir[n - 1] == '/')
        n--;
    char *dir = dsf_xstrndup(o->dir, n);
    int moved = rename(o->stage, dir) == 0 ? 0 : errno;
    free(dir);
    if (!moved) {
        for (size_t i = 0; i < o->nw; i++)
            if (in_stage(o, o->w[i].tmp_path)) {
                free(o->w[i].tmp_path);
                o->w[i].tmp_path = NULL;
            }
        free(o->stage);
        o->stage = NULL;
        return 0;
    }
    if (moved != EEXIST && moved != ENOTEMPTY)
        return dsf_diag_error(d, DSF_EINPUT, o->dir, 0, 0,
                              "cannot rename the finished directory into "
                              "place: %s", strerror(moved));
    /* The manifest is the last file staged (finish_manifest). */
    pending *m = &o->w[o->nw - 1];
    int rc = dsf_out_lock_dir(o->dir, &o->lock, d);
    cJSON *old = NULL, *mine = NULL;
    char *text = NULL;
    size_t len;
    if (!rc)
        rc = dsf_out_read_manifest(m->final_path, &old, d);
    if (!rc)
        rc = dsf_read_file(&text, &len, m->tmp_path, DSF_JSON_MAX_FILE, d);
    if (!rc)
        rc = dsf_manifest_parse(&mine, m->tmp_path, text, len, d);
    free(text);
    if (!rc) {
        const dsf_profile *p = ru->profile;
        dsf_manifest_merge(mine, old, p->chain[p->nchain - 1].name);
        char *merged = dsf_json_print(mine, true);
        char *tmp;
        rc = dsf_write_temp(&tmp, m->final_path, merged, strlen(merged),
                            false, d);
        free(merged);
        if (!rc) {
            unlink(m->tmp_path);
            free(m->tmp_path);
            m->tmp_path = tmp; /* renamed with the rest, last */
        }
    }
    cJSON_Delete(old);
    cJSON_Delete(mine);
    return rc;
}

/* What a rename did to its destination, for undoing it. */
enum { NEW_FILE, KEPT_OLD, LOST_OLD, UNTOUCHED };

/* Renames every staged file into place, the manifest last. Each file a
** rename replaces stays under a second name (a hard link) until the last
** rename is done: when one fails (what the checks could not foresee: a
** mount point, an I/O error), the renames before it are undone, the old
** files put back and the new ones removed, so the run still changes
** nothing (but for a replaced file whose second name could not be
** made). */
static int place_all(dsf_gen_out *o, dsf_diags *d)
{
    int *did = dsf_xcalloc(o->nw + 1, sizeof *did);
    char **old = dsf_xcalloc(o->nw + 1, sizeof *old);
    int rc = 0;
    size_t i;
    for (i = 0; i < o->nw; i++) {
        pending *w = &o->w[i];
        did[i] = UNTOUCHED;
        if (!w->tmp_path)
            continue; /* unchanged */
        if ((old[i] = dsf_link_temp(w->final_path)) != NULL)
            did[i] = KEPT_OLD;
        else
            did[i] = errno == ENOENT ? NEW_FILE : LOST_OLD;
        if (rename(w->tmp_path, w->final_path) != 0) {
            rc = dsf_diag_error(d, DSF_EINPUT, w->final_path, 0, 0,
                                "cannot rename the finished file into "
                                "place: %s; the files placed before it "
                                "are put back", strerror(errno));
            if (old[i])
                unlink(old[i]); /* (still in place) */
            break;
        }
        free(w->tmp_path);
        w->tmp_path = NULL;
    }
    for (size_t j = rc ? i : 0; rc && j-- > 0;) {
        if (did[j] == KEPT_OLD)
            rename(old[j], o->w[j].final_path);
        else if (did[j] == NEW_FILE)
            unlink(o->w[j].final_path);
    }
    for (size_t j = 0; j < o->nw; j++) {
        if (old[j] && !rc)
            unlink(old[j]);
        free(old[j]);
    }
    free(old);
    free(did);
    return rc;
}

int dsf_gen_out_finish(gen_run *ru, int rc, dsf_diags *d)
{
    dsf_gen_out *o = ru->out;
    if (!o)
        return rc;
    if (!rc && o->mf)
        rc = finish_manifest(ru, o, d);
    if (!rc && o->stage)
        rc = place_stage(ru, o, d);
    /* Everything is on disk: before the first rename, every destination
    ** is checked again (a directory made where a file goes meanwhile),
    ** so that a rename that cannot work fails the run with nothing
    ** changed. */
    for (size_t i = 0; i < o->nw && !rc; i++)
        if (o->w[i].tmp_path && !in_stage(o, o->w[i].tmp_path))
            rc = check_dest(o, o->w[i].final_path, d);
    if (!rc)
        rc = place_all(o, d);
    /* An error anywhere: no file of this run is visible. */
    if (o->mf)
        fclose(o->mf);
    if (o->mtmp)
        unlink(o->mtmp);
    for (size_t i = 0; i < o->nw; i++) {
        if (o->w[i].tmp_path)
            unlink(o->w[i].tmp_path);
        free(o->w[i].tmp_path);
        free(o->w[i].final_path);
    }
    free(o->w);
    /* A worker killed while writing a file left one nobody recorded: it
    ** carries this process's id (or is in its staging directory). */
    if (rc && !o->stage && o->lock >= 0)
        dsf_out_sweep_own(o->dir);
    free(o->mpath);
    free(o->mtmp);
    free(o->mtail);
    dsf_buf_free(&o->mtext);
    if (o->lock >= 0)
        close(o->lock);
    if (o->stage) { /* empty now, unless a worker died writing in it */
        size_t n;
        if (rmdir(o->stage) != 0)
            dsf_out_remove_stage(o->stage, &n);
    }
    free(o->stage);
    for (size_t i = 0; rc && i < o->nmade; i++) /* dir, then parents */
        if (rmdir(o->made[i]) != 0)
            break;
    dsf_limits_backstop_cleanup(NULL);
    live_out = NULL;
    for (size_t i = 0; i < o->nmade; i++)
        free(o->made[i]);
    free(o->made);
    free(o->top);
    free(o);
    ru->out = NULL;
    return rc;
}
