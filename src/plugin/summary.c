/* summary.c -- the summarize hooks and summary columns plugins declare
** (see summary.h): reading the declarations and running them on a
** finished variant. */
#include "plugin/summary.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "lua/conv.h"
#include "plugin/decl.h"
#include "plugin/plugin_internal.h"

#define MAX_COLUMN_WIDTH 64

/* Text a plugin gives for the terminal, neutralised as all script text
** is (core/diag.h), on one line. Caller frees. */
static char *clean_cell(const char *s)
{
    dsf_buf b = DSF_BUF_INIT;
    dsf_text_clean(&b, s, true);
    return dsf_buf_take(&b);
}

static const char *const column_fields[] = {"name",  "header", "align",
                                            "width", "show",   "note",
                                            "value", NULL};

static bool valid_column_name(const char *s)
{
    if (!*s)
        return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            return false;
    return true;
}

static int column_error(dsf_diags *d, const char *file, const char *plugin,
                        lua_Integer i, const char *msg)
{
    dsf_diag_add(d, DSF_ERROR, file, 0, 0, "plugin '%s': column #%lld: %s",
                 plugin, (long long)i, msg);
    return DSF_EINPUT;
}

/* Checks column c (at index r) and appends it; leaves the stack as is. */
static int read_column(dsf_plugins *p, lua_State *L, int r, lua_Integer i,
                       const char *plugin, const char *file, dsf_diags *d)
{
    if (lua_type(L, r) != LUA_TTABLE)
        return column_error(d, file, plugin, i, "must be a table");
    lua_pushnil(L);
    while (lua_next(L, r)) {
        lua_pop(L, 1);
        if (!dsf_plugin_known_key(L, -1, column_fields)) {
            lua_pop(L, 1);
            return column_error(d, file, plugin, i,
                                "unknown field (known: name, header, align, "
                                "width, show, note, value)");
        }
    }
    const char *name = dsf_plugin_raw_string(L, r, "name");
    const char *header = dsf_plugin_raw_string(L, r, "header");
    const char *align = dsf_plugin_raw_string(L, r, "align");
    const char *show = dsf_plugin_raw_string(L, r, "show");
    const char *note = dsf_plugin_raw_string(L, r, "note");
    if (!name || !valid_column_name(name))
        return column_error(d, file, plugin, i,
                            "needs a 'name' of lower-case letters, digits, "
                            "'-' and '_'");
    for (size_t k = 0; k < p->ncolumns; k++)
        if (!strcmp(p->columns[k].name, name)) {
            dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                         "plugin '%s': column '%s' is already declared by "
                         "plugin '%s'", plugin, name, p->columns[k].plugin);
            return DSF_EINPUT;
        }
    if (align && strcmp(align, "left") && strcmp(align, "right"))
        return column_error(d, file, plugin, i,
                            "'align' must be \"left\" or \"right\"");
    if (show && strcmp(show, "always") && strcmp(show, "varies"))
        return column_error(d, file, plugin, i,
                            "'show' must be \"always\" or \"varies\"");
    lua_pushliteral(L, "width");
    int wt = lua_rawget(L, r);
    int isint = 0;
    lua_Integer width = lua_tointegerx(L, -1, &isint);
    lua_pop(L, 1);
    if (wt == LUA_TNIL)
        width = 0;
    else if (!isint || width < 0 || width > MAX_COLUMN_WIDTH)
        return column_error(d, file, plugin, i,
                            "'width' must be a whole number from 0 to 64");
    lua_pushliteral(L, "value");
    if (lua_rawget(L, r) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        return column_error(d, file, plugin, i,
                            "needs a 'value' function (v -> string or nil)");
    }
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    p->columns = dsf_xrealloc(p->columns,
                              (p->ncolumns + 1) * sizeof *p->columns);
    dsf_column *c = &p->columns[p->ncolumns++];
    c->plugin = dsf_xstrdup(plugin);
    c->name = dsf_xstrdup(name);
    c->header = clean_cell(header ? header : name);
    c->note = note ? clean_cell(note) : NULL;
    c->width = (int)width;
    c->right = align && !strcmp(align, "right");
    c->varies = show && !strcmp(show, "varies");
    c->ref = ref;
    c->what = dsf_xconcat("column ", name, " (plugin ", plugin, ")", NULL);
    return 0;
}

/* The `report` of the declaration at t: what an A/B page draws from each
** variant's summary, as data (report/report.h). */
static int read_report(dsf_plugins *p, dsf_plugin_info *it, lua_State *L,
                       int t, const char *file, dsf_diags *d)
{
    bool called;
    int rc = dsf_plugin_push_field(p, L, t, "report", it->name, &called, d);
    if (rc)
        return rc;
    int ty = lua_type(L, -1);
    cJSON *report = NULL;
    char *err = NULL;
    if (ty != LUA_TNIL &&
        (ty != LUA_TTABLE || dsf_lua_to_json(&report, &err, L, -1, 0) ||
         !cJSON_IsObject(report))) {
        dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                     "plugin '%s': 'report' must be a JSON-like table of "
                     "bars and products%s%s%s", it->name, err ? " (" : "",
                     err ? err : "", err ? ")" : "");
        cJSON_Delete(report);
        report = NULL;
        rc = DSF_EINPUT;
    }
    free(err);
    lua_pop(L, 1);
    it->report = report;
    return rc;
}

