/*
** jsonalloc.h -- where cJSON's memory comes from.
**
** A variant's documents are trees of small blocks: a 64-byte node per
** value, a key and sometimes a number's literal. glibc's malloc and free
** cost about 100 instructions a pair on them (free beyond the per-size
** cache of seven blocks goes to the fast bins), which was 8% of a sweep's
** instructions. dsf_json_alloc_init gives cJSON the pool the Lua states
** use (core/heap.h: size classes, a free list each, a few instructions a
** block): each block carries a 16-byte header with its size, since
** cJSON's free does not pass one.
**
** In a build or run that checks memory (AddressSanitizer, valgrind's
** memcheck) the pool is off and cJSON keeps malloc and free, so those
** tools see every block.
**
** Memory a cJSON node owns (valuestring, string) must come from cJSON's
** allocator: a string made here is freed by cJSON_Delete, never by free.
*/
#ifndef DSF_JSONALLOC_H
#define DSF_JSONALLOC_H

#include <stddef.h>

/* Installs the hooks when the pool is on. Call once, first thing in
** main, before any cJSON value exists (a value made before it would be
** freed by the wrong allocator); later calls do nothing. */
void dsf_json_alloc_init(void);

/* Whether cJSON allocates through the pool's allocator in this process
** (from the pool itself once it is reserved, else from malloc). */
int dsf_json_alloc_pooled(void);

/* Copies for a node's valuestring (owned by the node once set: freed by
** cJSON_Delete). Abort on out of memory, as dsf_xmalloc does. */
char *dsf_json_strdup(const char *s);
char *dsf_json_strndup(const char *s, size_t n);
/* The decimal text of v. */
char *dsf_json_int_text(long long v);

#endif
