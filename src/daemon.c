/*
 * thermlogd: samples every channel on a wall-clock-aligned cadence into SQLite, serves HTTP,
 * keeps the capacitors' running damage, and talks to systemd. See docs/DAEMON.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "capwatch.h"
#include "clock.h"
#include "config.h"
#include "http.h"
#include "live.h"
#include "log.h"
#include "notify.h"
#include "sampler.h"
#include "sim.h"
#include "store.h"
#include "timefmt.h"
#include "version.h"
#include "xalloc.h"

#define EXIT_USAGE 2

/* Unwritten cycles kept while the disk refuses writes: about a day at one minute with 25
 * channels, far less than the 8 MiB RSS budget. The oldest are dropped beyond it. */
#define QUEUE_MAX_BYTES   (1024 * 1024)
#define RETRY_MAX_MS      (5 * 60 * 1000)
#define RETRY_FREED_BYTES (256 * 1024)
#define MAX_CAPACITORS    64
#define DEMO_INTERVAL     "5s"
#define DEMO_BACKFILL_S   (7 * 86400)
/*
 * A stamp more than this (or two intervals, if longer) ahead of the timeline anchor plus the
 * boot-clock time elapsed since it is a clock glitch: stored unsynced, never followed. A jump
 * the clock keeps for JUMP_ADOPT_MS is a real step (an RTC-less board's first sync) and is
 * followed from then on. docs/DAEMON.md states both.
 */
#define JUMP_MIN_S    300
#define JUMP_ADOPT_MS (10 * 60 * 1000)
#define STATE_ANCHOR  "daemon.anchor" // "ts boot_id boot_ms" of the timeline anchor
/* The sampling loop never waits longer for another connection's write lock (a long import):
 * a cycle that cannot get it is queued and written at the next cycle. */
#define BUSY_TIMEOUT_MS 100
#define DEMO_STATE_KEY  "demo.database" // marks a database the demo created

struct options {
	const char *config_path; // -c FILE; NULL = the default path if it exists
	const char *sysfs_root, *db, *interval, *listen;
	bool check_config, demo;
	uint64_t seed;
};

/* A channel list shared by consecutive queued cycles (it rarely changes). */
struct chanset {
	int refs;
	size_t n;
	struct channel *channels;
};

struct queued {
	int64_t ts;
	enum clock_state clock;
	struct chanset *set;
	struct reading *readings;
};

struct daemon {
	struct options opt;
	struct config *cfg; // heap, so the borrowed pointers stay valid until a reload swaps it
	struct config **retired; // replaced, but still read by a running HTTP request
	size_t n_retired;
	pthread_t *drains; // threads stopping replaced HTTP servers
	size_t n_drains;
	char *db_path;
	bool db_is_temp;
	struct store *store;
	struct sampler *sampler;
	struct live *live;
	struct http *http;
	int listen_fd;  // socket-activated, or -1; each http_create() gets a dup
	int lock_fd;    // flock()ed PATH.lock: one daemon per database
	int db_lock_fd; // the database file flock()ed too (its other names), or -1
	struct capwatch *capwatch;
	struct notify *notify;
	struct sim *sim;
	struct clock_source clock;
	char boot_id[CLOCK_BOOT_ID_LEN];
	int sfd;                 // signalfd: SIGTERM, SIGINT, SIGHUP
	int tfd;                 // the schedule: CLOCK_BOOTTIME timerfd, absolute deadlines
	const char *offset_file; // $THERMLOG_TEST_CLOCK_OFFSET_FILE, test hook

	// The timeline anchor: the last cycle this daemon stamped plausibly (never an imported
	// row, never a glitch), s since epoch; 0 = none.
	int64_t last_ts;
	int64_t last_mono_ms;  // when last_ts was stamped (boot clock); 0 = in another boot
	int64_t jump_since_ms; // boot clock: since when the wall clock is implausibly ahead; 0 =
			       // not
	int64_t jump_offset_s; // that jump's wall minus boot clock, to tell one jump from the next
	int64_t prev_wall_ms, prev_mono_ms; // the previous cycle, for step detection
	bool continued;       // stamping on the continued timeline after a backwards step
	bool waiting;         // skipping slots after a small backwards step
	int64_t last_slot_ms; // the last slot the loop acted on (wall clock ms)

	struct queued *queue;
	size_t q_head, q_len, q_cap, q_bytes;
	bool queue_logged, drop_logged;
	bool busy;              // the last write attempt met another connection's lock
	size_t queue_max_bytes; // QUEUE_MAX_BYTES, or $THERMLOG_TEST_QUEUE_MAX_BYTES in tests
	int64_t retry_at_ms, backoff_ms; // boot clock; the next write attempt while cycles wait
	uint64_t avail_at_failure;       // free bytes when the last attempt failed
	struct chanset *last_set;
	struct chanset *present_set; // keys of the channels last marked present

	struct live_health health;
	int64_t errors_minute[60]; // read errors per minute of the last hour, by minute
	int64_t errors_minute_at[60];
	int64_t last_hour; // hour of the last store_maintain()
	bool ready;
	bool url_printed;
	dev_t db_dev; // the database file opened, to notice it deleted or replaced
	ino_t db_ino;
};

/* --- time --------------------------------------------------------------------------------- */

static int64_t clock_ms(clockid_t id) {
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The boot clock: monotonic, and it keeps counting through suspend. */
static int64_t mono_ms(void) {
	return clock_ms(CLOCK_BOOTTIME);
}

/*
 * Wall-clock ms. The test hook: when $THERMLOG_TEST_CLOCK_OFFSET_FILE names a file, its
 * content (signed seconds) is added, read anew each time, so a test can step the clock.
 */
static int64_t wall_ms(const struct daemon *d) {
	int64_t now = clock_ms(CLOCK_REALTIME);
	if (d->offset_file) {
		FILE *f = fopen(d->offset_file, "re");
		long long off = 0;
		if (f) {
			if (fscanf(f, "%lld", &off) == 1) {
				now += off * 1000;
			}
			fclose(f);
		}
	}
	return now;
}

static int64_t floor_div(int64_t a, int64_t b) {
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* --- the unwritten-cycle queue ------------------------------------------------------------- */

static void chanset_unref(struct chanset *set) {
	if (set && --set->refs == 0) {
		for (size_t i = 0; i < set->n; i++) {
			channel_finish(&set->channels[i]);
		}
		free(set->channels);
		free(set);
	}
}

static bool same_channels(const struct chanset *set, const struct channel *ch, size_t n) {
	if (!set || set->n != n) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(set->channels[i].key, ch[i].key) != 0) {
			return false;
		}
	}
	return true;
}

static size_t queued_bytes(const struct queued *q) {
	return sizeof(*q) + q->set->n * sizeof(struct reading);
}

static void queue_drop_oldest(struct daemon *d) {
	struct queued *q = &d->queue[d->q_head];
	d->q_bytes -= queued_bytes(q);
	chanset_unref(q->set);
	free(q->readings);
	d->q_head = (d->q_head + 1) % d->q_cap;
	d->q_len--;
}

static void queue_push(struct daemon *d, const struct cycle *c) {
	if (!same_channels(d->last_set, c->channels, c->n)) {
		struct chanset *set = xcalloc(1, sizeof(*set));
		set->refs = 1; // the daemon's reference as last_set
		set->n = c->n;
		set->channels = xcalloc(c->n, sizeof(*set->channels));
		for (size_t i = 0; i < c->n; i++) {
			channel_copy(&set->channels[i], &c->channels[i]);
		}
		chanset_unref(d->last_set);
		d->last_set = set;
	}
	if (d->q_len == d->q_cap) {
		size_t cap = d->q_cap ? d->q_cap * 2 : 64;
		struct queued *grown = xcalloc(cap, sizeof(*grown));
		for (size_t i = 0; i < d->q_len; i++) {
			grown[i] = d->queue[(d->q_head + i) % d->q_cap];
		}
		free(d->queue);
		d->queue = grown;
		d->q_cap = cap;
		d->q_head = 0;
	}
	struct queued *q = &d->queue[(d->q_head + d->q_len) % d->q_cap];
	q->ts = c->ts;
	q->clock = c->clock;
	q->set = d->last_set;
	q->set->refs++;
	q->readings = xcalloc(c->n ? c->n : 1, sizeof(*q->readings));
	memcpy(q->readings, c->readings, c->n * sizeof(*q->readings));
	d->q_len++;
	d->q_bytes += queued_bytes(q);
	int64_t dropped = 0;
	while (d->q_bytes > d->queue_max_bytes && d->q_len > 1) {
		queue_drop_oldest(d);
		dropped++;
	}
	if (dropped) {
		d->health.cycles_failed += dropped;
		if (!d->drop_logged) {
			log_warn(
				"the queue of unwritten cycles is full (%zu KiB): dropping the oldest "
				"until the database accepts writes",
				d->queue_max_bytes / 1024);
			d->drop_logged = true;
		}
	}
}

