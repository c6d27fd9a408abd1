/*
** host_internal.h -- what the host's files share: the host structure, the
** limits (limits.c), the sandbox (sandbox.c) and source loading (host.c).
*/
#ifndef DSF_HOST_INTERNAL_H
#define DSF_HOST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <lua.h>

#include "lua/host.h"

enum limit_kind { LIMIT_NONE, LIMIT_INSTRUCTIONS, LIMIT_TIME };

struct dsf_host {
    lua_State *L;
    dsf_limits limits;
    size_t mem_used;
    bool mem_hit;
    uint64_t executed;
    struct timespec deadline;
    enum limit_kind hit;
    const char *const *module_dirs;
    size_t n_module_dirs;
    dsf_srccache *sources;
    dsf_diags *warnings;
    char limit_text[80];  /* the backstop message's tail */
    bool input_error;     /* the script called dsforge.fail */
};

/* Registry keys of the sandbox. */
#define DSF_BASE_KEY "dsforge.base"     /* the allow-listed globals */
#define DSF_ENVMT_KEY "dsforge.env_mt"  /* metatable of chunk envs */
#define DSF_LOADED_KEY "dsforge.loaded" /* require's module cache */

/* limits.c */

/* The lua_Alloc of every host: counts bytes against limits.memory. */
void *dsf_host_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* The host that owns L. */
dsf_host *dsf_host_of(lua_State *L);

/* Arms the instruction and time limits for one call named what (borrowed
** until dsf_limits_disarm), and disarms them. */
void dsf_limits_arm(dsf_host *h, const char *what);
void dsf_limits_disarm(dsf_host *h);

/* The SIGALRM backstop runs while at least one host exists: start when a
** state is created, stop after one is closed. */
void dsf_limits_start_backstop(void);
void dsf_limits_stop_backstop(void);

/* sandbox.c */

/* Builds the sandbox in a new state (run protected: may raise). */
int dsf_sandbox_setup(lua_State *L);

/* Gives the function on top of the stack its own chunk environment. */
void dsf_sandbox_set_env(lua_State *L);

/* host.c */

/* Loads a cached source (see host.c) and leaves the function or the error
** message on the stack; returns Lua's status. */
int dsf_host_load_source(lua_State *L, const dsf_source *src,
                         const char *chunkname);

#endif
