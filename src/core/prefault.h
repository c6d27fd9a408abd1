/*
** prefault.h -- mapping the executable's code and read-only data in one
** call instead of one page fault at a time.
**
** On the virtual machines dsforge is measured on, a page fault costs
** 15-20 microseconds; a command that runs Lua touches about thirty pages
** of the executable's code and embedded bytecode (and a dozen of libc's)
** for the first time after main(), and a few pages of stack, while
** mapping all of them with MADV_POPULATE_READ costs about as much as four
** faults.
*/
#ifndef DSF_PREFAULT_H
#define DSF_PREFAULT_H

/* Maps the read-only segments of the executable and of libc into this
** process's page tables, and the 64 KiB of stack below the caller's frame
** (once; later calls return at once). Returns the bytes mapped (0 where
** the kernel lacks MADV_POPULATE_READ/WRITE). */
unsigned long dsf_prefault_image(void);

#endif
