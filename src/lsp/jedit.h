/*
** jedit.h -- a finding's machine-readable fix (plugin/fixedit.h: rename,
** set, remove, move at a config path) as text edits of the JSON (or
** JSONC) text it was found in, for the language server's code actions.
** The text is edited where the members are, so the rest of the file
** (comments, layout) stays as written.
*/
#ifndef DSF_LSP_JEDIT_H
#define DSF_LSP_JEDIT_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Replace the bytes [a, b) of the text with text (owned). */
typedef struct dsf_jtextedit {
    size_t a, b;
    char *text;
} dsf_jtextedit;

/* The text edits (*n, at most 2, in text order, not overlapping) that
** carry out the edit object e ({"op", "path", "to" | "value"}) on
** text[0..len), and a title for the action (*title, caller frees).
** -1 when e does not apply to this text: the path is not there, a rename
** or move onto a key that exists, a move into itself, a text the scanner
** cannot read. */
int dsf_jedit_plan(const char *text, size_t len, const cJSON *e,
                   dsf_jtextedit out[2], size_t *n, char **title);

void dsf_jedit_free(dsf_jtextedit *out, size_t n);

#endif
