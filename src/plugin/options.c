/* options.c -- see options.h. */
#include "plugin/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "plugin/decl.h"
#include "plugin/plugin_internal.h"

/* (in the order of the F_ numbers below) */
static const char *const option_fields[] = {
    "name", "short", "arg", "help", "complete", "env", "default", "strict",
    "param", "ctx", "check", NULL};
static const char *const builtin_fields[] = {
    "name", "short", "arg", "help", "complete", "env", "default", "strict",
    "param", "ctx", "check", "commands", NULL};

static bool valid_name(const char *s)
{
    if (!s || !*s || !(*s >= 'a' && *s <= 'z'))
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return false;
    return true;
}

/* commands = {NAME...} and help = TEXT | {[NAME] = TEXT}. */
static int read_commands(dsf_plugin_option *o, lua_State *L, int t)
{
    lua_pushliteral(L, "commands");
    if (lua_rawget(L, t) != LUA_TTABLE) {
        lua_pop(L, 1);
        return -1;
    }
    size_t n = (size_t)lua_rawlen(L, -1);
    o->commands = dsf_xcalloc(n + 1, sizeof *o->commands);
    o->helps = dsf_xcalloc(n + 1, sizeof *o->helps);
    int rc = n ? 0 : -1;
    for (size_t i = 0; i < n; i++) {
        if (lua_rawgeti(L, -1, (lua_Integer)i + 1) == LUA_TSTRING)
            o->commands[i] = dsf_xstrdup(lua_tostring(L, -1));
        else
            rc = -1;
        lua_pop(L, 1);
        if (!o->commands[i])
            break;
    }
    lua_pop(L, 1);
    lua_pushliteral(L, "help");
    int ty = lua_rawget(L, t);
    for (size_t i = 0; !rc && o->commands[i]; i++) {
        if (ty == LUA_TSTRING) {
            o->helps[i] = dsf_xstrdup(lua_tostring(L, -1));
        } else if (ty == LUA_TTABLE) {
            lua_getfield(L, -1, o->commands[i]);
            if (lua_type(L, -1) == LUA_TSTRING)
                o->helps[i] = dsf_xstrdup(lua_tostring(L, -1));
            else
                rc = -1;
            lua_pop(L, 1);
        } else {
            rc = -1;
        }
    }
    lua_pop(L, 1);
    if (!rc)
        o->help = dsf_xstrdup(o->helps[0]);
    return rc;
}

/* The fields in one pass over the table (every key looked at once: a
** plugin command's options are read whenever its commands are). */
enum { F_NAME, F_SHORT, F_ARG, F_HELP, F_COMPLETE, F_ENV, F_DEFAULT,
       F_STRICT, F_PARAM, F_CTX, F_CHECK, F_COMMANDS };

