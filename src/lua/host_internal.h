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
#include "lua/limits.h"

enum limit_kind { LIMIT_NONE, LIMIT_INSTRUCTIONS, LIMIT_TIME };

struct dsf_host {
    lua_State *L;
    dsf_limits limits;
    size_t mem_used;
    size_t charged;       /* bytes the host keeps for the script (warnings) */
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