/* --- after a cycle is stored --------------------------------------------------------------- */

static void count_read_errors(struct daemon *d, const struct cycle *c) {
	int64_t errors = 0;
	for (size_t i = 0; i < c->n; i++) {
		errors += c->readings[i].err != 0;
	}
	d->health.read_errors_total += errors;
	int64_t minute = floor_div(c->ts, 60);
	size_t slot = (size_t)(minute % 60 + 60) % 60;
	if (d->errors_minute_at[slot] != minute) {
		d->errors_minute_at[slot] = minute;
		d->errors_minute[slot] = 0;
	}
	d->errors_minute[slot] += errors;
	int64_t last_hour = 0;
	for (size_t i = 0; i < 60; i++) {
		if (d->errors_minute_at[i] > minute - 60 && d->errors_minute_at[i] <= minute) {
			last_hour += d->errors_minute[i];
		}
	}
	d->health.errors_last_hour = last_hour;
}

static void publish_capacitors(struct daemon *d) {
	if (!d->capwatch) {
		return;
	}
	struct live_capacitor caps[MAX_CAPACITORS];
	size_t n = capwatch_states(d->capwatch, caps, MAX_CAPACITORS);
	live_publish_capacitors(d->live, caps, n);
}

/* Marks channels that left the sampler's list absent, once per change of the list. */
static void mark_present(struct daemon *d, const struct cycle *c) {
	if (same_channels(d->present_set, c->channels, c->n)) {
		return;
	}
	const char **keys = xcalloc(c->n ? c->n : 1, sizeof(*keys));
	for (size_t i = 0; i < c->n; i++) {
		keys[i] = c->channels[i].key;
	}
	if (store_mark_present(d->store, keys, c->n, c->ts) == 0) {
		struct chanset *set = xcalloc(1, sizeof(*set));
		set->refs = 1;
		set->n = c->n;
		set->channels = xcalloc(c->n ? c->n : 1, sizeof(*set->channels));
		for (size_t i = 0; i < c->n; i++) {
			set->channels[i].key = xstrdup(c->channels[i].key);
		}
		chanset_unref(d->present_set);
		d->present_set = set;
	}
	free(keys);
}

static void stored(struct daemon *d, const struct cycle *c) {
	d->health.cycles_total++;
	mark_present(d, c);
	if (d->capwatch) {
		capwatch_update(d->capwatch, c);
	}
}

static void anchor_save(struct daemon *d);

/*
 * Hourly work: rollups and retention, the capacitors' persisted state, the size figures.
 * Retention runs only from a stamp a sync source or the absence of one vouches for
 * (@trusted): an unsynced clock far ahead would delete history.
 */
static void maintain(struct daemon *d, int64_t ts, bool trusted) {
	int64_t hour = floor_div(ts, 3600);
	if (d->capwatch) {
		capwatch_persist(d->capwatch, ts);
	}
	if (hour == d->last_hour || !trusted) {
		return;
	}
	d->last_hour = hour;
	anchor_save(d);
	int rc = store_maintain(d->store, ts, d->cfg->retention_raw_s);
	if (rc == -EBUSY) {
		d->last_hour = 0; // another connection holds the lock: retried at the next cycle
	} else if (rc < 0) {
		log_warn("hourly maintenance failed; it is retried next hour");
	}
	struct store_info info;
	if (store_info(d->store, &info) == 0) {
		d->health.bytes_written_total = info.bytes_written;
	}
}

/* --- one cycle ----------------------------------------------------------------------------- */

static int open_store(struct daemon *d);
static struct http *start_http(struct daemon *d, const struct config *cfg);
static struct http *start_http_on(struct daemon *d, const struct config *cfg, int listen_fd);
static void drain_http(struct daemon *d, struct http *http, struct config *cfg);

static void remember_db_file(struct daemon *d) {
	struct stat st;
	if (stat(d->db_path, &st) == 0) {
		d->db_dev = st.st_dev;
		d->db_ino = st.st_ino;
	}
}

/*
 * The database file deleted or renamed under the running daemon: writing on would fill an
 * unlinked inode (lost at stop) or a file nobody looks for. Checked before every cycle (one
 * stat()). The history still reachable through the open connection is copied to the configured
 * path (SQLite's backup API), then the daemon reopens there; a file someone put in its place
 * is opened as at start (refused if foreign, moved aside if corrupt).
 */
static void check_db_file(struct daemon *d, int64_t now) {
	struct stat st;
	int r = stat(d->db_path, &st);
	bool missing = r < 0 && errno == ENOENT;
	if ((r < 0 && !missing) || (r == 0 && st.st_dev == d->db_dev && st.st_ino == d->db_ino)) {
		return; // the same file, or no way to tell: write on
	}
	log_error("the database %s was deleted or replaced while running: %s", d->db_path,
		  missing ? "copying the history still open to it and reopening there"
			  : "reopening the file now at that path");
	char *tmp = xasprintf("%s.reopen", d->db_path);
	bool copied = false;
	if (missing) {
		unlink(tmp);
		copied = store_backup(d->store, tmp) == 0; // logs its own failure
	}
	store_close(d->store);
	d->store = NULL;
	if (missing) {
		// The WAL and shm of the vanished file must not be applied to the new one.
		static const char *const stale[] = {"-wal", "-shm"};
		for (size_t i = 0; i < 2; i++) {
			char *p = xasprintf("%s%s", d->db_path, stale[i]);
			unlink(p);
			free(p);
		}
		if (copied &&
		    renameat2(AT_FDCWD, tmp, AT_FDCWD, d->db_path, RENAME_NOREPLACE) < 0) {
			log_errno("could not move %s to %s", tmp, d->db_path);
		}
	}
	unlink(tmp);
	free(tmp);
	if (open_store(d) < 0) {
		log_error("could not reopen the database %s: cycles wait in memory; retried at the "
			  "next cycle",
			  d->db_path);
		d->db_ino = 0;
		return;
	}
	store_set_busy_timeout(d->store, BUSY_TIMEOUT_MS);
	remember_db_file(d);
	d->health.database_reopens++;
	d->health.database_reopened_at = now;
	chanset_unref(d->present_set); // the new file's presence marks start afresh
	d->present_set = NULL;
	if (d->capwatch) {
		capwatch_destroy(d->capwatch);
		d->capwatch = capwatch_create(d->cfg, d->store);
	}
	// The HTTP server's read-only connections still point at the old file: a new server takes
	// over the listening socket (the same port, also when it was port 0) and the old one
	// finishes its requests on a drain thread.
	struct http *old = d->http;
	int fd = http_stop_accepting(old);
	d->http = start_http_on(d, d->cfg, fd);
	if (fd >= 0) {
		close(fd); // the new server has its own copy
	}
	drain_http(d, old, NULL);
	if (!d->http) {
		log_error("the HTTP server did not restart after the database was reopened");
	}
}

/* Bytes available to us on the database's file system, 0 if unknown. */
static uint64_t db_avail(const struct daemon *d) {
	char *dir = xstrdup(d->db_path);
	char *slash = strrchr(dir, '/');
	if (slash) {
		slash[slash == dir ? 1 : 0] = '\0';
	}
	struct statvfs sv;
	uint64_t avail =
		statvfs(slash ? dir : ".", &sv) == 0 ? (uint64_t)sv.f_bavail * sv.f_frsize : 0;
	free(dir);
	return avail;
}

