/* profile.c -- loading a profile: its extends chain, declarations,
** params and tiers (see profile.h). */
#include "profile/internal.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "json/jsonout.h"
#include "lua/conv.h"
#include "profile/pstate.h"

#define MAX_CHAIN 16

static const char *const profile_fields[] = {
    "build", "description", "emit", "extends", "name", "params",
    "prepare", "summary", "target", "tier_order", "tiers", "version", NULL};


typedef struct decl {
    char *name, *summary, *extends, *version;
    char *target;       /* the target it is for, or NULL */
    cJSON *params;      /* converted "params" table, or NULL */
    cJSON *tiers;       /* converted "tiers" table, or NULL */
    cJSON *tier_order;  /* array of strings, or NULL */
    cJSON *emit;        /* array of emitter names, or NULL */
    int build_line;
} decl;

static void decl_free(decl *dc)
{
    free(dc->name);
    free(dc->summary);
    free(dc->extends);
    free(dc->version);
    free(dc->target);
    cJSON_Delete(dc->params);
    cJSON_Delete(dc->tiers);
    cJSON_Delete(dc->tier_order);
    cJSON_Delete(dc->emit);
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
        int crc = dsf_lua_to_json(out, &err, L, -1, flags);
        if (crc != 0) {
            dsf_diag_add(d, DSF_ERROR, file, 0, 0, "profile field '%s': %s",
                         key, err);
            free(err);
            rc = crc == DSF_ESCRIPT ? DSF_ESCRIPT : DSF_EINPUT;
        }
    } else if (ty != LUA_TNIL) {
        rc = bad(d, file, "profile field '%s' must be a table, not %s", key,
                 lua_typename(L, ty));
    }
    lua_pop(L, 1);
    return rc;
}

/* emit: a list of emitter names (which exist is known only once the
** plugins are loaded: gen checks). */
static int check_emit(const cJSON *emit, const char *file, dsf_diags *d)
{
    if (!emit || (cJSON_IsObject(emit) && !emit->child)) /* {}: none */
        return 0;
    if (!cJSON_IsArray(emit))
        return bad(d, file, "profile field 'emit' must be a list of "
                            "emitter names%s%s", "", "");
    for (const cJSON *e = emit->child; e; e = e->next)
        if (!cJSON_IsString(e) || !e->valuestring[0])
            return bad(d, file, "profile field 'emit' must be a list of "
                                "emitter names%s%s", "", "");
    return 0;
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
                                      "extends, target, params, tiers, "
                                      "tier_order, emit, prepare, build");
            lua_pop(L, 1);
            return DSF_EINPUT;
        }
    }
    int rc;
    if ((rc = get_string_field(L, t, "version", &dc->version, file, d)))
        return rc;
    if ((rc = get_string_field(L, t, "name", &dc->name, file, d)) ||
        (rc = get_string_field(L, t, "summary", &dc->summary, file, d)) ||
        (rc = get_string_field(L, t, "extends", &dc->extends, file, d)) ||
        (rc = get_string_field(L, t, "target", &dc->target, file, d)) ||
        (rc = get_table_field(L, t, "params", &dc->params, 0, file, d)) ||
        (rc = get_table_field(L, t, "tiers", &dc->tiers,
                              DSF_CONV_ALLOW_DELETE, file, d)) ||
        (rc = get_table_field(L, t, "tier_order", &dc->tier_order, 0, file,
                              d)) ||
        (rc = get_table_field(L, t, "emit", &dc->emit, 0, file, d)) ||
        (rc = check_emit(dc->emit, file, d))) {
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
    if (ty == LUA_TNIL && dc->extends) {
        /* a child that only changes params, tiers or sweeps: its
        ** parents' builds make the config */
        lua_pop(L, 1);
        dc->build_line = 0;
        return 0;
    }
    if (ty != LUA_TFUNCTION) {
        lua_pop(L, 1);
        decl_free(dc);
        return bad(d, file, "a profile needs a 'build' function (got %s)%s",
                   lua_typename(L, ty),
                   ty == LUA_TNIL ? ", unless it extends another" : "");
    }
    lua_Debug ar;
    lua_getinfo(L, ">S", &ar);
    dc->build_line = ar.linedefined;
    return 0;
}


