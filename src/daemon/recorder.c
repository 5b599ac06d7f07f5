/*
 * The recorder: one sampling cycle from the stamp to the store and the live snapshot. Stamps
 * (backwards steps, forward glitches and the timeline anchor), the clock state, the read, the
 * store or the queue of unwritten cycles with its disk-full and lock retry, the capacitors'
 * running damage, hourly maintenance, the health counters, and the database file's identity
 * (reopened when deleted or replaced). Time is a parameter, so unit tests drive it with a fake
 * clock. See docs/DAEMON.md.
 */
#include "recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "capwatch.h"
#include "clock.h"
#include "log.h"
#include "sampler.h"
#include "store.h"
#include "summarizer.h"
#include "throttle.h"
#include "throttlescan.h"
#include "timefmt.h"
#include "xalloc.h"

#define RETRY_MAX_MS            (5 * 60 * 1000)
#define RETRY_FREED_BYTES       (256 * 1024)
#define MAX_CAPACITORS          64
#define RECORDER_ERROR_CHANNELS 16 // failed channels named on the status, most recent kept
// Rows of a refined channel's history rescaled a cycle (tens of ms; a year of minutes in 32).
#define RECORDER_RESCALE_ROWS 16384
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
/* The writer's page cache: a cycle touches a few pages, maintenance an hour or a day of rows. */
#define WRITER_CACHE_KIB 128

/* A channel list shared by consecutive queued cycles (it rarely changes), or the one last
 * marked present. */
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

struct recorder {
	const struct config *cfg; // borrowed; replaced by recorder_set_config()
	char *db_path;
	struct store *store;
	struct sampler *sampler; // borrowed
	struct live *live;       // borrowed
	struct capwatch *capwatch;
	struct clock_source clock;
	char boot_id[CLOCK_BOOT_ID_LEN];
	int64_t (*mono_ms)(void);
	void (*before_read)(void *ctx, int64_t ts);
	void *ctx;

	// The timeline anchor: the last cycle this daemon stamped plausibly (never an imported
	// row, never a glitch), s since epoch; 0 = none.
	int64_t last_ts;
	int64_t last_mono_ms;  // when last_ts was stamped (boot clock); 0 = in another boot
	int64_t jump_since_ms; // boot clock: since when the wall clock is implausibly ahead; 0 =
			       // not
	int64_t jump_offset_s; // that jump's wall minus boot clock, to tell one jump from the next
	bool continued;        // stamping on the continued timeline after a backwards step
	bool waiting;          // skipping slots after a small backwards step

	struct queued *queue;
	size_t q_head, q_len, q_cap, q_bytes;
	bool queue_logged, drop_logged;
	bool busy;              // the last write attempt met another connection's lock
	size_t queue_max_bytes; // RECORDER_QUEUE_MAX_BYTES unless the creator says otherwise
	int checkpoint_pages;   // store_checkpoint_aside()'s threshold
	int64_t retry_at_ms, backoff_ms; // boot clock; the next write attempt while cycles wait
	uint64_t avail_at_failure;       // free bytes when the last attempt failed
	struct chanset *last_set;
	struct chanset *present_set; // the channels last marked present (compared by key)
	uint64_t present_version;    // channels_version present_set was made from; 0 = none
	// What the runs summary on /metrics was last asked for: asked again only when one changed.
	struct summarizer *summarizer; // reads it on its thread; started at the first request
	struct store *runs_store;
	uint64_t runs_generation; // moves with runs_store: the summarizer opens the file again
	struct store_runs_mark runs_mark;
	size_t runs_labels;

	struct live_health health;
	int64_t errors_minute[60]; // read errors per minute of the last hour, by minute
	int64_t errors_minute_at[60];
	struct {
		char *key;                         // NULL: a free slot
		int64_t minute;                    // of its last failed read
	} error_channels[RECORDER_ERROR_CHANNELS]; // the channels that failed lately
	int64_t last_hour;                         // hour of the last store_maintain()
	struct throttle_tracker *throttle;         // the frequency domains' episodes
	struct throttle_input *throttle_in;        // this cycle's readings for it
	struct throttlescan *throttle_scan;        // the tree's topology, made when channels change
	uint64_t throttle_scan_version;            // the sampler's channel list last checked
	uint64_t throttle_scan_keys;               // the hash of that list's keys
	int throttle_scan_root;                    // the sampler's root fd it reads
	char *throttle_limits_said;                // throttlescan_limits() said; NULL = none
	bool throttle_failed;                      // the last episode write failed (logged)
	bool rescale_failed;                       // the last rescale batch failed (logged)
	bool maintain_more; // the last maintenance stopped with work left: go on next cycle
	dev_t db_dev;       // the database file opened, to notice it deleted or replaced
	ino_t db_ino;
};

static int64_t boottime_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- the unwritten-cycle queue ------------------------------------------------------------- */

static void chanset_unref(struct chanset *set) {
	if (set && --set->refs == 0) {
		channel_list_free(set->channels, set->n);
		free(set);
	}
}

