/*
** test_prefault.c -- core/prefault.h: after dsf_prefault_image, reading
** the executable's and libc's code and read-only data takes (almost) no
** page fault; without it, the same reads take one fault per few pages.
** Each measurement runs in a fresh child: a fork does not copy the page
** tables of file mappings, so the child starts with none.
*/
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <link.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/prefault.h"

static volatile unsigned char sink;

/* Not instrumented: AddressSanitizer's check of each read would fault in
** the shadow pages, which are not the image's. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((no_sanitize_address))
#endif
static int touch_object(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    (void)ud;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    base = base ? base + 1 : info->dlpi_name;
    if (base && *base && strncmp(base, "libc.so", 7) != 0)
        return 0; /* the executable and libc, as prefault.c maps */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
            continue;
        const unsigned char *p =
            (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        for (size_t off = 0; off < ph->p_filesz; off += 4096)
            sink ^= p[off];
    }
    return 0;
}

/* The minor faults a fresh child takes reading every page of the
** executable's and libc's read-only segments, after prefaulting them or
** not; -1 when the kernel cannot prefault (no MADV_POPULATE_READ). */
static long faults_reading_image(int prefault)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        long n = -1;
        if (!prefault || dsf_prefault_image() > 0) {
            struct rusage a, b;
            getrusage(RUSAGE_SELF, &a);
            dl_iterate_phdr(touch_object, NULL);
            getrusage(RUSAGE_SELF, &b);
            n = b.ru_minflt - a.ru_minflt;
        }
        ssize_t w = write(fds[1], &n, sizeof n);
        _exit(w == (ssize_t)sizeof n ? 0 : 1);
    }
    close(fds[1]);
    long n = -2;
    assert_int_equal(read(fds[0], &n, sizeof n), (ssize_t)sizeof n);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return n;
}

static void test_reading_the_image_takes_no_faults(void **state)
{
    (void)state;
    long with = faults_reading_image(1);
    if (with < 0)
        skip(); /* a kernel before 5.14 */
    long without = faults_reading_image(0);
    /* libc alone is over a megabyte: dozens of faults, even with the
    ** kernel mapping 16 pages around each */
    assert_true(without >= 16);
    assert_true(with * 8 <= without);
}

/* Writes every page of 48 KiB of this frame's stack (not inlined: its
** frame is below its caller's). */
__attribute__((noinline)) static void write_stack(void)
{
    volatile unsigned char buf[48 << 10];
    for (size_t off = 0; off < sizeof buf; off += 4096)
        buf[off] = 1;
}

/* The minor faults a fresh child takes writing 48 KiB of stack below the
** frame that prefaulted (or did not). */
static long faults_writing_stack(int prefault)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (prefault)
            dsf_prefault_image();
        struct rusage a, b;
        getrusage(RUSAGE_SELF, &a);
        write_stack();
        getrusage(RUSAGE_SELF, &b);
        long n = b.ru_minflt - a.ru_minflt;
        _exit(write(fds[1], &n, sizeof n) == (ssize_t)sizeof n ? 0 : 1);
    }
    close(fds[1]);
    long n = -1;
    assert_int_equal(read(fds[0], &n, sizeof n), (ssize_t)sizeof n);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return n;
}

/* The stack a Lua command will reach is part of what it prefaults. */
static void test_the_stack_below_takes_no_faults(void **state)
{
    (void)state;
    if (faults_reading_image(1) < 0)
        skip(); /* a kernel before 5.14 */
    long without = faults_writing_stack(0);
    long with = faults_writing_stack(1);
    assert_true(without >= 8);
    assert_true(with * 4 <= without);
}

static void test_once(void **state)
{
    (void)state;
    unsigned long first = dsf_prefault_image();
    assert_int_equal(dsf_prefault_image(), 0);
    (void)first;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reading_the_image_takes_no_faults),
        cmocka_unit_test(test_the_stack_below_takes_no_faults),
        cmocka_unit_test(test_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
