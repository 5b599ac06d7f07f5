/* When a process started, from procfs (pidstart.h). */
#include "pidstart.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

int pidstart_ticks(const char *procfs_root, int64_t pid, uint64_t *ticks) {
	char *path = xasprintf("%s/%" PRId64 "/stat", procfs_root, pid);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd < 0) {
		return errno == ESRCH ? -ENOENT : -errno;
	}
	struct stat st;
	char text[1024];
	ssize_t n = -1;
	int rc = -EINVAL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		n = read(fd, text, sizeof(text) - 1);
		rc = n < 0 ? (errno == ESRCH ? -ENOENT : -errno) : -EINVAL;
	}
	close(fd);
	if (n <= 0) {
		return rc;
	}
	text[n] = '\0';
	// The name (field 2) may hold spaces and parentheses: count from its last ')'.
	const char *p = strrchr(text, ')');
	for (int f = 2; p && f < 22; f++) {
		p = strchr(p + 1, ' ');
	}
	char *end;
	errno = 0;
	unsigned long long x = p ? strtoull(p + 1, &end, 10) : 0;
	if (!p || errno || end == p + 1 || x == 0) {
		return -EINVAL;
	}
	*ticks = x;
	return 0;
}

bool pidstart_alive(const char *procfs_root, int64_t pid, uint64_t ticks) {
	if (pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
		return false;
	}
	if (ticks == 0) {
		return true;
	}
	uint64_t now = 0;
	int rc = pidstart_ticks(procfs_root, pid, &now);
	return !(rc == -ENOENT || (rc == 0 && now != ticks));
}