/* A new set holding copies of @c's channels, with one reference for the caller. */
static struct chanset *chanset_create(const struct cycle *c) {
	struct chanset *set = xcalloc(1, sizeof(*set));
	set->refs = 1;
	set->n = c->n;
	set->channels = channel_list_copy(c->channels, c->n);
	return set;
}

static bool same_channels(const struct chanset *set, const struct channel *ch, size_t n) {
	return set && channel_list_same_keys(set->channels, set->n, ch, n);
}

static size_t queued_bytes(const struct queued *q) {
	return sizeof(*q) + q->set->n * sizeof(struct reading);
}

static void queue_drop_oldest(struct recorder *r) {
	struct queued *q = &r->queue[r->q_head];
	r->q_bytes -= queued_bytes(q);
	chanset_unref(q->set);
	free(q->readings);
	r->q_head = (r->q_head + 1) % r->q_cap;
	r->q_len--;
}

static void queue_push(struct recorder *r, const struct cycle *c) {
	if (!same_channels(r->last_set, c->channels, c->n)) {
		chanset_unref(r->last_set);
		r->last_set = chanset_create(c); // the recorder's reference as last_set
	}
	if (r->q_len == r->q_cap) {
		size_t cap = r->q_cap ? r->q_cap * 2 : 64;
		struct queued *grown = xcalloc(cap, sizeof(*grown));
		for (size_t i = 0; i < r->q_len; i++) {
			grown[i] = r->queue[(r->q_head + i) % r->q_cap];
		}
		free(r->queue);
		r->queue = grown;
		r->q_cap = cap;
		r->q_head = 0;
	}
	struct queued *q = &r->queue[(r->q_head + r->q_len) % r->q_cap];
	q->ts = c->ts;
	q->clock = c->clock;
	q->set = r->last_set;
	q->set->refs++;
	q->readings = xcalloc(c->n ? c->n : 1, sizeof(*q->readings));
	memcpy(q->readings, c->readings, c->n * sizeof(*q->readings));
	r->q_len++;
	r->q_bytes += queued_bytes(q);
	int64_t dropped = 0;
	while (r->q_bytes > r->queue_max_bytes && r->q_len > 1) {
		queue_drop_oldest(r);
		dropped++;
	}
	if (dropped) {
		r->health.cycles_failed += dropped;
		if (!r->drop_logged) {
			log_warn(
				"the queue of unwritten cycles is full (%zu KiB): dropping the oldest "
				"until the database accepts writes",
				r->queue_max_bytes / 1024);
			r->drop_logged = true;
		}
	}
}

/* --- after a cycle is stored --------------------------------------------------------------- */

/* Notes that @key failed in @minute: its slot, else a free one, else the one failed longest ago. */
static void note_error_channel(struct recorder *r, const char *key, int64_t minute) {
	size_t pick = 0;
	for (size_t i = 0; i < RECORDER_ERROR_CHANNELS; i++) {
		const char *k = r->error_channels[i].key;
		if (k && strcmp(k, key) == 0) {
			r->error_channels[i].minute = minute;
			return;
		}
		bool older = r->error_channels[i].minute < r->error_channels[pick].minute;
		if (r->error_channels[pick].key && (!k || older)) {
			pick = i; // a free slot, or one that failed longer ago
		}
	}
	free(r->error_channels[pick].key);
	r->error_channels[pick].key = xstrdup(key);
	r->error_channels[pick].minute = minute;
}

/* health.error_channels: the keys that failed in the hour up to @minute, in key order. */
static void publish_error_channels(struct recorder *r, int64_t minute) {
	const char *keys[RECORDER_ERROR_CHANNELS];
	size_t n = 0;
	for (size_t i = 0; i < RECORDER_ERROR_CHANNELS; i++) {
		if (r->error_channels[i].key && r->error_channels[i].minute > minute - 60) {
			size_t at = n++;
			for (; at > 0 && strcmp(keys[at - 1], r->error_channels[i].key) > 0; at--) {
				keys[at] = keys[at - 1];
			}
			keys[at] = r->error_channels[i].key;
		}
	}
	char *out = r->health.error_channels;
	size_t len = 0, cap = sizeof(r->health.error_channels);
	static const char more[] = ", ...";
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t need = strlen(keys[i]) + (i ? 2 : 0);
		bool last = i + 1 == n;
		// Room for this key, and for ", ..." after it unless it is the last.
		if (len + need + (last ? 0 : sizeof(more) - 1) >= cap) {
			snprintf(out + len, cap - len, "%s", i ? more : more + 2);
			return;
		}
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "", keys[i]);
	}
}

