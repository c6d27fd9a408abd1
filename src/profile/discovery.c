/* discovery.c -- profiles on the search path: listing, finding by name,
** and names of remote repositories (REPO/PROFILE[@VERSION]). */
#include "profile/internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "lua/scriptfs.h"


bool dsf_profile_valid_name(const char *s)
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
        dsf_scriptfs_list_dir(&names, &nn, dirs->items[i].path);
        for (size_t k = 0; k < nn; k++) {
            if (!has_suffix(names[k], ".lua"))
                continue;
            char *stem = dsf_xstrndup(names[k], strlen(names[k]) - 4);
            if (!dsf_profile_valid_name(stem)) {
                free(stem);
                continue;
            }
            char *path = dsf_path_join(dirs->items[i].path, names[k]);
            /* A lower copy is shadowed; a byte-identical one (./profiles
            ** in dsforge's own checkout) is the same profile: not listed
            ** twice. */
            bool shadowed = false, same = false;
            for (size_t j = 0; j < *n && !shadowed; j++)
                if (!strcmp((*out)[j].name, stem)) {
                    shadowed = true;
                    same = dsf_scriptfs_same((*out)[j].path, path);
                }
            if (same) {
                free(stem);
                free(path);
                continue;
            }
            dsf_xgrow((void **)out, &cap, *n + 1, sizeof **out);
            dsf_profile_entry *e = &(*out)[(*n)++];
            e->name = stem;
            e->path = path;
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
int dsf_profile_find(char **path_out, const char **origin_out,
                        const dsf_dirs *dirs, const char *prefer_dir,
                        const char *prefer_origin, const char *name,
                        dsf_diags *d)
{
    *path_out = NULL;
    if (!dsf_profile_valid_name(name))
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "invalid profile name '%s' (letters, digits, "
                              "'_', '-' and '.' only)", name);
    char *file = dsf_xasprintf("%s.lua", name);
    if (prefer_dir) {
        char *p = dsf_path_join(prefer_dir, file);
        if (dsf_scriptfs_is_file(p)) {
            free(file);
            *path_out = p;
            *origin_out = prefer_origin;
            return 0;
        }
        free(p);
    }
    for (size_t i = 0; i < dirs->len; i++) {
        char *p = dsf_path_join(dirs->items[i].path, file);
        if (dsf_scriptfs_is_file(p)) {
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

/* NAME is a local profile; REPO/PROFILE[@VERSION] one of a repository:
** then *name_out is PROFILE, *dir_out the repository's profiles directory
** and *origin_out "repo REPO". */
int dsf_profile_resolve_remote(char **name_out, char **dir_out,
                               char **release_out,
                               char **origin_out, const dsf_profile_ctx *ctx,
                               const char *name, dsf_diags *d)
{
    *dir_out = *origin_out = *release_out = NULL;
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
    else if (!dsf_profile_valid_name(repo) || !dsf_profile_valid_name(prof))
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
        *release_out = dsf_repo_release_of(dir);
        *name_out = prof;
        prof = NULL;
    }
    free(dir);
    free(repo);
    free(prof);
    free(qualified);
    return rc;
}

/* A fresh sandboxed host whose require() finds the plugin modules; mods
** (DSF_MAX_MODULE_DIRS slots) is filled here and must outlive the host. */
int dsf_profile_open_host(dsf_host **h, const dsf_profile_ctx *ctx,
                          const char **mods, dsf_diags *d)
{
    size_t n = ctx->plugin_dirs->len < DSF_MAX_MODULE_DIRS ? ctx->plugin_dirs->len
                                                       : DSF_MAX_MODULE_DIRS;
    for (size_t i = 0; i < n; i++)
        mods[i] = ctx->plugin_dirs->items[i].path;
    dsf_host_config hc = {ctx->limits, mods, n, ctx->sources, ctx->warnings};
    return dsf_host_new(h, &hc, d);
}
