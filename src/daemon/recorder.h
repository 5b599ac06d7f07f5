/*
 * The recorder: the work of one sampling cycle, from the stamp to the store and the live
 * snapshot. It owns the daemon's write connection, the queue of cycles the database did not
 * accept yet, the timeline anchor, the capacitors' running damage and the health counters.
 * Time is always a parameter: main() passes the clocks, unit tests a fake one.
 */
#ifndef RECORDER_H
#define RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "config.h"
#include "live.h"
#include "steptime.h"

/*
 * Unwritten cycles kept while the disk refuses writes: about a day at one minute with 25
 * channels, far less than the 8 MiB RSS budget. The oldest are dropped beyond it.
 */
#define RECORDER_QUEUE_MAX_BYTES (1024 * 1024)

struct recorder;
struct sampler;
struct store;
struct throttle_tracker;

struct recorder_params {
	const char *db_path; // opened for writing; copied
	const char *boot_id; // this boot's id, or NULL / "" when unknown; copied
	/* Where clock_probe() looks; copied. NULL = the running system (clock_source_init()). */
	const struct clock_source *clock;
	size_t queue_max_bytes; // 0 = RECORDER_QUEUE_MAX_BYTES
	int checkpoint_pages;   // WAL pages from which a checkpoint is due; 0 = the store's 1000
	/* The boot clock in ms, read again at the end of a cycle for its duration; NULL = the
	 * real CLOCK_BOOTTIME. */
	int64_t (*mono_ms)(void);
	/* Called with the cycle's stamp just before the sampler reads (the demo's simulator
	 * writes its tree for that instant), or NULL. */
	void (*before_read)(void *ctx, int64_t ts);
	void *ctx;
};

/**
 * Opens the database for writing (refusing another program's file, moving a corrupt one aside)
 * and loads the timeline anchor at @now_wall_s (s since epoch) and @now_mono_ms (boot clock).
 * @cfg is borrowed and must outlive the recorder (or be replaced by recorder_set_config()).
 * Returns NULL, the reason logged, when the database cannot be opened or read.
 */
struct recorder *recorder_create(const struct config *cfg, const struct recorder_params *params,
				 int64_t now_wall_s, int64_t now_mono_ms);

/**
 * Starts recording through @sampler into the store, publishing each cycle to @live (both
 * borrowed): restores the capacitors' running damage. @started (s since epoch) is reported in
 * the health figures.
 */
void recorder_start(struct recorder *r, struct sampler *sampler, struct live *live,
		    int64_t started);

/** The write connection (NULL while the database cannot be opened); borrowed. */
struct store *recorder_store(struct recorder *r);

/** The anchor: the last cycle stamped plausibly (s since epoch), 0 = none. */
int64_t recorder_last_ts(const struct recorder *r);
/** Moves the anchor to @ts after cycles were written around the recorder (the demo's history). */
void recorder_set_last_ts(struct recorder *r, int64_t ts);
/**
 * Goes on with @t, the throttle tracker that wrote those cycles' episodes (the demo's history),
 * instead of its own: an episode open at its last cycle goes on, the same row. Takes @t (NULL:
 * nothing changes); the domains' throttled times count from here (throttle_tracker_zero_totals).
 */
void recorder_adopt_throttle(struct recorder *r, struct throttle_tracker *t);
/** Counts @n slots the loop woke too late for (health.cycles_missed, published with the next). */
void recorder_count_missed(struct recorder *r, int64_t n);

/** What one recorder_tick() did, for the caller's status line and readiness. */
struct recorder_result {
	bool skipped;  // the slot was skipped (a small step back): nothing read or stored
	bool stored;   // this cycle was written to the database
	bool reopened; // the database file was deleted or replaced and reopened: readers reopen
	int64_t ts;    // the cycle's stamp, s since epoch
	size_t n;      // channels read
	size_t queued; // cycles waiting for the database
	enum clock_state clock;
	struct steptime longest; // the cycle's longest stage, for the loop's missed-cycle notice
};

/**
 * One cycle for the wall-clock slot @slot_ms (ms since epoch), started at @mono_ms on the boot
 * clock: stamp, clock state, read, store (or queue, retried with backoff), capacitors, hourly
 * maintenance, live snapshot and health. Never fails: problems are logged and counted.
 */
void recorder_tick(struct recorder *r, int64_t slot_ms, int64_t mono_ms,
		   struct recorder_result *out);

/**
 * Publishes the runs per label to the live snapshot if the runs, the store or the label cap
 * changed since the last time; recorder_tick() calls it, and so may whoever just wrote a run.
 */
void recorder_publish_runs(struct recorder *r);

/** Replaces the configuration (a reload): persists and rebuilds the capacitors' state. */
void recorder_set_config(struct recorder *r, const struct config *cfg);

/** Persists the capacitors and the anchor, reports unwritten cycles, closes. Accepts NULL. */
void recorder_destroy(struct recorder *r);

#endif
