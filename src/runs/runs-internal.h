/*
 * Private to src/runs/: a run's throttling from the stored episodes (runs-throttle.c), the
 * metrics of runs read once for many (runs-metrics.c), and the runs of a filter read once as
 * the per-label statistics (runs-stats.c) and the comparison of two boards (runs-compare.c)
 * take them.
 */
#ifndef RUNS_INTERNAL_H
#define RUNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "jsonread.h"
#include "runmetric.h"
#include "runs.h"
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
 * A run loaded a CPU cluster or the NPU when its mean busy share there during the run
 * (figures.load) was at least this many percent: the domains whose throttling it felt.
 */
#define RUNS_LOADED_PCT 25.0

/* The domains a run loaded: its busy CPU clusters and NPU (figures.load), for its shares. */
#define RUNS_LOADED_MAX 16
struct runs_loaded {
	bool known; // the run's figures hold its load (else no domain is known to be loaded)
	size_t n;
	char domains[RUNS_LOADED_MAX][THROTTLE_NAME_LEN]; // "cpufreq/policy4", ..., "npu"
};

/*
 * The domains @figures (a run's figures JSON, or NULL) say the run loaded: each CPU cluster
 * (cpufreq policy) and the NPU (any core) whose mean busy share during the run was at least
 * RUNS_LOADED_PCT.
 */
void runs_loaded_of(const char *figures, struct runs_loaded *out);

/* A run's throttled shares of its time: the board's and that of the domains it loaded. */
struct runs_shares {
	double board;  // its most throttled domain's share; NAN when the throttling is not known
	double loaded; // the most throttled of the domains it loaded (0 when none of them was);
		       // NAN when the throttling or the loads are not known
	struct runs_loaded loaded_domains;
};

/*
 * @run's throttling (throttle_report_window() over its interval, the computation of `thermlog
 * throttle`) into @r, and its shares. False, with nothing in @r (shares NAN), when it is not
 * known: a running run, a store without episodes or cycles, a run starting before the first
 * cycle stored (no daemon watched it) or before the episodes kept.
 */
bool runs_run_throttle(const struct runs_episodes *e, const struct store_run *run,
		       struct throttle_report *r, struct runs_shares *shares);
/* A run's figures JSON parsed once for the readers below (NULL for none or not JSON). */
struct jsonread_node *runs_figures_parse(const char *figures);
/* runs_run_throttle() over @run's figures parsed already (@figures, may be NULL). */
bool runs_run_throttle_parsed(const struct runs_episodes *e, const struct store_run *run,
			      const struct jsonread_node *figures, struct throttle_report *r,
			      struct runs_shares *shares);

/*
 * "throttle": {"share" (the board's), "loaded_share", "loaded_domains", "domains": [...]}, the
 * run's throttled domains; null when not known.
 */
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

/* The runs a filter selects, read once (runs-stats.c): each as runstats takes it (its metrics
 * borrowed from @metrics), with its fingerprint and tags. */
struct runs_set {
	struct runstats_run *runs;
	size_t n, cap;
	char **fingerprints; // 2 a run: its fingerprint (NULL when none), its tags ("{}" when none)
	size_t cap_text;
	const struct runs_episodes *episodes; // while reading: for each run's throttled share
	struct runs_metrics metrics;          // of every run in the set
	const char *by;                       // the tag the runs are grouped by, or NULL
};

/* The runs @opt selects (its filter, its by tag) into @set, in start order. 0 or -errno; free
 * @set with runs_set_finish() either way. */
int runs_set_read(struct store *store, const struct runs_stats_options *opt, struct runs_set *set);
void runs_set_finish(struct runs_set *set); // accepts a zeroed struct

#define RUNS_STATS_METHOD                                                                          \
	"exact type-7 percentiles (numpy linear) and mean over the ok runs that have the figure, " \
	"at 1 ms, 1 mJ, 0.001 C and 1 byte; metrics type 7 on their values as given"

/* One label's object of runs stats --json (@board and @opt may be NULL: no "board", no extra
 * percentiles), as runs compare writes each side. */
void runs_write_label(struct json *j, const struct runstats_label *l,
		      const struct testfig_result *board, const struct runs_stats_options *opt);

#endif
