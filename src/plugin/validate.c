/* validate.c -- running the plugins' rules on a config, and ctx.report. */
#include "plugin/plugin_internal.h"
#include "plugin/rules.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/pyjson.h"
#include "plugin/findings.h"
#include "plugin/fixedit.h"
#include "lua/callscope.h"
#include "lua/conv.h"
#include "lua/guard.h"
#include "lua/identity.h"
#include "lua/limits.h"

/* ------------------------------------------------------------------ */
/* Validation. */


static const dsf_rule *find_rule(const dsf_plugins *p, const char *id)
{
    for (size_t i = 0; i < p->nrules; i++)
        if (!strcmp(p->rules[i].id, id))
            return &p->rules[i];
    return NULL;
}

/* ctx.report{rule=, path=, message=, fix=, severity=, param=, edit=}. Raises on a bad
** finding (that is a bug in the rule, reported with its location). */
/* report's `at` (table at 1): a place in the file's text (check),
** instead of the path's; false when it is there but not {line, col}. */
static bool report_at(lua_State *L, int *line, int *col)
{
    lua_pushliteral(L, "at");
    int at = lua_rawget(L, 1);
    if (at == LUA_TTABLE) {
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        *line = (int)lua_tointeger(L, -2);
        *col = (int)lua_tointeger(L, -1);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    return at == LUA_TNIL || (at == LUA_TTABLE && *line >= 1 && *col >= 1);
}

/* report's `edit` (table at 1): the machine-readable fixes
** (plugin/fixedit.h) as *edits (NULL when absent); false, with *why (or
** NULL) when they are not edits. Does not raise. */
static bool report_edit(lua_State *L, const char *path, char **edits,
                        const char **why)
{
    lua_pushliteral(L, "edit");
    bool ok = true;
    if (lua_rawget(L, 1) != LUA_TNIL) {
        cJSON *raw = NULL;
        char *err = NULL;
        if (dsf_lua_to_json(&raw, &err, L, -1, 0) == 0)
            *edits = dsf_fixedit_normalize(raw, path, why);
        cJSON_Delete(raw);
        free(err);
        ok = *edits != NULL;
    }
    lua_pop(L, 1);
    return ok;
}

/* The rule named id (NULL: the one running), or NULL. */
static const dsf_rule *rule_named(const dsf_collector *c, const char *id)
{
    if (!id || !strcmp(id, c->current->id))
        return c->current;
    return find_rule(c->p, id);
}

/* A finding's severity: sev (NULL: the rule's), with --strict-CLASS
** making the warnings of rules of that class errors. False when sev is
** not a severity. */
static bool finding_severity(const dsf_collector *c, const dsf_rule *r,
                             const char *sev, dsf_severity *out)
{
    dsf_severity s = r->severity;
    if (sev && !dsf_plugin_parse_severity(sev, &s))
        return false;
    if (s == DSF_WARNING && c->strict && r->strict &&
        !strcmp(c->strict, r->strict))
        s = DSF_ERROR;
    *out = s;
    return true;
}

/* Appends the path at index t (a string, a list of keys and 1-based
** indices, or nil for the whole config) to out in its canonical text;
** false when it is something else. Does not raise. */
static bool read_path(lua_State *L, int t, dsf_buf *out)
{
    t = lua_absindex(L, t);
    int pt = lua_type(L, t);
    if (pt == LUA_TSTRING) {
        dsf_buf_puts(out, lua_tostring(L, t));
    } else if (pt == LUA_TTABLE) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, t);
        for (lua_Integer i = 1; i <= n; i++) {
            int et = lua_rawgeti(L, t, i);
            if (et == LUA_TSTRING)
                dsf_jpath_append_key(out, lua_tostring(L, -1));
            else if (et == LUA_TNUMBER && lua_isinteger(L, -1))
                /* Lua indices are 1-based; paths are JSON's 0-based. */
                dsf_buf_printf(out, "[%lld]",
                               (long long)lua_tointeger(L, -1) - 1);
            lua_pop(L, 1);
        }
    } else if (pt != LUA_TNIL && pt != LUA_TNONE) {
        return false;
    }
    return true;
}

