/* override.c -- reading an override file (-f FILE, --matrix-file) into a
** layer; below gen.c and sweep.c, which both use it. */
#include "profile/gen_run.h"

#include <stdlib.h>

#include "core/error.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/xalloc.h"
#include "doc/doc.h"

int dsf_gen_load_override(override_file *f, const char *path,
                          const char *label, dsf_diags *d)
{
    f->path = path;
    f->label = dsf_xstrdup(label);
    f->layer.kind = "file";
    f->layer.label = f->label;
    f->layer.file = f->path;
    int rc = dsf_json_load_file(&f->doc, &f->src, f->path, d);
    if (rc)
        return rc;
    if (!cJSON_IsObject(f->doc))
        return dsf_diag_error(d, DSF_EINPUT, f->path, 1, 1,
                              "an override file must hold a JSON object");
    size_t nd;
    const dsf_jdup *dups = dsf_jsrc_duplicates(f->src, &nd);
    if (nd) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, f->path, dups[0].again.line,
                                   dups[0].again.col,
                                   "duplicate key '%s' (first at line %d)",
                                   dups[0].path, dups[0].first.line);
        dsf_diag_set_rule(g, "duplicate-key");
        return DSF_EINPUT;
    }
    dsf_doc_mark_tombstones(f->doc);
    char *all;
    size_t alen;
    if (dsf_read_file(&all, &alen, f->path, DSF_JSON_MAX_FILE, d) == 0) {
        dsf_sha256_hex(f->sha256, all, alen);
        free(all);
    }
    return 0;
}
