/*
 * The store: SQLite schema, one transaction per cycle, closed blocks compacted into chunks,
 * hourly rollups and whole days, retention, queries.
 */
#ifndef STORE_H
#define STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "campaignplan.h"
#include "channel.h"
#include "cycle.h"
#include "runstatus.h"
#include "throttle.h"

struct store;

enum store_mode {
	STORE_MODE_WRITE, // the daemon, import: creates and migrates
	STORE_MODE_READ,  // CLI queries and the HTTP thread: read-only, no migration
	// Another board's database (runs compare OTHER.db): read-only, and every string or blob
	// at most 1 MiB and all reads within 10 s of the open (-EFBIG, -ETIMEDOUT, logged)
	STORE_MODE_FOREIGN,
};

/**
 * Opens (or creates, in write mode) the database at @path (":memory:" works) with WAL,
 * synchronous=NORMAL, secure_delete=OFF, a busy timeout and a bounded page cache, and applies
 * the embedded migrations. Returns 0 and sets *out, or a negative errno with the reason logged:
 * -ENOTSUP for a database newer than this binary, -EINVAL for a file that is not SQLite or is
 * corrupt, -EMEDIUMTYPE for another program's SQLite database (a foreign application_id, or no
 * application_id with a user_version or tables, or a schema that is not this thermlog's in
 * read modes: a view, a trigger, an unknown or missing table or index, a column that differs),
 * -EROFS/-EACCES when it cannot be written,
 * -ENOSPC when the file system is full. In read mode, a database without a -shm in a directory
 * this process cannot write (a copy on read-only media) is opened immutable.
 */
int store_open(struct store **out, const char *path, enum store_mode mode);
void store_close(struct store *store); // accepts NULL

/**
 * How long a statement waits for another connection's lock before failing with -EBUSY (5 s
 * after store_open()). Under a second, -EBUSY is logged at debug level only: the caller (the
 * daemon, which must never block its sampling loop) queues and retries.
 */
void store_set_busy_timeout(struct store *store, int ms);
/**
 * Caps this connection's page cache at @kib KiB (store_open() sets 128). The daemon's writer
 * touches a few hot pages per cycle and reads an hour or a day at a time in maintenance.
 */
void store_set_cache_kib(struct store *store, int kib);
/**
 * Moves the WAL checkpoints of this writer to a thread of its own, on a second connection to the
 * file: a commit that leaves the WAL at @pages pages or more wakes it (0 = 1000, SQLite's
 * auto-checkpoint threshold, which it replaces). A checkpoint's copying and syncing, seconds on
 * a busy disk, then never holds up the writer's commits (the daemon's sampling loop). Passive,
 * it copies what no reader still needs and waits for nobody. Ends with store_close(). 0, or
 * -EINVAL (not a writer, or already aside) or -EIO (logged; the commits keep checkpointing).
 */
int store_checkpoint_aside(struct store *store, int pages);
/**
 * Gives back the heap this connection's page cache holds (sqlite3_db_release_memory()): an
 * idle reader then costs the same whatever its last query read. Its next read takes its pages
 * from the kernel's page cache, as it must after any commit of the writer anyway. Accepts NULL.
 */
void store_release_memory(struct store *store);

/**
 * Stores a cycle in one transaction, registering new channels and marking present ones. A
 * live channel's source, label, path and metadata replace the stored ones, and its kind and
 * unit replace an imported channel's unknown unit ('1').
 * A cycle whose ts is already stored is refused with -EEXIST (never a duplicate row); a later
 * stored stamp (an imported row, a clock glitch) does not block it: the caller keeps its own
 * stamps increasing. -ENOSPC/-EIO when the disk refuses: nothing was written, retry later.
 */
int store_write_cycle(struct store *store, const struct cycle *cycle);

/**
 * The latest cycle stored by a daemon (one with a boot id; imported rows have none) with
 * ts <= @up_to, or 0 in *ts when there is none.
 */
int store_last_own_cycle(struct store *store, int64_t up_to, int64_t *ts);

/** Marks channels not in @keys absent (they keep their history). */
int store_mark_present(struct store *store, const char *const *keys, size_t n, int64_t now);

/**
 * Rolls up every complete hour not yet rolled up, merges the whole days of them into the daily
 * level, compacts every closed block of the head (4 hours of cycles, 15 minutes of fast samples,
 * each its own transaction) and drops the throttle episodes that ended more than @raw_keep_s
 * ago (values are kept: the chunks are the history).
 */
