/* commands.c -- see commands.h. */
#include "plugin/commands.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"
#include "lua/callscope.h"
#include "lua/conv.h"
#include "lua/guard.h"
#include "plugin/decl.h"
#include "plugin/plugin_internal.h"

static const char *const command_fields[] = {
    "name", "summary", "usage", "description", "notes", "positional",
    "options", "run", NULL};

static bool valid_name(const char *s, bool command)
{
    if (!s || !*s || !(*s >= 'a' && *s <= 'z'))
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || (!command && *p == '_')))
            return false;
    return true;
}

static int bad(dsf_diags *d, const char *file, const char *plugin,
               const char *cmd, const char *msg)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                               "plugin '%s': command '%s': %s", plugin,
                               cmd ? cmd : "?", msg);
    dsf_diag_set_hint(g, "see 'Commands' in contrib/docs/plugins.md");
    return DSF_EINPUT;
}

static char *opt_str(lua_State *L, int t, const char *key, bool *wrong)
{
    lua_pushstring(L, key);
    int ty = lua_rawget(L, t);
    char *s = ty == LUA_TSTRING ? dsf_xstrdup(lua_tostring(L, -1)) : NULL;
    if (ty != LUA_TSTRING && ty != LUA_TNIL)
        *wrong = true;
    lua_pop(L, 1);
    return s;
}

static void free_command(dsf_plugin_command *c)
{
    free(c->name);
    free(c->plugin);
    free(c->summary);
    free(c->usage);
    free(c->description);
    free(c->notes);
    free(c->positional);
    for (size_t i = 0; i < c->nopts; i++)
        dsf_plugin_option_free(&c->opts[i]);
    free(c->opts);
}

static int read_options(dsf_plugin_command *c, lua_State *L, int t,
                        const char *file, dsf_diags *d)
{
    lua_pushliteral(L, "options");
    int ty = lua_rawget(L, t);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        c->opts = dsf_xcalloc(1, sizeof *c->opts);
        return 0;
    }
    if (ty != LUA_TTABLE) {
        lua_pop(L, 1);
        return bad(d, file, c->plugin, c->name, "'options' must be a list");
    }
    int ot = lua_gettop(L);
    size_t n = (size_t)lua_rawlen(L, ot);
    c->opts = dsf_xcalloc(n + 1, sizeof *c->opts);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (lua_rawgeti(L, ot, (lua_Integer)i + 1) != LUA_TTABLE) {
            lua_pop(L, 1);
            rc = bad(d, file, c->plugin, c->name,
                     "each option must be a table");
            break;
        }
        char msg[400];
        if (dsf_plugin_option_read(&c->opts[c->nopts++], L, lua_gettop(L),
                                   false, c->plugin, msg, sizeof msg))
            rc = bad(d, file, c->plugin, c->name, msg);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return rc;
}

static int read_one(dsf_plugin_commands *cmds, lua_State *L, int t,
                    const char *plugin, const char *file, dsf_diags *d)
{
    dsf_plugin_command c;
    memset(&c, 0, sizeof c);
    c.ref = LUA_NOREF;
    c.plugin = dsf_xstrdup(plugin);
    bool wrong = false;
    c.name = opt_str(L, t, "name", &wrong);
    const char *field = dsf_plugin_unknown_field(L, t, command_fields);
    int rc = 0;
    if (field) {
        char msg[200];
        snprintf(msg, sizeof msg, "unknown field '%.60s' (known: name, "
                 "summary, usage, description, notes, positional, options, "
                 "run)", field);
        rc = bad(d, file, plugin, c.name, msg);
    }
    c.summary = opt_str(L, t, "summary", &wrong);
    c.usage = opt_str(L, t, "usage", &wrong);
    c.description = opt_str(L, t, "description", &wrong);
    c.notes = opt_str(L, t, "notes", &wrong);
    c.positional = opt_str(L, t, "positional", &wrong);
    if (!rc && (!valid_name(c.name, true) || !c.summary || wrong))
        rc = bad(d, file, plugin, c.name, "needs a 'name' (lower-case "
                 "letters, digits, '-') and a one-line 'summary'; usage, "
                 "description, notes and positional are strings");
    if (!rc && !c.usage)
        c.usage = dsf_xconcat(c.name, " [options]", NULL);
    for (size_t i = 0; !rc && i < cmds->n; i++) {
        if (!strcmp(cmds->items[i].name, c.name)) {
            char msg[200];
            snprintf(msg, sizeof msg, "already declared by plugin '%.60s'",
                     cmds->items[i].plugin);
            rc = bad(d, file, plugin, c.name, msg);
        }
    }
    if (!rc)
        rc = read_options(&c, L, t, file, d);
    if (!rc) {
        lua_pushliteral(L, "run");
        if (lua_rawget(L, t) == LUA_TFUNCTION) {
            c.ref = luaL_ref(L, LUA_REGISTRYINDEX);
        } else {
            lua_pop(L, 1);
            rc = bad(d, file, plugin, c.name, "needs a 'run' function");
        }
    }
    if (rc) {
        free_command(&c);
        return rc;
    }
    cmds->items = dsf_xrealloc(cmds->items,
                               (cmds->n + 1) * sizeof *cmds->items);
    cmds->items[cmds->n++] = c;
    return 0;
}

