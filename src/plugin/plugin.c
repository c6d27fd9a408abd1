/* plugin.c -- see plugin.h. */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "doc/jpath.h"
#include "json/jsonout.h"
#include "lua/conv.h"

#define MAX_DIRS 64

typedef struct resolver {
    char *plugin;
    char *name;
    int ref;
    dsf_layer layer;  /* provenance layer for its changes */
    char *label;
} resolver;

struct dsf_plugins {
    dsf_host *host;
    const char *dirs[MAX_DIRS];
    char *dir_copies[MAX_DIRS];
    size_t ndirs;
    dsf_plugin_info *items;
    size_t n;
    dsf_rule *rules;
    size_t nrules;
    resolver *resolvers;
    size_t nresolvers;
};

static const char *const plugin_fields[] = {"name", "version", "summary",
                                            "rules", "resolvers", NULL};

static bool valid_rule_id(const char *s)
{
    if (!*s)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.' || *p == '/'))
            return false;
    return true;
}

static bool parse_severity(const char *s, dsf_severity *out)
{
    if (!strcmp(s, "error"))
        *out = DSF_ERROR;
    else if (!strcmp(s, "warning"))
        *out = DSF_WARNING;
    else if (!strcmp(s, "note"))
        *out = DSF_NOTE;
    else
        return false;
    return true;
}

/* Raw string field of the table at t, or NULL (borrowed from Lua). */
static const char *raw_string(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    lua_rawget(L, t);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : NULL;
    lua_pop(L, 1); /* the string stays alive: it is a field of t */
    return s;
}

static int decl_error(dsf_diags *d, const char *file, const char *plugin,
                      const char *msg, const char *detail)
{
    dsf_diag_add(d, DSF_ERROR, file, 0, 0, "plugin '%s': %s%s", plugin, msg,
                 detail ? detail : "");
    return DSF_EINPUT;
}

/* Pushes the list field key of the declaration at t: 1 when pushed, 0
** when absent (nothing pushed), an error when it is not a table. */
static int push_list(lua_State *L, int t, const char *key,
                     const dsf_plugin_info *pi, const char *file,
                     dsf_diags *d)
{
    lua_pushstring(L, key);
    int ty = lua_rawget(L, t);
    if (ty == LUA_TTABLE)
        return 1;
    lua_pop(L, 1);
    if (ty == LUA_TNIL)
        return 0;
    dsf_diag_add(d, DSF_ERROR, file, 0, 0, "plugin '%s': '%s' must be a list",
                 pi->name, key);
    return DSF_EINPUT;
}

