/*
 * Answers about runs (the jobs marked on the board): the list, one run with its figures and
 * fast samples, per-label statistics (runstats.c), the same workload on two boards, and the
 * import of job logs (jobcsv.c) joined with the minute samples already stored. The CLI and the
 * HTTP API write the same JSON through these functions.
 */
#ifndef RUNS_H
#define RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "config.h"
#include "runload.h"
#include "runstats.h"
#include "runsummary.h"
#include "store.h"
#include "testfig.h"
#include "timefmt.h"
#include "verdict.h"

/**
 * Writes {"runs": [...]} for the runs @filter selects (NULL = all), in start order: id, label,
 * tags, start, end (ISO 8601 UTC, milliseconds when not whole seconds; null while running),
 * duration_s, status, exit_code, signal, energy_j, energy_method, temp_max_c, rss_max_bytes,
 * origin; null where unknown. With a limit in @filter that fewer runs fit than match, the newest
 * @filter->limit and "truncated": {"limit", "matched"} after the list. 0 or a negative errno.
 */
int runs_list_json(struct store *store, const struct store_run_filter *filter, bool pretty,
		   struct buf *out);

/**
 * Writes the runs @filter selects (NULL = all; its limit kept) as CSV (RFC 4180, csv.c), a row a
 * run in start order: id, label, start, end, status, exit_code, signal, energy_j, energy_method,
 * temp_max_c, rss_max_bytes, error, then a tag:KEY column per tag and a metric:NAME (UNIT)
 * column per metric any of them carries: the columns `thermlog runs import` reads back.
 * 0 or a negative errno.
 */
int runs_list_csv(struct store *store, const struct store_run_filter *filter, struct buf *out);

/**
 * Writes run @id's object alone, one line, as runs_list_json() and runs_show_json() begin it
 * (the one writer of a run's object): the reply to a stop. -ENOENT for an unknown id.
 */
int runs_get_json(struct store *store, int64_t id, struct buf *out);

/** How many fast samples runs_show_json() gives on each side of the peak. */
#define RUNS_SHOW_AROUND 6

/**
 * Writes {"run": {...}} for run @id: the list's fields, energy_coverage, figures and
 * fingerprint (the stored JSON objects, or null), the count of fast samples in the run, and
 * "peak": the highest fast sample of a channel of @cfg's runs.peak_channels (channel, value,
 * time) with the RUNS_SHOW_AROUND samples before and after it, every channel's value in each;
 * null when the run has no fast sample of such a channel. -ENOENT for an unknown id.
 */
int runs_show_json(struct store *store, const struct config *cfg, int64_t id, bool pretty,
		   struct buf *out);

/**
 * Writes run @id's fast samples for a chart: {"id", "fast_samples" (how many the run has),
 * "stride" (every stride-th is given, from the first, so at most @max_points), "samples":
 * [{"time", "values": {channel key: value}}]}. -ENOENT for an unknown id.
 */
int runs_samples_json(struct store *store, int64_t id, unsigned max_points, bool pretty,
		      struct buf *out);

/** What runs_stats() summarises. */
struct runs_stats_options {
	struct store_run_filter filter; // label, from, to, tags
	const char *by; // a tag key: each label's runs split by its value (NULL: not split)
	double over_s;  // NAN = no threshold
	const double *percentiles; // extra ones, each 0..100; borrowed
	size_t n_percentiles;
};

/**
 * Per-label statistics of the runs the options select (runstats_compute(): exact type 7 over
 * ok runs). @out is allocated; free it with runstats_result_finish(). 0 or a negative errno
 * (-EINVAL for a percentile outside 0..100).
 */
int runs_stats(struct store *store, const struct runs_stats_options *opt,
	       struct runstats_result *out);

/**
 * The per-test board figures (testfig.h) of the runs the options select, label by label (and
 * group by group with opt->by) as runs_stats() gives their statistics. Free @out with
 * testfig_result_finish(). 0 or a negative errno.
 */
int runs_board(struct store *store, const struct runs_stats_options *opt,
	       struct testfig_result *out);

/**
 * Writes {"method", "over_s", "labels": [{label, count, ok, failed, signaled, timeout, lost,
 * running, over, duration_s, energy_j, temp_max_c, rss_max_bytes, swap_max_bytes, throttle,
 * metrics, board}]}: each figure an object {n, p50, p95, max, mean, and "pP" per requested
 * percentile}, or null when no ok run has it; "board" the label's per-test figures from @board
 * (testfig_write_json(); null without ok runs).
 */
void runs_stats_write_json(const struct runstats_result *r, const struct testfig_result *board,
			   const struct runs_stats_options *opt, bool pretty, struct buf *out);

/**
 * The one-line summary of a label: "649 attempts, 404 completed, 245 failed; completed runs
 * p50 1627.29 s, p95 1799.59 s, max 1911.67 s; 20 runs (4.95 %) over 30 minutes" (the part
 * after the last ';' only when @over_s is a number). No newline.
 */
