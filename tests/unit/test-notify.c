/* sd_notify datagrams to path and abstract sockets, and the watchdog timer period. */
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "notify.h"
#include "test.h"

static int listen_on(const char *name, bool abstract) {
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(name);
	memcpy(sa.sun_path + (abstract ? 1 : 0), name, len);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	if (bind(fd, (struct sockaddr *)&sa, alen) < 0) {
		perror("bind");
		close(fd);
		return -1;
	}
	return fd;
}

static const char *recv_text(int fd, int timeout_ms) {
	static char text[512];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, timeout_ms) != 1) {
		return NULL;
	}
	ssize_t n = recv(fd, text, sizeof(text) - 1, 0);
	text[n < 0 ? 0 : n] = '\0';
	return text;
}

int main(void) {
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	struct notify *n = notify_create();
	is_int(notify_send(n, "READY=1"), 0, "without NOTIFY_SOCKET sending is a no-op");
	is_int(notify_watchdog_fd(n), -1, "and there is no watchdog");
	notify_destroy(n);

	char dir[] = "/tmp/test-notify.XXXXXX";
	ok(mkdtemp(dir) != NULL, "socket directory");
	char path[256];
	snprintf(path, sizeof(path), "%s/notify", dir);
	int sock = listen_on(path, false);
	ok(sock >= 0, "path socket bound");
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "200000", 1);
	n = notify_create();
	is_int(notify_send(n, "READY=1"), 0, "READY sent");
	is_str(recv_text(sock, 1000), "READY=1", "READY received");
	notify_sendf(n, "STATUS=last cycle %s, %d channels", "2026-08-20T00:00:00Z", 25);
	is_str(recv_text(sock, 1000), "STATUS=last cycle 2026-08-20T00:00:00Z, 25 channels",
	       "STATUS received");
	is_int((long long)notify_watchdog_period_us(n), 100000, "pings at half of WATCHDOG_USEC");
	int wfd = notify_watchdog_fd(n);
	ok(wfd >= 0, "watchdog timer fd");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	struct pollfd p = {.fd = wfd, .events = POLLIN};
	ok(poll(&p, 1, 1000) == 1, "the watchdog timer fires");
	clock_gettime(CLOCK_MONOTONIC, &b);
	double waited = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	ok(waited > 0.05 && waited < 0.3, "after about half the watchdog period");
	notify_watchdog(n);
	is_str(recv_text(sock, 1000), "WATCHDOG=1", "WATCHDOG=1 received");
	notify_watchdog(n); // nothing expired yet: no ping
	ok(recv_text(sock, 20) == NULL, "no ping before the period elapses");
	notify_destroy(n);
	close(sock);
	unlink(path);
	rmdir(dir);

	char name[64];
	snprintf(name, sizeof(name), "thermlog-test-%d", (int)getpid());
	sock = listen_on(name, true);
	ok(sock >= 0, "abstract socket bound");
	char env[80];
	snprintf(env, sizeof(env), "@%s", name);
	setenv("NOTIFY_SOCKET", env, 1);
	setenv("WATCHDOG_PID", "1", 1); // another process is the watched one
	n = notify_create();
	notify_send(n, "STOPPING=1");
	is_str(recv_text(sock, 1000), "STOPPING=1", "abstract @ name works");
	is_int(notify_watchdog_fd(n), -1, "WATCHDOG_PID of another process: no watchdog");
	notify_destroy(n);
	close(sock);

	setenv("NOTIFY_SOCKET", "relative/path", 1);
	n = notify_create();
	is_int(notify_send(n, "READY=1"), 0, "a relative NOTIFY_SOCKET is ignored");
	notify_destroy(n);
	return test_done();
}
