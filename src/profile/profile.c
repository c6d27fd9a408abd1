/* profile.c -- see profile.h. */
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "doc/doc.h"
#include "doc/merge.h"
#include "json/jsonout.h"
#include "lua/conv.h"

#define MAX_CHAIN 16

static const char *const profile_fields[] = {
    "build", "description", "extends", "name", "params", "prepare",
    "summary", "tier_order", "tiers", "version", NULL};

#define MAX_MODULE_DIRS 64

/* A fresh sandboxed host whose require() finds the plugin modules; mods
** (MAX_MODULE_DIRS slots) is filled here and must outlive the host. */
static int open_host(dsf_host **h, const dsf_profile_ctx *ctx,
                     const char **mods, dsf_diags *d)
{
    size_t n = ctx->plugin_dirs->len < MAX_MODULE_DIRS ? ctx->plugin_dirs->len
                                                       : MAX_MODULE_DIRS;
    for (size_t i = 0; i < n; i++)
        mods[i] = ctx->plugin_dirs->items[i].path;
    dsf_host_config hc = {ctx->limits, mods, n, ctx->sources, ctx->warnings};
    return dsf_host_new(h, &hc, d);
}

/* ------------------------------------------------------------------ */
/* Discovery. */

static bool valid_name(const char *s)
{
    if (!*s || *s == '.' || *s == '-')
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && !strcmp(s + n - m, suffix);
}

void dsf_profile_list(dsf_profile_entry **out, size_t *n,
                      const dsf_dirs *dirs)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    for (size_t i = 0; i < dirs->len; i++) {
        char **names;
        size_t nn;
        dsf_list_dir(&names, &nn, dirs->items[i].path);
        for (size_t k = 0; k < nn; k++) {
            if (!has_suffix(names[k], ".lua"))
                continue;
            char *stem = dsf_xstrndup(names[k], strlen(names[k]) - 4);
            if (!valid_name(stem)) {
                free(stem);
                continue;
            }
            bool shadowed = false;
            for (size_t j = 0; j < *n; j++)
                if (!strcmp((*out)[j].name, stem))
                    shadowed = true;
            dsf_xgrow((void **)out, &cap, *n + 1, sizeof **out);
            dsf_profile_entry *e = &(*out)[(*n)++];
            e->name = stem;
            e->path = dsf_path_join(dirs->items[i].path, names[k]);
            e->origin = dsf_xstrdup(dirs->items[i].origin);
            e->shadowed = shadowed;
        }
        dsf_free_strv(names, nn);
    }
    /* Stable sort by name keeps the priority order within a name. */
    for (size_t i = 1; i < *n; i++) {
        dsf_profile_entry t = (*out)[i];
        size_t j = i;
        while (j > 0 && strcmp((*out)[j - 1].name, t.name) > 0) {
            (*out)[j] = (*out)[j - 1];
            j--;
        }
        (*out)[j] = t;
    }
}

void dsf_profile_entries_free(dsf_profile_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].path);
        free(e[i].origin);
    }
    free(e);
}

static int not_found(const dsf_dirs *dirs, const char *name, dsf_diags *d)
{
    dsf_profile_entry *all;
    size_t n;
    dsf_profile_list(&all, &n, dirs);
    const char **names = dsf_xcalloc(n + 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = all[i].name;
    const char *close = dsf_closest(name, names, n);
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "unknown profile '%s'", name);
    if (close)
        dsf_diag_set_hint(g, "did you mean '%s'? ('dsforge list' shows "
                             "every profile)", close);
    else
        dsf_diag_set_hint(g, "'dsforge list' shows every profile on the "
                             "search path");
    free(names);
    dsf_profile_entries_free(all, n);
    return DSF_EINPUT;
}

/* Finds name.lua: first in prefer_dir (the child's directory, so a
** repository's profiles extend their siblings), then on the path. */
static int find_profile(char **path_out, const char **origin_out,
                        const dsf_dirs *dirs, const char *prefer_dir,
                        const char *prefer_origin, const char *name,
                        dsf_diags *d)
{
    *path_out = NULL;
    if (!valid_name(name))
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "invalid profile name '%s' (letters, digits, "
                              "'_', '-' and '.' only)", name);
    char *file = dsf_xasprintf("%s.lua", name);
    if (prefer_dir) {
        char *p = dsf_path_join(prefer_dir, file);
        if (dsf_is_file(p)) {
            free(file);
            *path_out = p;
            *origin_out = prefer_origin;
            return 0;
        }
        free(p);
    }
    for (size_t i = 0; i < dirs->len; i++) {
        char *p = dsf_path_join(dirs->items[i].path, file);
        if (dsf_is_file(p)) {
            free(file);
            *path_out = p;
            *origin_out = dirs->items[i].origin;
            return 0;
        }
        free(p);
    }
    free(file);
    return not_found(dirs, name, d);
}