static int read_rules(dsf_plugins *p, lua_State *L, int t,
                      const dsf_plugin_info *pi, const char *file,
                      dsf_diags *d)
{
    int rc = push_list(L, t, "rules", pi, file, d);
    if (rc <= 0)
        return rc;
    int rt = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, rt);
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, rt, i) != LUA_TTABLE) {
            lua_pop(L, 2);
            return decl_error(d, file, pi->name, "each rule must be a table",
                              NULL);
        }
        int r = lua_gettop(L);
        const char *id = raw_string(L, r, "id");
        const char *sev = raw_string(L, r, "severity");
        const char *summary = raw_string(L, r, "summary");
        const char *fix = raw_string(L, r, "fix");
        dsf_severity s;
        if (!id || !valid_rule_id(id)) {
            lua_pop(L, 2);
            return decl_error(d, file, pi->name, "a rule needs an 'id' of "
                              "lower-case letters, digits and '-'", NULL);
        }
        if (!sev || !parse_severity(sev, &s)) {
            lua_pop(L, 2);
            dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                         "plugin '%s': rule '%s' needs a severity of "
                         "\"error\", \"warning\" or \"note\"", pi->name, id);
            return DSF_EINPUT;
        }
        if (!summary) {
            lua_pop(L, 2);
            dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                         "plugin '%s': rule '%s' needs a one-line 'summary'",
                         pi->name, id);
            return DSF_EINPUT;
        }
        for (size_t k = 0; k < p->nrules; k++) {
            if (!strcmp(p->rules[k].id, id)) {
                dsf_diag *g;
                if (!strcmp(p->rules[k].plugin, pi->name)) {
                    g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                     "plugin '%s': rule id '%s' is declared "
                                     "twice", pi->name, id);
                } else {
                    const char *other = "?";
                    for (size_t j = 0; j < p->n; j++)
                        if (!strcmp(p->items[j].name, p->rules[k].plugin))
                            other = p->items[j].dir;
                    g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                     "plugin '%s': rule id '%s' is already "
                                     "declared by plugin '%s' (%s/init.lua)",
                                     pi->name, id, p->rules[k].plugin, other);
                }
                dsf_diag_set_hint(g, "rule ids are global: rename the "
                                     "rule");
                lua_pop(L, 2);
                return DSF_EINPUT;
            }
        }
        lua_pushliteral(L, "check");
        int ct = lua_rawget(L, r);
        int ref = LUA_NOREF;
        if (ct == LUA_TFUNCTION) {
            ref = luaL_ref(L, LUA_REGISTRYINDEX);
        } else {
            lua_pop(L, 1);
            if (ct != LUA_TNIL) {
                dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                             "plugin '%s': rule '%s': check must be a "
                             "function", pi->name, id);
                lua_pop(L, 2);
                return DSF_EINPUT;
            }
        }
        p->rules = dsf_xrealloc(p->rules, (p->nrules + 1) * sizeof *p->rules);
        dsf_rule *ru = &p->rules[p->nrules++];
        ru->id = dsf_xstrdup(id);
        ru->plugin = dsf_xstrdup(pi->name);
        ru->severity = s;
        ru->summary = dsf_xstrdup(summary);
        ru->fix = dsf_xstrdup(fix);
        ru->check_ref = ref;
        ru->what = dsf_xasprintf("rule %s (plugin %s)", id, pi->name);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

static int read_resolvers(dsf_plugins *p, lua_State *L, int t,
                          const dsf_plugin_info *pi, const char *file,
                          dsf_diags *d)
{
    int rc = push_list(L, t, "resolvers", pi, file, d);
    if (rc <= 0)
        return rc;
    int rt = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, rt);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, rt, i);
        int r = lua_gettop(L);
        const char *name = lua_istable(L, r) ? raw_string(L, r, "name") : NULL;
        if (!name) {
            lua_pop(L, 2);
            return decl_error(d, file, pi->name,
                              "each resolver needs a 'name' and a 'run' "
                              "function", NULL);
        }
        lua_pushliteral(L, "run");
        if (lua_rawget(L, r) != LUA_TFUNCTION) {
            lua_pop(L, 3);
            return decl_error(d, file, pi->name, "resolver needs a 'run' "
                              "function: ", name);
        }
        int ref = luaL_ref(L, LUA_REGISTRYINDEX);
        p->resolvers = dsf_xrealloc(p->resolvers, (p->nresolvers + 1) *
                                                      sizeof *p->resolvers);
        resolver *rv = &p->resolvers[p->nresolvers++];
        rv->plugin = dsf_xstrdup(pi->name);
        rv->name = dsf_xstrdup(name);
        rv->ref = ref;
        rv->label = dsf_xasprintf("plugin %s resolver %s", pi->name, name);
        rv->layer.kind = "plugin";
        rv->layer.label = rv->label;
        rv->layer.file = NULL;
        rv->layer.line = rv->layer.col = 0;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

