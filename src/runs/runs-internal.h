/*
 * Private to src/runs/: a run's throttling from the stored episodes (runs-throttle.c) and the
 * metrics of runs read once for many (runs-metrics.c).
 */
#ifndef RUNS_INTERNAL_H
#define RUNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "runmetric.h"
#include "runstats.h"
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

/* The metrics of some runs, read once for all of them (runs-metrics.c). */
struct runs_metrics {
	struct runs_metrics_run {
		int64_t id;
		struct runmetric_set set;
	} * runs; // by id
	size_t n, cap;
};

/* The metrics of the runs @filter selects (NULL = all; its limit ignored). 0 or -errno. */
int runs_metrics_read(struct store *store, const struct store_run_filter *filter,
		      struct runs_metrics *m);
/* The metrics of run @id alone. 0 or -errno. */
int runs_metrics_read_run(struct store *store, int64_t id, struct runs_metrics *m);
/* Run @id's metrics (borrowed from @m), or NULL when it has none. */
const struct runmetric_set *runs_metrics_of(const struct runs_metrics *m, int64_t id);
void runs_metrics_finish(struct runs_metrics *m); // accepts a zeroed struct

/* "metrics": {NAME: {"value", "unit"}} of a run ({} when it has none). */
void runs_write_metrics(struct json *j, const struct runmetric_set *set);

/* "p90", "p99.9": the JSON key of percentile @p. */
void runs_percentile_key(double p, char key[40]);

/* "metrics": [{name, unit, n, mean, p50, p95, min, max, pP...}] of a label's ok runs. */
void runs_write_metric_summaries(struct json *j, const struct runstats_label *l,
				 const double *percentiles, size_t n_percentiles);

#endif