static int read_decl(dsf_plugins *p, lua_State *L, int t, size_t i,
                     dsf_diags *d)
{
    if (!dsf_plugins_serves(p, i))
        return 0; /* of another target: no column, no layout */
    int rc = read_report(p, &p->items[i], L, t, p->decls[i].file, d);
    if (!rc)
        rc = dsf_plugin_read_lazy_list(p, L, t, "columns", read_column,
                                       p->items[i].name, p->decls[i].file,
                                       d);
    return rc;
}

int dsf_plugins_read_summaries(dsf_plugins *p, dsf_diags *d)
{
    if (p->summaries_read)
        return 0;
    int rc = dsf_plugins_each_decl(p, read_decl, d);
    if (rc) { /* nothing half-read is kept */
        dsf_plugin_free_columns(p);
        for (size_t i = 0; i < p->n; i++) {
            cJSON_Delete(p->items[i].report);
            p->items[i].report = NULL;
        }
        return rc;
    }
    p->summaries_read = true;
    return 0;
}

void dsf_plugin_free_columns(dsf_plugins *p)
{
    for (size_t i = 0; i < p->ncolumns; i++) {
        free(p->columns[i].plugin);
        free(p->columns[i].name);
        free(p->columns[i].header);
        free(p->columns[i].note);
        free(p->columns[i].what);
    }
    free(p->columns);
    p->columns = NULL;
    p->ncolumns = 0;
}

const dsf_column *dsf_plugins_columns(const dsf_plugins *p, size_t *n)
{
    *n = p->ncolumns;
    return p->columns;
}

/* ------------------------------------------------------------------ */
/* Running. */

/* (view, cfg, ctx, summary) -> v = {name, tier, config, params, summary}
** (protected: allocates). */
static int push_view(lua_State *L)
{
    const dsf_variant_view *view = lua_touserdata(L, 1);
    lua_createtable(L, 0, 5);
    lua_pushstring(L, view->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, view->tier);
    lua_setfield(L, -2, "tier");
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "config");
    lua_pushliteral(L, "params");
    lua_rawget(L, 3);
    lua_setfield(L, -2, "params");
    lua_pushvalue(L, 4);
    lua_setfield(L, -2, "summary");
    return 1;
}

/* Adds the fields of obj (from plugin pi) to merged; a field already
** there is an error naming both plugins. */
static int merge_summary(cJSON *merged, const cJSON *obj, cJSON *owners,
                         const dsf_plugins *p, size_t pi, dsf_diags *d)
{
    for (const cJSON *m = obj->child; m; m = m->next) {
        if (cJSON_GetObjectItemCaseSensitive(merged, m->string)) {
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(owners,
                                                              m->string);
            return dsf_diag_error(
                d, DSF_ESCRIPT, NULL, 0, 0,
                "plugin %s summarize: field '%s' is already given by plugin "
                "%s (summary fields are shared: rename one)",
                p->items[pi].name, m->string,
                cJSON_IsString(o) ? o->valuestring : "?");
        }
        cJSON_AddItemToObject(merged, m->string, cJSON_Duplicate(m, 1));
        cJSON_AddStringToObject(owners, m->string,
                                p->items[pi].name);
    }
    return 0;
}

typedef struct columns_args {
    dsf_plugins *p;
    size_t pi;
    char **cells;
    const dsf_column *running; /* the column being called, for messages */
} columns_args;

