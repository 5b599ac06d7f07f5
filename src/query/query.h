/*
 * Window statistics over the store, shared by the CLI and the HTTP API: whole hours from the
 * rollups' exact histograms, window edges and recent hours from raw samples, same answers.
 */
#ifndef QUERY_H
#define QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "json.h"
#include "stats.h"
#include "store.h"

#define QUERY_MAX_PERCENTILES 16

/** How samples weigh in a window's mean, stddev and percentiles. */
enum query_weight {
	QUERY_WEIGHT_SAMPLES, // each sample counts once (the default: numpy's plain statistics)
	QUERY_WEIGHT_TIME,    // each sample counts the seconds it stands for, by lifetime's rule
};

/** "samples" or "time". */
const char *query_weight_name(enum query_weight weight);
/** Parses "samples" or "time" into *weight; false for anything else. */
bool query_weight_parse(const char *text, enum query_weight *weight);

/** What to query; zero-initialize, then set what you need. Everything is borrowed. */
struct query_params {
	bool has_from, has_to; // false: the first stored cycle / just after the last one
	int64_t from, to;      // s since epoch, UTC: the window is [from, to)
	/*
	 * Channel keys, fnmatch(3) globs ("cpufreq/policy?") or labels ("CPU 4-5"); n_channels == 0
	 * selects every channel. One that matches no channel is an error naming it and the
	 * near names, if any ("did you mean thermal/soc-thermal?").
	 */
	const char *const *channels;
	size_t n_channels;
	/** Extra percentiles (0..100) reported besides p50 and p95, as "p99", "p99.9". */
	const double *percentiles;
	size_t n_percentiles;
	bool include_unsynced; // keep cycles whose clock was unsynced (default: excluded, counted)
	int64_t interval_s; // expected cycle spacing; 0 = inferred (median spacing in the window)
	enum query_weight weight; // stats: samples (default) or time
	unsigned samples;         // peak: cycles around the maximum (0 = 30 unless around_s)
	int64_t around_s;         // peak: instead, the cycles within this many s of the maximum
	const char *const *with;  // peak: companion channels (keys, globs, labels); 0 = all
	size_t n_with;
	bool wide; // peak table (the CLI's): every companion, full keys (default: fit 100 columns)
	unsigned max_points; // samples: at most this many buckets (0 = 1000)
};

/*
 * JSON writers: each appends one object to @out and returns 0, or a negative errno with a
 * newly allocated message in *err (caller frees): -EINVAL for bad parameters (an unknown
 * channel, from >= to), -ENOENT for an empty database, -EIO for store failures.
 */

/** The known channels and a selected subset, with a map from channel id to selection slot. */
struct query_selection {
	struct store_channel *all;
	size_t n_all;
	size_t *pick; // indexes into all, key order
	int64_t *ids;
	size_t n;
	int32_t *slot; // by channel id: selection slot or -1
	int64_t max_id;
};

/**
 * A window's statistics, computed once and written as JSON here or as a table by the CLI
 * (src/cli/stats.c). Owns everything it points to; query_stats_finish() frees it.
 */
struct query_stats {
	int64_t from, to;        // the resolved window [from, to), s since epoch, UTC
	int64_t interval_s;      // expected cycle spacing (given, or the median spacing)
	int64_t cycles;          // cycles counted (unsynced ones only when included)
	int64_t expected_cycles; // the window over interval_s, rounded up; with mixed intervals the
				 // cycles plus those the gaps would have held at their own
	/*
	 * Coverage and gaps are time: a spacing more than 1.5 times the sample's own spacing
	 * (struct lifetime_spacing; with interval_s given, more than 1.5 interval_s) leaves the
	 * part beyond it unobserved, and so do the window's ends beyond the first and the last
	 * sample's spacing.
	 */
	double coverage;       // observed time over the window's length, 0..1
	int64_t gap_s;         // unobserved time, s
	int64_t longest_gap_s; // the longest unobserved stretch, s (0: none)
	bool mixed_intervals;  // the samples stand for spacings more than 1.5 times apart ...
	int64_t min_interval_s, max_interval_s; // ... the shortest and the longest of them
	enum query_weight weight;
	/*
	 * weight time: hours pruned from the raw retention before this time were weighed from
	 * their rollups at interval_s a value (INT64_MIN: none; the rest is exact).
	 */
	int64_t time_rollup_to;
	int64_t unsynced;                          // unsynced cycles in the window
	bool include_unsynced;                     // as asked: unsynced cycles were counted
	double percentiles[QUERY_MAX_PERCENTILES]; // the extra percentiles asked for
	size_t n_percentiles;
	struct query_selection sel; // the channels, in key order
	struct stats_acc *acc;      // per selected channel, sealed
	struct stats_acc *time_acc; // weight time: seconds per value, per selected channel, sealed
	int64_t *unsynced_excluded; // per selected channel: samples left out as unsynced
};

/**
 * Computes the statistics of every channel @p selects over its window into @s (initialized
 * here). Returns 0, or a negative errno with *err as for the JSON writers (nothing to free).
 */
int query_stats_compute(struct store *store, const struct query_params *p, struct query_stats *s,
			char **err);
void query_stats_finish(struct query_stats *s); // accepts a zeroed struct