/* ctx.wanted(rule, severity, path[, key]) -> whether a finding of rule
** with that severity at path (a string or a list, key appended when
** given) would be kept (plugin/findings.h). False counts it as one more
** finding not shown: the rule then does not compose or report it. For a
** rule that may report thousands (unknown keys). */
static int l_wanted(lua_State *L)
{
    dsf_collector *c = dsf_callscope_data(L, "ctx.wanted");
    if (!c->current)
        return luaL_error(L, "ctx.wanted is only available to rules");
    const dsf_rule *r = rule_named(c, luaL_checkstring(L, 1));
    if (!r)
        return luaL_error(L, "ctx.wanted: rule '%s' is not declared by any "
                             "plugin", lua_tostring(L, 1));
    if (strcmp(r->plugin, c->current->plugin) != 0)
        return luaL_error(L, "ctx.wanted: rule '%s' belongs to plugin '%s'",
                          r->id, r->plugin);
    dsf_severity s;
    if (!finding_severity(c, r, luaL_optstring(L, 2, NULL), &s))
        return luaL_error(L, "ctx.wanted: bad severity '%s'",
                          lua_tostring(L, 2));
    /* (the common case first: a plain key of the top level is its own
    ** path, used as it is) */
    int pt = lua_type(L, 3), kt = lua_type(L, 4);
    if (kt == LUA_TSTRING && (pt == LUA_TNIL || pt == LUA_TNONE ||
                              (pt == LUA_TTABLE && !lua_rawlen(L, 3)))) {
        const char *key = lua_tostring(L, 4);
        if (*key && !strpbrk(key, ".[]\"=")) {
            lua_pushboolean(L, dsf_findings_wanted(c->out, r->id, s, key));
            return 1;
        }
    }
    dsf_buf path = DSF_BUF_INIT;
    bool ok = read_path(L, 3, &path);
    if (ok && kt == LUA_TSTRING) {
        dsf_jpath_append_key(&path, lua_tostring(L, 4));
    } else if (ok && kt == LUA_TNUMBER && lua_isinteger(L, 4)) {
        dsf_buf_printf(&path, "[%lld]", (long long)lua_tointeger(L, 4) - 1);
    } else if (kt != LUA_TNONE && kt != LUA_TNIL) {
        ok = false;
    }
    if (!ok) {
        dsf_buf_free(&path);
        return luaL_error(L, "ctx.wanted: 'path' must be a string or a "
                             "list, and 'key' a string or an integer");
    }
    lua_pushboolean(L, dsf_findings_wanted(c->out, r->id, s,
                                           path.data ? path.data : ""));
    dsf_buf_free(&path);
    return 1;
}

