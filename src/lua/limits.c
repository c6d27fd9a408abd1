/*
** limits.c -- see limits.h: a state's memory budget (allocator), the
** instruction and time limits (count hook), and the SIGALRM backstop for C
** functions the hook cannot interrupt.
*/
#define _POSIX_C_SOURCE 200809L
#include "lua/limits.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "core/xalloc.h"
#include "lua/errobj.h"
#include "core/heap.h"

#define HOOK_EVERY 1000

struct dsf_limiter {
    dsf_limits limits;
    size_t mem_used;
    size_t charged;        /* bytes the host keeps for the script */
    size_t granted;        /* bytes of the host's data in the state */
    size_t budget;         /* limits.memory + granted, or SIZE_MAX while
                           ** the host converts its data */
    size_t host_from;      /* mem_used at dsf_limits_host_begin */
    bool host;             /* between dsf_limits_host_begin and _end */
    bool gc_was_running;
    bool mem_hit;
    bool armed;
    bool untrusted;        /* holds code from outside the executable */
    uint64_t executed;
    struct timespec deadline;
    enum dsf_limit_hit hit;
    char limit_text[80];   /* the backstop message's tail */
};

dsf_limiter *dsf_limiter_new(const dsf_limits *limits)
{
    dsf_limiter *lim = dsf_xcalloc(1, sizeof *lim);
    lim->limits = *limits;
    lim->budget = limits->memory;
    snprintf(lim->limit_text, sizeof lim->limit_text,
             ": time limit of %.3g s exceeded inside a C function; "
             "stopped\n", limits->seconds);
    return lim;
}

void dsf_limiter_free(dsf_limiter *lim) { free(lim); }

static dsf_limiter *limiter_of(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* ------------------------------------------------------------------ */
/* Memory: the hlua_alloc model. A free never fails; growth past the
** budget returns NULL, which Lua turns into LUA_ERRMEM. */

void *dsf_limiter_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    dsf_limiter *h = ud;
    if (!ptr)
        osize = 0; /* osize is a type tag then, not a size */
    if (nsize == 0) {
        dsf_heap_realloc(ptr, osize, 0);
        h->mem_used -= osize;
        return NULL;
    }
    if (nsize > osize &&
        h->mem_used + h->charged + (nsize - osize) > h->budget) {
        h->mem_hit = true;
        return NULL;
    }
    void *p = dsf_heap_realloc(ptr, osize, nsize);
    if (!p)
        return NULL;
    h->mem_used = h->mem_used - osize + nsize;
    return p;
}

const dsf_limits *dsf_limits_of(lua_State *L) { return &limiter_of(L)->limits; }

size_t dsf_limits_memory_used(lua_State *L) { return limiter_of(L)->mem_used; }

size_t dsf_limits_memory_left(lua_State *L)
{
    const dsf_limiter *h = limiter_of(L);
    size_t used = h->mem_used + h->charged;
    size_t budget = h->limits.memory + h->granted;
    return used < budget ? budget - used : 0;
}

void dsf_limits_host_begin(lua_State *L, bool large)
{
    dsf_limiter *h = limiter_of(L);
    h->host = true;
    h->budget = SIZE_MAX;
    h->host_from = h->mem_used;
    /* (stopping and restarting the collector resets its pace, which costs
    ** more than it saves on an ordinary config: only for a large one) */
    h->gc_was_running = large && lua_gc(L, LUA_GCISRUNNING) != 0;
    if (h->gc_was_running)
        lua_gc(L, LUA_GCSTOP);
}

/* Host data above this keeps the collector stopped until the release: a
** collection cycle would walk it all only to find it live (a config of a
** million keys), and what the scripts leave meanwhile is collected when
** the budget refuses an allocation (Lua collects and tries again). */
#define HOST_KEEP_STOPPED (4u << 20)

void dsf_limits_host_end(lua_State *L)
{
    dsf_limiter *h = limiter_of(L);
    h->host = false;
    if (h->mem_used > h->host_from)
        h->granted += h->mem_used - h->host_from;
    h->budget = h->limits.memory + h->granted;
    if (h->gc_was_running && h->granted <= HOST_KEEP_STOPPED) {
        lua_gc(L, LUA_GCRESTART);
        h->gc_was_running = false;
    }
}

void dsf_limits_host_release(lua_State *L)
{
    dsf_limiter *h = limiter_of(L);
    if (h->host) /* a conversion that raised between begin and end */
        dsf_limits_host_end(L);
    if (h->gc_was_running) { /* kept stopped for a large grant */
        lua_gc(L, LUA_GCRESTART);
        h->gc_was_running = false;
    }
    /* (no collection here: the copy is garbage, and an allocation the
    ** budget then refuses makes Lua collect it and try again) */
    h->granted = 0;
    h->budget = h->limits.memory;
}