int store_maintain(struct store *store, int64_t now, int64_t raw_keep_s);
/**
 * store_maintain() for at most about @budget_ms (0: no limit), stopping between transactions:
 * returns 1 when work is left (call it again soon), 0 when all is done, or -errno.
 */
int store_maintain_some(struct store *store, int64_t now, int64_t raw_keep_s, int64_t budget_ms);

/** Where the conversion of a database written by a thermlog of schema 10 or earlier stands. */
struct store_convert {
	bool converting;  // the head's cycles are still in the old table (store_maintain() goes on)
	char failed[192]; // why the check stopped it ("" while it goes on): the old tables stay
};
/**
 * A database written by an older thermlog is converted by store_maintain() (its closed blocks
 * compacted, then every day checked against the old rollups, then the old tables dropped, a
 * transaction a step); *out says where that stands. 0 or -errno.
 */
int store_convert_state(struct store *store, struct store_convert *out);
/** Clears a failed check so the next store_maintain() checks every day again. 0 or -errno. */
int store_convert_retry(struct store *store);

/** A stored channel. Strings are owned by the array returned by store_channels(). */
struct store_channel {
	int64_t id;
	struct channel ch;             // path and meta may be NULL
	int64_t first_seen, last_seen; // s since epoch; last_seen: the last cycle with a value
	bool present;
};

/** How many channels are known, and how many of them are present. 0 or -errno. */
int store_channel_counts(struct store *store, size_t *total, size_t *present);

/** Every known channel, ordered by key. Free with store_channels_free(). */
int store_channels(struct store *store, struct store_channel **out, size_t *n);
void store_channels_free(struct store_channel *list, size_t n);

/** Summary for status pages. */
struct store_info {
	int64_t cycles;      // stored cycles
	int64_t first_cycle; // ts, or 0 when empty
	int64_t last_cycle;  // ts, or 0 when empty
	int64_t unsynced_cycles;
	int64_t size_bytes;    // database file plus WAL
	int64_t bytes_written; // by this connection since open (data pages written)
};
int store_info(struct store *store, struct store_info *info);

/** A stored cycle in a window, for coverage and gap counting. */
struct store_cycle {
	int64_t ts;
	enum clock_state clock;
};

typedef int (*store_cycle_fn)(void *ctx, const struct store_cycle *cycle);
/** Calls @fn for every cycle with from <= ts < to, in time order; a nonzero return stops. */
int store_scan_cycles(struct store *store, int64_t from, int64_t to, store_cycle_fn fn, void *ctx);

/** A raw stored value: the integer kept is llround(value / resolution). */
struct store_sample {
	int64_t ts;
	int64_t channel_id;
	int64_t q; // quantized value; value = q * resolution
	enum clock_state clock;
};

typedef int (*store_sample_fn)(void *ctx, const struct store_sample *sample);
/**
 * Calls @fn for every raw sample with from <= ts < to of the channels in @ids (all channels
 * when n_ids == 0), ordered by (ts, channel_id). Unsynced cycles are skipped unless
 * @include_unsynced. A nonzero return from @fn stops the scan and is returned. Rows are read
 * from the first of @from's UTC hour (a row may be coded against the one before it); a
 * damaged row is -EINVAL, logged with its ts.
 */
int store_scan_samples(struct store *store, int64_t from, int64_t to, const int64_t *ids,
		       size_t n_ids, bool include_unsynced, store_sample_fn fn, void *ctx);

/** A window of time [from, to), in s. */
struct store_window {
	int64_t from, to;
};

typedef int (*store_window_sample_fn)(void *ctx, size_t window, const struct store_sample *sample);
/**
 * store_scan_samples() over each of the windows @w[0..n) in turn, in one read snapshot, @fn told
 * the index of the window a sample is of. One reader serves them all: a block of the history
 * that windows following each other fall in is decoded at most twice (up to the first window's
 * end, then whole when a later one goes further), so ascending windows read fastest.
 */
int store_scan_sample_windows(struct store *store, const struct store_window *w, size_t n,
			      const int64_t *ids, size_t n_ids, bool include_unsynced,
			      store_window_sample_fn fn, void *ctx);

