/*
 * The clock state of a cycle (synced, unsynced, unknown), the boot id for RTC-less boards, and the
 * board model that names the machine.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define CLOCK_BOOT_ID_LEN 37 // a UUID and its NUL

struct timex;

enum clock_state {
	CLOCK_STATE_UNKNOWN = 0, // no sync information: trusted
	CLOCK_STATE_SYNCED = 1,
	CLOCK_STATE_UNSYNCED = 2, // excluded from queries by default
};

/** "synced", "unsynced" or "unknown". */
const char *clock_state_name(enum clock_state state);

/** Where clock_probe() looks. Tests point @root at a fixture tree and fake adjtimex. */
struct clock_source {
	const char *root;    // prefix of /run and /proc paths; "" = the running system
	int64_t build_epoch; // s since epoch: an earlier wall clock is implausible
	/* adjtimex(2) with modes = 0, or NULL to skip it (ProtectClock= makes it fail: no info) */
	int (*adjtimex)(struct timex *tx);
};

/** Fills @src for the running system: root "", THERMLOG_BUILD_EPOCH, the real adjtimex(2). */
void clock_source_init(struct clock_source *src);

/**
 * The clock state of a cycle whose wall clock reads @wall_ts, given @last_ts (the last stored or
 * queued cycle, 0 = none). In order:
 *   unsynced  the wall clock is before the build date, or not after @last_ts (a backwards step);
 *   synced    <root>/run/systemd/timesync/synchronized exists, or adjtimex() reports a
 *             synchronized kernel clock (no STA_UNSYNC: chrony, ntpd, timesyncd);
 *   unsynced  a sync service is present and has not synchronized yet
 *             (<root>/run/systemd/timesync, <root>/run/chrony, <root>/run/ntpd.pid);
 *   unknown   no information at all (VM or container without a time service): trusted.
 * *why (may be NULL) receives a static phrase for logs.
 */
enum clock_state clock_probe(const struct clock_source *src, int64_t wall_ts, int64_t last_ts,
			     const char **why);

/**
 * Reads <root>/proc/sys/kernel/random/boot_id into @out. Returns false (and an empty @out) when
 * it cannot be read or is not a UUID.
 */
bool clock_boot_id(const char *root, char out[CLOCK_BOOT_ID_LEN]);

/**
 * The board model: the device tree's model ("Radxa ROCK 5C"), else DMI's product or board name,
 * under @sysfs_root ("/sys"). Newly allocated (caller frees), or NULL when none can be read.
 */
char *clock_board_model(const char *sysfs_root);

#endif
