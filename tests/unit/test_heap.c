/*
** test_heap.c -- the Lua states' memory (core/heap.h): the first call
** populates about DSF_HEAP_POPULATE bytes of the C heap (glibc, no
** AddressSanitizer), later calls do nothing, and the memory is usable;
** the pool of small blocks keeps contents across resizes, reuses a freed
** block for the next of its size class, is copied whole into a forked
** child in one call, and steps aside when a tool that checks memory
** replaces malloc.
*/
#define _DEFAULT_SOURCE /* sbrk */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/heap.h"

static void test_prefault_once(void **state)
{
    (void)state;
    unsigned long n = dsf_heap_prefault();
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
    unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
    assert_true(n >= DSF_HEAP_POPULATE - 2 * page);
    assert_true(n <= DSF_HEAP_POPULATE);
#else
    assert_int_equal(n, 0);
#endif
    assert_int_equal(dsf_heap_prefault(), 0);
    /* The heap still works: small and large blocks. */
    char *a = malloc(100), *b = malloc(3u << 20);
    assert_non_null(a);
    assert_non_null(b);
    memset(a, 1, 100);
    memset(b, 2, 3u << 20);
    free(b);
    free(a);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7);
}

static bool holds(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 7))
            return false;
    return true;
}

#if defined(__SANITIZE_ADDRESS__)
#define CHECKED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHECKED_BUILD 1
#endif
#endif

static void test_pool_blocks(void **state)
{
    (void)state;
#if defined(CHECKED_BUILD)
    assert_false(dsf_heap_pooled());
#else
    assert_true(dsf_heap_pooled()); /* Linux, not under memcheck */
#endif
    /* Every size up to past the small limit: aligned, usable, and a
    ** resize keeps the common prefix, across classes and into malloc. */
    for (size_t n = 1; n <= DSF_HEAP_SMALL + 64; n += 5) {
        unsigned char *p = dsf_heap_realloc(NULL, 0, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        fill(p, n, (unsigned)n);
        size_t grown = n * 2 + 3;
        p = dsf_heap_realloc(p, n, grown);
        assert_non_null(p);
        assert_true(holds(p, n, (unsigned)n));
        fill(p, grown, 9);
        size_t shrunk = n / 2 + 1;
        p = dsf_heap_realloc(p, grown, shrunk);
        assert_non_null(p);
        assert_true(holds(p, shrunk, 9));
        assert_null(dsf_heap_realloc(p, shrunk, 0));
    }
    assert_null(dsf_heap_realloc(NULL, 0, 0));
    if (!dsf_heap_pooled())
        return;
    /* Within a class a resize keeps the block; a freed block is the next
    ** one given for its class; blocks of a class do not overlap. */
    unsigned char *a = dsf_heap_realloc(NULL, 0, 40);
    assert_ptr_equal(dsf_heap_realloc(a, 40, 48), a);
    unsigned char *b = dsf_heap_realloc(NULL, 0, 33);
    assert_true(b >= a + 48 || b + 48 <= a);
    dsf_heap_realloc(a, 48, 0);
    assert_ptr_equal(dsf_heap_realloc(NULL, 0, 47), a);
    dsf_heap_realloc(a, 47, 0);
    dsf_heap_realloc(b, 33, 0);
    /* Many live blocks stay distinct (crosses populated steps). */
    enum { N = 40000 };
    unsigned char **v = malloc(N * sizeof *v);
    assert_non_null(v);
    for (unsigned i = 0; i < N; i++) {
        v[i] = dsf_heap_realloc(NULL, 0, 24);
        assert_non_null(v[i]);
        fill(v[i], 24, i);
    }
    for (unsigned i = 0; i < N; i++) {
        assert_true(holds(v[i], 24, i));
        dsf_heap_realloc(v[i], 24, 0);
    }
    free(v);
}

/* What a measurement in a child does: prepare (a nonzero return means
** "not supported here"), then the writes whose faults are counted. */
typedef struct in_child {
    int (*prepare)(void *ctx);
    void (*write)(void *ctx);
    void *ctx;
} in_child;

/* The minor faults a child forked now takes in m.write, after m.prepare;
** -1 when m.prepare says the kernel cannot (no MADV_POPULATE_WRITE). */
static long faults_in_child(in_child m)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (m.prepare && m.prepare(m.ctx) != 0)
            _exit(2);
        struct rusage a, b;
        getrusage(RUSAGE_SELF, &a);
        m.write(m.ctx);
        getrusage(RUSAGE_SELF, &b);
        long faults = b.ru_minflt - a.ru_minflt;
        _exit(write(fds[1], &faults, sizeof faults) == sizeof faults ? 0 : 1);
    }
    close(fds[1]);
    long faults = -1;
    ssize_t got = read(fds[0], &faults, sizeof faults);
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 2)
        return -1;
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(got, (ssize_t)sizeof faults);
    return faults;
}

/* The same writes take under a tenth of the faults (of at least at_least)
** when the child prepared them with populated than with plain; skipped
** where the kernel cannot populate. */
static void expect_populated(in_child populated, in_child plain,
                             long at_least)
{
    long with = faults_in_child(populated);
    if (with < 0)
        skip();
    long without = faults_in_child(plain);
    assert_true(without >= at_least);
    assert_true(with * 10 <= without);
}

typedef struct blocks {
    unsigned char **v;
    unsigned n;
} blocks;

static int after_fork(void *ctx)
{
    (void)ctx;
    return dsf_heap_after_fork() == 0;
}

static void write_blocks(void *ctx)
{
    const blocks *b = ctx;
    for (unsigned i = 0; i < b->n; i++)
        b->v[i][0] ^= 1;
}