/* Counts the cycle's failed reads (a rate's first reading is none) and names their channels. */
static void count_read_errors(struct recorder *r, const struct cycle *c) {
	int64_t errors = 0;
	int64_t minute = timefmt_floor_div(c->ts, 60);
	for (size_t i = 0; i < c->n; i++) {
		if (reading_failed(&c->readings[i])) {
			errors++;
			note_error_channel(r, c->channels[i].key, minute);
		}
	}
	r->health.read_errors_total += errors;
	size_t slot = (size_t)(minute % 60 + 60) % 60;
	if (r->errors_minute_at[slot] != minute) {
		r->errors_minute_at[slot] = minute;
		r->errors_minute[slot] = 0;
	}
	r->errors_minute[slot] += errors;
	int64_t last_hour = 0;
	for (size_t i = 0; i < 60; i++) {
		if (r->errors_minute_at[i] > minute - 60 && r->errors_minute_at[i] <= minute) {
			last_hour += r->errors_minute[i];
		}
	}
	r->health.errors_last_hour = last_hour;
	if (errors > 0 ||
	    r->health.error_channels[0] != '\0') { // steady and healthy: nothing to do
		publish_error_channels(r, minute);
	}
}

static void publish_capacitors(struct recorder *r) {
	if (!r->capwatch) {
		return;
	}
	struct capstate caps[MAX_CAPACITORS];
	size_t n = capwatch_states(r->capwatch, caps, MAX_CAPACITORS);
	live_publish_capacitors(r->live, caps, n);
}

/*
 * The runs per label for /metrics, from the database (imports and the daemon's own runs
 * alike), so a scrape reads memory only; runs.metrics_labels of them one by one. Asked again
 * only when the store's runs mark, the store or the cap moved: a steady cycle costs nothing,
 * and the summary is read on the summarizer's thread, so however many runs and labels are
 * stored a run's start or stop costs the loop a request.
 */
void recorder_publish_runs(struct recorder *r) {
	struct store_runs_mark mark;
	if (!r->store || !r->live || store_runs_mark(r->store, &mark) < 0) {
		return;
	}
	size_t cap = r->cfg->runs.metrics_labels;
	if (r->runs_store == r->store && r->runs_labels == cap &&
	    r->runs_mark.others == mark.others && r->runs_mark.own == mark.own) {
		return;
	}
	if (!r->summarizer && !(r->summarizer = summarizer_create(r->live))) {
		return; // said; tried again at the next change
	}
	r->runs_generation += r->runs_store != r->store;
	summarizer_request(r->summarizer, r->db_path, cap, r->runs_generation);
	r->runs_store = r->store;
	r->runs_mark = mark;
	r->runs_labels = cap;
}

/*
 * Closes episodes a stopped or crashed daemon left open at the last cycle that saw them (at
 * start and after a reopen), and starts tracking afresh: a cap still held opens a new one.
 */
static void throttle_restart(struct recorder *r) {
	int64_t closed = 0;
	if (r->store && store_throttle_close_open(r->store, &closed) == 0 && closed > 0) {
		log_info("closed %lld throttle episodes left open at the last cycle that saw them",
			 (long long)closed);
	}
	throttle_tracker_destroy(r->throttle);
	r->throttle = throttle_tracker_create();
}

/*
 * The cycle's throttle readings into the tracker, its open and closed episodes into the store
 * (only while there are some) and each domain's state into live for /metrics.
 */
/* FNV-1a over the cycle's channel keys: equal while a rescan finds the same channels. */
static uint64_t channel_keys_hash(const struct cycle *c) {
	uint64_t h = 14695981039346656037u;
	for (size_t i = 0; i < c->n; i++) {
		for (const char *p = c->channels[i].key; *p; p++) {
			h = (h ^ (unsigned char)*p) * 1099511628211u;
		}
		h = (h ^ 0xff) * 1099511628211u;
	}
	return h;
}

/*
 * The topology throttle detection reads: found again when a rescan changes the channels (a
 * zone, policy, devfreq or cooling device came or went), on a reload, or with another
 * sampler; a rescan that finds the same channels keeps it, so a cycle reads only what moves.
 */
static void throttle_topology(struct recorder *r, const struct cycle *c) {
	uint64_t version = sampler_channels_version(r->sampler);
	int root_fd = sampler_root_fd(r->sampler);
	if (r->throttle_scan && version == r->throttle_scan_version &&
	    root_fd == r->throttle_scan_root) {
		return;
	}
	uint64_t keys = channel_keys_hash(c);
	if (!r->throttle_scan || keys != r->throttle_scan_keys ||
	    root_fd != r->throttle_scan_root) {
		throttlescan_destroy(r->throttle_scan);
		r->throttle_scan = throttlescan_create(root_fd);
		r->throttle_scan_root = root_fd;
		// a limit said once for the board, again only when what it leaves out changes
		const char *limits = throttlescan_limits(r->throttle_scan);
		if (limits &&
		    (!r->throttle_limits_said || strcmp(limits, r->throttle_limits_said) != 0)) {
			log_warn("throttle detection: %s", limits);
		}
		free(r->throttle_limits_said);
		r->throttle_limits_said = limits ? xstrdup(limits) : NULL;
	}
	r->throttle_scan_version = version;
	r->throttle_scan_keys = keys;
}