int dsf_plugin_option_read(dsf_plugin_option *o, lua_State *L, int t,
                           bool builtin, const char *plugin, char *msg,
                           size_t msgsize)
{
    memset(o, 0, sizeof *o);
    o->check = LUA_NOREF;
    o->plugin = dsf_xstrdup(plugin);
    const char *const *known = builtin ? builtin_fields : option_fields;
    char *shrt = NULL, **strs[] = {&o->name, &shrt, &o->arg, &o->help,
                                   &o->complete, &o->env, &o->deflt,
                                   &o->strict};
    bool wrong = false, unknown = false;
    t = lua_absindex(L, t);
    lua_pushnil(L);
    while (!unknown && lua_next(L, t)) {
        int f = -1;
        if (lua_type(L, -2) == LUA_TSTRING)
            for (int i = 0; known[i] && f < 0; i++)
                if (!strcmp(lua_tostring(L, -2), known[i]))
                    f = i;
        int ty = lua_type(L, -1);
        if (f < 0) {
            snprintf(msg, msgsize, "unknown option field '%.60s' (known: "
                     "name, short, arg, help, complete, env, default, "
                     "param, ctx, strict, check%s)",
                     lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                                    : "(not a string)",
                     builtin ? ", commands" : "");
            unknown = true;
            lua_pop(L, 1);
        } else if (f <= F_STRICT) {
            if (ty == LUA_TSTRING && !(builtin && f == F_HELP))
                *strs[f] = dsf_xstrdup(lua_tostring(L, -1));
            else if (!(builtin && f == F_HELP))
                wrong = true;
            lua_pop(L, 1);
        } else if (f == F_PARAM || f == F_CTX) {
            wrong = wrong || ty != LUA_TBOOLEAN;
            *(f == F_PARAM ? &o->param : &o->ctx) = lua_toboolean(L, -1);
            lua_pop(L, 1);
        } else if (f == F_CHECK && ty == LUA_TFUNCTION) {
            o->check = luaL_ref(L, LUA_REGISTRYINDEX); /* pops it */
        } else {
            wrong = wrong || f == F_CHECK;
            lua_pop(L, 1);
        }
    }
    if (unknown) {
        lua_pop(L, 1); /* the key */
        free(shrt);
        return -1;
    }
    o->short_name = shrt && strlen(shrt) == 1 ? shrt[0] : 0;
    int rc = builtin ? read_commands(o, L, t) : 0;
    bool bad = rc || wrong || !valid_name(o->name) || !o->help ||
               (shrt && !o->short_name) || !strcmp(o->name, "help") ||
               (o->strict && o->arg) || (o->param && o->ctx);
    free(shrt);
    if (bad) {
        snprintf(msg, msgsize, "option '%.60s' needs a 'name' (lower-case "
                 "letters, digits, '-'; not 'help') and a 'help' string%s; "
                 "'short' is one letter, 'param' and 'ctx' booleans (not "
                 "both), 'check' a function, 'strict' a flag's",
                 o->name ? o->name : "?",
                 builtin ? " (or a table of one per command), and "
                           "'commands' a list of command names"
                         : "");
        return -1;
    }
    o->key = dsf_xstrdup(o->name);
    for (char *c = o->key; *c; c++)
        if (*c == '-')
            *c = '_';
    return 0;
}

void dsf_plugin_option_free(dsf_plugin_option *o)
{
    free(o->name);
    free(o->arg);
    free(o->help);
    free(o->complete);
    free(o->key);
    free(o->env);
    free(o->deflt);
    free(o->strict);
    free(o->plugin);
    for (size_t i = 0; o->commands && o->commands[i]; i++) {
        free(o->commands[i]);
        free(o->helps[i]);
    }
    free(o->commands);
    free(o->helps);
}

static bool takes(const dsf_plugin_option *o, const char *command)
{
    for (size_t i = 0; o->commands && o->commands[i]; i++)
        if (!strcmp(o->commands[i], command))
            return true;
    return false;
}

/* One entry of the `options` list (dsf_plugin_read_list's item). */
static int read_entry(dsf_plugins *p, lua_State *L, int r, lua_Integer i,
                      const char *plugin, const char *file, dsf_diags *d)
{
    char msg[400];
    dsf_plugin_option o;
    int bad = 0;
    if (lua_type(L, r) != LUA_TTABLE) {
        memset(&o, 0, sizeof o);
        snprintf(msg, sizeof msg, "option #%lld must be a table",
                 (long long)i);
        bad = 1;
    } else if (dsf_plugin_option_read(&o, L, r, true, plugin, msg,
                                      sizeof msg)) {
        bad = 1;
    }
    for (size_t k = 0; !bad && k < p->noptions; k++)
        for (size_t c = 0; !bad && o.commands[c]; c++)
            if (!strcmp(p->options[k].name, o.name) &&
                takes(&p->options[k], o.commands[c])) {
                snprintf(msg, sizeof msg, "option '--%.60s' of command "
                         "'%.60s' is already declared by plugin '%.60s'",
                         o.name, o.commands[c], p->options[k].plugin);
                bad = 1;
            }
    if (bad) {
        dsf_plugin_option_free(&o);
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                   "plugin '%s': %s", plugin, msg);
        dsf_diag_set_hint(g, "see 'Options' in contrib/docs/plugins.md");
        return DSF_EINPUT;
    }
    p->options = dsf_xrealloc(p->options,
                              (p->noptions + 1) * sizeof *p->options);
    p->options[p->noptions++] = o;
    return 0;
}

