/* plugin.c -- discovering and loading plugins, reading their
** declarations (see plugin.h). Running them: validate.c, resolve.c. */
#include "plugin/plugin_internal.h"
#include "plugin/decl.h"
#include "plugin/rules.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/buf.h"
#include "core/xalloc.h"
#include "lua/scriptfs.h"
#include "plugin/options.h"
#include "plugin/summary.h"

/* The fields of a declaration (interface 1). "commands" is read by
** commands.c, "emitters" by emit.c, "check_command" by cmdcheck.c,
** "machine_params" by machine_params.c, "options" by options.c,
** "readers" and "results" by readers.c, "targets" by targets.c (when
** a command first needs them); the others here and in summary.c. */
static const char *const plugin_fields[] = {
    "name",      "version",   "summary",  "interface", "rules",
    "resolvers", "summarize", "columns",  "commands",  "report",
    "emitters",  "check_command", "machine_params", "options",
    "readers",   "results",   "targets",   NULL};

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
        const char *name = lua_istable(L, r) ? dsf_plugin_raw_string(L, r, "name") : NULL;
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
        lua_pushliteral(L, "when");
        int wt = lua_rawget(L, r);
        char *when = wt == LUA_TSTRING ? dsf_xstrdup(lua_tostring(L, -1)) : NULL;
        lua_pop(L, 1);
        if (wt != LUA_TNIL && !when) {
            luaL_unref(L, LUA_REGISTRYINDEX, ref);
            lua_pop(L, 2);
            return decl_error(d, file, pi->name, "a resolver's 'when' must "
                              "name a param (a string): ", name);
        }
        p->resolvers = dsf_xrealloc(p->resolvers, (p->nresolvers + 1) *
                                                      sizeof *p->resolvers);
        resolver *rv = &p->resolvers[p->nresolvers++];
        rv->plugin = dsf_xstrdup(pi->name);
        rv->name = dsf_xstrdup(name);
        rv->when = when;
        rv->ref = ref;
        rv->label = dsf_xconcat("plugin ", pi->name, " resolver ", name, NULL);
        rv->layer.kind = "plugin";
        rv->layer.label = rv->label;
        rv->layer.file = NULL;
        rv->layer.line = rv->layer.col = 0;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

/* interface = N: absent means 1 (plugins written before the field); a
** version this dsforge does not provide is refused. */
static int read_interface(lua_State *L, int t, const char *name,
                          const char *file, int *out, dsf_diags *d)
{
    lua_pushliteral(L, "interface");
    int ty = lua_rawget(L, t);
    int isint = 0;
    lua_Integer v = lua_tointegerx(L, -1, &isint);
    lua_pop(L, 1);
    if (ty == LUA_TNIL)
        return 0;
    if (ty != LUA_TNUMBER || !isint || v < 1) {
        dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                     "plugin '%s': 'interface' must be a whole number >= 1",
                     name);
        return DSF_EINPUT;
    }
    if (v > DSF_PLUGIN_INTERFACE) {
        dsf_diag *g = dsf_diag_add(
            d, DSF_ERROR, file, 0, 0,
            "plugin '%s' needs plugin interface %lld, but this dsforge "
            "provides interface %d", name, (long long)v,
            DSF_PLUGIN_INTERFACE);
        dsf_diag_set_hint(g, "upgrade dsforge, or use a version of the "
                             "plugin written for interface %d",
                          DSF_PLUGIN_INTERFACE);
        return DSF_EINPUT;
    }
    *out = (int)v;
    return 0;
}

