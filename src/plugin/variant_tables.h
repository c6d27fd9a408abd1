/*
** variant_tables.h -- the Lua tables a plugin's hooks share on one variant
** of gen: its resolvers', summarize's, columns' and rules' ctx.params, and
** the cfg and summary its summarize and rules share (contrib/docs/
** plugins.md, "Summaries and columns"). One conversion of the params per
** plugin and variant, and one of the config for summarize and rules, not
** one per hook. A plugin never sees another's tables.
*/
#ifndef DSF_PLUGIN_VARIANT_TABLES_H
#define DSF_PLUGIN_VARIANT_TABLES_H

#include <cjson/cJSON.h>

#include "plugin/plugin.h"

/* Begins a variant (releasing what an earlier one held): from here to the
** release, each plugin's hooks get one ctx.params table, made from params
** by the plugin's first hook of the variant. params stays the caller's
** and must live until the release. */
void dsf_plugins_begin_variant(dsf_plugins *p, const cJSON *params);

/* From here to the release, dsf_plugins_summarize of doc (the resolved
** config) keeps the cfg table each plugin's summarize and columns got and
** the summary table it returned; dsf_plugins_validate of doc gives that
** plugin's rules those tables (cfg, ctx.params, ctx.summary). doc stays
** the caller's and must live until the release. */
void dsf_plugins_hold_variant(dsf_plugins *p, const cJSON *doc);

/* Drops every table held (a no-op when nothing is). */
void dsf_plugins_release_variant(dsf_plugins *p);

#endif