static int load_one(dsf_plugins *p, const char *dir, const char *name,
                    const char *origin, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    char *file = dsf_xasprintf("%s/%s/init.lua", dir, name);
    char *what = dsf_xasprintf("plugin %s", name);
    int rc;
    /* require(name) through the sandbox's require. */
    static const char chunk[] = "return require(...)";
    rc = dsf_host_load(p->host, "=plugin loader", chunk, sizeof chunk - 1, d);
    if (!rc) {
        lua_pushstring(L, name);
        rc = dsf_host_call(p->host, 1, 1, what, d);
    }
    if (rc) {
        dsf_diag *g = dsf_diags_last(d);
        if (g && !g->hint)
            dsf_diag_set_hint(g, "while loading plugin '%s' (%s)", name,
                              file);
        free(file);
        free(what);
        return rc;
    }
    int t = lua_gettop(L);
    dsf_plugin_info pi;
    memset(&pi, 0, sizeof pi);
    pi.name = (char *)name;
    if (!lua_istable(L, t)) {
        rc = decl_error(d, file, name, "init.lua must return a table",
                        NULL);
    } else {
        lua_pushnil(L);
        while (!rc && lua_next(L, t)) {
            lua_pop(L, 1);
            bool known = false;
            if (lua_type(L, -1) == LUA_TSTRING)
                for (int i = 0; plugin_fields[i]; i++)
                    known |= !strcmp(lua_tostring(L, -1), plugin_fields[i]);
            if (!known) {
                rc = decl_error(d, file, name, "unknown field (known: name, "
                                "version, summary, rules, resolvers): ",
                                lua_type(L, -1) == LUA_TSTRING
                                    ? lua_tostring(L, -1)
                                    : "?");
                lua_pop(L, 1);
            }
        }
    }
    const char *dname = rc ? NULL : raw_string(L, t, "name");
    const char *version = rc ? NULL : raw_string(L, t, "version");
    if (!rc && (!dname || strcmp(dname, name) != 0))
        rc = decl_error(d, file, name, "'name' must be the folder's name: ",
                        name);
    if (!rc && !version)
        rc = decl_error(d, file, name, "needs a 'version' string", NULL);
    if (!rc) {
        pi.version = (char *)version;
        rc = read_rules(p, L, t, &pi, file, d);
    }
    if (!rc)
        rc = read_resolvers(p, L, t, &pi, file, d);
    if (!rc) {
        p->items = dsf_xrealloc(p->items, (p->n + 1) * sizeof *p->items);
        dsf_plugin_info *it = &p->items[p->n++];
        memset(it, 0, sizeof *it);
        it->name = dsf_xstrdup(name);
        it->version = dsf_xstrdup(version);
        const char *summary = raw_string(L, t, "summary");
        it->summary = dsf_xstrdup(summary ? summary : "");
        it->dir = dsf_path_join(dir, name);
        it->origin = dsf_xstrdup(origin);
    }
    lua_settop(L, 0);
    free(file);
    free(what);
    return rc;
}

int dsf_plugins_load(dsf_plugins **out, const dsf_dirs *dirs,
                     dsf_srccache *sources, dsf_limits limits,
                     dsf_diags *warnings, dsf_diags *d)
{
    *out = NULL;
    dsf_plugins *p = dsf_xcalloc(1, sizeof *p);
    for (size_t i = 0; i < dirs->len && i < MAX_DIRS; i++) {
        p->dir_copies[i] = dsf_xstrdup(dirs->items[i].path);
        p->dirs[i] = p->dir_copies[i];
        p->ndirs++;
    }
    dsf_host_config hc = {limits, p->dirs, p->ndirs, sources, warnings};
    int rc = dsf_host_new(&p->host, &hc, d);
    /* Discover: <dir>/<name>/init.lua; a name's first directory wins. */
    for (size_t i = 0; !rc && i < dirs->len; i++) {
        char **names;
        size_t nn;
        dsf_list_dir(&names, &nn, dirs->items[i].path);
        for (size_t k = 0; !rc && k < nn; k++) {
            char *init = dsf_xasprintf("%s/%s/init.lua", dirs->items[i].path,
                                       names[k]);
            bool is_plugin = dsf_is_file(init);
            bool seen = false;
            for (size_t j = 0; j < p->n; j++)
                seen |= !strcmp(p->items[j].name, names[k]);
            if (is_plugin && !seen) {
                rc = load_one(p, dirs->items[i].path, names[k],
                              dirs->items[i].origin, d);
                if (!rc) {
                    const dsf_source *s;
                    if (dsf_srccache_get(sources, init, &s, d) == 0)
                        memcpy(p->items[p->n - 1].sha256,
                               dsf_source_sha256(s), 65);
                }
            }
            free(init);
        }
        dsf_free_strv(names, nn);
    }
    if (rc) {
        dsf_plugins_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void dsf_plugins_free(dsf_plugins *p)
{
    if (!p)
        return;
    dsf_host_free(p->host);
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].name);
        free(p->items[i].version);
        free(p->items[i].summary);
        free(p->items[i].dir);
        free(p->items[i].origin);
    }
    for (size_t i = 0; i < p->nrules; i++) {
        free(p->rules[i].id);
        free(p->rules[i].plugin);
        free(p->rules[i].summary);
        free(p->rules[i].fix);
        free(p->rules[i].what);
    }
    for (size_t i = 0; i < p->nresolvers; i++) {
        free(p->resolvers[i].plugin);
        free(p->resolvers[i].name);
        free(p->resolvers[i].label);
    }
    for (size_t i = 0; i < p->ndirs; i++)
        free(p->dir_copies[i]);
    free(p->items);
    free(p->rules);
    free(p->resolvers);
    free(p);
}

