/*
** jcursor.h -- what is under the cursor in a JSON (or JSONC) text that
** may not parse: the member key or value position, the keys of the
** objects around it. A forgiving scanner, for hover and completion; the
** diagnostics come from the real parser.
*/
#ifndef DSF_LSP_JCURSOR_H
#define DSF_LSP_JCURSOR_H

#include <stdbool.h>
#include <stddef.h>

#define DSF_JCURSOR_MAX_DEPTH 64

typedef enum dsf_jcursor_at {
    DSF_JC_NONE = 0,  /* nowhere a key or value goes (or too deep) */
    DSF_JC_KEY,       /* on a member key, or where one goes */
    DSF_JC_VALUE      /* on a member's value, or where it goes */
} dsf_jcursor_at;

typedef struct dsf_jcursor {
    dsf_jcursor_at at;
    /* The members leading to the object the cursor is in: path[i] is a
    ** key (without quotes, escapes kept as written), NULL for an array
    ** element. depth entries. Owned: dsf_jcursor_free. */
    char *path[DSF_JCURSOR_MAX_DEPTH];
    size_t depth;
    /* DSF_JC_KEY on a key, or DSF_JC_VALUE: the member's key (owned), or
    ** NULL (a key yet to be written; a value of an array element). */
    char *key;
    /* The token under the cursor: [tok_start, tok_end) bytes, a string
    ** with its quotes; empty (both the cursor) between tokens. */
    size_t tok_start, tok_end;
    bool in_array;    /* the innermost container is an array */
} dsf_jcursor;

/* Finds what is at byte offset off of text[0..len); a cursor at the end
** of a token (just after it) counts as on it. c is filled (free it with
** dsf_jcursor_free), whatever the text. */
void dsf_jcursor_find(dsf_jcursor *c, const char *text, size_t len,
                      size_t off);

void dsf_jcursor_free(dsf_jcursor *c);

#endif
