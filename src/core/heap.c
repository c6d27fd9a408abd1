/* heap.c -- see heap.h. */
#define _DEFAULT_SOURCE /* madvise's MADV_POPULATE_WRITE, MAP_ANONYMOUS */
#include "core/heap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__unix__)
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define DSF_HEAP_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define DSF_HEAP_CHECKED 1
#endif
#endif

#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE) && \
    !defined(DSF_HEAP_CHECKED)
#define DSF_HEAP_ARENA_KNOWN 1
/* Where the arena dsf_heap_prefault set up begins (NULL: not set up) and
** the heap's top then, and up to where the C heap is populated. */
static char *arena_lo, *arena_top, *populated_top;
#endif

unsigned long dsf_heap_prefault(void)
{
    static int done;
    if (done)
        return 0;
    done = 1;
#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE) && \
    !defined(DSF_HEAP_CHECKED)
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
    arena_lo = (char *)lo;
    uintptr_t hi = ((uintptr_t)p + DSF_HEAP_POPULATE) & ~(page - 1);
    unsigned long n = 0;
    if (hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)
        n = (unsigned long)(hi - lo);
    populated_top = (char *)hi;
    arena_top = sbrk(0);
    free(p);
    return n;
#else
    return 0;
#endif
}

/* ------------------------------------------------------------------ */
/* The pool: size classes of 16 bytes (class k holds blocks of 16(k+1)
** bytes), a free list each, carved from one reserved region by a bump
** pointer. The process has one thread running Lua. */

#define GRAIN 16u
#define NCLASS (DSF_HEAP_SMALL / GRAIN)

typedef struct free_block {
    struct free_block *next;
} free_block;

static struct {
    int state;               /* 0 undecided, 1 pooling, -1 malloc only */
    char *base, *bump, *populated, *end;
    free_block *free[NCLASS];
} pool;

unsigned long dsf_heap_after_fork(void)
{
    unsigned long n = 0;
#if defined(MADV_POPULATE_WRITE) && !defined(DSF_HEAP_CHECKED)
    if (pool.state == 1 && pool.populated > pool.base &&
        madvise(pool.base, (size_t)(pool.populated - pool.base),
                MADV_POPULATE_WRITE) == 0)
        n += (unsigned long)(pool.populated - pool.base);
#endif
#if defined(DSF_HEAP_ARENA_KNOWN)
    /* and the C heap from the arena to its top: JSON trees, buffers,
    ** Lua's larger blocks, and the room they grow into */
    char *top = arena_lo ? sbrk(0) : NULL;
    if (top && top != (char *)-1 && top > arena_lo &&
        madvise(arena_lo, (size_t)(top - arena_lo), MADV_POPULATE_WRITE) == 0) {
        n += (unsigned long)(top - arena_lo);
        populated_top = top;
    }
#endif
    return n;
}

unsigned long dsf_heap_populate(void *p, size_t n)
{
#if defined(MADV_POPULATE_WRITE) && !defined(DSF_HEAP_CHECKED)
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(page - 1);
    if (hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)
        return (unsigned long)(hi - lo);
#else
    (void)p;
    (void)n;
#endif
    return 0;
}

unsigned long dsf_heap_follow(void)
{
#if defined(DSF_HEAP_ARENA_KNOWN)
    /* The arena's room beyond what dsf_heap_prefault populated is left to
    ** page faults in a short run (populating a page costs 1-2 us, a fault
    ** 15-20 us: a run that touches a few of them loses); from the 16th
    ** item on the run is long, and it is populated with what the heap
    ** grew by since. */
    static unsigned calls;
    if (!arena_lo)
        return 0;
    char *top = sbrk(0); /* glibc's cached break: no system call */
    if (top == (char *)-1 || top <= populated_top ||
        (++calls < 16 && top <= arena_top))
        return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    char *lo = (char *)((uintptr_t)populated_top & ~(page - 1));
    populated_top = top;
    if (madvise(lo, (size_t)(top - lo), MADV_POPULATE_WRITE) == 0)
        return (unsigned long)(top - lo);
#endif
    return 0;
}

#if !defined(DSF_HEAP_CHECKED)
/* A valgrind tool that replaces malloc (memcheck, massif, ...) preloads
** its own library besides vgpreload_core; callgrind does not, and
** measures the pool as it runs. */
static bool malloc_watched(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (!pre)
        return false;
    for (const char *s = strstr(pre, "vgpreload_"); s;
         s = strstr(s + 1, "vgpreload_"))
        if (strncmp(s, "vgpreload_core", 14) != 0)
            return true;
    return false;
}
#endif

