/*
** precompile.c -- build-time tool: compiles the built-in profiles and
** plugins into Lua bytecode embedded in the dsforge executable.
**
** Usage: dsf_precompile OUT.c ROOT SNAPSHOT.lua FILE...
**        (FILE relative to ROOT; "=FILE" marks a data module)
**
** For each file it emits the source text, the bytecode of exactly that
** text (line numbers kept for error messages, the names of local
** variables and of upvalues other than _ENV dropped: see bcstrip.h), and
** where in the bytecode the chunk name is stored, so the runtime can put the file's
** real path there. At run time a built-in file whose bytes equal the
** embedded source is loaded from this bytecode instead of being compiled
** again (lua/builtin.c); any other file is compiled from text. The sha256
** of each source is computed here too, so a run that names a built-in
** file's digest (the manifest's provenance) does not hash it again.
**
** A data module (a file whose top level only builds and returns tables,
** such as the DeepSpeed schema) is run here once: SNAPSHOT.lua turns its
** value into one table constructor, checked to build an equal value, and
** the embedded bytecode is that constructor's. Loading it does not call
** the module's helper functions or grow tables key by key again. Its
** source and digest stay the file's own. SNAPSHOT.lua may also return
** parts: chunks the main one loads when their tables are first read
** (the schema's sections); each is compiled and embedded the same way
** (builtin.h, dsf_builtin_part).
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/sha256.h"
#include "tools/bcstrip.h"

typedef struct blob {
    unsigned char *data;
    size_t len, cap;
} blob;

static int writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    blob *b = ud;
    if (b->len + sz > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + sz)
            cap *= 2;
        unsigned char *n = realloc(b->data, cap);
        if (!n)
            return 1;
        b->data = n;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, sz);
    b->len += sz;
    return 0;
}

static void emit_bytes(FILE *out, const char *name, const unsigned char *p,
                       size_t n)
{
    fprintf(out, "static const unsigned char %s[%zu] = {", name, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%u,", i % 20 ? "" : "\n", p[i]);
    fprintf(out, "%s};\n", n ? "" : "0");
}

static void add(blob *out, const void *p, size_t n)
{
    if (writer(NULL, p, n, out)) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
}

static int read_all(blob *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    unsigned char chunk[8192];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        add(b, chunk, r);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        perror(path);
    return bad;
}

/* One compiled chunk: stripped bytecode and where its name sits. */
typedef struct compiled {
    blob bc;
    size_t name_off, name_len;
} compiled;

/* Compiles text as the chunk named name (what: for messages) into out.
** Returns 0, or 1 after a message. */
static int compile(compiled *out, const char *text, size_t len,
                   const char *name, const char *what)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    if (luaL_loadbufferx(L, text, len, name, "t")) {
        fprintf(stderr, "%s: %s\n", what, lua_tostring(L, -1));
        lua_close(L);
        return 1;
    }
    blob full = {0};
    int bad = lua_dump(L, writer, &full, 0) || !full.len;
    lua_close(L);
    if (bad) {
        fprintf(stderr, "%s: cannot dump\n", what);
        return 1;
    }
    memset(out, 0, sizeof *out);
    int st = dsf_bc_strip(&out->bc.data, &out->bc.len, full.data, full.len);
    free(full.data);
    if (st != 0) {
        fprintf(stderr, "%s: %s\n", what, st == -2 ? "out of memory"
                                           : "unexpected bytecode format");
        return 1;
    }
    out->bc.cap = out->bc.len;
    /* Find the chunk name: encoded size then the bytes. */
    unsigned char enc[4300];
    size_t nlen = strlen(name);
    if (nlen > 4096) {
        fprintf(stderr, "%s: name too long\n", what);
        return 1;
    }
    size_t elen = dsf_bc_encode_size(enc, nlen + 1);
    memcpy(enc + elen, name, nlen);
    elen += nlen;
    size_t off = 0;
    for (; off + elen <= out->bc.len; off++)
        if (!memcmp(out->bc.data + off, enc, elen))
            break;
    if (off + elen > out->bc.len || off > 64) {
        fprintf(stderr, "%s: chunk name not found in the bytecode\n", what);
        return 1;
    }
    out->name_off = off;
    out->name_len = elen;
    return 0;
}

/* Runs SNAPSHOT.lua on the data module src: its main text in *text and
** its parts' texts in parts (each malloc'd). Returns 0, or 1 after a
** message. */
static int run_snapshot(blob *text, blob **parts, size_t *nparts,
                        const blob *script, const blob *src,
                        const char *rel, const char *name)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    luaL_openlibs(L);
    int rc = 1;
    if (luaL_loadbufferx(L, (const char *)src->data, src->len, name, "t") ||
        luaL_loadbufferx(L, (const char *)script->data, script->len,
                         "=snapshot.lua", "t")) {
        fprintf(stderr, "%s\n", lua_tostring(L, -1));
        goto done;
    }
    lua_insert(L, -2);
    lua_pushstring(L, rel);
    if (lua_pcall(L, 2, 2, 0) != LUA_OK) {
        fprintf(stderr, "%s\n", lua_tostring(L, -1));
        goto done;
    }
    if (!lua_isstring(L, -2) || !lua_istable(L, -1)) {
        fprintf(stderr, "%s: snapshot.lua returned no text and parts\n", rel);
        goto done;
    }
    size_t len;
    const char *s = lua_tolstring(L, -2, &len);
    add(text, s, len);
    *nparts = (size_t)lua_rawlen(L, -1);
    *parts = calloc(*nparts + 1, sizeof **parts);
    if (!*parts) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < *nparts; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        s = lua_tolstring(L, -1, &len);
        if (!s) {
            fprintf(stderr, "%s: a snapshot part is not text\n", rel);
            goto done;
        }
        add(&(*parts)[i], s, len);
        lua_pop(L, 1);
    }
    rc = 0;
