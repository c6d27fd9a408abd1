/* readers.c -- see readers.h. */
#include "plugin/readers.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "lua/conv.h"
#include "plugin/decl.h"
#include "plugin/plugin_internal.h"

#define MAX_GLOBS 32
#define MAX_LINES 64

static const char *const reader_fields[] = {"name", "files", "lines",
                                            "format", "scope", "read", NULL};
static const char *const results_fields[] = {
    "record", "metrics", "calibration", "override_ignore", NULL};
static const char *const metric_fields[] = {"name", "title", "unit",
                                            "better", NULL};

static int bad(dsf_diags *d, const char *file, const char *plugin,
               const char *what, const char *msg)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                               "plugin '%s': %s: %s", plugin, what, msg);
    dsf_diag_set_hint(g, "see 'Readers' in contrib/docs/plugins.md");
    return DSF_EINPUT;
}

/* The list of strings in field key of t (absent: 0 strings); -1 when it
** is not a list of at most max non-empty strings without a newline. */
static int string_list(lua_State *L, int t, const char *key, size_t max,
                       char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    lua_pushstring(L, key);
    int ty = lua_rawget(L, t);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    size_t len = ty == LUA_TTABLE ? (size_t)lua_rawlen(L, -1) : 0;
    if (ty != LUA_TTABLE || len > max) {
        lua_pop(L, 1);
        return -1;
    }
    char **v = dsf_xcalloc(len + 1, sizeof *v);
    for (size_t i = 0; i < len; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        size_t sl;
        const char *s = lua_type(L, -1) == LUA_TSTRING
                            ? lua_tolstring(L, -1, &sl)
                            : NULL;
        if (!s || !sl || strlen(s) != sl || strchr(s, '\n')) {
            lua_pop(L, 2);
            dsf_free_strv(v, i);
            return -1;
        }
        v[i] = dsf_xstrdup(s);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    *out = v;
    *n = len;
    return 0;
}

static void free_reader(dsf_reader *r)
{
    free(r->name);
    free(r->plugin);
    free(r->what);
    dsf_free_strv(r->files, r->nfiles);
    dsf_free_strv(r->lines, r->nlines);
}

static int read_reader(dsf_plugins *p, lua_State *L, int r, lua_Integer i,
                       const char *plugin, const char *file, dsf_diags *d)
{
    dsf_results_decl *rs = p->results;
    char what[64];
    snprintf(what, sizeof what, "reader #%lld", (long long)i);
    if (lua_type(L, r) != LUA_TTABLE)
        return bad(d, file, plugin, what, "must be a table");
    const char *field = dsf_plugin_unknown_field(L, r, reader_fields);
    if (field) {
        char msg[160];
        snprintf(msg, sizeof msg, "unknown field '%.60s' (known: name, "
                 "files, lines, format, scope, read)", field);
        return bad(d, file, plugin, what, msg);
    }
    dsf_reader x;
    memset(&x, 0, sizeof x);
    x.ref = LUA_NOREF;
    const char *name = dsf_plugin_raw_string(L, r, "name");
    const char *format = dsf_plugin_raw_string(L, r, "format");
    const char *scope = dsf_plugin_raw_string(L, r, "scope");
    int rc = 0;
    if (scope && strcmp(scope, "run") && strcmp(scope, "variant"))
        return bad(d, file, plugin, what, "'scope' is \"variant\" or "
                   "\"run\"");
    x.run_scope = scope && !strcmp(scope, "run");
    if (!name || !*name || strlen(name) > 60)
        rc = bad(d, file, plugin, what, "needs a 'name' (1 to 60 bytes)");
    else if (string_list(L, r, "files", MAX_GLOBS, &x.files, &x.nfiles) ||
             !x.nfiles)
        rc = bad(d, file, plugin, what, "needs 'files', a list of 1 to 32 "
                 "file name patterns");
    else if (string_list(L, r, "lines", MAX_LINES, &x.lines, &x.nlines))
        rc = bad(d, file, plugin, what, "'lines' must be a list of at most "
                 "64 non-empty substrings without a newline");
    if (!rc) {
        x.format = x.nlines ? DSF_READ_LINES : DSF_READ_TEXT;
        if (format && !strcmp(format, "json"))
            x.format = DSF_READ_JSON;
        else if (format && !strcmp(format, "text"))
            x.format = DSF_READ_TEXT;
        else if (format && strcmp(format, "lines"))
            rc = bad(d, file, plugin, what, "'format' is \"lines\", \"text\" "
                     "or \"json\"");
        if (!rc && (x.format == DSF_READ_LINES) != (x.nlines > 0))
            rc = bad(d, file, plugin, what, "a \"lines\" reader needs "
                     "'lines', and only it takes them");
    }
    for (size_t k = 0; !rc && k < rs->nreaders; k++)
        if (!strcmp(rs->readers[k].name, name)) {
            char msg[160];
            snprintf(msg, sizeof msg, "'%.60s' is already declared by "
                     "plugin '%.60s'", name, rs->readers[k].plugin);
            rc = bad(d, file, plugin, what, msg);
        }
    if (!rc) {
        lua_pushliteral(L, "read");
        if (lua_rawget(L, r) == LUA_TFUNCTION) {
            x.ref = luaL_ref(L, LUA_REGISTRYINDEX);
        } else {
            lua_pop(L, 1);
            rc = bad(d, file, plugin, what, "needs a 'read' function");
        }
    }
    if (rc) {
        free_reader(&x);
        return rc;
    }
    x.name = dsf_xstrdup(name);
    x.plugin = dsf_xstrdup(plugin);
    x.what = dsf_xconcat("reader ", name, " (plugin ", plugin, ")", NULL);
    rs->readers = dsf_xrealloc(rs->readers,
                               (rs->nreaders + 1) * sizeof *rs->readers);
    rs->readers[rs->nreaders++] = x;
    return 0;
}

static int read_metric(dsf_plugins *p, lua_State *L, int m, lua_Integer i,
                       const char *plugin, const char *file, dsf_diags *d)
{
    dsf_results_decl *rs = p->results;
    if (lua_type(L, m) != LUA_TTABLE ||
        dsf_plugin_unknown_field(L, m, metric_fields))
        return bad(d, file, plugin, "results.metrics",
                   "each metric is a table of name, title, unit, better");
    const char *name = dsf_plugin_raw_string(L, m, "name");
    const char *title = dsf_plugin_raw_string(L, m, "title");
    const char *unit = dsf_plugin_raw_string(L, m, "unit");
    const char *better = dsf_plugin_raw_string(L, m, "better");
    dsf_better b = DSF_BETTER_NONE;
    if (better && !strcmp(better, "max"))
        b = DSF_BETTER_MAX;
    else if (better && !strcmp(better, "min"))
        b = DSF_BETTER_MIN;
    else if (better)
        name = NULL;
    if (!name || !*name || !title)
        return bad(d, file, plugin, "results.metrics", "a metric needs a "
                   "'name' and a 'title'; 'better' is \"max\" or \"min\"");
    (void)i;
    rs->metrics = dsf_xrealloc(rs->metrics,
                               (rs->nmetrics + 1) * sizeof *rs->metrics);
    rs->metrics[rs->nmetrics++] = (dsf_metric){
        dsf_xstrdup(name), dsf_xstrdup(title), dsf_xstrdup(unit ? unit : ""),
        b};
    return 0;
}

/* The `results` table of the declaration at t. */
static int read_results_table(dsf_plugins *p, lua_State *L, int t,
                              const char *plugin, const char *file,
                              dsf_diags *d)
{
    dsf_results_decl *rs = p->results;
    bool called;
    int top = lua_gettop(L);
    int rc = dsf_plugin_push_field(p, L, t, "results", plugin, &called, d);
    if (rc)
        return rc;
    int ty = lua_type(L, -1);
    int s = lua_gettop(L);
    if (ty == LUA_TNIL) {
        lua_settop(L, top);
        return 0;
    }
    const char *field = ty == LUA_TTABLE
                            ? dsf_plugin_unknown_field(L, s, results_fields)
                            : NULL;
    if (ty != LUA_TTABLE || field) {
        rc = bad(d, file, plugin, "results", "must be a table of record, "
                 "metrics, calibration, override_ignore (or a function "
                 "returning one)");
    } else if (rs->plugin) {
        char msg[160];
        snprintf(msg, sizeof msg, "plugin '%.60s' declares them already: "
                 "one plugin makes the records", rs->plugin);
        rc = bad(d, file, plugin, "results", msg);
    }
    if (!rc) {
        lua_pushliteral(L, "record");
        if (lua_rawget(L, s) == LUA_TFUNCTION) {
            rs->record_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        } else {
            lua_pop(L, 1);
            rc = bad(d, file, plugin, "results", "needs a 'record' function");
        }
    }
    if (!rc) {
        lua_pushliteral(L, "calibration");
        int cty = lua_rawget(L, s);
        if (cty == LUA_TFUNCTION)
            rs->calibration_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        else
            lua_pop(L, 1);
        if (cty != LUA_TFUNCTION && cty != LUA_TNIL)
            rc = bad(d, file, plugin, "results", "'calibration' must be a "
                     "function");
    }
    if (!rc && string_list(L, s, "override_ignore", 256,
                           &rs->override_ignore, &rs->nignore))
        rc = bad(d, file, plugin, "results", "'override_ignore' must be a "
                 "list of config paths");
    if (!rc)
        rc = dsf_plugin_read_lazy_list(p, L, s, "metrics", read_metric,
                                       plugin, file, d);
    if (!rc)
        rs->plugin = dsf_xstrdup(plugin);
    lua_settop(L, top);
    return rc;
}

static int read_decl(dsf_plugins *p, lua_State *L, int t, size_t i,
                     dsf_diags *d)
{
    int rc = dsf_plugin_read_lazy_list(p, L, t, "readers", read_reader,
                                       p->items[i].name, p->decls[i].file, d);
    if (!rc)
        rc = read_results_table(p, L, t, p->items[i].name,
                                p->decls[i].file, d);
    return rc;
}

int dsf_plugins_read_results(dsf_plugins *p, const dsf_results_decl **out,
                             dsf_diags *d)
{
    *out = NULL;
    if (p->results) {
        *out = p->results;
        return 0;
    }
    p->results = dsf_xcalloc(1, sizeof *p->results);
    p->results->record_ref = LUA_NOREF;
    p->results->calibration_ref = LUA_NOREF;
    p->results->held = LUA_NOREF;
    p->results->run_found = LUA_NOREF;
    int rc = dsf_plugins_each_decl(p, read_decl, d);
    if (rc) { /* nothing half-read is kept */
        dsf_plugin_free_results(p);
        return rc;
    }
    *out = p->results;
    return 0;
}

void dsf_plugin_free_results(dsf_plugins *p)
{
    dsf_results_decl *rs = p->results;
    if (!rs)
        return;
    for (size_t i = 0; i < rs->nreaders; i++)
        free_reader(&rs->readers[i]);
    free(rs->readers);
    for (size_t i = 0; i < rs->nmetrics; i++) {
        free(rs->metrics[i].name);
        free(rs->metrics[i].title);
        free(rs->metrics[i].unit);
    }
    free(rs->metrics);
    dsf_free_strv(rs->override_ignore, rs->nignore);
    free(rs->plugin);
    free(rs);
    p->results = NULL;
}

/* ------------------------------------------------------------------ */
/* Calls. The registry references stay valid: the state lives as long as
** p, and a variant's table is replaced by the next dsf_results_begin. */

typedef struct call {
    dsf_results_decl *rs;
    const cJSON *json;          /* begin: the variant; calibration: record */
    const dsf_reader *r;
    const dsf_read_input *in;
    const char *text;           /* problem */
} call;

static int push_begin(lua_State *L)
{
    call *c = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_createtable(L, 0, 3);
    dsf_json_push(L, c->json);
    lua_setfield(L, 1, "variant");
    lua_newtable(L);
    lua_setfield(L, 1, "found");
    lua_newtable(L);
    lua_setfield(L, 1, "problems");
    lua_pushinteger(L, luaL_ref(L, LUA_REGISTRYINDEX));
    return 1;
}

int dsf_results_begin(dsf_plugins *p, const cJSON *variant, dsf_diags *d)
{
    dsf_results_decl *rs = p->results;
    lua_State *L = dsf_host_state(p->host);
    if (rs->held != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, rs->held);
        rs->held = LUA_NOREF;
    }
    call c = {rs, variant, NULL, NULL, NULL};
    int rc = dsf_host_cpcall(p->host, push_begin, &c, 1, "collect", d);
    if (!rc)
        rs->held = (int)lua_tointeger(L, -1);
    lua_settop(L, 0);
    return rc;
}