/*
 * While cycles wait, retrying every cycle would fill the log with the store's errors. Retry on
 * a backoff (one interval, doubling up to 5 minutes), or at once when space was freed.
 */
static bool retry_due(const struct daemon *d, int64_t now_mono) {
	return now_mono >= d->retry_at_ms || db_avail(d) >= d->avail_at_failure + RETRY_FREED_BYTES;
}

static void retry_later(struct daemon *d, int64_t now_mono) {
	int64_t max = RETRY_MAX_MS > d->cfg->interval_ms ? RETRY_MAX_MS : d->cfg->interval_ms;
	d->backoff_ms = d->backoff_ms ? d->backoff_ms * 2 : d->cfg->interval_ms;
	d->backoff_ms = d->backoff_ms < max ? d->backoff_ms : max;
	d->retry_at_ms = now_mono + d->backoff_ms - d->cfg->interval_ms / 2;
	d->avail_at_failure = db_avail(d);
}

/* Writes queued cycles, oldest first, until the store refuses. */
static void flush_queue(struct daemon *d) {
	size_t flushed = 0;
	while (d->q_len > 0) {
		struct queued *q = &d->queue[d->q_head];
		struct cycle c = {
			.ts = q->ts,
			.boot_id = d->boot_id[0] ? d->boot_id : NULL,
			.clock = q->clock,
			.n = q->set->n,
			.channels = q->set->channels,
			.readings = q->readings,
		};
		int rc = store_write_cycle(d->store, &c);
		d->busy = rc == -EBUSY;
		if (rc == -EEXIST) {
			log_warn(
				"dropped a queued cycle: the store already has one with its stamp");
		} else if (rc < 0) {
			break;
		} else {
			stored(d, &c);
			flushed++;
		}
		queue_drop_oldest(d);
	}
	if (flushed && d->q_len == 0) {
		log_notice("the database accepts writes again: stored %zu queued cycles", flushed);
		d->queue_logged = false;
		d->drop_logged = false;
		d->backoff_ms = 0;
	}
}

/*
 * The stamp of a cycle whose wall clock reads @wall_ts, or -1 to skip the slot. Normally the
 * wall clock itself. When the wall clock is not after the last stored cycle (a backwards step):
 *  - a small step (up to two intervals or a minute, whichever is longer) skips slots until the
 *    wall clock passes the last stored cycle: a gap of at most that length, and the stamps stay
 *    true;
 *  - a larger one never blocks writing: the cycle goes on the continued timeline, the last
 *    stamp plus the boot-clock time elapsed since it on the interval grid, marked unsynced.
 *    Wall-clock stamps resume once the wall clock passes that timeline.
 * Either way nothing overlaps stored rows, and each episode is logged once.
 */