static bool pool_on(void)
{
    if (pool.state)
        return pool.state > 0;
    pool.state = -1;
#if !defined(DSF_HEAP_CHECKED) && defined(MAP_ANONYMOUS) && \
    defined(MAP_NORESERVE)
    if (malloc_watched())
        return false;
    void *p = mmap(NULL, DSF_HEAP_POOL, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    pool.base = pool.bump = pool.populated = p;
    pool.end = pool.base + DSF_HEAP_POOL;
    pool.state = 1;
    return true;
#else
    return false;
#endif
}

bool dsf_heap_pooled(void) { return pool_on(); }

bool dsf_heap_may_pool(void)
{
#if !defined(DSF_HEAP_CHECKED) && defined(MAP_ANONYMOUS) && \
    defined(MAP_NORESERVE)
    return pool.state > 0 || (pool.state == 0 && !malloc_watched());
#else
    return false;
#endif
}

static bool in_pool(const void *p)
{
    return (const char *)p >= pool.base && (const char *)p < pool.end;
}

static size_t class_of(size_t n) { return (n - 1) / GRAIN; }

/* A block of class k, or NULL when the region is full. */
static void *take(size_t k)
{
    free_block *b = pool.free[k];
    if (b) {
        pool.free[k] = b->next;
        return b;
    }
    size_t size = (k + 1) * GRAIN;
    if ((size_t)(pool.end - pool.bump) < size)
        return NULL;
    char *p = pool.bump;
    pool.bump += size;
    if (pool.bump > pool.populated) {
        /* The next step of pages faulted in by one call (best effort:
        ** without it the pages fault one by one). */
        size_t step = DSF_HEAP_STEP;
        if ((size_t)(pool.end - pool.populated) < step)
            step = (size_t)(pool.end - pool.populated);
#if defined(MADV_POPULATE_WRITE)
        (void)madvise(pool.populated, step, MADV_POPULATE_WRITE);
#endif
        pool.populated += step;
    }
    return p;
}

static void give(void *p, size_t size)
{
    free_block *b = p;
    size_t k = class_of(size);
    b->next = pool.free[k];
    pool.free[k] = b;
}

/* Everything but the common cases of dsf_heap_realloc. Kept out of line:
** inlined, its registers and stack frame were saved and restored on every
** call of the fast path too (about 9 of its ~20 instructions). */
__attribute__((noinline)) static void *realloc_slow(void *p, size_t osize,
                                                    size_t nsize)
{
    bool pooled = p && pool.state > 0 && in_pool(p);
    if (nsize == 0) {
        if (pooled)
            give(p, osize);
        else
            free(p);
        return NULL;
    }
    if (nsize <= DSF_HEAP_SMALL && pool_on()) {
        if (pooled && class_of(osize) == class_of(nsize))
            return p;
        void *q = take(class_of(nsize));
        if (q) {
            if (p) {
                memcpy(q, p, osize < nsize ? osize : nsize);
                if (pooled)
                    give(p, osize);
                else
                    free(p);
            }
            return q;
        }
        if (pooled && nsize < osize)
            return p; /* shrinking never fails; filed as nsize later */
    }
    if (pooled) {
        void *q = malloc(nsize);
        if (!q)
            return NULL;
        memcpy(q, p, osize < nsize ? osize : nsize);
        give(p, osize);
        return q;
    }
    return realloc(p, nsize);
}

void *dsf_heap_realloc(void *p, size_t osize, size_t nsize)
{
    /* The common cases in a few instructions: a new small block from its
    ** free list or from the populated part of the region, and freeing a
    ** pooled block. */
    if (pool.state > 0) {
        if (!p) {
            size_t k = (nsize - 1) / GRAIN; /* nsize 0: huge, not small */
            if (k < NCLASS) {
                free_block *b = pool.free[k];
                if (b) {
                    pool.free[k] = b->next;
                    return b;
                }
                size_t size = (k + 1) * GRAIN;
                if ((size_t)(pool.populated - pool.bump) >= size) {
                    char *q = pool.bump;
                    pool.bump += size;
                    return q;
                }
            }
        } else if (nsize == 0 && in_pool(p)) {
            give(p, osize);
            return NULL;
        }
    }
    return realloc_slow(p, osize, nsize);
}