static int add_params(dsf_profile *p, const cJSON *params, const char *owner,
                      const char *file, dsf_diags *d)
{
    static const char *const keys[] = {"default", "doc", "type", "min",
                                       "max", "values", "check", "file",
                                       NULL};
    for (const cJSON *m = params ? params->child : NULL; m; m = m->next) {
        if (!dsf_profile_valid_name(m->string) || strchr(m->string, '.'))
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
        if (cJSON_IsObject(m) && !long_form)
            return bad(d, file, "param '%s': the long form { default = ..., "
                                "doc = ... } needs a default%s",
                       m->string, "");
        if (long_form) {
            for (const cJSON *k = m->child; k; k = k->next) {
                bool ok = false;
                for (int i = 0; keys[i]; i++)
                    ok |= !strcmp(k->string, keys[i]);
                if (!ok)
                    return bad(d, file, "param '%s': unknown field '%s' "
                                        "(known: default, doc, type, min, "
                                        "max, values, check, file)",
                                m->string, k->string);
            }
            def = cJSON_GetObjectItemCaseSensitive(m, "default");
            const cJSON *doc = cJSON_GetObjectItemCaseSensitive(m, "doc");
            if (cJSON_IsString(doc)) {
                free(par->doc);
                par->doc = dsf_xstrdup(doc->valuestring);
            }
            const cJSON *ty = cJSON_GetObjectItemCaseSensitive(m, "type");
            if (ty && (!cJSON_IsString(ty) ||
                       !dsf_param_type_parse(ty->valuestring, &par->type)))
                return bad(d, file, "param '%s': type must be \"integer\", "
                                    "\"number\", \"string\" or \"boolean\"%s",
                           m->string, "");
            if (!ty && !dsf_param_type_infer(def, &par->type) && fresh)
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
            const cJSON *ck = cJSON_GetObjectItemCaseSensitive(m, "check");
            if (ck) {
                const char *dot = cJSON_IsString(ck)
                                      ? strrchr(ck->valuestring, '.') : NULL;
                if (!dot || dot == ck->valuestring || !dot[1])
                    return bad(d, file, "param '%s': check must name a "
                                        "plugin function, \"module.fn\"%s",
                               m->string, "");
                free(par->check);
                par->check = dsf_xstrdup(ck->valuestring);
            }
            const cJSON *fl = cJSON_GetObjectItemCaseSensitive(m, "file");
            if (fl) {
                if (!cJSON_IsString(fl) || strcmp(fl->valuestring, "json"))
                    return bad(d, file, "param '%s': file must be \"json\"%s",
                               m->string, "");
                if (par->type != DSF_PARAM_STRING)
                    return bad(d, file, "param '%s': only a string param "
                                        "can name a file%s", m->string, "");
                par->json_file = true;
            }
            const cJSON *vals = cJSON_GetObjectItemCaseSensitive(m, "values");
            if (vals) {
                if (!cJSON_IsArray(vals) || !vals->child)
                    return bad(d, file, "param '%s': values must be a "
                                        "non-empty array%s", m->string, "");
                cJSON_Delete(par->values);
                par->values = cJSON_Duplicate(vals, 1);
            }
        } else if (fresh && !dsf_param_type_infer(def, &par->type)) {
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
        if (!dsf_profile_valid_name(m->string) || strchr(m->string, '.'))
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

/* "origin:name.lua"; for a repository's profile "repo NAME@VERSION:
** profiles/name.lua" (its cache path, 64 hex digits deep, means nothing
** to a person). version may be NULL. */
static char *display_name(const char *origin, const char *name,
                          const char *version)
{
    if (!strncmp(origin, "repo ", 5))
        return dsf_xasprintf("%s%s%s:profiles/%s.lua", origin,
                             version ? "@" : "", version ? version : "",
                             name);
    return dsf_xasprintf("%s:%s.lua", origin, name);
}

const char *dsf_profile_src_where(const dsf_profile_src *s)
{
    return strncmp(s->origin, "repo ", 5) ? s->path : s->display;
}

/* The extends chain as it is read, leaf first. */
typedef struct chain {
    decl decls[MAX_CHAIN];
    dsf_profile_src srcs[MAX_CHAIN];
    size_t n;               /* entries fully read */
    char *prefer_dir;       /* where the last one was found */
    const char *prefer_origin;
    const char *release;    /* a repository's release, or NULL */
} chain;

static void src_free(dsf_profile_src *s)
{
    free(s->name);
    free(s->path);
    free(s->origin);
    free(s->display);
    free(s->summary);
    free(s->extends);
}

/* A cycle or a chain too long to take profile want too. */
static int chain_refuses(const chain *c, const char *want, dsf_diags *d)
{
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->srcs[i].name, want))
            continue;
        dsf_buf text = DSF_BUF_INIT;
        for (size_t k = 0; k < c->n; k++)
            dsf_buf_printf(&text, "%s -> ", c->srcs[k].name);
        dsf_buf_puts(&text, want);
        int rc = dsf_diag_error(d, DSF_EINPUT, c->srcs[c->n - 1].path, 0, 0,
                                "extends cycle: %s", text.data);
        dsf_buf_free(&text);
        return rc;
    }
    if (c->n == MAX_CHAIN)
        return dsf_diag_error(d, DSF_EINPUT, c->srcs[c->n - 1].path, 0, 0,
                              "extends chain longer than %d profiles",
                              MAX_CHAIN);
    return 0;
}

