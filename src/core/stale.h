/*
** stale.h -- whether a file a process left is its debris: the process is
** gone, or the process now holding its id started after the file (the id
** was reused).
*/
#ifndef DSF_STALE_H
#define DSF_STALE_H

#include <stdbool.h>
#include <time.h>

/* True when no running process made a file at time made carrying the
** process id pid: no process has that id (kill(pid, 0) says ESRCH), or
** the one that has it started more than a second after made (its start
** from /proc/PID/stat; without /proc, a live id is taken as the
** maker's). */
bool dsf_pid_stale(long pid, const struct timespec *made);

/* The start time of process pid (wall clock), from /proc; false when it
** cannot be read. */
bool dsf_pid_start(long pid, struct timespec *start);

#endif
