/* html.c -- see html.h. */
#include "report/html.h"

void dsf_html_esc(dsf_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': dsf_buf_puts(b, "&lt;"); break;
        case '>': dsf_buf_puts(b, "&gt;"); break;
        case '&': dsf_buf_puts(b, "&amp;"); break;
        case '"': dsf_buf_puts(b, "&quot;"); break;
        case '\'': dsf_buf_puts(b, "&#39;"); break;
        default:
            /* a control character from a log or a script: shown in caret
            ** notation, as on a terminal (core/diag.h), never raw */
            if ((unsigned char)*s == 0x7f ||
                ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n'))
                dsf_buf_printf(b, "^%c", *s == 0x7f ? '?' : *s + '@');
            else
                dsf_buf_putc(b, *s);
        }
    }
}

const char *dsf_html_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}