static void track_throttle(struct recorder *r, const struct cycle *c, int64_t ts) {
	if (!r->sampler || !r->throttle) {
		return;
	}
	throttle_topology(r, c);
	throttlescan_read(r->throttle_scan, r->throttle_in, r->sampler);
	r->throttle_in->ts = ts;
	throttle_tracker_update(r->throttle, r->throttle_in);
	size_t n;
	struct throttle_episode *const *eps = throttle_tracker_episodes(r->throttle, &n);
	if (n > 0 && r->store) {
		int rc = store_throttle_put(r->store, eps, n);
		if (rc < 0 && !r->throttle_failed) {
			log_warn(
				"could not store throttle episodes: %s (retried at the next cycle)",
				strerror(-rc));
		}
		r->throttle_failed = rc < 0;
	}
	struct throttle_domain_state domains[2 * THROTTLE_MAX_DOMAINS + 1];
	size_t nd = throttle_tracker_domains(r->throttle, domains,
					     sizeof(domains) / sizeof(domains[0]));
	if (r->live) {
		live_publish_throttle(r->live, domains, nd);
	}
}

/* Marks channels that left the sampler's list absent, once per change of the list. */
static void mark_present(struct recorder *r, const struct cycle *c) {
	if ((c->channels_version != 0 && c->channels_version == r->present_version) ||
	    same_channels(r->present_set, c->channels, c->n)) {
		r->present_version = c->channels_version;
		return;
	}
	const char **keys = xcalloc(c->n ? c->n : 1, sizeof(*keys));
	for (size_t i = 0; i < c->n; i++) {
		keys[i] = c->channels[i].key;
	}
	if (store_mark_present(r->store, keys, c->n, c->ts) == 0) {
		chanset_unref(r->present_set);
		r->present_set = chanset_create(c);
		r->present_version = c->channels_version;
	}
	free(keys);
}

static void stored(struct recorder *r, const struct cycle *c) {
	r->health.cycles_total++;
	mark_present(r, c);
	if (r->capwatch) {
		capwatch_update(r->capwatch, c);
	}
}

static void anchor_save(struct recorder *r);

/*
 * The most a cycle gives to the store's maintenance: a tenth of the interval, at most 200 ms. A
 * long backlog (a database converted from an older thermlog, a big import) is worked off a slice
 * a cycle, so the loop never stalls.
 */
static int64_t maintain_budget_ms(const struct recorder *r) {
	int64_t tenth = r->cfg->interval_ms / 10;
	return tenth < 200 ? tenth : 200;
}

/*
 * Hourly work: rollups, compaction and retention, the capacitors' persisted state, the size
 * figures; with work left over, the store's part goes on at the next cycles.
 * Retention runs only from a stamp a sync source or the absence of one vouches for
 * (@trusted): an unsynced clock far ahead would delete history.
 */
static void maintain(struct recorder *r, int64_t ts, bool trusted) {
	int64_t hour = timefmt_floor_div(ts, 3600);
	if (r->capwatch) {
		capwatch_persist(r->capwatch, ts);
	}
	if ((hour == r->last_hour && !r->maintain_more) || !trusted) {
		return;
	}
	if (hour != r->last_hour) {
		anchor_save(r);
	}
	r->last_hour = hour;
	int rc = store_maintain_some(r->store, ts, r->cfg->retention_raw_s, maintain_budget_ms(r));
	r->maintain_more = rc == 1;
	if (rc == -EBUSY) {
		r->last_hour = 0; // another connection holds the lock: retried at the next cycle
	} else if (rc < 0) {
		log_warn("hourly maintenance failed; it is retried next hour");
	}
	struct store_info info;
	if (store_info(r->store, &info) == 0) {
		r->health.bytes_written_total = info.bytes_written;
	}
}

/*
 * A channel refined to a finer resolution has its history rescaled a batch a cycle, off the
 * cycle's own write (store_rescale_work()): reads scale the rest meanwhile.
 */
static void rescale_batch(struct recorder *r) {
	bool more = false;
	int rc = store_rescale_work(r->store, RECORDER_RESCALE_ROWS, &more);
	if (rc < 0 && rc != -EBUSY && !r->rescale_failed) {
		log_warn("rescaling a refined channel's history failed (%s); retried next cycle",
			 strerror(-rc));
	}
	r->rescale_failed = rc < 0 && rc != -EBUSY;
}

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

static void remember_db_file(struct recorder *r) {
	struct stat st;
	if (stat(r->db_path, &st) == 0) {
		r->db_dev = st.st_dev;
		r->db_ino = st.st_ino;
	}
}

/*
 * Opens the write connection (at start, after a failed open, after a reopen). Every open
 * connection gets the short lock wait and the writer's cache, and its file's identity is
 * remembered for check_db_file().
 */
