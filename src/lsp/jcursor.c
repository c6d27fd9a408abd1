/* jcursor.c -- see jcursor.h. */
#include "lsp/jcursor.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

typedef struct frame {
    bool array;
    bool want_key;  /* an object expecting a key (else its value) */
    char *key;      /* the member key last read, or NULL */
} frame;

typedef struct scan {
    const char *t;
    size_t len, i;
    frame st[DSF_JCURSOR_MAX_DEPTH];
    size_t depth;
    size_t extra;   /* containers open past the deepest frame */
} scan;

/* The end of the string token starting at t[i] == '"'. */
static size_t string_end(const char *t, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
        else if (t[i] == '\n')
            return i; /* unterminated: the line ends it */
    }
    return len;
}

/* Skips blanks and comments from t[i]; the first byte of a token. */
static size_t skip_blank(const char *t, size_t len, size_t i)
{
    while (i < len) {
        char ch = t[i];
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') {
            i++;
        } else if (ch == '/' && i + 1 < len && t[i + 1] == '/') {
            const char *nl = memchr(t + i, '\n', len - i);
            i = nl ? (size_t)(nl - t) : len;
        } else if (ch == '/' && i + 1 < len && t[i + 1] == '*') {
            size_t j = i + 2;
            while (j + 1 < len && !(t[j] == '*' && t[j + 1] == '/'))
                j++;
            i = j + 1 < len ? j + 2 : len;
        } else {
            break;
        }
    }
    return i;
}

static char *string_text(const char *t, size_t a, size_t b)
{
    size_t s = a + 1, e = b > s && t[b - 1] == '"' ? b - 1 : b;
    return dsf_xstrndup(t + s, e > s ? e - s : 0);
}

/* Fills c from the scanner's state with the cursor on [a, b) (a token,
** or empty): its role from the innermost frame. */
static void report(dsf_jcursor *c, const scan *s, size_t a, size_t b,
                   bool is_string)
{
    c->tok_start = a;
    c->tok_end = b;
    if (s->extra || !s->depth)
        return;
    const frame *f = &s->st[s->depth - 1];
    for (size_t i = 0; i + 1 < s->depth; i++)
        c->path[c->depth++] = s->st[i].array || !s->st[i].key
                                  ? NULL
                                  : dsf_xstrdup(s->st[i].key);
    c->in_array = f->array;
    if (f->array) {
        c->at = DSF_JC_VALUE;
    } else if (f->want_key) {
        c->at = DSF_JC_KEY;
        if (is_string)
            c->key = string_text(s->t, a, b);
    } else {
        c->at = DSF_JC_VALUE;
        c->key = f->key ? dsf_xstrdup(f->key) : NULL;
    }
}

/* One structural byte t[i] ({ } [ ] : ,) applied to the stack. */
static void structural(scan *s, char ch)
{
    frame *f = s->depth ? &s->st[s->depth - 1] : NULL;
    if (ch == '{' || ch == '[') {
        if (s->extra || s->depth == DSF_JCURSOR_MAX_DEPTH) {
            s->extra++;
            return;
        }
        frame *n = &s->st[s->depth++];
        n->array = ch == '[';
        n->want_key = ch == '{';
        n->key = NULL;
    } else if ((ch == '}' || ch == ']') && s->extra) {
        s->extra--;
    } else if ((ch == '}' || ch == ']') && f) {
        free(f->key);
        s->depth--;
    } else if (s->extra) {
        /* inside the containers past the deepest frame */
    } else if (ch == ':' && f && !f->array) {
        f->want_key = false;
    } else if (ch == ',' && f && !f->array) {
        f->want_key = true;
    }
}

void dsf_jcursor_find(dsf_jcursor *c, const char *text, size_t len,
                      size_t off)
{
    memset(c, 0, sizeof *c);
    scan s;
    memset(&s, 0, sizeof s);
    s.t = text;
    s.len = len;
    if (off > len)
        off = len;
    size_t i = 0;
    bool done = false;
    while (!done) {
        i = skip_blank(text, len, i);
        if (i >= off || i >= len) {
            report(c, &s, off, off, false);
            break;
        }
        char ch = text[i];
        size_t end;
        if (ch == '"') {
            end = string_end(text, len, i);
        } else if (strchr("{}[]:,", ch)) {
            structural(&s, ch);
            i++;
            continue;
        } else {
            end = i;
            while (end < len && !strchr(" \t\r\n{}[]:,\"/", text[end]))
                end++;
            if (end == i)
                end = i + 1;
        }
        if (off <= end) {
            report(c, &s, i, end, ch == '"');
            done = true;
        } else if (ch == '"' && !s.extra && s.depth &&
                   !s.st[s.depth - 1].array &&
                   s.st[s.depth - 1].want_key) {
            frame *f = &s.st[s.depth - 1];
            free(f->key);
            f->key = string_text(text, i, end);
        }
        i = end;
    }
    for (size_t k = 0; k < s.depth; k++)
        free(s.st[k].key);
}

void dsf_jcursor_free(dsf_jcursor *c)
{
    for (size_t i = 0; i < c->depth; i++)
        free(c->path[i]);
    free(c->key);
    memset(c, 0, sizeof *c);
}
