/* jsloc.c -- see jsloc.h. */
#include "doc/jsloc.h"

#include <stdlib.h>

#include "core/xalloc.h"
#include "doc/jpath.h"

dsf_jpos dsf_jsloc_locate(cJSON *doc, const dsf_jsrc *src, const char *path)
{
    dsf_jpos pos = {1, 1};
    dsf_jpath jp;
    char *err;
    if (!*path || dsf_jpath_parse(&jp, path, &err) != 0) {
        if (*path)
            free(err);
        dsf_jsrc_pos(src, doc, &pos);
        return pos;
    }
    /* The nodes along the path, as far as it exists (members found
    ** through src's index: a file's findings cost one lookup each, not a
    ** walk of their object); then the deepest one with a position. */
    const cJSON **along = dsf_xcalloc(jp.len + 1, sizeof *along);
    size_t n = 0;
    along[0] = doc;
    for (; n < jp.len; n++) {
        const cJSON *at = along[n], *next;
        const dsf_jstep *st = &jp.steps[n];
        if (st->key)
            next = dsf_jsrc_member(src, at, st->key);
        else
            next = cJSON_IsArray(at) ? cJSON_GetArrayItem(at, (int)st->index)
                                     : NULL;
        if (!next)
            break;
        along[n + 1] = next;
    }
    for (n++; n-- > 0;)
        if (dsf_jsrc_key_pos(src, along[n], &pos) ||
            dsf_jsrc_pos(src, along[n], &pos))
            break;
    free(along);
    dsf_jpath_free(&jp);
    return pos;
}

void dsf_jsloc_excerpt(dsf_diag *g, const dsf_jsrc *src)
{
    const char *line;
    size_t len;
    if (g->line > 0 && dsf_jsrc_line(src, g->line, &line, &len) && len < 300)
        dsf_diag_set_excerpt(g, line, len);
}
