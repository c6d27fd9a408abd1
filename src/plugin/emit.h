/*
** emit.h -- the emitters plugins declare (emit.c): files written next to
** each variant's JSON by `gen --emit NAME,...`, their text made by a Lua
** function of the finished variant. The core knows an emitter by its
** name and file name patterns only; what the text says is the plugin's.
** See contrib/docs/plugins.md, "Emitters".
*/
#ifndef DSF_PLUGIN_EMIT_H
#define DSF_PLUGIN_EMIT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "plugin/plugin.h"

typedef struct dsf_emitter {
    char *plugin;
    char *name;        /* unique across plugins: lower-case, digits, '-' */
    char *summary;     /* one line */
    char **files;      /* file name patterns ({profile}, {variant});
                       ** none for a run emitter */
    size_t nfiles;
    bool per_run;      /* scope = "run": one set of files per run, made
                       ** by emit(run, ctx) after every variant */
    int ref;           /* the emit function (registry reference) */
    int row_ref;       /* a run emitter's row(v, ctx), or LUA_NOREF */
    char *what;        /* "emitter NAME (plugin P)", for messages */
} dsf_emitter;

/* The declared emitters, plugin order then declaration order (borrowed). */
const dsf_emitter *dsf_plugins_emitters(const dsf_plugins *p, size_t *n);

/* A finished variant as the emitters see it. All borrowed. */
typedef struct dsf_emit_view {
    const char *profile;
    const char *name;
    const char *tier;          /* "" without tiers */
    const char *file;          /* the variant's JSON file name */
    const char *dir;           /* -o's directory as given, or NULL */
    const cJSON *doc;          /* the final config */
    const cJSON *params;
    const cJSON *summary;      /* the merged plugin summary, or NULL */
    const char *sha256;        /* of the variant's JSON bytes (as -o would
                               ** write them, also in a dry run) */
    const char *text;          /* those bytes (borrowed) */
    size_t text_len;
    const char *target;
    const char *train_cmd;     /* --train-cmd, or NULL */
    const cJSON *options;      /* --emit-opt KEY=VALUE: an object of
                               ** strings, or NULL */
    bool hash;                 /* the files' sha256 are wanted (a manifest) */
} dsf_emit_view;

/* One emitted file. */
typedef struct dsf_emitted {
    const dsf_emitter *by;     /* borrowed from the plugins */
    char *file;                /* file name (no directory) */
    char *text;                /* NULL once written (or not to be) */
    size_t len;
    char sha256[65];           /* "" when the view did not want hashes */
} dsf_emitted;

/* Expands an emitter's file name pattern for a variant (caller frees). */
char *dsf_emit_file_name(const char *pattern, const char *profile,
                         const char *variant);

/* Runs the emitters sel[0..nsel) (indexes into dsf_plugins_emitters) on
** a finished variant, in that order, appending their files to *out and *nout
** (caller frees each with dsf_emitted_free, then the array). A run
** emitter writes no file here: its row function, when it has one, makes
** rows[k] for sel[k] (the compact JSON text of what it returned, caller
** frees; NULL for the others; rows may be NULL when no run emitter is
** selected). The
** emitters of one plugin share ctx.cache for the variant. An emitter
** that raises, or returns something else than one string per declared
** file, is that plugin's error (DSF_ESCRIPT naming plugin and emitter);
** dsforge.fail in it is an input error (DSF_EINPUT). The texts are kept
** only when v->dir is set (they will be written), their sha256 only when
** v->hash: a dry run pays for neither. */
int dsf_plugins_emit(dsf_plugins *p, const dsf_emit_view *v,
                     const size_t *sel, size_t nsel, dsf_emitted **out,
                     size_t *nout, char **rows, dsf_diags *d);

/* A whole run as its run emitters see it. All borrowed. */
typedef struct dsf_emit_run_variant {
    const char *name;
    const char *tier;          /* "" without tiers */
    const char *sha256;        /* of the variant's JSON bytes */
    const char *row;           /* the emitter's row for it (JSON), or NULL */
} dsf_emit_run_variant;

typedef struct dsf_emit_run {
    const char *profile;
    const char *dir;           /* -o's directory as given, or NULL */
    const char *target;
    const char *train_cmd;     /* --train-cmd, or NULL */
    const cJSON *options;      /* --emit-opt, or NULL */
    bool hash;                 /* the files' sha256 are wanted */
    size_t nvariants;
    /* variant i of the run (i < nvariants), for emitter k of sel */
    void (*variant)(void *ctx, size_t i, size_t k, dsf_emit_run_variant *out);
    void *ctx;
} dsf_emit_run;

/* Runs run emitter sel (an index into dsf_plugins_emitters) once on the
** whole run: emit(run, ctx) returns a list of {file = NAME, text = TEXT},
** appended to *out and *nout as dsf_plugins_emit does. A name must be a
** plain file name (letters, digits, '.', '_', '-'; not starting with
** '.') that starts with the emitter's name followed by '.' or '-', and
** appear once: otherwise, or when emit raises or returns another shape,
** DSF_ESCRIPT naming the emitter; dsforge.fail in it is DSF_EINPUT. */
int dsf_plugins_emit_run(dsf_plugins *p, const dsf_emit_run *run,
                         size_t sel, dsf_emitted **out, size_t *nout,
                         dsf_diags *d);

void dsf_emitted_free(dsf_emitted *e);

#endif
