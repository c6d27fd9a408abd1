/*
** test_sha256.c -- SHA-256 (core/sha256.h): FIPS 180-4's examples with
** both implementations, and the two compared on every length and split
** a content address meets (the x86 SHA extensions, where this CPU has
** them, against the portable code).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/sha256.h"

static void hex_of(char hex[65], const void *data, size_t len)
{
    dsf_sha256_hex(hex, data, len);
}

/* The examples of FIPS 180-4 (and the NIST test vectors) in one call,
** and a million 'a's fed in pieces of 1,000. */
static void expect_examples(void)
{
    char hex[65];
    hex_of(hex, "abc", 3);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223"
                             "b00361a396177a9cb410ff61f20015ad");
    hex_of(hex, "", 0);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb924"
                             "27ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(hex, two, strlen(two));
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039"
                             "a33ce45964ff2167f6ecedd419db06c1");
    const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                       "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    hex_of(hex, four, strlen(four));
    assert_string_equal(hex, "cf5b16a778af8380036ce59e7b0492370"
                             "b249b11e8f07a51afac45037afee9d1");
    char thousand[1000];
    memset(thousand, 'a', sizeof thousand);
    dsf_sha256 s;
    dsf_sha256_init(&s);
    for (int i = 0; i < 1000; i++)
        dsf_sha256_update(&s, thousand, sizeof thousand);
    unsigned char d[32];
    dsf_sha256_final(&s, d);
    static const unsigned char million[32] = {
        0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7,
        0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97,
        0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};
    assert_memory_equal(d, million, 32);
}

static void test_examples(void **state)
{
    (void)state;
    expect_examples();
    dsf_sha256_force_portable(true);
    expect_examples();
    dsf_sha256_force_portable(false);
}

/* A digest of data fed in pieces of the given sizes (cycled). */
static void digest_in_pieces(unsigned char out[32], const unsigned char *data,
                             size_t len, const size_t *pieces, size_t npieces)
{
    dsf_sha256 s;
    dsf_sha256_init(&s);
    for (size_t at = 0, k = 0; at < len; k++) {
        size_t n = pieces[k % npieces];
        if (n > len - at)
            n = len - at;
        dsf_sha256_update(&s, data + at, n);
        at += n;
    }
    dsf_sha256_final(&s, out);
}

/* Every length from 0 to 600 bytes (each padding case, one to nine
** blocks), whole and in uneven pieces, gives the same digest with either
** implementation. */
static void test_implementations_agree(void **state)
{
    (void)state;
    unsigned char data[600];
    uint32_t x = 2463534242u; /* xorshift32: the same bytes every run */
    for (size_t i = 0; i < sizeof data; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        data[i] = (unsigned char)x;
    }
    static const size_t whole[] = {600}, uneven[] = {1, 63, 64, 7, 130};
    for (size_t len = 0; len <= sizeof data; len++) {
        unsigned char fast[32], fast2[32], slow[32], slow2[32];
        digest_in_pieces(fast, data, len, whole, 1);
        digest_in_pieces(fast2, data, len, uneven, 5);
        dsf_sha256_force_portable(true);
        digest_in_pieces(slow, data, len, whole, 1);
        digest_in_pieces(slow2, data, len, uneven, 5);
        dsf_sha256_force_portable(false);
        assert_memory_equal(fast, slow, 32);
        assert_memory_equal(fast2, slow, 32);
        assert_memory_equal(slow2, slow, 32);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_implementations_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