static int64_t stamp(struct daemon *d, int64_t wall_ts, int64_t now_mono_ms, bool *continued) {
	*continued = false;
	if (d->last_ts == 0 || wall_ts > d->last_ts) {
		if (d->continued) {
			log_notice(
				"the wall clock passed the continued timeline: stamping with it again");
			d->continued = false;
		}
		d->waiting = false;
		return wall_ts;
	}
	int64_t interval_ms = d->cfg->interval_ms;
	int64_t small_s = 2 * interval_ms / 1000 > 60 ? 2 * interval_ms / 1000 : 60;
	char wall[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
	timefmt_iso(wall_ts, wall);
	timefmt_iso(d->last_ts, last);
	if (!d->continued && d->last_ts - wall_ts < small_s) {
		if (!d->waiting) {
			log_notice(
				"the clock reads %s, not after the last stored cycle %s: a small "
				"step back, skipping slots until it passes",
				wall, last);
			d->waiting = true;
		}
		return -1;
	}
	int64_t steps = 1;
	if (d->last_mono_ms > 0) {
		steps = (now_mono_ms - d->last_mono_ms + interval_ms / 2) / interval_ms;
		steps = steps < 1 ? 1 : steps;
	}
	int64_t ts = (d->last_ts * 1000 + steps * interval_ms) / 1000;
	ts = ts > d->last_ts ? ts : d->last_ts + 1;
	if (!d->continued) {
		log_warn("the clock reads %s, not after the last stored cycle %s (stepped back by "
			 "%" PRId64 " s): stamping cycles on the continued timeline, marked "
			 "unsynced, until the wall clock passes it",
			 wall, last, ts - wall_ts);
		d->continued = true;
		d->waiting = false;
	}
	*continued = true;
	return ts;
}

static int64_t jump_bound_s(const struct daemon *d) {
	int64_t two = 2 * d->cfg->interval_ms / 1000;
	return two > JUMP_MIN_S ? two : JUMP_MIN_S;
}

/*
 * Cross-checks a wall-clock stamp against the anchor plus the boot-clock time elapsed since it
 * (CLOCK_BOOTTIME counts suspend too). True when the stamp is a forward glitch: far ahead, and
 * not yet kept for JUMP_ADOPT_MS. Sync state does not vouch for it: a GPS or NTP glitch is
 * "synced", and an unknown clock is no licence for year 2126.
 */
static bool implausible(struct daemon *d, int64_t wall_ts, int64_t now_mono_ms,
			enum clock_state clock) {
	if (d->last_ts == 0) {
		return false;
	}
	int64_t expected = d->last_ts + (now_mono_ms - d->last_mono_ms) / 1000;
	if (d->last_mono_ms == 0) {
		// An anchor from another boot: the time the board was off is unknown, so only a
		// clock a time service has not vouched for yet (a garbage RTC at boot) is suspect.
		if (clock != CLOCK_STATE_UNSYNCED) {
			return false;
		}
		expected = d->last_ts;
	}
	int64_t ahead = wall_ts - expected;
	if (ahead <= jump_bound_s(d)) {
		if (d->jump_since_ms) {
			log_notice("the clock is back on the timeline: stamping with it again");
			d->jump_since_ms = 0;
		}
		return false;
	}
	int64_t offset = wall_ts - now_mono_ms / 1000;
	if (d->jump_since_ms && llabs(offset - d->jump_offset_s) <= jump_bound_s(d)) {
		if (now_mono_ms - d->jump_since_ms < JUMP_ADOPT_MS) {
			return true;
		}
		log_notice("the clock kept its jump of %" PRId64 " s for %d minutes: a real step, "
			   "following it",
			   ahead, JUMP_ADOPT_MS / 60000);
		d->jump_since_ms = 0;
		return false;
	}
	char wall[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
	timefmt_iso(wall_ts, wall);
	timefmt_iso(d->last_ts, last);
	log_warn("the clock reads %s, %" PRId64 " s ahead of the last cycle %s plus the elapsed "
		 "boot time: storing cycles as unsynced without following the clock, unless it "
		 "keeps this time for %d minutes",
		 wall, ahead, last, JUMP_ADOPT_MS / 60000);
	d->jump_since_ms = now_mono_ms;
	d->jump_offset_s = offset;
	return true;
}

/* Persists the anchor, so a restart in the same boot can cross-check its first stamps. */
static void anchor_save(struct daemon *d) {
	if (!d->store || d->last_ts == 0 || d->last_mono_ms == 0 || !d->boot_id[0]) {
		return;
	}
	char *value = xasprintf("%" PRId64 " %s %" PRId64, d->last_ts, d->boot_id, d->last_mono_ms);
	store_state_set(d->store, STATE_ANCHOR, value); // logs its own failure
	free(value);
}

/*
 * The anchor at start: the last cycle a daemon stored (imported rows never count), bounded by
 * the saved anchor. In the same boot the bound is the saved anchor plus the elapsed boot time;
 * after a reboot, cycles far ahead of the clock count only up to the saved anchor, so a glitch
 * stored before a crash is not followed either.
 */
static int anchor_load(struct daemon *d, int64_t now_wall_ts, int64_t now_mono_ms) {
	char *value = NULL;
	int64_t up_to = INT64_MAX, saved_ts = 0, saved_mono = 0;
	bool same_boot = false;
	if (store_state_get(d->store, STATE_ANCHOR, &value) == 0) {
		long long ts, mono;
		char boot[CLOCK_BOOT_ID_LEN];
		if (sscanf(value, "%lld %36s %lld", &ts, boot, &mono) == 3) {
			saved_ts = ts;
			saved_mono = mono;
			same_boot = strcmp(boot, d->boot_id) == 0 && mono <= now_mono_ms;
			up_to = same_boot ? ts + (now_mono_ms - mono) / 1000 + jump_bound_s(d)
					  : (ts > now_wall_ts + jump_bound_s(d)
						     ? ts
						     : now_wall_ts + jump_bound_s(d));
		}
	}
	free(value);
	int rc = store_last_own_cycle(d->store, up_to, &d->last_ts);
	if (rc == 0 && same_boot && d->last_ts >= saved_ts) {
		d->last_mono_ms = saved_mono + (d->last_ts - saved_ts) * 1000;
	}
	return rc;
}

static void detect_step(struct daemon *d, int64_t now_wall_ms, int64_t now_mono_ms) {
	if (d->prev_mono_ms > 0) {
		int64_t step_ms = (now_wall_ms - d->prev_wall_ms) - (now_mono_ms - d->prev_mono_ms);
		if (llabs(step_ms) >= 2000) {
			log_notice("the wall clock stepped %s by %lld s",
				   step_ms > 0 ? "forward" : "back", llabs(step_ms) / 1000);
		}
	}
	d->prev_wall_ms = now_wall_ms;
	d->prev_mono_ms = now_mono_ms;
}

static void print_url(struct daemon *d) {
	if (!d->opt.demo || d->url_printed || !d->http) {
		return;
	}
	printf("http://127.0.0.1:%u/\n", http_port(d->http));
	fflush(stdout);
	d->url_printed = true;
}

static void run_cycle(struct daemon *d, int64_t slot_ms) {
	int64_t start_mono = mono_ms();
	if (!d->store) {
		if (open_store(d) == 0) {
			store_set_busy_timeout(d->store, BUSY_TIMEOUT_MS);
			remember_db_file(d);
		}
	} else {
		check_db_file(d, floor_div(slot_ms, 1000));
	}
	int64_t wall_ts = floor_div(slot_ms, 1000);
	bool continued;
	int64_t ts = stamp(d, wall_ts, start_mono, &continued);
	if (ts < 0) {
		return;
	}
	const char *why;
	enum clock_state clock = clock_probe(&d->clock, wall_ts, d->last_ts, &why);
	bool glitch = !continued && implausible(d, wall_ts, start_mono, clock);
	if (continued) {
		clock = CLOCK_STATE_UNSYNCED;
	}
	if (glitch) {
		clock = CLOCK_STATE_UNSYNCED;
		why = "the clock is implausibly far ahead of the last cycle";
	}
	if (clock != d->health.clock || d->health.cycles_total + d->health.cycles_failed == 0) {
		log_info("clock %s: %s", clock_state_name(clock), why);
	}
	if (d->sim) {
		sim_write(d->sim, ts);
	}
	const struct channel *channels;
	const struct reading *readings;
	size_t n = sampler_read(d->sampler, start_mono / 1000, &channels, &readings);
	struct cycle c = {
		.ts = ts,
		.boot_id = d->boot_id[0] ? d->boot_id : NULL,
		.clock = clock,
		.n = n,
		.channels = channels,
		.readings = readings,
	};
	count_read_errors(d, &c);
	d->health.clock = clock;

	bool tried = d->q_len == 0 || retry_due(d, start_mono);
	if (d->q_len > 0 && tried && d->store) {
		flush_queue(d);
	}
	int rc = !d->store ? -ENOENT : d->q_len > 0 ? -EAGAIN : store_write_cycle(d->store, &c);
	if (rc < 0 && rc != -EEXIST && tried) {
		retry_later(d, start_mono);
	}
	if (rc != -EAGAIN) {
		d->busy = rc == -EBUSY;
	}
	if (d->busy) {
		d->retry_at_ms = 0; // a lock, not the disk: try again at the next cycle
	}
	if (rc == 0) {
		stored(d, &c);
	} else if (rc == -EEXIST) {
		// Our own stamps only increase: the row is a glitch's stamp the true time has
		// reached, or an imported one.
		char at[TIMEFMT_ISO_LEN];
		timefmt_iso(ts, at);
		log_warn("cycle at %s not stored: the database already has a cycle with this stamp "
			 "(imported, or left by a clock glitch; see thermlog repair)",
			 at);
		d->health.cycles_failed++;
	} else {
		if (!d->queue_logged && d->busy) {
			log_warn(
				"could not store cycles (the database is locked by another "
				"connection, e.g. an import): keeping them in memory (up to %zu KiB) "
				"until the database accepts writes",
				d->queue_max_bytes / 1024);
			d->queue_logged = true;
		} else if (!d->queue_logged) {
			log_error(
				"could not store cycles (%s): keeping them in memory (up to %zu KiB) "
				"until the database accepts writes",
				rc == -EAGAIN ? "earlier cycles are waiting" : strerror(-rc),
				d->queue_max_bytes / 1024);
			d->queue_logged = true;
		}
		queue_push(d, &c);
		d->health.cycles_failed++;
	}
	if (rc != -EEXIST && !glitch) {
		d->last_ts = ts;
		d->last_mono_ms = start_mono;
	}
	d->health.queued_cycles = (int64_t)d->q_len;
	if (rc == 0 && !glitch) {
		maintain(d, ts, clock != CLOCK_STATE_UNSYNCED);
	}
	d->health.cycle_seconds = (double)(mono_ms() - start_mono) / 1000.0;
	live_publish(d->live, &c, &d->health);
	publish_capacitors(d);

	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(ts, iso);
	if (d->q_len > 0) {
		notify_sendf(d->notify,
			     "STATUS=last cycle %s, %zu channels, %zu cycles waiting for the disk",
			     iso, n, d->q_len);
	} else {
		notify_sendf(d->notify, "STATUS=last cycle %s, %zu channels, clock %s", iso, n,
			     clock_state_name(clock));
	}
	if (rc == 0 && !d->ready) {
		d->ready = true;
		notify_send(d->notify, "READY=1");
		log_info("first cycle stored at %s: %zu channels", iso, n);
		print_url(d);
	}
}

/* --- configuration ------------------------------------------------------------------------- */

static bool apply_overrides(const struct options *opt, struct config *cfg, char **errors) {
	if (opt->sysfs_root) {
		free(cfg->sysfs_root);
		cfg->sysfs_root = xstrdup(opt->sysfs_root);
	}
	if (opt->db) {
		free(cfg->database);
		cfg->database = xstrdup(opt->db);
	}
	if (opt->listen) {
		free(cfg->http.listen);
		cfg->http.listen = xstrdup(opt->listen);
		cfg->http.listen_at = (struct config_mark){0};
	}
	if (opt->interval) {
		int64_t ms;
		if (!timefmt_parse_duration_ms(opt->interval, &ms) || ms < 1000 || ms > 86400000) {
			*errors = xasprintf(
				"--interval %s: expected a duration from 1s to 1d, e.g. 60s",
				opt->interval);
			return false;
		}
		cfg->interval_ms = ms;
	}
	return true;
}

/* Whether systemd passed a listening socket (sd_listen_fds(3)); activated_fd() takes it. */
static bool activated_fd_present(void) {
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	return pid && fds && strtoll(pid, NULL, 10) == (long long)getpid() && strcmp(fds, "1") == 0;
}

/* Loads the configuration the options name into a new heap config; NULL with errors printed. */
static struct config *load_config(const struct options *opt) {
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	config_init(cfg);
	char *errors = NULL;
	const char *path = opt->config_path;
	struct stat st;
	if (!path && stat(CONFIG_DEFAULT_PATH, &st) == 0) {
		path = CONFIG_DEFAULT_PATH;
	}
	bool ok = !path || config_load(cfg, path, &errors);
	ok = ok && apply_overrides(opt, cfg, &errors);
	// Socket activation decides the address itself; http_create checks that case.
	ok = ok && (activated_fd_present() || config_validate(cfg, &errors));
	if (!ok) {
		log_error("configuration rejected:");
		for (char *line = errors ? strtok(errors, "\n") : NULL; line;
		     line = strtok(NULL, "\n")) {
			log_error("  %s", line);
		}
		free(errors);
		config_finish(cfg);
		free(cfg);
		return NULL;
	}
	free(errors);
	return cfg;
}

/* The demo's configuration text: the simulated tree, a capacitor on the thermocouple. */
static char *demo_yaml(const struct options *opt, const char *root) {
	return xasprintf("interval: %s\n"
			 "sysfs_root: %s\n"
			 "sources:\n"
			 "  hwmon: {enabled: false}\n"   // libsensors would read the host's /sys
			 "  meminfo: {enabled: false}\n" // and this the host's /proc
			 "iio_channels:\n"
			 "  - device: fec10000.saradc\n"
			 "    channel: voltage2\n"
			 "    label: 5 V rail (47k/10k divider)\n"
			 "    unit: volts\n"
			 "    linear: {gain: 5.7, offset: 0}\n"
			 "channels:\n"
			 "  iio/maxim_thermocouple/temp:\n"
			 "    label: C12 bulk capacitor (thermocouple)\n"
			 "capacitors:\n"
			 "  - name: C12 bulk 470uF/35V\n"
			 "    sensor: iio/maxim_thermocouple/temp\n"
			 "    basis: ambient\n"
			 "    rated_life_h: 2000\n"
			 "    rated_temp_c: 105\n"
			 "    model: bt\n"
			 "    type: wet\n"
			 "    self_heating: {rise_k: 3.0}\n",
			 opt->interval ? opt->interval : DEMO_INTERVAL, root);
}

/*
 * The demo's configuration, through the real parser. The text is also written beside the
 * simulated tree so `thermlog -c` can answer `stats` and `lifetime` on the demo database.
 */
static struct config *demo_config(const struct options *opt, const char *root) {
	char *yaml = demo_yaml(opt, root);
	char *path = xasprintf("%s/thermlog-demo.yaml", root);
	FILE *f = fopen(path, "we");
	bool written = f && fputs(yaml, f) >= 0;
	if ((f && fclose(f) != 0) || !written) {
		log_warn("demo: could not write %s: %s", path, strerror(errno));
	}
	free(path);
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	config_init(cfg);
	char *errors = NULL;
	struct options o = *opt;
	o.sysfs_root = NULL;
	o.interval = NULL;
	bool ok = config_load_string(cfg, "demo", yaml, strlen(yaml), &errors) &&
		  apply_overrides(&o, cfg, &errors);
	free(yaml);
	if (!ok) {
		log_error("demo configuration rejected: %s", errors ? errors : "");
		free(errors);
		config_finish(cfg);
		free(cfg);
		return NULL;
	}
	return cfg;
}

/* --- start and stop ------------------------------------------------------------------------ */

/* What the first bytes of the database file say: the header decides corrupt vs. foreign. */
enum db_kind { DB_ABSENT, DB_EMPTY, DB_SQLITE, DB_FOREIGN };

static enum db_kind db_kind(const char *path) {
	// O_NONBLOCK: a FIFO would wait for a writer, with SIGTERM blocked
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		return errno == ENOENT ? DB_ABSENT : DB_SQLITE; // let SQLite report the reason
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		return DB_FOREIGN;
	}
	char head[16];
	ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	if (n == 0) {
		return DB_EMPTY;
	}
	return n == 16 && memcmp(head, "SQLite format 3", 16) == 0 ? DB_SQLITE : DB_FOREIGN;
}

/*
 * Renames a corrupt database (and its WAL) to PATH.corrupt-YYYYMMDDTHHMMSSZ, or -N after it
 * when that name is taken: renameat2(RENAME_NOREPLACE) never overwrites an earlier one.
 */
static bool move_aside(const char *path, char **aside) {
	char stamp_text[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp_text, sizeof(stamp_text), "%Y%m%dT%H%M%SZ", &tm);
	*aside = NULL;
	for (int i = 0; i < 1000; i++) {
		free(*aside);
		*aside = i ? xasprintf("%s.corrupt-%s-%d", path, stamp_text, i)
			   : xasprintf("%s.corrupt-%s", path, stamp_text);
		char *wal_aside = xasprintf("%s-wal", *aside);
		bool taken = access(wal_aside, F_OK) == 0;
		free(wal_aside);
		if (taken) {
			continue;
		}
		if (renameat2(AT_FDCWD, path, AT_FDCWD, *aside, RENAME_NOREPLACE) == 0) {
			break;
		}
		if (errno != EEXIST) {
			log_errno("could not move the corrupt database %s aside", path);
			free(*aside);
			*aside = NULL;
			return false;
		}
	}
	char *wal = xasprintf("%s-wal", path), *wal_aside = xasprintf("%s-wal", *aside);
	char *shm = xasprintf("%s-shm", path);
	if (renameat2(AT_FDCWD, wal, AT_FDCWD, wal_aside, RENAME_NOREPLACE) < 0 &&
	    errno != ENOENT) {
		log_errno("could not move %s aside", wal);
	}
	unlink(shm); // rebuilt from the WAL by SQLite; stale content must not be reused
	free(wal);
	free(wal_aside);
	free(shm);
	return true;
}

/*
 * One daemon per database: an exclusive flock() on PATH.lock, held until exit (the kernel drops
 * it when the process dies, even by SIGKILL). The file holds the owner's pid for the message.
 * SQLite's own locks only serialise transactions; two daemons would interleave their cycles.
 */
static int lock_db(struct daemon *d) {
	char *lock = xasprintf("%s.lock", d->db_path);
	int rc = 0;
	d->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (d->lock_fd < 0) {
		rc = -errno;
		log_error("%s cannot be written: could not create the lock file %s: %s (the daemon "
			  "needs write access to the database's directory)",
			  d->db_path, lock, strerror(errno));
		goto out;
	}
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		rc = -errno;
		if (errno == EWOULDBLOCK) {
			char text[32] = "";
			ssize_t n = pread(d->lock_fd, text, sizeof(text) - 1, 0);
			text[n > 0 ? n : 0] = '\0';
			text[strcspn(text, "\n")] = '\0';
			log_error("the database %s is already in use by another thermlogd (pid %s, "
				  "lock %s): refusing to start a second one",
				  d->db_path, *text ? text : "unknown", lock);
			rc = -EBUSY;
		} else {
			log_error("could not lock %s: %s", lock, strerror(errno));
		}
		goto out;
	}
	// A symlink or hard link names the same file with another PATH.lock: lock the file too
	// (flock, which SQLite's fcntl locks ignore). Closing it would drop SQLite's locks, so
	// it stays open until the store is closed. Created empty when missing (SQLite takes an
	// empty file as a new database), so the first daemon holds it too. O_NONBLOCK: a FIFO
	// must not hang the start.
	d->db_lock_fd =
		open(d->db_path, O_RDONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	struct stat st;
	if (d->db_lock_fd >= 0 && (fstat(d->db_lock_fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(d->db_lock_fd);
		d->db_lock_fd = -1;
	}
	if (d->db_lock_fd >= 0 && flock(d->db_lock_fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (rc == -EBUSY) {
			log_error(
				"the database %s is already in use by another thermlogd through "
				"another name (a symlink or hard link to the same file): refusing "
				"to start a second one",
				d->db_path);
		} else {
			log_error("could not lock %s: %s", d->db_path, strerror(-rc));
		}
		goto out;
	}
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	// The pid is for messages only: a full disk must not stop the daemon here.
	if (ftruncate(d->lock_fd, 0) < 0 || pwrite(d->lock_fd, pid, (size_t)len, 0) != len) {
		log_debug("could not write the pid to %s: %s", lock, strerror(errno));
	}
out:
	free(lock);
	return rc;
}

static int open_store(struct daemon *d) {
	const char *path = d->db_path;
	enum db_kind kind = db_kind(path);
	if (kind == DB_FOREIGN) {
		log_error(
			"%s is not an SQLite database: refusing to touch it (move it away or choose "
			"another path with --db)",
			path);
		return -EINVAL;
	}
	int rc = store_open(&d->store, path, STORE_MODE_WRITE);
	if (rc == -EMEDIUMTYPE) {
		log_error("%s is another program's SQLite database, not a thermlog database: "
			  "refusing to touch it (move it away or choose another path with --db)",
			  path);
		return rc;
	}
	if (rc == -EINVAL && kind == DB_SQLITE) {
		char *aside;
		if (!move_aside(path, &aside)) {
			return rc;
		}
		log_error(
			"DATABASE CORRUPT: %s failed its integrity check; moved it to %s and "
			"started a new database (the old one can be examined with sqlite3's .recover)",
			path, aside);
		free(aside);
		rc = store_open(&d->store, path, STORE_MODE_WRITE);
	}
	switch (rc) {
	case 0:
		break;
	case -ENOTSUP:
		log_error(
			"%s was written by a newer thermlog: refusing to use it (upgrade thermlogd)",
			path);
		break;
	case -EROFS:
	case -EACCES:
	case -EPERM:
		log_error("%s cannot be written: %s (the daemon needs write access to the file and "
			  "its directory)",
			  path, strerror(-rc));
		break;
	default:
		log_error("could not open the database %s: %s", path, strerror(-rc));
		break;
	}
	return rc;
}

/* Socket activation (sd_listen_fds(3)): exactly one listening socket at fd 3. */
static int activated_fd(void) {
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int fd = -1;
	if (pid && fds && strtoll(pid, NULL, 10) == (long long)getpid()) {
		if (strcmp(fds, "1") == 0) {
			fd = 3;
			fcntl(fd, F_SETFD, FD_CLOEXEC);
		} else {
			log_warn("LISTEN_FDS=%s: expected one socket; binding http.listen instead",
				 fds);
		}
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return fd;
}

/* Starts a server on a copy of @listen_fd, else of the socket-activated one, else binding. */
static struct http *start_http_on(struct daemon *d, const struct config *cfg, int listen_fd) {
	int fd = -1;
	if (listen_fd < 0) {
		listen_fd = d->listen_fd;
	}
	if (listen_fd >= 0) {
		fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0) {
			log_errno("could not duplicate the activated socket");
			return NULL;
		}
	}
	return http_create(cfg, d->live, d->db_path, fd);
}

static struct http *start_http(struct daemon *d, const struct config *cfg) {
	return start_http_on(d, cfg, -1);
}

/* Keeps a replaced configuration until the HTTP server's running requests are done with it. */
static void retire_config(struct daemon *d, struct config *cfg) {
	d->retired = xrealloc(d->retired, (d->n_retired + 1) * sizeof(*d->retired));
	d->retired[d->n_retired++] = cfg;
}

/* Frees the retired configurations no request reads any more (all of them without a server). */
static void free_retired(struct daemon *d) {
	size_t kept = 0;
	for (size_t i = 0; i < d->n_retired; i++) {
		if (d->http && http_config_in_use(d->http, d->retired[i])) {
			d->retired[kept++] = d->retired[i];
			continue;
		}
		config_finish(d->retired[i]);
		free(d->retired[i]);
	}
	d->n_retired = kept;
	if (kept == 0) {
		free(d->retired);
		d->retired = NULL;
	}
}

/* A replaced HTTP server and the configurations only it may still read, for a drain thread. */
struct drain {
	struct http *http;
	struct config **cfgs;
	size_t n_cfgs;
};

static void *run_drain(void *arg) {
	struct drain *dr = arg;
	http_destroy(dr->http); // waits for its running requests
	for (size_t i = 0; i < dr->n_cfgs; i++) {
		config_finish(dr->cfgs[i]);
		free(dr->cfgs[i]);
	}
	free(dr->cfgs);
	free(dr);
	return NULL;
}

/*
 * Destroys @http on a thread of its own (joined by reap_drains()), then frees @cfg (or NULL) and
 * the retired configurations, which only its requests could still read.
 */
static void drain_http(struct daemon *d, struct http *http, struct config *cfg) {
	struct drain *dr = xcalloc(1, sizeof(*dr));
	dr->http = http;
	dr->cfgs = d->retired;
	dr->n_cfgs = d->n_retired;
	d->retired = NULL;
	d->n_retired = 0;
	if (cfg) {
		dr->cfgs = xrealloc(dr->cfgs, (dr->n_cfgs + 1) * sizeof(*dr->cfgs));
		dr->cfgs[dr->n_cfgs++] = cfg;
	}
	pthread_t thread;
	if (pthread_create(&thread, NULL, run_drain, dr) != 0) {
		run_drain(dr); // no thread: here, then
		return;
	}
	d->drains = xrealloc(d->drains, (d->n_drains + 1) * sizeof(*d->drains));
	d->drains[d->n_drains++] = thread;
}

/* Joins the drain threads that are done (@wait: all of them). */
static void reap_drains(struct daemon *d, bool wait) {
	size_t kept = 0;
	for (size_t i = 0; i < d->n_drains; i++) {
		if (wait ? pthread_join(d->drains[i], NULL) != 0
			 : pthread_tryjoin_np(d->drains[i], NULL) != 0) {
			d->drains[kept++] = d->drains[i];
		}
	}
	d->n_drains = kept;
	if (kept == 0) {
		free(d->drains);
		d->drains = NULL;
	}
}

/* SIGHUP: a new configuration replaces the old only when it loads and the server starts. */
static void reload(struct daemon *d) {
	log_info("reloading the configuration");
	struct config *next = d->opt.demo ? NULL : load_config(&d->opt);
	if (d->opt.demo) {
		log_notice("the demo has no configuration file to reload; rescanning sources");
		sampler_rescan(d->sampler);
		return;
	}
	if (!next) {
		log_error("reload failed: keeping the running configuration");
		return;
	}
	notify_send(d->notify, "RELOADING=1");
	struct http *old = NULL;
	if (strcmp(next->database, d->cfg->database) != 0 && !d->opt.db) {
		log_warn("database path change to %s takes effect at the next restart",
			 next->database);
	}
	if (d->http && http_config_unchanged(d->http, next)) {
		// Keep the server and its connections: requests read the new configuration from
		// now on, and the old one is freed once no running request reads it.
		http_set_config(d->http, next);
		retire_config(d, d->cfg);
		d->cfg = NULL;
	} else {
		// The old server stops accepting at once and finishes its requests on another
		// thread, so neither idle clients nor a long request hold up the sampling loop.
		// The same address keeps its listening socket (and the connections queued on it).
		old = d->http;
		int fd = http_stop_accepting(old);
		if (fd >= 0 &&
		    (d->listen_fd >= 0 || strcmp(next->http.listen, d->cfg->http.listen) != 0)) {
			close(fd);
			fd = -1;
		}
		d->http = start_http_on(d, next, fd);
		if (!d->http) {
			log_error(
				"reload failed: the HTTP server does not start with the new configuration; "
				"keeping the running one");
			config_finish(next);
			free(next);
			d->http = start_http_on(d, d->cfg, fd);
			drain_http(d, old, NULL);
			if (fd >= 0) {
				close(fd);
			}
			notify_send(d->notify, "READY=1");
			return;
		}
		if (fd >= 0) {
			close(fd); // the new server has its own copy
		}
	}
	if (d->capwatch) {
		capwatch_persist(d->capwatch, d->last_ts);
	}
	anchor_save(d);
	capwatch_destroy(d->capwatch);
	sampler_set_config(d->sampler, next);
	d->capwatch = capwatch_create(next, d->store);
	if (old) {
		drain_http(d, old, d->cfg); // the old server borrowed the old configuration
	} else if (d->cfg) {
		config_finish(d->cfg);
		free(d->cfg);
	}
	d->cfg = next;
	d->health.interval_ms = next->interval_ms;
	notify_send(d->notify, "READY=1");
	log_info("configuration reloaded");
}

/* --- the demo ------------------------------------------------------------------------------ */

/* A week of one-minute history through the real sampler and store, in one transaction. */
static int demo_backfill(struct daemon *d, int64_t now) {
	struct store_info info;
	if (store_info(d->store, &info) < 0) {
		return -EIO;
	}
	// Simulated history goes only into a database the demo started: never into one holding
	// real history, whatever name (a symlink, another path) it is reached by.
	char *mark = NULL;
	int rc = store_state_get(d->store, DEMO_STATE_KEY, &mark);
	free(mark);
	if (rc == -ENOENT && info.cycles > 0) {
		log_error("demo: %s holds %" PRId64 " cycles the demo did not write; it adds "
			  "simulated history only to its own database: choose a new --db",
			  d->db_path, info.cycles);
		return -EEXIST;
	}
	if (rc == -ENOENT) {
		rc = store_state_set(d->store, DEMO_STATE_KEY, "simulated");
	}
	if (rc < 0) {
		return rc;
	}
	int64_t from = floor_div(now - DEMO_BACKFILL_S, 60) * 60;
	if (info.last_cycle >= from) {
		from = floor_div(info.last_cycle, 60) * 60 + 60;
	}
	int64_t to = floor_div(now - 1, 60) * 60; // the live cycles come after it
	if (from > to) {
		return 0;
	}
	log_info("demo: backfilling %" PRId64 " minutes of simulated history",
		 (to - from) / 60 + 1);
	rc = store_begin(d->store);
	if (rc < 0) {
		return rc;
	}
	for (int64_t t = from; t <= to && rc == 0; t += 60) {
		sim_write(d->sim, t);
		const struct channel *channels;
		const struct reading *readings;
		size_t n = sampler_read(d->sampler, 0, &channels, &readings);
		struct cycle c = {
			t,       d->boot_id[0] ? d->boot_id : NULL, CLOCK_STATE_SYNCED, n, channels,
			readings};
		rc = store_write_cycle(d->store, &c);
		d->last_ts = t;
	}
	if (rc < 0) {
		store_rollback(d->store);
		return rc;
	}
	rc = store_commit(d->store);
	if (rc == 0) {
		rc = store_maintain(d->store, now, d->cfg->retention_raw_s);
	}
	return rc;
}

/* Appends @text to @b in single quotes, so a shell takes it as one word whatever it holds. */
static void shell_quote(struct buf *b, const char *text) {
	buf_putc(b, '\'');
	for (const char *p = text; *p; p++) {
		if (*p == '\'') {
			buf_puts(b, "'\\''");
		} else {
			buf_putc(b, *p);
		}
	}
	buf_putc(b, '\'');
}

/*
 * The demo's examples, one command a line on stderr without a log prefix, so each can be pasted
 * as printed: the thermlog built beside this thermlogd (by absolute path), else the one on PATH.
 */
static void print_demo_commands(const char *sim_dir, const char *db_path) {
	struct buf prefix;
	buf_init(&prefix);
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *cli = NULL;
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			cli = xasprintf("%s/thermlog", self);
			if (access(cli, X_OK) != 0) {
				free(cli);
				cli = NULL;
			}
		}
	}
	shell_quote(&prefix, cli ? cli : "thermlog");
	free(cli);
	char *yaml = xasprintf("%s/thermlog-demo.yaml", sim_dir);
	buf_puts(&prefix, " -c ");
	shell_quote(&prefix, yaml);
	free(yaml);
	buf_puts(&prefix, " --db ");
	shell_quote(&prefix, db_path);
	static const char *const examples[] = {"stats", "lifetime", "export --from -1h"};
	fprintf(stderr, "demo: query it from another terminal, one command a line:\n");
	for (size_t i = 0; i < sizeof(examples) / sizeof(*examples); i++) {
		fprintf(stderr, "  %s %s\n", prefix.data, examples[i]);
	}
	fflush(stderr);
	buf_finish(&prefix);
}

static int demo_setup(struct daemon *d, int64_t now) {
	if (d->opt.config_path) {
		log_warn("the demo uses its own configuration: ignoring -c %s", d->opt.config_path);
	}
	if (d->opt.db && strcmp(d->opt.db, CONFIG_DEFAULT_DATABASE) == 0) {
		log_error("the demo never writes the service's database %s: choose another --db",
			  CONFIG_DEFAULT_DATABASE);
		return -EINVAL;
	}
	d->sim = sim_create(NULL, d->opt.seed, now);
	if (!d->sim) {
		return -EIO;
	}
	d->cfg = demo_config(&d->opt, sim_root(d->sim));
	if (!d->cfg) {
		return -EINVAL;
	}
	if (d->opt.db) {
		d->db_path = xstrdup(d->opt.db);
	} else {
		const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		d->db_path = xasprintf("%s/thermlog-demo.XXXXXX.db", tmp);
		int fd = mkstemps(d->db_path, 3);
		if (fd < 0) {
			log_errno("could not create the demo database in %s", tmp);
			return -EIO;
		}
		close(fd);
		d->db_is_temp = true;
	}
	log_info("demo: simulated ROCK 5C in %s, database %s (seed %" PRIu64 ")", sim_root(d->sim),
		 d->db_path, d->opt.seed);
	print_demo_commands(sim_root(d->sim), d->db_path);
	return 0;
}

static void remove_temp_db(const char *path) {
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".lock"};
	for (size_t i = 0; i < 5; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		unlink(p);
		free(p);
	}
}

/* --- main ---------------------------------------------------------------------------------- */

static void usage(FILE *out) {
	fprintf(out,
		"usage: thermlogd [-c FILE] [--sysfs-root DIR] [--db PATH] [--interval DUR]\n"
		"                 [--listen ADDR:PORT] [--check-config] [--demo [--seed N]]\n"
		"                 [--version] [--help]\n"
		"\n"
		"Samples board telemetry into SQLite and serves it over HTTP.\n"
		"\n"
		"  -c, --config FILE    configuration (default %s, if present)\n"
		"      --sysfs-root DIR read sysfs from DIR instead of /sys\n"
		"      --db PATH        database (default %s)\n"
		"      --interval DUR   sampling interval, e.g. 60s (1s .. 1d)\n"
		"      --listen A:P     HTTP address, e.g. 127.0.0.1:9470\n"
		"      --check-config   validate the configuration and exit\n"
		"      --demo           simulate a ROCK 5C with a week of history; own database\n"
		"      --seed N         the demo's simulation seed (default 1)\n"
		"      --version        print the version\n"
		"      --help           this text\n"
		"\nFlags override the configuration file. See thermlogd(8).\n",
		CONFIG_DEFAULT_PATH, CONFIG_DEFAULT_DATABASE);
}

static int parse_args(int argc, char **argv, struct options *opt) {
	enum {
		OPT_SYSFS = 256,
		OPT_DB,
		OPT_INTERVAL,
		OPT_LISTEN,
		OPT_CHECK,
		OPT_DEMO,
		OPT_SEED,
		OPT_VERSION,
		OPT_HELP
	};
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"sysfs-root", required_argument, NULL, OPT_SYSFS},
		{"db", required_argument, NULL, OPT_DB},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"check-config", no_argument, NULL, OPT_CHECK},
		{"demo", no_argument, NULL, OPT_DEMO},
		{"seed", required_argument, NULL, OPT_SEED},
		{"version", no_argument, NULL, OPT_VERSION},
		{"help", no_argument, NULL, OPT_HELP},
		{0},
	};
	bool seed_given = false;
	opt->seed = 1;
	int c;
	while ((c = getopt_long(argc, argv, "c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			opt->config_path = optarg;
			break;
		case OPT_SYSFS:
			opt->sysfs_root = optarg;
			break;
		case OPT_DB:
			opt->db = optarg;
			break;
		case OPT_INTERVAL:
			opt->interval = optarg;
			break;
		case OPT_LISTEN:
			opt->listen = optarg;
			break;
		case OPT_CHECK:
			opt->check_config = true;
			break;
		case OPT_DEMO:
			opt->demo = true;
			break;
		case OPT_SEED: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				fprintf(stderr,
					"thermlogd: --seed %s: expected a non-negative integer\n",
					optarg);
				return EXIT_USAGE;
			}
			opt->seed = v;
			seed_given = true;
			break;
		}
		case OPT_VERSION:
			printf("thermlogd %s\n", THERMLOG_VERSION);
			return 0;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "thermlogd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (seed_given && !opt->demo) {
		fprintf(stderr, "thermlogd: --seed only applies to --demo\n");
		return EXIT_USAGE;
	}
	return -1;
}