/* ------------------------------------------------------------------ */
/* Params. */

const char *dsf_param_type_name(dsf_param_type t)
{
    switch (t) {
    case DSF_PARAM_INTEGER:
        return "integer";
    case DSF_PARAM_NUMBER:
        return "number";
    case DSF_PARAM_STRING:
        return "string";
    case DSF_PARAM_BOOLEAN:
        return "boolean";
    }
    return "?";
}

static bool parse_type(const char *s, dsf_param_type *t)
{
    static const struct {
        const char *name;
        dsf_param_type t;
    } names[] = {{"integer", DSF_PARAM_INTEGER}, {"int", DSF_PARAM_INTEGER},
                 {"number", DSF_PARAM_NUMBER},   {"string", DSF_PARAM_STRING},
                 {"boolean", DSF_PARAM_BOOLEAN}, {"bool", DSF_PARAM_BOOLEAN}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            *t = names[i].t;
            return true;
        }
    return false;
}

static bool infer_type(const cJSON *v, dsf_param_type *t)
{
    if (cJSON_IsBool(v))
        *t = DSF_PARAM_BOOLEAN;
    else if (cJSON_IsString(v))
        *t = DSF_PARAM_STRING;
    else if (cJSON_IsNumber(v))
        *t = dsf_json_is_integer_literal(v) ? DSF_PARAM_INTEGER
                                            : DSF_PARAM_NUMBER;
    else
        return false;
    return true;
}

static bool type_matches(dsf_param_type t, const cJSON *v)
{
    switch (t) {
    case DSF_PARAM_INTEGER:
        return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
    case DSF_PARAM_NUMBER:
        return cJSON_IsNumber(v);
    case DSF_PARAM_STRING:
        return cJSON_IsString(v);
    case DSF_PARAM_BOOLEAN:
        return cJSON_IsBool(v);
    }
    return false;
}

int dsf_param_check(const dsf_param *param, const cJSON *v, char **err)
{
    *err = NULL;
    if (!type_matches(param->type, v)) {
        char *txt = dsf_json_print(v, false);
        *err = dsf_xasprintf("param '%s' must be a%s %s, not %s",
                             param->name,
                             param->type == DSF_PARAM_INTEGER ? "n" : "",
                             dsf_param_type_name(param->type), txt);
        free(txt);
        return -1;
    }
    if (cJSON_IsNumber(v)) {
        if ((param->has_min && v->valuedouble < param->min) ||
            (param->has_max && v->valuedouble > param->max)) {
            dsf_buf b = DSF_BUF_INIT;
            dsf_json_write_number(&b, v);
            *err = dsf_xasprintf(
                "param '%s' = %s is out of range (%g .. %g)", param->name,
                dsf_buf_str(&b), param->has_min ? param->min : -HUGE_VAL,
                param->has_max ? param->max : HUGE_VAL);
            dsf_buf_free(&b);
            return -1;
        }
    }
    if (param->values) {
        for (const cJSON *a = param->values->child; a; a = a->next)
            if (cJSON_Compare(a, v, true))
                return 0;
        char *txt = dsf_json_print(v, false);
        char *allowed = dsf_json_print(param->values, false);
        *err = dsf_xasprintf("param '%s' = %s is not one of %s", param->name,
                             txt, allowed);
        free(txt);
        free(allowed);
        return -1;
    }
    return 0;
}

