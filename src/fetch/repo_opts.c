/* repo_opts.c -- the options, project, lock file and URL checks every
** repository command shares (repo_ctx.h). */
#include "repo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "fetch/cache.h"
#include "fetch/http.h"
#include "fetch/lock.h"
#include "fetch/project.h"
#include "fetch/repo_ctx.h"

/* ---- options ----------------------------------------------------------- */

static long env_long(const char *var, long def, long min, long max)
{
    const char *s = getenv(var);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || v < (double)min || v > (double)max)
        return def;
    return (long)v;
}

void dsf_repo_opts_init(dsf_repo_opts *o)
{
    memset(o, 0, sizeof *o);
    o->progress = true;
    o->connect_timeout_ms =
        env_long("DSFORGE_FETCH_CONNECT_TIMEOUT", 10, 1, 3600) * 1000;
    o->timeout_ms = env_long("DSFORGE_FETCH_TIMEOUT", 120, 1, 86400) * 1000;
    o->low_speed_secs = 20;
    if (o->low_speed_secs > o->timeout_ms / 1000)
        o->low_speed_secs = o->timeout_ms / 1000;
    o->max_bytes = (size_t)env_long("DSFORGE_FETCH_MAX_BYTES", 16L << 20, 1,
                                    1L << 30);
    o->check_interval = env_long("DSFORGE_REPO_CHECK_INTERVAL", 86400, 0,
                                 100L * 365 * 86400);
    const char *ci = getenv("CI");
    o->locked = ci && (!strcmp(ci, "true") || !strcmp(ci, "1"));
}

void dsf_repo_http_limits(dsf_http_limits *lim, const dsf_repo_opts *o)
{
    dsf_http_limits def = DSF_HTTP_LIMITS_DEFAULT;
    *lim = def;
    if (o->connect_timeout_ms > 0)
        lim->connect_timeout_ms = o->connect_timeout_ms;
    if (o->timeout_ms > 0)
        lim->timeout_ms = o->timeout_ms;
    if (o->low_speed_secs > 0)
        lim->low_speed_secs = o->low_speed_secs;
    if (o->max_bytes)
        lim->max_bytes = o->max_bytes;
    lim->allow_http = o->allow_http;
    lim->progress = o->progress;
}

char *dsf_repo_token_var(const char *name)
{
    char *v = dsf_xasprintf("DSFORGE_TOKEN_%s", name);
    for (char *s = v + 14; *s; s++)
        *s = isalnum((unsigned char)*s) ? (char)toupper((unsigned char)*s)
                                        : '_';
    return v;
}

/* The project of this run: o->project_dir, else the one found from the
** current directory (once per process), else NULL. */
const char *dsf_repo_project_dir(const dsf_repo_opts *o)
{
    return o->project_dir ? o->project_dir : dsf_project_root();
}

/* Loads the lock of this run (the project's, or the user's outside a
** project). */
int dsf_repo_load_lock(dsf_lock *lock, const dsf_repo_opts *o, dsf_diags *d)
{
    char *path = dsf_project_lock_path(dsf_repo_project_dir(o));
    if (!path) {
        memset(lock, 0, sizeof *lock);
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "no project here and no home for the user's "
                              "lock file: set XDG_STATE_HOME or HOME");
    }
    int rc = dsf_lock_load(lock, path, d);
    free(path);
    return rc;
}

/* Saves the lock, creating the user's state directory when needed. */
int dsf_repo_save_lock(dsf_lock *lock, dsf_diags *d)
{
    if (!lock->changed)
        return 0;
    char *dir = dsf_path_dirname(lock->path);
    int rc = dsf_is_dir(dir) ? 0 : dsf_mkdir_p(dir, NULL, d);
    free(dir);
    return rc ? rc : dsf_lock_save(lock, d);
}

/* ---- URLs -------------------------------------------------------------- */

/* The base URL (no trailing slash, no /index.json). Caller frees. */
char *dsf_repo_base_url(const char *url)
{
    size_t n = strlen(url);
    const char *suffix = "/index.json";
    size_t ls = strlen(suffix);
    if (n > ls && !strcmp(url + n - ls, suffix))
        n -= ls;
    while (n && url[n - 1] == '/')
        n--;
    return dsf_xstrndup(url, n);
}

int dsf_repo_check_url(const char *url, const dsf_repo_opts *o, dsf_diags *d)
{
    for (const char *s = url; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f || *s == '?' ||
            *s == '#' || *s == '\\')
            return dsf_diag_error(d, DSF_EUSAGE, NULL, 0, 0,
                                  "repository URL '%s' has a space, "
                                  "control character, '?', '#' or '\\'",
                                  url);
    const char *host = strstr(url, "://");
    if (host && memchr(host + 3, '@', strcspn(host + 3, "/"))) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "repository URL '%s' carries "
                                   "credentials", url);
        dsf_diag_set_hint(g, "put a bearer token in the environment "
                             "variable DSFORGE_TOKEN_<NAME> instead");
        return DSF_EUSAGE;
    }
    if (!dsf_http_url_allowed(url, o->allow_http)) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "repository URL '%s' is not allowed: "
                                   "https:// only (http:// to loopback "
                                   "addresses, or with --allow-http)", url);
        dsf_diag_set_rule(g, "repo-url");
        return DSF_EUSAGE;
    }
    return 0;
}

int dsf_repo_ctx_open(repo_ctx *c, const char *name, const char *url,
                      const char *const *keys, size_t n_keys,
                      const dsf_repo_opts *o, dsf_diags *d)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->url = url;
    c->o = o;
    c->keys = keys;
    c->n_keys = n_keys;
    char *var = dsf_repo_token_var(name);
    c->token = getenv(var);
    if (c->token && !*c->token)
        c->token = NULL;
    free(var);
    int rc = dsf_repo_load_lock(&c->lock, o, d);
    if (!rc)
        rc = dsf_cache_open(&c->cache, d);
    return rc;
}

void dsf_repo_ctx_close(repo_ctx *c)
{
    dsf_cache_close(&c->cache);
    dsf_lock_free(&c->lock);
}
