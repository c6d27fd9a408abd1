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
    char **files;      /* file name patterns ({profile}, {variant}) */
    size_t nfiles;
    int ref;           /* the emit function (registry reference) */
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
    const char *target;
    const char *train_cmd;     /* --train-cmd, or NULL */
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
** (caller frees each with dsf_emitted_free, then the array). The
** emitters of one plugin share ctx.cache for the variant. An emitter
** that raises, or returns something else than one string per declared
** file, is that plugin's error (DSF_ESCRIPT naming plugin and emitter);
** dsforge.fail in it is an input error (DSF_EINPUT). The texts are kept
** only when v->dir is set (they will be written), their sha256 only when
** v->hash: a dry run pays for neither. */
int dsf_plugins_emit(dsf_plugins *p, const dsf_emit_view *v,
                     const size_t *sel, size_t nsel, dsf_emitted **out,
                     size_t *nout, dsf_diags *d);

void dsf_emitted_free(dsf_emitted *e);

#endif
