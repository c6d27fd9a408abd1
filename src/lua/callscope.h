/*
** callscope.h -- what callscope.c defines: functions a call hands a script
** that reach the call's C data (ctx.report, ctx.read_json, ctx.is_file,
** ctx.read_text), kept safe past the call.
**
** Such a function holds the address of data on the caller's C stack. A
** script may keep it (in an upvalue, a global, a table of its module) and
** call it after that call has returned, when the data is gone: reading it
** then would read freed stack. So each such function also holds the number
** of the call's scope, which the caller opens before the call and closes
** after it, however it ended; called outside its scope, the function
** raises an error naming itself and reads nothing.
*/
#ifndef DSF_CALLSCOPE_H
#define DSF_CALLSCOPE_H

#include <lua.h>

#include "lua/values.h" /* DSF_LJMP */

typedef struct dsf_callscope {
    unsigned long id;             /* never 0 while open */
    struct dsf_callscope *outer;  /* the scope open before this one */
} dsf_callscope;

/* Opens s (owned by the caller, usually on its stack: it must outlive the
** call) before the call. Scopes nest: the functions of an outer scope
** still work inside an inner one. */
void dsf_callscope_open(dsf_callscope *s);

/* Closes s, the innermost open scope, after the call, whether it returned
** or raised: from now on the functions pushed with s raise. */
void dsf_callscope_close(dsf_callscope *s);

/* Pushes fn as a closure over data (borrowed: valid while s is open) that
** works in scope s; fn reads data with dsf_callscope_data. DSF_LJMP */
void dsf_callscope_push(lua_State *L, const dsf_callscope *s,
                        lua_CFunction fn, void *data) DSF_LJMP;

/* In a function pushed by dsf_callscope_push: its data while its scope
** is open; otherwise raises "NAME was kept past the call that handed it
** over ..." (name: how a script reaches it, "ctx.report"). DSF_LJMP */
void *dsf_callscope_data(lua_State *L, const char *name) DSF_LJMP;

#endif
