/* emit_run.c -- running a run emitter (scope = "run", see emit.h): once,
** after every variant, on the whole run.
**
** A sweep may have 100,000 variants and a run emitter's files may be tens
** of megabytes, more than a script's memory budget holds at once. So
** nothing is made of the run before the script asks: run.variants is a
** table whose elements are made when read (and dropped by the collector
** after), and ctx.write(NAME, TEXT) hands text to this side as it is made,
** appended to the file NAME. What emit returns (a list of {file, text})
** is added after what it wrote. Both closures work only during the call
** (lua/callscope.h). */
#include "plugin/emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "lua/callscope.h"
#include "lua/conv.h"
#include "plugin/plugin_internal.h"

#define MAX_RUN_FILES 1024

/* One call of a run emitter: what its closures reach. */
typedef struct run_call {
    const dsf_emit_run *run;
    const dsf_emitter *e;
    size_t sel;
    dsf_callscope scope;
    char **names;          /* the files, in the order first written */
    dsf_buf *texts;
    size_t n;
} run_call;

/* A run emitter's file name: plain, and in its emitter's namespace; NULL
** when it is one, else why not. */
static const char *run_file_problem(const dsf_emitter *e, const char *s,
                                    size_t len)
{
    size_t n = strlen(e->name);
    if (len != strlen(s) || len > 200)
        return "must be a name of at most 200 bytes without NUL";
    if (strncmp(s, e->name, n) != 0 || (s[n] != '.' && s[n] != '-') ||
        !s[n + 1])
        return "must start with the emitter's name and '.' or '-'";
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
              *c == '-'))
            return "may hold only letters, digits, '.', '_' and '-'";
    return NULL;
}

/* The file called name of the call, made when new: its index, or -1 (a
** message pushed) for a bad name or too many files. */
static long file_of(lua_State *L, run_call *rc, const char *name, size_t len)
{
    const char *why = run_file_problem(rc->e, name, len);
    if (why) {
        lua_pushfstring(L, "file name '%s' %s", name, why);
        return -1;
    }
    for (size_t i = 0; i < rc->n; i++)
        if (!strcmp(rc->names[i], name))
            return (long)i;
    if (rc->n >= MAX_RUN_FILES) {
        lua_pushfstring(L, "more than %d files", MAX_RUN_FILES);
        return -1;
    }
    rc->names = dsf_xrealloc(rc->names, (rc->n + 1) * sizeof *rc->names);
    rc->texts = dsf_xrealloc(rc->texts, (rc->n + 1) * sizeof *rc->texts);
    rc->names[rc->n] = dsf_xstrdup(name);
    rc->texts[rc->n] = (dsf_buf)DSF_BUF_INIT;
    return (long)rc->n++;
}

/* Appends text to file k: kept when it is written (-o) or hashed (the
** manifest lists it), else only counted (a dry run's footer). */
static void add_text(run_call *rc, long k, const char *text, size_t len)
{
    if (rc->run->dir || rc->run->hash)
        dsf_buf_add(&rc->texts[k], text, len);
    else
        rc->texts[k].len += len;
}

/* ctx.write(NAME, TEXT): appends TEXT to the run's file NAME. */
static int l_write(lua_State *L)
{
    run_call *rc = dsf_callscope_data(L, "ctx.write");
    size_t nlen, len;
    const char *name = luaL_checklstring(L, 1, &nlen);
    const char *text = luaL_checklstring(L, 2, &len);
    long k = file_of(L, rc, name, nlen);
    if (k < 0)
        return luaL_error(L, "ctx.write: %s", lua_tostring(L, -1));
    add_text(rc, k, text, len);
    return 0;
}

/* run.variants[i]: variant i (1-based) as {name, tier, file, sha256,
** row}, made now; nil past the end. */
static int l_variant(lua_State *L)
{
    run_call *rc = dsf_callscope_data(L, "run.variants");
    lua_Integer i = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 0;
    const dsf_emit_run *run = rc->run;
    if (i < 1 || (lua_Unsigned)i > run->nvariants)
        return 0;
    dsf_emit_run_variant v = {0};
    run->variant(run->ctx, (size_t)i - 1, rc->sel, &v);
    lua_createtable(L, 0, 5);
    lua_pushstring(L, v.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, v.tier);
    lua_setfield(L, -2, "tier");
    lua_pushfstring(L, "%s-%s.json", run->profile, v.name);
    lua_setfield(L, -2, "file");
    lua_pushstring(L, v.sha256);
    lua_setfield(L, -2, "sha256");
    if (v.row) {
        cJSON *j = cJSON_Parse(v.row); /* our own text: it parses */
        if (j) {
            /* (raises only at the memory limit, where j is lost with
            ** the failed run) */
            dsf_json_push(L, j);
            cJSON_Delete(j);
            lua_setfield(L, -2, "row");
        }
    }
    return 1;
}

static int l_count(lua_State *L)
{
    run_call *rc = dsf_callscope_data(L, "run.variants");
    lua_pushinteger(L, (lua_Integer)rc->run->nvariants);
    return 1;
}

