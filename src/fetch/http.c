/* http.c -- see http.h. */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/xalloc.h"
#include "fetch/curl_api.h"
#include "version.h"

typedef struct xfer {
    const dsf_curl_api *api;
    dsf_http_req *req;
    CURL *h;
    struct curl_slist *headers;
    size_t max_bytes;
    bool over_cap;
    bool loopback_only;  /* http allowed only to loopback addresses */
    bool bad_redirect;   /* prereq refused a connection */
    char errbuf[CURL_ERROR_SIZE];
} xfer;

static bool starts_with_ci(const char *s, const char *prefix)
{
    return !strncasecmp(s, prefix, strlen(prefix));
}

/* The host part of an http(s) URL, into out. */
static void url_host(const char *url, char *out, size_t cap)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *end = p + strcspn(p, "/?#");
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at)
        p = at + 1;
    const char *hend;
    if (*p == '[') {
        hend = memchr(p, ']', (size_t)(end - p));
        hend = hend ? hend + 1 : end;
    } else {
        hend = p + strcspn(p, ":/?#");
    }
    size_t n = (size_t)(hend - p);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

static bool host_is_loopback(const char *host)
{
    if (!strcasecmp(host, "localhost") || !strcmp(host, "[::1]") ||
        !strcmp(host, "::1"))
        return true;
    /* 127.0.0.0/8 written as a dotted quad */
    unsigned a, b, c, e;
    char tail;
    return sscanf(host, "%u.%u.%u.%u%c", &a, &b, &c, &e, &tail) == 4 &&
           a == 127 && b < 256 && c < 256 && e < 256;
}

bool dsf_http_url_allowed(const char *url, bool allow_http)
{
    if (starts_with_ci(url, "https://"))
        return true;
    if (!starts_with_ci(url, "http://"))
        return false;
    if (allow_http)
        return true;
    char host[256];
    url_host(url, host, sizeof host);
    return host_is_loopback(host);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    /* The cap counts bytes as they arrive: Content-Length may lie or be
    ** missing (libcurl-security.md). Returning short aborts the transfer. */
    if (x->req->body.len + n > x->max_bytes) {
        x->over_cap = true;
        return 0;
    }
    dsf_buf_add(&x->req->body, ptr, n);
    return n;
}

static char *header_value(const char *line, size_t n, const char *name)
{
    size_t ln = strlen(name);
    if (n <= ln || strncasecmp(line, name, ln) || line[ln] != ':')
        return NULL;
    const char *v = line + ln + 1, *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
                       end[-1] == ' ' || end[-1] == '\t'))
        end--;
    return dsf_xstrndup(v, (size_t)(end - v));
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    char *v;
    if (n >= 5 && !strncmp(line, "HTTP/", 5)) {
        /* A new response (after a redirect): forget the previous one's
        ** validators. */
        free(x->req->etag);
        free(x->req->last_modified);
        x->req->etag = x->req->last_modified = NULL;
    } else if ((v = header_value(line, n, "ETag")) != NULL) {
        free(x->req->etag);
        x->req->etag = v;
    } else if ((v = header_value(line, n, "Last-Modified")) != NULL) {
        free(x->req->last_modified);
        x->req->last_modified = v;
    }
    return n;
}

/* Called by libcurl before each request, redirects included, once the
** connection is up: plain http is only allowed to loopback peers unless
** the user said --allow-http. */
static int on_prereq(void *ud, char *primary_ip, char *local_ip,
                     int primary_port, int local_port)
{
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    xfer *x = ud;
    if (!x->loopback_only)
        return CURL_PREREQFUNC_OK;
    char *url = NULL;
    x->api->easy_getinfo(x->h, CURLINFO_EFFECTIVE_URL, &url);
    if (url && starts_with_ci(url, "https://"))
        return CURL_PREREQFUNC_OK;
    char ip[64];
    snprintf(ip, sizeof ip, "%s", primary_ip ? primary_ip : "");
    if (!strncmp(ip, "127.", 4) || !strcmp(ip, "::1"))
        return CURL_PREREQFUNC_OK;
    x->bad_redirect = true;
    return CURL_PREREQFUNC_ABORT;
}

