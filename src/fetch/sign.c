/* sign.c -- see sign.h. */
#include "sign.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/dynlib.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/xalloc.h"

#define LIBCRYPTO_SONAME "libcrypto.so.3"
#define SECRET_HEADER "dsforge-ed25519-secret-key v1\n"
#define PUBLIC_HEADER "dsforge-ed25519-public-key v1\n"

/* The few libcrypto entry points used, resolved at run time. */
static struct {
    EVP_PKEY *(*new_raw_private)(int, ENGINE *, const unsigned char *,
                                 size_t);
    EVP_PKEY *(*new_raw_public)(int, ENGINE *, const unsigned char *,
                                size_t);
    int (*get_raw_public)(const EVP_PKEY *, unsigned char *, size_t *);
    void (*pkey_free)(EVP_PKEY *);
    EVP_MD_CTX *(*ctx_new)(void);
    void (*ctx_free)(EVP_MD_CTX *);
    int (*sign_init)(EVP_MD_CTX *, EVP_PKEY_CTX **, const EVP_MD *,
                     ENGINE *, EVP_PKEY *);
    int (*sign)(EVP_MD_CTX *, unsigned char *, size_t *,
                const unsigned char *, size_t);
    int (*verify_init)(EVP_MD_CTX *, EVP_PKEY_CTX **, const EVP_MD *,
                       ENGINE *, EVP_PKEY *);
    int (*verify)(EVP_MD_CTX *, const unsigned char *, size_t,
                  const unsigned char *, size_t);
    int (*rand_bytes)(unsigned char *, int);
} cr;
static int loaded; /* 0 not tried, 1 ok, -1 failed */
static char load_error[512];

#define RESOLVE(field, sym)                                              \
    if (dsf_dynlib_fn(lib, "libcrypto", sym, &cr.field, sizeof cr.field,\
                      load_error, sizeof load_error))                    \
        return -1

static int load(void)
{
    void *lib = dsf_dynlib_open("DSFORGE_LIBCRYPTO", LIBCRYPTO_SONAME,
                                load_error, sizeof load_error);
    if (!lib)
        return -1;
    RESOLVE(new_raw_private, "EVP_PKEY_new_raw_private_key");
    RESOLVE(new_raw_public, "EVP_PKEY_new_raw_public_key");
    RESOLVE(get_raw_public, "EVP_PKEY_get_raw_public_key");
    RESOLVE(pkey_free, "EVP_PKEY_free");
    RESOLVE(ctx_new, "EVP_MD_CTX_new");
    RESOLVE(ctx_free, "EVP_MD_CTX_free");
    RESOLVE(sign_init, "EVP_DigestSignInit");
    RESOLVE(sign, "EVP_DigestSign");
    RESOLVE(verify_init, "EVP_DigestVerifyInit");
    RESOLVE(verify, "EVP_DigestVerify");
    RESOLVE(rand_bytes, "RAND_bytes");
    return 0; /* stays loaded for the life of the process */
}

static int need_crypto(dsf_diags *d)
{
    if (!loaded)
        loaded = load() == 0 ? 1 : -1;
    if (loaded > 0)
        return 0;
    dsf_diag *g = dsf_diag_add(d, DSF_ERROR, NULL, 0, 0,
                               "signatures need OpenSSL's libcrypto: %s",
                               load_error);
    dsf_diag_set_hint(g, "install libssl3 (Debian: apt install libssl3)");
    return DSF_ENET;
}

static void to_hex(char *out, const unsigned char *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Exactly 2n lower-case hex digits into b. */
static bool from_hex(unsigned char *b, size_t n, const char *s, size_t len)
{
    if (len != 2 * n)
        return false;
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    return true;
}

/* Reads a key file: header line, then 64 hex digits and a newline. */
static int read_key(unsigned char key[32], const char *path,
                    const char *header, const char *what, dsf_diags *d)
{
    char *text;
    size_t len;
    int rc = dsf_read_file(&text, &len, path, 4096, d);
    if (rc)
        return DSF_EUSAGE;
    size_t h = strlen(header);
    bool ok = len == h + 65 && !memcmp(text, header, h) &&
              text[len - 1] == '\n' && from_hex(key, 32, text + h, 64);
    free(text);
    if (!ok)
        return dsf_diag_error(d, DSF_EUSAGE, path, 1, 1,
                              "not a dsforge %s key file (expected the "
                              "line '%.*s' and 64 hex digits)", what,
                              (int)h - 1, header);
    return 0;
}

static int public_of(unsigned char pub[32], const unsigned char seed[32])
{
    EVP_PKEY *k = cr.new_raw_private(EVP_PKEY_ED25519, NULL, seed, 32);
    size_t n = 32;
    int ok = k && cr.get_raw_public(k, pub, &n) == 1 && n == 32;
    if (k)
        cr.pkey_free(k);
    return ok ? 0 : -1;
}

/* Writes text to a new file path with mode, never replacing one. */
static int write_new(const char *path, const char *text, int mode,
                     dsf_diags *d)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return dsf_diag_error(d, DSF_EUSAGE, path, 0, 0,
                              "cannot create: %s%s", strerror(errno),
                              errno == EEXIST ? " (a key file is never "
                                                "overwritten)" : "");
    size_t len = strlen(text);
    bool ok = write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    if (close(fd) != 0)
        ok = false;
    if (!ok) {
        unlink(path);
        return dsf_diag_error(d, DSF_EINPUT, path, 0, 0, "cannot write: %s",
                              strerror(errno));
    }
    return 0;
}

