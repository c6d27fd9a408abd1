/*
** buf.h -- a growable byte buffer, always NUL-terminated.
*/
#ifndef DSF_BUF_H
#define DSF_BUF_H

#include <stddef.h>

typedef struct dsf_buf {
    char *data;  /* NUL-terminated; NULL until the first append */
    size_t len;  /* bytes used, excluding the NUL */
    size_t cap;  /* bytes allocated */
} dsf_buf;

#define DSF_BUF_INIT {NULL, 0, 0}

/* Appends n bytes of s. */
void dsf_buf_add(dsf_buf *b, const char *s, size_t n);
/* Appends the C string s. */
void dsf_buf_puts(dsf_buf *b, const char *s);
/* Appends one byte. */
void dsf_buf_putc(dsf_buf *b, char c);
/* Appends printf output. */
void dsf_buf_printf(dsf_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Returns the contents ("" when empty); borrowed until the next change. */
const char *dsf_buf_str(const dsf_buf *b);
/* Hands the contents to the caller (free() it) and resets b. */
char *dsf_buf_take(dsf_buf *b);
/* Empties b, keeping its memory. */
void dsf_buf_clear(dsf_buf *b);
/* Frees b's memory; b is empty and reusable afterwards. */
void dsf_buf_free(dsf_buf *b);

#endif
