/*
** strutil.h -- small string helpers: edit distance, "did you mean",
** plurals.
*/
#ifndef DSF_STRUTIL_H
#define DSF_STRUTIL_H

#include <stddef.h>

/* The edit distance between a and b: insertions, deletions,
** substitutions and swaps of two adjacent characters count 1 each. */
size_t dsf_edit_distance(const char *a, const char *b);

/* The candidate closest to word when it is close enough to be a likely
** typo (distance at most a third of the word's length, at least 1), or
** NULL. Borrowed from candidates. */
const char *dsf_closest(const char *word, const char *const *candidates,
                        size_t n);

/* The value of the hexadecimal digit c (either case), or -1. */
int dsf_hex_digit(char c);

/* n with a comma every three digits ("39,900") into buf, which holds
** at least 32 bytes. Returns buf. */
char *dsf_thousands(char *buf, size_t n);

/* "s" unless n is 1: printf("%zu plugin%s", n, dsf_plural(n)). */
const char *dsf_plural(size_t n);

#endif
