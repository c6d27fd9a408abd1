/* project.c -- see project.h: finding the project from a subdirectory. */
#define _XOPEN_SOURCE 700
#include "project.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/xalloc.h"
#include "fetch/lock.h"
#include "fetch/repo.h"

static bool is_project(const char *dir)
{
    char *a = dsf_path_join(dir, DSF_LOCK_FILE);
    char *b = dsf_path_join(dir, DSF_REPO_PROJECT_FILE);
    bool yes = dsf_is_file(a) || dsf_is_file(b);
    free(a);
    free(b);
    return yes;
}

char *dsf_project_find(void)
{
    char cwd[PATH_MAX], home[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    const char *h = getenv("HOME");
    bool have_home = h && *h && realpath(h, home);
    struct stat st;
    if (stat(cwd, &st) != 0)
        return NULL;
    dev_t dev = st.st_dev;
    char *dir = dsf_xstrdup(cwd);
    for (;;) {
        if (have_home && !strcmp(dir, home))
            break;
        if (is_project(dir))
            return dir;
        char *up = dsf_path_dirname(dir);
        if (!strcmp(up, dir) || stat(up, &st) != 0 || st.st_dev != dev) {
            free(up);
            break;
        }
        free(dir);
        dir = up;
    }
    free(dir);
    return NULL;
}

char *dsf_project_lock_path(const char *project_dir)
{
    if (project_dir)
        return dsf_path_join(project_dir, DSF_LOCK_FILE);
    const char *s = getenv("XDG_STATE_HOME");
    if (s && *s == '/')
        return dsf_xasprintf("%s/dsforge/%s", s, DSF_LOCK_FILE);
    const char *h = getenv("HOME");
    if (h && *h)
        return dsf_xasprintf("%s/.local/state/dsforge/%s", h, DSF_LOCK_FILE);
    return NULL;
}