/* (ud, v): calls every column of plugin pi with v, storing the cells. */
static int run_columns(lua_State *L)
{
    columns_args *a = lua_touserdata(L, 1);
    const char *plugin = a->p->items[a->pi].name;
    for (size_t k = 0; k < a->p->ncolumns; k++) {
        const dsf_column *col = &a->p->columns[k];
        if (strcmp(col->plugin, plugin) != 0)
            continue;
        a->running = col;
        lua_rawgeti(L, LUA_REGISTRYINDEX, col->ref);
        lua_pushvalue(L, 2);
        lua_call(L, 1, 1);
        if (lua_type(L, -1) == LUA_TSTRING)
            a->cells[k] = clean_cell(lua_tostring(L, -1));
        else if (!lua_isnil(L, -1))
            return luaL_error(L, "%s: value must return a string or nil, "
                                 "not a %s", col->what,
                              luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    a->running = NULL;
    return 0;
}

/* Names the hook in the diagnostic of a Lua error it raised. */
static void blame(dsf_diags *d, const char *what)
{
    dsf_diag *g = dsf_diags_last(d);
    if (g && !g->hint)
        dsf_diag_set_hint(g, "raised by %s: a bug in the plugin, not in "
                             "the config", what);
}

/* (ud: the reference's slot, cfg, ctx, summary): keeps { cfg, summary }
** for the plugin's rules (its ctx.params is kept for the whole variant
** already: variant_tables.h). */
static int hold_tables(lua_State *L)
{
    int *slot = lua_touserdata(L, 1);
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, 4);
    lua_rawseti(L, -2, 2);
    *slot = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static int run_plugin(dsf_plugins *p, size_t pi, const dsf_variant_view *v,
                      const dsf_validate_opts *o, cJSON *per_plugin,
                      cJSON *merged, cJSON *owners, char **cells,
                      dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    int ref = p->summarize_refs[pi];
    bool any_column = false;
    for (size_t k = 0; k < p->ncolumns; k++)
        any_column |= !strcmp(p->columns[k].plugin, p->items[pi].name);
    if ((ref == LUA_NOREF && !any_column) || !dsf_plugins_serves(p, pi)) {
        cJSON_AddItemToArray(per_plugin, cJSON_CreateNull());
        return 0;
    }
    const char *what = p->summarize_what[pi];
    dsf_findings none = DSF_FINDINGS_INIT;
    dsf_collector c = {p, &none, NULL, NULL, {0, NULL}, false};
    dsf_push_cfg_args args = {v->doc, o, &c, NULL, false, LUA_NOREF,
                              dsf_plugins_params_slot(p, pi, o->params)};
    dsf_callscope_open(&c.scope);
    int rc = dsf_host_cpcall(p->host, dsf_plugin_push_cfg_ctx, &args, 2,
                             what, d);
    if (rc) {
        dsf_callscope_close(&c.scope);
        return rc;
    }
    int cfg = lua_gettop(L) - 1, ctx = cfg + 1;
    cJSON *mine = NULL;
    if (ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        lua_pushvalue(L, cfg);
        lua_pushvalue(L, ctx);
        rc = dsf_host_call(p->host, 2, 1, what, d);
        if (rc)
            blame(d, what);
        if (!rc && lua_istable(L, -1)) {
            char *err;
            if (dsf_lua_to_json(&mine, &err, L, -1, 0) != 0) {
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s returned a value that is not JSON: "
                                    "%s", what, err);
                free(err);
            } else if (!cJSON_IsObject(mine)) {
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s must return a table with string "
                                    "keys, or nil", what);
            }
        } else if (!rc && !lua_isnil(L, -1)) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s must return a table or nil", what);
        }
    } else {
        lua_pushnil(L);
    }
    if (!rc && mine)
        rc = merge_summary(merged, mine, owners, p, pi, d);
    int summary = lua_gettop(L);
    if (!rc && p->held_doc == v->doc && p->held) {
        lua_pushcfunction(L, hold_tables);
        lua_pushlightuserdata(L, &p->held[pi]);
        lua_pushvalue(L, cfg);
        lua_pushvalue(L, ctx);
        lua_pushvalue(L, summary);
        rc = dsf_host_call(p->host, 4, 0, what, d);
    }
    if (!rc && any_column) {
        lua_pushcfunction(L, push_view);
        lua_pushlightuserdata(L, (void *)v);
        lua_pushvalue(L, cfg);
        lua_pushvalue(L, ctx);
        lua_pushvalue(L, summary);
        rc = dsf_host_call(p->host, 4, 1, what, d);
    }
    if (!rc && any_column) {
        /* All columns of the plugin in one protected call (one arming of
        ** the limits per variant, not one per column). */
        columns_args ca = {p, pi, cells, NULL};
        lua_pushcfunction(L, run_columns);
        lua_pushlightuserdata(L, &ca);
        lua_pushvalue(L, -3); /* v */
        rc = dsf_host_call(p->host, 2, 0, what, d);
        if (rc && ca.running)
            blame(d, ca.running->what);
    }
    lua_settop(L, 0);
    dsf_callscope_close(&c.scope);
    dsf_findings_free(&none);
    cJSON_AddItemToArray(per_plugin, mine ? mine : cJSON_CreateNull());
    return rc;
}

int dsf_plugins_summarize(dsf_plugins *p, const dsf_variant_view *v,
                          const dsf_validate_opts *o, cJSON **per_plugin,
                          cJSON **merged, char **cells, dsf_diags *d)
{
    cJSON *pp = cJSON_CreateArray();
    cJSON *m = cJSON_CreateObject();
    cJSON *owners = cJSON_CreateObject();
    int rc = 0;
    for (size_t pi = 0; pi < p->n && !rc; pi++)
        rc = run_plugin(p, pi, v, o, pp, m, owners, cells, d);
    cJSON_Delete(owners);
    if (rc) {
        cJSON_Delete(pp);
        cJSON_Delete(m);
        for (size_t k = 0; k < p->ncolumns; k++) {
            free(cells[k]);
            cells[k] = NULL;
        }
        *per_plugin = *merged = NULL;
        return rc;
    }
    *per_plugin = pp;
    bool any = false;
    for (const cJSON *x = pp->child; x; x = x->next)
        any |= !cJSON_IsNull(x);
    if (!any) {
        cJSON_Delete(m);
        m = NULL;
    }
    *merged = m;
    return 0;
}
