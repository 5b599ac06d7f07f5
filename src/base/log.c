/* Logging: one write() per line so journald keeps priorities intact. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level max_level = LOG_LEVEL_INFO;
static int journal = -1; // -1: not decided yet

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error", [LOG_LEVEL_WARN] = "warning", [LOG_LEVEL_NOTICE] = "notice",
	[LOG_LEVEL_INFO] = "info",   [LOG_LEVEL_DEBUG] = "debug",
};

void log_init(enum log_level level) {
	max_level = level;
	journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_set_level(enum log_level level) {
	max_level = level;
}

enum log_level log_get_level(void) {
	return max_level;
}

__attribute__((format(printf, 3, 0))) static void vlog(enum log_level level, const char *suffix,
						       const char *fmt, va_list ap) {
	char line[2048];
	size_t len = 0;
	if (journal < 0) {
		journal = getenv("JOURNAL_STREAM") != NULL;
	}
	if (journal) {
		len = (size_t)snprintf(line, sizeof(line), "<%d>", (int)level);
	} else if (isatty(STDERR_FILENO)) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		len = strftime(line, sizeof(line), "%H:%M:%S ", &tm);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s: ", level_names[level]);
	} else {
		len = (size_t)snprintf(line, sizeof(line), "%s: ", level_names[level]);
	}
	int n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	len = n < 0 ? len : len + (size_t)n;
	if (len > sizeof(line) - 2) {
		len = sizeof(line) - 2;
	}
	if (suffix) {
		n = snprintf(line + len, sizeof(line) - len, ": %s", suffix);
		len = n < 0 ? len : len + (size_t)n;
		if (len > sizeof(line) - 2) {
			len = sizeof(line) - 2;
		}
	}
	line[len++] = '\n';
	ssize_t ignored = write(STDERR_FILENO, line, len);
	(void)ignored; // nothing sensible to do when stderr is gone
}

void log_write(enum log_level level, const char *fmt, ...) {
	if (level > max_level) {
		return;
	}
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, NULL, fmt, ap);
	va_end(ap);
	errno = saved;
}

void log_errno(const char *fmt, ...) {
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	vlog(LOG_LEVEL_ERROR, strerror(saved), fmt, ap);
	va_end(ap);
	errno = saved;
}

bool log_limit_pass(struct log_limit *l, int64_t now_ms, int64_t every_ms, uint64_t *held) {
	*held = 0;
	if (l->said_ms != 0 && now_ms - l->said_ms < every_ms) {
		l->held++;
		return false;
	}
	*held = l->held;
	l->held = 0;
	l->said_ms = now_ms;
	return true;
}
