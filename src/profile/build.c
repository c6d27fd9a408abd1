/* build.c -- evaluating a variant: prepare, then build, in the profile's
** renewed state (pstate.h). */
#include "profile/internal.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "doc/merge.h"
#include "lua/conv.h"
#include "profile/pstate.h"


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
                      dsf_profile *p, const dsf_profile_ctx *ctx,
                      const cJSON *params, const cJSON *ctx_extra,
                      const dsf_layer *layers, dsf_prov *prov, dsf_diags *d)
{
    *doc_out = NULL;
    if (params_out)
        *params_out = NULL;
    dsf_host *h;
    int rc = dsf_pstate_host(&h, &p->state, ctx, d);
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
        rc = dsf_host_load_kept(h, s->path, dsf_profile_src_where(s), d);
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
        if (lua_rawget(L, (int)i + 1) != LUA_TFUNCTION) {
            /* a child without build (checked at load): nothing to merge */
            lua_pop(L, 1);
            free(what);
            if (i == 0)
                rc = dsf_diag_error(d, DSF_EINPUT, s->path, 0, 0,
                                    "a profile needs a 'build' function");
            continue;
        }
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
            int crc = dsf_lua_to_json(&part, &err, L, -1,
                                      DSF_CONV_ALLOW_DELETE);
            if (crc) {
                dsf_diag *g = dsf_diag_add(d, DSF_ERROR, s->path,
                                           s->build_line, 0,
                                           "the config returned by build: %s",
                                           err);
                if (crc != DSF_ESCRIPT) /* not JSON, rather than a limit */
                    dsf_diag_set_hint(g, "tables must be arrays (keys 1..n) "
                                         "or objects (string keys); use "
                                         "dsforge.null for JSON null");
                free(err);
                rc = DSF_ESCRIPT;
            } else {
                /* (part is ours: its members are moved, not copied) */
                dsf_merge_take(doc, part, &layers[i], NULL, prov);
            }
            lua_pop(L, 1);
        }
        free(what);
    }
    lua_settop(L, 0);
    if (rc) {
        /* A state that broke off a script is not used again. */
        dsf_pstate_free(p->state);
        p->state = NULL;
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