/**
 * An hourly rollup of one channel: count, sum, min, max and the exact histogram of quantized
 * values (distinct q ascending with counts), so percentiles over whole hours stay exact.
 * Unsynced cycles are not part of rollups; `unsynced` counts them.
 */
struct store_rollup {
	int64_t hour; // ts of the hour's start
	int64_t channel_id;
	int64_t count;
	int64_t sum_q;
	int64_t min_q, max_q;
	int64_t max_ts; // when max_q was first reached
	int64_t unsynced;
	size_t n_bins;
	const int64_t *bin_q; // ascending
	const int64_t *bin_count;
};

typedef int (*store_rollup_fn)(void *ctx, const struct store_rollup *rollup);
/**
 * Calls @fn for the rollups of hours [from_hour, to_hour) of @ids (all when n_ids == 0), in
 * (hour, channel_id) order; the bins stay valid until @fn returns. Stops on a nonzero return.
 */
int store_scan_rollups(struct store *store, int64_t from_hour, int64_t to_hour, const int64_t *ids,
		       size_t n_ids, store_rollup_fn fn, void *ctx);
/** The first hour not yet rolled up (raw rows must be read from there on). */
int store_rollup_horizon(struct store *store, int64_t *hour);
/** The raw history's start: values before *ts (s) were pruned and cannot be imported (0: none). */
int store_raw_horizon(struct store *store, int64_t *ts);

/*
 * The daily level, merged by store_maintain() from whole days of hourly rollups and cycles
 * (UTC days): valid for the days before store_day_horizon() only, which an import into
 * rolled-up hours or a refinement moves back until the next store_maintain().
 */

/** The first day (s since epoch, 00:00 UTC) not merged; 0 when none is. 0 or -errno. */
int store_day_horizon(struct store *store, int64_t *day);

/** The trusted (synced and unknown-clock) cycles of one UTC day. */
struct store_cycle_day {
	int64_t day;               // ts of 00:00 UTC
	int64_t cycles;            // trusted cycles
	int64_t unsynced;          // unsynced cycles
	int64_t first_ts, last_ts; // of the trusted cycles; meaningless when cycles == 0
	size_t n_spacings;         // distinct spacings between consecutive trusted cycles
	const int64_t *spacing_s;  // ascending, s
	const int64_t *spacing_count;
};

typedef int (*store_cycle_day_fn)(void *ctx, const struct store_cycle_day *day);
/**
 * Calls @fn for each merged day in [from_day, to_day), ascending (one row per day, also when
 * it has no cycle); the spacings stay valid until @fn returns. A nonzero return stops.
 */
int store_scan_cycle_days(struct store *store, int64_t from_day, int64_t to_day,
			  store_cycle_day_fn fn, void *ctx);
/**
 * Like store_scan_rollups() for the days [from_day, to_day): each struct store_rollup is a
 * channel's hourly rollups of that day merged (hour = the day's start; max_ts the first time
 * the day's maximum was reached). The bins stay valid until @fn returns.
 */
int store_scan_rollup_days(struct store *store, int64_t from_day, int64_t to_day,
			   const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx);

/**
 * A channel refined to a finer resolution has its older rows rescaled here, off the cycle: one
 * batch of at most about @budget_rows rows (at least one hour of them) in a transaction of its
 * own, the newest hours first; *more when rows are left for the next call. Every read scales
 * the rows not rescaled yet, so answers never mix resolutions. 0 or a negative errno.
 */
int store_rescale_work(struct store *store, int64_t budget_rows, bool *more);

/** Small persistent key/value state (e.g. running lifetime damage). *value is newly allocated. */
int store_state_get(struct store *store, const char *key, char **value);
int store_state_set(struct store *store, const char *key, const char *value);
/**
 * A counter that every transaction adding imported values (store_insert_sample) raises by one:
 * a reader holding sums over the history (the daemon's capacitor damage) compares it to know
 * that older history changed. 0 before any import; 0 or -errno. Another connection's bump is
 * seen once this store has read its channels again (each store_write_cycle() does): until
 * then the value read last is returned without reading the database.
 */
int store_history_generation(struct store *store, int64_t *gen);

/** Imported rows: registers @ch if unknown (source "import" unless given). */
int store_channel_ensure(struct store *store, const struct channel *ch, int64_t *id);
/**
 * store_channel_ensure() of @n channels at once, in O(n log n) however many the database
 * holds: ids[i] is chs[i]'s (a key given twice gets one id). Nothing is added when one is
 * refused (-EINVAL, logged).
 */
