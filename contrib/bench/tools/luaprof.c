/* luaprof.c -- a sampling profiler for the Lua code dsforge runs, as an
** LD_PRELOAD library (nothing in dsforge changes).
**
** dsforge arms a count hook around every Lua call (its instruction limit).
** This library interposes lua_sethook: while dsforge's hook is armed, the
** hook fires on every VM instruction; every 97th instruction (counted
** across calls, so short calls are sampled too) the Lua stack is recorded,
** and dsforge's own hook is still called every COUNT instructions.
** Compile time, C functions and the GC are not seen: use perf or
** valgrind --tool=callgrind for those.
**
**   cc -O2 -shared -fPIC $(pkg-config --cflags lua5.4) -o luaprof.so \
**      luaprof.c -ldl
**   LD_PRELOAD=$PWD/luaprof.so LUAPROF_OUT=prof.txt dsforge gen ...
**
** prof.txt: functions by inclusive samples (source:linedefined), then
** lines by self samples (source:currentline). Slows dsforge ~10x. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>

#define EVERY 97
#define NB 16384

typedef void (*sethook_fn)(lua_State *, lua_Hook, int, int);
static lua_Hook orig_hook;
static unsigned long ticks, orig_every = 1000, since_orig, total;

struct ent { char *key; unsigned long n; };
static struct ent tab[NB];

static void count(const char *k)
{
    unsigned long h = 5381;
    for (const char *p = k; *p; p++)
        h = h * 33 + (unsigned char)*p;
    for (unsigned long i = h % NB, probes = 0; probes < NB; i = (i + 1) % NB, probes++) {
        if (!tab[i].key) {
            tab[i].key = strdup(k);
            tab[i].n = 1;
            return;
        }
        if (!strcmp(tab[i].key, k)) {
            tab[i].n++;
            return;
        }
    }
}

/* "…/plugins/deepspeed/rules.lua" -> "deepspeed/rules.lua" */
static const char *short_name(const char *src)
{
    const char *slash = strrchr(src, '/');
    if (!slash)
        return src;
    const char *p = slash - 1;
    while (p > src && *p != '/')
        p--;
    return *p == '/' ? p + 1 : p;
}

static void sample(lua_State *L)
{
    lua_Debug d;
    char key[600], seen[64][600];
    int nseen = 0, self_done = 0;
    total++;
    for (int lvl = 0; lvl < 200 && lua_getstack(L, lvl, &d); lvl++) {
        if (!lua_getinfo(L, "Sl", &d) || d.what[0] == 'C')
            continue;
        const char *src = short_name(d.short_src);
        if (!self_done) {
            snprintf(key, sizeof key, "L %s:%d", src, d.currentline);
            count(key);
            self_done = 1;
        }
        snprintf(key, sizeof key, "F %s:%d", src, d.linedefined);
        int dup = 0;
        for (int i = 0; i < nseen; i++)
            dup |= !strcmp(seen[i], key);
        if (!dup && nseen < 64) {
            snprintf(seen[nseen++], sizeof seen[0], "%s", key);
            count(key);
        }
    }
}

static void my_hook(lua_State *L, lua_Debug *ar)
{
    if (ar->event != LUA_HOOKCOUNT) {
        if (orig_hook)
            orig_hook(L, ar);
        return;
    }
    if (++ticks % EVERY == 0)
        sample(L);
    if (++since_orig >= orig_every) {
        since_orig = 0;
        if (orig_hook)
            orig_hook(L, ar);
    }
}

void lua_sethook(lua_State *L, lua_Hook f, int mask, int cnt)
{
    static sethook_fn real;
    if (!real)
        real = (sethook_fn)dlsym(RTLD_NEXT, "lua_sethook");
    if (f && (mask & LUA_MASKCOUNT)) {
        orig_hook = f;
        orig_every = cnt > 0 ? (unsigned long)cnt : 1;
        since_orig = 0;
        real(L, my_hook, mask, 1);
    } else {
        real(L, f, mask, cnt);
    }
}

static int by_count(const void *a, const void *b)
{
    const struct ent *x = a, *y = b;
    return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->key, y->key);
}

__attribute__((destructor)) static void dump(void)
{
    const char *out = getenv("LUAPROF_OUT");
    FILE *f = out ? fopen(out, "w") : stderr;
    if (!f)
        return;
    struct ent *v = calloc(NB, sizeof *v);
    int n = 0;
    for (int i = 0; i < NB; i++)
        if (tab[i].key)
            v[n++] = tab[i];
    qsort(v, (size_t)n, sizeof *v, by_count);
    double t = total ? (double)total : 1.0;
    fprintf(f, "# %lu samples, one every %d Lua VM instructions\n", total, EVERY);
    fprintf(f, "# functions, inclusive (source:linedefined)\n");
    for (int i = 0; i < n; i++)
        if (v[i].key[0] == 'F')
            fprintf(f, "%8lu %5.1f%%  %s\n", v[i].n, 100.0 * v[i].n / t, v[i].key + 2);
    fprintf(f, "# lines, self (source:line)\n");
    for (int i = 0; i < n; i++)
        if (v[i].key[0] == 'L')
            fprintf(f, "%8lu %5.1f%%  %s\n", v[i].n, 100.0 * v[i].n / t, v[i].key + 2);
    if (f != stderr)
        fclose(f);
    free(v);
}
