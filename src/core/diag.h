/*
** diag.h -- diagnostics: errors, warnings and notes with locations.
**
** A dsf_diags list is owned by the caller of an operation; functions append
** to it and return an error code (error.h). Printing happens once, at the
** top, in the subcommand.
*/
#ifndef DSF_DIAG_H
#define DSF_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/buf.h"

typedef enum dsf_severity {
    DSF_NOTE = 0,
    DSF_WARNING = 1,
    DSF_ERROR = 2
} dsf_severity;

typedef struct dsf_diag {
    dsf_severity severity;
    char *file;     /* source file or label ("argument #3"); may be NULL */
    int line, col;  /* 1-based; 0 when unknown */
    char *rule;     /* stable rule id, or NULL */
    char *message;  /* what is wrong and why it matters */
    char *hint;     /* suggested fix, or NULL */
    char *path;     /* config path the diagnostic is about, or NULL */
    char *excerpt;  /* the source line, shown with a caret; or NULL */
    char *trace;    /* Lua traceback lines, or NULL */
    char *edits;    /* the machine-readable fixes of a rule's finding: a
                       JSON array of edit objects ({"op", "path", "to" or
                       "value"}, contrib/docs/plugins.md), or NULL */
    bool last;      /* a count of what is not shown: sorts after the other
                       diagnostics of its file */
} dsf_diag;

typedef struct dsf_diags {
    dsf_diag *items;
    size_t len, cap;
} dsf_diags;

#define DSF_DIAGS_INIT {NULL, 0, 0}

/* Appends a diagnostic; returns it (borrowed, valid until the next add) so
** the caller can set rule/hint/path with the setters below. file may be
** NULL. */
dsf_diag *dsf_diag_add(dsf_diags *d, dsf_severity sev, const char *file,
                       int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Convenience for the common error path: appends an error and returns
** code, so callers can write `return dsf_diag_error(d, DSF_EINPUT, ...)`. */
int dsf_diag_error(dsf_diags *d, int code, const char *file, int line,
                   int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Setters; each replaces the previous value (copies its arguments). */
void dsf_diag_set_hint(dsf_diag *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dsf_diag_set_rule(dsf_diag *g, const char *rule);
void dsf_diag_set_path(dsf_diag *g, const char *path);
void dsf_diag_set_excerpt(dsf_diag *g, const char *line_start, size_t len);
void dsf_diag_set_trace(dsf_diag *g, const char *trace);
void dsf_diag_set_edits(dsf_diag *g, const char *edits);

/* The hint of the last diagnostic added (for chained helpers); may be
** NULL when the list is empty. Borrowed. */
dsf_diag *dsf_diags_last(dsf_diags *d);

/* Number of diagnostics of exactly severity sev. */
size_t dsf_diags_count(const dsf_diags *d, dsf_severity sev);

/* Moves all of src's diagnostics to the end of dst; src is left empty. */
void dsf_diags_move(dsf_diags *dst, dsf_diags *src);

/* Stable sort by file, line, column, then rule id. */
void dsf_diags_sort(dsf_diags *d);

/* Bounds what is shown of a sorted list (dsf_diags_sort): of each file's
** diagnostics of one severity and rule, the first max_shown stay and the
** others are freed; each group cut is then counted in one note at the end
** of its file's diagnostics, "N more warnings not shown (...)" with the
** group's rule. Linear in the list. Returns how many were removed. */
size_t dsf_diags_cap(dsf_diags *d, size_t max_shown);

/* Prints every diagnostic as `file:line:col: severity: message [rule]`,
** followed by the excerpt with a caret, the hint and the trace. color
** adds ANSI colours (only on a terminal, never with NO_COLOR). The text
** is composed first and handed to out in one fwrite. */
void dsf_diags_print(const dsf_diags *d, FILE *out, bool color);

/* The one place text from scripts, files and repositories is made safe
** for a terminal: appends s to out with every character that could
** control it neutralised. C0 controls and DEL in caret notation (ESC is
** "^[", CR "^M"; tab is kept, and newline unless one_line, where it is
** "^J"), C1 controls and the bidirectional overrides and isolates as
** "<U+202E>", bytes that are not UTF-8 as "\xFF". Every printer of such
** text (diagnostics, warnings, summaries, show, list, plugins, print)
** goes through it. */
void dsf_text_clean(dsf_buf *out, const char *s, bool one_line);

/* Everything the profiles and plugins make one process print (print,
** summaries, docs, names: text that came from a script), cleaned, shares
** this budget; what passes it is cut, with one line saying so. */
#define DSF_SCRIPT_OUTPUT_MAX (1u << 20)

/* Writes s[0..n) (script text, NUL bytes included) to f through
** dsf_text_clean, in pieces (memory stays small however long s is),
** within what is left of DSF_SCRIPT_OUTPUT_MAX. */
void dsf_write_script_text(const char *s, size_t n, FILE *f, bool one_line);

/* dsf_write_script_text of the string s. */
void dsf_fputs_clean(const char *s, FILE *f, bool one_line);

/* What is left of the scripts' output budget, in bytes. */
size_t dsf_script_output_left(void);

/* The severity's name ("error", "warning", "note"). */
const char *dsf_severity_name(dsf_severity sev);

/* Frees every diagnostic; d is empty and reusable afterwards. */
void dsf_diags_free(dsf_diags *d);

#endif
