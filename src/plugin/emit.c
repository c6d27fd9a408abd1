/* emit.c -- the emitters plugins declare (see emit.h): reading the
** declarations and running them on a finished variant. */
#include "plugin/emit.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "json/jsonout.h"
#include "lua/conv.h"
#include "plugin/decl.h"
#include "plugin/plugin_internal.h"

#define MAX_EMITTER_FILES 32

static const char *const emitter_fields[] = {
    "name", "summary", "file", "files", "scope", "row", "emit", NULL};

static bool valid_emitter_name(const char *s)
{
    if (!*s || *s == '-')
        return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '-'))
            return false;
    return true;
}

/* A file name pattern: letters, digits, '.', '_', '-' and the
** placeholders {profile} and {variant}, both required (one directory
** holds every variant of several profiles); no leading '.'. */
static const char *pattern_problem(const char *s)
{
    bool has_profile = false, has_variant = false;
    if (*s == '.' || !*s)
        return "must not be empty or start with '.'";
    for (const char *c = s; *c; c++) {
        if (*c == '{') {
            if (!strncmp(c, "{profile}", 9)) {
                has_profile = true;
                c += 8;
            } else if (!strncmp(c, "{variant}", 9)) {
                has_variant = true;
                c += 8;
            } else {
                return "knows only the placeholders {profile} and "
                       "{variant}";
            }
        } else if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
                     *c == '-')) {
            return "may hold only letters, digits, '.', '_', '-' and the "
                   "placeholders {profile} and {variant}";
        }
    }
    if (!has_profile || !has_variant)
        return "needs both {profile} and {variant} (one directory holds "
               "every variant of several profiles)";
    if (!strcmp(s, "{profile}-{variant}.json"))
        return "is the name of the variant's JSON file";
    return NULL;
}

char *dsf_emit_file_name(const char *pattern, const char *profile,
                         const char *variant)
{
    size_t n = 1;
    for (const char *c = pattern; *c; c++) {
        if (!strncmp(c, "{profile}", 9)) {
            n += strlen(profile);
            c += 8;
        } else if (!strncmp(c, "{variant}", 9)) {
            n += strlen(variant);
            c += 8;
        } else {
            n++;
        }
    }
    char *out = dsf_xmalloc(n), *o = out;
    for (const char *c = pattern; *c; c++) {
        const char *sub = NULL;
        if (!strncmp(c, "{profile}", 9))
            sub = profile;
        else if (!strncmp(c, "{variant}", 9))
            sub = variant;
        if (sub) {
            size_t k = strlen(sub);
            memcpy(o, sub, k);
            o += k;
            c += 8;
        } else {
            *o++ = *c;
        }
    }
    *o = '\0';
    return out;
}

static int emitter_error(dsf_diags *d, const char *file, const char *plugin,
                         const char *name, lua_Integer i, const char *msg,
                         const char *detail)
{
    if (name)
        dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                     "plugin '%s': emitter '%s': %s%s", plugin, name, msg,
                     detail ? detail : "");
    else
        dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                     "plugin '%s': emitter #%lld: %s%s", plugin,
                     (long long)i, msg, detail ? detail : "");
    return DSF_EINPUT;
}