/*
 * The mean, the population stddev and the @pct-th percentile of selected channel @k, weighted
 * as s->weight says: by samples numpy's mean, std and percentile (type 7); by time the same
 * over the seconds each sample stands for, the percentile numpy's weighted 'inverted_cdf'.
 * NAN without samples (by time: without time, as for a lone sample).
 */
double query_stats_mean(const struct query_stats *s, size_t k);
double query_stats_stddev(const struct query_stats *s, size_t k);
double query_stats_percentile(const struct query_stats *s, size_t k, double pct);

/**
 * Appends @s as {"from", "to", "weight", "interval_s", "cycles", "expected_cycles", "coverage",
 * "longest_gap_s", "mixed_intervals", "unsynced_excluded", "channels": [{"key", "label", "unit",
 * "kind", "resolution", "count", "coverage", "longest_gap_s" (null when the channel missed some
 * cycles), "mean", "stddev", "min", "p50", "p95", "max", "max_time", "p<P>"...,
 * "unsynced_excluded", "time_in_state" (frequency channels: [{"value", "share"}])}]}. Times are
 * unix seconds, values in the channel's unit; mean, stddev (the population one, ddof 0) and
 * percentiles are weighted as "weight" says (query_stats_mean()). Statistics without samples
 * are null.
 */
void query_stats_write_json(const struct query_stats *s, struct json *out);
/** query_stats_compute() and query_stats_write_json() in one. */
int query_stats_json(struct store *store, const struct query_params *p, struct json *out,
		     char **err);

/**
 * The p->samples cycles centred on the maximum of the one channel p->channels[0] names (or those
 * within p->around_s of it), every column's value at each: computed once and written as JSON
 * here or as a table by the CLI. Owns everything it points to; query_peak_finish() frees it.
 */
struct query_peak {
	int64_t from, to;               // the resolved window, s since epoch, UTC
	const struct channel *channel;  // the peak channel (columns[0])
	int64_t max_q, max_ts;          // its maximum, in units of its resolution, and when
	const struct channel **columns; // the peak channel, then the p->with channels, else
	size_t n_columns;               // every other channel with a value in the rows
	int64_t *row_ts;                // the cycles shown, ascending
	size_t n_rows;
	int64_t *cells; // n_rows x n_columns, in units of the column's resolution ...
	bool *have;     // ... where true; false: no value in that cycle
	struct query_selection one, all; // own the channels above
};

/**
 * Computes the peak of @p into @pk (initialized here). Returns 0, or a negative errno with
 * *err as for the JSON writers; -ENOENT also when the channel has no samples in the window or
 * the raw samples around its maximum were pruned.
 */
int query_peak_compute(struct store *store, const struct query_params *p, struct query_peak *pk,
		       char **err);
void query_peak_finish(struct query_peak *pk); // accepts a zeroed struct

/**
 * Appends @pk as {"key", "from", "to", "max", "max_time", "columns": [{"key", "label", "unit"}],
 * "rows": [[time, value or null, ...]]}.
 */
void query_peak_write_json(const struct query_peak *pk, struct json *out);
/** query_peak_compute() and query_peak_write_json() in one. */
int query_peak_json(struct store *store, const struct query_params *p, struct json *out,
		    char **err);

/**
 * {"channels": [{"key", "label", "source", "kind", "unit", "resolution", "first_seen",
 *  "last_seen", "present", "meta"}]} for every known channel (p may be NULL); "meta" is the
 * object of source details the store keeps (governor, trips, ...) or null.
 */
int query_channels_json(struct store *store, const struct query_params *p, struct json *out,
			char **err);

/**
 * A downsampled series for charts: at most p->max_points buckets of equal width over the
 * window, each with the min, max and mean of the samples inside:
 * {"from", "to", "bucket_s", "channels": [{"key", "label", "unit",
 *  "points": [[bucket start, min, max, mean, count], ...]}]} (empty buckets are left out).
 */
int query_samples_json(struct store *store, const struct query_params *p, struct json *out,
		       char **err);

/**
 * The one check of a user's window [from, to) for the API and the CLI alike: not empty, and no
 * longer than @max_window_s (http.max_window; 0 = no limit). @to_is_now: the caller put now
 * for an end the user left out. @names are the two ends as the user wrote them ("'from'" and
 * "'to'" for the API, "--from" and "--to" for the CLI). Returns 0, or -EINVAL with a newly
 * allocated message in *err and *bad = 0 (blame from) or 1 (blame to).
 */
int query_window_check(int64_t from, int64_t to, bool to_is_now, int64_t max_window_s,
		       const char *const names[2], int *bad, char **err);

/** The resolved window of @p: the stored history's edges where from/to are unset. */
int query_window(struct store *store, const struct query_params *p, int64_t *from, int64_t *to,
		 char **err);

/**
 * Selects the channels matching any of @patterns (keys, labels or globs; none = all), in key
 * order. An unmatched pattern is -EINVAL with *err naming it and the nearest channels.
 */
int query_select(struct store *store, const char *const *patterns, size_t n_patterns,
		 struct query_selection *s, char **err);
void query_selection_finish(struct query_selection *s); // accepts a zeroed struct
/** The slot of channel @id in the selection, or -1. */
int query_selection_slot(const struct query_selection *s, int64_t id);
/** The channel in slot @k. */
const struct channel *query_selection_channel(const struct query_selection *s, size_t k);

#endif
