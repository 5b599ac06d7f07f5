/* Session cookies: the value is an HMAC of expiry and token; only an unexpired, untouched value
 * for this key and token passes, wherever it sits in the Cookie header. */
#include <stdio.h>
#include <string.h>

#include "session.h"
#include "test.h"

#define TOKEN "0123456789abcdef-test-token"
#define NOW   1790000000

static unsigned char key[SESSION_KEY_LEN];

static bool check(const char *cookie) {
	return session_check(key, TOKEN, cookie, NOW);
}

static void test_value(void) {
	char v[SESSION_VALUE_MAX];
	session_value(key, TOKEN, 1800000000, v);
	// Python: hmac.new(bytes(range(32)), b"thermlog-session\n1800000000\n" + token, sha256)
	is_str(v, "1800000000.1617e0143a1e2e41605d3dfe7cec3c855d547c98b2ced996b041dd0b23528ad5",
	       "the value is EXPIRES.HMAC-SHA256(key, expiry and token)");
	ok(strstr(v, TOKEN) == NULL, "the value does not hold the token");
}

static void test_check(void) {
	char v[SESSION_VALUE_MAX], c[512];
	session_value(key, TOKEN, NOW + 3600, v);
	snprintf(c, sizeof(c), "thermlog_session=%s", v);
	ok(check(c), "a fresh value passes");
	snprintf(c, sizeof(c), "theme=dark; thermlog_session=%s; other=1", v);
	ok(check(c), "among other cookies");
	snprintf(c, sizeof(c), "thermlog_session=1800000001.%s; thermlog_session=%s", v + 11, v);
	ok(check(c), "after a stale duplicate");
	ok(!check(NULL) && !check("") && !check("other=1"), "no cookie fails");
	ok(!session_check(key, TOKEN, c, NOW + 3600), "an expired value fails");
	ok(!session_check(key, TOKEN "x", c, NOW), "a value for another token fails");
	unsigned char other[SESSION_KEY_LEN] = {1};
	ok(!session_check(other, TOKEN, c, NOW),
	   "a value made under another key (a restart) fails");

	// Pushing the expiry forward breaks the MAC.
	snprintf(c, sizeof(c), "thermlog_session=%d%s", NOW + 7200, v + 10);
	ok(!check(c), "an extended expiry fails");
	for (size_t i = 11; i < strlen(v); i += 9) {
		char t[SESSION_VALUE_MAX];
		memcpy(t, v, sizeof(t));
		t[i] = t[i] == '0' ? '1' : '0';
		snprintf(c, sizeof(c), "thermlog_session=%s", t);
		if (check(c)) {
			ok(false, "a changed hex digit passes");
			return;
		}
	}
	ok(true, "every changed hex digit fails");
	const char *bad[] = {
		"thermlog_session=" TOKEN,
		"thermlog_session=",
		"thermlog_session=1790003600",
		"thermlog_session=1790003600.",
		"thermlog_session=1790003600.abcd",
		"thermlog_session=.1617e0143a1e2e41605d3dfe7cec3c855d547c98b2ced996b041dd0b23528ad5",
		"thermlog_session=99999999999999999999.1617e0143a1e2e41605d3dfe7cec3c855d547c98b2ced9",
		"xthermlog_session=1",
	};
	bool any = false;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (check(bad[i])) {
			ok(false, bad[i]);
			any = true;
		}
	}
	ok(!any, "malformed values (the plain token, no MAC, a short MAC, huge expiry) fail");
	snprintf(c, sizeof(c), "thermlog_session=%s ", v);
	ok(check(c), "trailing blanks are ignored");
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	for (int i = 0; i < SESSION_KEY_LEN; i++) {
		key[i] = (unsigned char)i;
	}
	test_value();
	test_check();
	return test_done();
}
