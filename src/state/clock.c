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
#include "xalloc.h"

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

const char *clock_state_name(enum clock_state state) {
	switch (state) {
	case CLOCK_STATE_SYNCED:
		return "synced";
	case CLOCK_STATE_UNSYNCED:
		return "unsynced";
	case CLOCK_STATE_UNKNOWN:
		break;
	}
	return "unknown";
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
	// The kernel first: one system call, and what every time service sets once it has
	// synchronized; the files cost a path walk each.
	if (src->adjtimex) {
		struct timex tx;
		memset(&tx, 0, sizeof(tx)); // modes = 0: read only, no privilege needed
		int st = src->adjtimex(&tx);
		if (st >= 0 && st != TIME_ERROR && !(tx.status & STA_UNSYNC)) {
			*why = "the kernel clock is synchronized";
			return CLOCK_STATE_SYNCED;
		}
	}
	if (exists(src->root, "/run/systemd/timesync/synchronized")) {
		*why = "systemd-timesyncd has synchronized";
		return CLOCK_STATE_SYNCED;
	}
	if (exists(src->root, "/run/systemd/timesync") || exists(src->root, "/run/chrony") ||
	    exists(src->root, "/run/ntpd.pid")) {
		*why = "a time service has not synchronized yet";
		return CLOCK_STATE_UNSYNCED;
	}
	*why = "no time synchronization information";
	return CLOCK_STATE_UNKNOWN;
}

/* Reads up to @size - 1 bytes of <root>/<rel> into @text (NUL-terminated); the count or -1. */
static ssize_t read_head(const char *root, const char *rel, char *text, size_t size) {
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -1;
	}
	ssize_t n = read(fd, text, size - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return n;
}

bool clock_boot_id(const char *root, char out[CLOCK_BOOT_ID_LEN]) {
	out[0] = '\0';
	char text[64];
	ssize_t n = read_head(root, "proc/sys/kernel/random/boot_id", text, sizeof(text));
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

/* The first line of a small sysfs text file under the root, or NULL. */
static char *read_name(const char *root, const char *rel) {
	char text[256];
	if (read_head(root, rel, text, sizeof(text)) <= 0) {
		return NULL;
	}
	// device-tree strings end in NUL, DMI ones in a newline
	size_t len = strcspn(text, "\n");
	text[len] = '\0';
	return len ? xstrdup(text) : NULL;
}

char *clock_board_model(const char *sysfs_root) {
	// The device tree names an ARM board ("Radxa ROCK 5C"); x86 has DMI instead.
	char *model = read_name(sysfs_root, "firmware/devicetree/base/model");
	if (!model) {
		model = read_name(sysfs_root, "class/dmi/id/product_name");
	}
	if (!model) {
		model = read_name(sysfs_root, "class/dmi/id/board_name");
	}
	return model;
}