void runs_stats_summary_line(const struct runstats_label *l, double over_s, struct buf *out);

/** One fingerprint difference between the two boards. */
struct runs_difference {
	char *key;          // "kernel", "governor", ..., or "tags"
	char *here, *other; // the JSON values (or "none")
};

/** Under this many ok runs a side, a comparison's bootstrap interval is too narrow to trust. */
#define RUNS_COMPARE_FEW 10

/** One metric of a label on both boards: B's median over A's, as for the duration. */
struct runs_compare_metric {
	char *name;
	char *unit_a, *unit_b;         // "" when none recorded (or the side has no such metric)
	size_t n_a, n_b;               // ok runs carrying it on each side
	bool has_ratio;                // computed: both sides have it, in one unit, all positive
	struct runstats_compare ratio; // B over A, with its bootstrap interval
	const char *note;              // why there is no ratio (static), or NULL
};

/** The same workload (one label) on this board (A) and another (B). */
struct runs_compare {
	char *label;                               // this board's
	char *other_label;                         // the other board's (the same unless mapped)
	struct runstats_result result_a, result_b; // owned: the statistics of each side
	const struct runstats_label *a, *b;        // the label in each (never NULL after success)
	bool has_duration, has_energy;             // whether each ratio was computed
	struct runstats_compare duration;          // B over A, bootstrap CI of the ratio of medians
	struct runstats_compare energy;            // likewise, when both sides have energies
	struct runs_difference *diffs;             // fingerprint and tag differences
	size_t n_diffs;
	char **warnings; // the throttle exposure of the two sides, as sentences
	size_t n_warnings;
	bool exclude_throttled;              // the throttled ok runs were left out
	size_t excluded_a, excluded_b;       // how many, on each side
	struct runs_compare_metric *metrics; // every metric of either side's ok runs, by name
	size_t n_metrics;
	struct testfig_result board_a,
		board_b; // each side's per-test board figures (testfig.h),
			 // runs_compare()'s (empty from runs_compare_sides())
	const struct testfig_label *fig_a, *fig_b; // the label's in each, or NULL
	struct verdict verdict;                    // comparable or not, and why (verdict.h)
};

/** Under this ratio of the median throttled shares (and apart by RUNS_COMPARE_SHARE_APART),
 * the two sides' throttle exposure differs. */
#define RUNS_COMPARE_SHARE_RATIO 2.0
#define RUNS_COMPARE_SHARE_APART 0.05

/** What runs_compare() compares: one label on each board, each side's runs as its filter says. */
struct runs_compare_options {
	const char *label;                   // this board's label
	const char *other_label;             // the other board's (NULL: the same)
	struct store_run_filter here, other; // each side's window and tags (label, limit
					     // and order are set by runs_compare())
	bool exclude_throttled;
	// The boards, for the verdict (NULL: as each database declares or recorded its board, else
	// "this board" and "the other board")
	const char *name_here, *name_other;
	// Clocks paired by hand for the verdict (--map-channel A=B), before the pairing by role.
	const struct role_pair *map_channel;
	size_t n_map_channel;
};

/**
 * Compares @opt->label in @here with @opt->other_label in @other (both borrowed; open
 * @other read-only), each side's runs as its filter selects them. The
 * fingerprints and tags compared are those of each side's latest ok run. The throttle exposure
 * of the ok runs (their throttled shares, before any exclusion) gives a warning when one side
 * was throttled in some runs and the other in none, when the median throttled shares of the
 * throttled runs differ by more than a factor RUNS_COMPARE_SHARE_RATIO and by at least
 * RUNS_COMPARE_SHARE_APART, or when one side's throttling is not known. With
 * @exclude_throttled every run with a throttled share above 0 is left out of both sides before
 * the statistics. Each metric of either side's ok runs is compared as the duration is (the
 * ratio of medians with its bootstrap interval) when both sides carry it in one unit and every
 * value is positive; else its note says why not. Each side's per-test board figures and the
 * verdict (verdict.h: ambient over the side's window, clocks, governors, the executable,
 * throttle exposure) come with it. Returns 0, -ENODATA when a side has no ok run of
 * the label (left), or a negative errno. Free @out with runs_compare_finish().
 */
int runs_compare(struct store *here, struct store *other, const struct runs_compare_options *opt,
		 struct runs_compare *out);
void runs_compare_finish(struct runs_compare *c); // accepts a zeroed struct

/**
 * One board's side of comparisons, read once for any number of its labels (a report compares
 * every label): the runs its filter selects (its label NULL: every label), their per-test
 * figures and the verdict's facts of the board (verdict_board_read() over the filter's window).
 */
struct runs_side;
/** Reads side *@out of @store (@filter and @name copied). 0 or a negative errno; destroy *@out
 * either way. */
int runs_side_read(struct store *store, const struct store_run_filter *filter, const char *name,
		   struct runs_side **out);
