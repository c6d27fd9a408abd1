/*
** curl_api.h -- libcurl, loaded on first use with dlopen.
**
** Linking libcurl costs every dsforge command ~4.5 ms of dynamic loading
** (libcurl and its ~30 dependencies) even when it never touches the
** network, so the fetch code reaches libcurl only through this table of
** function pointers, filled once with dlsym("libcurl.so.4"). We compile
** against <curl/curl.h> for the types and constants only.
**
** DSFORGE_LIBCURL names another library to load (an unusual install, or a
** test that wants the "libcurl is missing" path).
*/
#ifndef DSF_CURL_API_H
#define DSF_CURL_API_H

#include <curl/curl.h>

#include "core/diag.h"

typedef struct dsf_curl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *h);
    const char *(*easy_strerror)(CURLcode c);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_setopt)(CURLM *m, CURLMoption opt, ...);
    CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
    CURLMcode (*multi_perform)(CURLM *m, int *running);
    CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *extra,
                            unsigned n_extra, int timeout_ms, int *numfds);
    CURLMsg *(*multi_info_read)(CURLM *m, int *msgs_left);
    CURLMcode (*multi_cleanup)(CURLM *m);
    const char *(*multi_strerror)(CURLMcode c);
    struct curl_slist *(*slist_append)(struct curl_slist *l,
                                       const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    curl_version_info_data *(*version_info)(CURLversion v);
} dsf_curl_api;

/* Loads libcurl (once per process), checks its version (7.85 or newer,
** for CURLOPT_PROTOCOLS_STR) and runs curl_global_init. *out is borrowed
** for the life of the process. DSF_ENET with a diagnostic naming the
** library when it cannot be loaded or is too old. Not thread-safe: call
** it from the main thread. */
int dsf_curl_load(const dsf_curl_api **out, dsf_diags *d);

#endif
