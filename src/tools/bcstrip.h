/*
** bcstrip.h -- build time: the debug information a built-in's bytecode
** does without (src/tools/precompile.c; tested by tests/unit/test_builtin.c).
**
** Undumping a chunk interns every string it holds, and most of them are
** names only a debugger or an error message reads. The stripped chunk keeps
** the code, the constants, the functions and the line information (error
** locations), and of the names only _ENV's: a message about an undefined
** global still says "global 'x'". Local variables' names are dropped (a
** built-in's message says "attempt to index a nil value" where it said
** "(local 'x')"), and so are the names of upvalues other than _ENV ("(upvalue
** '?')", a traceback naming such a function by its file and line).
*/
#ifndef DSF_BCSTRIP_H
#define DSF_BCSTRIP_H

#include <stddef.h>

#include "lua/bcsize.h" /* dsf_bc_encode_size */


/* The chunk bc[0 .. len) (lua_dump's output, not stripped) without the
** names above: a malloc'd copy in *out (the caller frees it), its length in
** *out_len. Returns 0, -1 when the bytes are not the expected format (*out
** NULL), -2 when out of memory. */
int dsf_bc_strip(unsigned char **out, size_t *out_len,
                 const unsigned char *bc, size_t len);

#endif
