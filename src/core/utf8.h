/*
** utf8.h -- what utf8.c defines: UTF-8 validation (RFC 3629: no overlong
** forms, no surrogates, nothing above U+10FFFF), for every reader of text
** and every writer of JSON.
*/
#ifndef DSF_UTF8_H
#define DSF_UTF8_H

#include <stddef.h>

/* The length of the valid UTF-8 sequence at s[0..n) (1 to 4), or 0 when
** the bytes there are not one (n must be > 0). */
size_t dsf_utf8_seq(const unsigned char *s, size_t n);

/* The offset of the first byte of s[0..n) that does not start a valid
** sequence, or n when all of it is valid UTF-8. */
size_t dsf_utf8_check(const char *s, size_t n);

#endif
