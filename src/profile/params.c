/* params.c -- profile params: types, parsing --param text, checks. */
#include "profile/internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/fsutil.h"
#include "core/xalloc.h"
#include "json/jsonalloc.h"
#include "json/jsonc.h"
#include "json/jsonout.h"
#include "core/utf8.h"


const char *dsf_param_type_name(dsf_param_type t)
{
    switch (t) {
    case DSF_PARAM_INTEGER:
        return "integer";
    case DSF_PARAM_NUMBER:
        return "number";
    case DSF_PARAM_STRING:
        return "string";
    case DSF_PARAM_BOOLEAN:
        return "boolean";
    }
    return "?";
}

bool dsf_param_type_parse(const char *s, dsf_param_type *t)
{
    static const struct {
        const char *name;
        dsf_param_type t;
    } names[] = {{"integer", DSF_PARAM_INTEGER}, {"int", DSF_PARAM_INTEGER},
                 {"number", DSF_PARAM_NUMBER},   {"string", DSF_PARAM_STRING},
                 {"boolean", DSF_PARAM_BOOLEAN}, {"bool", DSF_PARAM_BOOLEAN}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            *t = names[i].t;
            return true;
        }
    return false;
}

bool dsf_param_type_infer(const cJSON *v, dsf_param_type *t)
{
    if (cJSON_IsBool(v))
        *t = DSF_PARAM_BOOLEAN;
    else if (cJSON_IsString(v))
        *t = DSF_PARAM_STRING;
    else if (cJSON_IsNumber(v))
        *t = dsf_json_is_integer_literal(v) ? DSF_PARAM_INTEGER
                                            : DSF_PARAM_NUMBER;
    else
        return false;
    return true;
}

static bool type_matches(dsf_param_type t, const cJSON *v)
{
    switch (t) {
    case DSF_PARAM_INTEGER:
        return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
    case DSF_PARAM_NUMBER:
        return cJSON_IsNumber(v);
    case DSF_PARAM_STRING:
        return cJSON_IsString(v);
    case DSF_PARAM_BOOLEAN:
        return cJSON_IsBool(v);
    }
    return false;
}

int dsf_param_check(const dsf_param *param, const cJSON *v, char **err)
{
    *err = NULL;
    if (!type_matches(param->type, v)) {
        char *txt = dsf_json_print(v, false);
        *err = dsf_xasprintf("param '%s' must be a%s %s, not %s",
                             param->name,
                             param->type == DSF_PARAM_INTEGER ? "n" : "",
                             dsf_param_type_name(param->type), txt);
        free(txt);
        return -1;
    }
    if (cJSON_IsNumber(v)) {
        if ((param->has_min && v->valuedouble < param->min) ||
            (param->has_max && v->valuedouble > param->max)) {
            dsf_buf b = DSF_BUF_INIT;
            char range[96];
            dsf_json_write_number(&b, v);
            *err = dsf_xasprintf("param '%s' = %s is out of range (%s)",
                                 param->name, dsf_buf_str(&b),
                                 dsf_param_range_text(param, range,
                                                      sizeof range));
            dsf_buf_free(&b);
            return -1;
        }
    }
    if (param->values) {
        for (const cJSON *a = param->values->child; a; a = a->next)
            if (cJSON_Compare(a, v, true))
                return 0;
        char *txt = dsf_json_print(v, false);
        char *allowed = dsf_json_print(param->values, false);
        *err = dsf_xasprintf("param '%s' = %s is not one of %s", param->name,
                             txt, allowed);
        free(txt);
        free(allowed);
        return -1;
    }
    return 0;
}

#define MAX_EXACT 9007199254740992.0 /* 2^53 */

