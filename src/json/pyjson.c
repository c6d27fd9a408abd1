/*
** pyjson.c -- the first comment or trailing comma in a JSONC document
** (see pyjson.h). Strings cannot span lines in JSON, so one pass with a
** string flag and the position of the last unconsumed comma is enough.
*/
#include "json/pyjson.h"

#include <string.h>

/* Whether text could hold a construct json.load rejects: a '/' (every
** comment starts with one) or a ',' followed by nothing but blanks and
** then '}' or ']'. Most files have neither, and memchr finds that out
** faster than the scan below; a file that has one is scanned (the ','
** or '/' may be inside a string). */
static bool may_have_extension(const char *text, size_t len)
{
    if (memchr(text, '/', len))
        return true;
    const char *end = text + len;
    for (const char *p = memchr(text, ',', len); p;
         p = memchr(p + 1, ',', (size_t)(end - p - 1))) {
        const char *q = p + 1;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n'))
            q++;
        if (q < end && (*q == '}' || *q == ']'))
            return true;
    }
    return false;
}

bool dsf_pyjson_first_extension(const char *text, size_t len, dsf_jpos *pos,
                                const char **what)
{
    if (!len || !may_have_extension(text, len))
        return false;
    int line = 1, col = 1;
    bool in_string = false, comma = false;
    dsf_jpos comma_pos = {0, 0};
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\' && i + 1 < len) {
                i++;
                col += 2;
                continue;
            }
            if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
            comma = false;
        } else if (c == '/' && i + 1 < len &&
                   (text[i + 1] == '/' || text[i + 1] == '*')) {
            pos->line = line;
            pos->col = col;
            *what = text[i + 1] == '/' ? "a // comment" : "a /* */ comment";
            return true;
        } else if (c == ',') {
            comma = true;
            comma_pos.line = line;
            comma_pos.col = col;
        } else if ((c == '}' || c == ']') && comma) {
            *pos = comma_pos;
            *what = "a trailing comma";
            return true;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            comma = false;
        }
        if (c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return false;
}