/* One entry of the `commands` list (dsf_plugin_read_list's item). */
static int read_entry(dsf_plugins *p, lua_State *L, int r, lua_Integer i,
                      const char *plugin, const char *file, dsf_diags *d)
{
    if (lua_type(L, r) != LUA_TTABLE) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                   "plugin '%s': command #%lld must be a "
                                   "table, not a %s", plugin, (long long)i,
                                   luaL_typename(L, r));
        dsf_diag_set_hint(g, "see 'Commands' in contrib/docs/plugins.md");
        return DSF_EINPUT;
    }
    return read_one(&p->commands, L, r, plugin, file, d);
}

int dsf_plugins_read_commands(dsf_plugins *p, dsf_diags *d)
{
    if (p->commands_read)
        return 0;
    int rc = dsf_plugins_each_list(p, "commands", read_entry, d);
    if (rc) { /* nothing half-read is kept */
        dsf_plugin_commands_free(&p->commands);
        return rc;
    }
    p->commands_read = true;
    return 0;
}

void dsf_plugin_commands_free(dsf_plugin_commands *cmds)
{
    for (size_t i = 0; i < cmds->n; i++)
        free_command(&cmds->items[i]);
    free(cmds->items);
    cmds->items = NULL;
    cmds->n = 0;
}

const dsf_plugin_command *dsf_plugins_commands(const dsf_plugins *p,
                                               size_t *n)
{
    *n = p->commands.n;
    return p->commands.items;
}

/* ------------------------------------------------------------------ */
/* Running one. */

typedef struct run_ctx {
    const dsf_plugin_command *c;
    const cJSON *opts, *args;
    char *const *cmdline;
    int ncmdline;
    const cJSON *values;
    dsf_callscope scope; /* open while ctx.read_json, ctx.is_file work */
} run_ctx;

static bool on_cmdline(const run_ctx *rc, const char *path)
{
    for (int i = 0; i < rc->ncmdline; i++) {
        const char *w = rc->cmdline[i];
        const char *eq = w[0] == '-' ? strchr(w, '=') : NULL;
        if (!strcmp(w, path) || (eq && !strcmp(eq + 1, path)))
            return true;
    }
    return false;
}

static const char *path_arg(lua_State *L, const run_ctx *rc)
{
    const char *path = luaL_checkstring(L, 1);
    if (!on_cmdline(rc, path))
        luaL_error(L, "'%s' is not on the command line: a command reads "
                   "only the files its user names", path);
    return path;
}

static void delete_json(void *doc) { cJSON_Delete(doc); }

static void delete_diags(void *d)
{
    dsf_diags_free(d);
    free(d);
}

/* ctx.read_json(path) -> value | nil, {message, file, line, col, kind} */
static int l_read_json(lua_State *L)
{
    const run_ctx *rc = dsf_callscope_data(L, "ctx.read_json");
    const char *path = path_arg(L, rc);
    cJSON *doc = NULL;
    /* The document is the guard's while pushing it may raise. */
    dsf_guard *guard = dsf_guard_push(L);
    dsf_diags d = DSF_DIAGS_INIT;
    if (dsf_json_load_file(&doc, NULL, path, &d) == 0) {
        dsf_diags_free(&d);
        guard->p = doc;
        guard->release = delete_json;
        dsf_json_push(L, doc);
        dsf_guard_release(guard);
        return 1;
    }
    /* d's messages are the guard's while the pushes below may raise. */
    dsf_diags *kept = dsf_xmalloc(sizeof *kept);
    *kept = d;
    guard->p = kept;
    guard->release = delete_diags;
    lua_pushnil(L);
    lua_createtable(L, 0, 5);
    const dsf_diag *g = kept->len ? &kept->items[0] : NULL;
    lua_pushstring(L, g ? g->message : "cannot read the file");
    lua_setfield(L, -2, "message");
    lua_pushstring(L, g && g->file ? g->file : path);
    lua_setfield(L, -2, "file");
    lua_pushinteger(L, g ? g->line : 0);
    lua_setfield(L, -2, "line");
    lua_pushinteger(L, g ? g->col : 0);
    lua_setfield(L, -2, "col");
    lua_pushliteral(L, "input");
    lua_setfield(L, -2, "kind");
    dsf_guard_release(guard);
    return 2;
}