int store_channels_ensure(struct store *store, const struct channel *chs, size_t n, int64_t *ids);
/** What store_insert_sample() found at (ts, channel). */
enum store_import_result {
	STORE_IMPORT_NEW,       // stored
	STORE_IMPORT_IDENTICAL, // the same value was stored already
	STORE_IMPORT_CONFLICT,  // a different value is stored: it is kept, this one dropped
};

/**
 * Inserts an imported value; a cycle row is created as synced where none exists. An existing
 * (ts, channel) value is left as it is (re-import changes nothing); *result (may be NULL) says
 * which case it was. Callers wrap batches in store_begin()/store_commit().
 */
int store_insert_sample(struct store *store, int64_t ts, int64_t channel_id, int64_t q,
			enum store_import_result *result);

/** One imported value of store_insert_samples(): in, and what became of it. */
struct store_import_value {
	int64_t channel_id;
	int64_t q;
	enum store_import_result result; // out
};

/**
 * store_insert_sample() of @n values of one cycle @ts at once: the cycle's row is written once,
 * so a wide file's row of thousands of channels costs O(n log n), not a rewrite per value. A
 * channel given twice: the first value counts, the second is compared with it.
 */
int store_insert_samples(struct store *store, int64_t ts, struct store_import_value *values,
			 size_t n);

/**
 * Makes channel @id's resolution fine enough for values at @resolution: the coarsest step both
 * the stored resolution and @resolution are whole multiples of (channel_common_resolution()),
 * multiplying every stored integer (raw rows and rollups) by the exact factor. *applied is the
 * resolution now in force. -ERANGE when there is no common step or an integer would overflow
 * (nothing changed). store_write_cycle() does the same when a live channel reports a finer
 * resolution, so a channel's resolution is always the finest seen and never coarsens readings.
 */
int store_channel_refine(struct store *store, int64_t id, double resolution, double *applied);
int store_begin(struct store *store);
int store_commit(struct store *store);
int store_rollback(struct store *store);

/** What store_drop_after() removed, or would remove. */
struct store_drop {
	int64_t cycles;      // cycles (with their raw samples)
	int64_t first, last; // their first and last ts, 0 when none
	int64_t rollups;     // hourly rollups of hours that start after the cut
};

/**
 * Repair after a clock glitch: removes every cycle stamped after @after (s since epoch), its
 * raw samples and the rollups of hours starting after it, in one transaction; the hour across
 * the cut is rolled up again at the next maintenance. With @dry_run only counts. Needs write mode.
 */
int store_drop_after(struct store *store, int64_t after, bool dry_run, struct store_drop *out);

/**
 * Writes a consistent copy to @path (online backup API) while others keep writing; the copy is
 * left in rollback-journal mode, one self-contained file. @path may be an existing empty file.
 */
int store_backup(struct store *store, const char *path);

/**
 * Caps the database at @max_pages pages (PRAGMA max_page_count, this connection only): a write
 * past it fails with -ENOSPC as on a full disk. For tests of the disk-full paths.
 */
int store_limit_pages(struct store *store, int64_t max_pages);

/* --- runs: read side ------------------------------------------------------------------------ */

/**
 * A stored run (sql/0004-runs.sql). Strings are borrowed from the scan and valid until the
 * callback returns; NULL where the column is NULL. NAN marks a figure not measured.
 */
struct store_run {
	int64_t id;
	const char *label;
	const char *tags; // a JSON object
	int64_t start_ms; // ms since epoch, UTC
	int64_t end_ms;   // meaningless while running (ended is false)
	bool ended;
	enum run_status status;
	int exit_code;      // -1 = none
	int signal;         // 0 = none
	int64_t pid;        // 0 = none
	const char *origin; // "live" or "import"
	double energy_j;
	const char *energy_method;
	double energy_coverage; // 0..1
	double temp_max_c;
	double rss_max_bytes;
	const char *figures;     // a JSON object, or NULL
	const char *fingerprint; // a JSON object, or NULL
	const char *error;       // why it failed when no exit code says it, or NULL
};

