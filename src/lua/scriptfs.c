/* scriptfs.c -- see scriptfs.h. The embedded table holds a few dozen
** files: a linear scan is cheaper than building anything. */
#include "scriptfs.h"

#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/xalloc.h"

/* Files larger than a script may be are never "the same". */
#define DSF_SCRIPTFS_MAX_COMPARE (4u << 20)

/* The part of path below DSF_BUILTIN_ROOT ("" for the root itself), or
** NULL when path is not under it. */
static const char *embedded_rel(const char *path)
{
    size_t n = strlen(DSF_BUILTIN_ROOT);
    if (strncmp(path, DSF_BUILTIN_ROOT, n) != 0)
        return NULL;
    if (path[n] == '\0')
        return path + n;
    if (path[n] != '/')
        return NULL;
    while (path[n] == '/')
        n++;
    return path + n;
}

bool dsf_scriptfs_is_builtin_path(const char *path)
{
    return embedded_rel(path) != NULL;
}

const dsf_builtin_chunk *dsf_scriptfs_embedded(const char *path)
{
    const char *rel = embedded_rel(path);
    if (!rel)
        return NULL;
    /* The table is in byte order of the names (dsf_precompile checks). */
    static size_t n;
    if (!n)
        while (dsf_builtin_chunks[n].rel)
            n++;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(dsf_builtin_chunks[mid].rel, rel);
        if (!c)
            return &dsf_builtin_chunks[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The rest of a chunk's name below directory rel ("c" for "a/b/c" below
** "a/b"; everything below the root ""), or NULL when it is not below. */
static const char *below(const char *chunk_rel, const char *rel)
{
    size_t m = strlen(rel);
    if (m == 0)
        return chunk_rel;
    if (strncmp(chunk_rel, rel, m) != 0 || chunk_rel[m] != '/')
        return NULL;
    return chunk_rel + m + 1;
}

bool dsf_scriptfs_is_file(const char *path)
{
    if (embedded_rel(path))
        return dsf_scriptfs_embedded(path) != NULL;
    return dsf_is_file(path);
}

bool dsf_scriptfs_is_dir(const char *path)
{
    const char *rel = embedded_rel(path);
    if (!rel)
        return dsf_is_dir(path);
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++)
        if (below(c->rel, rel))
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void dsf_scriptfs_list_dir(char ***names, size_t *n, const char *dir)
{
    const char *rel = embedded_rel(dir);
    if (!rel) {
        dsf_list_dir(names, n, dir);
        return;
    }
    *names = NULL;
    *n = 0;
    size_t cap = 0;
    for (const dsf_builtin_chunk *c = dsf_builtin_chunks; c->rel; c++) {
        const char *entry = below(c->rel, rel);
        if (!entry)
            continue;
        size_t len = strcspn(entry, "/");
        bool seen = false;
        for (size_t i = 0; i < *n && !seen; i++)
            seen = strlen((*names)[i]) == len &&
                   !strncmp((*names)[i], entry, len);
        if (seen)
            continue;
        dsf_xgrow((void **)names, &cap, *n + 1, sizeof **names);
        (*names)[(*n)++] = dsf_xstrndup(entry, len);
    }
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
}

bool dsf_scriptfs_same(const char *a, const char *b)
{
    const dsf_builtin_chunk *ea = dsf_scriptfs_embedded(a);
    const dsf_builtin_chunk *eb = dsf_scriptfs_embedded(b);
    if (ea && eb)
        return ea == eb;
    if (ea)
        return dsf_file_equals(b, (const char *)ea->src, ea->src_len);
    if (eb)
        return dsf_file_equals(a, (const char *)eb->src, eb->src_len);
    char *text;
    size_t len;
    dsf_diags ignore = DSF_DIAGS_INIT;
    bool same = dsf_read_file(&text, &len, a, DSF_SCRIPTFS_MAX_COMPARE,
                              &ignore) == 0;
    dsf_diags_free(&ignore);
    if (same) {
        same = dsf_file_equals(b, text, len);
        free(text);
    }
    return same;
}