static int load_one(dsf_plugins *p, const char *dir, const char *name,
                    const char *origin, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    char *file = dsf_xconcat(dir, "/", name, "/init.lua", NULL);
    char *what = dsf_xconcat("plugin ", name, NULL);
    int rc;
    /* require(name) through the sandbox's require (no chunk of our own:
    ** a state that loads only built-ins runs without the count hook). */
    rc = dsf_host_require(p->host, name, what, d);
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
            if (!dsf_plugin_known_key(L, -1, plugin_fields)) {
                dsf_buf k = DSF_BUF_INIT;
                dsf_buf_puts(&k, "unknown field (known: ");
                for (int i = 0; plugin_fields[i]; i++)
                    dsf_buf_printf(&k, "%s%s", i ? ", " : "",
                                   plugin_fields[i]);
                dsf_buf_puts(&k, "): ");
                rc = decl_error(d, file, name, k.data,
                                lua_type(L, -1) == LUA_TSTRING
                                    ? lua_tostring(L, -1)
                                    : "?");
                dsf_buf_free(&k);
                lua_pop(L, 1);
            }
        }
    }
    const char *dname = rc ? NULL : dsf_plugin_raw_string(L, t, "name");
    const char *version = rc ? NULL : dsf_plugin_raw_string(L, t, "version");
    if (!rc && (!dname || strcmp(dname, name) != 0))
        rc = decl_error(d, file, name, "'name' must be the folder's name: ",
                        name);
    if (!rc && !version)
        rc = decl_error(d, file, name, "needs a 'version' string", NULL);
    int iface = 1;
    if (!rc)
        rc = read_interface(L, t, name, file, &iface, d);
    int rules_ref = LUA_NOREF;
    if (!rc) {
        pi.version = (char *)version;
        rc = dsf_plugin_read_rules(p, L, t, &pi, file, &rules_ref, d);
    }
    if (!rc)
        rc = read_resolvers(p, L, t, &pi, file, d);
    int summarize_ref = LUA_NOREF;
    if (!rc) {
        lua_pushliteral(L, "summarize");
        int ty = lua_rawget(L, t);
        if (ty == LUA_TFUNCTION)
            summarize_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        else {
            lua_pop(L, 1);
            if (ty != LUA_TNIL)
                rc = decl_error(d, file, name, "'summarize' must be a "
                                "function", NULL);
        }
    }
    if (!rc)
        rc = dsf_plugin_read_emitters(p, L, t, name, file, d);
    if (!rc)
        rc = dsf_cmdchecks_read(&p->cmdchecks, L, t, name, file, d);
    if (!rc)
        rc = dsf_machine_hooks_read(&p->machine, L, t, name, file, d);
    if (!rc) {
        p->items = dsf_xrealloc(p->items, (p->n + 1) * sizeof *p->items);
        dsf_plugin_info *it = &p->items[p->n++];
        memset(it, 0, sizeof *it);
        it->name = dsf_xstrdup(name);
        it->version = dsf_xstrdup(version);
        const char *summary = dsf_plugin_raw_string(L, t, "summary");
        it->summary = dsf_xstrdup(summary ? summary : "");
        it->dir = dsf_path_join(dir, name);
        it->origin = dsf_xstrdup(origin);
        it->interface = iface;
        p->summarize_refs = dsf_xrealloc(p->summarize_refs,
                                         p->n * sizeof *p->summarize_refs);
        p->summarize_refs[p->n - 1] = summarize_ref;
        p->rules_refs = dsf_xrealloc(p->rules_refs,
                                     p->n * sizeof *p->rules_refs);
        p->rules_refs[p->n - 1] = rules_ref;
        p->summarize_what = dsf_xrealloc(p->summarize_what,
                                         p->n * sizeof *p->summarize_what);
        p->summarize_what[p->n - 1] = dsf_xconcat("plugin ", name,
                                                  " summarize", NULL);
    }
    if (!rc) {
        /* The declaration stays in the state: its commands, summary
        ** columns and report layout are read when a command first needs
        ** them (dsf_plugins_read_commands, dsf_plugins_read_summaries). */
        p->decls = dsf_xrealloc(p->decls, p->n * sizeof *p->decls);
        lua_pushvalue(L, t);
        p->decls[p->n - 1].ref = luaL_ref(L, LUA_REGISTRYINDEX);
        p->decls[p->n - 1].file = dsf_xstrdup(file);
    }
    lua_settop(L, 0);
    free(file);
    free(what);
    return rc;
}