const dsf_plugin_info *dsf_plugins_list(const dsf_plugins *p, size_t *n)
{
    *n = p->n;
    return p->items;
}

const dsf_rule *dsf_plugins_rules(const dsf_plugins *p, size_t *n)
{
    *n = p->nrules;
    return p->rules;
}

/* ------------------------------------------------------------------ */
/* Validation. */

typedef struct collector {
    dsf_plugins *p;
    dsf_findings *out;
    const dsf_rule *current;
} collector;

static const dsf_rule *find_rule(const dsf_plugins *p, const char *id)
{
    for (size_t i = 0; i < p->nrules; i++)
        if (!strcmp(p->rules[i].id, id))
            return &p->rules[i];
    return NULL;
}

/* ctx.report{rule=, path=, message=, fix=, severity=}. Raises on a bad
** finding (that is a bug in the rule, reported with its location). */
static int l_report(lua_State *L)
{
    collector *c = lua_touserdata(L, lua_upvalueindex(1));
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!c->current)
        return luaL_error(L, "ctx.report is only available to rules (a "
                             "resolver changes the config instead)");
    const char *rule = raw_string(L, 1, "rule");
    const char *message = raw_string(L, 1, "message");
    const char *fix = raw_string(L, 1, "fix");
    const char *sev = raw_string(L, 1, "severity");
    const dsf_rule *r = rule ? find_rule(c->p, rule) : c->current;
    if (!r)
        return luaL_error(L, "ctx.report: rule '%s' is not declared by any "
                             "plugin", rule);
    if (strcmp(r->plugin, c->current->plugin) != 0)
        return luaL_error(L, "ctx.report: rule '%s' belongs to plugin '%s'",
                          rule, r->plugin);
    if (!message)
        return luaL_error(L, "ctx.report: 'message' (a string) is required");
    dsf_severity s = r->severity;
    if (sev && !parse_severity(sev, &s))
        return luaL_error(L, "ctx.report: bad severity '%s'", sev);
    /* The path: a string or a list of keys and (0-based) indices. */
    dsf_buf path = DSF_BUF_INIT;
    lua_pushliteral(L, "path");
    int pt = lua_rawget(L, 1);
    if (pt == LUA_TSTRING) {
        dsf_buf_puts(&path, lua_tostring(L, -1));
    } else if (pt == LUA_TTABLE) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            int et = lua_rawgeti(L, -1, i);
            if (et == LUA_TSTRING)
                dsf_jpath_append_key(&path, lua_tostring(L, -1));
            else if (et == LUA_TNUMBER && lua_isinteger(L, -1))
                /* Lua indices are 1-based; paths are JSON's 0-based. */
                dsf_buf_printf(&path, "[%lld]",
                               (long long)lua_tointeger(L, -1) - 1);
            lua_pop(L, 1);
        }
    } else if (pt != LUA_TNIL) {
        dsf_buf_free(&path);
        return luaL_error(L, "ctx.report: 'path' must be a string or a "
                             "list");
    }
    lua_pop(L, 1);
    dsf_findings *f = c->out;
    dsf_xgrow((void **)&f->items, &f->cap, f->len + 1, sizeof *f->items);
    dsf_finding *x = &f->items[f->len++];
    x->rule = dsf_xstrdup(r->id);
    x->plugin = dsf_xstrdup(r->plugin);
    x->severity = s;
    x->path = dsf_buf_take(&path);
    x->message = dsf_xstrdup(message);
    x->fix = dsf_xstrdup(fix ? fix : r->fix);
    return 0;
}