int dsf_param_parse(cJSON **out, const dsf_param *param, const char *text,
                    char **err)
{
    *out = NULL;
    *err = NULL;
    cJSON *v = NULL;
    switch (param->type) {
    case DSF_PARAM_INTEGER:
    case DSF_PARAM_NUMBER: {
        char *end;
        double x = strtod(text, &end);
        if (end == text || *end || !isfinite(x)) {
            *err = dsf_xasprintf("param '%s' expects a%s %s, got '%s'",
                                 param->name,
                                 param->type == DSF_PARAM_INTEGER ? "n" : "",
                                 dsf_param_type_name(param->type), text);
            return -1;
        }
        v = cJSON_CreateNumber(x);
        if (v && param->type == DSF_PARAM_INTEGER && x == floor(x) &&
            fabs(x) < 9e15)
            v->valuestring = dsf_xasprintf("%lld", (long long)x);
        break;
    }
    case DSF_PARAM_BOOLEAN:
        if (!strcmp(text, "true") || !strcmp(text, "1") ||
            !strcmp(text, "yes"))
            v = cJSON_CreateTrue();
        else if (!strcmp(text, "false") || !strcmp(text, "0") ||
                 !strcmp(text, "no"))
            v = cJSON_CreateFalse();
        else {
            *err = dsf_xasprintf("param '%s' expects true or false, got "
                                 "'%s'", param->name, text);
            return -1;
        }
        break;
    case DSF_PARAM_STRING:
        v = cJSON_CreateString(text);
        break;
    }
    if (!v)
        dsf_xoom();
    if (dsf_param_check(param, v, err) != 0) {
        cJSON_Delete(v);
        return -1;
    }
    *out = v;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Reading a declaration. */

typedef struct decl {
    char *name, *summary, *extends;
    cJSON *params;      /* converted "params" table, or NULL */
    cJSON *tiers;       /* converted "tiers" table, or NULL */
    cJSON *tier_order;  /* array of strings, or NULL */
    int build_line;
} decl;

static void decl_free(decl *dc)
{
    free(dc->name);
    free(dc->summary);
    free(dc->extends);
    cJSON_Delete(dc->params);
    cJSON_Delete(dc->tiers);
    cJSON_Delete(dc->tier_order);
}

static int bad(dsf_diags *d, const char *file, const char *fmt,
               const char *a, const char *b)
    __attribute__((format(printf, 3, 0)));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
/* fmt is always one of this file's literals (checked by the attribute). */
static int bad(dsf_diags *d, const char *file, const char *fmt,
               const char *a, const char *b)
{
    dsf_diag_add(d, DSF_ERROR, file, 0, 0, fmt, a, b);
    return DSF_EINPUT;
}
#pragma GCC diagnostic pop

static int get_string_field(lua_State *L, int t, const char *key,
                            char **out, const char *file, dsf_diags *d)
{
    lua_pushstring(L, key);
    int ty = lua_rawget(L, t);
    *out = NULL;
    if (ty == LUA_TSTRING)
        *out = dsf_xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    if (ty != LUA_TNIL && ty != LUA_TSTRING)
        return bad(d, file, "profile field '%s' must be a string, not %s",
                   key, lua_typename(L, ty));
    return 0;
}

static int get_table_field(lua_State *L, int t, const char *key,
                           cJSON **out, unsigned flags, const char *file,
                           dsf_diags *d)
{
    *out = NULL;
    lua_pushstring(L, key);
    int ty = lua_rawget(L, t);
    int rc = 0;
    if (ty == LUA_TTABLE) {
        char *err;
        if (dsf_lua_to_json(out, &err, L, -1, flags) != 0) {
            dsf_diag_add(d, DSF_ERROR, file, 0, 0, "profile field '%s': %s",
                         key, err);
            free(err);
            rc = DSF_EINPUT;
        }
    } else if (ty != LUA_TNIL) {
        rc = bad(d, file, "profile field '%s' must be a table, not %s", key,
                 lua_typename(L, ty));
    }
    lua_pop(L, 1);
    return rc;
}

/* Reads the declaration table on top of the stack (does not raise). */
static int read_decl(lua_State *L, decl *dc, const char *file, dsf_diags *d)
{
    memset(dc, 0, sizeof *dc);
    int t = lua_gettop(L);
    if (!lua_istable(L, t))
        return bad(d, file, "a profile must return a table (got %s)%s",
                   luaL_typename(L, t), "");
    /* Unknown fields are usually typos ("parmas"): refuse them. */
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        bool known = false;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; profile_fields[i]; i++)
                known |= !strcmp(lua_tostring(L, -1), profile_fields[i]);
        if (!known) {
            const char *k = lua_type(L, -1) == LUA_TSTRING
                                ? lua_tostring(L, -1)
                                : "(a non-string key)";
            const char *close = dsf_closest(k, profile_fields, 10);
            dsf_diag *g = dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                       "unknown profile field '%s'", k);
            dsf_diag_set_hint(g, close ? "did you mean '%s'?"
                                       : "known fields: %s",
                              close ? close
                                    : "name, summary, description, version, "
                                      "extends, params, tiers, tier_order, "
                                      "prepare, build");
            lua_pop(L, 1);
            return DSF_EINPUT;
        }
    }
    int rc;
    char *version = NULL;
    rc = get_string_field(L, t, "version", &version, file, d);
    free(version);
    if (rc)
        return rc;
    if ((rc = get_string_field(L, t, "name", &dc->name, file, d)) ||
        (rc = get_string_field(L, t, "summary", &dc->summary, file, d)) ||
        (rc = get_string_field(L, t, "extends", &dc->extends, file, d)) ||
        (rc = get_table_field(L, t, "params", &dc->params, 0, file, d)) ||
        (rc = get_table_field(L, t, "tiers", &dc->tiers,
                              DSF_CONV_ALLOW_DELETE, file, d)) ||
        (rc = get_table_field(L, t, "tier_order", &dc->tier_order, 0, file,
                              d))) {
        decl_free(dc);
        return rc;
    }
    lua_pushliteral(L, "prepare");
    int ty = lua_rawget(L, t);
    lua_pop(L, 1);
    if (ty != LUA_TNIL && ty != LUA_TFUNCTION) {
        decl_free(dc);
        return bad(d, file, "profile field 'prepare' must be a function, "
                            "not %s%s", lua_typename(L, ty), "");
    }
    lua_pushliteral(L, "build");
    ty = lua_rawget(L, t);
    if (ty != LUA_TFUNCTION) {
        lua_pop(L, 1);
        decl_free(dc);
        return bad(d, file, "a profile needs a 'build' function (got %s)%s",
                   lua_typename(L, ty), "");
    }
    lua_Debug ar;
    lua_getinfo(L, ">S", &ar);
    dc->build_line = ar.linedefined;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Merging declarations into the profile model. */

