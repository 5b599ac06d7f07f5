/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): pure functions, for the dashboard session. */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_BLOCK_LEN  64

/** A hash in progress; init it, feed it with update, read it with final. */
struct sha256 {
	uint32_t h[8];
	uint64_t len; // bytes hashed so far
	unsigned char block[SHA256_BLOCK_LEN];
	size_t used; // bytes waiting in block
};

void sha256_init(struct sha256 *s);
/** Hashes @len bytes of @data (NULL is fine when @len is 0). */
void sha256_update(struct sha256 *s, const void *data, size_t len);
/** Writes the digest to @out and wipes @s; init it again to hash anew. */
void sha256_final(struct sha256 *s, unsigned char out[SHA256_DIGEST_LEN]);

/** The digest of @len bytes of @data in one call. */
void sha256(const void *data, size_t len, unsigned char out[SHA256_DIGEST_LEN]);

/** HMAC-SHA256 of @msg under @key (any length: keys over 64 bytes are hashed first). */
void sha256_hmac(const void *key, size_t key_len, const void *msg, size_t msg_len,
		 unsigned char out[SHA256_DIGEST_LEN]);

#endif
