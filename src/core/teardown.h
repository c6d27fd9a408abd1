/*
** teardown.h -- what teardown.c defines: whether memory still held when a
** command ends may be left to the operating system.
**
** Closing a Lua state frees every object one by one (a tenth of a short
** `gen`); the kernel takes the whole address space back at exit for
** nothing. A command that is about to return to main may therefore skip
** its last frees, but only where no leak checker reads the heap at exit:
** builds with AddressSanitizer (or without NDEBUG: every debug build),
** runs under valgrind, and runs with DSFORGE_FULL_TEARDOWN set to anything
** but 0 free everything as before. DSFORGE_FULL_TEARDOWN=0 skips the frees
** under valgrind too (to count the instructions the skip saves).
*/
#ifndef DSF_TEARDOWN_H
#define DSF_TEARDOWN_H

#include <stdbool.h>

/* True when the caller, which exits right after, may leave what it holds
** to the operating system instead of freeing it. */
bool dsf_teardown_by_exit(void);

#endif
