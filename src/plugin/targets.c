/* targets.c -- see targets.h. */
#include "plugin/targets.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/xalloc.h"
#include "lua/conv.h"
#include "plugin/plugin_internal.h"

static const char *const target_fields[] = {"owns", "adds", "default",
                                            "recognise", "family", "help",
                                            "fills", NULL};

static int bad(dsf_diags *d, const char *file, const char *plugin,
               const char *what)
{
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                               "plugin '%s': %s", plugin, what);
    dsf_diag_set_hint(g, "see 'Targets' in contrib/docs/plugins.md");
    return DSF_EINPUT;
}

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) > 15)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '-'))
            return false;
    return true;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* The list of names in field of the table at tt (absent: empty). */
static int read_names(lua_State *L, int tt, const char *field, char ***out,
                      const char *plugin, const char *file, dsf_diags *d)
{
    lua_pushstring(L, field);
    int ty = lua_rawget(L, tt);
    size_t n = ty == LUA_TTABLE ? lua_rawlen(L, -1) : 0;
    *out = dsf_xcalloc(n + 1, sizeof **out);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    int rc = ty == LUA_TTABLE ? 0 : DSF_EINPUT;
    for (size_t i = 1; !rc && i <= n; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i);
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                       : NULL;
        if (!s || !valid_name(s))
            rc = DSF_EINPUT;
        else
            (*out)[i - 1] = dsf_xstrdup(s);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (!rc)
        return 0;
    char *msg = dsf_xconcat("'targets.", field, "' must be a list of "
                            "target names (lower-case letters, digits, "
                            "'-')", NULL);
    rc = bad(d, file, plugin, msg);
    free(msg);
    return rc;
}

static bool in(char *const *v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (!strcmp(v[i], s))
            return true;
    return false;
}