static int add_params(dsf_profile *p, const cJSON *params, const char *owner,
                      const char *file, dsf_diags *d)
{
    static const char *const keys[] = {"default", "doc", "type", "min",
                                       "max", "values", NULL};
    for (const cJSON *m = params ? params->child : NULL; m; m = m->next) {
        if (!valid_name(m->string) || strchr(m->string, '.'))
            return bad(d, file, "invalid param name '%s'%s", m->string, "");
        dsf_param *par = (dsf_param *)dsf_profile_param(p, m->string);
        bool fresh = !par;
        if (fresh) {
            p->params = dsf_xrealloc(p->params,
                                     (p->nparams + 1) * sizeof *p->params);
            par = &p->params[p->nparams++];
            memset(par, 0, sizeof *par);
            par->name = dsf_xstrdup(m->string);
            par->doc = dsf_xstrdup("");
        }
        free(par->declared_in);
        par->declared_in = dsf_xstrdup(owner);
        const cJSON *def = m;
        bool long_form = cJSON_IsObject(m) &&
                         cJSON_GetObjectItemCaseSensitive(m, "default");
        if (long_form) {
            for (const cJSON *k = m->child; k; k = k->next) {
                bool ok = false;
                for (int i = 0; keys[i]; i++)
                    ok |= !strcmp(k->string, keys[i]);
                if (!ok)
                    return bad(d, file, "param '%s': unknown field '%s' "
                                        "(known: default, doc, type, min, "
                                        "max, values)", m->string, k->string);
            }
            def = cJSON_GetObjectItemCaseSensitive(m, "default");
            const cJSON *doc = cJSON_GetObjectItemCaseSensitive(m, "doc");
            if (cJSON_IsString(doc)) {
                free(par->doc);
                par->doc = dsf_xstrdup(doc->valuestring);
            }
            const cJSON *ty = cJSON_GetObjectItemCaseSensitive(m, "type");
            if (ty && (!cJSON_IsString(ty) ||
                       !parse_type(ty->valuestring, &par->type)))
                return bad(d, file, "param '%s': type must be \"integer\", "
                                    "\"number\", \"string\" or \"boolean\"%s",
                           m->string, "");
            if (!ty && !infer_type(def, &par->type) && fresh)
                return bad(d, file, "param '%s': the default must be a "
                                    "number, string or boolean%s",
                           m->string, "");
            const cJSON *mn = cJSON_GetObjectItemCaseSensitive(m, "min");
            const cJSON *mx = cJSON_GetObjectItemCaseSensitive(m, "max");
            if ((mn && !cJSON_IsNumber(mn)) || (mx && !cJSON_IsNumber(mx)))
                return bad(d, file, "param '%s': min and max must be "
                                    "numbers%s", m->string, "");
            if (mn) {
                par->has_min = true;
                par->min = mn->valuedouble;
            }
            if (mx) {
                par->has_max = true;
                par->max = mx->valuedouble;
            }
            const cJSON *vals = cJSON_GetObjectItemCaseSensitive(m, "values");
            if (vals) {
                if (!cJSON_IsArray(vals) || !vals->child)
                    return bad(d, file, "param '%s': values must be a "
                                        "non-empty array%s", m->string, "");
                cJSON_Delete(par->values);
                par->values = cJSON_Duplicate(vals, 1);
            }
        } else if (fresh && !infer_type(def, &par->type)) {
            return bad(d, file, "param '%s': a default must be a number, "
                                "string or boolean (or use the long form "
                                "{ default = ..., doc = ... })%s",
                       m->string, "");
        }
        cJSON_Delete(par->def);
        par->def = cJSON_Duplicate(def, 1);
        char *err;
        if (dsf_param_check(par, par->def, &err) != 0) {
            dsf_diag_add(d, DSF_ERROR, file, 0, 0, "default: %s", err);
            free(err);
            return DSF_EINPUT;
        }
    }
    return 0;
}

static int cmp_params(const void *a, const void *b)
{
    return strcmp(((const dsf_param *)a)->name, ((const dsf_param *)b)->name);
}