static int l_report(lua_State *L)
{
    dsf_collector *c = dsf_callscope_data(L, "ctx.report");
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!c->current)
        return luaL_error(L, "ctx.report is only available to rules (a "
                             "resolver changes the config instead)");
    const char *rule = dsf_plugin_raw_string(L, 1, "rule");
    const char *message = dsf_plugin_raw_string(L, 1, "message");
    const char *fix = dsf_plugin_raw_string(L, 1, "fix");
    const char *sev = dsf_plugin_raw_string(L, 1, "severity");
    const dsf_rule *r = rule_named(c, rule);
    if (!r)
        return luaL_error(L, "ctx.report: rule '%s' is not declared by any "
                             "plugin", rule);
    if (strcmp(r->plugin, c->current->plugin) != 0)
        return luaL_error(L, "ctx.report: rule '%s' belongs to plugin '%s'",
                          rule, r->plugin);
    if (!message)
        return luaL_error(L, "ctx.report: 'message' (a string) is required");
    dsf_severity s;
    if (!finding_severity(c, r, sev, &s))
        return luaL_error(L, "ctx.report: bad severity '%s'", sev);
    /* The path: a string or a list of keys and (0-based) indices. */
    dsf_buf path = DSF_BUF_INIT;
    lua_pushliteral(L, "path");
    lua_rawget(L, 1);
    if (!read_path(L, -1, &path)) {
        dsf_buf_free(&path);
        return luaL_error(L, "ctx.report: 'path' must be a string or a "
                             "list");
    }
    lua_pop(L, 1);
    /* The params the finding depends on: a name or a list of names. */
    dsf_buf params = DSF_BUF_INIT;
    lua_pushliteral(L, "param");
    int qt = lua_rawget(L, 1);
    if (qt == LUA_TSTRING) {
        dsf_buf_puts(&params, lua_tostring(L, -1));
    } else if (qt == LUA_TTABLE) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_rawgeti(L, -1, i) != LUA_TSTRING) {
                dsf_buf_free(&path);
                dsf_buf_free(&params);
                return luaL_error(L, "ctx.report: 'param' must be a name "
                                     "or a list of names");
            }
            if (params.len)
                dsf_buf_putc(&params, ',');
            dsf_buf_puts(&params, lua_tostring(L, -1));
            lua_pop(L, 1);
        }
    } else if (qt != LUA_TNIL) {
        dsf_buf_free(&path);
        return luaL_error(L, "ctx.report: 'param' must be a name or a "
                             "list of names");
    }
    lua_pop(L, 1);
    int line = 0, col = 0;
    char *edits = NULL;
    const char *why = NULL;
    if (!report_at(L, &line, &col))
        why = "'at' must be {line, col} (whole numbers >= 1)";
    else if (c->edits &&
             !report_edit(L, path.data ? path.data : "", &edits, &why))
        why = why ? why : "'edit' must be an edit {op=, path=, ...} or a "
                          "list of them";
    if (why) {
        dsf_buf_free(&path);
        dsf_buf_free(&params);
        return luaL_error(L, "ctx.report: %s", why);
    }
    dsf_finding x = {
        .rule = dsf_xstrdup(r->id),
        .plugin = dsf_xstrdup(r->plugin),
        .severity = s,
        .path = path.data ? dsf_buf_take(&path) : dsf_xstrdup(""),
        .message = dsf_xstrdup(message),
        .fix = dsf_xstrdup(fix ? fix : r->fix),
        .params = params.len ? dsf_buf_take(&params) : NULL,
        .line = line,
        .col = col,
        .edits = edits};
    dsf_buf_free(&params);
    dsf_findings_put(c->out, &x);
    return 0;
}


/* ctx.identity(key) -> the identity (lua/identity.h) of the config's
** top-level value under key, or nil when it has none. Made when asked:
** a rule that keeps nothing across configs never pays for it. */
static int l_identity(lua_State *L)
{
    const cJSON *doc = dsf_callscope_data(L, "ctx.identity");
    const char *key = luaL_checkstring(L, 1);
    const cJSON *m = NULL;
    for (const cJSON *x = doc->child; x; x = x->next)
        if (!strcmp(x->string, key))
            m = x; /* (the last of duplicate keys: the one cfg holds) */
    if (!m) {
        lua_pushnil(L);
        return 1;
    }
    /* The identity is the guard's while pushing it may raise. */
    dsf_guard *g = dsf_guard_push(L);
    dsf_buf id = DSF_BUF_INIT;
    dsf_json_identity(&id, m);
    g->p = id.data;
    g->release = free;
    lua_pushlstring(L, id.data, id.len);
    dsf_guard_release(g);
    return 1;
}

/* ctx.json_extension() -> nil when the file's text is plain JSON (what
** Python's json.load reads), else what it holds beyond that (a comment,
** a trailing comma...), its line and column. check only: the text is
** the file's as read, not the config. */
static int l_json_extension(lua_State *L)
{
    const dsf_validate_opts *o = dsf_callscope_data(L, "ctx.json_extension");
    dsf_jpos pos;
    const char *what;
    if (!dsf_pyjson_first_extension(o->text, o->text_len, &pos, &what)) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushstring(L, what);
    lua_pushinteger(L, pos.line);
    lua_pushinteger(L, pos.col);
    return 3;
}

/* A config of this many values or more is large: its conversion runs
** with the collector stopped (lua/limits.h). */
#define HOST_LARGE_NODES 4096

/* How many values the list starting at x holds (members' values
** included), counting no further than n: an ordinary config costs a walk
** of its few hundred values. Recursion is as deep as the nesting, which
** every reader bounds (DSF_JSON_MAX_DEPTH). */
static size_t values_upto(const cJSON *x, size_t n)
{
    size_t c = 0;
    for (; x && c < n; x = x->next) {
        c++;
        if (x->child)
            c += values_upto(x->child, n - c);
    }
    return c;
}

