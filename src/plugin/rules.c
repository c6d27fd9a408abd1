/* rules.c -- reading the rules a plugin declares (see rules.h): a list
** at load time, or the list a `rules` function returns the first time a
** command needs the rules. */
#include "plugin/rules.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "plugin/decl.h"

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

static int decl_error(dsf_diags *d, const char *file, const char *plugin,
                      const char *msg, const char *detail)
{
    dsf_diag_add(d, DSF_ERROR, file, 0, 0, "plugin '%s': %s%s", plugin, msg,
                 detail ? detail : "");
    return DSF_EINPUT;
}

/* Copies s to *w and moves *w past its terminating NUL; returns the
** copy. */
static char *put(char **w, const char *s, size_t len)
{
    char *at = *w;
    memcpy(at, s, len + 1);
    *w += len + 1;
    return at;
}

/* The rule's strings and its name for messages ("rule ID (plugin NAME)")
** in one block, owned by ru->id: one allocation per rule, not six. */
static void fill_rule(dsf_rule *ru, const char *id, const char *plugin,
                      const char *summary, const char *fix,
                      const char *strict)
{
    size_t lid = strlen(id), lpl = strlen(plugin), lsu = strlen(summary);
    size_t lfi = fix ? strlen(fix) : 0, lst = strict ? strlen(strict) : 0;
    static const char w1[] = "rule ", w2[] = " (plugin ", w3[] = ")";
    size_t lwhat = sizeof w1 - 1 + lid + sizeof w2 - 1 + lpl + sizeof w3 - 1;
    char *b = dsf_xmalloc(lid + lpl + lsu + lfi + lst + lwhat + 6), *w = b;
    ru->id = put(&w, id, lid);
    ru->plugin = put(&w, plugin, lpl);
    ru->summary = put(&w, summary, lsu);
    ru->fix = fix ? put(&w, fix, lfi) : NULL;
    ru->strict = strict ? put(&w, strict, lst) : NULL;
    ru->what = w;
    memcpy(w, w1, sizeof w1 - 1);
    w += sizeof w1 - 1;
    memcpy(w, id, lid);
    w += lid;
    memcpy(w, w2, sizeof w2 - 1);
    w += sizeof w2 - 1;
    memcpy(w, plugin, lpl);
    w += lpl;
    memcpy(w, w3, sizeof w3);
}

/* Reads the list of rule declarations on top of the stack and pops it. */
static int read_rule_list(dsf_plugins *p, lua_State *L,
                          const dsf_plugin_info *pi, const char *file,
                          dsf_diags *d)
{
    int rt = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, rt);
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, rt, i) != LUA_TTABLE) {
            lua_pop(L, 2);
            return decl_error(d, file, pi->name, "each rule must be a table",
                              NULL);
        }
        int r = lua_gettop(L);
        const char *id = dsf_plugin_raw_string(L, r, "id");
        const char *sev = dsf_plugin_raw_string(L, r, "severity");
        const char *summary = dsf_plugin_raw_string(L, r, "summary");
        const char *fix = dsf_plugin_raw_string(L, r, "fix");
        const char *strict = dsf_plugin_raw_string(L, r, "strict");
        dsf_severity s;
        if (!id || !valid_rule_id(id)) {
            lua_pop(L, 2);
            return decl_error(d, file, pi->name, "a rule needs an 'id' of "
                              "lower-case letters, digits and '-'", NULL);
        }
        if (!sev || !dsf_plugin_parse_severity(sev, &s)) {
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
        dsf_xgrow((void **)&p->rules, &p->cap_rules, p->nrules + 1,
                  sizeof *p->rules);
        dsf_rule *ru = &p->rules[p->nrules++];
        fill_rule(ru, id, pi->name, summary, fix, strict);
        ru->severity = s;
        ru->check_ref = ref;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

/* rules = { ... } is read now; rules = function() return { ... } end is
** kept (*lazy, a registry reference) and called the first time a command
** needs the rules (dsf_plugins_load_rules), so a command that runs none
** (estimate, explain) does not load the modules that define them. */
int dsf_plugin_read_rules(dsf_plugins *p, lua_State *L, int t,
                          const dsf_plugin_info *pi, const char *file,
                          int *lazy, dsf_diags *d)
{
    *lazy = LUA_NOREF;
    lua_pushliteral(L, "rules");
    if (lua_rawget(L, t) == LUA_TFUNCTION) {
        *lazy = luaL_ref(L, LUA_REGISTRYINDEX);
        return 0;
    }
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                     "plugin '%s': 'rules' must be a list", pi->name);
        return DSF_EINPUT;
    }
    return read_rule_list(p, L, pi, file, d);
}

int dsf_plugin_rules_load(dsf_plugins *p, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    dsf_host_gc_loading(p->host, true);
    int rc = 0;
    for (size_t i = 0; !rc && i < p->n; i++) {
        int ref = p->rules_refs[i];
        if (ref == LUA_NOREF)
            continue;
        p->rules_refs[i] = LUA_NOREF; /* called once, whatever happens */
        dsf_plugin_info *pi = &p->items[i];
        char *file = dsf_xconcat(pi->dir, "/init.lua", NULL);
        char *what = dsf_xconcat("plugin ", pi->name, " rules", NULL);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
        rc = dsf_host_call(p->host, 0, 1, what, d);
        if (!rc && !lua_istable(L, -1)) {
            lua_pop(L, 1);
            rc = decl_error(d, file, pi->name, "the 'rules' function must "
                            "return a list of rules", NULL);
        }
        if (!rc)
            rc = read_rule_list(p, L, pi, file, d);
        free(file);
        free(what);
    }
    dsf_host_gc_loading(p->host, false);
    return rc;
}

