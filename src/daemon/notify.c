/* sd_notify without libsystemd: the datagram protocol described in sd_notify(3) NOTES. */
#include "notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "xalloc.h"

struct notify {
	int sock; // -1 without $NOTIFY_SOCKET
	struct sockaddr_un addr;
	socklen_t addr_len;
	int timer; // watchdog timerfd, -1 when off
	uint64_t period_us;
	bool warned;
};

static bool parse_u64(const char *s, uint64_t *out) {
	if (!s || !*s) {
		return false;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || s[0] == '-') {
		return false;
	}
	*out = v;
	return true;
}

static void setup_socket(struct notify *n) {
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path || !*path) {
		return;
	}
	size_t len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(n->addr.sun_path)) {
		log_warn("ignoring NOTIFY_SOCKET: not an absolute path or abstract name: %s", path);
		return;
	}
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, path, len);
	if (path[0] == '@') {
		n->addr.sun_path[0] =
			'\0'; // abstract namespace: the length, not a NUL, ends the name
		n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	} else {
		n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	}
	n->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->sock < 0) {
		log_errno("could not create the notify socket");
	}
}

static void setup_watchdog(struct notify *n) {
	uint64_t usec, pid;
	if (n->sock < 0 || !parse_u64(getenv("WATCHDOG_USEC"), &usec) || usec == 0) {
		return;
	}
	// The variable may be inherited from a parent that is the watched process.
	if (parse_u64(getenv("WATCHDOG_PID"), &pid) && pid != (uint64_t)getpid()) {
		return;
	}
	n->period_us = usec / 2 ? usec / 2 : 1;
	n->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (n->timer < 0) {
		log_errno("could not create the watchdog timer");
		n->period_us = 0;
		return;
	}
	struct itimerspec its = {
		.it_value = {(time_t)(n->period_us / 1000000),
			     (long)(n->period_us % 1000000) * 1000},
	};
	its.it_interval = its.it_value;
	timerfd_settime(n->timer, 0, &its, NULL);
}

struct notify *notify_create(void) {
	struct notify *n = xcalloc(1, sizeof(*n));
	n->sock = -1;
	n->timer = -1;
	setup_socket(n);
	setup_watchdog(n);
	return n;
}

void notify_destroy(struct notify *notify) {
	if (!notify) {
		return;
	}
	if (notify->sock >= 0) {
		close(notify->sock);
	}
	if (notify->timer >= 0) {
		close(notify->timer);
	}
	free(notify);
}

int notify_send(struct notify *notify, const char *state) {
	if (notify->sock < 0) {
		return 0;
	}
	ssize_t n = sendto(notify->sock, state, strlen(state), MSG_NOSIGNAL,
			   (const struct sockaddr *)&notify->addr, notify->addr_len);
	if (n < 0) {
		int err = errno;
		if (!notify->warned) {
			log_errno("could not notify the service manager");
			notify->warned = true;
		}
		return -err;
	}
	notify->warned = false;
	return 0;
}

bool notify_active(const struct notify *notify) {
	return notify->sock >= 0;
}

int notify_sendf(struct notify *notify, const char *fmt, ...) {
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return notify_send(notify, text);
}

int notify_watchdog_fd(const struct notify *notify) {
	return notify->timer;
}

uint64_t notify_watchdog_period_us(const struct notify *notify) {
	return notify->period_us;
}

void notify_watchdog(struct notify *notify) {
	uint64_t expirations;
	if (notify->timer < 0) {
		return;
	}
	if (read(notify->timer, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN) {
		return; // spurious wakeup: no period elapsed
	}
	notify_send(notify, "WATCHDOG=1");
}
