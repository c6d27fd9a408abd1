/* cmdcheck.c -- see cmdcheck.h. */
#include "plugin/cmdcheck.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "lua/callscope.h"
#include "lua/conv.h"
#include "lua/guard.h"
#include "plugin/plugin_internal.h"

static const char *const fields[] = {"env", "run", NULL};

static int bad(dsf_diags *d, const char *file, const char *plugin,
               const char *msg)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                               "plugin '%s': check_command: %s", plugin, msg);
    dsf_diag_set_hint(g, "see 'Command checks' in contrib/docs/plugins.md");
    return DSF_EINPUT;
}

/* An environment variable name: letters, digits and '_', not a digit
** first. */
static bool env_name(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static void free_one(dsf_cmdcheck *c)
{
    free(c->plugin);
    for (size_t i = 0; i < c->nenv; i++)
        free(c->env[i]);
    free(c->env);
}

int dsf_cmdchecks_read(dsf_cmdchecks *cs, lua_State *L, int t,
                       const char *plugin, const char *file, dsf_diags *d)
{
    lua_pushliteral(L, "check_command");
    int ty = lua_rawget(L, t);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    int rc = 0;
    int h = lua_gettop(L);
    dsf_cmdcheck c = {dsf_xstrdup(plugin), NULL, 0, LUA_NOREF};
    if (ty != LUA_TTABLE)
        rc = bad(d, file, plugin, "must be a table {env = {...}, run = "
                 "function(cfg, words, ctx)}");
    lua_pushnil(L);
    while (!rc && lua_next(L, h)) {
        lua_pop(L, 1);
        bool known = false;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; fields[i]; i++)
                known |= !strcmp(lua_tostring(L, -1), fields[i]);
        if (!known) {
            lua_pop(L, 1);
            rc = bad(d, file, plugin, "unknown field (known: env, run)");
        }
    }
    if (!rc) {
        lua_pushliteral(L, "env");
        int et = lua_rawget(L, h);
        if (et == LUA_TTABLE) {
            size_t n = (size_t)lua_rawlen(L, -1);
            c.env = dsf_xcalloc(n + 1, sizeof *c.env);
            for (size_t i = 0; !rc && i < n; i++) {
                lua_rawgeti(L, -1, (lua_Integer)i + 1);
                if (lua_type(L, -1) != LUA_TSTRING ||
                    !env_name(lua_tostring(L, -1)))
                    rc = bad(d, file, plugin, "'env' must list environment "
                             "variable names (letters, digits, '_')");
                else
                    c.env[c.nenv++] = dsf_xstrdup(lua_tostring(L, -1));
                lua_pop(L, 1);
            }
        } else if (et != LUA_TNIL) {
            rc = bad(d, file, plugin, "'env' must be a list of names");
        }
        lua_pop(L, 1);
    }
    if (!rc) {
        lua_pushliteral(L, "run");
        if (lua_rawget(L, h) == LUA_TFUNCTION) {
            c.ref = luaL_ref(L, LUA_REGISTRYINDEX);
        } else {
            lua_pop(L, 1);
            rc = bad(d, file, plugin, "needs a 'run' function");
        }
    }
    lua_settop(L, h - 1);
    if (rc) {
        free_one(&c);
        return rc;
    }
    cs->items = dsf_xrealloc(cs->items, (cs->n + 1) * sizeof *cs->items);
    cs->items[cs->n++] = c;
    return 0;
}

void dsf_cmdchecks_free(dsf_cmdchecks *cs)
{
    for (size_t i = 0; i < cs->n; i++)
        free_one(&cs->items[i]);
    free(cs->items);
    cs->items = NULL;
    cs->n = 0;
}

size_t dsf_plugins_cmdcheck_count(const dsf_plugins *p)
{
    return p->cmdchecks.n;
}

const dsf_cmdcheck *dsf_plugins_cmdchecks(const dsf_plugins *p, size_t *n)
{
    *n = p->cmdchecks.n;
    return p->cmdchecks.items;
}

/* ------------------------------------------------------------------ */
/* Running them. */

typedef struct call {
    const dsf_cmdcheck *c;
    const cJSON *doc;
    const dsf_cmdcheck_in *in;
    dsf_callscope scope; /* open while ctx.read_text may be called */
} call;

/* Whether path is one of the command's words, or the value of a
** --name=value word: the only files a check may read. */
static bool named(const dsf_cmdcheck_in *in, const char *path)
{
    for (size_t i = 0; i < in->nwords; i++) {
        const char *w = in->words[i];
        const char *eq = w[0] == '-' ? strchr(w, '=') : NULL;
        if (!strcmp(w, path) || (eq && !strcmp(eq + 1, path)))
            return true;
    }
    return false;
}