/*
 * Arms the schedule for the next wall-clock slot after now; no catch-up for missed slots. The
 * deadline is computed in nanoseconds, and never for the slot just handled: a wake-up a hair
 * early must not run the same slot twice.
 */
static int64_t arm_next(struct daemon *d) {
	int64_t interval = d->cfg->interval_ms;
	struct timespec rt, bt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	int64_t offset_ms = wall_ms(d) - clock_ms(CLOCK_REALTIME); // the test hook, or 0
	int64_t now_wall_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec + offset_ms * 1000000;
	int64_t slot = (floor_div(now_wall_ns / 1000000, interval) + 1) * interval;
	if (slot == d->last_slot_ms) {
		slot += interval;
	}
	int64_t deadline =
		(int64_t)bt.tv_sec * 1000000000 + bt.tv_nsec + slot * 1000000 - now_wall_ns;
	struct itimerspec its = {
		.it_value = {(time_t)(deadline / 1000000000), (long)(deadline % 1000000000)},
	};
	timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	return slot;
}

/*
 * The first cycle at start, off the grid: /metrics and /api/v1/latest have values at once
 * instead of up to an interval later. Stamped with the current second, which becomes the
 * handled slot, so the grid never handles it again. Skipped when that second is already
 * stored (a restart within it).
 */
