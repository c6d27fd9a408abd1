/*
** errobj.h -- what errobj.c defines: the error objects dsforge raises in
** Lua (as Redis's scripting does), so an error leaves Lua as data rather
** than as text to be parsed.
**
** An error object is a table with the fields message (string), source
** (the script file, or absent), line (integer, or absent) and kind, one
** of "input" (dsforge.fail: the script judged its input unusable), "script"
** (the sandbox refused something) or "limit" (a sandbox limit was hit).
** Its metatable (protected) gives __tostring = "source:line: message", so
** a script's tostring(err) reads as a Lua error string. The host reads the
** fields; only a plain error string is parsed (dsf_errobj_parse_string).
*/
#ifndef DSF_ERROBJ_H
#define DSF_ERROBJ_H

#include <stdbool.h>

#include <lua.h>

#include "lua/values.h" /* DSF_LJMP */

enum dsf_errkind { DSF_ERR_SCRIPT, DSF_ERR_INPUT, DSF_ERR_LIMIT };

/* Creates the error metatable in a new state. DSF_LJMP */
void dsf_errobj_setup(lua_State *L) DSF_LJMP;

/* Pushes a new error object with message msg located at the innermost
** Lua function at or above stack level level that has a line (1 = the
** function that called the running C function; 0 = the running function,
** for hooks; DSF_ERROBJ_NOWHERE = no line at all: the input at fault is
** not a script's). DSF_LJMP */
#define DSF_ERROBJ_NOWHERE (-1)
void dsf_errobj_push(lua_State *L, int level, enum dsf_errkind kind,
                     const char *msg) DSF_LJMP;

/* dsf_errobj_push, then raises it. Never returns. DSF_LJMP */
int dsf_errobj_raise(lua_State *L, int level, enum dsf_errkind kind,
                     const char *fmt, ...) DSF_LJMP;

/* What an error object says. The strings point into the state: valid
** while the object is on the stack. */
typedef struct dsf_errinfo {
    enum dsf_errkind kind;
    const char *message;
    const char *source;  /* without the leading '@'; NULL when unknown */
    int line;            /* 0 when unknown */
    const char *trace;   /* the traceback field, or NULL */
} dsf_errinfo;

/* True when the value at idx is an error object made by dsf_errobj_push
** (its metatable is the one from dsf_errobj_setup); fills *info from its
** fields, read raw and checked (a script may have changed them). Does not
** raise. */
bool dsf_errobj_read(lua_State *L, int idx, dsf_errinfo *info);

/* The one fallback for a plain error string from Lua itself
** ("file:line: message"): splits off the location when the message starts
** with one. *file is a new string (caller frees) or NULL. */
bool dsf_errobj_parse_string(const char *msg, char **file, int *line,
                             const char **rest);

#endif
