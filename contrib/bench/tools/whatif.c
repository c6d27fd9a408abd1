/* whatif.c -- "what would it save?" experiments on an unchanged dsforge
** binary, as an LD_PRELOAD library. Each switch is an environment variable:
**
**   WHATIF_NOHOOK=1   drop dsforge's instruction-count hook (a Lua count
**                     hook makes the VM trap on every instruction)
**   WHATIF_NOCLOSE=1  skip lua_close (the cost of tearing the Lua states
**                     down; leaks, fine for a process about to exit)
**
**   cc -O2 -shared -fPIC $(pkg-config --cflags lua5.4) -o whatif.so \
**      whatif.c -ldl
**   WHATIF_NOHOOK=1 LD_PRELOAD=$PWD/whatif.so dsforge gen ...
**
** The limits are not enforced under WHATIF_NOHOOK: for measuring only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <lua.h>

typedef void (*sethook_fn)(lua_State *, lua_Hook, int, int);
typedef void (*close_fn)(lua_State *);

void lua_sethook(lua_State *L, lua_Hook f, int mask, int count)
{
    static sethook_fn real;
    if (!real)
        real = (sethook_fn)dlsym(RTLD_NEXT, "lua_sethook");
    if (f && getenv("WHATIF_NOHOOK"))
        return;
    real(L, f, mask, count);
}

void lua_close(lua_State *L)
{
    static close_fn real;
    if (!real)
        real = (close_fn)dlsym(RTLD_NEXT, "lua_close");
    if (!getenv("WHATIF_NOCLOSE"))
        real(L);
}
