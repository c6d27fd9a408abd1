/*
** test_callscope.c -- functions handed to a script that reach a call's C
** data (lua/callscope.h): they work inside their scope, in nested scopes,
** and raise a clear error once their scope is closed, reading nothing.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lua/callscope.h"

/* The function under test: returns the integer its data points to. */
static int l_peek(lua_State *L)
{
    const int *data = dsf_callscope_data(L, "ctx.peek");
    lua_pushinteger(L, *data);
    return 1;
}

/* Calls the function at the top of the stack (popped); returns its
** integer result, or -1 with *msg the error message (owned by L until the
** next call). */
static long call_peek(lua_State *L, const char **msg)
{
    *msg = NULL;
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
        *msg = lua_tostring(L, -1);
        return -1;
    }
    long v = (long)lua_tointeger(L, -1);
    lua_pop(L, 1);
    return v;
}

static void works_only_while_open(void **state)
{
    (void)state;
    lua_State *L = luaL_newstate();
    int data = 42;
    dsf_callscope s;
    dsf_callscope_open(&s);
    dsf_callscope_push(L, &s, l_peek, &data);
    lua_pushvalue(L, -1); /* kept, as a script keeps it */
    lua_setglobal(L, "kept");
    const char *msg;
    assert_int_equal(call_peek(L, &msg), 42);
    dsf_callscope_close(&s);
    data = 0; /* (the data is gone: whatever is there is not read) */
    lua_getglobal(L, "kept");
    assert_int_equal(call_peek(L, &msg), -1);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "ctx.peek was kept past the call that "
                                "handed it over"));
    lua_close(L);
}

static void a_later_scope_does_not_revive_it(void **state)
{
    (void)state;
    lua_State *L = luaL_newstate();
    int first = 1, second = 2;
    dsf_callscope a, b;
    dsf_callscope_open(&a);
    dsf_callscope_push(L, &a, l_peek, &first);
    lua_setglobal(L, "from_a");
    dsf_callscope_close(&a);
    /* the next call's scope (often at the same stack address) */
    dsf_callscope_open(&b);
    dsf_callscope_push(L, &b, l_peek, &second);
    lua_setglobal(L, "from_b");
    const char *msg;
    lua_getglobal(L, "from_b");
    assert_int_equal(call_peek(L, &msg), 2);
    lua_getglobal(L, "from_a");
    assert_int_equal(call_peek(L, &msg), -1);
    assert_non_null(strstr(msg, "kept past the call"));
    dsf_callscope_close(&b);
    lua_close(L);
}

static void nested_scopes(void **state)
{
    (void)state;
    lua_State *L = luaL_newstate();
    int outer_data = 7, inner_data = 8;
    dsf_callscope outer, inner;
    dsf_callscope_open(&outer);
    dsf_callscope_push(L, &outer, l_peek, &outer_data);
    lua_setglobal(L, "outer");
    dsf_callscope_open(&inner);
    dsf_callscope_push(L, &inner, l_peek, &inner_data);
    lua_setglobal(L, "inner");
    const char *msg;
    lua_getglobal(L, "outer"); /* an outer scope's function, inside */
    assert_int_equal(call_peek(L, &msg), 7);
    lua_getglobal(L, "inner");
    assert_int_equal(call_peek(L, &msg), 8);
    dsf_callscope_close(&inner);
    lua_getglobal(L, "outer");
    assert_int_equal(call_peek(L, &msg), 7);
    lua_getglobal(L, "inner");
    assert_int_equal(call_peek(L, &msg), -1);
    dsf_callscope_close(&outer);
    lua_getglobal(L, "outer");
    assert_int_equal(call_peek(L, &msg), -1);
    lua_close(L);
}

static void closing_out_of_order_keeps_the_list_whole(void **state)
{
    (void)state;
    lua_State *L = luaL_newstate();
    int x = 1, y = 2, z = 3;
    dsf_callscope a, b, c;
    dsf_callscope_open(&a);
    dsf_callscope_open(&b);
    dsf_callscope_open(&c);
    dsf_callscope_push(L, &a, l_peek, &x);
    lua_setglobal(L, "fa");
    dsf_callscope_push(L, &c, l_peek, &z);
    lua_setglobal(L, "fc");
    dsf_callscope_push(L, &b, l_peek, &y);
    lua_setglobal(L, "fb");
    dsf_callscope_close(&b); /* the middle one first */
    const char *msg;
    lua_getglobal(L, "fa");
    assert_int_equal(call_peek(L, &msg), 1);
    lua_getglobal(L, "fc");
    assert_int_equal(call_peek(L, &msg), 3);
    lua_getglobal(L, "fb");
    assert_int_equal(call_peek(L, &msg), -1);
    dsf_callscope_close(&c);
    dsf_callscope_close(&a);
    lua_getglobal(L, "fa");
    assert_int_equal(call_peek(L, &msg), -1);
    lua_close(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(works_only_while_open),
        cmocka_unit_test(a_later_scope_does_not_revive_it),
        cmocka_unit_test(nested_scopes),
        cmocka_unit_test(closing_out_of_order_keeps_the_list_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