typedef struct push_cfg_args {
    const cJSON *doc;
    const dsf_validate_opts *o;
    collector *c;
} push_cfg_args;

/* Pushes cfg and ctx (protected: allocates in Lua). */
static int push_cfg_ctx(lua_State *L)
{
    push_cfg_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    dsf_json_push(L, a->doc);
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, (lua_Integer)a->o->world_size);
    lua_setfield(L, -2, "world_size");
    lua_pushstring(L, a->o->target);
    lua_setfield(L, -2, "target");
    lua_pushstring(L, a->o->mode);
    lua_setfield(L, -2, "mode");
    if (a->o->params) {
        dsf_json_push(L, a->o->params);
        lua_setfield(L, -2, "params");
    }
    lua_pushlightuserdata(L, a->c);
    lua_pushcclosure(L, l_report, 1);
    lua_setfield(L, -2, "report");
    return 2;
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
    lua_State *L = dsf_host_state(p->host);
    size_t first = out->len;
    collector c = {p, out, NULL};
    push_cfg_args args = {doc, o, &c};
    int rc = 0;
    for (size_t pi = 0; pi < p->n && !rc; pi++) {
        /* One fresh copy of the config per plugin. */
        rc = dsf_host_cpcall(p->host, push_cfg_ctx, &args, 2, "validation",
                             d);
        if (rc)
            break;
        int cfg = lua_gettop(L) - 1, ctx = cfg + 1;
        for (size_t i = 0; i < p->nrules && !rc; i++) {
            const dsf_rule *r = &p->rules[i];
            if (r->check_ref == LUA_NOREF ||
                strcmp(r->plugin, p->items[pi].name) != 0)
                continue;
            c.current = r;
            lua_rawgeti(L, LUA_REGISTRYINDEX, r->check_ref);
            lua_pushvalue(L, cfg);
            lua_pushvalue(L, ctx);
            rc = dsf_host_call(p->host, 2, 0, r->what, d);
            if (rc) {
                dsf_diag *g = dsf_diags_last(d);
                if (g && !g->hint)
                    dsf_diag_set_hint(g, "raised by %s: a bug in the "
                                         "plugin, not in the config",
                                      r->what);
            }
        }
        lua_settop(L, 0);
    }
    if (out->len > first)
        qsort(out->items + first, out->len - first, sizeof *out->items,
              cmp_finding);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Resolvers. */

/* Records in prov what changed between old and new below path. */
static void record_diff(dsf_prov *prov, const cJSON *old, const cJSON *nu,
                        dsf_buf *path, const dsf_layer *layer)
{
    if (cJSON_IsObject(old) && cJSON_IsObject(nu)) {
        for (const cJSON *m = nu->child; m; m = m->next) {
            size_t mark = path->len;
            dsf_jpath_append_key(path, m->string);
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(old, m->string);
            if (!o)
                dsf_prov_add(prov, path->data, DSF_PROV_SET, layer, 0, 0, m);
            else
                record_diff(prov, o, m, path, layer);
            path->len = mark;
            path->data[mark] = '\0';
        }
        for (const cJSON *m = old->child; m; m = m->next) {
            if (cJSON_GetObjectItemCaseSensitive(nu, m->string))
                continue;
            size_t mark = path->len;
            dsf_jpath_append_key(path, m->string);
            dsf_prov_add(prov, path->data, DSF_PROV_DELETE, layer, 0, 0,
                         NULL);
            path->len = mark;
            path->data[mark] = '\0';
        }
        return;
    }
    if (!cJSON_Compare(old, nu, true))
        dsf_prov_add(prov, path->data, DSF_PROV_OVERRIDE, layer, 0, 0, nu);
}

