/*
 * sha256: the SHA-256 digest (FIPS 180-4), for the Content-Security-Policy
 * hashes of the report's inline scripts and style.
 *
 * Contract
 * - ps_sha256() hashes `len` bytes at `data` (NULL is fine when len is 0)
 *   into 32 bytes. Pure, no allocation, any length.
 * - ps_sha256_base64() writes the digest as standard base64 with padding
 *   (44 characters and a NUL into `out`): the form a CSP source expression
 *   'sha256-...' takes, and the form browsers compare against.
 * - Not for secrets: nothing here is constant-time or wiped.
 */
#ifndef PS_CORE_SHA256_H
#define PS_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define PS_SHA256_LEN 32
#define PS_SHA256_B64_LEN 44 /* without the NUL */

void ps_sha256(const void *data, size_t len, uint8_t out[PS_SHA256_LEN]);
void ps_sha256_base64(const void *data, size_t len, char out[PS_SHA256_B64_LEN + 1]);

#endif
