/*
** jsloc.h -- where a config path is in the file it was read from, for
** check's diagnostics (plugin/checkdoc.c, cli/check_cmd.c) and so the
** language server's.
*/
#ifndef DSF_JSLOC_H
#define DSF_JSLOC_H

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "json/jsonc.h"

/* The position of path in doc's file: its key when it is a member, else
** its value; for a missing path the nearest existing ancestor; the
** document itself for "" or a path that does not parse. */
dsf_jpos dsf_jsloc_locate(cJSON *doc, const dsf_jsrc *src, const char *path);

/* Sets g's excerpt to its line of src (not for lines of 300 bytes or
** more). */
void dsf_jsloc_excerpt(dsf_diag *g, const dsf_jsrc *src);

#endif
