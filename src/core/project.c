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

static bool is_project(const char *dir)
{
    char *a = dsf_path_join(dir, DSF_PROJECT_LOCK_FILE);
    char *b = dsf_path_join(dir, DSF_PROJECT_REPOS_FILE);
    bool yes = dsf_is_file(a) || dsf_is_file(b);
    free(a);
    free(b);
    return yes;
}

/* The walk up from the current directory; caller frees. */
static char *find(void)
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

const char *dsf_project_root(void)
{
    static char *root;
    static bool looked;
    if (!looked) {
        root = find();
        looked = true;
    }
    return root;
}