bool dsf_limits_charge(lua_State *L, size_t bytes)
{
    dsf_limiter *h = limiter_of(L);
    if (bytes > dsf_limits_memory_left(L)) {
        h->mem_hit = true;
        return false;
    }
    h->charged += bytes;
    return true;
}

enum dsf_limit_hit dsf_limits_hit(lua_State *L) { return limiter_of(L)->hit; }

void dsf_limits_uncharge(lua_State *L) { limiter_of(L)->charged = 0; }

bool dsf_limits_memory_hit(lua_State *L) { return limiter_of(L)->mem_hit; }

void dsf_limits_clear_memory_hit(lua_State *L) { limiter_of(L)->mem_hit = false; }

/* ------------------------------------------------------------------ */
/* Time and instructions. */

static struct timespec now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

static bool past(struct timespec t, struct timespec deadline)
{
    return t.tv_sec > deadline.tv_sec ||
           (t.tv_sec == deadline.tv_sec && t.tv_nsec >= deadline.tv_nsec);
}

bool dsf_limits_expired(lua_State *L)
{
    return past(now(), limiter_of(L)->deadline);
}

/* Once a limit is hit the hook re-arms itself to run on every instruction,
** so a pcall inside the script catches the error only to hit it again on
** its next instruction: the error always reaches dsf_host_call. The error
** is an object of kind "limit" located at the interrupted function. */
static void limit_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    dsf_limiter *h = limiter_of(L);
    if (h->hit == DSF_HIT_NONE) {
        h->executed += HOOK_EVERY;
        if (h->untrusted && h->executed > h->limits.instructions)
            h->hit = DSF_HIT_INSTRUCTIONS;
        else if (past(now(), h->deadline))
            h->hit = DSF_HIT_TIME;
        else
            return;
        lua_sethook(L, limit_hook, LUA_MASKCOUNT, 1);
    }
    /* lua_pushfstring knows neither %llu nor %.3g: format here. */
    char msg[96];
    if (h->hit == DSF_HIT_INSTRUCTIONS)
        snprintf(msg, sizeof msg, "instruction limit of %llu exceeded",
                 (unsigned long long)h->limits.instructions);
    else
        snprintf(msg, sizeof msg, "time limit of %.3g s exceeded",
                 h->limits.seconds);
    dsf_errobj_raise(L, 0, DSF_ERR_LIMIT, "%s", msg);
}

/* The backstop for C functions the hook cannot interrupt (a pathological
** pattern in string.find, a huge table.concat): while any state exists, a
** periodic SIGALRM checks whether the current call has run past its
** backstop deadline (1.5 x the limit + 1 s, so the hook gets the first
** chance to stop the script cleanly); then the process ends with exit
** code 5 and a message prepared before the call. Arming a call costs no
** system call: it only sets the deadline and a flag. The handler does only
** async-signal-safe work (clock_gettime, write, _exit). The variables
** describe the innermost armed call; arming saves them, disarming restores
** them. */
#define BACKSTOP_PERIOD_USEC 200000

static lua_State *volatile alarm_state; /* the current call's state */
static const char *volatile alarm_what;  /* the current call's name */
static const char *volatile alarm_limit; /* ": time limit of 10 s ..." */
static volatile sig_atomic_t in_call;
static struct timespec call_backstop;
static int live_hosts;

/* A state without the count hook (only built-in code) is stopped here:
** once its call is past the time limit, the hook is set to run on the
** next instruction and raises the limit error like a counted call's.
** lua_sethook is safe in a signal handler (lua.c's SIGINT handler). */
static void arm_late(lua_State *L, struct timespec t)
{
    void *ud;
    lua_getallocf(L, &ud);
    const dsf_limiter *h = ud;
    if (!h->untrusted && h->armed && past(t, h->deadline))
        lua_sethook(L, limit_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT,
                    1);
}

static volatile dsf_cleanup_fn backstop_cleanup;

dsf_cleanup_fn dsf_limits_backstop_cleanup(dsf_cleanup_fn fn)
{
    dsf_cleanup_fn was = backstop_cleanup;
    backstop_cleanup = fn;
    return was;
}