static int add_tiers(dsf_profile *p, const cJSON *tiers, const char *owner,
                     const char *file, dsf_diags *d)
{
    for (const cJSON *m = tiers ? tiers->child : NULL; m; m = m->next) {
        if (!valid_name(m->string) || strchr(m->string, '.'))
            return bad(d, file, "invalid tier name '%s'%s", m->string, "");
        if (!cJSON_IsObject(m))
            return bad(d, file, "tier '%s' must be a table%s", m->string, "");
        const cJSON *tp = cJSON_GetObjectItemCaseSensitive(m, "params");
        const cJSON *tc = cJSON_GetObjectItemCaseSensitive(m, "config");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(m, "summary");
        bool long_form = tp || tc || ts;
        if (long_form) {
            for (const cJSON *k = m->child; k; k = k->next)
                if (strcmp(k->string, "params") && strcmp(k->string, "config")
                    && strcmp(k->string, "summary"))
                    return bad(d, file, "tier '%s': unknown field '%s' (a "
                                        "tier has params, config and "
                                        "summary)", m->string, k->string);
            if ((tp && !cJSON_IsObject(tp)) || (tc && !cJSON_IsObject(tc)) ||
                (ts && !cJSON_IsString(ts)))
                return bad(d, file, "tier '%s': params and config must be "
                                    "tables, summary a string%s",
                           m->string, "");
        }
        dsf_tier *t = (dsf_tier *)dsf_profile_tier(p, m->string);
        if (!t) {
            p->tiers = dsf_xrealloc(p->tiers,
                                    (p->ntiers + 1) * sizeof *p->tiers);
            t = &p->tiers[p->ntiers++];
            memset(t, 0, sizeof *t);
            t->name = dsf_xstrdup(m->string);
        } else {
            /* A child's tier of the same name replaces the parent's. */
            free(t->summary);
            free(t->declared_in);
            cJSON_Delete(t->params);
            cJSON_Delete(t->config);
            t->config = NULL;
        }
        t->declared_in = dsf_xstrdup(owner);
        t->summary = dsf_xstrdup(ts ? ts->valuestring : "");
        t->params = cJSON_Duplicate(long_form ? (tp ? tp : NULL) : m, 1);
        if (!t->params)
            t->params = cJSON_CreateObject();
        if (tc)
            t->config = cJSON_Duplicate(tc, 1);
    }
    return 0;
}

/* Orders tiers: tier_order first (each name must exist), then the rest
** by name. */
static int order_tiers(dsf_profile *p, const cJSON *order, const char *file,
                       dsf_diags *d)
{
    size_t n = p->ntiers, placed = 0;
    dsf_tier *sorted = dsf_xcalloc(n ? n : 1, sizeof *sorted);
    bool *used = dsf_xcalloc(n ? n : 1, sizeof *used);
    for (const cJSON *o = order ? order->child : NULL; o; o = o->next) {
        size_t k = n;
        for (size_t i = 0; i < n && cJSON_IsString(o); i++)
            if (!strcmp(p->tiers[i].name, o->valuestring))
                k = i;
        if (k == n || used[k]) {
            free(sorted);
            free(used);
            return bad(d, file, "tier_order names %s, which is not a tier "
                                "(or is listed twice)%s",
                       cJSON_IsString(o) ? o->valuestring : "a non-string",
                       "");
        }
        used[k] = true;
        sorted[placed++] = p->tiers[k];
    }
    while (placed < n) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (!used[i] && (best == n ||
                             strcmp(p->tiers[i].name, p->tiers[best].name) < 0))
                best = i;
        used[best] = true;
        sorted[placed++] = p->tiers[best];
    }
    if (n)
        memcpy(p->tiers, sorted, n * sizeof *sorted);
    free(sorted);
    free(used);
    return 0;
}

static int check_tier_params(dsf_profile *p, dsf_diags *d)
{
    for (size_t i = 0; i < p->ntiers; i++) {
        dsf_tier *t = &p->tiers[i];
        for (const cJSON *m = t->params->child; m; m = m->next) {
            const dsf_param *par = dsf_profile_param(p, m->string);
            if (!par)
                return bad(d, NULL, "tier '%s' sets '%s', which is not a "
                                    "param of the profile",
                           t->name, m->string);
            char *err;
            if (dsf_param_check(par, m, &err) != 0) {
                dsf_diag_add(d, DSF_ERROR, NULL, 0, 0, "tier '%s': %s",
                             t->name, err);
                free(err);
                return DSF_EINPUT;
            }
        }
    }
    return 0;
}