/* Pushes cfg and ctx (protected: allocates in Lua). */
int dsf_plugin_push_cfg_ctx(lua_State *L)
{
    dsf_push_cfg_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    if (a->held != LUA_NOREF) { /* the tables the plugin's summarize had */
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->held);
        lua_rawgeti(L, 1, 1);
        lua_replace(L, 1);
    } else {
        /* (the config is the host's data: limits.h) */
        dsf_limits_host_release(L);
        dsf_limits_host_begin(L, values_upto(a->doc, HOST_LARGE_NODES) >=
                                     HOST_LARGE_NODES);
        dsf_json_push(L, a->doc);
        dsf_limits_host_end(L);
    }
    lua_createtable(L, 0, 9);
    lua_pushstring(L, a->o->target);
    lua_setfield(L, -2, "target");
    lua_pushstring(L, a->o->mode);
    lua_setfield(L, -2, "mode");
    if (a->o->params && a->params_ref && *a->params_ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, *a->params_ref);
        lua_setfield(L, -2, "params");
    } else if (a->o->params) {
        dsf_json_push(L, a->o->params);
        if (a->params_ref) { /* for the plugin's later hooks */
            lua_pushvalue(L, -1);
            *a->params_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        }
        lua_setfield(L, -2, "params");
    }
    if (a->held != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->held);
        lua_rawgeti(L, -1, 2);
        lua_setfield(L, 2, "summary");
        lua_pop(L, 1);
    } else if (a->summary && !cJSON_IsNull(a->summary)) {
        dsf_json_push(L, a->summary);
        lua_setfield(L, -2, "summary");
    }
    dsf_plugin_push_values(L, -1, a->o->values);
    if (a->o->variant) {
        lua_pushstring(L, a->o->variant);
        lua_setfield(L, -2, "variant");
    }
    if (a->identities && cJSON_IsObject(a->doc)) {
        dsf_callscope_push(L, &a->c->scope, l_identity, (void *)a->doc);
        lua_setfield(L, -2, "identity");
    }
    if (a->identities && a->o->text) {
        dsf_callscope_push(L, &a->c->scope, l_json_extension, (void *)a->o);
        lua_setfield(L, -2, "json_extension");
    }
    dsf_callscope_push(L, &a->c->scope, l_report, a->c);
    lua_setfield(L, -2, "report");
    if (a->identities) { /* (rules only) */
        dsf_callscope_push(L, &a->c->scope, l_wanted, a->c);
        lua_setfield(L, -2, "wanted");
    }
    return 2;
}

/* Does plugin number pi declare a rule with a check? Found once per set
** of rules read (not per config). */
static bool has_check(dsf_plugins *p, size_t pi)
{
    if (!p->has_check || p->has_check_rules != p->nrules) {
        free(p->has_check);
        p->has_check = dsf_xcalloc(p->n + 1, sizeof *p->has_check);
        p->has_check_rules = p->nrules;
        for (size_t k = 0; k < p->n; k++)
            for (size_t i = 0; i < p->nrules && !p->has_check[k]; i++)
                p->has_check[k] = p->rules[i].check_ref != LUA_NOREF &&
                                  !strcmp(p->rules[i].plugin,
                                          p->items[k].name);
    }
    return p->has_check[pi];
}

/* One protected call per plugin runs all its checks (run_checks): the
** config and ctx are made once, then each check is called in turn. Each
** check still runs under limits of its own (armed for it as for a call
** of its own: its own instruction count and deadline), and an error is
** reported as that rule's: what names the rule running, for the
** messages of the one protected call. */
typedef struct check_batch {
    dsf_push_cfg_args *args;
    const char *plugin;
    const dsf_rule *running; /* the rule whose check runs, else NULL */
    char *what;              /* "validation", then running->what */
} check_batch;

