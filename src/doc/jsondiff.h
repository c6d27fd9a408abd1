/*
** jsondiff.h -- a semantic diff of two JSON documents: the leaves that
** were added, removed or changed, by canonical path (doc/jpath syntax).
**
** Object key order is ignored (keys are visited in byte order, so the
** result is deterministic); numbers compare by value (5e8 equals
** 500000000); arrays compare element by element. A leaf is a scalar, an
** empty object or an empty array; when one side has a container where the
** other has something else, the whole value at that path is one change.
*/
#ifndef DSF_JSONDIFF_H
#define DSF_JSONDIFF_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

typedef enum dsf_jd_kind {
    DSF_JD_ADDED,    /* only in b */
    DSF_JD_REMOVED,  /* only in a */
    DSF_JD_CHANGED   /* in both, different */
} dsf_jd_kind;

typedef struct dsf_jd_entry {
    dsf_jd_kind kind;
    char *path;        /* canonical path; "" for the root */
    const cJSON *a;    /* a's value, NULL when added; borrowed from a */
    const cJSON *b;    /* b's value, NULL when removed; borrowed from b */
} dsf_jd_entry;

typedef struct dsf_jsondiff {
    dsf_jd_entry *items;   /* in path order (keys sorted, indices ascending) */
    size_t len, cap;
} dsf_jsondiff;

#define DSF_JSONDIFF_INIT {NULL, 0, 0}

/* Appends the differences between a and b to out (which the caller
** initialises with DSF_JSONDIFF_INIT and frees with dsf_jsondiff_free).
** ignore holds nignore canonical paths: a difference at one of them or
** below it is left out. The entries borrow a and b: keep both alive while
** out is used. */
void dsf_jsondiff_run(dsf_jsondiff *out, const cJSON *a, const cJSON *b,
                      const char *const *ignore, size_t nignore);

void dsf_jsondiff_free(dsf_jsondiff *d);

/* True when a and b are the same JSON value by the rules above. */
bool dsf_json_equal(const cJSON *a, const cJSON *b);

/* True when path is prefix or lies below it (prefix "" matches every
** path). Both are canonical paths. */
bool dsf_jpath_under(const char *path, const char *prefix);

/* A new JSON array of the paths where a and b differ (caller owns it). */
cJSON *dsf_jsondiff_paths(const cJSON *a, const cJSON *b);

#endif