/* NAME is a local profile; REPO/PROFILE[@VERSION] one of a repository:
** then *name_out is PROFILE, *dir_out the repository's profiles directory
** and *origin_out "repo REPO". */
static int resolve_remote(char **name_out, char **dir_out, char **origin_out,
                          const dsf_profile_ctx *ctx, const char *name,
                          dsf_diags *d)
{
    *dir_out = *origin_out = NULL;
    const char *slash = strchr(name, '/');
    if (!slash) {
        *name_out = dsf_xstrdup(name);
        return 0;
    }
    const char *at = strchr(slash, '@');
    char *qualified = dsf_xstrndup(name, at ? (size_t)(at - name)
                                            : strlen(name));
    char *repo = dsf_xstrndup(name, (size_t)(slash - name));
    char *prof = dsf_xstrdup(qualified + (slash - name) + 1);
    int rc = 0;
    if (!ctx->repo)
        rc = dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                            "'%s': repository profiles are not available "
                            "here", name);
    else if (!valid_name(repo) || !valid_name(prof) || (at && !at[1]))
        rc = dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                            "invalid profile name '%s' (expected REPO/PROFILE "
                            "or REPO/PROFILE@VERSION)", name);
    char *dir = NULL;
    if (!rc)
        rc = dsf_repo_resolve_dir(&dir, qualified, at ? at + 1 : NULL,
                                  ctx->repo, d);
    if (!rc) {
        *dir_out = dsf_path_join(dir, "profiles");
        *origin_out = dsf_xasprintf("repo %s", repo);
        *name_out = prof;
        prof = NULL;
    }
    free(dir);
    free(repo);
    free(prof);
    free(qualified);
    return rc;
}

static char *display_name(const char *path, const char *origin,
                          const char *name)
{
    (void)path;
    return dsf_xasprintf("%s:%s.lua", origin, name);
}

int dsf_profile_load(dsf_profile **out, const dsf_profile_ctx *ctx,
                     const char *name, dsf_diags *d)
{
    *out = NULL;
    const char *mods[MAX_MODULE_DIRS];
    dsf_host *h;
    int rc = open_host(&h, ctx, mods, d);
    if (rc)
        return rc;

    decl decls[MAX_CHAIN];
    dsf_profile_src srcs[MAX_CHAIN];
    size_t n = 0;
    char *want = NULL;
    char *prefer_dir = NULL;
    char *repo_origin = NULL;
    const char *prefer_origin = NULL;
    rc = resolve_remote(&want, &prefer_dir, &repo_origin, ctx, name, d);
    if (rc) {
        dsf_host_free(h);
        return rc;
    }
    prefer_origin = repo_origin;
    while (want && !rc) {
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(srcs[i].name, want)) {
                dsf_buf chain = DSF_BUF_INIT;
                for (size_t k = 0; k < n; k++)
                    dsf_buf_printf(&chain, "%s -> ", srcs[k].name);
                dsf_buf_puts(&chain, want);
                rc = dsf_diag_error(d, DSF_EINPUT, srcs[n - 1].path, 0, 0,
                                    "extends cycle: %s", chain.data);
                dsf_buf_free(&chain);
                break;
            }
        }
        if (rc)
            break;
        if (n == MAX_CHAIN) {
            rc = dsf_diag_error(d, DSF_EINPUT, srcs[n - 1].path, 0, 0,
                                "extends chain longer than %d profiles",
                                MAX_CHAIN);
            break;
        }
        char *path = NULL;
        const char *origin = "";
        rc = find_profile(&path, &origin, ctx->dirs, prefer_dir,
                          prefer_origin, want, d);
        if (rc)
            break;
        dsf_profile_src *s = &srcs[n];
        memset(s, 0, sizeof *s);
        s->name = want;
        want = NULL;
        s->path = path;
        s->origin = dsf_xstrdup(origin);
        s->display = display_name(path, origin, s->name);
        lua_State *L = dsf_host_state(h);
        char *what = dsf_xasprintf("profile %s", s->name);
        const dsf_source *src;
        rc = dsf_srccache_get(ctx->sources, path, &src, d);
        if (!rc)
            rc = dsf_host_load_file(h, path, d);
        if (!rc)
            rc = dsf_host_call(h, 0, 1, what, d);
        free(what);
        n++;
        if (rc)
            break;
        memcpy(s->sha256, dsf_source_sha256(src), sizeof s->sha256);
        rc = read_decl(L, &decls[n - 1], path, d);
        lua_settop(L, 0);
        if (rc) {
            n--;
            free(s->name);
            free(s->path);
            free(s->origin);
            free(s->display);
            break;
        }
        decl *dc = &decls[n - 1];
        if (dc->name && strcmp(dc->name, s->name) != 0) {
            rc = dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                                "the profile's name field is '%s' but its "
                                "file is %s.lua (they must match)",
                                dc->name, s->name);
            decl_free(dc);
            n--;
            free(s->name);
            free(s->path);
            free(s->origin);
            free(s->display);
            break;
        }
        s->summary = dsf_xstrdup(dc->summary ? dc->summary : "");
        s->extends = dsf_xstrdup(dc->extends);
        s->build_line = dc->build_line;
        want = dc->extends ? dsf_xstrdup(dc->extends) : NULL;
        free(prefer_dir);
        prefer_dir = dsf_path_dirname(path);
        prefer_origin = s->origin;
    }
    free(want);
    free(prefer_dir);
    free(repo_origin);
    dsf_host_free(h);
    if (rc) {
        /* On failure only fully read entries remain in srcs/decls. */
        for (size_t i = 0; i < n; i++) {
            if (!srcs[i].summary) { /* loaded but declaration not read */
                free(srcs[i].name);
                free(srcs[i].path);
                free(srcs[i].origin);
                free(srcs[i].display);
                continue;
            }
            decl_free(&decls[i]);
            free(srcs[i].name);
            free(srcs[i].path);
            free(srcs[i].origin);
            free(srcs[i].display);
            free(srcs[i].summary);
            free(srcs[i].extends);
        }
        return rc;
    }
    dsf_profile *p = dsf_xcalloc(1, sizeof *p);
    p->nchain = n;
    p->chain = dsf_xcalloc(n, sizeof *p->chain);
    for (size_t i = 0; i < n; i++)
        p->chain[i] = srcs[n - 1 - i]; /* root first */
    const cJSON *order = NULL;
    for (size_t i = 0; i < n && !rc; i++) {
        decl *dc = &decls[n - 1 - i];
        rc = add_params(p, dc->params, p->chain[i].name, p->chain[i].path, d);
        if (!rc)
            rc = add_tiers(p, dc->tiers, p->chain[i].name, p->chain[i].path,
                           d);
        if (dc->tier_order)
            order = dc->tier_order;
    }
    if (!rc) {
        if (p->nparams)
            qsort(p->params, p->nparams, sizeof *p->params, cmp_params);
        rc = order_tiers(p, order, p->chain[n - 1].path, d);
    }
    if (!rc)
        rc = check_tier_params(p, d);
    for (size_t i = 0; i < n; i++)
        decl_free(&decls[i]);
    if (rc) {
        dsf_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void dsf_profile_free(dsf_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nchain; i++) {
        dsf_profile_src *s = &p->chain[i];
        free(s->name);
        free(s->path);
        free(s->display);
        free(s->origin);
        free(s->summary);
        free(s->extends);
    }
    for (size_t i = 0; i < p->nparams; i++) {
        free(p->params[i].name);
        free(p->params[i].doc);
        free(p->params[i].declared_in);
        cJSON_Delete(p->params[i].def);
        cJSON_Delete(p->params[i].values);
    }
    for (size_t i = 0; i < p->ntiers; i++) {
        free(p->tiers[i].name);
        free(p->tiers[i].summary);
        free(p->tiers[i].declared_in);
        cJSON_Delete(p->tiers[i].params);
        cJSON_Delete(p->tiers[i].config);
    }
    free(p->chain);
    free(p->params);
    free(p->tiers);
    free(p);
}

