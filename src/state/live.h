/*
 * The last cycle in memory, shared between the sampling loop (writer) and the HTTP thread
 * (readers), so /metrics and /api/v1/latest need no sysfs or database work per request.
 */
#ifndef LIVE_H
#define LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capstate.h"
#include "channel.h"
#include "cycle.h"
#include "runsummary.h"
#include "throttle.h"

#define LIVE_ERROR_CHANNELS_LEN 256

/** The daemon's own health, published with each cycle. */
struct live_health {
	int64_t started; // s since epoch
	int64_t interval_ms;
	int64_t cycles_total;  // cycles stored since start
	int64_t cycles_failed; // cycles never stored: dropped from a full queue, or refused (a
			       // stamp the database has); those waiting are queued_cycles
	// slots of the grid no cycle was taken at because the loop woke an interval or more late
	// (the process did not run)
	int64_t cycles_missed;
	int64_t read_errors_total;
	int64_t errors_last_hour;
	// The keys of the channels that failed in the last hour, ", "-separated ("" if none),
	// ending in ", ..." when they do not fit.
	char error_channels[LIVE_ERROR_CHANNELS_LEN];
	int64_t queued_cycles;       // waiting for disk space
	double cycle_seconds;        // duration of the last cycle (read + store)
	int64_t bytes_written_total; // database bytes written since start
	enum clock_state clock;
	int64_t database_reopens;     // times the database file vanished and was reopened
	int64_t database_reopened_at; // s since epoch of the last reopen, 0 = never
};

/** A consistent copy of the last cycle, owned by the caller of live_snapshot(). */
struct live_snapshot {
	int64_t ts; // 0 before the first cycle
	size_t n;
	struct channel *channels;
	struct reading *readings;
	struct live_health health;
	size_t n_capacitors;
	struct capstate *capacitors;
	size_t n_run_labels;
	struct runsummary_label *run_labels; // runs per label (refreshed once per cycle)
	size_t n_throttle;
	struct throttle_domain_state *throttle; // each frequency domain's throttle state
};

struct live *live_create(void);
void live_destroy(struct live *live); // accepts NULL

/** Copies a stored cycle and the health counters in (mutex-protected). */
void live_publish(struct live *live, const struct cycle *cycle, const struct live_health *health);
/** Copies the capacitor states in. */
void live_publish_capacitors(struct live *live, const struct capstate *caps, size_t n);

/** Copies the runs summary in (@labels deep-copied; the caller keeps its own). */
void live_publish_runs(struct live *live, const struct runsummary_label *labels, size_t n);

/** Copies the frequency domains' throttle states in. */
void live_publish_throttle(struct live *live, const struct throttle_domain_state *domains,
			   size_t n);

/** Deep copy of the current state; free with live_snapshot_finish(). */
void live_snapshot(struct live *live, struct live_snapshot *out);
void live_snapshot_finish(struct live_snapshot *snap); // accepts a zeroed struct

#endif