static void first_cycle(struct daemon *d) {
	int64_t now_ms = floor_div(wall_ms(d), 1000) * 1000;
	if (d->last_ts != 0 && now_ms / 1000 <= d->last_ts) {
		return;
	}
	d->last_slot_ms = now_ms;
	run_cycle(d, now_ms);
}

static int run(struct daemon *d) {
	first_cycle(d);
	arm_next(d);
	for (;;) {
		struct pollfd fds[3] = {
			{.fd = d->sfd, .events = POLLIN},
			{.fd = d->tfd, .events = POLLIN},
			{.fd = notify_watchdog_fd(d->notify), .events = POLLIN},
		};
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			log_errno("poll failed");
			return 1;
		}
		if (fds[2].revents & POLLIN) {
			notify_watchdog(d->notify);
		}
		if (fds[1].revents & POLLIN) {
			uint64_t expirations;
			if (read(d->tfd, &expirations, sizeof(expirations)) < 0 &&
			    errno == EAGAIN) {
				continue;
			}
			int64_t interval = d->cfg->interval_ms;
			int64_t now_wall = wall_ms(d), now_mono = mono_ms();
			detect_step(d, now_wall, now_mono);
			int64_t slot = floor_div(now_wall + interval / 2, interval) * interval;
			int64_t tolerance = interval / 4 < 2000 ? interval / 4 : 2000;
			// Woken away from a slot: the clock stepped or the system slept. Wait for
			// the next slot instead of sampling off the grid.
			if (slot == d->last_slot_ms) {
				log_debug("woke early for a slot already handled");
			} else if (llabs(now_wall - slot) <= tolerance) {
				d->last_slot_ms = slot;
				run_cycle(d, slot);
				if (d->n_retired) {
					free_retired(d);
				}
				if (d->n_drains) {
					reap_drains(d, false);
				}
			} else {
				log_debug("woke %" PRId64
					  " ms off the grid: waiting for the next slot",
					  now_wall - slot);
			}
			arm_next(d);
		}
		if (fds[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(d->sfd, &si, sizeof(si)) != sizeof(si)) {
				continue;
			}
			if (si.ssi_signo == SIGHUP) {
				reload(d);
				arm_next(d);
			} else {
				log_info("%s received: stopping", strsignal((int)si.ssi_signo));
				return 0;
			}
		}
	}
}

