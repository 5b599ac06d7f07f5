/* Exact statistics: hand-computed cases and seeded property checks (-s SEED repeats a run). */
#include <getopt.h>
#include <stdlib.h>
#include <time.h>

#include "stats.h"
#include "test.h"

static void fill(struct stats_acc *acc, const int64_t *q, size_t n) {
	stats_init(acc);
	for (size_t i = 0; i < n; i++) {
		stats_add(acc, q[i], 1000 + (int64_t)i * 60);
	}
	stats_seal(acc);
}

static void test_hand(void) {
	struct stats_acc acc;
	const int64_t q[] = {3, 1, 4, 2};
	fill(&acc, q, 4);
	is_int(acc.count, 4, "count");
	is_int(acc.min_q, 1, "min");
	is_int(acc.max_q, 4, "max");
	is_int(acc.max_ts, 1000 + 2 * 60, "time of the max");
	is_near(stats_mean(&acc, 1), 2.5, 0, "mean of 1..4");
	is_near(stats_stddev(&acc, 1, 0), sqrt(1.25), 1e-15, "population stddev of 1..4");
	is_near(stats_stddev(&acc, 1, 1), sqrt(5.0 / 3), 1e-15, "sample stddev of 1..4");
	is_near(stats_percentile(&acc, 50, 1), 2.5, 0, "median of 1..4 interpolates");
	// h = 3 * 0.95 = 2.85: x[2] + 0.85 (x[3] - x[2]) = 3.85
	is_near(stats_percentile(&acc, 95, 1), 3.85, 1e-15, "p95 of 1..4 (type 7)");
	is_near(stats_percentile(&acc, 0, 1), 1, 0, "p0 is the min");
	is_near(stats_percentile(&acc, 100, 1), 4, 0, "p100 is the max");
	ok(isnan(stats_percentile(&acc, 101, 1)), "p101 is NaN");
	stats_finish(&acc);

	// Repeated values: 10 x 40 °C, 5 x 41, 1 x 75.769 in m°C.
	stats_init(&acc);
	for (int i = 0; i < 10; i++) {
		stats_add(&acc, 40000, 100 + i);
	}
	for (int i = 0; i < 5; i++) {
		stats_add(&acc, 41000, 200 + i);
	}
	stats_add(&acc, 75769, 300);
	stats_add(&acc, 75769, 50); // an earlier equal maximum wins
	stats_seal(&acc);
	size_t n;
	const struct stats_bin *bins = stats_bins(&acc, &n);
	is_int(n, 3, "three distinct values");
	is_int(bins[0].q, 40000, "bins sorted");
	is_int(bins[2].count, 2, "bin counts");
	is_int(acc.max_ts, 50, "earliest time of the maximum");
	ok(stats_percentile(&acc, 100, 0.001) == 75.769, "max reads 75.769 exactly");
	// n = 17, p50: h = 8 -> 40 °C; p95: h = 15.2 -> x[15] = 75.769, x[16] = 75.769
	is_near(stats_percentile(&acc, 50, 0.001), 40, 0, "median of a histogram");
	ok(stats_percentile(&acc, 95, 0.001) == 75.769, "p95 within the top bin");
	// p90: h = 14.4 -> x[14] = 41 + 0.4 (75.769 - 41) = 54.9076
	is_near(stats_percentile(&acc, 90, 0.001), 54.9076, 1e-15, "p90 between bins");
	is_near(stats_mean(&acc, 0.001), (400.0 + 205 + 2 * 75.769) / 17, 1e-15, "mean in °C");
	stats_finish(&acc);

	// One value: stddev 0, every percentile that value.
	stats_init(&acc);
	stats_add(&acc, -5, 7);
	stats_seal(&acc);
	is_near(stats_stddev(&acc, 1, 0), 0, 0, "stddev of one value");
	ok(isnan(stats_stddev(&acc, 1, 1)), "sample stddev of one value is NaN");
	is_near(stats_percentile(&acc, 37, 0.5), -2.5, 0,
		"percentile of one value, resolution 0.5");
	stats_finish(&acc);
}

