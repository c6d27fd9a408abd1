/* report_out.c -- gen --report: the A/B page of this run's variants (the
** page itself is drawn by diff/report.c from the manifest). */
#include "profile/gen_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "report/report.h"

char *dsf_gen_report_page(const gen_run *ru, const cJSON *m)
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
                    (const char *const *)hrefs, NULL, NULL);
    for (size_t k = 0; k < ru->nv; k++) {
        cJSON_Delete(docs[k]);
        free(hrefs[k]);
    }
    free(docs);
    free(hrefs);
    return dsf_buf_take(&page);
}

int dsf_gen_write_report(gen_run *ru, dsf_diags *d)
{
    cJSON *m = dsf_gen_manifest(ru);
    char *page = dsf_gen_report_page(ru, m);
    cJSON_Delete(m);
    int rc = dsf_write_atomic(ru->r->report, page, strlen(page), d);
    free(page);
    return rc;
}