static void push_input(lua_State *L, const dsf_read_input *in)
{
    lua_createtable(L, 0, 3);
    lua_pushstring(L, in->file);
    lua_setfield(L, -2, "file");
    if (in->json) {
        dsf_json_push(L, in->json);
        lua_setfield(L, -2, "json");
    } else if (in->text) {
        lua_pushlstring(L, in->text, in->len);
        lua_setfield(L, -2, "text");
    } else {
        lua_createtable(L, (int)in->nlines, 0);
        for (size_t i = 0; i < in->nlines; i++) {
            lua_pushlstring(L, in->lines[i], in->lens[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "lines");
        lua_pushinteger(L, (lua_Integer)in->dropped);
        lua_setfield(L, -2, "dropped");
    }
}

/* Appends value (top of the stack) to the held table's list key. */
static void append_held(lua_State *L, int held, const char *key)
{
    lua_getfield(L, held, key);
    lua_insert(L, -2);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
}

/* The list a reader's findings go to: the run's, made on first use, or
** the held variant's (in a table with the variant at held). */
static void push_found(lua_State *L, dsf_results_decl *rs, bool run)
{
    if (!run) {
        lua_getfield(L, 1, "found");
        return;
    }
    if (rs->run_found == LUA_NOREF) {
        lua_newtable(L);
        rs->run_found = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, rs->run_found);
}

static int push_read(lua_State *L)
{
    call *c = lua_touserdata(L, 1);
    lua_settop(L, 0);
    if (c->r->run_scope)
        lua_newtable(L); /* a run reader's ctx.variant: none */
    else
        lua_rawgeti(L, LUA_REGISTRYINDEX, c->rs->held);
    int held = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->r->ref);
    push_input(L, c->in);
    lua_createtable(L, 0, 1);
    lua_getfield(L, held, "variant");
    lua_setfield(L, -2, "variant");
    lua_call(L, 2, 1);
    if (lua_isnil(L, -1))
        return 0;
    lua_createtable(L, 0, 3);
    lua_insert(L, -2);
    lua_setfield(L, -2, "result");
    lua_pushstring(L, c->r->name);
    lua_setfield(L, -2, "reader");
    lua_pushstring(L, c->in->file);
    lua_setfield(L, -2, "file");
    push_found(L, c->rs, c->r->run_scope);
    lua_insert(L, -2);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return 0;
}

int dsf_results_read(dsf_plugins *p, const dsf_reader *r,
                     const dsf_read_input *in, dsf_diags *d)
{
    call c = {p->results, NULL, r, in, NULL};
    char *what = dsf_xconcat(r->what, " on ", in->file, NULL);
    int rc = dsf_host_cpcall(p->host, push_read, &c, 0, what, d);
    dsf_diag *g = rc ? dsf_diags_last(d) : NULL;
    if (g && !g->hint)
        dsf_diag_set_hint(g, "raised by %s", what);
    free(what);
    lua_settop(dsf_host_state(p->host), 0);
    return rc;
}

static int push_problem(lua_State *L)
{
    call *c = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->rs->held);
    lua_pushstring(L, c->text);
    append_held(L, 1, "problems");
    return 0;
}

