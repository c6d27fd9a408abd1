/* prefault.c -- see prefault.h. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "core/prefault.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__) && defined(__GLIBC__)
#include <link.h>
#include <sys/mman.h>
#endif

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels say EINVAL */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define DSF_PREFAULT_STACK (64u << 10)

#if defined(__linux__) && defined(__GLIBC__)
/* The executable ("" as its name) and libc: the code a command runs after
** main() comes from those two. */
static bool wanted(const char *name)
{
    if (!name || !*name)
        return true;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    return !strncmp(base, "libc.so", 7);
}

static int populate_object(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    unsigned long *total = ud;
    if (!wanted(info->dlpi_name))
        return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
            continue; /* written segments would be copied on write anyway */
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
        uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz +
                        page - 1) & ~(page - 1);
        if (madvise((void *)lo, hi - lo, MADV_POPULATE_READ) == 0)
            *total += (unsigned long)(hi - lo);
        else
            return 1; /* not supported here: stop */
    }
    return 0;
}
#endif

/* The stack below the caller's frame, up to DSF_PREFAULT_STACK bytes: the
** kernel gives a new process's stack mapping 128 KiB below its top, and a
** Lua command's C and Lua calls reach some tens of KiB into it, a fault
** per page. Outside the mapping madvise fails, and nothing is done. */
static unsigned long populate_stack(void)
{
    volatile char here = 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t hi = ((uintptr_t)&here) & ~(page - 1); /* below this frame */
    uintptr_t lo = hi - DSF_PREFAULT_STACK;
    (void)here;
#if defined(MADV_POPULATE_WRITE)
    if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)
        return (unsigned long)(hi - lo);
#endif
    return 0;
}

unsigned long dsf_prefault_image(void)
{
    static bool done;
    if (done)
        return 0;
    done = true;
    unsigned long total = 0;
#if defined(__linux__) && defined(__GLIBC__)
    dl_iterate_phdr(populate_object, &total);
    total += populate_stack();
#endif
    return total;
}
