/*
** heap.h -- what heap.c defines: memory for the Lua states, cheap to
** allocate and already faulted in.
**
** A Lua state allocates many small objects; the heap they come from grows
** page by page, and on a virtual machine the first touch of each page is
** a trap costing ~11 us (about 300 of them, 3 ms, in `gen 8xa100`). Before
** the first state is created the C heap is grown once by an arena of
** DSF_HEAP_ARENA bytes, the first DSF_HEAP_POPULATE of them populated by
** the kernel in one call (madvise MADV_POPULATE_WRITE, ~1 us a page
** here), and kept: later growth also comes in arena-sized steps. The
** populated part is about what a one-shot command's malloc'd blocks
** reach (gen 8xa100: ~250 KB); populating the whole arena cost ~200
** pages more per run and saved no trap. Without glibc or that madvise it
** does nothing.
**
** Blocks of up to DSF_HEAP_SMALL bytes (strings, tables, closures, most
** of what undumping a chunk makes) come from a pool instead of malloc:
** one reserved region of DSF_HEAP_POOL bytes carved in 16-byte size
** classes, a free list per class. Lua passes a block's size when it frees
** or resizes it, so a block carries no header and allocating or freeing
** is a few instructions; the region is populated DSF_HEAP_STEP bytes at a
** time, one system call each. A freed block goes back to its class's list
** and is reused by the next block of that class (of any state: a matrix's
** per-variant states recycle each other's blocks), never returned to
** malloc or the system. What a state may use is still counted exactly by
** its limiter (lua/limits.h) in the sizes Lua asks for. When the region
** is full, or in a build or run that checks memory (AddressSanitizer,
** valgrind's memcheck or another tool that replaces malloc), every block
** comes from malloc, so those tools see each block.
*/
#ifndef DSF_HEAP_H
#define DSF_HEAP_H

#include <stdbool.h>
#include <stddef.h>

#define DSF_HEAP_ARENA (1u << 20)
#define DSF_HEAP_POPULATE (256u << 10)
#define DSF_HEAP_SMALL 512u
#define DSF_HEAP_POOL (256u << 20)
#define DSF_HEAP_STEP (64u << 10)

/* Prepares the heap once per process (later calls return at once).
** Returns the bytes populated (0 when nothing was done). */
unsigned long dsf_heap_prefault(void);

/* In a process that just forked, parent or worker: makes the pages of
** the pool and of the C heap from the arena to its top its own in one
** call each (copy-on-write broken for all at once) instead of one page
** fault each as they are written: the collector's marks alone touch
** every page with a live object, and the room above the C heap's blocks
** is where it grows. Returns the bytes populated (0 when nothing was
** done). */
unsigned long dsf_heap_after_fork(void);

/* For a loop over many items (variants, files), once per item: when the
** C heap has grown since the last call (or since the arena was set up),
** faults in the new room in one call (about 1 MiB at a time, the heap's
** top pad) instead of one page fault each as the items' data fill it.
** Cheap when it has not grown (no system call). Returns the bytes
** populated. */
unsigned long dsf_heap_follow(void);

/* Faults in the whole pages of the block p[0..n) in one call (a large
** array about to be filled). Returns the bytes populated. */
unsigned long dsf_heap_populate(void *p, size_t n);

/* The body of a Lua allocator (lua_Alloc without the limit): with
** nsize == 0 frees p (a block of osize bytes, or NULL) and returns NULL;
** otherwise returns a block of nsize bytes holding the first
** min(osize, nsize) bytes of p (p == NULL: osize must be 0), or NULL
** when there is no memory (p is then unchanged). Shrinking a block never
** fails. osize must be the size the block was last given. */
void *dsf_heap_realloc(void *p, size_t osize, size_t nsize);

/* Whether small blocks come from the pool in this process (false in a
** memory-checking build or run; decided on the first allocation). */
bool dsf_heap_pooled(void);

/* Whether they may: false in a memory-checking build or run, without
** deciding (no system call: the pool is reserved on first use). */
bool dsf_heap_may_pool(void);

#endif