static void test_hist_merge(void) {
	// Rollup histograms merged with raw values give the same answers as raw values alone.
	struct stats_acc raw, merged;
	const int64_t hq[] = {1800000000, 408000000, 1200000000};
	const int64_t hc[] = {30, 20, 10};
	stats_init(&raw);
	stats_init(&merged);
	for (int i = 0; i < 20; i++) {
		stats_add(&raw, 408000000, 10 + i);
	}
	for (int i = 0; i < 10; i++) {
		stats_add(&raw, 1200000000, 40 + i);
	}
	for (int i = 0; i < 30; i++) {
		stats_add(&raw, 1800000000, 60 + i);
	}
	stats_add(&raw, 816000000, 5000);
	stats_add_hist(&merged, hq, hc, 3, 60);
	stats_add(&merged, 816000000, 5000);
	stats_seal(&raw);
	stats_seal(&merged);
	is_int(merged.count, raw.count, "merged count");
	is_int(merged.max_ts, raw.max_ts, "merged time of max");
	is_int(merged.min_q, raw.min_q, "merged min");
	ok(stats_mean(&merged, 1) == stats_mean(&raw, 1), "merged mean identical");
	ok(stats_stddev(&merged, 1, 0) == stats_stddev(&raw, 1, 0), "merged stddev identical");
	for (double p = 0; p <= 100; p += 12.5) {
		ok(stats_percentile(&merged, p, 1) == stats_percentile(&raw, p, 1),
		   "merged percentile identical");
	}
	size_t n;
	const struct stats_bin *bins = stats_bins(&merged, &n);
	is_int(n, 4, "four clock states");
	is_int(bins[3].count, 30, "time in the top state");
	stats_finish(&raw);
	stats_finish(&merged);
}

static void test_format(void) {
	char out[STATS_VALUE_LEN];
	struct {
		int64_t q;
		double res;
		const char *want;
	} cases[] = {
		{75769, 0.001, "75.769"},
		{75000, 0.001, "75.000"},
		{5, 0.001, "0.005"},
		{-125, 0.001, "-0.125"},
		{0, 0.001, "0.000"},
		{0, 1, "0"},
		{1800000000, 1, "1800000000"},
		{3, 0.5, "1.5"},
		{-7, 0.25, "-1.75"},
		{12, 100, "1200"},
		{123456789, 1e-6, "123.456789"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		stats_format_value(out, cases[i].q, cases[i].res);
		is_str(out, cases[i].want, "exact decimal text");
		ok(stats_value(cases[i].q, cases[i].res) == strtod(cases[i].want, NULL),
		   "value is the double nearest the decimal");
	}
	is_int(stats_resolution_digits(0.001), 3, "0.001 has 3 places");
	is_int(stats_resolution_digits(1), 0, "1 has no places");
	is_int(stats_resolution_digits(1.0 / 3), -1, "1/3 is no short decimal");
	stats_format_value(out, 3, 1.0 / 3);
	is_str(out, "1", "other resolutions fall back to round-trip text");
	// Over a realistic range the naive product q * 0.001 is often an ulp off; stats_value
	// never.
	int naive_off = 0, off = 0;
	for (int64_t q = 0; q < 200000; q++) {
		stats_format_value(out, q, 0.001);
		double want = strtod(out, NULL);
		naive_off += (double)q * 0.001 != want;
		off += stats_value(q, 0.001) != want;
	}
	ok(naive_off > 0, "the naive product misses some decimals");
	is_int(off, 0, "stats_value hits every decimal 0.000..199.999");
}

static int cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Reference type-7 percentile on a sorted array of values. */
static double ref_percentile(const double *v, size_t n, double p) {
	double h = (double)(n - 1) * (p / 100.0);
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < n ? lo + 1 : n - 1;
	double g = h - floor(h);
	double d = v[hi] - v[lo];
	return g >= 0.5 ? v[hi] - d * (1 - g) : v[lo] + d * g;
}

static void test_property(int rounds) {
	const double resolutions[] = {0.001, 1, 0.5, 1e-6};
	int bad = 0;
	for (int r = 0; r < rounds; r++) {
		size_t n = 1 + rng() % 3000;
		int64_t base = (int64_t)(rng() % 2000000000) - 1000000000;
		int64_t spread = 1 + (int64_t)(rng() % (r % 2 ? 50 : 5000000));
		double res = resolutions[rng() % 4];
		int64_t *q = malloc(n * sizeof(*q));
		double *v = malloc(n * sizeof(*v));
		struct stats_acc raw, split;
		stats_init(&raw);
		stats_init(&split);
		// Split the same values: some raw, the rest as "hourly" histograms.
		size_t cut = rng() % (n + 1);
		for (size_t i = 0; i < n; i++) {
			q[i] = base + (int64_t)(rng() % (uint64_t)spread);
			stats_add(&raw, q[i], (int64_t)i);
			if (i >= cut) {
				stats_add(&split, q[i], (int64_t)i);
			}
		}
		struct stats_acc hour;
		stats_init(&hour);
		for (size_t i = 0; i < cut; i++) {
			stats_add(&hour, q[i], (int64_t)i);
		}
		stats_seal(&hour);
		if (hour.count > 0) {
			size_t nb;
			const struct stats_bin *b = stats_bins(&hour, &nb);
			int64_t *bq = malloc(nb * sizeof(*bq)), *bc = malloc(nb * sizeof(*bc));
			for (size_t i = 0; i < nb; i++) { // reversed: order must not matter
				bq[i] = b[nb - 1 - i].q;
				bc[i] = b[nb - 1 - i].count;
			}
			stats_add_hist(&split, bq, bc, nb, hour.max_ts);
			free(bq);
			free(bc);
		}
		stats_finish(&hour);
		stats_seal(&raw);
		stats_seal(&split);
		qsort(q, n, sizeof(*q), cmp_i64);
		long double sum = 0;
		for (size_t i = 0; i < n; i++) {
			v[i] = stats_value(q[i], res);
			sum += v[i];
		}
		long double mean = sum / n, ss = 0;
		for (size_t i = 0; i < n; i++) {
			ss += (v[i] - mean) * (v[i] - mean);
		}
		double ref_sd = (double)sqrtl(ss / n);
		double scale = fabs((double)mean) + ref_sd + 1e-300;
		double ps[] = {
			0, 1, 5, 25, 50, 75, 95, 99, 99.9, 100, (double)(rng() % 10001) / 100};
		bool same = raw.count == (int64_t)n && split.count == (int64_t)n &&
			    raw.min_q == q[0] && raw.max_q == q[n - 1] && split.max_q == q[n - 1] &&
			    split.max_ts == raw.max_ts &&
			    fabs(stats_mean(&raw, res) - (double)mean) <= 1e-12 * scale &&
			    fabs(stats_stddev(&raw, res, 0) - ref_sd) <= 1e-9 * scale &&
			    stats_mean(&split, res) == stats_mean(&raw, res) &&
			    stats_stddev(&split, res, 0) == stats_stddev(&raw, res, 0);
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
			double want = ref_percentile(v, n, ps[k]);
			same = same && stats_percentile(&raw, ps[k], res) == want &&
			       stats_percentile(&split, ps[k], res) == want;
		}
		if (!same) {
			bad++;
			printf("# round %d differs (n %zu, res %g)\n", r, n, res);
		}
		stats_finish(&raw);
		stats_finish(&split);
		free(q);
		free(v);
	}
	is_int(bad, 0, "random histograms: exact against a sorted reference, split = raw");
}

