/*
** heap.h -- what heap.c defines: memory for the Lua states that is
** already faulted in.
**
** A Lua state allocates many small objects; the heap they come from grows
** page by page, and on a virtual machine the first touch of each page is
** a trap costing ~11 us (about 300 of them, 3 ms, in `gen 8xa100`). Before
** the first state is created the C heap is grown once by an arena of
** DSF_HEAP_ARENA bytes, its pages populated by the kernel in one call
** (madvise MADV_POPULATE_WRITE), and kept: later growth also comes in
** arena-sized steps. Without glibc or that madvise it does nothing.
*/
#ifndef DSF_HEAP_H
#define DSF_HEAP_H

#define DSF_HEAP_ARENA (2u << 20)

/* Prepares the heap once per process (later calls return at once).
** Returns the bytes populated (0 when nothing was done). */
unsigned long dsf_heap_prefault(void);

#endif
