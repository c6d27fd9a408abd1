/* chunk.c -- see chunk.h. */
#include "lua/chunk.h"

#include <lauxlib.h>

#include "core/buf.h"
#include "lua/builtin.h"
#include "lua/limits.h"

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    dsf_buf_add(ud, p, sz);
    return 0;
}

int dsf_chunk_load(lua_State *L, const dsf_source *src, const char *chunkname)
{
    if (!src->builtin_checked) {
        dsf_source *m = (dsf_source *)src; /* a cache entry: filled once */
        m->builtin = dsf_builtin_find(src->path, src->text, src->len);
        m->builtin_checked = 1;
    }
    if (src->builtin) {
        /* Streams the embedded bytecode with the name spliced in (the
        ** chunk name argument is ignored for binary chunks). */
        dsf_builtin_reader r;
        dsf_builtin_reader_init(&r, src->builtin, src->path);
        return lua_load(L, dsf_builtin_read, &r, chunkname, "b");
    }
    /* Anything else came from outside the executable: count its calls. */
    dsf_limits_untrusted(L);
    if (src->bytecode)
        return luaL_loadbufferx(L, src->bytecode, src->bytecode_len,
                                chunkname, "b");
    int status = luaL_loadbufferx(L, src->text, src->len, chunkname, "t");
    if (status == LUA_OK) {
        dsf_buf bc = DSF_BUF_INIT;
        if (lua_dump(L, dump_writer, &bc, 0) == 0 && bc.len)
            dsf_source_set_bytecode(src, bc.data, bc.len);
        dsf_buf_free(&bc);
    }
    return status;
}