static void daemon_finish(struct daemon *d) {
	http_destroy(d->http);
	d->http = NULL;
	free_retired(d);
	reap_drains(d, true);
	if (d->capwatch && d->last_ts) {
		capwatch_persist(d->capwatch, d->last_ts);
	}
	if (d->q_len == 0) {
		anchor_save(d);
	}
	capwatch_destroy(d->capwatch);
	if (d->q_len) {
		log_warn("%zu cycles were never written: the database did not accept them",
			 d->q_len);
	}
	while (d->q_len) {
		queue_drop_oldest(d);
	}
	free(d->queue);
	chanset_unref(d->last_set);
	chanset_unref(d->present_set);
	sampler_destroy(d->sampler);
	store_close(d->store);
	live_destroy(d->live);
	if (d->db_is_temp) {
		remove_temp_db(d->db_path);
	}
	if (d->db_lock_fd >= 0) {
		close(d->db_lock_fd);
	}
	if (d->lock_fd >= 0) {
		close(d->lock_fd); // after the store is closed: the lock covers every write
	}
	sim_destroy(d->sim);
	notify_destroy(d->notify);
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
	}
	if (d->sfd >= 0) {
		close(d->sfd);
	}
	if (d->tfd >= 0) {
		close(d->tfd);
	}
	free(d->db_path);
	if (d->cfg) {
		config_finish(d->cfg);
		free(d->cfg);
	}
}

