/*
** summary.h -- what plugins say about a finished variant (summary.c): the
** summarize hook of each plugin and the summary columns they declare.
** The core reads no field of a summary: it stores the merged object in the
** manifest, passes each plugin its own to that plugin's rules (ctx.summary)
** and prints the columns' cells. See contrib/docs/plugins.md.
*/
#ifndef DSF_PLUGIN_SUMMARY_H
#define DSF_PLUGIN_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/diag.h"
#include "plugin/plugin.h"

typedef struct dsf_column {
    char *plugin;
    char *name;        /* id, unique across plugins */
    char *header;      /* the table's header (default: name) */
    char *note;        /* printed under the table when shown, or NULL */
    int width;         /* minimum width; grows to the widest cell */
    bool right;        /* right-aligned (numbers) */
    bool varies;       /* shown only when its cells differ between rows */
    int ref;           /* the value function (registry reference) */
    char *what;        /* "column NAME (plugin P)", for messages */
} dsf_column;

/* Reads what every plugin declares for summaries: its `columns` and its
** `report` layout (dsf_plugin_info.report). Loading the plugins does not
** read them: a command that prints no summary table and writes no
** manifest (estimate, explain, check) never pays for them, nor fails on a
** bad declaration it does not use. The first call reads them, in plugin
** order; later calls return its result at once. DSF_EINPUT names the
** plugin's init.lua and the field (nothing is kept then). */
int dsf_plugins_read_summaries(dsf_plugins *p, dsf_diags *d);

/* The declared columns, plugin order then declaration order (borrowed;
** none before dsf_plugins_read_summaries). */
const dsf_column *dsf_plugins_columns(const dsf_plugins *p, size_t *n);

/* What a finished variant is, for the hooks. All borrowed. */
typedef struct dsf_variant_view {
    const char *name;
    const char *tier;          /* "" without tiers */
    const cJSON *doc;          /* the resolved config */
} dsf_variant_view;

/* Runs every plugin's summarize(cfg, ctx) and every column's value(v) on
** a finished variant. On success *per_plugin is a JSON array with one item
** per plugin (its summary object, or null), *merged the union of those
** objects (NULL when none), and cells[0..ncolumns) the columns' texts
** (NULL: no value; control characters replaced by '?'); the caller frees
** all three. A hook that raises or returns something else than declared
** is that plugin's error (DSF_ESCRIPT, naming plugin, file and line); two
** plugins giving the same summary field is an error naming both. */
int dsf_plugins_summarize(dsf_plugins *p, const dsf_variant_view *v,
                          const dsf_validate_opts *o, cJSON **per_plugin,
                          cJSON **merged, char **cells, dsf_diags *d);


#endif
