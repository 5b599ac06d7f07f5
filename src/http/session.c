/* Session values for the dashboard's sign-in: HMAC-SHA256 of the token and an expiry. */
#include "session.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "sha256.h"

void session_value(const unsigned char key[SESSION_KEY_LEN], const char *token, int64_t expires,
		   char out[SESSION_VALUE_MAX]) {
	struct buf msg;
	buf_init(&msg);
	buf_printf(&msg, "thermlog-session\n%" PRId64 "\n%s", expires, token);
	unsigned char mac[SHA256_DIGEST_LEN];
	sha256_hmac(key, SESSION_KEY_LEN, msg.data, msg.len, mac);
	explicit_bzero(msg.data, msg.len); // it holds the token
	buf_finish(&msg);
	int len = snprintf(out, SESSION_VALUE_MAX, "%" PRId64 ".", expires);
	for (int i = 0; i < SHA256_DIGEST_LEN; i++) {
		snprintf(out + len + 2 * i, 3, "%02x", mac[i]);
	}
}

/* Whether two strings of @len bytes are equal, in a time that does not depend on where. */
static bool equal_const_time(const char *a, const char *b, size_t len) {
	volatile unsigned char diff = 0;
	for (size_t i = 0; i < len; i++) {
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
	}
	return diff == 0;
}

/* The expiry at the head of a value "EXPIRES.HEX", or -1 when it is not one. */
static int64_t value_expiry(const char *v, size_t len) {
	int64_t t = 0;
	size_t i = 0;
	for (; i < len && v[i] >= '0' && v[i] <= '9'; i++) {
		if (i >= 12) {
			return -1; // beyond year 33658: not ours
		}
		t = t * 10 + (v[i] - '0');
	}
	if (i == 0 || i >= len || v[i] != '.' || len - i - 1 != 2 * SHA256_DIGEST_LEN) {
		return -1;
	}
	return t;
}

bool session_check(const unsigned char key[SESSION_KEY_LEN], const char *token, const char *cookie,
		   int64_t now) {
	if (!cookie) {
		return false;
	}
	bool valid = false;
	const char *p = cookie;
	size_t name_len = strlen(SESSION_COOKIE);
	// "a=1; thermlog_session=V; b=2": look at every pair (a stale duplicate may come first).
	while (*p) {
		p += strspn(p, " \t;");
		size_t len = strcspn(p, ";");
		if (len > name_len && strncmp(p, SESSION_COOKIE, name_len) == 0 &&
		    p[name_len] == '=') {
			const char *v = p + name_len + 1;
			size_t vlen = len - name_len - 1;
			while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t')) {
				vlen--;
			}
			int64_t expires = value_expiry(v, vlen);
			if (expires > now) {
				char want[SESSION_VALUE_MAX];
				session_value(key, token, expires, want);
				// value_expiry() checked the length: both are vlen bytes long.
				valid |= strlen(want) == vlen && equal_const_time(v, want, vlen);
			}
		}
		p += len;
	}
	return valid;
}
