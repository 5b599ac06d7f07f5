/*
 * Exact statistics on quantized values: a hash histogram of q while accumulating, sorted once
 * sealed. Percentiles are Hyndman-Fan type 7 (numpy's default) read off cumulative counts.
 */
#include "stats.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void stats_init(struct stats_acc *acc) {
	*acc = (struct stats_acc){0};
}

void stats_finish(struct stats_acc *acc) {
	free(acc->bins);
	*acc = (struct stats_acc){0};
}

static size_t slot_of(int64_t q, size_t cap) {
	// Fibonacci hashing: consecutive q (the common case) spread over the table.
	return (size_t)(((uint64_t)q * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (cap - 1);
}

static struct stats_bin *find_slot(struct stats_bin *bins, size_t cap, int64_t q) {
	size_t i = slot_of(q, cap);
	while (bins[i].count != 0 && bins[i].q != q) {
		i = (i + 1) & (cap - 1);
	}
	return &bins[i];
}

static void grow(struct stats_acc *acc) {
	size_t cap = acc->cap ? acc->cap * 2 : 64;
	struct stats_bin *bins = xcalloc(cap, sizeof(*bins));
	for (size_t i = 0; i < acc->cap; i++) {
		if (acc->bins[i].count != 0) {
			*find_slot(bins, cap, acc->bins[i].q) = acc->bins[i];
		}
	}
	free(acc->bins);
	acc->bins = bins;
	acc->cap = cap;
}

static void add_count(struct stats_acc *acc, int64_t q, int64_t count) {
	assert(!acc->sealed && count > 0);
	if ((acc->n_bins + 1) * 4 > acc->cap * 3) { // keep the load under 3/4
		grow(acc);
	}
	struct stats_bin *b = find_slot(acc->bins, acc->cap, q);
	if (b->count == 0) {
		b->q = q;
		acc->n_bins++;
	}
	b->count += count;
	if (acc->count == 0 || q < acc->min_q) {
		acc->min_q = q;
	}
	acc->count += count;
}

static void note_max(struct stats_acc *acc, int64_t q, int64_t ts, bool first) {
	if (first || q > acc->max_q || (q == acc->max_q && ts < acc->max_ts)) {
		acc->max_q = q;
		acc->max_ts = ts;
	}
}

void stats_add(struct stats_acc *acc, int64_t q, int64_t ts) {
	bool first = acc->count == 0;
	add_count(acc, q, 1);
	note_max(acc, q, ts, first);
}

void stats_add_hist(struct stats_acc *acc, const int64_t *q, const int64_t *count, size_t n,
		    int64_t max_ts) {
	if (n == 0) {
		return;
	}
	bool first = acc->count == 0;
	int64_t max_q = q[0];
	for (size_t i = 0; i < n; i++) {
		add_count(acc, q[i], count[i]);
		if (q[i] > max_q) {
			max_q = q[i];
		}
	}
	note_max(acc, max_q, max_ts, first);
}

static int cmp_bin(const void *a, const void *b) {
	const struct stats_bin *x = a, *y = b;
	return (x->q > y->q) - (x->q < y->q);
}

void stats_seal(struct stats_acc *acc) {
	if (acc->sealed) {
		return;
	}
	size_t n = 0;
	for (size_t i = 0; i < acc->cap; i++) {
		if (acc->bins[i].count != 0) {
			acc->bins[n++] = acc->bins[i];
		}
	}
	assert(n == acc->n_bins);
	if (n > 1) {
		qsort(acc->bins, n, sizeof(*acc->bins), cmp_bin);
	}
	acc->sealed = true;
}

const struct stats_bin *stats_bins(const struct stats_acc *acc, size_t *n) {
	assert(acc->sealed);
	*n = acc->n_bins;
	return acc->bins;
}

/*
 * The mean of q as whole + frac with 0 <= frac < 1 (floor division of the exact sum), so the
 * deviations q - mean keep full precision even for large q. The sum is exact in int64 for any
 * realistic history (a year of 2.4 GHz in Hz is 1.3e15); it falls back to long double beyond.
 */
static void mean_parts(const struct stats_acc *acc, int64_t *whole, double *frac) {
	int64_t sum = 0;
	bool overflow = false;
	for (size_t i = 0; i < acc->n_bins && !overflow; i++) {
		int64_t term;
		overflow = __builtin_mul_overflow(acc->bins[i].q, acc->bins[i].count, &term) ||
			   __builtin_add_overflow(sum, term, &sum);
	}
	if (overflow) {
		long double s = 0;
		for (size_t i = 0; i < acc->n_bins; i++) {
			s += (long double)acc->bins[i].q * acc->bins[i].count;
		}
		long double m = s / acc->count;
		long double w = floorl(m);
		*whole = (int64_t)w;
		*frac = (double)(m - w);
		return;
	}
	int64_t w = sum / acc->count, r = sum % acc->count;
	if (r < 0) { // floor, not truncation
		w--;
		r += acc->count;
	}
	*whole = w;
	*frac = (double)r / (double)acc->count;
}

/* Scales a value in q units to the channel's unit the way stats_value() does. */
static double scale(double q, double resolution) {
	int digits = stats_resolution_digits(resolution);
	if (digits > 0) {
		return q / pow(10, digits) * (double)llround(resolution * pow(10, digits));
	}
	return q * resolution;
}

double stats_mean(const struct stats_acc *acc, double resolution) {
	assert(acc->sealed && acc->count > 0);
	int64_t whole;
	double frac;
	mean_parts(acc, &whole, &frac);
	int digits = stats_resolution_digits(resolution);
	if (digits >= 0) {
		int64_t step = llround(resolution * pow(10, digits));
		int64_t scaled;
		if (!__builtin_mul_overflow(whole, step, &scaled)) {
			// (whole + frac) * step / 10^digits with the integer part exact
			return ((double)scaled + frac * (double)step) / pow(10, digits);
		}
	}
	return ((double)whole + frac) * resolution;
}

double stats_stddev(const struct stats_acc *acc, double resolution, int ddof) {
	assert(acc->sealed && acc->count > 0);
	if (acc->count <= ddof) {
		return NAN;
	}
	int64_t whole;
	double frac;
	mean_parts(acc, &whole, &frac);
	// Two passes over the (small) histogram: sum of squared deviations, no cancellation.
	double ss = 0;
	for (size_t i = 0; i < acc->n_bins; i++) {
		double d = (double)(acc->bins[i].q - whole) - frac;
		ss += d * d * (double)acc->bins[i].count;
	}
	return scale(sqrt(ss / (double)(acc->count - ddof)), resolution);
}

double stats_percentile(const struct stats_acc *acc, double p, double resolution) {
	assert(acc->sealed && acc->count > 0);
	if (!(p >= 0 && p <= 100)) {
		return NAN;
	}
	// The same float steps as numpy: virtual index (n - 1) * (p / 100), gamma = h - floor(h).
	double h = (double)(acc->count - 1) * (p / 100.0);
	double lo_rank = floor(h);
	double gamma = h - lo_rank;
	int64_t lo = (int64_t)lo_rank;
	int64_t hi = lo + 1 < acc->count ? lo + 1 : acc->count - 1;
	int64_t q_lo = 0, q_hi = 0, seen = 0;
	size_t i = 0;
	for (; i < acc->n_bins; i++) {
		seen += acc->bins[i].count;
		if (seen > lo) {
			q_lo = acc->bins[i].q;
			break;
		}
	}
	for (; i < acc->n_bins; i++) {
		if (seen > hi) {
			q_hi = acc->bins[i].q;
			break;
		}
		if (i + 1 < acc->n_bins) {
			seen += acc->bins[i + 1].count;
		}
	}
	if (i == acc->n_bins) {
		q_hi = acc->bins[acc->n_bins - 1].q;
	}
	double a = stats_value(q_lo, resolution), b = stats_value(q_hi, resolution);
	// numpy's _lerp: from the nearer end, so gamma = 1 gives b exactly.
	double diff = b - a;
	return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

double stats_percentile_inverted_cdf(const struct stats_acc *acc, double p, double resolution) {
	assert(acc->sealed && acc->count > 0);
	if (!(p >= 0 && p <= 100)) {
		return NAN;
	}
	// numpy: cdf = cumsum(w) / sum(w) in float64, the first index where cdf >= p / 100.
	double quantile = p / 100.0, total = (double)acc->count;
	int64_t seen = 0;
	for (size_t i = 0; i < acc->n_bins; i++) {
		seen += acc->bins[i].count;
		if ((double)seen / total >= quantile) {
			return stats_value(acc->bins[i].q, resolution);
		}
	}
	return stats_value(acc->bins[acc->n_bins - 1].q, resolution);
}

int stats_resolution_digits(double resolution) {
	if (!(resolution > 0) || !isfinite(resolution)) {
		return -1;
	}
	double scaled = resolution;
	for (int digits = 0; digits <= 9; digits++) {
		double r = nearbyint(scaled);
		if (r >= 1 && fabs(scaled - r) <= 1e-6) { // float noise of a short decimal
			return digits;
		}
		scaled *= 10;
	}
	return -1;
}

static const int64_t pow10_table[] = {1,      10,      100,      1000,      10000,
				      100000, 1000000, 10000000, 100000000, 1000000000};

bool stats_resolution_step(double resolution, int *digits, int64_t *step) {
	int d = stats_resolution_digits(resolution);
	if (d < 0) {
		return false;
	}
	*digits = d;
	*step = llround(resolution * (double)pow10_table[d]);
	return true;
}

/* q * resolution as the integer mantissa m with value = m / 10^digits; false if no fit. */
static bool decimal_of(int64_t q, double resolution, int64_t *m, int *digits) {
	int64_t step;
	return stats_resolution_step(resolution, digits, &step) &&
	       !__builtin_mul_overflow(q, step, m);
}

double stats_value(int64_t q, double resolution) {
	int64_t m;
	int digits;
	if (!decimal_of(q, resolution, &m, &digits)) {
		return (double)q * resolution;
	}
	// One correctly rounded division of exact numbers (below 2^53) gives the nearest double.
	return digits ? (double)m / (double)pow10_table[digits] : (double)m;
}

size_t stats_format_value(char out[STATS_VALUE_LEN], int64_t q, double resolution) {
	int64_t m;
	int digits;
	if (!decimal_of(q, resolution, &m, &digits)) {
		double v = (double)q * resolution;
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(out, STATS_VALUE_LEN, "%.*g", prec, v);
			if (strtod(out, NULL) == v) {
				break;
			}
		}
		return strlen(out);
	}
	return stats_format_decimal(out, m, digits);
}

size_t stats_format_decimal(char out[STATS_VALUE_LEN], int64_t m, int digits) {
	// Digits of |m| backwards, the point inserted @digits from the right.
	char tmp[STATS_VALUE_LEN];
	size_t n = 0;
	uint64_t u = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
		if ((int)n == digits) {
			tmp[n++] = '.';
			if (u == 0) {
				tmp[n++] = '0';
			}
		}
	} while (u != 0 || (int)n <= digits);
	size_t len = 0;
	if (m < 0) {
		out[len++] = '-';
	}
	while (n > 0) {
		out[len++] = tmp[--n];
	}
	out[len] = '\0';
	return len;
}
