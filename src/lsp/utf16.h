/*
** utf16.h -- LSP positions (0-based line, character counted in UTF-16
** code units) against a document's bytes. Lines end at '\n' (a CR before
** it is part of the line, as dsforge's own line numbers count). A valid
** UTF-8 sequence of 4 bytes is 2 units, of 1 to 3 bytes 1 unit; a byte
** that starts no valid sequence is 1 unit (what an editor shows as
** U+FFFD), so any byte string converts without failing.
*/
#ifndef DSF_LSP_UTF16_H
#define DSF_LSP_UTF16_H

#include <stddef.h>

/* The byte offset in text[0..len) of position (line, character):
** a character past the end of its line is the line's end (before its
** '\n'), a line past the last is len, negative values are 0; a position
** inside a surrogate pair is the sequence's start. */
size_t dsf_utf16_offset(const char *text, size_t len, long line,
                        long character);

/* The UTF-16 units of s[0..n) (a line's bytes before a column). */
long dsf_utf16_units(const char *s, size_t n);

/* The start of line (0-based) in text[0..len), or len when there is no
** such line. */
size_t dsf_utf16_line_start(const char *text, size_t len, long line);

/* The position (*line, *character) of byte offset off (clamped to len). */
void dsf_utf16_position(const char *text, size_t len, size_t off,
                        long *line, long *character);

#endif