/* Reads the file patterns of the emitter at r into *files and *n. */
static int read_files(lua_State *L, int r, char ***files, size_t *n,
                      const char *plugin, const char *name,
                      const char *file, dsf_diags *d)
{
    *files = NULL;
    *n = 0;
    lua_pushliteral(L, "file");
    int ft = lua_rawget(L, r);
    lua_pushliteral(L, "files");
    int fst = lua_rawget(L, r);
    int rc = 0;
    if ((ft == LUA_TNIL) == (fst == LUA_TNIL) ||
        (ft != LUA_TNIL && ft != LUA_TSTRING) ||
        (fst != LUA_TNIL && fst != LUA_TTABLE)) {
        rc = emitter_error(d, file, plugin, name, 0,
                           "needs either 'file' (a file name pattern) or "
                           "'files' (a list of them)", NULL);
    } else if (ft == LUA_TSTRING) {
        *files = dsf_xcalloc(1, sizeof **files);
        (*files)[(*n)++] = dsf_xstrdup(lua_tostring(L, -2));
    } else {
        lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
        if (len < 1 || len > MAX_EMITTER_FILES)
            rc = emitter_error(d, file, plugin, name, 0,
                               "'files' must list 1 to 32 patterns", NULL);
        for (lua_Integer i = 1; !rc && i <= len; i++) {
            if (lua_rawgeti(L, -1, i) != LUA_TSTRING)
                rc = emitter_error(d, file, plugin, name, 0,
                                   "'files' must be a list of strings",
                                   NULL);
            else {
                *files = dsf_xrealloc(*files, (*n + 1) * sizeof **files);
                (*files)[(*n)++] = dsf_xstrdup(lua_tostring(L, -1));
            }
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 2);
    for (size_t i = 0; !rc && i < *n; i++) {
        const char *why = pattern_problem((*files)[i]);
        if (why) {
            dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                         "plugin '%s': emitter '%s': file name pattern "
                         "'%s' %s", plugin, name, (*files)[i], why);
            rc = DSF_EINPUT;
        }
    }
    if (rc) {
        dsf_free_strv(*files, *n);
        *files = NULL;
        *n = 0;
    }
    return rc;
}

/* The emitter's scope: "variant" (the default: files next to each
** variant's JSON, named by its patterns) or "run" (one set of files per
** run, named by emit; no patterns). A row function only for "run". */
static int read_scope(lua_State *L, int r, bool *per_run, const char *plugin,
                      const char *name, const char *file, dsf_diags *d)
{
    lua_pushliteral(L, "scope");
    int t = lua_rawget(L, r);
    const char *s = t == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    *per_run = s && !strcmp(s, "run");
    bool ok = t == LUA_TNIL || (s && (*per_run || !strcmp(s, "variant")));
    lua_pop(L, 1);
    if (!ok)
        return emitter_error(d, file, plugin, name, 0,
                             "'scope' must be \"variant\" (the default) or "
                             "\"run\"", NULL);
    if (*per_run) {
        lua_pushliteral(L, "file");
        int ft = lua_rawget(L, r);
        lua_pushliteral(L, "files");
        int fst = lua_rawget(L, r);
        lua_pop(L, 2);
        if (ft != LUA_TNIL || fst != LUA_TNIL)
            return emitter_error(d, file, plugin, name, 0,
                                 "a run emitter names its files in what "
                                 "emit returns: no 'file' or 'files'",
                                 NULL);
    } else {
        lua_pushliteral(L, "row");
        int rt = lua_rawget(L, r);
        lua_pop(L, 1);
        if (rt != LUA_TNIL)
            return emitter_error(d, file, plugin, name, 0,
                                 "'row' is for a run emitter (scope = "
                                 "\"run\")", NULL);
    }
    return 0;
}