static void on_alarm(int sig)
{
    (void)sig;
    if (!in_call)
        return;
    struct timespec t = now();
    if (!past(t, call_backstop)) {
        if (alarm_state)
            arm_late(alarm_state, t);
        return;
    }
    /* write, poll and strlen are async-signal-safe; what stays valid for
    ** the whole call. The call may be blocked writing to a stderr nobody
    ** drains (a full pipe): then the message would block too, so it is
    ** written only when stderr can take it (a pipe that polls writable
    ** takes a short write whole), and the process ends either way. */
    struct pollfd pfd = {STDERR_FILENO, POLLOUT, 0};
    if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT)) {
        const char *what = alarm_what ? alarm_what : "a Lua call";
        ssize_t w = write(STDERR_FILENO, "dsforge: error: ", 16);
        w = write(STDERR_FILENO, what, strlen(what));
        if (alarm_limit)
            w = write(STDERR_FILENO, alarm_limit, strlen(alarm_limit));
        (void)w;
    }
    if (backstop_cleanup)
        backstop_cleanup();
    _exit(5);
}

void dsf_limits_start_backstop(void)
{
    if (live_hosts++ > 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART; /* other system calls just continue */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = BACKSTOP_PERIOD_USEC;
    it.it_interval.tv_usec = BACKSTOP_PERIOD_USEC;
    setitimer(ITIMER_REAL, &it, NULL);
}

void dsf_limits_after_fork(void)
{
    /* A child does not inherit its parent's interval timer. */
    if (live_hosts <= 0)
        return;
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = BACKSTOP_PERIOD_USEC;
    it.it_interval.tv_usec = BACKSTOP_PERIOD_USEC;
    setitimer(ITIMER_REAL, &it, NULL);
}

void dsf_limits_stop_backstop(void)
{
    if (--live_hosts > 0)
        return;
    in_call = 0;
    alarm_limit = NULL;
    alarm_what = NULL;
    alarm_state = NULL;
    struct itimerval it;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
}

static struct timespec after(struct timespec t, double seconds)
{
    double whole = (double)(long)seconds;
    t.tv_sec += (time_t)whole;
    t.tv_nsec += (long)((seconds - whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

void dsf_limits_arm(lua_State *L, const char *what, dsf_limits_saved *save)
{
    dsf_limiter *h = limiter_of(L);
    save->armed = h->armed;
    save->executed = h->executed;
    save->hit = h->hit;
    save->deadline = h->deadline;
    save->what = alarm_what;
    save->limit = alarm_limit;
    save->backstop = call_backstop;
    save->state = alarm_state;
    save->in_call = in_call;
    h->armed = true;
    h->executed = 0;
    h->hit = DSF_HIT_NONE;
    h->mem_hit = false;
    struct timespec t = now();
    h->deadline = after(t, h->limits.seconds);
    if (h->untrusted)
        lua_sethook(L, limit_hook, LUA_MASKCOUNT, HOOK_EVERY);
    else
        lua_sethook(L, NULL, 0, 0);
    /* The handler assembles the message from these parts: arming a call
    ** formats nothing. Clear the flag while the parts change. */
    in_call = 0;
    alarm_limit = h->limit_text;
    alarm_what = what;
    alarm_state = L;
    call_backstop = after(t, h->limits.seconds * 1.5 + 1.0);
    in_call = 1;
}

static void restore_backstop(const dsf_limits_saved *save)
{
    in_call = 0;
    alarm_what = save->what;
    alarm_limit = save->limit;
    call_backstop = save->backstop;
    alarm_state = save->state;
    in_call = save->in_call;
}

void dsf_limits_closed(const dsf_limits_saved *save) { restore_backstop(save); }

void dsf_limits_disarm(lua_State *L, const dsf_limits_saved *save)
{
    dsf_limiter *h = limiter_of(L);
    restore_backstop(save);
    h->armed = save->armed;
    if (!save->armed) {
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    /* The outer call goes on where it was (a limit the inner call hit is
    ** the inner call's: it ended). */
    h->executed = save->executed;
    h->hit = save->hit;
    h->deadline = save->deadline;
    if (save->hit != DSF_HIT_NONE)
        lua_sethook(L, limit_hook, LUA_MASKCOUNT, 1);
    else if (h->untrusted)
        lua_sethook(L, limit_hook, LUA_MASKCOUNT, HOOK_EVERY);
    else
        lua_sethook(L, NULL, 0, 0); /* the timer arms it when due */
}

void dsf_limits_untrusted(lua_State *L)
{
    dsf_limiter *h = limiter_of(L);
    if (h->untrusted)
        return;
    h->untrusted = true;
    /* The call in progress (a require of a file from a built-in) counts
    ** from here: nothing of the new code has run yet. */
    if (h->armed && h->hit == DSF_HIT_NONE)
        lua_sethook(L, limit_hook, LUA_MASKCOUNT, HOOK_EVERY);
}

bool dsf_limits_is_untrusted(lua_State *L) { return limiter_of(L)->untrusted; }
