/*
** jsonc.h -- JSON with comments, parsed into cJSON with source positions.
**
** Accepts standard JSON plus line (//) and block comments, trailing commas
** and a UTF-8 byte-order mark (what DeepSpeed's hjson reader accepts in
** practice). Every value and every object key keeps its line and column,
** so later stages can point at the exact place; duplicate keys are kept
** (the last one wins, as in most JSON readers) and listed, because
** DeepSpeed rejects them.
**
** Numbers keep their source text in cJSON's valuestring, so `5e8` (a float
** in Lua) and `500000000` (an integer) stay distinguishable.
*/
#ifndef DSF_JSONC_H
#define DSF_JSONC_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"

/* The deepest nesting of objects and arrays any reader accepts (JSON and
** JSONC files, command-line edits, a script's tables converted to JSON):
** the threat model's bound (contrib/docs/threat-model.md). A deeper text
** is an input error at its first bracket past the limit. */
#define DSF_JSON_MAX_DEPTH 200
#define DSF_JSON_DEPTH_MESSAGE                                              \
    "nesting is too deep: more than 200 levels of objects and arrays"

#define DSF_JSON_MAX_FILE (64u << 20)

typedef struct dsf_jpos {
    int line, col; /* 1-based */
} dsf_jpos;

typedef struct dsf_jdup {
    char *path;      /* dotted path of the repeated key */
    dsf_jpos first;  /* where it first appeared */
    dsf_jpos again;  /* where it appeared again */
} dsf_jdup;

/* Source information of one parsed document. */
typedef struct dsf_jsrc dsf_jsrc;

/* Parses text[0..len) named file (for messages). On success *out is the
** document (caller frees with cJSON_Delete) and, when src_out is not NULL,
** *src_out its positions (caller frees with dsf_jsrc_free; it copies text).
** A syntax error returns DSF_EINPUT with file:line:col and the source line.
** Each node's valueint holds the number of its entry in *src_out (also a
** number's: read numbers from valuedouble, as cJSON itself does). */
int dsf_json_parse(cJSON **out, dsf_jsrc **src_out, const char *file,
                   const char *text, size_t len, dsf_diags *d);

/* dsf_json_parse of text (malloc'd, NUL-terminated at len), which it
** takes: kept as the positions' text, not copied, or freed. */
int dsf_json_parse_take(cJSON **out, dsf_jsrc **src_out, const char *file,
                        char *text, size_t len, dsf_diags *d);

/* The text s was parsed from (borrowed; *len its length). */
const char *dsf_jsrc_text(const dsf_jsrc *s, size_t *len);

/* Reads and parses path (at most DSF_JSON_MAX_FILE bytes). As above. */
int dsf_json_load_file(cJSON **out, dsf_jsrc **src_out, const char *path,
                       dsf_diags *d);

/* Position of node's value / of its key inside its object. false when the
** node did not come from this source. */
bool dsf_jsrc_pos(const dsf_jsrc *s, const cJSON *node, dsf_jpos *out);
bool dsf_jsrc_key_pos(const dsf_jsrc *s, const cJSON *node, dsf_jpos *out);

/* Whether text nests objects and arrays deeper than DSF_JSON_MAX_DEPTH
** (brackets inside strings do not count). For the readers that parse
** with cJSON itself (whose own limit is 1000): they refuse such a text
** before parsing it, so every reader has the one limit. Linear.
** (jsonshape.c) */
bool dsf_json_too_deep(const char *text, size_t len);

/* The member key of the object obj, as cJSON_GetObjectItemCaseSensitive
** finds it, in constant time for an object parsed from s (large objects
** are indexed while parsing); obj must be unchanged since. With s NULL,
** or for a node not from s, the list is searched. NULL when absent. */
cJSON *dsf_jsrc_member(const dsf_jsrc *s, const cJSON *obj, const char *key);

/* The file name given to dsf_json_parse (borrowed). */
const char *dsf_jsrc_file(const dsf_jsrc *s);

/* The text of line (1-based) without its newline (nor a CR: in a line of
** at most DSF_JSRC_LINE_SCAN bytes, the text before its first CR):
** *start and *len are borrowed from s. Constant time, however long the
** line. false when out of range. */
#define DSF_JSRC_LINE_SCAN 4096
bool dsf_jsrc_line(const dsf_jsrc *s, int line, const char **start,
                   size_t *len);

/* Duplicate keys found while parsing (borrowed array of *n entries). */
const dsf_jdup *dsf_jsrc_duplicates(const dsf_jsrc *s, size_t *n);

void dsf_jsrc_free(dsf_jsrc *s);

/* True when a number node was written as an integer literal (no '.', 'e'
** or 'E'), or, for nodes without a literal (built in memory, or an
** integer of up to 15 digits, parsed), holds an integral value below
** 2^53. (jsonshape.c) */
bool dsf_json_is_integer_literal(const cJSON *num);

#endif