/* Finds, runs and reads profile want (taken) as the chain's next entry;
** *next: the profile it extends (caller frees), or NULL. */
static int load_link(chain *c, char *want, char **next, dsf_host *h,
                     const dsf_profile_ctx *ctx, dsf_diags *d)
{
    *next = NULL;
    char *path = NULL;
    const char *origin = "";
    int rc = chain_refuses(c, want, d);
    if (!rc)
        rc = dsf_profile_find(&path, &origin, ctx->dirs, c->prefer_dir,
                              c->prefer_origin, want, d);
    if (rc) {
        free(want);
        return rc;
    }
    dsf_profile_src s;
    memset(&s, 0, sizeof s);
    s.name = want;
    s.path = path;
    s.origin = dsf_xstrdup(origin);
    /* a repository's file is named by its repository and release in
    ** every message, never by its cache path */
    bool remote = !strncmp(origin, "repo ", 5);
    s.display = display_name(origin, s.name, remote ? c->release : NULL);
    const char *where = remote ? s.display : path;
    lua_State *L = dsf_host_state(h);
    char *what = dsf_xasprintf("profile %s", s.name);
    const dsf_source *src;
    rc = dsf_srccache_get(ctx->sources, path, &src, d);
    if (!rc)
        rc = dsf_host_load_kept(h, path, remote ? where : NULL, d);
    if (!rc)
        rc = dsf_host_call(h, 0, 1, what, d);
    free(what);
    decl *dc = &c->decls[c->n];
    if (!rc) {
        memcpy(s.sha256, dsf_source_sha256(src), sizeof s.sha256);
        rc = read_decl(L, dc, where, d);
        if (!rc && dc->name && strcmp(dc->name, s.name) != 0) {
            rc = dsf_diag_error(d, DSF_EINPUT, where, 0, 0,
                                "the profile's name field is '%s' but its "
                                "file is %s.lua (they must match)",
                                dc->name, s.name);
            decl_free(dc);
        }
    }
    lua_settop(L, 0);
    if (rc) {
        src_free(&s);
        return rc;
    }
    free(s.display);
    s.display = display_name(s.origin, s.name, remote && c->release
                                                   ? c->release
                                                   : dc->version);
    s.summary = dsf_xstrdup(dc->summary ? dc->summary : "");
    s.extends = dsf_xstrdup(dc->extends);
    s.build_line = dc->build_line;
    *next = dc->extends ? dsf_xstrdup(dc->extends) : NULL;
    free(c->prefer_dir);
    c->prefer_dir = dsf_path_dirname(path);
    c->srcs[c->n++] = s;
    c->prefer_origin = c->srcs[c->n - 1].origin;
    return 0;
}

