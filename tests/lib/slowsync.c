/*
 * A slow disk for tests, LD_PRELOADed into thermlogd: fsync() and fdatasync() sleep
 * $THERMLOG_TEST_SYNC_DELAY_MS first (as a loaded or worn SD card takes seconds), then sync.
 * Each sync that slept appends a line to $THERMLOG_TEST_SYNC_LOG, if set, with the thread's id,
 * so a test tells which thread waited. (_GNU_SOURCE comes from the build, for RTLD_NEXT.)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int fsync(int fd);
int fdatasync(int fd);

static void slow(const char *what) {
	const char *ms = getenv("THERMLOG_TEST_SYNC_DELAY_MS");
	long delay = ms ? strtol(ms, NULL, 10) : 0;
	if (delay <= 0) {
		return;
	}
	struct timespec ts = {delay / 1000, (delay % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0) {
	}
	const char *log = getenv("THERMLOG_TEST_SYNC_LOG");
	if (log && *log) {
		char line[96];
		int n = snprintf(line, sizeof(line), "%s %ld %ld\n", what, (long)getpid(),
				 (long)syscall(SYS_gettid));
		int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0) {
			ssize_t w = write(fd, line, (size_t)n);
			(void)w;
			close(fd);
		}
	}
}

int fsync(int fd) {
	static int (*real)(int);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "fsync"); // POSIX's way to a function pointer
	}
	slow("fsync");
	return real(fd);
}

int fdatasync(int fd) {
	static int (*real)(int);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "fdatasync");
	}
	slow("fdatasync");
	return real(fd);
}