/* Checks emitter i (the table at r) and appends it. */
static int read_emitter(dsf_plugins *p, lua_State *L, int r, lua_Integer i,
                        const char *plugin, const char *file, dsf_diags *d)
{
    if (lua_type(L, r) != LUA_TTABLE)
        return emitter_error(d, file, plugin, NULL, i, "must be a table",
                             NULL);
    lua_pushnil(L);
    while (lua_next(L, r)) {
        lua_pop(L, 1);
        if (!dsf_plugin_known_key(L, -1, emitter_fields)) {
            lua_pop(L, 1);
            return emitter_error(d, file, plugin, NULL, i,
                                 "unknown field (known: name, summary, "
                                 "file, files, scope, row, emit)", NULL);
        }
    }
    const char *name = dsf_plugin_raw_string(L, r, "name");
    const char *summary = dsf_plugin_raw_string(L, r, "summary");
    if (!name || !valid_emitter_name(name) || !strcmp(name, "none"))
        return emitter_error(d, file, plugin, NULL, i,
                             "needs a 'name' of lower-case letters, digits "
                             "and '-' (not \"none\")", NULL);
    if (!summary)
        return emitter_error(d, file, plugin, name, i,
                             "needs a one-line 'summary'", NULL);
    for (size_t k = 0; k < p->nemitters; k++)
        if (!strcmp(p->emitters[k].name, name)) {
            dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                         "plugin '%s': emitter '%s' is already declared by "
                         "plugin '%s'", plugin, name, p->emitters[k].plugin);
            return DSF_EINPUT;
        }
    bool per_run;
    int rc = read_scope(L, r, &per_run, plugin, name, file, d);
    if (rc)
        return rc;
    char **files = NULL;
    size_t nfiles = 0;
    if (!per_run)
        rc = read_files(L, r, &files, &nfiles, plugin, name, file, d);
    if (rc)
        return rc;
    for (size_t k = 0; !rc && k < p->nemitters; k++)
        for (size_t a = 0; !rc && a < p->emitters[k].nfiles; a++)
            for (size_t b = 0; !rc && b < nfiles; b++)
                if (!strcmp(p->emitters[k].files[a], files[b])) {
                    dsf_diag_add(d, DSF_ERROR, file, 0, 0,
                                 "plugin '%s': emitter '%s': file name "
                                 "pattern '%s' is already used by emitter "
                                 "'%s' (plugin '%s')", plugin, name,
                                 files[b], p->emitters[k].name,
                                 p->emitters[k].plugin);
                    rc = DSF_EINPUT;
                }
    for (size_t a = 0; !rc && a < nfiles; a++)
        for (size_t b = a + 1; !rc && b < nfiles; b++)
            if (!strcmp(files[a], files[b]))
                rc = emitter_error(d, file, plugin, name, i,
                                   "lists a file name pattern twice: ",
                                   files[a]);
    int row_ref = LUA_NOREF;
    if (!rc && per_run) {
        lua_pushliteral(L, "row");
        int t = lua_rawget(L, r);
        if (t == LUA_TFUNCTION)
            row_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        else {
            lua_pop(L, 1);
            if (t != LUA_TNIL)
                rc = emitter_error(d, file, plugin, name, i,
                                   "'row' must be a function (v, ctx -> "
                                   "what emit(run, ctx) reads of the "
                                   "variant)", NULL);
        }
    }
    if (!rc) {
        lua_pushliteral(L, "emit");
        if (lua_rawget(L, r) != LUA_TFUNCTION) {
            lua_pop(L, 1);
            rc = emitter_error(d, file, plugin, name, i,
                               per_run ? "needs an 'emit' function (run, "
                                         "ctx -> {{file =, text =}, ...})"
                                       : "needs an 'emit' function (v, "
                                         "ctx -> text)",
                               NULL);
        }
    }
    if (rc) {
        luaL_unref(L, LUA_REGISTRYINDEX, row_ref);
        dsf_free_strv(files, nfiles);
        return rc;
    }
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    p->emitters = dsf_xrealloc(p->emitters,
                               (p->nemitters + 1) * sizeof *p->emitters);
    dsf_emitter *e = &p->emitters[p->nemitters++];
    e->plugin = dsf_xstrdup(plugin);
    e->name = dsf_xstrdup(name);
    e->summary = dsf_xstrdup(summary);
    e->files = files;
    e->nfiles = nfiles;
    e->per_run = per_run;
    e->ref = ref;
    e->row_ref = row_ref;
    e->what = dsf_xconcat("emitter ", name, " (plugin ", plugin, ")", NULL);
    return 0;
}