/* (rc) -> run = {profile, dir, digest, variants}, ctx = {target, train_cmd, json,
** options, write} (protected: allocates). */
static int push_run_args(lua_State *L)
{
    run_call *rc = lua_touserdata(L, 1);
    const dsf_emit_run *run = rc->run;
    lua_settop(L, 0);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, run->profile);
    lua_setfield(L, 1, "profile");
    if (run->dir) {
        lua_pushstring(L, run->dir);
        lua_setfield(L, 1, "dir");
    }
    /* run.digest: what names the run's set of variants, each by its
    ** file and its bytes' hash (another sweep, or one config changed,
    ** gets another) */
    dsf_sha256 h;
    dsf_sha256_init(&h);
    for (size_t i = 0; i < run->nvariants; i++) {
        dsf_emit_run_variant v = {0};
        run->variant(run->ctx, i, rc->sel, &v);
        dsf_sha256_update(&h, run->profile, strlen(run->profile));
        dsf_sha256_update(&h, "-", 1);
        dsf_sha256_update(&h, v.name, strlen(v.name));
        dsf_sha256_update(&h, ".json ", 6);
        dsf_sha256_update(&h, v.sha256, strlen(v.sha256));
        dsf_sha256_update(&h, "\n", 1);
    }
    unsigned char raw[32];
    dsf_sha256_final(&h, raw);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    lua_pushstring(L, hex);
    lua_setfield(L, 1, "digest");
    lua_newtable(L);                  /* variants, made when read */
    lua_createtable(L, 0, 2);
    dsf_callscope_push(L, &rc->scope, l_variant, rc);
    lua_setfield(L, -2, "__index");
    dsf_callscope_push(L, &rc->scope, l_count, rc);
    lua_setfield(L, -2, "__len");
    lua_setmetatable(L, -2);
    lua_setfield(L, 1, "variants");
    lua_createtable(L, 0, 5);
    lua_pushstring(L, run->target);
    lua_setfield(L, 2, "target");
    if (run->train_cmd) {
        lua_pushstring(L, run->train_cmd);
        lua_setfield(L, 2, "train_cmd");
    }
    dsf_emit_push_common_ctx(L, 2, run->options);
    dsf_callscope_push(L, &rc->scope, l_write, rc);
    lua_setfield(L, 2, "write");
    return 2;
}

/* The list emit returned (on top; nil: none), as ctx.write would have
** written it, after what was written: a name already written is an
** error (which text would win is not clear). */
static int take_returned(lua_State *L, run_call *rc, size_t written,
                         dsf_diags *d)
{
    const char *what = rc->e->what;
    if (lua_isnil(L, -1))
        return 0;
    if (!lua_istable(L, -1))
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "%s must return a list of {file = NAME, text = "
                              "TEXT} (or nothing, having used ctx.write), "
                              "not a %s", what, luaL_typename(L, -1));
    int r = lua_gettop(L);
    size_t n = (size_t)lua_rawlen(L, r);
    for (size_t k = 1; k <= n; k++) {
        lua_rawgeti(L, r, (lua_Integer)k);
        if (!lua_istable(L, -1))
            return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                  "%s: file #%zu must be a table {file = "
                                  "NAME, text = TEXT}, not a %s", what, k,
                                  luaL_typename(L, -1));
        lua_getfield(L, -1, "file");
        lua_getfield(L, -2, "text");
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                  "%s: file #%zu needs a string 'file' and a "
                                  "string 'text'", what, k);
        size_t nlen, len;
        const char *name = lua_tolstring(L, -2, &nlen);
        const char *text = lua_tolstring(L, -1, &len);
        size_t before = rc->n;
        long i = file_of(L, rc, name, nlen);
        if (i < 0)
            return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0, "%s: %s", what,
                                  lua_tostring(L, -1));
        if ((size_t)i < written || rc->n == before)
            return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                  "%s returned the file '%s' twice", what,
                                  name);
        add_text(rc, i, text, len);
        lua_settop(L, r);
    }
    return 0;
}

int dsf_plugins_emit_run(dsf_plugins *p, const dsf_emit_run *run,
                         size_t sel, dsf_emitted **out, size_t *nout,
                         dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    run_call rc = {run, &p->emitters[sel], sel, {0, NULL}, NULL, NULL, 0};
    dsf_callscope_open(&rc.scope);
    lua_settop(L, 0);
    int rc_ = dsf_host_cpcall(p->host, push_run_args, &rc, 2, rc.e->what, d);
    if (!rc_) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, rc.e->ref);
        lua_insert(L, 1);
        rc_ = dsf_host_call(p->host, 2, 1, rc.e->what, d);
        if (rc_ == DSF_ESCRIPT)
            dsf_emit_blame(d, rc.e->what);
    }
    if (!rc_)
        rc_ = take_returned(L, &rc, rc.n, d);
    lua_settop(L, 0);
    dsf_callscope_close(&rc.scope);
    for (size_t i = 0; i < rc.n; i++) {
        if (!rc_) {
            *out = dsf_xrealloc(*out, (*nout + 1) * sizeof **out);
            dsf_emitted *x = &(*out)[(*nout)++];
            x->by = rc.e;
            x->file = rc.names[i];
            x->len = rc.texts[i].len;
            x->sha256[0] = '\0';
            if (run->hash)
                dsf_sha256_hex(x->sha256, dsf_buf_str(&rc.texts[i]),
                               x->len);
            x->text = NULL;
            if (run->dir) {
                x->text = dsf_buf_take(&rc.texts[i]);
                if (!x->text)
                    x->text = dsf_xstrdup(""); /* an empty file */
            }
        } else {
            free(rc.names[i]);
        }
        dsf_buf_free(&rc.texts[i]);
    }
    free(rc.names);
    free(rc.texts);
    return rc_;
}
