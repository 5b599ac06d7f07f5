/*
 * The runs as /metrics shows them: per label, counts by status, a histogram of the ok runs'
 * durations and the energy measured, at most runs.metrics_labels labels (config.h; the rest
 * folded into "other"), so a loop of unique labels cannot grow the series without bound.
 * Only the type: runs.c fills it from the store, live.c holds it, metrics.c writes it.
 */
#ifndef RUNSUMMARY_H
#define RUNSUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "runstatus.h"

/** Labels beyond runs.metrics_labels are summed under RUNSUMMARY_OTHER. */
#define RUNSUMMARY_OTHER "other"

/** Upper bounds (s) of the duration histogram's buckets; +Inf follows. */
#define RUNSUMMARY_BUCKETS 16
#define RUNSUMMARY_BUCKET_BOUNDS_S \
	{ 1, 5, 10, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 21600, 86400 }

struct runsummary_label {
	char *label;                                  // owned by whoever holds the array
	uint64_t by_status[RUN_STATUS_COUNT];         // RUN_STATUS_RUNNING: runs not ended yet
	uint64_t duration_bucket[RUNSUMMARY_BUCKETS]; // ok runs with duration <= bound (not
						      // cumulative)
	uint64_t duration_count;                      // ok runs with a duration
	double duration_sum_s;
	double energy_j_total; // over every ended run with a measured energy
};

#endif