int main(int argc, char **argv) {
	struct daemon d = {.listen_fd = -1, .lock_fd = -1, .db_lock_fd = -1, .sfd = -1, .tfd = -1};
	log_init(LOG_LEVEL_INFO);
	int rc = parse_args(argc, argv, &d.opt);
	if (rc >= 0) {
		return rc;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	// Block the signals before any thread exists, so they all arrive at the signalfd.
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	d.offset_file = getenv("THERMLOG_TEST_CLOCK_OFFSET_FILE");
	if (d.offset_file && !*d.offset_file) {
		d.offset_file = NULL;
	}
	if (d.offset_file) {
		log_warn("test hook: wall clock offset from %s", d.offset_file);
	}
	d.queue_max_bytes = QUEUE_MAX_BYTES;
	const char *qmax = getenv("THERMLOG_TEST_QUEUE_MAX_BYTES");
	if (qmax && *qmax) {
		d.queue_max_bytes = (size_t)strtoull(qmax, NULL, 10);
		log_warn("test hook: queue of unwritten cycles limited to %zu bytes",
			 d.queue_max_bytes);
	}
	clock_source_init(&d.clock);
	clock_boot_id("", d.boot_id);

	int exit_code = 1;
	int64_t now = floor_div(wall_ms(&d), 1000);
	if (d.opt.demo) {
		if (d.opt.check_config) {
			fprintf(stderr,
				"thermlogd: --check-config and --demo exclude each other\n");
			return EXIT_USAGE;
		}
		rc = demo_setup(&d, now);
		if (rc < 0) {
			exit_code = rc == -EINVAL ? EXIT_USAGE : 1;
			goto out;
		}
	} else {
		d.cfg = load_config(&d.opt);
		if (!d.cfg) {
			exit_code = EXIT_USAGE;
			goto out;
		}
		if (d.opt.check_config) {
			printf("configuration OK\n");
			exit_code = 0;
			goto out;
		}
		d.db_path = xstrdup(d.cfg->database);
	}

	d.notify = notify_create();
	d.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d.tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d.sfd < 0 || d.tfd < 0) {
		log_errno("could not create the signal and timer descriptors");
		goto out;
	}
	if (lock_db(&d) < 0 || open_store(&d) < 0) {
		goto out;
	}
	store_set_busy_timeout(d.store, BUSY_TIMEOUT_MS);
	remember_db_file(&d);
	if (anchor_load(&d, now, mono_ms()) < 0) {
		goto out;
	}
	d.sampler = sampler_create(d.cfg);
	if (!d.sampler) {
		goto out;
	}
	d.live = live_create();
	// Bind before the demo's backfill, so a port in use is reported at once.
	d.listen_fd = activated_fd();
	d.http = start_http(&d, d.cfg);
	if (!d.http) {
		goto out;
	}
	if (d.opt.demo && demo_backfill(&d, now) < 0) {
		log_error("demo: could not backfill the simulated history");
		goto out;
	}
	d.capwatch = capwatch_create(d.cfg, d.store);
	d.health.started = now;
	d.health.interval_ms = d.cfg->interval_ms;
	d.health.clock = CLOCK_STATE_UNKNOWN;
	log_info("thermlogd %s: database %s, interval %" PRId64 " ms, sysfs %s", THERMLOG_VERSION,
		 d.db_path, d.cfg->interval_ms, d.cfg->sysfs_root);

	exit_code = run(&d);
	notify_send(d.notify, "STOPPING=1");
out:
	daemon_finish(&d);
	return exit_code;
}
