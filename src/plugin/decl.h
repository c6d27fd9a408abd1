/*
** decl.h -- reading the fields of a plugin's declaration table, shared by
** the files that read parts of it (plugin.c: resolvers; rules.c: rules;
** summary.c: columns; emit.c: emitters; commands.c: commands;
** validate.c: findings). Below all of them.
*/
#ifndef DSF_PLUGIN_DECL_H
#define DSF_PLUGIN_DECL_H

#include <stdbool.h>

#include <lua.h>

#include "core/diag.h"

struct dsf_plugins;

/* Lower-case "error", "warning" or "note"; false for anything else. */
bool dsf_plugin_parse_severity(const char *s, dsf_severity *out);

/* Whether the key at index k (a lua_next key: not converted) is a
** string among known (NULL-terminated). */
bool dsf_plugin_known_key(lua_State *L, int k, const char *const *known);

/* The first key of the table at t that is not a string among known
** (NULL-terminated): the key (borrowed from Lua while t holds it;
** "(not a string)" for another type), or NULL when every key is known. */
const char *dsf_plugin_unknown_field(lua_State *L, int t,
                                     const char *const *known);

/* Raw string field key of the table at t, or NULL (borrowed from Lua: it
** stays alive while t holds it). */
const char *dsf_plugin_raw_string(lua_State *L, int t, const char *key);

/* Reads the list in field of the declaration at t (absent: nothing to do),
** calling item for each entry, with the entry at stack index r and its
** 1-based position i; item checks the entry's type itself. A field that
** is not a table is "plugin 'P': 'field' must be a list" at file.
** Stops at the first error; DSF_EINPUT (or item's code). Leaves the stack
** as it was. */
typedef int (*dsf_plugin_item_fn)(struct dsf_plugins *p, lua_State *L,
                                  int r, lua_Integer i, const char *plugin,
                                  const char *file, dsf_diags *d);
int dsf_plugin_read_list(struct dsf_plugins *p, lua_State *L, int t,
                         const char *field, dsf_plugin_item_fn item,
                         const char *plugin, const char *file,
                         dsf_diags *d);

/* Field of the declaration at t, an optional function (a hook): 1 when
** it is one, left pushed; 0 when absent, nothing pushed; otherwise
** DSF_EINPUT "plugin 'P': 'field' must be a SIGNATURE" with a hint to
** section of contrib/docs/plugins.md, nothing pushed. */
int dsf_plugin_optional_function(lua_State *L, int t, const char *field,
                                 const char *signature, const char *section,
                                 const char *plugin, const char *file,
                                 dsf_diags *d);

/* Pushes field of the declaration at t (nil when absent). When it is a
** function, calls it (through the plugin set's host, named "plugin P
** field" in messages) and pushes what it returns instead, with *called
** set: a declaration can so leave the modules that build the value
** unloaded until a command needs it. Nothing is pushed on error. */
int dsf_plugin_push_field(struct dsf_plugins *p, lua_State *L, int t,
                          const char *field, const char *plugin, bool *called,
                          dsf_diags *d);

/* Like dsf_plugin_read_list, but the field may also be a function that
** returns the list (dsf_plugin_push_field). A function that returns
** something else than a list is "plugin 'P': the 'field' function must
** return a list of field". */
int dsf_plugin_read_lazy_list(struct dsf_plugins *p, lua_State *L, int t,
                              const char *field, dsf_plugin_item_fn item,
                              const char *plugin, const char *file,
                              dsf_diags *d);

/* The same for the list at stack index lt itself (a table). */
int dsf_plugin_read_items(struct dsf_plugins *p, lua_State *L, int lt,
                          dsf_plugin_item_fn item, const char *plugin,
                          const char *file, dsf_diags *d);

#endif