int dsf_sign_keygen(const char *path, dsf_buf *report, dsf_diags *d)
{
    int rc = need_crypto(d);
    if (rc)
        return rc;
    unsigned char seed[32], pub[32];
    if (cr.rand_bytes(seed, 32) != 1 || public_of(pub, seed) != 0)
        return dsf_diag_error(d, DSF_EINPUT, NULL, 0, 0,
                              "libcrypto could not make a key");
    char hex[65], pub_hex[65];
    to_hex(hex, seed, 32);
    to_hex(pub_hex, pub, 32);
    memset(seed, 0, sizeof seed);
    char *pub_path = dsf_xasprintf("%s.pub", path);
    char *secret = dsf_xasprintf(SECRET_HEADER "%s\n", hex);
    char *public = dsf_xasprintf(PUBLIC_HEADER "%s\n", pub_hex);
    memset(hex, 0, sizeof hex);
    if (dsf_is_file(pub_path))
        rc = dsf_diag_error(d, DSF_EUSAGE, pub_path, 0, 0,
                            "already exists (a key file is never "
                            "overwritten)");
    if (!rc)
        rc = write_new(path, secret, 0600, d);
    if (!rc && (rc = write_new(pub_path, public, 0644, d)) != 0)
        unlink(path);
    if (!rc)
        dsf_buf_printf(report, "secret key: %s (keep it private)\n"
                       "public key: %s (key id %.*s)\n", path, pub_path,
                       DSF_KEY_ID(pub_hex));
    memset(secret, 0, strlen(secret));
    free(secret);
    free(public);
    free(pub_path);
    return rc;
}

int dsf_sign_read_public(char hex[65], const char *path, dsf_diags *d)
{
    unsigned char pub[32];
    if (from_hex(pub, 32, path, strlen(path))) {
        to_hex(hex, pub, 32);
        return 0;
    }
    int rc = read_key(pub, path, PUBLIC_HEADER, "public", d);
    if (!rc)
        to_hex(hex, pub, 32);
    return rc;
}

int dsf_sign_text(char sig_hex[129], char pub_hex[65], const char *key_path,
                  const char *text, size_t len, dsf_diags *d)
{
    int rc = need_crypto(d);
    if (rc)
        return rc;
    unsigned char seed[32], pub[32], sig[64];
    if ((rc = read_key(seed, key_path, SECRET_HEADER, "secret", d)) != 0)
        return rc;
    EVP_PKEY *k = cr.new_raw_private(EVP_PKEY_ED25519, NULL, seed, 32);
    EVP_MD_CTX *m = cr.ctx_new();
    size_t n = sizeof sig;
    bool ok = k && m && public_of(pub, seed) == 0 &&
              cr.sign_init(m, NULL, NULL, NULL, k) == 1 &&
              cr.sign(m, sig, &n, (const unsigned char *)text, len) == 1 &&
              n == 64;
    memset(seed, 0, sizeof seed);
    if (m)
        cr.ctx_free(m);
    if (k)
        cr.pkey_free(k);
    if (!ok)
        return dsf_diag_error(d, DSF_EINPUT, key_path, 0, 0,
                              "libcrypto could not sign with this key");
    to_hex(sig_hex, sig, 64);
    to_hex(pub_hex, pub, 32);
    return 0;
}

int dsf_sign_verify(const char *pub_hex, const char *sig_hex,
                    const char *text, size_t len, dsf_diags *d)
{
    unsigned char pub[32], sig[64];
    if (!from_hex(pub, 32, pub_hex, strlen(pub_hex)) ||
        !from_hex(sig, 64, sig_hex, strlen(sig_hex)))
        return 0;
    int rc = need_crypto(d);
    if (rc)
        return rc;
    EVP_PKEY *k = cr.new_raw_public(EVP_PKEY_ED25519, NULL, pub, 32);
    EVP_MD_CTX *m = cr.ctx_new();
    bool ok = k && m && cr.verify_init(m, NULL, NULL, NULL, k) == 1 &&
              cr.verify(m, sig, 64, (const unsigned char *)text, len) == 1;
    if (m)
        cr.ctx_free(m);
    if (k)
        cr.pkey_free(k);
    return ok ? 1 : 0;
}
