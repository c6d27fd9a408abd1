/* paths.c -- see paths.h. */
#include "paths.h"

#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/project.h"
#include "core/xalloc.h"

void dsf_dirs_add(dsf_dirs *dirs, const char *path, const char *origin)
{
    for (size_t i = 0; i < dirs->len; i++)
        if (!strcmp(dirs->items[i].path, path))
            return;
    dsf_xgrow((void **)&dirs->items, &dirs->cap, dirs->len + 1,
              sizeof *dirs->items);
    dsf_dir *d = &dirs->items[dirs->len++];
    d->path = dsf_xstrdup(path);
    d->origin = dsf_xstrdup(origin);
    d->from_repo = d->may_override = false;
}

void dsf_dirs_add_dir(dsf_dirs *dirs, const dsf_dir *dir)
{
    size_t at = dirs->len;
    dsf_dirs_add(dirs, dir->path, dir->origin);
    if (dirs->len > at) {
        dirs->items[at].from_repo = dir->from_repo;
        dirs->items[at].may_override = dir->may_override;
    }
}

static void add_if_dir(dsf_dirs *dirs, const char *path, const char *origin)
{
    if (path && *path && dsf_is_dir(path))
        dsf_dirs_add(dirs, path, origin);
}

static char *home_dir(const char *xdg_var, const char *fallback)
{
    const char *x = getenv(xdg_var);
    if (x && x[0] == '/')
        return dsf_path_join(x, "dsforge");
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    return dsf_xasprintf("%s/%s/dsforge", home, fallback);
}

char *dsf_config_home(void) { return home_dir("XDG_CONFIG_HOME", ".config"); }
char *dsf_cache_home(void) { return home_dir("XDG_CACHE_HOME", ".cache"); }

/* $DSFORGE_DATADIR when set and not empty, else NULL. */
static const char *datadir_override(void)
{
    const char *over = getenv("DSFORGE_DATADIR");
    return over && *over ? over : NULL;
}

char *dsf_builtin_dir(const char *kind)
{
    const char *over = datadir_override();
    return dsf_path_join(over ? over : DSF_BUILTIN_ROOT, kind);
}

void dsf_dirs_build(dsf_dirs *out, const char *kind,
                    const char *const *explicit_dirs, size_t n_explicit,
                    const char *option_name, const char *env_var)
{
    for (size_t i = 0; i < n_explicit; i++)
        add_if_dir(out, explicit_dirs[i], option_name);
    const char *env = getenv(env_var);
    if (env && *env) {
        char *copy = dsf_xstrdup(env);
        for (char *s = copy, *next; s; s = next) {
            next = strchr(s, ':');
            if (next)
                *next++ = '\0';
            add_if_dir(out, s, env_var);
        }
        free(copy);
    }
    /* the project's, from any subdirectory of it; outside one, here */
    const char *root = dsf_project_root();
    char *own = root ? dsf_path_join(root, kind) : NULL;
    add_if_dir(out, own ? own : kind, "project");
    free(own);
    char *cfg = dsf_config_home();
    if (cfg) {
        char *user = dsf_path_join(cfg, kind);
        add_if_dir(out, user, "user");
        free(user);
        free(cfg);
    }
    char *builtin = dsf_builtin_dir(kind);
    if (datadir_override())
        add_if_dir(out, builtin, "built-in");
    else
        dsf_dirs_add(out, builtin, "built-in"); /* always there */
    free(builtin);
}

void dsf_dirs_free(dsf_dirs *dirs)
{
    for (size_t i = 0; i < dirs->len; i++) {
        free(dirs->items[i].path);
        free(dirs->items[i].origin);
    }
    free(dirs->items);
    dirs->items = NULL;
    dirs->len = dirs->cap = 0;
}
