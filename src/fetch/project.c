/* project.c -- see project.h: the lock file of a project, or the user's. */
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
