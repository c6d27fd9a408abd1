/* outdir.c -- see outdir.h. */
#include "lsp/outdir.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/fsutil.h"
#include "core/strutil.h"
#include "core/xalloc.h"
#include "json/jsonc.h"

/* A manifest of 1,000 variants is a few MB. */
#define MANIFEST_MAX (64u << 20)

char *dsf_lsp_uri_path(const char *uri)
{
    if (strncmp(uri, "file://", 7))
        return NULL;
    const char *p = uri + 7;
    if (*p != '/') /* file://host/...: only the local host */
        return NULL;
    dsf_buf b = DSF_BUF_INIT;
    for (; *p; p++) {
        if (*p == '%') {
            int h = dsf_hex_digit(p[1]), l = h < 0 ? -1 : dsf_hex_digit(p[2]);
            if (l < 0 || (h == 0 && l == 0)) {
                dsf_buf_free(&b);
                return NULL;
            }
            dsf_buf_putc(&b, (char)(h * 16 + l));
            p += 2;
        } else {
            dsf_buf_putc(&b, *p);
        }
    }
    return dsf_buf_take(&b);
}

char *dsf_lsp_path_uri(const char *path)
{
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "file://");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("/-._~", *p))
            dsf_buf_putc(&b, (char)*p);
        else
            dsf_buf_printf(&b, "%%%02X", *p);
    }
    return dsf_buf_take(&b);
}

cJSON *dsf_lsp_manifest_of(const char *uri, const cJSON **variant)
{
    *variant = NULL;
    char *path = dsf_lsp_uri_path(uri);
    if (!path)
        return NULL;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    const char *base = slash + 1;
    char *mpath = dsf_xconcat(*path ? path : "/", "/manifest.json", NULL);
    char *text = NULL;
    size_t len;
    dsf_diags d = DSF_DIAGS_INIT;
    cJSON *m = NULL;
    if (!dsf_read_file(&text, &len, mpath, MANIFEST_MAX, &d) &&
        !dsf_json_too_deep(text, len))
        m = cJSON_ParseWithLength(text, len);
    free(text);
    dsf_diags_free(&d);
    free(mpath);
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(m, "variants"))
    {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, "file");
        if (cJSON_IsString(f) && !strcmp(f->valuestring, base)) {
            *variant = v;
            break;
        }
    }
    free(path);
    if (!*variant) {
        cJSON_Delete(m);
        return NULL;
    }
    return m;
}
