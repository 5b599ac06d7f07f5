/* Private to src/runs/: a run's throttling from the stored episodes (runs-throttle.c). */
#ifndef RUNS_INTERNAL_H
#define RUNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "store.h"
#include "throttle-report.h"

/* The stored throttle episodes that may overlap some runs, read once for all of them. */
struct runs_episodes {
	struct throttle_episode *list;
	size_t n;
	bool readable; // false: the store keeps none (a database from before episodes, or no cycle)
	int64_t horizon_ms; // runs starting before it have no known episodes: before the first
			    // cycle (no daemon watched), or pruned by retention
};

/* The episodes that may overlap runs starting in [@from_ms, @to_ms), read once for them all. */
void runs_episodes_read(struct store *store, int64_t from_ms, int64_t to_ms,
			struct runs_episodes *e);
void runs_episodes_finish(struct runs_episodes *e);

/*
 * @run's throttling (throttle_report_window() over its interval, the computation of `thermlog
 * throttle`) into @r, and its throttled share (its most throttled domain's share) in *share.
 * False, with nothing in @r, when it is not known: a running run, a store without episodes or
 * cycles, a run starting before the first cycle stored (no daemon watched it) or before the
 * episodes kept.
 */
bool runs_run_throttle(const struct runs_episodes *e, const struct store_run *run,
		       struct throttle_report *r, double *share);

/* "throttle": {"share", "domains": [...]}, the run's throttled domains; null when not known. */
void runs_write_throttle(struct json *j, const struct runs_episodes *e,
			 const struct store_run *run);

#endif
