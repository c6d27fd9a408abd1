/*
** sign.h -- Ed25519 keys and detached signatures of index.json.
**
** OpenSSL's libcrypto does the cryptography. Like libcurl it is loaded on
** first use (dlopen("libcrypto.so.3"); DSFORGE_LIBCRYPTO names another),
** so commands that never sign or verify do not pay for loading it.
**
** Key files are text (contrib/docs/repositories.md):
**   dsforge-ed25519-secret-key v1\n<64 hex: the 32-byte seed>\n   (0600)
**   dsforge-ed25519-public-key v1\n<64 hex: the 32-byte key>\n
** A signature file (index.json.sig) lists one or more signatures over the
** exact bytes of index.json:
**   {"format": 1, "signatures": [{"key": "<64 hex>",
**                                 "signature": "<128 hex>"}]}
*/
#ifndef DSF_SIGN_H
#define DSF_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/diag.h"

#define DSF_SIGN_FILE "index.json.sig"

/* Writes a new key pair: the secret key to path (mode 0600, never over
** an existing file) and the public key to path.pub. report gets the
** file names and the key's id. */
int dsf_sign_keygen(const char *path, dsf_buf *report, dsf_diags *d);

/* Reads a public key file (or a bare 64-hex key) into hex. DSF_EUSAGE
** with the file name when it is not one. */
int dsf_sign_read_public(char hex[65], const char *path, dsf_diags *d);

/* Signs text with the secret key in key_path. *sig_hex: 128 hex digits;
** *pub_hex: the signer's public key. */
int dsf_sign_text(char sig_hex[129], char pub_hex[65], const char *key_path,
                  const char *text, size_t len, dsf_diags *d);

/* 1 when sig_hex is a valid signature of text by pub_hex, 0 when not,
** DSF_ENET when libcrypto cannot be loaded (reported in d). */
int dsf_sign_verify(const char *pub_hex, const char *sig_hex,
                    const char *text, size_t len, dsf_diags *d);

/* The short id of a public key, for messages: its first 16 hex digits. */
#define DSF_KEY_ID(hex) 16, (hex)

#endif