/* Records that the copy of plugin name in dir is not used: winner, from
** a directory earlier on the path, is. */
static void add_shadowed(dsf_plugins *p, const dsf_dir *dir,
                         const char *name, const dsf_plugin_info *winner,
                         dsf_diags *warnings)
{
    dsf_xgrow((void **)&p->shadowed, &p->cap_shadowed, p->nshadowed + 1,
              sizeof *p->shadowed);
    dsf_plugin_shadowed *s = &p->shadowed[p->nshadowed++];
    s->name = dsf_xstrdup(name);
    s->dir = dsf_path_join(dir->path, name);
    s->origin = dsf_xstrdup(dir->origin);
    if (dir->from_repo && !dir->may_override)
        s->reason = dsf_xasprintf(
            "a repository's plugin may not replace the %s plugin '%s' "
            "(the project allows it with \"override_plugins\": true for "
            "this repository in dsforge.repos.json)", winner->origin, name);
    else
        s->reason = dsf_xasprintf("shadowed by the %s copy (%s)",
                                  winner->origin, winner->dir);
    /* A refused repository plugin changes what runs: say so every time. */
    if (dir->from_repo && !dir->may_override && warnings)
        dsf_diag_add(warnings, DSF_WARNING, NULL, 0, 0,
                     "plugin '%s' of %s is not used: %s", name, dir->origin,
                     s->reason);
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
    if (!rc)
        dsf_host_gc_loading(p->host, true);
    /* Discover: <dir>/<name>/init.lua; a name's first directory wins. */
    for (size_t i = 0; !rc && i < dirs->len; i++) {
        char **names;
        size_t nn;
        dsf_scriptfs_list_dir(&names, &nn, dirs->items[i].path);
        for (size_t k = 0; !rc && k < nn; k++) {
            char *init = dsf_xconcat(dirs->items[i].path, "/", names[k],
                                     "/init.lua", NULL);
            bool is_plugin = dsf_scriptfs_is_file(init);
            const dsf_plugin_info *winner = NULL;
            for (size_t j = 0; j < p->n && !winner; j++)
                if (!strcmp(p->items[j].name, names[k]))
                    winner = &p->items[j];
            if (is_plugin && winner)
                add_shadowed(p, &dirs->items[i], names[k], winner,
                             warnings);
            if (is_plugin && !winner) {
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
    dsf_host_gc_loading(p->host, false);
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
        cJSON_Delete(p->items[i].report);
    }
    for (size_t i = 0; i < p->nrules; i++)
        free(p->rules[i].id); /* and the rule's other strings */
    for (size_t i = 0; i < p->nresolvers; i++) {
        free(p->resolvers[i].plugin);
        free(p->resolvers[i].name);
        free(p->resolvers[i].when);
        free(p->resolvers[i].label);
    }
    dsf_plugin_commands_free(&p->commands);
    dsf_cmdchecks_free(&p->cmdchecks);
    dsf_machine_hooks_free(&p->machine);
    dsf_plugins_options_free(p);
    dsf_targets_free(&p->targets);
    free(p->has_check);
    for (size_t i = 0; i < p->ndirs; i++)
        free(p->dir_copies[i]);
    for (size_t i = 0; i < p->nshadowed; i++) {
        free(p->shadowed[i].name);
        free(p->shadowed[i].dir);
        free(p->shadowed[i].origin);
        free(p->shadowed[i].reason);
    }
    free(p->shadowed);
    if (p->summarize_what)
        for (size_t i = 0; i < p->n; i++)
            free(p->summarize_what[i]);
    free(p->summarize_what);
    free(p->summarize_refs);
    free(p->held);
    free(p->held_params);
    free(p->rules_refs);
    if (p->decls)
        for (size_t i = 0; i < p->n; i++)
            free(p->decls[i].file);
    free(p->decls);
    dsf_plugin_free_columns(p);
    dsf_plugin_free_emitters(p);
    dsf_plugin_free_results(p);
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

int dsf_plugins_load_rules(dsf_plugins *p, dsf_diags *d)
{
    return dsf_plugin_rules_load(p, d);
}

const dsf_rule *dsf_plugins_rules(const dsf_plugins *p, size_t *n)
{
    *n = p->nrules;
    return p->rules;
}

const dsf_plugin_shadowed *dsf_plugins_shadowed(const dsf_plugins *p,
                                                size_t *n)
{
    *n = p->nshadowed;
    return p->shadowed;
}