/* The table field of tt: {KEY = STRING} (lists: {KEY = {STRING...}})
** into *out as KEY, STRING pairs, NULL-terminated; -1 when it is
** something else. */
static int read_pairs(lua_State *L, int tt, const char *field, bool lists,
                      char ***out)
{
    size_t n = 0;
    *out = dsf_xcalloc(1, sizeof **out);
    lua_pushstring(L, field);
    int ty = lua_rawget(L, tt);
    int rc = ty == LUA_TNIL || ty == LUA_TTABLE ? 0 : -1;
    if (ty == LUA_TTABLE) {
        lua_pushnil(L);
        while (!rc && lua_next(L, -2)) {
            int vt = lua_type(L, -1);
            size_t m = vt == LUA_TTABLE && lists ? (size_t)lua_rawlen(L, -1)
                                                 : 1;
            if (lua_type(L, -2) != LUA_TSTRING ||
                (lists ? vt != LUA_TTABLE : vt != LUA_TSTRING))
                rc = -1;
            for (size_t k = 0; !rc && k < m; k++) {
                if (lists && lua_rawgeti(L, -1, (lua_Integer)k + 1) !=
                                 LUA_TSTRING)
                    rc = -1;
                if (!rc) {
                    *out = dsf_xrealloc(*out, (n + 3) * sizeof **out);
                    (*out)[n++] = dsf_xstrdup(lua_tostring(L, -2 - lists));
                    (*out)[n++] = dsf_xstrdup(lua_tostring(L, -1));
                    (*out)[n] = NULL;
                }
                if (lists)
                    lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
        if (rc)
            lua_pop(L, 1); /* the key */
    }
    lua_pop(L, 1);
    return rc;
}

static int read_decl(dsf_plugin_targets *pt, lua_State *L, int tt,
                     const char *plugin, const char *file, dsf_diags *d)
{
    lua_pushnil(L);
    while (lua_next(L, tt)) {
        lua_pop(L, 1);
        if (!dsf_plugin_known_key(L, -1, target_fields)) {
            lua_pop(L, 1);
            return bad(d, file, plugin, "unknown field in 'targets' "
                                        "(known: owns, adds, default, "
                                        "recognise, family, help, fills)");
        }
    }
    int rc = read_names(L, tt, "owns", &pt->owns, plugin, file, d);
    if (!rc)
        rc = read_names(L, tt, "adds", &pt->adds, plugin, file, d);
    if (rc)
        return rc;
    lua_pushliteral(L, "default");
    int ty = lua_rawget(L, tt);
    if (ty == LUA_TSTRING && in(pt->owns, lua_tostring(L, -1)))
        pt->def = dsf_xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    if (ty != LUA_TNIL && !pt->def)
        return bad(d, file, plugin, "'targets.default' must be one of the "
                                    "targets it owns");
    rc = dsf_plugin_optional_function(L, tt, "recognise", "function(cfg, "
                                      "ctx)", "Targets", plugin, file, d);
    if (rc < 0)
        return rc;
    if (rc)
        lua_pop(L, 1); /* read again from the declaration at the call */
    pt->recognises = rc == 1;
    lua_pushliteral(L, "family");
    ty = lua_rawget(L, tt);
    if (ty == LUA_TSTRING)
        pt->family = dsf_xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    if (ty != LUA_TNIL && ty != LUA_TSTRING)
        return bad(d, file, plugin, "'targets.family' must be a string");
    rc = read_pairs(L, tt, "help", false, &pt->help);
    if (!rc)
        rc = read_pairs(L, tt, "fills", true, &pt->fills);
    if (rc)
        return bad(d, file, plugin, "'targets.help' must map commands to "
                                    "strings, 'targets.fills' targets to "
                                    "lists of strings");
    return 0;
}

static int read_one(dsf_plugins *p, lua_State *L, int t, size_t i,
                    dsf_diags *d)
{
    dsf_targets *ts = &p->targets;
    const char *plugin = p->items[i].name;
    const char *file = p->decls[i].file;
    dsf_plugin_targets pt;
    memset(&pt, 0, sizeof pt);
    lua_pushliteral(L, "targets");
    int ty = lua_rawget(L, t);
    int rc = 0;
    if (ty == LUA_TNIL) {
        pt.neutral = true;
        pt.owns = dsf_xcalloc(1, sizeof *pt.owns);
        pt.adds = dsf_xcalloc(1, sizeof *pt.adds);
    } else if (ty != LUA_TTABLE) {
        rc = bad(d, file, plugin, "'targets' must be a table");
    } else {
        rc = read_decl(&pt, L, lua_gettop(L), plugin, file, d);
    }
    lua_pop(L, 1);
    if (rc) {
        free_strv(pt.owns);
        free_strv(pt.adds);
        free(pt.def);
        free(pt.family);
        free_strv(pt.help);
        free_strv(pt.fills);
        return rc;
    }
    ts->items = dsf_xrealloc(ts->items, (ts->n + 1) * sizeof *ts->items);
    ts->items[ts->n++] = pt;
    return 0;
}

static int check_owners(const dsf_targets *ts, const dsf_plugin_info *items,
                        dsf_diags *d)
{
    for (size_t i = 0; i < ts->n; i++)
        for (size_t k = 0; ts->items[i].owns[k]; k++)
            for (size_t j = 0; j < i; j++)
                if (in(ts->items[j].owns, ts->items[i].owns[k])) {
                    dsf_diag *g = dsf_diag_add(
                        d, DSF_ERROR, NULL, 0, 0,
                        "plugin '%s' owns target '%s', which plugin '%s' "
                        "owns", items[i].name, ts->items[i].owns[k],
                        items[j].name);
                    dsf_diag_set_hint(g, "a target belongs to one plugin; "
                                         "others may add to it ('adds')");
                    return DSF_EINPUT;
                }
    return 0;
}

int dsf_plugins_read_targets(dsf_plugins *p, dsf_diags *d)
{
    if (p->targets.read)
        return 0;
    int rc = dsf_plugins_each_decl(p, read_one, d);
    if (!rc)
        rc = check_owners(&p->targets, p->items, d);
    if (rc) { /* nothing half-read is kept */
        dsf_targets_free(&p->targets);
        return rc;
    }
    p->targets.read = true;
    return 0;
}

void dsf_targets_free(dsf_targets *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        free_strv(ts->items[i].owns);
        free_strv(ts->items[i].adds);
        free(ts->items[i].def);
        free(ts->items[i].family);
        free_strv(ts->items[i].help);
        free_strv(ts->items[i].fills);
    }
    free(ts->items);
    free(ts->current);
    free(ts->serving);
    memset(ts, 0, sizeof *ts);
}

const char *dsf_plugins_target_family(const dsf_plugins *p,
                                      const char *target)
{
    if (!target)
        target = dsf_plugins_default_target(p);
    for (size_t i = 0; target && i < p->targets.n; i++)
        if (in(p->targets.items[i].owns, target))
            return p->targets.items[i].family;
    return NULL;
}

const char *dsf_plugins_target_help(const dsf_plugins *p,
                                    const char *command)
{
    for (size_t i = 0; i < p->targets.n; i++)
        for (char **h = p->targets.items[i].help; h && *h; h += 2)
            if (!strcmp(h[0], command))
                return h[1];
    return NULL;
}

int dsf_plugins_target_fills(const dsf_plugins *p, const char *target,
                             const char *value)
{
    int r = -1;
    for (size_t i = 0; i < p->targets.n; i++)
        for (char **f = p->targets.items[i].fills; f && *f; f += 2)
            if (!strcmp(f[1], value)) {
                if (target && !strcmp(f[0], target))
                    return 1;
                r = 0;
            }
    return r;
}

const char **dsf_plugins_target_names(const dsf_plugins *p)
{
    size_t n = 0;
    const char **v = dsf_xcalloc(1, sizeof *v);
    for (size_t i = 0; i < p->targets.n; i++)
        for (size_t k = 0; p->targets.items[i].owns[k]; k++) {
            v = dsf_xrealloc(v, (n + 2) * sizeof *v);
            v[n++] = p->targets.items[i].owns[k];
            v[n] = NULL;
        }
    return v;
}

bool dsf_plugins_target_known(const dsf_plugins *p, const char *target)
{
    for (size_t i = 0; i < p->targets.n; i++)
        if (in(p->targets.items[i].owns, target))
            return true;
    return false;
}

const char *dsf_plugins_target_owner(const dsf_plugins *p,
                                     const char *target)
{
    for (size_t i = 0; target && i < p->targets.n; i++)
        if (in(p->targets.items[i].owns, target))
            return p->items[i].name;
    return NULL;
}

const char *dsf_plugins_default_target(const dsf_plugins *p)
{
    for (size_t i = 0; i < p->targets.n; i++)
        if (p->targets.items[i].def)
            return p->targets.items[i].def;
    for (size_t i = 0; i < p->targets.n; i++)
        if (p->targets.items[i].owns[0])
            return p->targets.items[i].owns[0];
    return NULL;
}

int dsf_plugins_check_target(const dsf_plugins *p, const char *target,
                             const char *from, int code, dsf_diags *d)
{
    if (dsf_plugins_target_known(p, target))
        return 0;
    const char **names = dsf_plugins_target_names(p);
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "");
    size_t n = 0;
    while (names[n])
        n++;
    for (size_t i = 0; i < n; i++)
        dsf_buf_printf(&b, "%s'%s'", !i ? "" : i + 1 == n ? " or " : ", ",
                       names[i]);
    if (n)
        dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "%s must be %s", from,
                     b.data);
    else
        dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                     "%s: no loaded plugin declares a target (it is '%s')",
                     from, target);
    dsf_buf_free(&b);
    free(names);
    return code;
}

