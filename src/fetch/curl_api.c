/* curl_api.c -- see curl_api.h. */
#include "curl_api.h"

#include <stdlib.h>
#include <string.h>

#include "core/dynlib.h"
#include "core/error.h"

#define LIBCURL_SONAME "libcurl.so.4"
#define MIN_VERSION 0x075500 /* 7.85.0: CURLOPT_PROTOCOLS_STR */

static dsf_curl_api api;
static int loaded;          /* 0 not tried, 1 ok, -1 failed */
static char load_error[512];

#define RESOLVE(field, sym)                                              \
    if (dsf_dynlib_fn(lib, "libcurl", sym, &api.field, sizeof api.field,\
                      load_error, sizeof load_error))                    \
        return -1

static int load(void)
{
    void *lib = dsf_dynlib_open("DSFORGE_LIBCURL", LIBCURL_SONAME,
                                load_error, sizeof load_error);
    if (!lib)
        return -1;
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(multi_init, "curl_multi_init");
    RESOLVE(multi_setopt, "curl_multi_setopt");
    RESOLVE(multi_add_handle, "curl_multi_add_handle");
    RESOLVE(multi_remove_handle, "curl_multi_remove_handle");
    RESOLVE(multi_perform, "curl_multi_perform");
    RESOLVE(multi_poll, "curl_multi_poll");
    RESOLVE(multi_info_read, "curl_multi_info_read");
    RESOLVE(multi_cleanup, "curl_multi_cleanup");
    RESOLVE(multi_strerror, "curl_multi_strerror");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
    RESOLVE(version_info, "curl_version_info");
    /* The library stays loaded for the life of the process. */
    curl_version_info_data *v = api.version_info(CURLVERSION_NOW);
    if (!v || v->version_num < MIN_VERSION) {
        snprintf(load_error, sizeof load_error,
                 "libcurl %s is too old (7.85.0 or newer needed)",
                 v && v->version ? v->version : "(unknown)");
        return -1;
    }
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof load_error,
                 "libcurl failed to initialise");
        return -1;
    }
    return 0;
}

int dsf_curl_load(const dsf_curl_api **out, dsf_diags *d)
{
    *out = NULL;
    if (!loaded)
        loaded = load() == 0 ? 1 : -1;
    if (loaded < 0) {
        dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                                   "network access needs libcurl: %s",
                                   load_error);
        dsf_diag_set_hint(g, "install libcurl 7.85 or newer (Debian: apt "
                             "install libcurl4), or work with --offline");
        return DSF_ENET;
    }
    *out = &api;
    return 0;
}
