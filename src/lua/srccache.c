/* srccache.c -- see srccache.h. Runs read a handful of files: a list is
** enough. */
#include "srccache.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "lua/builtin.h"
#include "lua/scriptfs.h"

struct dsf_srccache {
    dsf_source **items;
    size_t len, cap;
};

dsf_srccache *dsf_srccache_new(void)
{
    return dsf_xcalloc(1, sizeof(dsf_srccache));
}

int dsf_srccache_get(dsf_srccache *c, const char *path,
                     const dsf_source **out, dsf_diags *d)
{
    for (size_t i = 0; i < c->len; i++) {
        if (!strcmp(c->items[i]->path, path)) {
            *out = c->items[i];
            return 0;
        }
    }
    dsf_source *s = dsf_xcalloc(1, sizeof *s);
    const dsf_builtin_chunk *embedded = dsf_scriptfs_embedded(path);
    if (embedded) {
        /* Compiled into the executable: borrowed, never read from disk. */
        s->text = (const char *)embedded->src;
        s->len = embedded->src_len;
        s->builtin = embedded;
        s->builtin_checked = 1;
        s->borrowed = 1;
    } else if (dsf_scriptfs_is_builtin_path(path)) {
        free(s);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "no such built-in file");
    } else {
        char *text;
        size_t len;
        int rc = dsf_read_file(&text, &len, path, DSF_SCRIPT_MAX_BYTES, d);
        if (rc) {
            free(s);
            return rc;
        }
        s->text = text;
        s->len = len;
    }
    s->path = dsf_xstrdup(path);
    dsf_xgrow((void **)&c->items, &c->cap, c->len + 1, sizeof *c->items);
    c->items[c->len++] = s;
    *out = s;
    return 0;
}

void dsf_source_set_bytecode(const dsf_source *s, const char *bc,
                             size_t len)
{
    dsf_source *m = (dsf_source *)s; /* a cache entry, filled once */
    free(m->bytecode);
    m->bytecode = dsf_xmalloc(len ? len : 1);
    memcpy(m->bytecode, bc, len);
    m->bytecode_len = len;
}

const char *dsf_source_sha256(const dsf_source *s)
{
    dsf_source *m = (dsf_source *)s; /* the digest is a lazily filled cache */
    if (m->sha256[0])
        return m->sha256;
    if (!m->builtin_checked) {
        m->builtin = dsf_builtin_find(m->path, m->text, m->len);
        m->builtin_checked = 1;
    }
    /* Text equal to a built-in's: the digest the build computed. */
    const dsf_builtin_chunk *b = m->builtin;
    if (b)
        memcpy(m->sha256, b->sha256, sizeof m->sha256);
    else
        dsf_sha256_hex(m->sha256, m->text, m->len);
    return m->sha256;
}

void dsf_srccache_free(dsf_srccache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->len; i++) {
        free((char *)c->items[i]->path);
        if (!c->items[i]->borrowed)
            free((char *)c->items[i]->text);
        free(c->items[i]->bytecode);
        free(c->items[i]);
    }
    free(c->items);
    free(c);
}
