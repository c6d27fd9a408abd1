/*
** dynlib.h -- loading a shared library on first use (libcurl, libcrypto):
** commands that never need it do not pay for loading it and its
** dependencies at start-up.
*/
#ifndef DSF_DYNLIB_H
#define DSF_DYNLIB_H

#include <stddef.h>

/* Opens the library named by the environment variable env_var when set
** and not empty, else soname. NULL on failure, with the reason in err
** (errlen bytes, always NUL-terminated). The handle is never closed: the
** library stays for the life of the process. */
void *dsf_dynlib_open(const char *env_var, const char *soname, char *err,
                      size_t errlen);

/* Stores the address of function sym of lib into slot (a function
** pointer of size bytes). -1 when it is missing, with err naming sym and
** what (the library, for people). */
int dsf_dynlib_fn(void *lib, const char *what, const char *sym, void *slot,
                  size_t size, char *err, size_t errlen);

#endif
