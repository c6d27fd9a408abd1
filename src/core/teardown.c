/* teardown.c -- see teardown.h. */
#include "core/teardown.h"

#include <stdlib.h>
#include <string.h>

#if defined(DSF_HAVE_VALGRIND_H)
#include <valgrind/valgrind.h>
#endif

#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__)
#define LEAK_CHECKED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define LEAK_CHECKED_BUILD 1
#endif
#endif

#if !defined(LEAK_CHECKED_BUILD)
/* valgrind preloads its core into the program it runs. */
static bool under_valgrind(void)
{
#if defined(DSF_HAVE_VALGRIND_H)
    if (RUNNING_ON_VALGRIND)
        return true;
#endif
    const char *pre = getenv("LD_PRELOAD");
    return pre && strstr(pre, "vgpreload") != NULL;
}
#endif

bool dsf_teardown_by_exit(void)
{
#if defined(LEAK_CHECKED_BUILD)
    return false;
#else
    const char *full = getenv("DSFORGE_FULL_TEARDOWN");
    if (full && strcmp(full, "0") == 0)
        return true; /* asked for: measuring the exit under callgrind */
    return !(full && *full) && !under_valgrind();
#endif
}
