/*
 * The dashboard's sign-in session: a cookie value that proves its holder knew the bearer
 * token, without holding the token. Pure: the key and the time are parameters.
 */
#ifndef SESSION_H
#define SESSION_H

#include <stdbool.h>
#include <stdint.h>

#define SESSION_KEY_LEN   32                 // random bytes, drawn by the server at start
#define SESSION_COOKIE    "thermlog_session" // the cookie's name
#define SESSION_MAX_AGE_S (7 * 86400)        // a sign-in lasts a week
#define SESSION_VALUE_MAX 96                 // "EXPIRES.HEX" with its NUL, with room to spare

/**
 * Writes the session value for @token valid until @expires (s since epoch) into @out:
 * "EXPIRES.HEX", HEX being HMAC-SHA256 under @key of "thermlog-session\n" EXPIRES "\n" token.
 * A new key (a restart) or a new token invalidates every value made before.
 */
void session_value(const unsigned char key[SESSION_KEY_LEN], const char *token, int64_t expires,
		   char out[SESSION_VALUE_MAX]);

/**
 * Whether the Cookie request header @cookie (NULL: none) carries a SESSION_COOKIE value for
 * @token that has not expired at @now (s since epoch). The comparison takes the same time
 * whichever bytes of the value are wrong.
 */
bool session_check(const unsigned char key[SESSION_KEY_LEN], const char *token, const char *cookie,
		   int64_t now);

#endif
