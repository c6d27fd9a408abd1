/*
** checkdoc.h -- what `check` says about one parsed config, apart from the
** command line: duplicate keys and the findings of every plugin's rules
** at file:line:col (or at the place in the text a rule names). Shared by
** `dsforge check` (cli/cmd_check.c) and the language server (lsp/), so
** both give the same messages.
*/
#ifndef DSF_CHECKDOC_H
#define DSF_CHECKDOC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "json/jsonc.h"
#include "plugin/plugin.h"

/* Appends an error to out for every duplicate key src recorded. file
** (borrowed) names the file in the diagnostics; the message names the
** program that reads the config by the family the plugins' default
** target gives (plugin/targets.h; their targets read), if any. */
void dsf_checkdoc_duplicates(const dsf_plugins *plugins, const char *file,
                             const dsf_jsrc *src, dsf_diags *out);

/* Runs every rule of plugins on doc (parsed from src; borrowed) with vo
** and appends each finding to out at the position of its path in the
** file; a doc that is not an object is one DSF_EINPUT error at 1:1.
** Returns 0, DSF_EINPUT, or a plugin's script error (in out too). */
int dsf_checkdoc_rules(dsf_plugins *plugins, cJSON *doc,
                       const dsf_jsrc *src, const char *file,
                       const dsf_validate_opts *vo, dsf_diags *out);

#endif