/* The profile of a fully read chain (its entries moved into *out). */
static int assemble(dsf_profile **out, chain *c, dsf_profile_state *st,
                    dsf_diags *d)
{
    size_t n = c->n;
    dsf_profile *p = dsf_xcalloc(1, sizeof *p);
    p->state = st; /* builds renew it */
    p->nchain = n;
    p->chain = dsf_xcalloc(n, sizeof *p->chain);
    for (size_t i = 0; i < n; i++)
        p->chain[i] = c->srcs[n - 1 - i]; /* root first */
    c->n = 0;
    const cJSON *order = NULL;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        decl *dc = &c->decls[n - 1 - i];
        const char *where = dsf_profile_src_where(&p->chain[i]);
        rc = add_params(p, dc->params, p->chain[i].name, where, d);
        if (!rc)
            rc = add_tiers(p, dc->tiers, p->chain[i].name, where, d);
        if (dc->tier_order)
            order = dc->tier_order;
        if (dc->emit) { /* the profile nearest the leaf decides */
            cJSON_Delete(p->emit);
            p->emit = cJSON_Duplicate(dc->emit, 1);
            p->emit_from = i;
        }
        if (dc->target) { /* as for emit */
            free(p->target);
            p->target = dsf_xstrdup(dc->target);
            p->target_from = i;
        }
    }
    if (!rc) {
        if (p->nparams)
            qsort(p->params, p->nparams, sizeof *p->params, cmp_params);
        rc = order_tiers(p, order, dsf_profile_src_where(&p->chain[n - 1]),
                         d);
    }
    if (!rc)
        rc = check_tier_params(p, d);
    for (size_t i = 0; i < n; i++)
        decl_free(&c->decls[i]);
    if (rc)
        dsf_profile_free(p);
    else
        *out = p;
    return rc;
}

int dsf_profile_load(dsf_profile **out, const dsf_profile_ctx *ctx,
                     const char *name, dsf_diags *d)
{
    *out = NULL;
    dsf_profile_state *st = NULL; /* the profile's, once loaded */
    dsf_host *h;
    int rc = dsf_pstate_host(&h, &st, ctx, d);
    if (rc)
        return rc;
    chain c;
    c.n = 0;
    c.prefer_dir = NULL;
    char *want = NULL, *repo_origin = NULL, *release = NULL;
    rc = dsf_profile_resolve_remote(&want, &c.prefer_dir, &release,
                                    &repo_origin, ctx, name, d);
    c.prefer_origin = repo_origin;
    c.release = release;
    while (!rc && want) {
        char *next;
        rc = load_link(&c, want, &next, h, ctx, d);
        want = next;
    }
    free(want);
    free(c.prefer_dir);
    lua_settop(dsf_host_state(h), 0);
    if (rc) {
        for (size_t i = 0; i < c.n; i++) {
            decl_free(&c.decls[i]);
            src_free(&c.srcs[i]);
        }
        dsf_pstate_free(st);
    } else {
        rc = assemble(out, &c, st, d); /* frees st on failure */
    }
    free(repo_origin);
    free(release);
    /* loaded: the releases it selected are recorded in the lock now; a
    ** release that failed to load is not */
    if (rc)
        dsf_repo_discard();
    else if (ctx->repo && (rc = dsf_repo_commit(ctx->repo, d)) != 0) {
        dsf_profile_free(*out);
        *out = NULL;
    }
    return rc;
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
        free(p->params[i].check);
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
    cJSON_Delete(p->emit);
    free(p->target);
    dsf_pstate_free(p->state);
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