/** Which runs store_runs_scan() visits: all fields optional. */
struct store_run_filter {
	const char *label; // NULL = every label
	int64_t from_ms;   // start_ms >= from_ms when has_from
	int64_t to_ms;     // start_ms < to_ms when has_to
	bool has_from, has_to;
	int64_t limit;    // > 0: only the newest @limit of those (still listed oldest first)
	bool by_label;    // in (label, start_ms, id) order instead, limit ignored (the label index)
	const char *tags; // a JSON object of strings: only runs carrying every one; NULL = any
};

typedef int (*store_run_fn)(void *ctx, const struct store_run *run);
/**
 * Calls @fn for each run matching @filter (NULL = all) in (start_ms, id) order, or (label,
 * start_ms, id) with filter->by_label. A nonzero return from @fn stops the scan and is
 * returned; otherwise 0 or a negative errno.
 */
int store_runs_scan(struct store *store, const struct store_run_filter *filter, store_run_fn fn,
		    void *ctx);
/** The number of runs matching @filter (its limit ignored) into @count; 0 or a negative errno. */
int store_runs_count(struct store *store, const struct store_run_filter *filter, int64_t *count);
/** Calls @fn for run @id; -ENOENT when there is none. */
int store_run_get(struct store *store, int64_t id, store_run_fn fn, void *ctx);

/** One value of a fast sample: the same packing as the minute samples (store_sample). */
struct store_run_sample {
	int64_t ts_ms; // ms since epoch, UTC
	int64_t channel_id;
	int64_t q; // value = q * the channel's resolution
};

typedef int (*store_run_sample_fn)(void *ctx, const struct store_run_sample *sample);
/**
 * Calls @fn for every value of the fast samples with from_ms <= ts_ms < to_ms, ordered by
 * (ts_ms, channel_id). A nonzero return stops the scan and is returned. -EINVAL for a
 * corrupt row.
 */
int store_run_samples_scan(struct store *store, int64_t from_ms, int64_t to_ms,
			   store_run_sample_fn fn, void *ctx);

/** A run's metric (sql/0008-run-metrics.sql). Strings borrowed (from the scan, or the caller's). */
struct store_run_metric {
	int64_t run_id; // read side only
	const char *name;
	double value;     // finite
	const char *unit; // "" = none (given, or recorded for the name)
};

typedef int (*store_run_metric_fn)(void *ctx, const struct store_run_metric *metric);
/**
 * Calls @fn for each metric of the runs @filter selects (NULL = all; its limit ignored), in
 * the runs' (start_ms, id) order, each run's by name. A nonzero return from @fn stops the scan
 * and is returned; otherwise 0 or a negative errno.
 */
int store_run_metrics_scan(struct store *store, const struct store_run_filter *filter,
			   store_run_metric_fn fn, void *ctx);
/** Calls @fn for each metric of run @id, by name: 0 (also when it has none) or -errno. */
int store_run_metrics_get(struct store *store, int64_t id, store_run_metric_fn fn, void *ctx);
/** The unit recorded for metric @name into *unit (newly allocated, "" when none). 0 or -errno. */
int store_run_metric_unit(struct store *store, const char *name, char **unit);

/** A finished run from a job log, for store_run_import(). */
struct store_run_import {
	const char *label;
	int64_t start_ms, end_ms;               // end_ms >= start_ms
	enum run_status status;                 // not RUN_STATUS_RUNNING
	int exit_code;                          // -1 = none
	double energy_j;                        // NAN = unknown
	const char *energy_method;              // NULL when energy_j is unknown
	double temp_max_c, rss_max_bytes;       // NAN = unknown
	const char *figures;                    // a JSON object, or NULL
	const char *import_key;                 // identifies the row across imports (required)
	const char *error;                      // why it failed, or NULL
	const char *tags;                       // a JSON object of strings, NULL = {}
	const struct store_run_metric *metrics; // its metrics (store_run_metrics_put()'s rules)
	size_t n_metrics;
	int *metric_rc; // n_metrics results as store_run_metrics_put() gives them, or NULL
};

/**
 * Stores an imported run (origin 'import') unless a run with the same import_key exists:
 * *added says which (re-import changes nothing). Needs write mode; inside store_begin() it
 * is a savepoint. -EINVAL for a run the schema refuses (end before start, a bad status).
 */
int store_run_import(struct store *store, const struct store_run_import *run, bool *added);

