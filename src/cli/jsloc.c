/* jsloc.c -- see jsloc.h. */
#include "cli/jsloc.h"

#include <stdlib.h>

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
    for (size_t n = jp.len + 1; n-- > 0;) {
        dsf_jpath prefix = {jp.steps, n};
        cJSON *node = dsf_jpath_get(doc, &prefix);
        if (node && (dsf_jsrc_key_pos(src, node, &pos) ||
                     dsf_jsrc_pos(src, node, &pos)))
            break;
    }
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
