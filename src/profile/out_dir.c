/* out_dir.c -- see out_dir.h. */
#define _DEFAULT_SOURCE /* flock(2) on the output directory */
#include "profile/out_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "json/jsonc.h"
#include "profile/manifest.h"

int dsf_out_lock_dir(const char *dir, int *fd, dsf_diags *d)
{
    *fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd < 0)
        return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                              "cannot open the output directory: %s",
                              strerror(errno));
    while (flock(*fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            int e = errno;
            close(*fd);
            *fd = -1;
            return dsf_diag_error(d, DSF_EINPUT, dir, 0, 0,
                                  "cannot lock the output directory: %s",
                                  strerror(e));
        }
    return 0;
}

int dsf_out_read_manifest(const char *path, cJSON **old, dsf_diags *d)
{
    *old = NULL;
    if (!dsf_is_file(path))
        return 0;
    char *text;
    size_t len;
    int rc = dsf_read_file(&text, &len, path, DSF_JSON_MAX_FILE, d);
    if (rc)
        return rc;
    rc = dsf_manifest_parse(old, path, text, len, d);
    free(text);
    return rc;
}

char *dsf_out_last_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    if (b == n || (n - b == 1 && path[b] == '.') ||
        (n - b == 2 && path[b] == '.' && path[b + 1] == '.'))
        return NULL;
    return dsf_xstrndup(path + b, n - b);
}

char *dsf_out_parent(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *norm = dsf_xstrndup(path, n);
    char *up = dsf_path_dirname(norm);
    free(norm);
    return up;
}

bool dsf_out_same_files(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fa ? fopen(b, "rb") : NULL;
    bool same = fa && fb;
    char x[8192], y[8192];
    while (same) {
        size_t na = fread(x, 1, sizeof x, fa), nb = fread(y, 1, sizeof y, fb);
        same = na == nb && !memcmp(x, y, na);
        if (na < sizeof x)
            break;
    }
    same = same && !ferror(fa) && !ferror(fb);
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}
