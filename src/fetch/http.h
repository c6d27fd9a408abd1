/*
** http.h -- hardened HTTP(S) GETs, several at once.
**
** Every transfer: https only (http:// only to a loopback address, or
** everywhere with allow_http), the same rule for every redirect, at most
** max_redirects of them, connect and total timeouts, a low-speed limit,
** a body size cap counted in the write callback (a lying or missing
** Content-Length does not get past it), and only the http/https
** protocols. Proxies come from libcurl's usual environment variables
** (http_proxy, https_proxy, no_proxy); a CA bundle from CURL_CA_BUNDLE or
** SSL_CERT_FILE and a CA directory from SSL_CERT_DIR are passed to
** libcurl here, because libcurl itself does not read them.
*/
#ifndef DSF_HTTP_H
#define DSF_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/diag.h"

typedef struct dsf_http_limits {
    long connect_timeout_ms;  /* TCP + TLS handshake */
    long timeout_ms;          /* the whole transfer */
    long low_speed_bytes;     /* abort when slower than this (bytes/s) */
    long low_speed_secs;      /* ... for this many seconds */
    size_t max_bytes;         /* cap on one response body */
    long max_redirects;
    int max_parallel;         /* transfers at once */
    bool allow_http;          /* plain http:// to any host */
    bool progress;            /* progress bar, when stderr is a terminal */
} dsf_http_limits;

#define DSF_HTTP_LIMITS_DEFAULT                                           \
    {10000, 120000, 1024, 20, 16u << 20, 5, 16, false, true}

/* Why a transfer failed: a network problem (the caller may fall back to
** a locked cached copy) or a policy/integrity one (never). */
typedef enum dsf_http_fail {
    DSF_HTTP_OK = 0,
    DSF_HTTP_NETWORK,  /* connection, timeout, truncated body, HTTP error */
    DSF_HTTP_POLICY    /* forbidden scheme, redirects, size cap */
} dsf_http_fail;

typedef struct dsf_http_req {
    /* Inputs, borrowed for the duration of dsf_http_fetch. */
    const char *url;
    const char *if_none_match;     /* ETag to revalidate with, or NULL */
    const char *if_modified_since; /* Last-Modified value, or NULL */
    const char *bearer;            /* token (never printed), or NULL */
    /* Results, owned by the request: free with dsf_http_req_free. */
    dsf_http_fail fail;
    long status;                   /* last HTTP status; 0 when none */
    bool not_modified;             /* 304: body is empty */
    dsf_buf body;
    char *etag;                    /* response ETag, or NULL */
    char *last_modified;           /* response Last-Modified, or NULL */
    char *error;                   /* what went wrong, when fail != OK */
} dsf_http_req;

/* Performs the n GETs of reqs concurrently (at most lim->max_parallel at
** once). Each request's outcome is in its result fields; the function
** itself returns DSF_ENET (with a diagnostic) only when libcurl cannot be
** loaded or set up. Requests must be zeroed except for their inputs. */
int dsf_http_fetch(dsf_http_req *reqs, size_t n, const dsf_http_limits *lim,
                   dsf_diags *d);

/* Frees a request's results (not its borrowed inputs). */
void dsf_http_req_free(dsf_http_req *r);

/* True when url is one dsforge may fetch: https, or http to a loopback
** host (127.0.0.0/8, ::1, localhost) or with allow_http. */
bool dsf_http_url_allowed(const char *url, bool allow_http);

#endif
