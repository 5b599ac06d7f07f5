/*
 * The demo (thermlogd --demo): a simulated ROCK 5C, its configuration (src/daemon/demo.yaml,
 * embedded at build time), a database of its own, and a week of history written before the
 * first live cycle.
 */
#ifndef DEMO_H
#define DEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define DEMO_INTERVAL "5s"

struct runsock;
struct sampler;
struct simboard_params;
struct store;
struct throttle_tracker;

#define DEMO_LIVE_RUNS 4 // runs of the simulated workload open at once, at most

struct demo {
	struct sim *sim;
	uint64_t seed;
	int64_t live_from;   // s: runs starting from here on are live (the backfill has the rest)
	int64_t replay_from; // s: the backfill's runs from here to live_from wait for demo_replay()
	struct {
		int64_t id;  // the run's id in the store
		int64_t end; // s, when the simulated job ends
		int exit_code;
	} live[DEMO_LIVE_RUNS];
	size_t n_live;
	char *db_path;   // the database: the one asked for, or a new temporary file
	bool db_is_temp; // removed (with its -wal, -shm and .lock) by demo_finish()
	struct throttle_tracker *tracker; // the backfill's, its episodes open, until taken
	bool board;      // the board answers to work (--board): no history, no timetable runs
};

/**
 * Creates the simulated tree (@seed, at @now s since epoch) and the database: @db, or a new
 * temporary file in $TMPDIR (default /tmp). Refuses the service's database. 0, -EINVAL for a
 * refused path, or -EIO (logged).
 */
int demo_init(struct demo *demo, uint64_t seed, const char *db, int64_t now);
/**
 * demo_init() for a board that answers to work (sim_create_board(), @board copied; NULL is
 * demo_init()): it has no backfilled history and no timetable of runs, only the runs recorded
 * through its socket; the tree heats with the work declared on it (simload.h).
 */
int demo_init_board(struct demo *demo, uint64_t seed, const char *db, int64_t now,
		    const struct simboard_params *board);

/**
 * The demo's configuration through the real parser: the simulated tree, @interval (NULL =
 * DEMO_INTERVAL) and the embedded text. The text is also written beside the simulated tree as
 * thermlog-demo.yaml, so `thermlog -c` answers `stats` and `lifetime` on the demo database.
 * A new heap config (config_finish() and free), or NULL (logged).
 */
struct config *demo_config(const struct demo *demo, const char *interval);

/**
 * A week of one-minute history up to @now through the real sampler and store in one
 * transaction (only what the database lacks), with the workload's runs that ended by @now
 * (store_run_begin/end; energy by trapezoids over the simulated INA226 at 5 s, as a live run
 * measures it), then the hourly maintenance. *last_ts gets the last minute written (unchanged
 * when nothing was). The throttle episodes the history ends in stay open: its tracker waits in
 * demo->tracker for the recorder (demo_take_tracker()), so the live loop goes on with them.
 * 0 or a negative errno.
 */
int demo_backfill(struct demo *demo, struct store *store, struct sampler *sampler,
		  const char *boot_id, int64_t retention_raw_s, int64_t now, int64_t *last_ts);

/** The backfill's throttle tracker (NULL when none), the caller's to destroy from now on. */
struct throttle_tracker *demo_take_tracker(struct demo *demo);

/** Prints the dashboard's @url and the commands that query the demo from another terminal, one
 * a line on stderr. */
void demo_print_commands(const struct demo *demo, bool runs_served, const char *url);

/** A recorder_params.before_read: the simulator writes its tree for @ts. @ctx: the demo. */
void demo_before_read(void *ctx, int64_t ts);

/**
 * Replays the backfill's most recent runs (those of its last DEMO_REPLAY_S) through @rs on the
 * simulated tree at 5 s steps, so they have fast samples, residency and figures like a live
 * run; the older ones have their energy and peak only. Call once, after runsock_create(), with
 * @now_ms and @mono_ms the wall and boot clocks now: a simulated time t is the boot clock
 * @mono_ms - (@now_ms - t), as the live loop's catch-up to now maps it, so the runs' fast
 * samples go on from the one to the other however long the backfill took.
 */
void demo_replay(struct demo *demo, struct runsock *rs, int64_t now_ms, int64_t mono_ms);

/**
 * The live loop's part of the workload, after each cycle at @now_ms (its tree written): starts
 * the runs due through @rs as the daemon starts any run (fast samples, counters, energy), and
 * stops those whose job ended. @rs NULL does nothing.
 */
void demo_runs(struct demo *demo, struct runsock *rs, int64_t now_ms, int64_t mono_ms);

/** Destroys the simulator and removes a temporary database. Accepts a zeroed struct. */
void demo_finish(struct demo *demo);

#endif
