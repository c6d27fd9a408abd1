/* sha256.c -- see sha256.h. FIPS 180-4: a straightforward portable
** implementation, and the x86 SHA extensions where the CPU has them. */
#include "sha256.h"

#include <stdbool.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

/* The portable compression of n 64-byte blocks at p into h. */
static void compress_portable(uint32_t h[8], const unsigned char *p,
                              size_t n)
{
    for (; n--; p += 64) {
        uint32_t w[64];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
                   (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
                          (w[i - 15] >> 3);
            uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
                          (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
        uint32_t e = h[4], f = h[5], g = h[6], k = h[7];
        for (int i = 0; i < 64; i++) {
            uint32_t S1 = ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25);
            uint32_t ch = (e & f) ^ (~e & g);
            uint32_t t1 = k + S1 + ch + K[i] + w[i];
            uint32_t S0 = ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22);
            uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
            uint32_t t2 = S0 + mj;
            k = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
        h[5] += f;
        h[6] += g;
        h[7] += k;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define DSF_SHA256_X86 1

/* The same with the x86 SHA extensions (Intel's SHA-NI: two rounds per
** sha256rnds2, the message schedule by sha256msg1/msg2), about twenty
** times fewer instructions. State is kept as ABEF and CDGH, as the
** instructions want it. */
__attribute__((target("sha,sse4.1,ssse3")))
static void compress_shani(uint32_t h[8], const unsigned char *p, size_t n)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL,
                                         0x0405060700010203LL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)(const void *)&h[0]);
    __m128i st1 = _mm_loadu_si128((const __m128i *)(const void *)&h[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);          /* CDAB */
    st1 = _mm_shuffle_epi32(st1, 0x1B);          /* EFGH */
    __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);  /* ABEF */
    st1 = _mm_blend_epi16(st1, tmp, 0xF0);       /* CDGH */
    for (; n--; p += 64) {
        __m128i abef = st0, cdgh = st1, w[4];
        for (int j = 0; j < 4; j++)
            w[j] = _mm_shuffle_epi8(
                _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * j)),
                bswap);
        for (int g = 0; g < 16; g++) {
            if (g >= 4) /* W[g] from W[g-4] .. W[g-1] (FIPS 180-4 6.2.2) */
                w[g & 3] = _mm_sha256msg2_epu32(
                    _mm_add_epi32(_mm_sha256msg1_epu32(w[g & 3],
                                                       w[(g + 1) & 3]),
                                  _mm_alignr_epi8(w[(g + 3) & 3],
                                                  w[(g + 2) & 3], 4)),
                    w[(g + 3) & 3]);
            __m128i msg = _mm_add_epi32(
                w[g & 3],
                _mm_loadu_si128((const __m128i *)(const void *)&K[4 * g]));
            st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
            st0 = _mm_sha256rnds2_epu32(st0, st1,
                                        _mm_shuffle_epi32(msg, 0x0E));
        }
        st0 = _mm_add_epi32(st0, abef);
        st1 = _mm_add_epi32(st1, cdgh);
    }
    tmp = _mm_shuffle_epi32(st0, 0x1B);          /* FEBA */
    st1 = _mm_shuffle_epi32(st1, 0xB1);          /* DCHG */
    st0 = _mm_blend_epi16(tmp, st1, 0xF0);       /* DCBA */
    st1 = _mm_alignr_epi8(st1, tmp, 8);          /* HGFE */
    _mm_storeu_si128((__m128i *)(void *)&h[0], st0);
    _mm_storeu_si128((__m128i *)(void *)&h[4], st1);
}

static bool cpu_has_sha(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || /* SSE4.1 */
        !(c & (1u << 9)))                                       /* SSSE3 */
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
}
#endif

/* 0: not chosen yet; 1: portable; 2: SHA extensions. */
static int impl;

void dsf_sha256_force_portable(bool on)
{
    impl = on ? 1 : 0;
}

static void compress(uint32_t h[8], const unsigned char *p, size_t n)
{
#ifdef DSF_SHA256_X86
    if (!impl)
        impl = cpu_has_sha() ? 2 : 1;
    if (impl == 2) {
        compress_shani(h, p, n);
        return;
    }
#endif
    compress_portable(h, p, n);
}

void dsf_sha256_init(dsf_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->total = 0;
    s->fill = 0;
}

void dsf_sha256_update(dsf_sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->total += len;
    if (s->fill) {
        size_t take = 64 - s->fill;
        if (take > len)
            take = len;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        len -= take;
        if (s->fill < 64)
            return;
        compress(s->h, s->block, 1);
        s->fill = 0;
    }
    if (len >= 64) { /* whole blocks straight from data */
        compress(s->h, p, len / 64);
        p += len / 64 * 64;
        len %= 64;
    }
    if (len)
        memcpy(s->block, p, len);
    s->fill = len;
}

void dsf_sha256_final(dsf_sha256 *s, unsigned char out[32])
{
    uint64_t bits = s->total * 8;
    s->block[s->fill++] = 0x80;
    if (s->fill > 56) {
        memset(s->block + s->fill, 0, 64 - s->fill);
        compress(s->h, s->block, 1);
        s->fill = 0;
    }
    memset(s->block + s->fill, 0, 56 - s->fill);
    for (int i = 0; i < 8; i++)
        s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    compress(s->h, s->block, 1);
    s->fill = 0;
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void dsf_sha256_hex(char hex[65], const void *data, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    dsf_sha256 s;
    unsigned char d[32];
    dsf_sha256_init(&s);
    dsf_sha256_update(&s, data, len);
    dsf_sha256_final(&s, d);
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
}