int dsf_plugin_read_emitters(dsf_plugins *p, lua_State *L, int t,
                             const char *plugin, const char *file,
                             dsf_diags *d)
{
    return dsf_plugin_read_list(p, L, t, "emitters", read_emitter, plugin,
                                file, d);
}

void dsf_plugin_free_emitters(dsf_plugins *p)
{
    for (size_t i = 0; i < p->nemitters; i++) {
        free(p->emitters[i].plugin);
        free(p->emitters[i].name);
        free(p->emitters[i].summary);
        dsf_free_strv(p->emitters[i].files, p->emitters[i].nfiles);
        free(p->emitters[i].what);
    }
    free(p->emitters);
    p->emitters = NULL;
    p->nemitters = 0;
}

const dsf_emitter *dsf_plugins_emitters(const dsf_plugins *p, size_t *n)
{
    *n = p->nemitters;
    return p->emitters;
}

/* ------------------------------------------------------------------ */
/* Running. */

void dsf_emit_push_common_ctx(lua_State *L, int t, const cJSON *options)
{
    lua_pushcfunction(L, dsf_plugin_lua_json);
    lua_setfield(L, t, "json");
    if (options)
        dsf_json_push(L, options);
    else
        lua_newtable(L);
    lua_setfield(L, t, "options");
}

/* (view) -> v = {profile, name, tier, file, dir, config, params,
** summary, sha256, text},
** ctx = {target, params, train_cmd, cache, json, options} (protected:
** allocates). */
static int push_args(lua_State *L)
{
    const dsf_emit_view *view = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_createtable(L, 0, 7);
    lua_pushstring(L, view->profile);
    lua_setfield(L, 1, "profile");
    lua_pushstring(L, view->name);
    lua_setfield(L, 1, "name");
    lua_pushstring(L, view->tier);
    lua_setfield(L, 1, "tier");
    lua_pushstring(L, view->file);
    lua_setfield(L, 1, "file");
    if (view->dir) {
        lua_pushstring(L, view->dir);
        lua_setfield(L, 1, "dir");
    }
    dsf_json_push(L, view->doc);
    lua_setfield(L, 1, "config");
    if (view->params) {
        dsf_json_push(L, view->params);
        lua_setfield(L, 1, "params");
    }
    if (view->summary) {
        dsf_json_push(L, view->summary);
        lua_setfield(L, 1, "summary");
    }
    if (view->sha256) {
        lua_pushstring(L, view->sha256);
        lua_setfield(L, 1, "sha256");
    }
    if (view->text) {
        lua_pushlstring(L, view->text, view->text_len);
        lua_setfield(L, 1, "text");
    }
    lua_createtable(L, 0, 5);
    lua_pushstring(L, view->target);
    lua_setfield(L, 2, "target");
    lua_getfield(L, 1, "params");
    lua_setfield(L, 2, "params");
    if (view->train_cmd) {
        lua_pushstring(L, view->train_cmd);
        lua_setfield(L, 2, "train_cmd");
    }
    lua_newtable(L);
    lua_setfield(L, 2, "cache");
    dsf_emit_push_common_ctx(L, 2, view->options);
    return 2;
}

void dsf_emit_blame(dsf_diags *d, const char *what)
{
    dsf_diag *g = dsf_diags_last(d);
    if (g && !g->hint)
        dsf_diag_set_hint(g, "raised by %s: a bug in the plugin, not in "
                             "the config", what);
}

