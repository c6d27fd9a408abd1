/*
** fixedit.h -- the machine-readable fixes a rule's finding carries
** (ctx.report's `edit`): what `check --format json` prints as "edits" and
** the language server turns into code actions (contrib/docs/plugins.md).
**
** An edit is one of
**   {op = "rename", path = P, to = KEY}    the member at P renamed KEY
**   {op = "set",    path = P, value = V}   the value at P replaced by V
**   {op = "remove", path = P}              the member at P removed
**   {op = "move",   path = P, to = Q}      the member at P moved to path Q
** where P and Q are config paths (a string, or a list of keys and 1-based
** indices as ctx.report's path); P defaults to the finding's path. A
** finding may carry one edit or a list of them: alternatives, each a
** whole fix on its own.
*/
#ifndef DSF_FIXEDIT_H
#define DSF_FIXEDIT_H

#include <cjson/cJSON.h>

/* Normalizes raw (the `edit` field converted to JSON; borrowed): returns
** the compact JSON text of the array of edits (caller frees) with every
** path in canonical text, or NULL and *why (static) when raw is not an
** edit or a list of them. finding_path (canonical) is the default path. */
char *dsf_fixedit_normalize(const cJSON *raw, const char *finding_path,
                            const char **why);

#endif
