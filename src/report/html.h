/*
** html.h -- what the report's sections share: HTML escaping and reading
** a string member.
*/
#ifndef DSF_REPORT_HTML_H
#define DSF_REPORT_HTML_H

#include <cjson/cJSON.h>

#include "core/buf.h"

/* Appends s to b with <, >, &, " and ' escaped, and control characters
** (but tab and newline) in caret notation ("^[" for ESC). */
void dsf_html_esc(dsf_buf *b, const char *s);

/* The string member key of o, or "" (borrowed). */
const char *dsf_html_str(const cJSON *o, const char *key);

#endif
