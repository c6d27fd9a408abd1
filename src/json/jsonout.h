/*
** jsonout.h -- canonical JSON text: sorted keys, integers as integers.
**
** The same document always gives the same bytes: object members are
** printed in byte order of their keys (never in insertion or Lua `pairs`
** order), integral numbers without a fraction or exponent, other numbers
** in the shortest form that reads back to the same double.
*/
#ifndef DSF_JSONOUT_H
#define DSF_JSONOUT_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

/* Appends item as JSON to out: pretty (2-space indent, trailing newline
** at top level) or compact (one line, no spaces). */
void dsf_json_write(dsf_buf *out, const cJSON *item, bool pretty);

/* Appends item as pretty JSON to out as if it were nested depth levels
** deep: its inner lines are indented by 2 * (depth + 1) spaces, its
** closing bracket by 2 * depth; no newline before or after. */
void dsf_json_write_at(dsf_buf *out, const cJSON *item, int depth);

/* Returns item as JSON text; caller frees. */
char *dsf_json_print(const cJSON *item, bool pretty);

/* Appends a JSON string literal for s (quoted and escaped) to out. */
void dsf_json_write_string(dsf_buf *out, const char *s);

/* Appends the canonical text of a number node to out. */
void dsf_json_write_number(dsf_buf *out, const cJSON *num);

#endif