done:
    lua_close(L);
    return rc;
}

/* Whether the n file arguments are in byte order (the '=' of a data
** file aside): the table is searched by halves (lua/scriptfs.c), and
** CMake's list(SORT) gives them so. Says which two are not. */
static bool sorted(char **files, int n)
{
    for (int i = 1; i < n; i++) {
        const char *a = files[i - 1] + (files[i - 1][0] == '=');
        const char *b = files[i] + (files[i][0] == '=');
        if (strcmp(a, b) >= 0) {
            fprintf(stderr, "dsf_precompile: %s is not after %s: the files "
                            "must be given sorted\n", b, a);
            return false;
        }
    }
    return true;
}

/* File i's np parts, compiled: their bytecode in one array (parts_bc_i),
** each found by offset in parts_i. Frees the parts' texts. */
static int emit_parts(FILE *out, int i, blob *parts, size_t np,
                      const char *name, const char *path)
{
    compiled *pc = calloc(np, sizeof *pc);
    if (!pc) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    blob all = {0};
    for (size_t j = 0; j < np; j++) {
        if (compile(&pc[j], (const char *)parts[j].data, parts[j].len, name,
                    path))
            return 1;
        add(&all, pc[j].bc.data, pc[j].bc.len);
        free(parts[j].data);
    }
    char sym[64];
    snprintf(sym, sizeof sym, "parts_bc_%d", i);
    emit_bytes(out, sym, all.data, all.len);
    free(all.data);
    fprintf(out, "static const dsf_builtin_part parts_%d[] = {\n", i);
    size_t off = 0;
    for (size_t j = 0; j < np; j++) {
        fprintf(out, "    {%zu, %zu, %zu, %zu},\n", off, pc[j].bc.len,
                pc[j].name_off, pc[j].name_len);
        off += pc[j].bc.len;
        free(pc[j].bc.data);
    }
    fprintf(out, "};\n");
    free(pc);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: dsf_precompile OUT.c ROOT SNAPSHOT.lua "
                        "[=]FILE...\n");
        return 2;
    }
    blob snapshot = {0};
    if (read_all(&snapshot, argv[3]))
        return 1;
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    fprintf(out, "/* Generated by dsf_precompile: do not edit. */\n"
                 "#include \"lua/builtin.h\"\n\n");
    int nfiles = argc - 4;
    if (!sorted(argv + 4, nfiles))
        return 2;
    size_t *name_off = calloc((size_t)nfiles + 1, sizeof *name_off);
    size_t *name_len = calloc((size_t)nfiles + 1, sizeof *name_len);
    size_t *nparts = calloc((size_t)nfiles + 1, sizeof *nparts);
    char (*digest)[65] = calloc((size_t)nfiles + 1, sizeof *digest);
    if (!name_off || !name_len || !nparts || !digest) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < nfiles; i++) {
        const char *rel = argv[4 + i];
        int data = rel[0] == '=';
        rel += data;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[2], rel);
        blob src = {0};
        if (read_all(&src, path))
            return 1;
        char name[4200];
        snprintf(name, sizeof name, "@%s", rel);
        compiled c;
        blob text = {0}, *parts = NULL;
        size_t np = 0;
        if (data) {
            if (run_snapshot(&text, &parts, &np, &snapshot, &src, rel, name))
                return 1;
        } else {
            add(&text, src.data, src.len);
        }
        if (compile(&c, (const char *)text.data, text.len, name, path))
            return 1;
        free(text.data);
        char sym[64];
        snprintf(sym, sizeof sym, "src_%d", i);
        emit_bytes(out, sym, src.data, src.len);
        snprintf(sym, sizeof sym, "bc_%d", i);
        emit_bytes(out, sym, c.bc.data, c.bc.len);
        name_off[i] = c.name_off;
        name_len[i] = c.name_len;
        free(c.bc.data);
        nparts[i] = np;
        if (np && emit_parts(out, i, parts, np, name, path))
            return 1;
        free(parts);
        fprintf(out, "\n");
        dsf_sha256_hex(digest[i], src.data, src.len);
        free(src.data);
    }
    fprintf(out, "const dsf_builtin_chunk dsf_builtin_chunks[] = {\n");
    for (int i = 0; i < nfiles; i++) {
        char parts_bc[64] = "NULL", parts_sym[64] = "NULL";
        if (nparts[i]) {
            snprintf(parts_bc, sizeof parts_bc, "parts_bc_%d", i);
            snprintf(parts_sym, sizeof parts_sym, "parts_%d", i);
        }
        fprintf(out, "    {\"%s\", src_%d, sizeof src_%d, bc_%d, sizeof bc_%d,"
                     " %zu, %zu, \"%s\", %d, %s, %s, %zu},\n",
                argv[4 + i] + (argv[4 + i][0] == '='), i, i, i, i,
                name_off[i], name_len[i], digest[i], argv[4 + i][0] == '=',
                parts_bc, parts_sym, nparts[i]);
    }
    fprintf(out, "    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, 0, NULL, NULL, 0}};\n");
    free(snapshot.data);
    free(digest);
    free(name_off);
    free(name_len);
    free(nparts);
    if (fclose(out) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
