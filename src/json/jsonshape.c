/*
** jsonshape.c -- what a JSON text or number is without parsing it with
** jsonc.c (declared in jsonc.h): whether a text nests deeper than every
** reader's limit (for readers that hand it to cJSON_Parse), and whether a
** number is an integer (its literal, or its value when it keeps none).
*/
#include "json/jsonc.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

bool dsf_json_too_deep(const char *text, size_t len)
{
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > DSF_JSON_MAX_DEPTH)
                return true;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return false;
}

bool dsf_json_is_integer_literal(const cJSON *num)
{
    if (num->valuestring)
        return strpbrk(num->valuestring, ".eE") == NULL;
    double v = num->valuedouble;
    return v == floor(v) && fabs(v) <= 9007199254740992.0;
}
