/* heap.c -- see heap.h. */
#define _DEFAULT_SOURCE /* madvise's MADV_POPULATE_WRITE */
#include "lua/heap.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#endif

unsigned long dsf_heap_prefault(void)
{
    static int done;
    if (done)
        return 0;
    done = 1;
#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE) && \
    !defined(__SANITIZE_ADDRESS__)
    /* The arena comes from the brk heap (not a separate mapping), stays
    ** there when freed (no trim), and the heap grows by as much again
    ** when it must. */
    mallopt(M_MMAP_THRESHOLD, 2 * DSF_HEAP_ARENA);
    mallopt(M_TRIM_THRESHOLD, 4 * DSF_HEAP_ARENA);
    mallopt(M_TOP_PAD, DSF_HEAP_ARENA);
    char *p = malloc(DSF_HEAP_ARENA);
    if (!p)
        return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + DSF_HEAP_ARENA) & ~(page - 1);
    unsigned long n = 0;
    if (hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)
        n = (unsigned long)(hi - lo);
    free(p);
    return n;
#else
    return 0;
#endif
}
