/* scan.c -- see scan.h. */
#define _GNU_SOURCE /* memmem, memrchr */
#include "collect/scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/xalloc.h"

#define BLOCK (1u << 20)

typedef struct hit {
    size_t start, end;
    uint64_t needles;
} hit;

typedef struct scanner {
    dsf_scan_line head[DSF_SCAN_HEAD];
    size_t nhead;
    dsf_scan_line *tail;   /* ring of DSF_SCAN_TAIL */
    size_t tail_first, ntail;
    size_t dropped;
    hit *hits;
    size_t nhits, cap_hits;
} scanner;

static void keep_line(scanner *s, const char *text, size_t len,
                      uint64_t needles)
{
    if (len > DSF_SCAN_MAX_LINE)
        len = DSF_SCAN_MAX_LINE;
    if (len && text[len - 1] == '\r')
        len--;
    dsf_scan_line l = {dsf_xstrndup(text, len), len, needles};
    if (s->nhead < DSF_SCAN_HEAD) {
        s->head[s->nhead++] = l;
        return;
    }
    if (!s->tail)
        s->tail = dsf_xmalloc(DSF_SCAN_TAIL * sizeof *s->tail);
    if (s->ntail < DSF_SCAN_TAIL) {
        s->tail[(s->tail_first + s->ntail++) % DSF_SCAN_TAIL] = l;
        return;
    }
    free(s->tail[s->tail_first].text);
    s->tail[s->tail_first] = l;
    s->tail_first = (s->tail_first + 1) % DSF_SCAN_TAIL;
    s->dropped++;
}

static int by_start(const void *a, const void *b)
{
    const hit *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void add_hit(scanner *s, size_t start, size_t end, unsigned k)
{
    if (s->nhits == s->cap_hits) {
        s->cap_hits = s->cap_hits ? 2 * s->cap_hits : 256;
        s->hits = dsf_xrealloc(s->hits, s->cap_hits * sizeof *s->hits);
    }
    s->hits[s->nhits++] = (hit){start, end, (uint64_t)1 << k};
}

/* The lines of buf[0..len) (whole lines) that hold a needle. */
static void scan_block(scanner *s, const char *buf, size_t len,
                       const char *const *needles, const size_t *nlens,
                       size_t n)
{
    s->nhits = 0;
    for (unsigned k = 0; k < n; k++) {
        const char *p = buf, *end = buf + len;
        while (p < end) {
            const char *h = memmem(p, (size_t)(end - p), needles[k], nlens[k]);
            if (!h)
                break;
            const char *ls = memrchr(buf, '\n', (size_t)(h - buf));
            ls = ls ? ls + 1 : buf;
            const char *le = memchr(h, '\n', (size_t)(end - h));
            if (!le)
                le = end;
            add_hit(s, (size_t)(ls - buf), (size_t)(le - buf), k);
            p = le + 1;
        }
    }
    if (n > 1 && s->nhits > 1) /* hits is NULL before the first */
        qsort(s->hits, s->nhits, sizeof *s->hits, by_start);
    for (size_t i = 0; i < s->nhits;) {
        hit h = s->hits[i++];
        while (i < s->nhits && s->hits[i].start == h.start)
            h.needles |= s->hits[i++].needles;
        keep_line(s, buf + h.start, h.end - h.start, h.needles);
    }
}

static void finish(scanner *s, dsf_scan *out)
{
    out->n = s->nhead + s->ntail;
    out->lines = dsf_xmalloc((out->n ? out->n : 1) * sizeof *out->lines);
    memcpy(out->lines, s->head, s->nhead * sizeof *out->lines);
    for (size_t i = 0; i < s->ntail; i++)
        out->lines[s->nhead + i] =
            s->tail[(s->tail_first + i) % DSF_SCAN_TAIL];
    out->dropped = s->dropped;
    free(s->tail);
    free(s->hits);
}

static void discard(scanner *s)
{
    for (size_t i = 0; i < s->nhead; i++)
        free(s->head[i].text);
    for (size_t i = 0; i < s->ntail; i++)
        free(s->tail[(s->tail_first + i) % DSF_SCAN_TAIL].text);
    free(s->tail);
    free(s->hits);
}

/* Reads up to want bytes into buf; the count, or -1 (errno). */
static ssize_t read_full(int fd, char *buf, size_t want)
{
    size_t got = 0;
    while (got < want) {
        ssize_t r = read(fd, buf + got, want - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int scan_fd(scanner *s, int fd, const char *const *needles,
                   const size_t *nlens, size_t n)
{
    char *buf = dsf_xmalloc(BLOCK);
    size_t carry = 0;
    for (;;) {
        ssize_t r = read_full(fd, buf + carry, BLOCK - carry);
        if (r < 0) {
            free(buf);
            return -1;
        }
        size_t len = carry + (size_t)r;
        bool eof = (size_t)r < BLOCK - carry;
        size_t whole = len;
        if (!eof) {
            const char *nl = memrchr(buf, '\n', len);
            /* a line longer than the block is cut at the block's end */
            whole = nl ? (size_t)(nl - buf) + 1 : len;
        }
        scan_block(s, buf, whole, needles, nlens, n);
        carry = len - whole;
        memmove(buf, buf + whole, carry);
        if (eof)
            break;
    }
    free(buf);
    return 0;
}

int dsf_scan_file(dsf_scan *out, const char *path,
                  const char *const *needles, size_t n, dsf_diags *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot open: %s",
                              strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0,
                              "not a regular file");
    }
    size_t nlens[DSF_SCAN_MAX_NEEDLES];
    if (n > DSF_SCAN_MAX_NEEDLES)
        n = DSF_SCAN_MAX_NEEDLES;
    for (size_t k = 0; k < n; k++)
        nlens[k] = strlen(needles[k]);
    scanner *s = dsf_xcalloc(1, sizeof *s);
    int rc = scan_fd(s, fd, needles, nlens, n);
    int e = errno;
    close(fd);
    if (rc) {
        discard(s);
        free(s);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot read: %s",
                              strerror(e));
    }
    finish(s, out);
    free(s);
    return 0;
}

void dsf_scan_free(dsf_scan *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->lines[i].text);
    free(s->lines);
    *s = (dsf_scan)DSF_SCAN_INIT;
}