static int run_checks(lua_State *L)
{
    check_batch *b = lua_touserdata(L, 1);
    const dsf_plugins *p = b->args->c->p;
    lua_settop(L, 0);
    lua_pushlightuserdata(L, b->args);
    dsf_plugin_push_cfg_ctx(L); /* cfg at 1, ctx at 2 */
    dsf_limits_saved outer, prev;
    bool armed = false;
    for (size_t i = 0; i < p->nrules; i++) {
        const dsf_rule *r = &p->rules[i];
        if (r->check_ref == LUA_NOREF || strcmp(r->plugin, b->plugin) != 0)
            continue;
        /* Limits of its own (the previous check's are done with: the
        ** outer call's come back once, after the last). */
        dsf_limits_arm(L, r->what, armed ? &prev : &outer);
        armed = true;
        strcpy(b->what, r->what);
        b->running = r;
        b->args->c->current = r;
        lua_rawgeti(L, LUA_REGISTRYINDEX, r->check_ref);
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 2, 0);
    }
    if (armed)
        dsf_limits_disarm(L, &outer);
    b->running = NULL;
    return 0;
}

static int cmp_finding(const void *a, const void *b)
{
    const dsf_finding *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c)
        return c;
    c = strcmp(x->rule, y->rule);
    if (c)
        return c;
    return strcmp(x->message, y->message);
}

int dsf_plugins_validate(dsf_plugins *p, const cJSON *doc,
                         const dsf_validate_opts *o, dsf_findings *out,
                         dsf_diags *d)
{
    int lrc = dsf_plugin_rules_load(p, d);
    if (lrc)
        return lrc;
    /* Validating with no rule would pass anything: say so instead. */
    if (p->nrules == 0) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "no validation rules are loaded: "
                                   "nothing would be checked");
        dsf_diag_set_hint(g, "no plugin on the plugin path declares a "
                             "rule ('dsforge plugins' lists them)");
        return DSF_EINPUT;
    }
    lua_State *L = dsf_host_state(p->host);
    size_t first = out->len;
    dsf_collector c = {p, out, NULL, o->strict, {0, NULL}, o->edits};
    dsf_push_cfg_args args = {doc, o, &c, NULL, true, LUA_NOREF, NULL};
    size_t wlen = strlen("validation");
    for (size_t i = 0; i < p->nrules; i++)
        if (strlen(p->rules[i].what) > wlen)
            wlen = strlen(p->rules[i].what);
    check_batch b = {&args, NULL, NULL, dsf_xmalloc(wlen + 1)};
    int rc = 0;
    size_t ran = 0; /* plugins whose checks ran */
    dsf_callscope_open(&c.scope);
    for (size_t pi = 0; pi < p->n && !rc; pi++) {
        if (!dsf_plugins_serves(p, pi) || !has_check(p, pi))
            continue; /* no copy of the config for a plugin with no check,
                      ** nor for one of another target */
        ran++;
        args.summary = o->summaries
                           ? cJSON_GetArrayItem(o->summaries, (int)pi)
                           : NULL;
        /* The tables its summarize had for this doc, when held. */
        args.held = p->held && p->held_doc == doc ? p->held[pi] : LUA_NOREF;
        args.params_ref = dsf_plugins_params_slot(p, pi, o->params);
        /* One copy of the config per plugin (new, or the one its
        ** summarize had), and its checks. */
        b.plugin = p->items[pi].name;
        b.running = NULL;
        strcpy(b.what, "validation");
        rc = dsf_host_cpcall(p->host, run_checks, &b, 0, b.what, d);
        if (rc && b.running) {
            dsf_diag *g = dsf_diags_last(d);
            if (g && !g->hint)
                dsf_diag_set_hint(g, "raised by %s: a bug in the "
                                     "plugin, not in the config",
                                  b.running->what);
        }
        lua_settop(L, 0);
    }
    dsf_callscope_close(&c.scope);
    dsf_limits_host_release(L); /* the copies of doc are garbage now */
    free(b.what);
    if (!rc && !ran) { /* the chosen target's plugins check nothing */
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "no validation rules are loaded for "
                                   "target '%s': nothing would be checked",
                                   o->target ? o->target : "");
        dsf_diag_set_hint(g, "no plugin serving the target declares a "
                             "rule ('dsforge plugins' lists them)");
        rc = DSF_EINPUT;
    }
    if (out->len > first)
        qsort(out->items + first, out->len - first, sizeof *out->items,
              cmp_finding);
    dsf_findings_close(out); /* the counts, after the sorted findings */
    return rc;
}

