/* report_out.c -- gen --report: the A/B page of this run's variants (the
** page itself is drawn by diff/report.c from the manifest). */
#include "profile/gen_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "diff/report.h"

cJSON *dsf_gen_report_layout(run *ru)
{
    /* By convention a plugin's "<name>.summary" module may define
    ** report_layout(); the first plugin that returns an object wins. (To
    ** become a declared hook of the plugin interface.) */
    size_t np;
    const dsf_plugin_info *pi = dsf_plugins_list(ru->plugins, &np);
    cJSON *layout = NULL;
    for (size_t i = 0; i < np && !layout; i++) {
        char *module = dsf_xasprintf("%s.summary", pi[i].name);
        cJSON *args = cJSON_CreateArray();
        dsf_diags ignore = DSF_DIAGS_INIT; /* none: no bars */
        if (dsf_plugins_call(ru->plugins, module, "report_layout", args,
                             &layout, &ignore) != 0 ||
            !cJSON_IsObject(layout)) {
            cJSON_Delete(layout);
            layout = NULL;
        }
        dsf_diags_free(&ignore);
        cJSON_Delete(args);
        free(module);
    }
    return layout;
}

char *dsf_gen_report_page(const run *ru, const cJSON *m)
{
    const dsf_gen_request *r = ru->r;
    cJSON **docs = dsf_xcalloc(ru->nv + 1, sizeof *docs);
    char **hrefs = dsf_xcalloc(ru->nv + 1, sizeof *hrefs);
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(m, "variants");
    size_t i = 0;
    for (const cJSON *e = vs ? vs->child : NULL; e && i < ru->nv;
         e = e->next, i++) {
        docs[i] = cJSON_Parse(ru->v[i].bytes);
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
        /* The directory exists by now (-o creates it first). */
        if (r->outdir && cJSON_IsString(file))
            hrefs[i] = dsf_report_href(r->report, r->outdir,
                                       file->valuestring);
    }
    dsf_buf page = DSF_BUF_INIT;
    dsf_report_html(&page, m, (const cJSON *const *)docs,
                    (const char *const *)hrefs);
    for (size_t k = 0; k < ru->nv; k++) {
        cJSON_Delete(docs[k]);
        free(hrefs[k]);
    }
    free(docs);
    free(hrefs);
    return dsf_buf_take(&page);
}

int dsf_gen_write_report(run *ru, dsf_diags *d)
{
    cJSON *m = dsf_gen_manifest(ru);
    char *page = dsf_gen_report_page(ru, m);
    cJSON_Delete(m);
    int rc = dsf_write_atomic(ru->r->report, page, strlen(page), d);
    free(page);
    return rc;
}
