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

/* PART(i): the function of part i of a built-in data module (upvalues:
** the chunk, the path its messages name). A part sees no globals. */
static int load_part(lua_State *L)
{
    const dsf_builtin_chunk *c = lua_touserdata(L, lua_upvalueindex(1));
    const char *path = lua_tostring(L, lua_upvalueindex(2));
    lua_Integer i = luaL_checkinteger(L, 1);
    if (i < 1 || (lua_Unsigned)i > c->nparts)
        return luaL_error(L, "%s has no part %d", path, (int)i);
    dsf_builtin_reader r;
    dsf_builtin_reader_init_part(&r, c, (size_t)i - 1, path);
    if (lua_load(L, dsf_builtin_read, &r, path, "b") != LUA_OK)
        return lua_error(L);
    lua_pushnil(L);
    if (!lua_setupvalue(L, -2, 1))
        lua_pop(L, 1);
    return 1;
}

/* A data module with parts, as require calls it: its main chunk, under
** the environment in upvalue 1 (where dsf_sandbox_set_env puts a chunk's
** environment), called with PART instead of require's arguments. */
static int call_with_parts(lua_State *L)
{
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, lua_upvalueindex(1));
    if (!lua_setupvalue(L, 1, 1))
        lua_pop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(3));
    lua_call(L, 1, LUA_MULTRET);
    return lua_gettop(L);
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
        int status = lua_load(L, dsf_builtin_read, &r, chunkname, "b");
        const dsf_builtin_chunk *c = src->builtin;
        if (status == LUA_OK && c->nparts) {
            int fn = lua_gettop(L);
            lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
            lua_pushvalue(L, fn);
            lua_pushlightuserdata(L, (void *)c);
            lua_pushstring(L, src->path);
            lua_pushcclosure(L, load_part, 2);
            lua_pushcclosure(L, call_with_parts, 3);
            lua_replace(L, fn);
        }
        return status;
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
