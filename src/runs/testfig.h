/*
 * Per-test board figures: what the board did while a test's runs were under way. For each label
 * (and tag group) the time its ok runs were under way, from the stored minute samples in their
 * windows weighted by time exactly as `thermlog stats --weight time` weighs a window: per
 * thermal zone the mean, p95 and max; per CPU cluster and devfreq device the mean clock, the
 * highest reached and the residency; per CPU cluster and NPU core the mean and p95 load; the
 * mean power where a power channel exists; and the ok runs' throttling, the board's and that of
 * the domains they loaded. One computation for `runs stats` (text and JSON), the API, the
 * report and a campaign's comparison; a caller may rely on this header.
 */
#ifndef TESTFIG_H
#define TESTFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "store.h"

/** A channel's time-weighted figures over the windows, in its unit. */
struct testfig_figure {
	char *key;   // the channel's key ("thermal/bigcore0-thermal"), a cluster's name for loads
	char *label; // the channel's label, a cluster's CPUs ("4-5"), or NULL
	int64_t seconds;  // the time weighed (the first sample of each window weighs none)
	size_t samples;   // samples in the windows
	double mean, p95; // time-weighted: mean, and numpy's weighted inverted_cdf; NAN without
			  // time
	double max;       // the highest sample in the windows (the first ones too)
};

/** One clock state's share of the time weighed. */
struct testfig_state {
	double hz;
	double share; // 0..1
};

/** A CPU cluster's or devfreq device's clock during the runs. */
struct testfig_clock {
	struct testfig_figure f;      // mean, p95 and max (the highest reached) in Hz
	struct testfig_state *states; // by share, the largest first
	size_t n_states;
};

/** What the board did during one label's (one group's) ok runs. */
struct testfig_label {
	char *label;
	char *group;                  // the --by tag's value, NULL (none, or not split)
	size_t runs;                  // ok runs
	size_t runs_with_samples;     // of those, runs whose window held a minute sample
	double window_s;              // the time they were under way (overlaps counted once)
	struct testfig_figure *zones; // thermal zones (source thermal), by key
	size_t n_zones;
	struct testfig_clock *clocks; // cpufreq policies and devfreq devices, by key
	size_t n_clocks;
	struct testfig_figure *loads; // CPU clusters (key "cluster/policyN"), then NPU cores
	size_t n_loads;
	struct testfig_figure *power; // power channels, in W
	size_t n_power;
	// Throttling over the ok runs whose throttling is known, their time-weighted share:
	size_t throttle_runs;
	double board_share;    // any domain capped: the board's
	double loaded_share;   // the domains each run loaded (the board's where its loads are not
			       // known); NAN without throttle_runs
	char **loaded_domains; // the domains any of the runs loaded
	size_t n_loaded_domains;
};

struct testfig_result {
	struct testfig_label *labels; // by label, then group (NULL last), as runstats sorts them
	size_t n;
};

/** Which runs: the ok runs the filter selects, split per label (and per tag with @by). */
struct testfig_options {
	struct store_run_filter filter; // label, window, tags (its limit and order are ignored)
	const char *by;                 // a tag key, or NULL
};

/**
 * Computes the figures of every label (group) of the ok runs @opt selects into @out. A window
 * is a run's [start, end] in whole seconds (the minute samples stamped within it); the runs of
 * one label that overlap are merged; each window weighs its samples as `thermlog stats
 * --weight time --from START --to END+1` does, so each figure equals a recomputation from
 * `thermlog export` over the windows. Unsynced cycles are left out as there. Returns 0 or a
 * negative errno; free @out with testfig_result_finish() either way.
 */
int testfig_compute(struct store *store, const struct testfig_options *opt,
		    struct testfig_result *out);
void testfig_result_finish(struct testfig_result *r); // accepts a zeroed struct

/** Label @label's (group @group's, NULL: none) figures in @r, or NULL. */
const struct testfig_label *testfig_result_label(const struct testfig_result *r, const char *label,
						 const char *group);

/** Writes @l's figures as the JSON object "board" is in runs stats (docs/RUNS.md). */
void testfig_write_json(const struct testfig_label *l, struct json *j);

#endif
