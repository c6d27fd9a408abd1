/*
** limits.h -- what limits.c defines: a host's memory budget (the
** allocator, and bytes the host keeps on a script's behalf), the
** instruction and time limits of one protected call, and the SIGALRM
** backstop.
*/
#ifndef DSF_LIMITS_H
#define DSF_LIMITS_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

#include "lua/host.h"

/* The lua_Alloc of every host (ud is the dsf_host): counts bytes against
** limits.memory, together with what dsf_limits_charge charged. */
void *dsf_host_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* The host that owns L. */
dsf_host *dsf_host_of(lua_State *L);

/* The memory budget of L's host, and what is left of it. */
size_t dsf_limits_memory(lua_State *L);
size_t dsf_limits_memory_left(lua_State *L);

/* Counts bytes the host keeps for the script outside the Lua state (its
** warnings) against the memory budget, for the state's lifetime. False,
** and nothing charged, when they do not fit. */
bool dsf_limits_charge(lua_State *L, size_t bytes);

/* True when the deadline of the last protected call on L has passed (C
** work on a call's result, such as converting it to JSON, runs on the
** call's time budget); *seconds is the time limit, for messages. */
bool dsf_limits_expired(lua_State *L, double *seconds);

/* Arms the instruction and time limits for one call named what (borrowed
** until dsf_limits_disarm), and disarms them. */
void dsf_limits_arm(dsf_host *h, const char *what);
void dsf_limits_disarm(dsf_host *h);

/* The SIGALRM backstop runs while at least one host exists: start when a
** state is created, stop after one is closed. */
void dsf_limits_start_backstop(void);
void dsf_limits_stop_backstop(void);

#endif
