/*
** fuzz_scan.c -- libFuzzer target for collect's line scan (collect/
** scan.h), the first reader of every log a run leaves behind. Properties:
** no crash, no leak, and the lines found are exactly those a naive
** line-by-line search finds, in file order, each with the bits of the
** substrings it holds.
*/
#define _GNU_SOURCE /* memfd_create, memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collect/scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const needles[] = {"Error", "RunningAvgSamplesPerSec=",
                                      "NCCL", "a", "\xff\xfe"};
#define NNEEDLES (sizeof needles / sizeof *needles)

/* The reference: split at '\n', keep the lines holding a needle. */
static void check(const char *text, size_t size, const dsf_scan *s)
{
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && text[i] != '\n')
            continue;
        size_t len = i - start;
        if (i == size && len == 0)
            break;
        uint64_t bits = 0;
        for (size_t n = 0; n < NNEEDLES; n++)
            if (memmem(text + start, len, needles[n], strlen(needles[n])))
                bits |= (uint64_t)1 << n;
        if (bits) {
            size_t want = len > DSF_SCAN_MAX_LINE ? DSF_SCAN_MAX_LINE : len;
            if (want && text[start + want - 1] == '\r')
                want--;
            if (k >= s->n || s->lines[k].len != want ||
                memcmp(s->lines[k].text, text + start, want) ||
                s->lines[k].needles != bits)
                abort();
            k++;
        }
        start = i + 1;
    }
    if (k != s->n || s->dropped)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("log", 0);
    if (fd < 0)
        return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    dsf_scan s = DSF_SCAN_INIT;
    dsf_diags d = DSF_DIAGS_INIT;
    if (dsf_scan_file(&s, path, needles, NNEEDLES, &d) != 0)
        abort();
    check((const char *)data, size, &s);
    dsf_scan_free(&s);
    dsf_diags_free(&d);
    close(fd);
    return 0;
}
