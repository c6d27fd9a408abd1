/*
** sha256.h -- SHA-256 (FIPS 180-4), for content addresses and pins.
*/
#ifndef DSF_SHA256_H
#define DSF_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dsf_sha256 {
    uint32_t h[8];
    uint64_t total;      /* bytes hashed so far */
    unsigned char block[64];
    size_t fill;         /* bytes waiting in block */
} dsf_sha256;

void dsf_sha256_init(dsf_sha256 *s);
void dsf_sha256_update(dsf_sha256 *s, const void *data, size_t len);
/* Writes the 32-byte digest to out. */
void dsf_sha256_final(dsf_sha256 *s, unsigned char out[32]);
/* The lower-case hex digest of data into hex (65 bytes with the NUL). */
void dsf_sha256_hex(char hex[65], const void *data, size_t len);

/* Where the CPU has the x86 SHA extensions they are used (chosen at the
** first hash); on: the portable code from now on, off: the choice is made
** again. For tests, which compare the two. */
void dsf_sha256_force_portable(bool on);

#endif
