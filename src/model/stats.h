/* Exact window statistics over quantized values: a histogram of q, so order statistics are exact.
 * Pure. */
#ifndef STATS_H
#define STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One distinct quantized value and how often it occurred. */
struct stats_bin {
	int64_t q;
	int64_t count; // 0 marks an empty hash slot while accumulating
};

/*
 * A streaming accumulator: raw values and whole rollup histograms merge into one exact
 * histogram of q (value = q * resolution). Memory is proportional to the number of distinct
 * values, never to the number of samples. After stats_seal() the bins are sorted by q and
 * only the query functions may be called.
 */
struct stats_acc {
	struct stats_bin *bins; // hash table while open; sorted prefix of n_bins after sealing
	size_t n_bins;          // distinct values
	size_t cap;             // slots, a power of two (0 before the first value)
	int64_t count;          // values added
	int64_t min_q, max_q;   // valid when count > 0
	int64_t max_ts;         // s since epoch: the earliest time max_q was seen
	bool sealed;
};

/** Prepares @acc (caller's storage) for values. */
void stats_init(struct stats_acc *acc);
/** Frees the bins; accepts a zeroed struct. */
void stats_finish(struct stats_acc *acc);

/** Adds one raw value @q seen at @ts (s since epoch). */
void stats_add(struct stats_acc *acc, int64_t q, int64_t ts);
/**
 * Merges a histogram of @n distinct values @q (any order) with counts @count (each >= 1);
 * @max_q must be the largest of @q and @max_ts when it was first reached.
 */
void stats_add_hist(struct stats_acc *acc, const int64_t *q, const int64_t *count, size_t n,
		    int64_t max_ts);

/** Sorts the bins; after this the accumulator is read-only. Idempotent. */
void stats_seal(struct stats_acc *acc);

/** Sorted distinct values (after stats_seal); @n receives how many. */
const struct stats_bin *stats_bins(const struct stats_acc *acc, size_t *n);

/*
 * The queries below need a sealed accumulator with count > 0 and return values in the
 * channel's unit: @resolution is the channel's step (q * resolution).
 */

/** The arithmetic mean, from the exact integer sum. */
double stats_mean(const struct stats_acc *acc, double resolution);
/**
 * The standard deviation with @ddof delta degrees of freedom: 0 = population (numpy's
 * default, used by thermlog), 1 = sample. NAN when count <= ddof.
 */
double stats_stddev(const struct stats_acc *acc, double resolution, int ddof);
/**
 * The @p-th percentile (0 <= p <= 100) by linear interpolation between closest ranks
 * (Hyndman-Fan type 7, numpy.percentile's default "linear"): h = (n - 1) p / 100 and
 * x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]) over the sorted values, computed
 * on the histogram without expanding it. NAN for p outside [0, 100].
 */
double stats_percentile(const struct stats_acc *acc, double p, double resolution);
/**
 * The @p-th percentile (0 <= p <= 100) with the counts as weights, by the inverted empirical
 * distribution (Hyndman-Fan type 1, numpy.percentile(x, p, weights=w, method='inverted_cdf')):
 * the smallest value whose cumulative weight over the total reaches p / 100, with numpy's float
 * steps. Time-weighted statistics keep seconds as the counts. NAN for p outside [0, 100].
 */
double stats_percentile_inverted_cdf(const struct stats_acc *acc, double p, double resolution);

/**
 * The value of @q in the unit, correctly rounded from the decimal q * resolution when the
 * resolution is a power-of-ten fraction or integer (0.001 * 75769 gives 75.769, the double
 * nearest to "75.769", not 75.769000000000005).
 */
double stats_value(int64_t q, double resolution);
/** Decimal places of @resolution (0.001 -> 3, 1 -> 0), or -1 if it is no short decimal. */
int stats_resolution_digits(double resolution);
#define STATS_VALUE_LEN 48
/**
 * Writes @q * @resolution as exact decimal text with as many places as the resolution has
 * ("75.769", "75.000", "-0.125", "1800000000"); shortest round-trip text when the
 * resolution is no short decimal. Returns the length.
 */
size_t stats_format_value(char out[STATS_VALUE_LEN], int64_t q, double resolution);
/** Writes m / 10^@digits (0 <= digits <= 9) as exact decimal text; returns the length. */
size_t stats_format_decimal(char out[STATS_VALUE_LEN], int64_t m, int digits);
/**
 * Splits @resolution into step / 10^digits with an integer step, so q * resolution is the
 * exact decimal (q * step) / 10^digits; false when the resolution is no short decimal.
 */
bool stats_resolution_step(double resolution, int *digits, int64_t *step);

#endif