/* Non-NULL when text is a JSON number: "-"? digits ("." digits)?
** ([eE] [+-]? digits)?; *integral when it has neither fraction nor
** exponent. */
static const char *number_text(const char *text, bool *integral)
{
    const char *s = text;
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return NULL;
    while (isdigit((unsigned char)*s))
        s++;
    *integral = true;
    if (*s == '.') {
        *integral = false;
        if (!isdigit((unsigned char)*++s))
            return NULL;
        while (isdigit((unsigned char)*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        *integral = false;
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!isdigit((unsigned char)*s))
            return NULL;
        while (isdigit((unsigned char)*s))
            s++;
    }
    return *s ? NULL : text;
}

int dsf_param_parse(cJSON **out, const dsf_param *param, const char *text,
                    char **err)
{
    *out = NULL;
    *err = NULL;
    size_t bad = dsf_utf8_check(text, strlen(text));
    if (bad != strlen(text)) {
        *err = dsf_xasprintf("param '%s': invalid UTF-8 (byte 0x%02X at "
                             "column %zu of the value): values must be "
                             "UTF-8 text", param->name,
                             (unsigned char)text[bad], bad + 1);
        return -1;
    }
    cJSON *v = NULL;
    switch (param->type) {
    case DSF_PARAM_INTEGER:
    case DSF_PARAM_NUMBER: {
        /* JSON's number grammar only: no hex (0x10), no Infinity or NaN,
        ** no leading '+' or blanks. Integers must be exact in JSON (at
        ** most 2^53 in magnitude): a larger one is refused, never
        ** rounded. */
        bool integral_text = false;
        const char *kind = number_text(text, &integral_text);
        double x = kind ? strtod(text, NULL) : 0;
        if (!kind || !isfinite(x)) {
            *err = dsf_xasprintf("param '%s' expects a%s %s, got '%s'%s",
                                 param->name,
                                 param->type == DSF_PARAM_INTEGER ? "n" : "",
                                 dsf_param_type_name(param->type), text,
                                 kind ? " (out of the range of a number)"
                                      : "");
            return -1;
        }
        if (param->type == DSF_PARAM_INTEGER) {
            bool exact = fabs(x) <= MAX_EXACT;
            if (integral_text) {
                errno = 0;
                long long n = strtoll(text, NULL, 10);
                exact = !errno && n <= (long long)MAX_EXACT &&
                        n >= -(long long)MAX_EXACT;
            }
            if (!exact) {
                *err = dsf_xasprintf("param '%s' expects an integer of at "
                                     "most 2^53 (9007199254740992) in "
                                     "magnitude, got '%s'", param->name,
                                     text);
                return -1;
            }
        }
        v = cJSON_CreateNumber(x);
        if (v && param->type == DSF_PARAM_INTEGER && x == floor(x))
            v->valuestring = dsf_json_int_text((long long)x);
        break;
    }
    case DSF_PARAM_BOOLEAN:
        if (!strcmp(text, "true") || !strcmp(text, "1") ||
            !strcmp(text, "yes"))
            v = cJSON_CreateTrue();
        else if (!strcmp(text, "false") || !strcmp(text, "0") ||
                 !strcmp(text, "no"))
            v = cJSON_CreateFalse();
        else {
            *err = dsf_xasprintf("param '%s' expects true or false, got "
                                 "'%s'", param->name, text);
            return -1;
        }
        break;
    case DSF_PARAM_STRING:
        v = cJSON_CreateString(text);
        break;
    }
    if (!v)
        dsf_xoom();
    if (dsf_param_check(param, v, err) != 0) {
        cJSON_Delete(v);
        return -1;
    }
    *out = v;
    return 0;
}

const char *dsf_param_range_text(const dsf_param *param, char *buf, size_t n)
{
    /* %.15g: whole bounds as integers (65536, not 6.5536e+04) */
    char lo[40], hi[40];
    if (param->has_min)
        snprintf(lo, sizeof lo, "%.15g", param->min);
    if (param->has_max)
        snprintf(hi, sizeof hi, "%.15g", param->max);
    if (param->has_min && param->has_max)
        snprintf(buf, n, "%s .. %s", lo, hi);
    else if (param->has_min)
        snprintf(buf, n, "\u2265 %s", lo);
    else if (param->has_max)
        snprintf(buf, n, "\u2264 %s", hi);
    else
        return NULL;
    return buf;
}

bool dsf_param_names_file(const dsf_param *param, const char *text)
{
    size_t len = strlen(text);
    return param->json_file &&
           ((len >= 5 && !strcmp(text + len - 5, ".json")) ||
            dsf_is_file(text));
}