/*
 * runs: write side. The daemon is the only writer of live runs (sql/0004-runs.sql): it opens a
 * run, stores the fast samples taken while runs are active, and closes the run with its
 * figures. Times are ms since epoch, UTC.
 */

/** A run being opened. Strings are borrowed; JSON texts must be valid JSON objects. */
struct store_run_new {
	const char *label;
	const char *tags;           // JSON object, NULL = {}
	int64_t start_ms;           // ms since epoch, UTC
	int64_t pid;                // the process watched, 0 = none
	const char *boot_id;        // this boot's id, or NULL
	const char *start_snapshot; // JSON: the counters read at start, or NULL
	const char *fingerprint;    // JSON object, or NULL
};

/** Opens a run with status 'running'; *id is its id. 0 or -errno (-EINVAL: no label). */
int store_run_begin(struct store *store, const struct store_run_new *run, int64_t *id);

/** How a run ended, for store_run_end(). Strings are borrowed. */
struct store_run_end {
	int64_t end_ms;         // >= the run's start_ms
	enum run_status status; // not RUN_STATUS_RUNNING
	bool has_exit_code, has_signal;
	int exit_code, signal;
	double energy_j;           // NAN = unknown
	const char *energy_method; // NULL = none
	double energy_coverage;    // 0..1, NAN = unknown
	double temp_max_c;         // NAN = unknown
	int64_t rss_max_bytes;     // < 0 = unknown
	const char *figures;       // JSON object, or NULL
	const char *error;         // why it failed (a command that could not start), or NULL
	const struct store_run_metric *metrics; // its metrics (store_run_metrics_put()'s rules)
	size_t n_metrics;
	int *metric_rc; // n_metrics results as store_run_metrics_put() gives them, or NULL
};

/**
 * Closes the running run @id. Returns 0, -ENOENT when there is no run @id, -EALREADY when it
 * has ended already (its row is left as it is), -EINVAL for an unknown status or an end before
 * the start.
 */
int store_run_end(struct store *store, int64_t id, const struct store_run_end *end);

/**
 * Stores @n metrics of run @id (running or ended; names and values checked by the caller),
 * replacing a value of the same name it had. A metric without a unit takes the unit recorded
 * for its name in this database; one whose unit differs from the recorded one is not stored
 * (@rc[i] = -EDOM; else 0): a name keeps one unit. Returns 0 (also when some were refused),
 * -ENOENT when there is no run @id, or a negative errno. Needs write mode.
 */
int store_run_metrics_put(struct store *store, int64_t id, const struct store_run_metric *m,
			  size_t n, int *rc);

/**
 * Where the runs table stands, without reading the database: two marks of one store differ
 * when a run was begun, ended or imported through it in between, or when another connection
 * committed anything, as seen by the last cycle written (PRAGMA data_version, read inside
 * that write). Equal marks mean the runs are as they were, so a caller can skip reading them
 * again; another process's runs show after the next cycle.
 */
struct store_runs_mark {
	int64_t others; // data_version: commits of other connections
	uint64_t own;   // run writes through this store
};
int store_runs_mark(struct store *store, struct store_runs_mark *mark); // 0 or -errno

/** One fast sample: the readings of @n channels at @ts_ms. All borrowed. */
struct store_run_instant {
	int64_t ts_ms; // ms since epoch, UTC
	size_t n;
	const struct channel *channels;
	const struct reading *readings; // err != 0 stores nothing for that channel
};

/**
 * Stores @n fast samples in one transaction (a batch keeps flash writes small), packed like a
 * cycle's values at each channel's stored resolution. Only channels the one-minute series has
 * registered are kept (the fast samples never add or touch channels, so they cannot change
 * what the minute series says); a stamp already stored is left as it is. 0 or -errno.
 */
int store_run_samples_put(struct store *store, const struct store_run_instant *samples, size_t n);

/** A run still open ('running'), as read back after a daemon restart. Strings owned. */
struct store_run_open {
	int64_t id;
	char *label;
	char *tags;           // JSON object
	int64_t start_ms;     // ms since epoch, UTC
	int64_t pid;          // 0 = none
	char *start_snapshot; // or NULL
	char *fingerprint;    // or NULL
};