/* ctx.read_text(path) -> text | nil, message */
static int l_read_text(lua_State *L)
{
    const call *a = dsf_callscope_data(L, "ctx.read_text");
    const char *path = luaL_checkstring(L, 1);
    if (!named(a->in, path))
        return luaL_error(L, "'%s' is not a word of the command: a command "
                          "check reads only the files the command names",
                          path);
    char *text;
    size_t len;
    /* The text is the guard's while pushing it may raise. */
    dsf_guard *g = dsf_guard_push(L);
    dsf_diags d = DSF_DIAGS_INIT;
    if (dsf_read_file(&text, &len, path, DSF_CMDCHECK_MAX_FILE, &d)) {
        /* (the message is the guard's too) */
        char *msg = dsf_xstrdup(d.len ? d.items[0].message
                                      : "cannot read it");
        dsf_diags_free(&d);
        g->p = msg;
        g->release = free;
        lua_pushnil(L);
        lua_pushstring(L, msg);
        dsf_guard_release(g);
        return 2;
    }
    dsf_diags_free(&d);
    g->p = text;
    g->release = free;
    lua_pushlstring(L, text, len);
    dsf_guard_release(g);
    return 1;
}

static int push_call(lua_State *L)
{
    call *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->c->ref);
    dsf_json_push(L, a->doc);
    lua_createtable(L, (int)a->in->nwords, 0);
    for (size_t i = 0; i < a->in->nwords; i++) {
        lua_pushstring(L, a->in->words[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    const dsf_validate_opts *vo = a->in->vo;
    lua_createtable(L, 0, 8);
    lua_pushstring(L, vo->target);
    lua_setfield(L, -2, "target");
    lua_pushboolean(L, a->in->target_given);
    lua_setfield(L, -2, "target_given");
    lua_pushstring(L, vo->mode);
    lua_setfield(L, -2, "mode");
    if (vo->params) {
        dsf_json_push(L, vo->params);
        lua_setfield(L, -2, "params");
    }
    dsf_plugin_push_values(L, -1, vo->values);
    lua_pushstring(L, a->in->config_file);
    lua_setfield(L, -2, "config_file");
    if (a->in->variant) {
        lua_pushstring(L, a->in->variant);
        lua_setfield(L, -2, "variant");
    }
    lua_createtable(L, 0, (int)a->c->nenv);
    for (size_t i = 0; i < a->c->nenv; i++) {
        const char *v = getenv(a->c->env[i]);
        if (v) {
            lua_pushstring(L, v);
            lua_setfield(L, -2, a->c->env[i]);
        }
    }
    lua_setfield(L, -2, "env");
    dsf_callscope_push(L, &a->scope, l_read_text, a);
    lua_setfield(L, -2, "read_text");
    lua_call(L, 3, 1);
    return 1;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void free_finding(dsf_cmd_finding *f)
{
    free(f->rule);
    free(f->plugin);
    free(f->path);
    free(f->message);
    free(f->fix);
    free(f->args);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* One finding of the list the check returned; NULL and *why when it is
** not one. */
static bool to_finding(dsf_cmd_finding *f, const cJSON *o, size_t nwords,
                       const char **why)
{
    memset(f, 0, sizeof *f);
    static const char *const known[] = {"severity", "rule", "message",
                                        "path", "fix", "args", NULL};
    if (!cJSON_IsObject(o)) {
        *why = "a finding must be a table";
        return false;
    }
    for (const cJSON *m = o->child; m; m = m->next) {
        bool ok = false;
        for (int i = 0; known[i]; i++)
            ok |= !strcmp(m->string, known[i]);
        if (!ok) {
            *why = "a finding has only severity, rule, message, path, fix "
                   "and args";
            return false;
        }
    }
    const char *sev = str(o, "severity"), *rule = str(o, "rule");
    const char *msg = str(o, "message"), *path = str(o, "path");
    const char *fix = str(o, "fix");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "args");
    if (!sev || !dsf_plugin_parse_severity(sev, &f->severity)) {
        *why = "'severity' must be \"error\", \"warning\" or \"note\"";
        return false;
    }
    if (!rule || !*rule || !msg) {
        *why = "'rule' and 'message' must be strings";
        return false;
    }
    if ((cJSON_GetObjectItemCaseSensitive(o, "path") && !path) ||
        (cJSON_GetObjectItemCaseSensitive(o, "fix") && !fix)) {
        *why = "'path' and 'fix' must be strings";
        return false;
    }
    if (args && !cJSON_IsArray(args)) {
        *why = "'args' must be a list of word numbers";
        return false;
    }
    size_t n = (size_t)cJSON_GetArraySize(args);
    f->args = dsf_xcalloc(n + 1, sizeof *f->args);
    for (const cJSON *a = args ? args->child : NULL; a; a = a->next) {
        double v = cJSON_IsNumber(a) ? a->valuedouble : 0;
        if (!(v >= 1 && v <= (double)nwords && v == (double)(size_t)v)) {
            free(f->args);
            f->args = NULL;
            *why = "'args' must hold word numbers between 1 and the "
                   "number of words";
            return false;
        }
        size_t k = (size_t)v - 1;
        bool dup = false;
        for (size_t i = 0; i < f->nargs; i++)
            dup |= f->args[i] == k;
        if (!dup)
            f->args[f->nargs++] = k;
    }
    qsort(f->args, f->nargs, sizeof *f->args, cmp_size);
    f->rule = dsf_xstrdup(rule);
    f->message = dsf_xstrdup(msg);
    f->path = path && *path ? dsf_xstrdup(path) : NULL;
    f->fix = fix ? dsf_xstrdup(fix) : NULL;
    return true;
}

static int cmp_finding(const void *a, const void *b)
{
    const dsf_cmd_finding *x = a, *y = b;
    if (x->nargs != y->nargs && (!x->nargs || !y->nargs))
        return x->nargs ? -1 : 1; /* without an argument: last */
    if (x->nargs && x->args[0] != y->args[0])
        return x->args[0] < y->args[0] ? -1 : 1;
    int c = strcmp(x->path ? x->path : "", y->path ? y->path : "");
    if (c)
        return c;
    c = strcmp(x->rule, y->rule);
    return c ? c : strcmp(x->message, y->message);
}

int dsf_plugins_check_command(dsf_plugins *p, const cJSON *doc,
                              const dsf_cmdcheck_in *in,
                              dsf_cmd_findings *out, cJSON *learned,
                              char **target, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    int rc = 0;
    for (size_t k = 0; !rc && k < p->cmdchecks.n; k++) {
        const dsf_cmdcheck *c = &p->cmdchecks.items[k];
        if (!dsf_plugins_serves_name(p, c->plugin))
            continue; /* of another target */
        char *what = dsf_xasprintf("plugin %s check_command", c->plugin);
        call a = {c, doc, in, {0, NULL}};
        dsf_callscope_open(&a.scope);
        rc = dsf_host_cpcall(p->host, push_call, &a, 1, what, d);
        dsf_callscope_close(&a.scope);
        if (rc) {
            dsf_diag *g = dsf_diags_last(d);
            if (g && !g->hint)
                dsf_diag_set_hint(g, "raised by %s: a bug in the plugin, "
                                     "not in the config or the command",
                                  what);
        }
        cJSON *res = NULL;
        char *err = NULL;
        if (!rc && dsf_lua_to_json(&res, &err, L, -1, 0) != 0) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s returned a value that is not JSON: %s",
                                what, err);
            free(err);
        }
        lua_settop(L, 0);
        /* A list of findings, or {findings = list, params = table,
        ** target = name}. */
        const cJSON *list = res;
        if (!rc && cJSON_IsObject(res) && res->child) {
            static const char *const keys[] = {"findings", "params",
                                               "target", NULL};
            bool ok = true;
            for (const cJSON *m = res->child; m; m = m->next) {
                bool hit = false;
                for (int i = 0; keys[i]; i++)
                    hit |= !strcmp(m->string, keys[i]);
                ok &= hit;
            }
            list = cJSON_GetObjectItemCaseSensitive(res, "findings");
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(res,
                                                               "params");
            const cJSON *tg = cJSON_GetObjectItemCaseSensitive(res,
                                                               "target");
            if (!ok || (ps && !cJSON_IsObject(ps) &&
                        !(cJSON_IsArray(ps) && !ps->child)) ||
                (tg && !cJSON_IsString(tg)))
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s must return a list of findings, or "
                                    "{findings = list, params = table, "
                                    "target = name}",
                                    what);
            if (!rc && tg && !dsf_plugins_target_known(p, tg->valuestring))
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s returned target '%s', not one of "
                                    "--target's values", what,
                                    tg->valuestring);
            if (!rc && tg) {
                free(*target);
                *target = dsf_xstrdup(tg->valuestring);
            }
            for (const cJSON *m = ps && !rc && cJSON_IsObject(ps) ? ps->child
                                                                 : NULL;
                 m; m = m->next) {
                cJSON_DeleteItemFromObjectCaseSensitive(learned, m->string);
                cJSON_AddItemToObject(learned, m->string,
                                      cJSON_Duplicate(m, 1));
            }
        }
        if (!rc && list && !cJSON_IsArray(list) &&
            !(cJSON_IsObject(list) && !list->child))
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s must return a list of findings", what);
        size_t first = out->len;
        for (const cJSON *o = list ? list->child : NULL; !rc && o;
             o = o->next) {
            dsf_cmd_finding f;
            const char *why;
            if (!to_finding(&f, o, in->nwords, &why)) {
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s: finding %zu: %s", what,
                                    out->len - first + 1, why);
                free_finding(&f);
                break;
            }
            f.plugin = dsf_xstrdup(c->plugin);
            out->items = dsf_xrealloc(out->items,
                                      (out->len + 1) * sizeof *out->items);
            out->items[out->len++] = f;
        }
        if (!rc && out->len > first) /* items may be NULL with none */
            qsort(out->items + first, out->len - first, sizeof *out->items,
                  cmp_finding);
        cJSON_Delete(res);
        free(what);
    }
    return rc;
}

void dsf_cmd_findings_free(dsf_cmd_findings *f)
{
    for (size_t i = 0; i < f->len; i++)
        free_finding(&f->items[i]);
    free(f->items);
    f->items = NULL;
    f->len = 0;
}
