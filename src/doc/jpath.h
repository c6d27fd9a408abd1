/*
** jpath.h -- config paths and the command-line edits that use them.
**
** A path is dotted keys: `zero_optimization.offload_param.device`. Array
** elements are addressed with `[N]` (`optimizer.params.betas[0]`), and a
** key that contains dots or brackets with `["key.with.dots"]`.
*/
#ifndef DSF_JPATH_H
#define DSF_JPATH_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

/* The deepest a config may nest: a value at the end of a path of this
** many steps, or a path plus the nesting of its value, is as deep as a
** config can be (a script's tables are converted up to this depth,
** src/lua/conv.h). Deeper edits are refused when they are parsed. */
#define DSF_JPATH_MAX_DEPTH 200

typedef struct dsf_jstep {
    char *key;    /* object member, or NULL for an array index */
    long index;   /* array index when key is NULL */
} dsf_jstep;

typedef struct dsf_jpath {
    dsf_jstep *steps;
    size_t len;
} dsf_jpath;

/* Parses text. On error returns -1 and *err (caller frees). */
int dsf_jpath_parse(dsf_jpath *out, const char *text, char **err);
void dsf_jpath_free(dsf_jpath *p);

/* Appends the canonical text of a path (the first n steps) to out. */
void dsf_jpath_format(dsf_buf *out, const dsf_jpath *p, size_t n);

/* Appends a key as a path step (quoted when needed), with a leading dot
** when out is not empty. */
void dsf_jpath_append_key(dsf_buf *out, const char *key);

/* The node at p inside doc, or NULL (borrowed). */
cJSON *dsf_jpath_get(cJSON *doc, const dsf_jpath *p);

/* Edit operations. */
typedef enum dsf_edit_op {
    DSF_EDIT_SET,    /* path=value    */
    DSF_EDIT_ADD,    /* +path=value   */
    DSF_EDIT_DELETE  /* ~path         */
} dsf_edit_op;

typedef struct dsf_edit {
    dsf_edit_op op;
    dsf_jpath path;
    char *path_text;
    cJSON *value;   /* owned; NULL for delete */
    char *arg;      /* the argument as written */
    int argno;      /* its position in argv */
} dsf_edit;

/* Parses one edit: `path=value`, `+path=value`, `~path`. The value is JSON
** when it parses as JSON, else a string. -1 and *err on error, including
** a path whose steps plus the nesting of its value exceed
** DSF_JPATH_MAX_DEPTH. */
int dsf_edit_parse(dsf_edit *out, const char *arg, int argno, char **err);
void dsf_edit_free(dsf_edit *e);

/* Applies e to the root object doc. On error returns -1 with *err (caller
** frees): path through a non-object, +path on an existing key, ~path on a
** missing one, an index out of range. *touched is the node that now holds
** the value (NULL for a delete). */
int dsf_edit_apply(cJSON *doc, const dsf_edit *e, cJSON **touched,
                   char **err);

#endif