int dsf_results_problem(dsf_plugins *p, const char *text, dsf_diags *d)
{
    call c = {p->results, NULL, NULL, NULL, text};
    int rc = dsf_host_cpcall(p->host, push_problem, &c, 0, "collect", d);
    lua_settop(dsf_host_state(p->host), 0);
    return rc;
}

static int push_record(lua_State *L)
{
    call *c = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->rs->held);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->rs->record_ref);
    lua_getfield(L, 1, "variant");
    lua_getfield(L, 1, "found");
    lua_getfield(L, 1, "problems");
    push_found(L, c->rs, true);
    lua_call(L, 4, 1);
    return 1;
}

static int push_calibration(lua_State *L)
{
    call *c = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->rs->held);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->rs->calibration_ref);
    lua_getfield(L, 1, "variant");
    dsf_json_push(L, c->json);
    lua_call(L, 2, 1);
    return 1;
}

/* The value on top of the stack as JSON (*out), or a script error. */
static int result_json(lua_State *L, const char *what, cJSON **out,
                       dsf_diags *d)
{
    char *err = NULL;
    int rc = dsf_lua_to_json(out, &err, L, -1, 0);
    if (rc) {
        rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0, "%s returned a value "
                            "that is not JSON: %s", what, err ? err : "?");
        free(err);
    }
    return rc;
}

