/*
** prov.h -- provenance: which layer set, overrode or deleted each value.
*/
#ifndef DSF_PROV_H
#define DSF_PROV_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

typedef enum dsf_prov_action {
    DSF_PROV_SET,       /* a new value */
    DSF_PROV_OVERRIDE,  /* replaced an earlier layer's value */
    DSF_PROV_DELETE     /* removed the value */
} dsf_prov_action;

/* A layer of the merge, lowest first. Strings are borrowed for the
** lifetime of the provenance record that refers to it. */
typedef struct dsf_layer {
    const char *kind;   /* "profile", "tier", "file", "edit", "plugin" */
    const char *label;  /* e.g. "profile 8xa100", "-f team.json" */
    const char *file;   /* source file or "argument #4"; may be NULL */
    int line, col;      /* where the layer's value comes from, if known */
} dsf_layer;

typedef struct dsf_prov_event {
    char *path;            /* canonical path (jpath syntax) */
    dsf_prov_action action;
    const dsf_layer *layer;
    int line, col;         /* of this value, when known (else layer's) */
    char *value;           /* compact JSON; NULL for a delete */
} dsf_prov_event;

typedef struct dsf_prov {
    dsf_prov_event *ev;
    size_t len, cap;
    bool no_values; /* record events without their value's text (for a
                    ** caller that never shows it: gen without --why) */
    size_t *slots;  /* path -> 1 + its last event: dsf_prov_origin looks
                    ** up the path's prefixes, not every event */
    size_t nslots, used;
} dsf_prov;

#define DSF_PROV_INIT {NULL, 0, 0, false, NULL, 0, 0}

/* Records an event (copies path and the JSON text of value, if any,
** unless p->no_values). */
void dsf_prov_add(dsf_prov *p, const char *path, dsf_prov_action action,
                  const dsf_layer *layer, int line, int col,
                  const cJSON *value);

/* The last event for path or for its nearest recorded ancestor (the
** layer that is responsible for the value now), or NULL. Borrowed. */
const dsf_prov_event *dsf_prov_origin(const dsf_prov *p, const char *path);

/* As dsf_prov_origin, among the events whose layer has a file (a
** profile, a -f file, an edit's argument): for a value a plugin's
** resolver set (no file), the layer that wrote what it replaced. */
const dsf_prov_event *dsf_prov_origin_located(const dsf_prov *p,
                                              const char *path);

/* The last event for a descendant of path, or NULL: the layer that made
** a value (an object) no event names itself, such as the edit
** a.b=1 making "a". Borrowed. */
const dsf_prov_event *dsf_prov_maker(const dsf_prov *p, const char *path);

/* Appends where e's value comes from, as --why prints it: the layer's
** label and, when known, " (file:line:col)". */
void dsf_prov_where(dsf_buf *out, const dsf_prov_event *e);

/* "set", "override" or "delete". */
const char *dsf_prov_verb(dsf_prov_action action);

/* True when event path a is path b, an ancestor or a descendant of it. */
int dsf_prov_related(const char *a, const char *b);

void dsf_prov_free(dsf_prov *p);

#endif