const dsf_param *dsf_profile_param(const dsf_profile *p, const char *name)
{
    for (size_t i = 0; i < p->nparams; i++)
        if (!strcmp(p->params[i].name, name))
            return &p->params[i];
    return NULL;
}

const dsf_tier *dsf_profile_tier(const dsf_profile *p, const char *name)
{
    for (size_t i = 0; i < p->ntiers; i++)
        if (!strcmp(p->tiers[i].name, name))
            return &p->tiers[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Building. */

typedef struct push_args {
    const cJSON *params;
    const cJSON *extra;
} push_args;

static int push_build_args(lua_State *L)
{
    push_args *a = lua_touserdata(L, 1);
    lua_settop(L, 0);
    dsf_json_push(L, a->params);
    if (a->extra)
        dsf_json_push(L, a->extra);
    else
        lua_newtable(L);
    return 2;
}

/* Applies the param changes returned by a prepare function (on top of
** the stack) to params, checking each against its declaration. */
static int apply_prepared(const dsf_profile *p, const dsf_profile_src *s,
                          lua_State *L, cJSON *params, dsf_diags *d)
{
    if (lua_isnil(L, -1))
        return 0;
    if (!lua_istable(L, -1))
        return dsf_diag_error(d, DSF_EINPUT, s->path, 0, 0,
                              "prepare must return a table of param "
                              "changes (or nil), not %s",
                              luaL_typename(L, -1));
    cJSON *changes;
    char *err;
    if (dsf_lua_to_json(&changes, &err, L, -1, 0) != 0) {
        dsf_diag_add(d, DSF_ERROR, s->path, 0, 0, "prepare's result: %s",
                     err);
        free(err);
        return DSF_ESCRIPT;
    }
    int rc = 0;
    for (const cJSON *m = cJSON_IsObject(changes) ? changes->child : NULL;
         m && !rc; m = m->next) {
        const dsf_param *par = dsf_profile_param(p, m->string);
        if (!par) {
            rc = dsf_diag_error(d, DSF_EINPUT, s->path, 0, 0,
                                "prepare sets '%s', which is not a param "
                                "of the profile", m->string);
            break;
        }
        if (dsf_param_check(par, m, &err) != 0) {
            dsf_diag_add(d, DSF_ERROR, s->path, 0, 0, "prepare: %s", err);
            free(err);
            rc = DSF_EINPUT;
            break;
        }
        cJSON_ReplaceItemInObjectCaseSensitive(params, m->string,
                                               cJSON_Duplicate(m, 1));
    }
    cJSON_Delete(changes);
    return rc;
}

int dsf_profile_build(cJSON **doc_out, cJSON **params_out,
                      const dsf_profile *p, const dsf_profile_ctx *ctx,
                      const cJSON *params, const cJSON *ctx_extra,
                      const dsf_layer *layers, dsf_prov *prov, dsf_diags *d)
{
    *doc_out = NULL;
    if (params_out)
        *params_out = NULL;
    const char *mods[MAX_MODULE_DIRS];
    dsf_host *h;
    int rc = open_host(&h, ctx, mods, d);
    if (rc)
        return rc;
    lua_State *L = dsf_host_state(h);
    cJSON *final = cJSON_Duplicate(params, 1);
    cJSON *doc = cJSON_CreateObject();
    if (!doc || !final)
        dsf_xoom();
    /* 1. Evaluate every file of the chain (root first): tables 1..n. */
    for (size_t i = 0; i < p->nchain && !rc; i++) {
        const dsf_profile_src *s = &p->chain[i];
        char *what = dsf_xasprintf("profile %s", s->name);
        rc = dsf_host_load_file(h, s->path, d);
        if (!rc)
            rc = dsf_host_call(h, 0, 1, what, d);
        if (!rc && !lua_istable(L, -1))
            rc = dsf_diag_error(d, DSF_EINPUT, s->path, 0, 0,
                                "a profile must return a table");
        free(what);
    }
    /* 2. prepare(p, ctx), root first: param changes for every build. */
    for (size_t i = 0; i < p->nchain && !rc; i++) {
        const dsf_profile_src *s = &p->chain[i];
        lua_pushliteral(L, "prepare");
        if (lua_rawget(L, (int)i + 1) != LUA_TFUNCTION) {
            lua_pop(L, 1);
            continue;
        }
        char *what = dsf_xasprintf("profile %s (prepare)", s->name);
        push_args args = {final, ctx_extra};
        rc = dsf_host_cpcall(h, push_build_args, &args, 2, what, d);
        if (!rc)
            rc = dsf_host_call(h, 2, 1, what, d);
        if (!rc)
            rc = apply_prepared(p, s, L, final, d);
        if (!rc)
            lua_pop(L, 1);
        free(what);
    }
    /* 3. build(p, ctx), root first, each result merged over the last. */
    for (size_t i = 0; i < p->nchain && !rc; i++) {
        const dsf_profile_src *s = &p->chain[i];
        char *what = dsf_xasprintf("profile %s", s->name);
        lua_pushliteral(L, "build");
        if (lua_rawget(L, (int)i + 1) != LUA_TFUNCTION)
            rc = dsf_diag_error(d, DSF_EINPUT, s->path, 0, 0,
                                "a profile needs a 'build' function");
        push_args args = {final, ctx_extra};
        if (!rc)
            rc = dsf_host_cpcall(h, push_build_args, &args, 2, what, d);
        if (!rc)
            rc = dsf_host_call(h, 2, 1, what, d);
        if (!rc && !lua_istable(L, -1))
            rc = dsf_diag_error(d, DSF_EINPUT, s->path, s->build_line, 0,
                                "build must return a table (the config), "
                                "not %s", luaL_typename(L, -1));
        if (!rc) {
            cJSON *part;
            char *err;
            if (dsf_lua_to_json(&part, &err, L, -1, DSF_CONV_ALLOW_DELETE)) {
                dsf_diag *g = dsf_diag_add(d, DSF_ERROR, s->path,
                                           s->build_line, 0,
                                           "the config returned by build: %s",
                                           err);
                dsf_diag_set_hint(g, "tables must be arrays (keys 1..n) or "
                                     "objects (string keys); use "
                                     "dsforge.null for JSON null");
                free(err);
                rc = DSF_ESCRIPT;
            } else {
                dsf_merge(doc, part, &layers[i], NULL, prov);
                cJSON_Delete(part);
            }
            lua_pop(L, 1);
        }
        free(what);
    }
    dsf_host_free(h);
    if (rc) {
        cJSON_Delete(doc);
        cJSON_Delete(final);
        return rc;
    }
    *doc_out = doc;
    if (params_out)
        *params_out = final;
    else
        cJSON_Delete(final);
    return 0;
}
