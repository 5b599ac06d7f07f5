/*
 * A slow disk for tests, LD_PRELOADed into thermlogd: fsync() and fdatasync() sleep
 * $THERMLOG_TEST_SYNC_DELAY_MS first (as a loaded or worn SD card takes seconds), then sync.
 * Each sync that slept appends a line to $THERMLOG_TEST_SYNC_LOG, if set, with the thread's id,
 * so a test tells which thread waited. (_GNU_SOURCE comes from the build, for RTLD_NEXT.)
 *
 * A write to a file whose name ends in "-wal" (SQLite's log, what a commit writes) sleeps
 * $THERMLOG_TEST_WAL_WRITE_DELAY_MS first, as a write held by the kernel's writeback would, at
 * most once every $THERMLOG_TEST_WAL_WRITE_EVERY_MS (default 3000): one slow commit now and
 * then, not every page of every commit.
 *
 * A pread() or read() of a file whose path ends in $THERMLOG_TEST_READ_DELAY_FILE sleeps
 * $THERMLOG_TEST_READ_DELAY_MS first, every time: a sysfs attribute that takes that long to
 * answer, in every cycle (the first one too), or in a discovery ("/type": each zone's and
 * cooling device's).
 */
#undef _FILE_OFFSET_BITS // pwrite() and pwrite64() are two symbols here, both wrapped
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
ssize_t write(int fd, const void *buf, size_t n);
ssize_t read(int fd, void *buf, size_t n);
ssize_t pread(int fd, void *buf, size_t n, off_t off);
ssize_t pread64(int fd, void *buf, size_t n, off64_t off);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off);

static long env_ms(const char *name, long dflt) {
	const char *ms = getenv(name);
	return ms && *ms ? strtol(ms, NULL, 10) : dflt;
}

static void sleep_ms(long delay) {
	struct timespec ts = {delay / 1000, (delay % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0) {
	}
}

static void slow(const char *what) {
	long delay = env_ms("THERMLOG_TEST_SYNC_DELAY_MS", 0);
	if (delay <= 0) {
		return;
	}
	sleep_ms(delay);
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

static long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps before a write to SQLite's log, once every so often (a static: the tests' daemons
 * write from one thread at a time). */
static void slow_wal_write(int fd) {
	static long last = -1;
	long delay = env_ms("THERMLOG_TEST_WAL_WRITE_DELAY_MS", 0);
	if (delay <= 0 ||
	    (last >= 0 && now_ms() - last < env_ms("THERMLOG_TEST_WAL_WRITE_EVERY_MS", 3000))) {
		return;
	}
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t len = readlink(link, path, sizeof(path) - 1);
	if (len < 4 || memcmp(path + len - 4, "-wal", 4) != 0) {
		return;
	}
	sleep_ms(delay);
	last = now_ms();
}

ssize_t write(int fd, const void *buf, size_t n) {
	static ssize_t (*real)(int, const void *, size_t);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "write");
	}
	slow_wal_write(fd);
	return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
	static ssize_t (*real)(int, const void *, size_t, off_t);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "pwrite");
	}
	slow_wal_write(fd);
	return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
	static ssize_t (*real)(int, const void *, size_t, off64_t);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "pwrite64");
	}
	slow_wal_write(fd);
	return real(fd, buf, n, off);
}

/* Sleeps before a read of the file $THERMLOG_TEST_READ_DELAY_FILE names (its path's end). */
static void slow_read(int fd) {
	long delay = env_ms("THERMLOG_TEST_READ_DELAY_MS", 0);
	const char *file = getenv("THERMLOG_TEST_READ_DELAY_FILE");
	if (delay <= 0 || !file || !*file) {
		return;
	}
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t len = readlink(link, path, sizeof(path) - 1);
	size_t want = strlen(file);
	if (len < (ssize_t)want || memcmp(path + len - want, file, want) != 0) {
		return;
	}
	sleep_ms(delay);
}

ssize_t read(int fd, void *buf, size_t n) {
	static ssize_t (*real)(int, void *, size_t);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "read");
	}
	slow_read(fd);
	return real(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) {
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "pread");
	}
	slow_read(fd);
	return real(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off) {
	static ssize_t (*real)(int, void *, size_t, off64_t);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "pread64");
	}
	slow_read(fd);
	return real(fd, buf, n, off);
}
