/* rpc.c -- see rpc.h. */
#include "lsp/rpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/xalloc.h"

void dsf_rpc_in_init(dsf_rpc_in *in, int fd)
{
    memset(in, 0, sizeof *in);
    in->fd = fd;
    in->max_body = DSF_RPC_MAX_BODY;
}

void dsf_rpc_in_free(dsf_rpc_in *in)
{
    free(in->buf);
    in->buf = NULL;
    in->pos = in->len = in->cap = 0;
}

/* Reads more bytes into in->buf: the count read, 0 at the end, -1 on an
** error. */
static long fill(dsf_rpc_in *in)
{
    if (in->pos > 0 && in->pos == in->len)
        in->pos = in->len = 0;
    if (in->len == in->cap) {
        if (in->pos > 0) {
            memmove(in->buf, in->buf + in->pos, in->len - in->pos);
            in->len -= in->pos;
            in->pos = 0;
        }
        if (in->len == in->cap) {
            in->cap = in->cap ? in->cap * 2 : 65536;
            in->buf = dsf_xrealloc(in->buf, in->cap);
        }
    }
    for (;;) {
        ssize_t n = read(in->fd, in->buf + in->len, in->cap - in->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0)
            in->len += (size_t)n;
        return (long)n;
    }
}

int dsf_rpc_parse_header(const char *hdr, size_t n, size_t *content_length,
                         const char **why)
{
    static const char name[] = "content-length";
    int seen = 0;
    size_t i = 0;
    while (i < n) {
        const char *eol = memchr(hdr + i, '\n', n - i);
        size_t end = eol ? (size_t)(eol - hdr) : n;
        size_t lend = end > i && hdr[end - 1] == '\r' ? end - 1 : end;
        const char *colon = memchr(hdr + i, ':', lend - i);
        if (!colon) {
            *why = "a header line without ':'";
            return -1;
        }
        size_t klen = (size_t)(colon - (hdr + i));
        if (klen == sizeof name - 1 && !strncasecmp(hdr + i, name, klen)) {
            if (seen++) {
                *why = "Content-Length given twice";
                return -1;
            }
            size_t v = 0, j = (size_t)(colon - hdr) + 1, digits = 0;
            while (j < lend && (hdr[j] == ' ' || hdr[j] == '\t'))
                j++;
            for (; j < lend && hdr[j] >= '0' && hdr[j] <= '9'; j++) {
                if (++digits > 12) {
                    *why = "Content-Length is too large";
                    return -1;
                }
                v = v * 10 + (size_t)(hdr[j] - '0');
            }
            while (j < lend && (hdr[j] == ' ' || hdr[j] == '\t'))
                j++;
            if (!digits || j != lend) {
                *why = "Content-Length is not a number";
                return -1;
            }
            *content_length = v;
        }
        i = end + 1;
    }
    if (!seen) {
        *why = "no Content-Length header";
        return -1;
    }
    return 0;
}

/* The end of the header block in in->buf[pos..len): the offset just past
** its blank line, with *hlen the block's length; 0 when not there yet. */
static size_t header_end(const dsf_rpc_in *in, size_t *hlen)
{
    if (!in->buf) /* nothing read yet */
        return 0;
    const char *b = in->buf + in->pos;
    size_t n = in->len - in->pos;
    for (size_t i = 0; i < n; i++) {
        if (b[i] != '\n')
            continue;
        if (i + 1 < n && b[i + 1] == '\n') {
            *hlen = i + 1;
            return i + 2;
        }
        if (i + 2 < n && b[i + 1] == '\r' && b[i + 2] == '\n') {
            *hlen = i + 1;
            return i + 3;
        }
    }
    return 0;
}

/* Drops n bytes of input (buffered first, then read): 0, or
** DSF_RPC_EOF when the input ends first. */
static int skip(dsf_rpc_in *in, size_t n)
{
    while (n) {
        if (in->pos == in->len && fill(in) <= 0)
            return DSF_RPC_EOF;
        size_t k = in->len - in->pos < n ? in->len - in->pos : n;
        in->pos += k;
        n -= k;
    }
    return 0;
}

int dsf_rpc_read(dsf_rpc_in *in, char **body, size_t *len,
                 const char **why)
{
    *body = NULL;
    *len = 0;
    size_t hlen = 0, end;
    while (!(end = header_end(in, &hlen))) {
        if (in->len - in->pos > DSF_RPC_MAX_HEADER) {
            /* no blank line in sight: drop what is buffered */
            in->pos = in->len;
            *why = "a header block longer than 8192 bytes";
            return DSF_RPC_BAD_HEADER;
        }
        if (fill(in) <= 0)
            return DSF_RPC_EOF;
    }
    size_t clen;
    int bad = dsf_rpc_parse_header(in->buf + in->pos, hlen, &clen, why);
    in->pos += end;
    if (bad)
        return DSF_RPC_BAD_HEADER;
    if (clen > in->max_body) {
        *why = "a body over the size limit";
        return skip(in, clen) ? DSF_RPC_EOF : DSF_RPC_TOO_BIG;
    }
    char *out = dsf_xmalloc(clen + 1);
    size_t got = 0;
    while (got < clen) {
        if (in->pos == in->len && fill(in) <= 0) {
            free(out);
            return DSF_RPC_EOF;
        }
        size_t k = in->len - in->pos < clen - got ? in->len - in->pos
                                                  : clen - got;
        memcpy(out + got, in->buf + in->pos, k);
        in->pos += k;
        got += k;
    }
    out[clen] = '\0';
    *body = out;
    *len = clen;
    return DSF_RPC_OK;
}

int dsf_rpc_write(int fd, const char *body, size_t len)
{
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", len);
    const char *parts[2] = {head, body};
    size_t sizes[2] = {(size_t)hn, len};
    for (int p = 0; p < 2; p++) {
        size_t off = 0;
        while (off < sizes[p]) {
            ssize_t n = write(fd, parts[p] + off, sizes[p] - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return -1;
            off += (size_t)n;
        }
    }
    return 0;
}