int dsf_plugins_resolve(dsf_plugins *p, cJSON **doc,
                        const dsf_validate_opts *o, dsf_prov *prov,
                        dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    dsf_findings none = DSF_FINDINGS_INIT;
    collector c = {p, &none, NULL};
    int rc = 0;
    for (size_t i = 0; i < p->nresolvers && !rc; i++) {
        resolver *rv = &p->resolvers[i];
        push_cfg_args args = {*doc, o, &c};
        lua_rawgeti(L, LUA_REGISTRYINDEX, rv->ref);
        rc = dsf_host_cpcall(p->host, push_cfg_ctx, &args, 2, rv->label, d);
        if (rc) {
            lua_settop(L, 0);
            break;
        }
        rc = dsf_host_call(p->host, 2, 1, rv->label, d);
        if (!rc && lua_istable(L, -1)) {
            cJSON *nu;
            char *err;
            if (dsf_lua_to_json(&nu, &err, L, -1, 0) != 0) {
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s returned a config that is not JSON: "
                                    "%s", rv->label, err);
                free(err);
            } else {
                if (prov) {
                    dsf_buf path = DSF_BUF_INIT;
                    dsf_buf_puts(&path, "");
                    record_diff(prov, *doc, nu, &path, &rv->layer);
                    dsf_buf_free(&path);
                }
                cJSON_Delete(*doc);
                *doc = nu;
            }
        } else if (!rc && !lua_isnil(L, -1)) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s must return the config (a table) or "
                                "nil", rv->label);
        }
        lua_settop(L, 0);
    }
    dsf_findings_free(&none);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Helper calls. */

typedef struct call_args {
    const char *module, *fn;
    const cJSON *args;
} call_args;

static int push_call(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_getfield(L, LUA_REGISTRYINDEX, "dsforge.base");
    lua_getfield(L, -1, "require");
    lua_remove(L, -2);
    lua_pushstring(L, a->module);
    lua_call(L, 1, 1);
    if (!lua_istable(L, -1))
        return luaL_error(L, "module '%s' is not a table", a->module);
    lua_getfield(L, -1, a->fn);
    if (!lua_isfunction(L, -1))
        return luaL_error(L, "module '%s' has no function '%s'", a->module,
                          a->fn);
    lua_remove(L, -2);
    int n = 0;
    for (const cJSON *c = a->args ? a->args->child : NULL; c; c = c->next) {
        dsf_json_push(L, c);
        n++;
    }
    lua_call(L, n, 1);
    return 1;
}

int dsf_plugins_call(dsf_plugins *p, const char *module, const char *fn,
                     const cJSON *args, cJSON **result, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    *result = NULL;
    call_args a = {module, fn, args};
    char *what = dsf_xasprintf("%s.%s", module, fn);
    int rc = dsf_host_cpcall(p->host, push_call, &a, 1, what, d);
    if (!rc) {
        char *err;
        if (dsf_lua_to_json(result, &err, L, -1, 0) != 0) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s returned a value that is not JSON: %s",
                                what, err);
            free(err);
        }
    }
    lua_settop(L, 0);
    free(what);
    return rc;
}

void dsf_findings_free(dsf_findings *f)
{
    for (size_t i = 0; i < f->len; i++) {
        free(f->items[i].rule);
        free(f->items[i].plugin);
        free(f->items[i].path);
        free(f->items[i].message);
        free(f->items[i].fix);
    }
    free(f->items);
    f->items = NULL;
    f->len = f->cap = 0;
}
