/*
 * Clock state per cycle: boards without a battery-backed RTC boot with a plausible but wrong
 * clock, so each cycle records whether a sync source vouched for its time (platform brief §11).
 */
#include "clock.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <unistd.h>

#include "version.h"

static int real_adjtimex(struct timex *tx) {
	return adjtimex(tx);
}

void clock_source_init(struct clock_source *src) {
	src->root = "";
	src->build_epoch = THERMLOG_BUILD_EPOCH;
	src->adjtimex = real_adjtimex;
}

static bool exists(const char *root, const char *path) {
	char full[4096];
	struct stat st;
	snprintf(full, sizeof(full), "%s%s", root, path);
	return stat(full, &st) == 0;
}

enum clock_state clock_probe(const struct clock_source *src, int64_t wall_ts, int64_t last_ts,
			     const char **why) {
	const char *dummy;
	if (!why) {
		why = &dummy;
	}
	if (wall_ts < src->build_epoch) {
		*why = "the clock is before the build date";
		return CLOCK_STATE_UNSYNCED;
	}
	if (last_ts > 0 && wall_ts <= last_ts) {
		*why = "the clock is behind the last stored cycle";
		return CLOCK_STATE_UNSYNCED;
	}
	if (exists(src->root, "/run/systemd/timesync/synchronized")) {
		*why = "systemd-timesyncd has synchronized";
		return CLOCK_STATE_SYNCED;
	}
	if (src->adjtimex) {
		struct timex tx;
		memset(&tx, 0, sizeof(tx)); // modes = 0: read only, no privilege needed
		int st = src->adjtimex(&tx);
		if (st >= 0 && st != TIME_ERROR && !(tx.status & STA_UNSYNC)) {
			*why = "the kernel clock is synchronized";
			return CLOCK_STATE_SYNCED;
		}
	}
	if (exists(src->root, "/run/systemd/timesync") || exists(src->root, "/run/chrony") ||
	    exists(src->root, "/run/ntpd.pid")) {
		*why = "a time service has not synchronized yet";
		return CLOCK_STATE_UNSYNCED;
	}
	*why = "no time synchronization information";
	return CLOCK_STATE_UNKNOWN;
}

bool clock_boot_id(const char *root, char out[CLOCK_BOOT_ID_LEN]) {
	char path[4096];
	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/random/boot_id", root);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	char text[64];
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 36) {
		return false;
	}
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? text[i] != '-' : !isxdigit((unsigned char)text[i])) {
			return false;
		}
	}
	if (n > 36 && text[36] != '\n') {
		return false;
	}
	memcpy(out, text, 36);
	out[36] = '\0';
	return true;
}