static bool record_shape(const cJSON *rec)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(rec, "status");
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(rec, "values");
    if (!cJSON_IsObject(rec) || !cJSON_IsString(st) || !*st->valuestring)
        return false;
    if (!vals)
        return true;
    if (!cJSON_IsObject(vals))
        return false;
    for (const cJSON *v = vals->child; v; v = v->next)
        if (!cJSON_IsNumber(v))
            return false;
    return true;
}

int dsf_results_record(dsf_plugins *p, cJSON **out, dsf_diags *d)
{
    dsf_results_decl *rs = p->results;
    *out = NULL;
    lua_State *L = dsf_host_state(p->host);
    char *what = dsf_xconcat("results.record (plugin ", rs->plugin, ")",
                             NULL);
    call c = {rs, NULL, NULL, NULL, NULL};
    int rc = dsf_host_cpcall(p->host, push_record, &c, 1, what, d);
    if (!rc)
        rc = result_json(L, what, out, d);
    if (!rc && !record_shape(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0, "%s must return a "
                            "table with a 'status' string and 'values', a "
                            "table of numbers", what);
    }
    lua_settop(L, 0);
    free(what);
    return rc;
}

int dsf_results_calibration(dsf_plugins *p, const cJSON *record,
                            cJSON **out, dsf_diags *d)
{
    dsf_results_decl *rs = p->results;
    *out = NULL;
    if (rs->calibration_ref == LUA_NOREF)
        return 0;
    lua_State *L = dsf_host_state(p->host);
    char *what = dsf_xconcat("results.calibration (plugin ", rs->plugin, ")",
                             NULL);
    call c = {rs, record, NULL, NULL, NULL};
    int rc = dsf_host_cpcall(p->host, push_calibration, &c, 1, what, d);
    if (!rc && !lua_isnil(L, -1))
        rc = result_json(L, what, out, d);
    lua_settop(L, 0);
    free(what);
    return rc;
}
