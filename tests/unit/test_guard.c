/*
** test_guard.c -- C memory owned by a guard on a Lua stack (lua/guard.h):
** freed once on the normal path, and freed by the collector or lua_close
** when an error (a script's, or the memory limit's) unwinds past the C
** function that held it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lua/guard.h"

static int released; /* how many owned blocks were freed */

static void counting_free(void *p)
{
    free(p);
    released++;
}

/* Takes a block, then returns normally (mode 0), raises an error (mode
** 1), or pushes a string larger than the state may allocate (mode 2). */
static int l_hold(lua_State *L)
{
    int mode = (int)luaL_checkinteger(L, 1);
    dsf_guard *g = dsf_guard_push(L);
    size_t n = 1u << 20;
    char *block = malloc(n);
    assert_non_null(block);
    memset(block, 'x', n);
    g->p = block;
    g->release = counting_free;
    if (mode == 1)
        return luaL_error(L, "failed while holding the block");
    if (mode == 2)
        lua_pushlstring(L, block, n); /* over the budget: raises */
    else
        lua_pushinteger(L, (lua_Integer)n);
    dsf_guard_release(g);
    return 1;
}

/* An allocator refusing growth past 256 KiB in use. */
static size_t in_use;
static void *budget_alloc(void *ud, void *p, size_t osize, size_t nsize)
{
    (void)ud;
    if (!p)
        osize = 0;
    if (nsize == 0) {
        free(p);
        in_use -= osize;
        return NULL;
    }
    if (nsize > osize && in_use + (nsize - osize) > (256u << 10))
        return NULL;
    void *q = realloc(p, nsize);
    if (q)
        in_use = in_use - osize + nsize;
    return q;
}

static int call_hold(lua_State *L, int mode)
{
    lua_pushcfunction(L, l_hold);
    lua_pushinteger(L, mode);
    int status = lua_pcall(L, 1, 1, 0);
    lua_pop(L, 1);
    return status;
}

static void released_once_on_the_normal_path(void **state)
{
    (void)state;
    released = 0;
    lua_State *L = luaL_newstate();
    assert_int_equal(call_hold(L, 0), LUA_OK);
    assert_int_equal(released, 1);
    lua_gc(L, LUA_GCCOLLECT); /* the emptied guard frees nothing more */
    lua_close(L);
    assert_int_equal(released, 1);
}

static void freed_by_the_collector_after_an_error(void **state)
{
    (void)state;
    released = 0;
    lua_State *L = luaL_newstate();
    assert_int_equal(call_hold(L, 1), LUA_ERRRUN);
    assert_int_equal(released, 0); /* garbage, not yet collected */
    lua_gc(L, LUA_GCCOLLECT);
    assert_int_equal(released, 1);
    lua_close(L);
    assert_int_equal(released, 1);
}

static void freed_by_close_after_an_error(void **state)
{
    (void)state;
    released = 0;
    lua_State *L = luaL_newstate();
    assert_int_equal(call_hold(L, 1), LUA_ERRRUN);
    lua_close(L);
    assert_int_equal(released, 1);
}

static void freed_after_the_memory_limit(void **state)
{
    (void)state;
    released = 0;
    in_use = 0;
    lua_State *L = lua_newstate(budget_alloc, NULL);
    assert_non_null(L);
    assert_int_equal(call_hold(L, 2), LUA_ERRMEM);
    lua_close(L);
    assert_int_equal(released, 1);
    assert_int_equal(in_use, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(released_once_on_the_normal_path),
        cmocka_unit_test(freed_by_the_collector_after_an_error),
        cmocka_unit_test(freed_by_close_after_an_error),
        cmocka_unit_test(freed_after_the_memory_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