int dsf_plugins_read_options(dsf_plugins *p, dsf_diags *d)
{
    if (p->options_read)
        return 0;
    int rc = dsf_plugins_each_list(p, "options", read_entry, d);
    if (rc) { /* nothing half-read is kept */
        dsf_plugins_options_free(p);
        return rc;
    }
    p->options_read = true;
    return 0;
}

void dsf_plugins_options_free(dsf_plugins *p)
{
    for (size_t i = 0; i < p->noptions; i++)
        dsf_plugin_option_free(&p->options[i]);
    free(p->options);
    p->options = NULL;
    p->noptions = 0;
}

const dsf_plugin_option **dsf_plugins_options_for(const dsf_plugins *p,
                                                  const char *command,
                                                  size_t *n)
{
    const dsf_plugin_option **out =
        dsf_xcalloc(p->noptions + 1, sizeof *out);
    *n = 0;
    for (size_t i = 0; i < p->noptions; i++)
        if (takes(&p->options[i], command))
            out[(*n)++] = &p->options[i];
    return out;
}

const dsf_plugin_option *dsf_plugins_options(const dsf_plugins *p,
                                             size_t *n)
{
    *n = p->noptions;
    return p->options;
}

const char *dsf_plugin_option_help(const dsf_plugin_option *o,
                                   const char *command)
{
    for (size_t i = 0; o->commands && o->commands[i]; i++)
        if (!strcmp(o->commands[i], command))
            return o->helps[i];
    return o->help;
}

typedef struct call {
    int ref;
    const char *value;
} call;

static int push_call(lua_State *L)
{
    call *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->ref);
    lua_pushstring(L, a->value);
    lua_call(L, 1, 2);
    return 2;
}

int dsf_plugins_option_value(dsf_plugins *p, const dsf_plugin_option *o,
                             const char *given, const char *given_as,
                             const char **value, dsf_diags *d)
{
    *value = given;
    char *from = NULL;
    if (given) {
        from = given_as ? dsf_xstrdup(given_as)
                        : dsf_xconcat("--", o->name, NULL);
    } else if (o->env && getenv(o->env) && *getenv(o->env)) {
        *value = getenv(o->env);
        from = dsf_xstrdup(o->env);
    } else {
        *value = o->deflt;
        return 0; /* the plugin's own default: not checked */
    }
    if (o->check == LUA_NOREF || !o->arg) {
        free(from);
        return 0;
    }
    lua_State *L = dsf_host_state(p->host);
    int top = lua_gettop(L);
    char *what = dsf_xconcat("plugin ", o->plugin, " option ", o->name,
                             " check", NULL);
    /* A check may load what lives as long as the host (the plugin's
    ** facts, which its hooks read next): the collector's loading pause
    ** (lua/host.h), as for the rules. */
    dsf_host_gc_loading(p->host, true);
    call a = {o->check, *value};
    int rc = dsf_host_cpcall(p->host, push_call, &a, 2, what, d);
    if (rc) {
        dsf_diag *g = dsf_diags_last(d);
        if (g && !g->hint)
            dsf_diag_set_hint(g, "raised by %s: a bug in the plugin", what);
    } else if (lua_type(L, -2) == LUA_TSTRING &&
               (lua_isnil(L, -1) || lua_type(L, -1) == LUA_TSTRING)) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s: %s", from,
                                   lua_tostring(L, -2));
        if (lua_type(L, -1) == LUA_TSTRING)
            dsf_diag_set_hint(g, "%s", lua_tostring(L, -1));
        rc = DSF_EUSAGE;
    } else if (!lua_isnil(L, -2) || !lua_isnil(L, -1)) {
        rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                            "%s must return nil (the value is right) or a "
                            "message and an optional hint (strings)", what);
    }
    dsf_host_gc_loading(p->host, false);
    lua_settop(L, top);
    free(what);
    free(from);
    return rc;
}

void dsf_plugin_push_values(lua_State *L, int ctx, const cJSON *values)
{
    ctx = lua_absindex(L, ctx);
    for (const cJSON *m = values ? values->child : NULL; m; m = m->next) {
        if (cJSON_IsString(m))
            lua_pushstring(L, m->valuestring);
        else if (cJSON_IsNumber(m))
            lua_pushnumber(L, m->valuedouble);
        else
            lua_pushboolean(L, cJSON_IsTrue(m));
        lua_setfield(L, ctx, m->string);
    }
}