/* Weighted percentiles, numpy's inverted_cdf: the first value whose cumulative weight reaches p. */
static void test_inverted_cdf(void) {
	struct stats_acc acc;
	stats_init(&acc);
	const int64_t q[] = {3, 1, 2}, w[] = {2, 1, 1}; // cdf 0.25, 0.5, 1 over 1, 2, 3
	stats_add_hist(&acc, q, w, 3, 0);
	stats_seal(&acc);
	is_near(stats_percentile_inverted_cdf(&acc, 0, 1), 1, 0, "p0: the first value");
	is_near(stats_percentile_inverted_cdf(&acc, 25, 1), 1, 0, "p25 reaches cdf 0.25 at 1");
	is_near(stats_percentile_inverted_cdf(&acc, 25.1, 1), 2, 0, "p25.1 needs 2");
	is_near(stats_percentile_inverted_cdf(&acc, 50, 1), 2, 0, "p50 reaches cdf 0.5 at 2");
	is_near(stats_percentile_inverted_cdf(&acc, 50.1, 1), 3, 0, "p50.1 needs 3");
	is_near(stats_percentile_inverted_cdf(&acc, 100, 1), 3, 0, "p100 is the max");
	ok(isnan(stats_percentile_inverted_cdf(&acc, -1, 1)), "p-1 is NaN");
	stats_finish(&acc);
	// An hour at 70 degrees (3540 s after its first sample) and one at 40 (3655 s).
	stats_init(&acc);
	const int64_t tq[] = {70000, 40000}, tw[] = {3540, 3655};
	stats_add_hist(&acc, tq, tw, 2, 0);
	stats_seal(&acc);
	is_near(stats_mean(&acc, 0.001), 394000.0 / 7195, 1e-12, "time-weighted mean");
	is_near(stats_percentile_inverted_cdf(&acc, 50, 0.001), 40, 0, "time-weighted median");
	is_near(stats_percentile_inverted_cdf(&acc, 95, 0.001), 70, 0, "time-weighted p95");
	stats_finish(&acc);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_hand();
	test_hist_merge();
	test_format();
	test_inverted_cdf();
	test_property(300);
	return test_done();
}
