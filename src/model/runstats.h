/*
 * Statistics over runs (jobs marked on the board): counts by status and exact type-7
 * percentiles per label, and the comparison of one workload on two boards. Pure: no I/O, no
 * clock, no globals; the bootstrap's generator is seeded by the caller.
 */
#ifndef RUNSTATS_H
#define RUNSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runmetric.h"
#include "runstatus.h"

/** One run as the statistics see it; NAN marks a figure that was not measured. */
struct runstats_run {
	const char *label; // borrowed
	enum run_status status;
	double duration_s;
	double energy_j;
	double energy_coverage; // share of the run's span the energy covers; NAN = unknown (whole)
	double temp_max_c;
	double rss_max_bytes;
	double swap_max_bytes;  // the most swap in use during the run (figures.memory); NAN =
				// unknown
	double throttled_share; // its most throttled domain's share of the run (0..1, 0 = not
				// throttled); NAN = unknown (running, or its episodes pruned)
	double loaded_share;    // the share of the domains it loaded (0..1); NAN = unknown (its
				// throttling is not known)
	bool loaded_is_board;   // its loads were not measured: loaded_share is the board's share
	const struct runmetric_set *metrics; // its own numbers (borrowed), or NULL
	const char *group; // a label's runs are split by it (borrowed; NULL: the runs without one)
};

/** Order statistics of one figure over a label's completed (ok) runs that have it. */
struct runstats_summary {
	size_t n; // runs with the figure; 0 = every value below is NAN
	double p50, p95, max, mean;
	double *percentiles; // the requested ones, in request order; NULL when none requested
};

/* The quantum of each figure, as decimal places (1 ms, 1 mJ, 0.001 °C, 1 byte, a share to 1e-6):
 * statistics are exact at it, and the JSON writes each to it (runs_stats_write_json()). */
#define RUNSTATS_PLACES_DURATION 3
#define RUNSTATS_PLACES_ENERGY   3
#define RUNSTATS_PLACES_TEMP     3
#define RUNSTATS_PLACES_BYTES    0
#define RUNSTATS_PLACES_SHARE    6

/** One metric over a label's ok runs that carry it: exact type 7 on the values as given. */
struct runstats_metric {
	char *name;
	char *unit;                // "" when none was recorded
	size_t n;                  // ok runs with the metric (never 0)
	double mean;               // compensated sum over n
	double p50, p95, min, max; // type 7; min and max are p0 and p100
	double *percentiles;       // the requested ones, in request order; NULL when none
};

struct runstats_label {
	char *label;
	char *group;  // the runs' group within the label (a tag's value), NULL: none
	size_t count; // runs of every status
	size_t by_status[RUN_STATUS_COUNT]; // indexed by enum run_status
	size_t over;                        // ok runs whose duration exceeds over_s
	struct runstats_summary duration_s, energy_j, temp_max_c, rss_max_bytes, swap_max_bytes;
	// Which runs energy_j covers: ok runs in it whose energy covers part of their span (a
	// daemon restart mid-run), ok runs left out (no energy), runs of other statuses with an
	// energy (never in it).
	size_t energy_partial, energy_missing, energy_not_ok;
	// Throttling of the ok runs: how many have a known throttled share, how many of those were
	// throttled at all (a share above 0), and the shares of those throttled ones.
	size_t throttle_known, throttled;
	struct runstats_summary throttled_share;
	// The same for the share of the domains each ok run loaded (its busy CPU clusters and NPU),
	// the board's share standing in for the runs whose loads were not measured (how many).
	size_t loaded_known, loaded_throttled, loaded_from_board;
	struct runstats_summary loaded_share;
	struct runstats_metric *metrics; // every metric an ok run of the label carries, by name
	size_t n_metrics;
};

struct runstats_options {
	double over_s;             // threshold for `over`; NAN = no threshold (over = 0)
	const double *percentiles; // extra percentiles, each 0..100; borrowed
	size_t n_percentiles;
};

struct runstats_result {
	struct runstats_label *labels; // sorted by label (byte order), then group (NULL last)
	size_t n;
};

/**
 * Groups @n runs by label and summarises each. Percentiles are exact type 7 (numpy's default
 * "linear": h = (n - 1) p / 100, interpolated between closest ranks), computed by stats.c on
 * values quantized to 1 ms, 1 mJ, 0.001 °C, 1 byte and a share of 1e-6, so they are exact at
 * those steps (throttled_share summarises the throttled ok runs only); the
 * mean comes from the exact integer sum. Metrics are summarised per name over the ok runs
 * that carry them, type 7 on the values as given (they have no resolution), the mean by a
 * compensated sum. Only ok runs enter the summaries. Returns 0, or
 * -EINVAL for a requested percentile outside 0..100 or a NULL label. @out is allocated: free
 * it with runstats_result_finish().
 */
int runstats_compute(const struct runstats_run *runs, size_t n, const struct runstats_options *opt,
		     struct runstats_result *out);
void runstats_result_finish(struct runstats_result *result); // accepts a zeroed struct
/** The summary of label @label in @r (borrowed from it), or NULL when @r has none. */
const struct runstats_label *runstats_result_label(const struct runstats_result *r,
						   const char *label);

/** The metric named @name of @l (borrowed from it), or NULL when no ok run carries it. */
const struct runstats_metric *runstats_label_metric(const struct runstats_label *l,
						    const char *name);

/** The type-7 percentile @p (0..100) of @n sorted values; NAN when n is 0. */
double runstats_quantile_sorted(const double *sorted, size_t n, double p);

/** The default bootstrap: resamples and seed, stated with every comparison. */
#define RUNSTATS_BOOTSTRAP_RESAMPLES 2000
#define RUNSTATS_BOOTSTRAP_SEED      UINT64_C(20261201)

/**
 * The same workload on two boards: B's median over A's, with a confidence interval.
 *
 * Method: percentile bootstrap. Each of @resamples rounds draws n_a values from @a and n_b
 * from @b with replacement (splitmix64 seeded with @seed, so a comparison repeats exactly),
 * takes the type-7 median of each and their ratio; the interval is the type-7
 * (100 - level)/2 and (100 + level)/2 percentiles of those ratios. It assumes nothing about
 * the shape of the durations, but with very few runs (under about 10 a side) it is too
 * narrow: n_a and n_b are reported so the reader can judge.
 */
struct runstats_compare {
	size_t n_a, n_b;
	double median_a, median_b;
	double ratio; // median_b / median_a
	double ci_low, ci_high;
	double level; // confidence level in percent, e.g. 95
	unsigned resamples;
	uint64_t seed;
};

/**
 * Compares @a (n_a values) with @b (n_b values), both positive (durations, energies); NAN
 * values are skipped. Returns 0, -ENODATA when a side has no value, or -EINVAL for a level
 * outside (0, 100), no resamples, or a value <= 0 (a ratio of medians needs positive data).
 */
int runstats_compare(const double *a, size_t n_a, const double *b, size_t n_b, double level,
		     unsigned resamples, uint64_t seed, struct runstats_compare *out);

#endif