static int l_is_file(lua_State *L)
{
    const run_ctx *rc = dsf_callscope_data(L, "ctx.is_file");
    lua_pushboolean(L, dsf_is_file(path_arg(L, rc)));
    return 1;
}

/* ctx.json(value [, pretty]) -> the canonical JSON text of value */
int dsf_plugin_lua_json(lua_State *L)
{
    luaL_checkany(L, 1);
    cJSON *v;
    char *err;
    if (dsf_lua_to_json(&v, &err, L, 1, 0) != 0) {
        lua_pushstring(L, err);
        free(err);
        return lua_error(L);
    }
    char *s = dsf_json_print(v, lua_toboolean(L, 2));
    cJSON_Delete(v);
    size_t n = strlen(s);
    if (n && s[n - 1] == '\n' && !lua_toboolean(L, 2))
        n--;
    lua_pushlstring(L, s, n); /* raises only at the memory limit (as above) */
    free(s);
    return 1;
}

static int push_run(lua_State *L)
{
    run_ctx *rc = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, rc->c->ref);
    dsf_json_push(L, rc->opts);
    dsf_json_push(L, rc->args);
    lua_createtable(L, 0, 4);
    dsf_callscope_push(L, &rc->scope, l_read_json, rc);
    lua_setfield(L, -2, "read_json");
    dsf_callscope_push(L, &rc->scope, l_is_file, rc);
    lua_setfield(L, -2, "is_file");
    lua_pushcfunction(L, dsf_plugin_lua_json);
    lua_setfield(L, -2, "json");
    lua_pushstring(L, rc->c->name);
    lua_setfield(L, -2, "command");
    dsf_plugin_push_values(L, -1, rc->values);
    lua_call(L, 3, 2);
    return 2;
}

static const char *field(lua_State *L, int t, const char *k)
{
    const char *s = dsf_plugin_raw_string(L, t, k);
    return s;
}

static int raw_int(lua_State *L, int t, const char *k)
{
    lua_pushstring(L, k);
    lua_rawget(L, t);
    int v = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    return v;
}

/* The error a command returned (nil, err): a diagnostic and its code. */
static int command_error(lua_State *L, int e, const char *what, dsf_diags *d)
{
    if (lua_type(L, e) == LUA_TSTRING) {
        dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s", lua_tostring(L, e));
        return DSF_EUSAGE;
    }
    if (!lua_istable(L, e) || !field(L, e, "message"))
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "%s returned an error that is neither a string "
                              "nor a table with a 'message'", what);
    const char *kind = field(L, e, "kind");
    bool input = kind && !strcmp(kind, "input");
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, field(L, e, "file"),
                               raw_int(L, e, "line"), raw_int(L, e, "col"),
                               "%s", field(L, e, "message"));
    const char *hint = field(L, e, "hint");
    if (hint)
        dsf_diag_set_hint(g, "%s", hint);
    return input ? DSF_EINPUT : DSF_EUSAGE;
}

int dsf_plugins_run_command(dsf_plugins *p, const dsf_plugin_command *c,
                            const cJSON *opts, const cJSON *args,
                            char *const *cmdline, int ncmdline,
                            const cJSON *values, char **out, int *status,
                            dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    *out = NULL;
    *status = 0;
    run_ctx rc = {c, opts, args, cmdline, ncmdline, values, {0, NULL}};
    char *what = dsf_xconcat("command ", c->name, " (plugin ", c->plugin, ")",
                             NULL);
    dsf_callscope_open(&rc.scope);
    int r = dsf_host_cpcall(p->host, push_run, &rc, 2, what, d);
    dsf_callscope_close(&rc.scope);
    if (!r) {
        int top = lua_gettop(L);
        int v = top - 1, e = top;
        if (lua_isnil(L, v) && !lua_isnil(L, e)) {
            r = command_error(L, e, what, d);
        } else if (!lua_isnil(L, e) && !lua_isinteger(L, e)) {
            r = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                               "%s: its second result must be an exit "
                               "status (an integer) or absent", what);
        } else {
            if (lua_isinteger(L, e)) {
                lua_Integer s = lua_tointeger(L, e);
                *status = s < 0 || s > 5 ? 5 : (int)s;
            }
            if (lua_type(L, v) == LUA_TSTRING) {
                size_t n;
                const char *s = lua_tolstring(L, v, &n);
                *out = dsf_xstrndup(s, n);
            } else if (lua_isnil(L, v)) {
                *out = dsf_xstrdup("");
            } else {
                cJSON *j;
                char *err;
                if (dsf_lua_to_json(&j, &err, L, v, 0) != 0) {
                    r = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                       "%s returned a value that is not "
                                       "JSON: %s", what, err);
                    free(err);
                } else {
                    *out = dsf_json_print(j, true);
                    cJSON_Delete(j);
                }
            }
        }
    }
    lua_settop(L, 0);
    free(what);
    return r;
}
