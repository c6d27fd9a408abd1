/*
** xalloc.h -- allocation that never returns NULL.
**
** dsforge is a short-lived command-line program: running out of memory in
** the C core is not a condition it can recover from meaningfully, so, like
** Redis's zmalloc, these wrappers print one line and abort. Lua's memory is
** separate and budgeted (see lua/host.c); a script that runs out of memory
** gets a clean error, not this.
*/
#ifndef DSF_XALLOC_H
#define DSF_XALLOC_H

#include <stddef.h>

/* Returns a new block; never NULL. Caller frees with free(). */
void *dsf_xmalloc(size_t n);
/* Zeroed block of n*size bytes (overflow-checked); caller frees. */
void *dsf_xcalloc(size_t n, size_t size);
/* Resizes p (may be NULL); never NULL. Caller frees the result. */
void *dsf_xrealloc(void *p, size_t n);
/* Copy of s (s may be NULL, then NULL). Caller frees. */
char *dsf_xstrdup(const char *s);
/* Copy of the first n bytes of s plus a NUL. Caller frees. */
char *dsf_xstrndup(const char *s, size_t n);
/* printf into a new string. Caller frees. */
char *dsf_xasprintf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* The strings given, up to a NULL, one after the other in a new string
** (no formatting: for names built on every load, such as a rule's "rule
** ID (plugin NAME)"). Caller frees. */
char *dsf_xconcat(const char *s, ...) __attribute__((sentinel));

/* Reports that memory ran out and aborts. */
_Noreturn void dsf_xoom(void);

/* Grows *items (of *cap elements of size elem) to hold at least need. */
void dsf_xgrow(void **items, size_t *cap, size_t need, size_t elem);

#endif
