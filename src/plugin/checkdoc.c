/* checkdoc.c -- see checkdoc.h. */
#include "plugin/checkdoc.h"

#include <stdbool.h>

#include "core/error.h"
#include "doc/jsloc.h"
#include "plugin/targets.h"

void dsf_checkdoc_duplicates(const dsf_plugins *plugins, const char *file,
                             const dsf_jsrc *src, dsf_diags *out)
{
    size_t nd;
    const dsf_jdup *dups = dsf_jsrc_duplicates(src, &nd);
    const char *family = nd ? dsf_plugins_target_family(plugins, NULL)
                            : NULL;
    for (size_t i = 0; i < nd; i++) {
        dsf_diag *g = dsf_diag_add(out, DSF_ERROR, file, dups[i].again.line,
                                   dups[i].again.col,
                                   "duplicate key '%s' (first at line %d): "
                                   "%s%smost JSON readers silently keep "
                                   "only the last one",
                                   dups[i].path, dups[i].first.line,
                                   family ? family : "",
                                   family ? " rejects duplicate keys when "
                                            "it reads a file, and "
                                          : "");
        dsf_diag_set_rule(g, "duplicate-key");
        dsf_diag_set_path(g, dups[i].path);
        dsf_diag_set_hint(g, "remove one of the two keys");
        dsf_jsloc_excerpt(g, src);
    }
}

int dsf_checkdoc_rules(dsf_plugins *plugins, cJSON *doc,
                       const dsf_jsrc *src, const char *file,
                       const dsf_validate_opts *vo, dsf_diags *out)
{
    if (!cJSON_IsObject(doc)) {
        const char *family = dsf_plugins_target_family(plugins, vo->target);
        return dsf_diag_error(out, DSF_EINPUT, file, 1, 1,
                              "a %s%sconfig must be a JSON object",
                              family ? family : "", family ? " " : "");
    }
    dsf_findings f = DSF_FINDINGS_INIT;
    int rc = dsf_plugins_validate(plugins, doc, vo, &f, out);
    for (size_t i = 0; i < f.len; i++) {
        /* At the place the rule names in the text (ctx.report's `at`),
        ** else at the path's. */
        bool at = f.items[i].line > 0;
        dsf_jpos pos = {f.items[i].line, f.items[i].col};
        if (f.items[i].more) { /* a count: of the file, not of a place */
            dsf_diag *g = dsf_diag_add(out, f.items[i].severity, file, 0, 0,
                                       "%s", f.items[i].message);
            dsf_diag_set_rule(g, f.items[i].rule);
            g->last = true;
            continue;
        }
        if (!at)
            pos = dsf_jsloc_locate(doc, src, f.items[i].path);
        dsf_diag *g = dsf_diag_add(out, f.items[i].severity, file,
                                   pos.line, pos.col, "%s%s%s",
                                   f.items[i].path,
                                   f.items[i].path[0] ? ": " : "",
                                   f.items[i].message);
        dsf_diag_set_rule(g, f.items[i].rule);
        if (!at || f.items[i].path[0])
            dsf_diag_set_path(g, f.items[i].path);
        if (f.items[i].fix)
            dsf_diag_set_hint(g, "%s", f.items[i].fix);
        if (f.items[i].edits)
            dsf_diag_set_edits(g, f.items[i].edits);
        dsf_jsloc_excerpt(g, src);
    }
    dsf_findings_free(&f);
    return rc;
}
