/* Logging to stderr: sd-daemon "<N>" priority prefixes under journald, time on a terminal. */
#ifndef LOG_H
#define LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level {
	LOG_LEVEL_ERROR = 3,
	LOG_LEVEL_WARN = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

/** Messages above @level are dropped. Reads $JOURNAL_STREAM to pick the format. */
void log_init(enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/** Writes one whole line per call; errno is preserved. */
void log_write(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...)  log_write(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...)   log_write(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_notice(...) log_write(LOG_LEVEL_NOTICE, __VA_ARGS__)
#define log_info(...)   log_write(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)  log_write(LOG_LEVEL_DEBUG, __VA_ARGS__)

/** Like log_error() with ": strerror(errno)" appended. */
void log_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A message that may come once per request said at most once every so often: the first at
 * once, the next ones held back until @every_ms (monotonic ms) have passed, then said with how
 * many were held. Zero-initialized; the caller's storage, one per kind of message.
 */
struct log_limit {
	int64_t said_ms; // when the last one was said; 0 = never
	uint64_t held;   // held back since
};

/**
 * Whether to say the message now (@now_ms, monotonic, > 0); when it is said after some were
 * held back, *@held gets their number (else 0). Pure: the caller reads the clock.
 */
bool log_limit_pass(struct log_limit *l, int64_t now_ms, int64_t every_ms, uint64_t *held);

#endif