/* The texts e returned (on top of the stack), one per file. */
static int take_result(lua_State *L, const dsf_emitter *e,
                       const dsf_emit_view *v, dsf_emitted **out,
                       size_t *nout, dsf_diags *d)
{
    int r = lua_gettop(L);
    bool list = lua_istable(L, r);
    if (!list && !(lua_type(L, r) == LUA_TSTRING && e->nfiles == 1))
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "%s must return %s, not a %s", e->what,
                              e->nfiles == 1 ? "a string"
                                             : "a list of strings, one "
                                               "per declared file",
                              luaL_typename(L, r));
    if (list && lua_rawlen(L, r) != e->nfiles)
        return dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                              "%s returned %zu texts for %zu declared "
                              "file%s", e->what, (size_t)lua_rawlen(L, r),
                              e->nfiles, e->nfiles == 1 ? "" : "s");
    for (size_t k = 0; k < e->nfiles; k++) {
        if (list && lua_rawgeti(L, r, (lua_Integer)k + 1) != LUA_TSTRING) {
            int rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                                    "%s: text #%zu must be a string, not a "
                                    "%s", e->what, k + 1,
                                    luaL_typename(L, -1));
            lua_pop(L, 1);
            return rc;
        }
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        *out = dsf_xrealloc(*out, (*nout + 1) * sizeof **out);
        dsf_emitted *x = &(*out)[(*nout)++];
        x->by = e;
        x->file = dsf_emit_file_name(e->files[k], v->profile, v->name);
        x->text = NULL;
        if (v->dir) {
            x->text = dsf_xmalloc(len + 1);
            memcpy(x->text, s, len);
            x->text[len] = '\0';
        }
        x->len = len;
        x->sha256[0] = '\0';
        if (v->hash)
            dsf_sha256_hex(x->sha256, s, len);
        if (list)
            lua_pop(L, 1);
    }
    return 0;
}

/* The value a run emitter's row function returned (on top of the stack)
** as compact JSON text in *row. */
static int take_row(lua_State *L, const dsf_emitter *e, char **row,
                    dsf_diags *d)
{
    cJSON *j;
    char *err;
    int rc = dsf_lua_to_json(&j, &err, L, -1, 0);
    if (rc) {
        rc = dsf_diag_error(d, DSF_ESCRIPT, NULL, 0, 0,
                            "%s: row returned a value that is not JSON: %s",
                            e->what, err);
        free(err);
        return rc;
    }
    *row = dsf_json_print(j, false);
    cJSON_Delete(j);
    return 0;
}

int dsf_plugins_emit(dsf_plugins *p, const dsf_emit_view *v,
                     const size_t *sel, size_t nsel, dsf_emitted **out,
                     size_t *nout, char **rows, dsf_diags *d)
{
    lua_State *L = dsf_host_state(p->host);
    const char *pushed_for = NULL; /* the plugin whose v and ctx are at 1, 2 */
    size_t first = *nout;
    int rc = 0;
    for (size_t i = 0; i < nsel && !rc; i++) {
        const dsf_emitter *e = &p->emitters[sel[i]];
        if (e->per_run && e->row_ref == LUA_NOREF)
            continue; /* nothing per variant */
        /* One v and ctx (ctx.cache) per plugin and variant. */
        if (!pushed_for || strcmp(pushed_for, e->plugin) != 0) {
            lua_settop(L, 0);
            rc = dsf_host_cpcall(p->host, push_args, (void *)v, 2, e->what,
                                 d);
            if (rc)
                break;
            pushed_for = e->plugin;
        }
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->per_run ? e->row_ref : e->ref);
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        rc = dsf_host_call(p->host, 2, 1, e->what, d);
        if (rc == DSF_ESCRIPT)
            dsf_emit_blame(d, e->what);
        if (!rc && e->per_run)
            rc = take_row(L, e, &rows[i], d);
        else if (!rc)
            rc = take_result(L, e, v, out, nout, d);
        lua_settop(L, 2);
    }
    lua_settop(L, 0);
    if (rc) {
        for (size_t i = first; i < *nout; i++)
            dsf_emitted_free(&(*out)[i]);
        *nout = first;
        for (size_t i = 0; rows && i < nsel; i++) {
            free(rows[i]);
            rows[i] = NULL;
        }
    }
    return rc;
}

void dsf_emitted_free(dsf_emitted *e)
{
    free(e->file);
    free(e->text);
}