#define SETOPT(opt, val)                                                  \
    do {                                                                  \
        CURLcode c_ = api->easy_setopt(x->h, opt, val);                   \
        if (c_ != CURLE_OK)                                               \
            return fail_setup(x, #opt, api->easy_strerror(c_));           \
    } while (0)

static int fail_setup(xfer *x, const char *opt, const char *why)
{
    x->req->fail = DSF_HTTP_POLICY;
    x->req->error = dsf_xasprintf("cannot set %s: %s", opt, why);
    return -1;
}

static void ca_from_env(xfer *x, const dsf_curl_api *api)
{
    const char *bundle = getenv("CURL_CA_BUNDLE");
    if (!bundle || !*bundle)
        bundle = getenv("SSL_CERT_FILE");
    if (bundle && *bundle)
        api->easy_setopt(x->h, CURLOPT_CAINFO, bundle);
    const char *dir = getenv("SSL_CERT_DIR");
    if (dir && *dir)
        api->easy_setopt(x->h, CURLOPT_CAPATH, dir);
}

static int setup(xfer *x, const dsf_curl_api *api,
                 const dsf_http_limits *lim)
{
    dsf_http_req *r = x->req;
    if (!dsf_http_url_allowed(r->url, lim->allow_http)) {
        r->fail = DSF_HTTP_POLICY;
        r->error = dsf_xstrdup(
            starts_with_ci(r->url, "http://")
                ? "plain http:// is only allowed to loopback addresses "
                  "(use https://, or --allow-http)"
                : "only https:// (and http:// with --allow-http) URLs "
                  "are allowed");
        return -1;
    }
    const char *protos = "https";
    if (lim->allow_http) {
        protos = "http,https";
    } else if (starts_with_ci(r->url, "http://")) {
        protos = "http,https";
        x->loopback_only = true;
    }
    x->h = api->easy_init();
    if (!x->h)
        return fail_setup(x, "easy handle", "out of memory");
    SETOPT(CURLOPT_URL, r->url);
    SETOPT(CURLOPT_PROTOCOLS_STR, protos);
    SETOPT(CURLOPT_REDIR_PROTOCOLS_STR, protos);
    SETOPT(CURLOPT_FOLLOWLOCATION, 1L);
    SETOPT(CURLOPT_MAXREDIRS, lim->max_redirects);
    SETOPT(CURLOPT_CONNECTTIMEOUT_MS, lim->connect_timeout_ms);
    SETOPT(CURLOPT_TIMEOUT_MS, lim->timeout_ms);
    SETOPT(CURLOPT_LOW_SPEED_LIMIT, lim->low_speed_bytes);
    SETOPT(CURLOPT_LOW_SPEED_TIME, lim->low_speed_secs);
    SETOPT(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)lim->max_bytes);
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_ERRORBUFFER, x->errbuf);
    SETOPT(CURLOPT_WRITEFUNCTION, on_body);
    SETOPT(CURLOPT_WRITEDATA, x);
    SETOPT(CURLOPT_HEADERFUNCTION, on_header);
    SETOPT(CURLOPT_HEADERDATA, x);
    SETOPT(CURLOPT_PREREQFUNCTION, on_prereq);
    SETOPT(CURLOPT_PREREQDATA, x);
    SETOPT(CURLOPT_USERAGENT, "dsforge/" DSF_VERSION);
    SETOPT(CURLOPT_ACCEPT_ENCODING, "");
    SETOPT(CURLOPT_SSL_VERIFYPEER, 1L);
    SETOPT(CURLOPT_SSL_VERIFYHOST, 2L);
    if (r->bearer) {
        /* Sent only to the original host: libcurl drops it on a redirect
        ** to another host (CURLOPT_UNRESTRICTED_AUTH stays off). */
        SETOPT(CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        SETOPT(CURLOPT_XOAUTH2_BEARER, r->bearer);
    }
    if (r->if_none_match) {
        char *hdr = dsf_xasprintf("If-None-Match: %s", r->if_none_match);
        x->headers = api->slist_append(x->headers, hdr);
        free(hdr);
    }
    if (r->if_modified_since) {
        char *hdr = dsf_xasprintf("If-Modified-Since: %s",
                                  r->if_modified_since);
        x->headers = api->slist_append(x->headers, hdr);
        free(hdr);
    }
    if (x->headers)
        SETOPT(CURLOPT_HTTPHEADER, x->headers);
    ca_from_env(x, api);
    return 0;
}

