/* SHA-256 against the FIPS 180-4 examples (NIST CSRC) and HMAC-SHA256 against RFC 4231. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "test.h"

static void hex(const unsigned char *d, size_t n, char *out) {
	for (size_t i = 0; i < n; i++) {
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	}
}

static void check(const void *data, size_t len, const char *want, const char *what) {
	unsigned char d[SHA256_DIGEST_LEN];
	char got[2 * SHA256_DIGEST_LEN + 1];
	sha256(data, len, d);
	hex(d, sizeof(d), got);
	is_str(got, want, what);
}

static void test_fips(void) {
	check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	      "FIPS 180-4: \"abc\" (one block)");
	check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	      "the empty message");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	check(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	      "FIPS 180-4: 448 bits (two blocks)");
	const char *four =
		"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	check(four, strlen(four),
	      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1", "896 bits");
	char *million = malloc(1000000);
	memset(million, 'a', 1000000);
	check(million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
	      "one million 'a'");
	// The same bytes fed in uneven pieces must give the same digest (block carry-over).
	struct sha256 s;
	sha256_init(&s);
	size_t done = 0, step = 1;
	while (done < 1000000) {
		size_t n = step < 1000000 - done ? step : 1000000 - done;
		sha256_update(&s, million + done, n);
		done += n;
		step = step * 7 % 131 + 1;
	}
	unsigned char d[SHA256_DIGEST_LEN];
	char got[2 * SHA256_DIGEST_LEN + 1];
	sha256_final(&s, d);
	hex(d, sizeof(d), got);
	is_str(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
	       "one million 'a' in pieces of 1..131 bytes");
	free(million);
	// Lengths around the padding boundary (55, 56, 63, 64 bytes) against known digests.
	check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 55,
	      "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318", "55 bytes");
	check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 56,
	      "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a", "56 bytes");
	check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64,
	      "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb", "64 bytes");
}

static void hmac(const void *key, size_t key_len, const void *msg, size_t msg_len, const char *want,
		 const char *what) {
	unsigned char d[SHA256_DIGEST_LEN];
	char got[2 * SHA256_DIGEST_LEN + 1];
	sha256_hmac(key, key_len, msg, msg_len, d);
	hex(d, sizeof(d), got);
	is_str(got, want, what);
}

static void test_rfc4231(void) {
	unsigned char k[131];
	memset(k, 0x0b, 20);
	hmac(k, 20, "Hi There", 8,
	     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", "RFC 4231 case 1");
	hmac("Jefe", 4, "what do ya want for nothing?", 28,
	     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
	     "RFC 4231 case 2 (short key)");
	unsigned char m[50];
	memset(k, 0xaa, 20);
	memset(m, 0xdd, 50);
	hmac(k, 20, m, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
	     "RFC 4231 case 3");
	for (int i = 0; i < 25; i++) {
		k[i] = (unsigned char)(i + 1);
	}
	memset(m, 0xcd, 50);
	hmac(k, 25, m, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
	     "RFC 4231 case 4");
	memset(k, 0xaa, 131);
	const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	hmac(k, 131, m6, strlen(m6),
	     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
	     "RFC 4231 case 6 (key longer than a block)");
	const char *m7 = "This is a test using a larger than block-size key and a larger than "
			 "block-size data. The key needs to be hashed before being used by the "
			 "HMAC algorithm.";
	hmac(k, 131, m7, strlen(m7),
	     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
	     "RFC 4231 case 7 (long key and data)");
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_fips();
	test_rfc4231();
	return test_done();
}