/* A forked worker's Lua writes its pool pages (the collector marks every
** live object): after dsf_heap_after_fork they are its own already, so
** the writes take no copy-on-write fault. */
static void test_pool_pages_copied_after_fork(void **state)
{
    (void)state;
    if (!dsf_heap_pooled())
        skip();
    enum { N = 20000 }; /* 20,000 blocks of 48 bytes: ~240 pages */
    unsigned char **v = malloc(N * sizeof *v);
    assert_non_null(v);
    for (unsigned i = 0; i < N; i++) {
        v[i] = dsf_heap_realloc(NULL, 0, 48);
        assert_non_null(v[i]);
        v[i][0] = 0;
    }
    blocks b = {v, N};
    expect_populated((in_child){after_fork, write_blocks, &b},
                     (in_child){NULL, write_blocks, &b}, 200);
    for (unsigned i = 0; i < N; i++)
        dsf_heap_realloc(v[i], 48, 0);
    free(v);
}

/* The same for the C heap from the prefaulted arena to its top: blocks
** malloc'd there (JSON trees, Lua's larger blocks), and the room above
** them the heap grows into. */
static void test_c_heap_pages_copied_after_fork(void **state)
{
    (void)state;
#if defined(CHECKED_BUILD)
    skip(); /* AddressSanitizer's own allocator: no arena */
#endif
    dsf_heap_prefault(); /* (test_prefault_once did it, in this order) */
    enum { N = 96 };  /* 96 blocks of 4 KiB: in the arena */
    unsigned char *v[N];
    for (unsigned i = 0; i < N; i++) {
        v[i] = malloc(4000);
        assert_non_null(v[i]);
        v[i][0] = 0;
    }
    blocks b = {v, N};
    expect_populated((in_child){after_fork, write_blocks, &b},
                     (in_child){NULL, write_blocks, &b}, 80);
    for (unsigned i = 0; i < N; i++)
        free(v[i]);
}

/* Grows the C heap (sbrk, by the 1 MiB top pad the arena set), then calls
** dsf_heap_follow when ctx says so (nonzero: it populated nothing). */
static int grow_heap(void *ctx)
{
    char *top = sbrk(0);
    for (unsigned i = 0; i < 1000 && sbrk(0) == top; i++)
        if (!malloc(4000)) /* kept: the heap must grow */
            _exit(1);
    if (sbrk(0) == top)
        _exit(4);
    if (!*(bool *)ctx)
        return 0;
    if (dsf_heap_follow() == 0)
        return 1;
    if (dsf_heap_follow() != 0) /* nothing more until it grows again */
        _exit(3);
    return 0;
}

/* The next 200 blocks of 4 KiB, malloc'd and written. */
static void fill_grown_heap(void *ctx)
{
    (void)ctx;
    for (unsigned i = 0; i < 200; i++) {
        unsigned char *p = malloc(4000);
        if (!p)
            _exit(1);
        p[0] = 1;
    }
}

/* A loop over many items calls dsf_heap_follow once per item: the room
** the C heap grew into is faulted in at once, not page by page. */
static void test_follow_faults_in_growth(void **state)
{
    (void)state;
#if defined(CHECKED_BUILD)
    skip();
#endif
    dsf_heap_prefault();
    bool follow = true, plain = false;
    expect_populated((in_child){grow_heap, fill_grown_heap, &follow},
                     (in_child){grow_heap, fill_grown_heap, &plain}, 150);
}

typedef struct big_block {
    unsigned char *p;
    size_t n;
    bool populate;
} big_block;

static int alloc_big_block(void *ctx)
{
    big_block *b = ctx;
    if (!(b->p = malloc(b->n)))
        _exit(1);
    return b->populate && dsf_heap_populate(b->p, b->n) == 0;
}

static void write_big_block(void *ctx)
{
    const big_block *b = ctx;
    for (size_t off = 0; off < b->n; off += 4096)
        b->p[off] = 1;
}

/* A large array about to be filled (a sweep's variants) is faulted in
** with one call. */
static void test_populate_a_block(void **state)
{
    (void)state;
#if defined(CHECKED_BUILD)
    skip();
#endif
    big_block populated = {NULL, 4u << 20, true};
    big_block plain = {NULL, 4u << 20, false};
    expect_populated((in_child){alloc_big_block, write_big_block, &populated},
                     (in_child){alloc_big_block, write_big_block, &plain},
                     1000);
}

/* In a process run by valgrind's memcheck (or another tool that replaces
** malloc) the pool is off: the tool sees every block. */
static void test_pool_off_under_memcheck(void **state)
{
    (void)state;
#if defined(CHECKED_BUILD)
    skip(); /* no pool at all; and ASan wants to be the first preload */
#endif
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("LD_PRELOAD", "/usr/libexec/valgrind/vgpreload_core-amd64-"
               "linux.so:/usr/libexec/valgrind/vgpreload_memcheck-amd64-"
               "linux.so", 1);
        /* A fresh process: the choice is made once, on the first block. */
        execl("/proc/self/exe", "test_heap", "--pooled?", (char *)NULL);
        _exit(99);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 10); /* not pooled */
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--pooled?"))
        return dsf_heap_pooled() ? 11 : 10;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefault_once),
        cmocka_unit_test(test_pool_blocks),
        cmocka_unit_test(test_pool_pages_copied_after_fork),
        cmocka_unit_test(test_c_heap_pages_copied_after_fork),
        cmocka_unit_test(test_follow_faults_in_growth),
        cmocka_unit_test(test_populate_a_block),
        cmocka_unit_test(test_pool_off_under_memcheck),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
