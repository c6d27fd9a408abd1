/* dynlib.c -- see dynlib.h. */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dsf_dynlib_open(const char *env_var, const char *soname, char *err,
                      size_t errlen)
{
    const char *name = getenv(env_var);
    if (!name || !*name)
        name = soname;
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(err, errlen, "cannot load %s: %s", name,
                 e ? e : "unknown error");
    }
    return lib;
}

int dsf_dynlib_fn(void *lib, const char *what, const char *sym, void *slot,
                  size_t size, char *err, size_t errlen)
{
    /* dlsym returns void *; converting it to a function pointer is what
    ** POSIX requires to work. The union avoids the ISO C pedantic
    ** warning. */
    union { void *obj; void (*fn)(void); } u;
    u.obj = dlsym(lib, sym);
    if (!u.obj) {
        snprintf(err, errlen, "symbol %s is missing from %s", sym, what);
        return -1;
    }
    memcpy(slot, &u.fn, size < sizeof u.fn ? size : sizeof u.fn);
    return 0;
}
