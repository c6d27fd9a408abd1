/*
** dsflib.h -- the `dsforge` module that scripts get instead of io/os.
*/
#ifndef DSF_DSFLIB_H
#define DSF_DSFLIB_H

#include <lua.h>

#include "lua/host.h"

/* Pushes a new `dsforge` module table. DSF_LJMP */
int dsf_open_dsforge(lua_State *L) DSF_LJMP;

/* The dsforge version string. */
extern const char dsf_version[];

#endif