static void finish(xfer *x, const dsf_curl_api *api, CURLcode res)
{
    dsf_http_req *r = x->req;
    long status = 0;
    api->easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
    r->status = status;
    if (x->over_cap || res == CURLE_FILESIZE_EXCEEDED) {
        r->fail = DSF_HTTP_POLICY;
        r->error = dsf_xasprintf("response is larger than the limit of "
                                 "%zu bytes", x->max_bytes);
    } else if (x->bad_redirect) {
        r->fail = DSF_HTTP_POLICY;
        r->error = dsf_xstrdup("redirected to plain http:// on a "
                               "non-loopback host (use https://, or "
                               "--allow-http)");
    } else if (res == CURLE_TOO_MANY_REDIRECTS) {
        r->fail = DSF_HTTP_POLICY;
        r->error = dsf_xstrdup("too many redirects");
    } else if (res == CURLE_UNSUPPORTED_PROTOCOL) {
        r->fail = DSF_HTTP_POLICY;
        r->error = dsf_xasprintf("redirected to a forbidden scheme (%s)",
                                 x->errbuf[0] ? x->errbuf
                                              : api->easy_strerror(res));
    } else if (res != CURLE_OK) {
        r->fail = DSF_HTTP_NETWORK;
        r->error = dsf_xstrdup(x->errbuf[0] ? x->errbuf
                                            : api->easy_strerror(res));
    } else if (status == 304 &&
               (r->if_none_match || r->if_modified_since)) {
        r->not_modified = true;
        dsf_buf_clear(&r->body);
    } else if (status != 200) {
        r->fail = DSF_HTTP_NETWORK;
        r->error = dsf_xasprintf("HTTP status %ld", status);
    }
}

static void cleanup(xfer *x, const dsf_curl_api *api)
{
    if (x->h)
        api->easy_cleanup(x->h);
    if (x->headers)
        api->slist_free_all(x->headers);
    x->h = NULL;
    x->headers = NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void draw_progress(size_t done, size_t n, size_t bytes, bool end)
{
    int width = 30;
    int fill = n ? (int)((double)done / (double)n * width) : width;
    fprintf(stderr, "\rfetching [%.*s%*s] %zu/%zu files, %zu KiB", fill,
            "##############################", width - fill, "", done, n,
            bytes / 1024);
    if (end)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

int dsf_http_fetch(dsf_http_req *reqs, size_t n, const dsf_http_limits *lim,
                   dsf_diags *d)
{
    if (!n)
        return 0;
    const dsf_curl_api *api;
    int rc = dsf_curl_load(&api, d);
    if (rc)
        return rc;
    CURLM *m = api->multi_init();
    if (!m)
        return dsf_diag_error(d, DSF_ENET, NULL, 0, 0,
                              "libcurl: cannot create a transfer set");
    xfer *xs = dsf_xcalloc(n, sizeof *xs);
    int parallel = lim->max_parallel > 0 ? lim->max_parallel : 1;
    bool bar = lim->progress && n > 1 && isatty(STDERR_FILENO);
    size_t next = 0, done = 0, active = 0, bytes = 0;
    double last_draw = 0;
    for (;;) {
        while (next < n && active < (size_t)parallel) {
            xfer *x = &xs[next++];
            x->api = api;
            x->req = &reqs[x - xs];
            x->max_bytes = lim->max_bytes;
            if (setup(x, api, lim) != 0) {
                cleanup(x, api);
                done++;
                continue;
            }
            api->easy_setopt(x->h, CURLOPT_PRIVATE, (void *)x);
            if (api->multi_add_handle(m, x->h) != CURLM_OK) {
                fail_setup(x, "transfer", "cannot add it to the set");
                cleanup(x, api);
                done++;
                continue;
            }
            active++;
        }
        if (!active)
            break;
        int running = 0;
        CURLMcode mc = api->multi_perform(m, &running);
        if (mc == CURLM_OK && running)
            mc = api->multi_poll(m, NULL, 0, 200, NULL);
        if (mc != CURLM_OK) {
            rc = dsf_diag_error(d, DSF_ENET, NULL, 0, 0, "libcurl: %s",
                                api->multi_strerror(mc));
            break;
        }
        CURLMsg *msg;
        int left;
        while ((msg = api->multi_info_read(m, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            xfer *x = NULL;
            api->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &x);
            CURLcode res = msg->data.result;
            api->multi_remove_handle(m, x->h);
            finish(x, api, res);
            bytes += x->req->body.len;
            cleanup(x, api);
            active--;
            done++;
        }
        if (bar && now_s() - last_draw > 0.1) {
            draw_progress(done, n, bytes, false);
            last_draw = now_s();
        }
    }
    if (bar)
        draw_progress(done, n, bytes, true);
    for (size_t i = 0; i < n; i++) {
        if (xs[i].h) {
            api->multi_remove_handle(m, xs[i].h);
            if (!reqs[i].fail && !reqs[i].error) {
                reqs[i].fail = DSF_HTTP_NETWORK;
                reqs[i].error = dsf_xstrdup("transfer interrupted");
            }
        }
        cleanup(&xs[i], api);
    }
    api->multi_cleanup(m);
    free(xs);
    return rc;
}

void dsf_http_req_free(dsf_http_req *r)
{
    dsf_buf_free(&r->body);
    free(r->etag);
    free(r->last_modified);
    free(r->error);
    r->etag = r->last_modified = r->error = NULL;
}
