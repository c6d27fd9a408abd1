/*
** limits.h -- what limits.c defines: the budget of one Lua state (its
** memory through the allocator, plus bytes the host keeps on the script's
** behalf), the instruction and time limits of each protected call, and
** the SIGALRM backstop for C functions the count hook cannot interrupt.
**
** The limiter is the state's allocator userdata, so any code holding a
** lua_State reaches its limits. Arming saves the limits of the call in
** progress and disarming restores them: a protected call nested inside
** another (a C function a script calls that calls back into Lua) leaves
** the outer call's instruction count, deadline and backstop as they were.
*/
#ifndef DSF_LIMITS_H
#define DSF_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <lua.h>

typedef struct dsf_limits {
    size_t memory;          /* bytes a state may allocate */
    uint64_t instructions;  /* VM instructions per call (granularity 1000) */
    double seconds;         /* wall-clock time per call */
} dsf_limits;

#define DSF_LIMITS_DEFAULT {64u << 20, 200000000u, 10.0}

typedef struct dsf_limiter dsf_limiter;

/* A limiter for one state; freed with dsf_limiter_free after the state
** is closed. */
dsf_limiter *dsf_limiter_new(const dsf_limits *limits);
void dsf_limiter_free(dsf_limiter *lim);

/* The lua_Alloc of every host; ud is its dsf_limiter. Counts bytes
** against limits.memory, together with what dsf_limits_charge charged. */
void *dsf_limiter_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* The limits of L's state, what is left of its memory, and the bytes its
** heap holds now (the host's data included). */
const dsf_limits *dsf_limits_of(lua_State *L);
size_t dsf_limits_memory_left(lua_State *L);
size_t dsf_limits_memory_used(lua_State *L);

/* Counts bytes the host keeps for the script outside the Lua state (its
** warnings) against the memory budget, for the state's lifetime. False,
** and nothing charged, when they do not fit. */
bool dsf_limits_charge(lua_State *L, size_t bytes);

/* Forgets what was charged (a renewed state starts with nothing kept for
** its new scripts, as a new state does). */
void dsf_limits_uncharge(lua_State *L);

/* The host's data in the state: what the host converts into the state
** for a script to read (the config a rule checks, in the plugin's own
** copy) is the host's, not the script's, so it does not count against
** the script's budget: between begin and end, allocations are not
** refused and, for large data (the caller says), the collector does not
** run (the data is all live; restarting it resets its pace, which costs
** more than a small conversion's collection), and the
** growth they made is then granted (the budget grows by it) until the
** next release (the data then left as garbage is collected when an
** allocation needs its room: Lua collects and tries again when the
** budget refuses one). For a grant above 4 MiB the collector stays
** stopped until the release: a cycle would only walk the data to find it
** live. What the host converts is bounded by its input (a config file), so the
** memory a hostile input takes is in proportion to its size, as for any
** reader of it. Calls do not nest: end follows begin before another
** begin (release ends a begin whose conversion raised). */
void dsf_limits_host_begin(lua_State *L, bool large);
void dsf_limits_host_end(lua_State *L);
void dsf_limits_host_release(lua_State *L);

/* True when the deadline of the last protected call on L has passed (C
** work on a call's result, such as converting it to JSON, runs on the
** call's time budget). */
bool dsf_limits_expired(lua_State *L);

/* Which of the instruction and time limits the current (or last) call
** hit; whether an allocation or a charge was refused since the call (or
** the last clear) began. */
enum dsf_limit_hit { DSF_HIT_NONE, DSF_HIT_INSTRUCTIONS, DSF_HIT_TIME };
enum dsf_limit_hit dsf_limits_hit(lua_State *L);
bool dsf_limits_memory_hit(lua_State *L);

/* Clears the memory-hit mark (before a load, which runs unarmed). */
void dsf_limits_clear_memory_hit(lua_State *L);

/* Marks L's state as holding code from outside the executable (any text
** chunk, or bytecode made from one): from now on its calls run with the
** instruction-count hook, including the call in progress. */
void dsf_limits_untrusted(lua_State *L);

/* Whether L's state has been marked by dsf_limits_untrusted. */
bool dsf_limits_is_untrusted(lua_State *L);

/* What arming replaced, for disarming to restore. */
typedef struct dsf_limits_saved {
    bool armed;
    uint64_t executed;
    enum dsf_limit_hit hit;
    struct timespec deadline;
    const char *what;
    const char *limit;
    struct timespec backstop;
    lua_State *state;
    int in_call;
} dsf_limits_saved;

/* Arms the instruction and time limits for one call on L named what
** (borrowed until the matching disarm), saving what was armed. */
void dsf_limits_arm(lua_State *L, const char *what, dsf_limits_saved *save);
void dsf_limits_disarm(lua_State *L, const dsf_limits_saved *save);

/* Restores the backstop's view of the call in progress to save after the
** state armed with it was closed (nothing may point at a closed state). */
void dsf_limits_closed(const dsf_limits_saved *save);

/* The SIGALRM backstop runs while at least one state exists: start when
** a state is created, stop after one is closed. */
void dsf_limits_start_backstop(void);
void dsf_limits_stop_backstop(void);

/* fn (async-signal-safe; NULL: none) runs when the backstop ends the
** process, before it exits: gen -o unlinks its temporary files. Returns
** the function it replaces (a wrapper calls it). */
typedef void (*dsf_cleanup_fn)(void);
dsf_cleanup_fn dsf_limits_backstop_cleanup(dsf_cleanup_fn fn);

/* In a child just forked (gen's parallel workers): restarts the
** backstop's timer, which fork does not inherit, if states exist. */
void dsf_limits_after_fork(void);

#endif