void runs_side_destroy(struct runs_side *s); // accepts NULL
/** The per-test figures of every label of @s (borrowed). */
const struct testfig_result *runs_side_figures(const struct runs_side *s);
/** The verdict's facts of @s's board (borrowed): clocks' hardware maxima, governors, each
 * label's executable. */
const struct verdict_board *runs_side_facts(const struct runs_side *s);
/** runs_stats() of @s's runs (its filter's, not split by a tag), without reading them again.
 * Free @out with runstats_result_finish(). 0 or a negative errno. */
int runs_side_stats(const struct runs_side *s, double over_s, const double *percentiles,
		    size_t n_percentiles, struct runstats_result *out);
/**
 * runs_compare() of @label on @here and @other_label (NULL: the same) on @other, from the sides
 * read: the same answer, without reading a store; @pairs as runs_compare_options.map_channel.
 * @out's fig_a and fig_b are the sides' (borrowed: the sides outlive @out).
 */
int runs_compare_sides(const struct runs_side *here, const struct runs_side *other,
		       const char *label, const char *other_label, bool exclude_throttled,
		       const struct role_pair *pairs, size_t n_pairs, struct runs_compare *out);
/** Writes the comparison as JSON; @other_name names the other database. */
void runs_compare_write_json(const struct runs_compare *c, const char *other_name, bool pretty,
			     struct buf *out);

/** How runs_import() reads a log. */
/**
 * The CPUs of cpufreq policy channel @ch as its meta keeps them (affected_cpus, as the cpufreq
 * source read them), set in @has (cleared first): false when @ch is no cpufreq policy or names
 * no CPU below RUNLOAD_CPUS_MAX.
 */
bool runs_policy_cpus(const struct channel *ch, bool has[RUNLOAD_CPUS_MAX]);

struct runs_import_options {
	const char *default_label; // for rows without a label
	int64_t unix_per_s; // unix stamps count 1/unix_per_s s: 1 (s), 1000 (ms), 1000000 (us)
	bool skip_bad;      // import the good rows when some are bad
	const struct config *cfg; // runs.peak_channels: the channels a peak may come from
};

/** What runs_import() did. */
struct runs_import_result {
	size_t rows;              // good rows in the log
	size_t added;             // runs stored now
	size_t unchanged;         // runs an earlier import stored already
	size_t bad;               // rows refused (each named in the errors)
	size_t repeated;          // rows repeating an earlier row of the file exactly (one run)
	size_t temp_from_samples; // runs whose temp_max_c came from the stored minute samples
};

/**
 * Imports the job log @in (named @name in messages) into @store (write mode) in one
 * transaction, as @opt says. Rows whose times lie before 2000-01-01 or after @now_ms are bad,
 * like those jobcsv_parse() refuses, and so is a row with the label and start of an earlier
 * row of the file but other content ("duplicate of line N"); each bad row adds
 * "NAME:LINE: problem" to @errors and nothing is imported unless opt->skip_bad. A row equal to
 * an earlier one is counted in result->repeated and stored once. A run already imported (same
 * label and start) is left as it is. A run without temp_max_c gets the highest stored minute
 * sample of a channel of runs.peak_channels within its window, and figures.memory the lowest
 * meminfo/available and highest meminfo/swap_used there, each with its method named in the
 * run's figures. Returns 0, -EBADMSG when bad rows stopped the import, -EINVAL for a file that
 * is no job log, or a negative errno of the store.
 */
int runs_import(struct store *store, FILE *in, const char *name,
		const struct runs_import_options *opt, int64_t now_ms,
		struct runs_import_result *result, struct buf *errors);

/**
 * The per-label summary /metrics exports: the @max_labels labels with the most runs (ties by
 * name) one by one, every other label (and one named "other") summed under "other"; sorted
 * by label. One scan of the runs table: the daemon calls it once per cycle, never per scrape.
 * Free *out with runs_summary_free(). 0 or a negative errno.
 */
int runs_summary(struct store *store, size_t max_labels, struct runsummary_label **out, size_t *n);
void runs_summary_free(struct runsummary_label *labels, size_t n); // accepts NULL

/** Formats ms since epoch as ISO 8601 UTC into @out, with ".mmm" when not a whole second. */
/**
 * Whether any stored run has @label: 1 if so, else 0 with "; did you mean 'A', 'B'?" naming up
 * to three near labels appended to @hint (nothing when none is near), or a negative errno.
 */
int runs_label_known(struct store *store, const char *label, struct buf *hint);

/**
 * The one check of a run label a user names (CLI and API alike): 0 when @label is NULL or a
 * stored run has it; else -EINVAL with *@err "no run has the label 'L'; did you mean 'A'?"
 * (the hint when a label is near), or another negative errno with *@err saying so. *@err is
 * newly allocated (caller frees) on failure, untouched on success.
 */
int runs_label_check(struct store *store, const char *label, char **err);

#endif