/** Every running run, by id. Free with store_runs_open_free(). 0 or -errno. */
int store_runs_open_list(struct store *store, struct store_run_open **out, size_t *n);
void store_runs_open_free(struct store_run_open *list, size_t n); // accepts NULL
/** Run @id's start_snapshot in *snapshot (newly allocated, NULL when none). 0, -ENOENT, -errno. */
int store_run_start_snapshot(struct store *store, int64_t id, char **snapshot);

/* --- throttle episodes (throttle.h) ------------------------------------------------------ */

/**
 * Writes @n episodes in one transaction: one whose ->row is 0 is inserted and gets its row id,
 * the others are updated in place (an open one each cycle, a closed one once). 0 or -errno.
 */
int store_throttle_put(struct store *store, struct throttle_episode *const *eps, size_t n);
/**
 * Closes every open episode at the last cycle that saw it (a daemon that stopped or crashed
 * with the episode open). *closed (may be NULL) gets how many. 0 or -errno.
 */
int store_throttle_close_open(struct store *store, int64_t *closed);
/**
 * The episodes overlapping [@from, @to] (s since epoch), oldest first: started by @to and
 * ended (or last seen, while open) at or after @from. *out allocated (free()). 0 or -errno.
 */
int store_throttle_list(struct store *store, int64_t from, int64_t to,
			struct throttle_episode **out, size_t *n);

/* --- campaigns (sql/0010-campaigns.sql, store-campaign.c) --------------------------------- */

/**
 * A campaign's row: written by its runner (thermlog campaign run) beside the daemon's writes.
 * Read back, strings are owned (store_campaign_finish()); NULL where the column is.
 */
struct store_campaign {
	int64_t id;
	char *name;
	char *board;                  // --board NAME, or NULL
	char *suite_path;             // the suite file as the runner was given it
	char *suite_hash;             // sha256 of the suite's canonical JSON
	char *suite;                  // the canonical JSON
	char *suite_text;             // the file as read
	int64_t created_ms, ended_ms; // ms since epoch; ended_ms 0 until done
	enum campaign_status status;
	int64_t runner_pid;          // 0: none
	uint64_t runner_start;       // the runner's start, clock ticks after boot (pidstart.h)
	char *fingerprint;           // the board at the start (JSON), or NULL
	char *baseline;              // the idle baseline (JSON), or NULL
	int64_t idle_run, burst_run; // their runs, 0: none yet
};

/** Inserts @c (its id ignored) and sets *id. 0 or -errno (-EROFS on a reader). */
int store_campaign_create(struct store *store, const struct store_campaign *c, int64_t *id);
/** Rewrites campaign c->id's row from @c. 0, -ENOENT or -errno. */
int store_campaign_update(struct store *store, const struct store_campaign *c);
/** Campaign @id into @out. 0, -ENOENT or -errno. */
int store_campaign_get(struct store *store, int64_t id, struct store_campaign *out);
/** The newest campaign named @name into @out. 0, -ENOENT or -errno. */
int store_campaign_latest(struct store *store, const char *name, struct store_campaign *out);
/** Every campaign, oldest first (store_campaigns_free()). 0 or -errno. */
int store_campaign_list(struct store *store, struct store_campaign **out, size_t *n);
void store_campaign_finish(struct store_campaign *c);             // accepts a zeroed struct
void store_campaigns_free(struct store_campaign *list, size_t n); // accepts NULL

/** A repetition a campaign started: (campaign, seq) is its key. Strings owned when read. */
struct store_campaign_run {
	int64_t campaign, seq;
	char *step;
	unsigned rep; // 1-based, among the step's warmup runs or its repetitions
	bool warmup;
	int64_t run; // its run
	enum campaign_start start;
	enum campaigngate_outcome gate;
	int64_t gate_wait_ms;
	char *gate_detail;     // why the gate held or let it go, or NULL
	int64_t warm_ms;       // a warm start: since the step's previous repetition ended; -1: none
	char *missing_metrics; // the expected metrics it did not report, ' '-separated, or NULL
};

/** Writes repetition (r->campaign, r->seq), replacing what that key held. 0 or -errno. */
int store_campaign_run_put(struct store *store, const struct store_campaign_run *r);
/** Campaign @campaign's repetitions by seq (store_campaign_runs_free()). 0 or -errno. */
int store_campaign_runs(struct store *store, int64_t campaign, struct store_campaign_run **out,
			size_t *n);
void store_campaign_runs_free(struct store_campaign_run *list, size_t n); // accepts NULL

#endif