void dsf_plugins_use_target(dsf_plugins *p, const char *target)
{
    dsf_targets *ts = &p->targets;
    if (ts->current && target && !strcmp(ts->current, target))
        return;
    free(ts->current);
    free(ts->serving);
    ts->current = NULL;
    ts->serving = NULL;
    if (!target || !ts->read)
        return;
    ts->current = dsf_xstrdup(target);
    ts->serving = dsf_xcalloc(ts->n + 1, sizeof *ts->serving);
    for (size_t i = 0; i < ts->n; i++) {
        const dsf_plugin_targets *pt = &ts->items[i];
        ts->serving[i] = pt->neutral || in(pt->owns, target) ||
                         in(pt->adds, target);
    }
}

bool dsf_plugins_serves(const dsf_plugins *p, size_t pi)
{
    return !p->targets.serving || pi >= p->targets.n ||
           p->targets.serving[pi];
}

bool dsf_plugins_serves_name(const dsf_plugins *p, const char *plugin)
{
    if (!p->targets.serving)
        return true;
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->items[i].name, plugin))
            return dsf_plugins_serves(p, i);
    return true;
}

typedef struct call {
    int decl;
    const cJSON *doc;
} call;

static int push_call(lua_State *L)
{
    call *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->decl);
    lua_pushliteral(L, "targets");
    lua_rawget(L, 1);
    lua_pushliteral(L, "recognise");
    lua_rawget(L, 2);
    dsf_json_push(L, a->doc);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "check");
    lua_setfield(L, -2, "mode");
    lua_call(L, 2, 1);
    return 1;
}

int dsf_plugins_recognise(dsf_plugins *p, const cJSON *doc,
                          const char **target, dsf_diags *d)
{
    *target = NULL;
    lua_State *L = NULL;
    int rc = 0;
    for (size_t i = 0; !rc && !*target && i < p->targets.n; i++) {
        if (!p->targets.items[i].recognises)
            continue;
        if (!L)
            L = dsf_host_state(p->host);
        int top = lua_gettop(L);
        char *what = dsf_xconcat("plugin ", p->items[i].name,
                                 " targets.recognise", NULL);
        call a = {p->decls[i].ref, doc};
        rc = dsf_host_cpcall(p->host, push_call, &a, 1, what, d);
        if (rc) {
            dsf_diag *g = dsf_diags_last(d);
            if (g && !g->hint)
                dsf_diag_set_hint(g, "raised by %s: a bug in the plugin",
                                  what);
        } else if (lua_type(L, -1) == LUA_TSTRING) {
            const char *s = lua_tostring(L, -1);
            for (size_t j = 0; !*target && j < p->targets.n; j++)
                for (size_t k = 0; p->targets.items[j].owns[k]; k++)
                    if (!strcmp(p->targets.items[j].owns[k], s))
                        *target = p->targets.items[j].owns[k];
            if (!*target)
                rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s returned target '%s', which no "
                                    "loaded plugin owns", what, s);
        } else if (!lua_isnil(L, -1)) {
            rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                "%s must return a target's name or nil",
                                what);
        }
        lua_settop(L, top);
        free(what);
    }
    return rc;
}
