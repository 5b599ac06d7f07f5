/* A tiny TAP producer: each check prints "ok N - what" or "not ok" with want/got. */
#ifndef TEST_H
#define TEST_H

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int test_count, test_failed;

static inline bool test_report(bool ok, const char *file, int line, const char *what) {
	test_count++;
	// A description is one TAP line: control characters in it (a test of text with newlines)
	// print as \n, \r, \t or \xHH.
	printf("%sok %d - ", ok ? "" : "not ", test_count);
	for (const unsigned char *c = (const unsigned char *)what; *c; c++) {
		if (*c == '\n' || *c == '\r' || *c == '\t') {
			printf("\\%c", *c == '\n' ? 'n' : *c == '\r' ? 'r' : 't');
		} else if (*c < 0x20 || *c == 0x7f) {
			printf("\\x%02x", *c);
		} else {
			putchar(*c);
		}
	}
	putchar('\n');
	if (!ok) {
		test_failed++;
		printf("#   at %s:%d\n", file, line);
	}
	return ok;
}

#define ok(cond, what) test_report((cond), __FILE__, __LINE__, (what))

#define is_int(got, want, what)                                           \
	do {                                                              \
		long long g_ = (long long)(got), w_ = (long long)(want);  \
		if (!test_report(g_ == w_, __FILE__, __LINE__, (what))) { \
			printf("#   want %lld\n#   got  %lld\n", w_, g_); \
		}                                                         \
	} while (0)

#define is_str(got, want, what)                                                            \
	do {                                                                               \
		const char *g_ = (got), *w_ = (want);                                      \
		bool e_ = (g_ == NULL && w_ == NULL) || (g_ && w_ && strcmp(g_, w_) == 0); \
		if (!test_report(e_, __FILE__, __LINE__, (what))) {                        \
			printf("#   want \"%s\"\n#   got  \"%s\"\n", w_ ? w_ : "(null)",   \
			       g_ ? g_ : "(null)");                                        \
		}                                                                          \
	} while (0)

/* Equal within @tol relative (or absolute below 1). */
#define is_near(got, want, tol, what)                                            \
	do {                                                                     \
		double g_ = (got), w_ = (want);                                  \
		double s_ = fabs(w_) > 1 ? fabs(w_) : 1;                         \
		bool e_ = fabs(g_ - w_) <= (tol)*s_ || (isnan(g_) && isnan(w_)); \
		if (!test_report(e_, __FILE__, __LINE__, (what))) {              \
			printf("#   want %.17g\n#   got  %.17g\n", w_, g_);      \
		}                                                                \
	} while (0)

/* splitmix64: the seeded generator of property checks, reproducible across platforms. */
static inline uint64_t *test_rng_state(void) {
	static uint64_t state;
	return &state;
}

static inline uint64_t rng(void) {
	uint64_t z = (*test_rng_state() += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Seeds rng() from -s SEED (default: the time) and prints how to repeat the run. */
static inline void test_seed(int argc, char **argv) {
	uint64_t seed = (uint64_t)time(NULL);
	int opt;
	while ((opt = getopt(argc, argv, "s:")) != -1) {
		if (opt == 's') {
			seed = strtoull(optarg, NULL, 10);
		}
	}
	printf("# seed %llu (repeat with -s %llu)\n", (unsigned long long)seed,
	       (unsigned long long)seed);
	*test_rng_state() = seed;
}

/* Ends the TAP stream; use as `return test_done();`. */
static inline int test_done(void) {
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}

#endif
