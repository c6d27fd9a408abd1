/* stale.c -- see stale.h. */
#define _DEFAULT_SOURCE
#include "core/stale.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

bool dsf_pid_start(long pid, struct timespec *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* after the command's name in parentheses (which may hold spaces and
    ** parentheses): field 3 onwards; the start time is field 22, in clock
    ** ticks since boot */
    char *p = strrchr(buf, ')');
    if (!p)
        return false;
    p++;
    for (int field = 3; field < 22; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    char *end;
    unsigned long long ticks = strtoull(p, &end, 10);
    long hz = sysconf(_SC_CLK_TCK);
    if (end == p || hz <= 0)
        return false;
    /* boot time on the wall clock: now less the time since boot */
    struct timespec real, boot;
    if (clock_gettime(CLOCK_REALTIME, &real) != 0 ||
        clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
        return false;
    double s = (double)(real.tv_sec - boot.tv_sec) +
               (double)(real.tv_nsec - boot.tv_nsec) / 1e9 +
               (double)ticks / (double)hz;
    start->tv_sec = (time_t)s;
    start->tv_nsec = (long)((s - (double)start->tv_sec) * 1e9);
    return true;
}

bool dsf_pid_stale(long pid, const struct timespec *made)
{
    if (pid <= 0 || (pid_t)pid != pid)
        return false;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return true;
    struct timespec start;
    if (!dsf_pid_start(pid, &start))
        return false;
    /* a second's slack: the start is known to the clock tick, and the
    ** wall clock may have been stepped since boot */
    return made->tv_sec + 1 < start.tv_sec;
}