static int open_store(struct recorder *r) {
	const char *path = r->db_path;
	enum db_kind kind = db_kind(path);
	if (kind == DB_FOREIGN) {
		log_error(
			"%s is not an SQLite database: refusing to touch it (move it away or choose "
			"another path with --db)",
			path);
		return -EINVAL;
	}
	int rc = store_open(&r->store, path, STORE_MODE_WRITE);
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
		rc = store_open(&r->store, path, STORE_MODE_WRITE);
	}
	switch (rc) {
	case 0:
		store_set_busy_timeout(r->store, BUSY_TIMEOUT_MS);
		store_set_cache_kib(r->store, WRITER_CACHE_KIB);
		// A checkpoint syncs the file: off the loop, which must never wait for the disk.
		store_checkpoint_aside(r->store, r->checkpoint_pages); // a failure is logged
		remember_db_file(r);
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

/*
 * The database file deleted or renamed under the running daemon: writing on would fill an
 * unlinked inode (lost at stop) or a file nobody looks for. Checked before every cycle (one
 * stat()). The history still reachable through the open connection is copied to the configured
 * path (SQLite's backup API), then the daemon reopens there; a file someone put in its place
 * is opened as at start (refused if foreign, moved aside if corrupt).
 */
static bool check_db_file(struct recorder *r, int64_t now) {
	struct stat st;
	int st_rc = stat(r->db_path, &st);
	bool missing = st_rc < 0 && errno == ENOENT;
	if ((st_rc < 0 && !missing) ||
	    (st_rc == 0 && st.st_dev == r->db_dev && st.st_ino == r->db_ino)) {
		return false; // the same file, or no way to tell: write on
	}
	log_error("the database %s was deleted or replaced while running: %s", r->db_path,
		  missing ? "copying the history still open to it and reopening there"
			  : "reopening the file now at that path");
	char *tmp = xasprintf("%s.reopen", r->db_path);
	bool copied = false;
	if (missing) {
		unlink(tmp);
		copied = store_backup(r->store, tmp) == 0; // logs its own failure
	}
	store_close(r->store);
	r->store = NULL;
	r->runs_store = NULL; // a new store may come at the same address
	if (missing) {
		// The WAL and shm of the vanished file must not be applied to the new one.
		static const char *const stale[] = {"-wal", "-shm"};
		for (size_t i = 0; i < 2; i++) {
			char *p = xasprintf("%s%s", r->db_path, stale[i]);
			unlink(p);
			free(p);
		}
		if (copied &&
		    renameat2(AT_FDCWD, tmp, AT_FDCWD, r->db_path, RENAME_NOREPLACE) < 0) {
			log_errno("could not move %s to %s", tmp, r->db_path);
		}
	}
	unlink(tmp);
	free(tmp);
	if (open_store(r) < 0) {
		log_error("could not reopen the database %s: cycles wait in memory; retried at the "
			  "next cycle",
			  r->db_path);
		r->db_ino = 0;
		return true;
	}
	r->health.database_reopens++;
	r->health.database_reopened_at = now;
	chanset_unref(r->present_set); // the new file's presence marks start afresh
	r->present_set = NULL;
	if (r->capwatch) {
		capwatch_destroy(r->capwatch);
		r->capwatch = capwatch_create(r->cfg, r->store);
	}
	throttle_restart(r);
	return true; // the HTTP thread's read-only connection still points at the old file
}

/* Bytes available to us on the database's file system, 0 if unknown. */
static uint64_t db_avail(const struct recorder *r) {
	char *dir = xstrdup(r->db_path);
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
static bool retry_due(const struct recorder *r, int64_t now_mono) {
	return now_mono >= r->retry_at_ms || db_avail(r) >= r->avail_at_failure + RETRY_FREED_BYTES;
}

static void retry_later(struct recorder *r, int64_t now_mono) {
	int64_t max = RETRY_MAX_MS > r->cfg->interval_ms ? RETRY_MAX_MS : r->cfg->interval_ms;
	r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : r->cfg->interval_ms;
	r->backoff_ms = r->backoff_ms < max ? r->backoff_ms : max;
	r->retry_at_ms = now_mono + r->backoff_ms - r->cfg->interval_ms / 2;
	r->avail_at_failure = db_avail(r);
}

/* Writes queued cycles, oldest first, until the store refuses. */
static void flush_queue(struct recorder *r) {
	size_t flushed = 0;
	while (r->q_len > 0) {
		struct queued *q = &r->queue[r->q_head];
		struct cycle c = {
			.ts = q->ts,
			.boot_id = r->boot_id[0] ? r->boot_id : NULL,
			.clock = q->clock,
			.n = q->set->n,
			.channels = q->set->channels,
			.readings = q->readings,
		};
		int rc = store_write_cycle(r->store, &c);
		r->busy = rc == -EBUSY;
		if (rc == -EEXIST) {
			log_warn(
				"dropped a queued cycle: the store already has one with its stamp");
			r->health.cycles_failed++;
		} else if (rc < 0) {
			break;
		} else {
			stored(r, &c);
			flushed++;
		}
		queue_drop_oldest(r);
	}
	if (flushed && r->q_len == 0) {
		log_notice("the database accepts writes again: stored %zu queued cycles", flushed);
		r->queue_logged = false;
		r->drop_logged = false;
		r->backoff_ms = 0;
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
static int64_t stamp(struct recorder *r, int64_t wall_ts, int64_t now_mono_ms, bool *continued) {
	*continued = false;
	if (r->last_ts == 0 || wall_ts > r->last_ts) {
		if (r->continued) {
			log_notice(
				"the wall clock passed the continued timeline: stamping with it again");
			r->continued = false;
		}
		r->waiting = false;
		return wall_ts;
	}
	int64_t interval_ms = r->cfg->interval_ms;
	int64_t small_s = 2 * interval_ms / 1000 > 60 ? 2 * interval_ms / 1000 : 60;
	char wall[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
	timefmt_iso(wall_ts, wall);
	timefmt_iso(r->last_ts, last);
	if (!r->continued && r->last_ts - wall_ts < small_s) {
		if (!r->waiting) {
			log_notice(
				"the clock reads %s, not after the last stored cycle %s: a small "
				"step back, skipping slots until it passes",
				wall, last);
			r->waiting = true;
		}
		return -1;
	}
	int64_t steps = 1;
	if (r->last_mono_ms > 0) {
		steps = (now_mono_ms - r->last_mono_ms + interval_ms / 2) / interval_ms;
		steps = steps < 1 ? 1 : steps;
	}
	int64_t ts = (r->last_ts * 1000 + steps * interval_ms) / 1000;
	ts = ts > r->last_ts ? ts : r->last_ts + 1;
	if (!r->continued) {
		log_warn("the clock reads %s, not after the last stored cycle %s (stepped back by "
			 "%" PRId64 " s): stamping cycles on the continued timeline, marked "
			 "unsynced, until the wall clock passes it",
			 wall, last, ts - wall_ts);
		r->continued = true;
		r->waiting = false;
	}
	*continued = true;
	return ts;
}

static int64_t jump_bound_s(const struct recorder *r) {
	int64_t two = 2 * r->cfg->interval_ms / 1000;
	return two > JUMP_MIN_S ? two : JUMP_MIN_S;
}

/*
 * Cross-checks a wall-clock stamp against the anchor plus the boot-clock time elapsed since it
 * (CLOCK_BOOTTIME counts suspend too). True when the stamp is a forward glitch: far ahead, and
 * not yet kept for JUMP_ADOPT_MS. Sync state does not vouch for it: a GPS or NTP glitch is
 * "synced", and an unknown clock is no licence for year 2126.
 */
static bool implausible(struct recorder *r, int64_t wall_ts, int64_t now_mono_ms,
			enum clock_state clock) {
	if (r->last_ts == 0) {
		return false;
	}
	int64_t expected = r->last_ts + (now_mono_ms - r->last_mono_ms) / 1000;
	if (r->last_mono_ms == 0) {
		// An anchor from another boot: the time the board was off is unknown, so only a
		// clock a time service has not vouched for yet (a garbage RTC at boot) is suspect.
		if (clock != CLOCK_STATE_UNSYNCED) {
			return false;
		}
		expected = r->last_ts;
	}
	int64_t ahead = wall_ts - expected;
	if (ahead <= jump_bound_s(r)) {
		if (r->jump_since_ms) {
			log_notice("the clock is back on the timeline: stamping with it again");
			r->jump_since_ms = 0;
		}
		return false;
	}
	int64_t offset = wall_ts - now_mono_ms / 1000;
	if (r->jump_since_ms && llabs(offset - r->jump_offset_s) <= jump_bound_s(r)) {
		if (now_mono_ms - r->jump_since_ms < JUMP_ADOPT_MS) {
			return true;
		}
		log_notice("the clock kept its jump of %" PRId64 " s for %d minutes: a real step, "
			   "following it",
			   ahead, JUMP_ADOPT_MS / 60000);
		r->jump_since_ms = 0;
		return false;
	}
	char wall[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
	timefmt_iso(wall_ts, wall);
	timefmt_iso(r->last_ts, last);
	log_warn("the clock reads %s, %" PRId64 " s ahead of the last cycle %s plus the elapsed "
		 "boot time: storing cycles as unsynced without following the clock, unless it "
		 "keeps this time for %d minutes",
		 wall, ahead, last, JUMP_ADOPT_MS / 60000);
	r->jump_since_ms = now_mono_ms;
	r->jump_offset_s = offset;
	return true;
}

/* Persists the anchor, so a restart in the same boot can cross-check its first stamps. */
static void anchor_save(struct recorder *r) {
	if (!r->store || r->last_ts == 0 || r->last_mono_ms == 0 || !r->boot_id[0]) {
		return;
	}
	char *value = xasprintf("%" PRId64 " %s %" PRId64, r->last_ts, r->boot_id, r->last_mono_ms);
	store_state_set(r->store, STATE_ANCHOR, value); // logs its own failure
	free(value);
}

/*
 * The anchor at start: the last cycle a daemon stored (imported rows never count), bounded by
 * the saved anchor. In the same boot the bound is the saved anchor plus the elapsed boot time;
 * after a reboot, cycles far ahead of the clock count only up to the saved anchor, so a glitch
 * stored before a crash is not followed either.
 */
static int anchor_load(struct recorder *r, int64_t now_wall_ts, int64_t now_mono_ms) {
	char *value = NULL;
	int64_t up_to = INT64_MAX, saved_ts = 0, saved_mono = 0;
	bool same_boot = false;
	if (store_state_get(r->store, STATE_ANCHOR, &value) == 0) {
		long long ts, mono;
		char boot[CLOCK_BOOT_ID_LEN];
		if (sscanf(value, "%lld %36s %lld", &ts, boot, &mono) == 3) {
			saved_ts = ts;
			saved_mono = mono;
			same_boot = strcmp(boot, r->boot_id) == 0 && mono <= now_mono_ms;
			up_to = same_boot ? ts + (now_mono_ms - mono) / 1000 + jump_bound_s(r)
					  : (ts > now_wall_ts + jump_bound_s(r)
						     ? ts
						     : now_wall_ts + jump_bound_s(r));
		}
	}
	free(value);
	int rc = store_last_own_cycle(r->store, up_to, &r->last_ts);
	if (rc == 0 && same_boot && r->last_ts >= saved_ts) {
		r->last_mono_ms = saved_mono + (r->last_ts - saved_ts) * 1000;
	}
	return rc;
}

void recorder_tick(struct recorder *r, int64_t slot_ms, int64_t start_mono,
		   struct recorder_result *out) {
	*out = (struct recorder_result){.skipped = true, .clock = r->health.clock};
	struct steptime *longest = &out->longest;
	int64_t t = steptime_now_ms();
	int64_t wall_ts = timefmt_floor_div(slot_ms, 1000);
	if (!r->store) {
		open_store(r); // logs its own failure; cycles wait in the queue meanwhile
	} else if (check_db_file(r, wall_ts)) {
		out->reopened = true;
	}
	t = steptime_end(longest, "opening or checking the database file", t);
	bool continued;
	int64_t ts = stamp(r, wall_ts, start_mono, &continued);
	if (ts < 0) {
		return;
	}
	const char *why;
	enum clock_state clock = clock_probe(&r->clock, wall_ts, r->last_ts, &why);
	bool glitch = !continued && implausible(r, wall_ts, start_mono, clock);
	if (continued) {
		clock = CLOCK_STATE_UNSYNCED;
	}
	if (glitch) {
		clock = CLOCK_STATE_UNSYNCED;
		why = "the clock is implausibly far ahead of the last cycle";
	}
	if (clock != r->health.clock || r->health.cycles_total + r->health.cycles_failed == 0) {
		log_info("clock %s: %s", clock_state_name(clock), why);
	}
	if (r->before_read) {
		r->before_read(r->ctx, ts);
	}
	const struct channel *channels;
	const struct reading *readings;
	size_t n = sampler_read(r->sampler, start_mono / 1000, &channels, &readings);
	t = steptime_end(longest, "reading the board's files", t);
	struct cycle c = {
		.ts = ts,
		.boot_id = r->boot_id[0] ? r->boot_id : NULL,
		.clock = clock,
		.n = n,
		.channels = channels,
		.readings = readings,
		.channels_version = sampler_channels_version(r->sampler),
	};
	count_read_errors(r, &c);
	r->health.clock = clock;

	bool tried = r->q_len == 0 || retry_due(r, start_mono);
	if (r->q_len > 0 && tried && r->store) {
		flush_queue(r);
	}
	int rc = !r->store ? -ENOENT : r->q_len > 0 ? -EAGAIN : store_write_cycle(r->store, &c);
	if (rc < 0 && rc != -EEXIST && tried) {
		retry_later(r, start_mono);
	}
	if (rc != -EAGAIN) {
		r->busy = rc == -EBUSY;
	}
	if (r->busy) {
		r->retry_at_ms = 0; // a lock, not the disk: try again at the next cycle
	}
	if (rc == 0) {
		stored(r, &c);
	} else if (rc == -EEXIST) {
		// Our own stamps only increase: the row is a glitch's stamp the true time has
		// reached, or an imported one.
		char at[TIMEFMT_ISO_LEN];
		timefmt_iso(ts, at);
		log_warn("cycle at %s not stored: the database already has a cycle with this stamp "
			 "(imported, or left by a clock glitch; see thermlog repair)",
			 at);
		r->health.cycles_failed++;
	} else {
		if (!r->queue_logged && r->busy) {
			log_warn(
				"could not store cycles (the database is locked by another "
				"connection, e.g. an import): keeping them in memory (up to %zu KiB) "
				"until the database accepts writes",
				r->queue_max_bytes / 1024);
			r->queue_logged = true;
		} else if (!r->queue_logged) {
			log_error(
				"could not store cycles (%s): keeping them in memory (up to %zu KiB) "
				"until the database accepts writes",
				rc == -EAGAIN ? "earlier cycles are waiting" : strerror(-rc),
				r->queue_max_bytes / 1024);
			r->queue_logged = true;
		}
		queue_push(r, &c); // failed only if it never gets written (dropped, refused)
	}
	if (rc != -EEXIST && !glitch) {
		r->last_ts = ts;
		r->last_mono_ms = start_mono;
	}
	r->health.queued_cycles = (int64_t)r->q_len;
	t = steptime_end(longest, "writing the cycle to the database", t);
	if (rc == 0 && !glitch) {
		maintain(r, ts, clock != CLOCK_STATE_UNSYNCED);
	}
	t = steptime_end(longest,
			 "the hourly maintenance (rollups, retention, the capacitors' state)", t);
	if (rc == 0 && !glitch) {
		rescale_batch(r);
	}
	t = steptime_end(longest, "rescaling a refined channel's history, a batch", t);
	if (rc != -EEXIST && !glitch) {
		track_throttle(r, &c, ts);
	}
	t = steptime_end(longest, "tracking throttling", t);
	r->health.cycle_seconds = (double)(r->mono_ms() - start_mono) / 1000.0;
	live_publish(r->live, &c, &r->health);
	publish_capacitors(r);
	recorder_publish_runs(r);
	steptime_end(longest, "publishing the cycle to the readers", t);

	*out = (struct recorder_result){
		.stored = rc == 0,
		.reopened = out->reopened,
		.ts = ts,
		.n = n,
		.queued = r->q_len,
		.clock = clock,
		.longest = out->longest,
	};
}

/* --- life cycle ---------------------------------------------------------------------------- */

struct recorder *recorder_create(const struct config *cfg, const struct recorder_params *params,
				 int64_t now_wall_s, int64_t now_mono_ms) {
	struct recorder *r = xcalloc(1, sizeof(*r));
	r->cfg = cfg;
	r->db_path = xstrdup(params->db_path);
	if (params->boot_id) {
		snprintf(r->boot_id, sizeof(r->boot_id), "%s", params->boot_id);
	}
	if (params->clock) {
		r->clock = *params->clock;
	} else {
		clock_source_init(&r->clock);
	}
	r->queue_max_bytes =
		params->queue_max_bytes ? params->queue_max_bytes : RECORDER_QUEUE_MAX_BYTES;
	r->checkpoint_pages = params->checkpoint_pages;
	r->mono_ms = params->mono_ms ? params->mono_ms : boottime_ms;
	r->before_read = params->before_read;
	r->ctx = params->ctx;
	r->health.interval_ms = cfg->interval_ms;
	r->health.clock = CLOCK_STATE_UNKNOWN;
	if (open_store(r) < 0) {
		goto err;
	}
	if (anchor_load(r, now_wall_s, now_mono_ms) < 0) {
		goto err;
	}
	r->throttle_in = xcalloc(1, sizeof(*r->throttle_in));
	throttle_restart(r);
	return r;
err:
	recorder_destroy(r);
	return NULL;
}

void recorder_start(struct recorder *r, struct sampler *sampler, struct live *live,
		    int64_t started) {
	r->sampler = sampler;
	r->live = live;
	r->capwatch = capwatch_create(r->cfg, r->store);
	r->health.started = started;
}

struct store *recorder_store(struct recorder *r) {
	return r->store;
}

int64_t recorder_last_ts(const struct recorder *r) {
	return r->last_ts;
}

void recorder_count_missed(struct recorder *r, int64_t n) {
	r->health.cycles_missed += n;
}

void recorder_set_last_ts(struct recorder *r, int64_t ts) {
	r->last_ts = ts;
}

void recorder_adopt_throttle(struct recorder *r, struct throttle_tracker *t) {
	if (!t) {
		return;
	}
	throttle_tracker_zero_totals(t);
	throttle_tracker_destroy(r->throttle);
	r->throttle = t;
}

void recorder_set_config(struct recorder *r, const struct config *cfg) {
	if (r->capwatch) {
		capwatch_persist(r->capwatch, r->last_ts);
	}
	anchor_save(r);
	capwatch_destroy(r->capwatch);
	r->capwatch = capwatch_create(cfg, r->store);
	r->cfg = cfg;
	r->health.interval_ms = cfg->interval_ms;
	throttlescan_destroy(r->throttle_scan); // a reload finds trips and bindings again
	r->throttle_scan = NULL;
}

void recorder_destroy(struct recorder *r) {
	if (!r) {
		return;
	}
	if (r->capwatch && r->last_ts) {
		capwatch_persist(r->capwatch, r->last_ts);
	}
	if (r->q_len == 0) {
		anchor_save(r);
	}
	summarizer_destroy(r->summarizer); // before the store: it may be reading the file
	capwatch_destroy(r->capwatch);
	throttle_tracker_destroy(r->throttle);
	throttlescan_destroy(r->throttle_scan);
	free(r->throttle_limits_said);
	free(r->throttle_in);
	if (r->q_len) {
		log_warn("%zu cycles were never written: the database did not accept them",
			 r->q_len);
	}
	while (r->q_len) {
		queue_drop_oldest(r);
	}
	free(r->queue);
	chanset_unref(r->last_set);
	chanset_unref(r->present_set);
	store_close(r->store);
	for (size_t i = 0; i < RECORDER_ERROR_CHANNELS; i++) {
		free(r->error_channels[i].key);
	}
	free(r->db_path);
	free(r);
}
