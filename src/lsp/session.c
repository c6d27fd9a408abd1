/* session.c -- see session.h: what the handlers share. */
#include "lsp/session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "lsp/rpc.h"
#include "lsp/utf16.h"
#include "plugin/options.h"
#include "plugin/targets.h"

/* text with every byte that starts no valid UTF-8 sequence replaced by
** U+FFFD: a document's invalid bytes never reach the client raw. */
static char *valid_utf8(char *text)
{
    size_t n = strlen(text), bad = dsf_utf8_check(text, n);
    if (bad == n)
        return text;
    dsf_buf b = DSF_BUF_INIT;
    size_t i = 0;
    while (i < n) {
        size_t k = dsf_utf8_seq((const unsigned char *)text + i, n - i);
        if (k) {
            dsf_buf_add(&b, text + i, k);
            i += k;
        } else {
            dsf_buf_puts(&b, "\xEF\xBF\xBD");
            i++;
        }
    }
    free(text);
    return dsf_buf_take(&b);
}

void dsf_lsp_send(dsf_lsp *s, cJSON *msg)
{
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    char *p = cJSON_PrintUnformatted(msg); /* cJSON's allocator */
    cJSON_Delete(msg);
    if (!p)
        dsf_xoom();
    char *text = valid_utf8(dsf_xstrdup(p));
    cJSON_free(p);
    if (!s->gone && dsf_rpc_write(s->out_fd, text, strlen(text))) {
        dsf_lsp_log("the client is gone (standard output closed)");
        s->gone = true;
    }
    free(text);
}

void dsf_lsp_reply(dsf_lsp *s, const cJSON *id, cJSON *result)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "id", cJSON_Duplicate(id, 1));
    cJSON_AddItemToObject(m, "result", result ? result : cJSON_CreateNull());
    dsf_lsp_send(s, m);
}

void dsf_lsp_error(dsf_lsp *s, const cJSON *id, int code,
                   const char *message)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, 1)
                                      : cJSON_CreateNull());
    cJSON *e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", message);
    dsf_lsp_send(s, m);
}

void dsf_lsp_notify(dsf_lsp *s, const char *method, cJSON *params)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "method", method);
    cJSON_AddItemToObject(m, "params", params);
    dsf_lsp_send(s, m);
}

void dsf_lsp_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dsforge lsp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* window/showMessage of type (1 error, 2 warning) with text. */
static void show(dsf_lsp *s, int type, const char *text)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "type", type);
    cJSON_AddStringToObject(p, "message", text);
    dsf_lsp_notify(s, "window/showMessage", p);
}

const dsf_plugin_option *dsf_lsp_setting_option(const dsf_lsp *s,
                                                const char *key)
{
    size_t n;
    const dsf_plugin_option **os =
        dsf_plugins_options_for(s->plugins, "check", &n);
    const dsf_plugin_option *found = NULL;
    for (size_t i = 0; i < n && !found; i++) {
        const char *a = os[i]->name, *k = key;
        while (*a && *k) {
            if (*a == '-' && a[1] && *k == a[1] - 'a' + 'A')
                a += 2;
            else if (*a == *k)
                a++;
            else
                break;
            k++;
        }
        if (!*a && !*k)
            found = os[i];
    }
    free(os);
    return found;
}

/* The setting key (a plugin's ctx option of check, in camelCase) to v:
** checked as the option's value is (null or "": unset). */
static void set_value(dsf_lsp *s, const char *key, const cJSON *v)
{
    const dsf_plugin_option *o = dsf_lsp_setting_option(s, key);
    if (!o || !o->ctx)
        return;
    if (cJSON_IsNull(v) || (cJSON_IsString(v) && !*v->valuestring)) {
        cJSON_DeleteItemFromObjectCaseSensitive(s->values, o->key);
        return;
    }
    char *what = dsf_xconcat("dsforge.", key, NULL);
    dsf_diags d = DSF_DIAGS_INIT;
    const char *value;
    if (!cJSON_IsString(v)) {
        char *msg = dsf_xconcat(what, " must be a string such as \"",
                                o->arg ? o->arg : "", "\"", NULL);
        show(s, 1, msg);
        free(msg);
    } else if (dsf_plugins_option_value(s->plugins, o, v->valuestring, what,
                                        &value, &d)) {
        show(s, 1, d.len ? d.items[0].message : what);
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(s->values, o->key);
        cJSON_AddStringToObject(s->values, o->key, value);
    }
    dsf_diags_free(&d);
    free(what);
}

/* "dsforge.target must be "a", "b" or "c"": the targets the plugins own. */
static void show_targets(dsf_lsp *s)
{
    const char **names = dsf_plugins_target_names(s->plugins);
    dsf_buf b = DSF_BUF_INIT;
    dsf_buf_puts(&b, "dsforge.target must be ");
    size_t n = 0;
    while (names[n])
        n++;
    for (size_t i = 0; i < n; i++)
        dsf_buf_printf(&b, "%s\"%s\"", !i ? "" : i + 1 == n ? " or " : ", ",
                       names[i]);
    show(s, 1, b.data);
    dsf_buf_free(&b);
    free(names);
}

void dsf_lsp_settings(dsf_lsp *s, const cJSON *settings)
{
    if (!cJSON_IsObject(settings))
        return;
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(settings, "dsforge");
    if (!cJSON_IsObject(in))
        in = settings;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, "dsVersion");
    if (v)
        set_value(s, "dsVersion", v);
    v = cJSON_GetObjectItemCaseSensitive(in, "worldSize");
    if (v) {
        if (cJSON_IsNumber(v) && v->valuedouble >= 1 &&
            v->valuedouble <= 1000000 &&
            v->valuedouble == (double)(long)v->valuedouble) {
            s->world = (long)v->valuedouble;
            s->world_set = true;
        } else {
            show(s, 1, "dsforge.worldSize must be a whole number from 1 "
                       "to 1000000");
        }
    }
    v = cJSON_GetObjectItemCaseSensitive(in, "params");
    if (v) {
        if (cJSON_IsObject(v)) {
            cJSON_Delete(s->params);
            s->params = cJSON_Duplicate(v, 1);
        } else {
            show(s, 1, "dsforge.params must be an object of profile params "
                       "such as {\"model\": \"llama-2-7b\"}");
        }
    }
    v = cJSON_GetObjectItemCaseSensitive(in, "target");
    if (v) {
        if (cJSON_IsString(v) &&
            dsf_plugins_target_known(s->plugins, v->valuestring)) {
            snprintf(s->target, sizeof s->target, "%s", v->valuestring);
            s->target_given = true;
        }
        else
            show_targets(s);
    }
}

cJSON *dsf_lsp_range(const char *text, size_t len, size_t a, size_t b)
{
    long l, c;
    cJSON *r = cJSON_CreateObject();
    cJSON *p = cJSON_AddObjectToObject(r, "start");
    dsf_utf16_position(text, len, a, &l, &c);
    cJSON_AddNumberToObject(p, "line", (double)l);
    cJSON_AddNumberToObject(p, "character", (double)c);
    p = cJSON_AddObjectToObject(r, "end");
    dsf_utf16_position(text, len, b, &l, &c);
    cJSON_AddNumberToObject(p, "line", (double)l);
    cJSON_AddNumberToObject(p, "character", (double)c);
    return r;
}
