/*
 * Run statistics: the generated 649-run job log against numpy's type-7 figures
 * (tests/runs/gen-jobs.py wrote both), grouping and counts by status, and the bootstrap
 * interval of a ratio of medians where the true ratio is known.
 */
#include <errno.h>

#include "jobcsv.h"
#include "runstats.h"
#include "test.h"
#include "xalloc.h"

#define JOBS     "fixtures/runs/jobs-649.csv"
#define EXPECTED "fixtures/runs/jobs-649.expected"

/* The value of @key in the expected file, or NAN. */
static double expected(const char *key) {
	FILE *f = fopen(EXPECTED, "r");
	if (!f) {
		perror(EXPECTED);
		exit(1);
	}
	char name[64];
	double v, found = NAN;
	while (fscanf(f, "%63s %lf", name, &v) == 2) {
		if (strcmp(name, key) == 0) {
			found = v;
		}
	}
	fclose(f);
	return found;
}

static void check_summary(const struct runstats_summary *s, const char *name) {
	char key[64], what[96];
	snprintf(key, sizeof(key), "%s.n", name);
	snprintf(what, sizeof(what), "%s: count of ok runs with a value", name);
	is_int(s->n, (long long)expected(key), what);
	const struct {
		const char *suffix;
		double got;
	} figures[] = {
		{"p50", s->p50},
		{"p95", s->p95},
		{"max", s->max},
		{"mean", s->mean},
		{"p90", s->percentiles[0]},
		{"p99", s->percentiles[1]},
	};
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		snprintf(key, sizeof(key), "%s.%s", name, figures[i].suffix);
		snprintf(what, sizeof(what), "%s = numpy's", key);
		is_near(figures[i].got, expected(key), 1e-12, what);
	}
}

static void test_job_log(void) {
	FILE *in = fopen(JOBS, "r");
	if (!in) {
		perror(JOBS);
		exit(1);
	}
	struct jobcsv log;
	struct buf errors;
	buf_init(&errors);
	int rc = jobcsv_parse(in, JOBS, "jobs-649", 1, &log, &errors);
	fclose(in);
	is_int(rc, 0, "the 649-run log parses");
	is_str(errors.data, NULL, "no errors");
	is_int(log.n, 649, "649 rows");

	struct runstats_run *runs = xcalloc(log.n, sizeof(*runs));
	for (size_t i = 0; i < log.n; i++) {
		const struct jobcsv_row *r = &log.rows[i];
		runs[i] = (struct runstats_run){
			.label = r->label,
			.status = r->status,
			.duration_s = (double)(r->end_ms - r->start_ms) / 1000,
			.energy_j = r->energy_j,
			.energy_coverage = NAN, // a job log's energy: whole
			.temp_max_c = r->temp_max_c,
			.rss_max_bytes = r->rss_max_bytes,
		};
	}
	const double pct[] = {90, 99};
	struct runstats_options opt = {.over_s = 1800, .percentiles = pct, .n_percentiles = 2};
	struct runstats_result res;
	is_int(runstats_compute(runs, log.n, &opt, &res), 0, "compute");
	is_int(res.n, 1, "one label");
	const struct runstats_label *l = &res.labels[0];
	is_str(l->label, "sdxl-npu", "its label");
	is_int(l->count, (long long)expected("count"), "649 attempts");
	is_int(l->by_status[RUN_STATUS_OK], (long long)expected("ok"), "404 ok");
	is_int(l->by_status[RUN_STATUS_FAILED], (long long)expected("failed"), "245 failed");
	is_int(l->over, (long long)expected("over_1800"), "ok runs over 30 minutes");
	check_summary(&l->duration_s, "duration_s");
	check_summary(&l->energy_j, "energy_j");
	check_summary(&l->temp_max_c, "temp_max_c");
	check_summary(&l->rss_max_bytes, "rss_max_bytes");
	runstats_result_finish(&res);
	free(runs);
	jobcsv_finish(&log);
	buf_finish(&errors);
}

/* A run for the statistics: the figures in struct order, then its metrics; no group. */
#define RUN(l_, st_, d_, e_, cov_, t_, rss_, swap_, share_, m_)                         \
	{                                                                               \
		.label = (l_), .status = (st_), .duration_s = (d_), .energy_j = (e_),   \
		.energy_coverage = (cov_), .temp_max_c = (t_), .rss_max_bytes = (rss_), \
		.swap_max_bytes = (swap_), .throttled_share = (share_), .metrics = (m_) \
	}

static void test_groups(void) {
	const struct runstats_run runs[] = {
		RUN("b", RUN_STATUS_OK, 10, NAN, NAN, 50, 100, 5, 0, NULL),
		RUN("a", RUN_STATUS_OK, 4, 2, 1, 60, 200, 1000, 0.25, NULL),
		RUN("b", RUN_STATUS_SIGNALED, 99, 9, 1, 90, 900, 7, 1, NULL),
		RUN("a", RUN_STATUS_OK, 1, NAN, NAN, 61, 100, NAN, 0, NULL),
		RUN("a", RUN_STATUS_TIMEOUT, 3600, 1, 1, 95, 1, 9000, 0.9, NULL),
		// a daemon restart mid-run:
		RUN("a", RUN_STATUS_OK, 3, 4, 0.696, 62.5, 300, 3000, NAN, NULL),
		RUN("a", RUN_STATUS_LOST, 7, NAN, NAN, NAN, NAN, NAN, NAN, NULL),
		RUN("a", RUN_STATUS_RUNNING, 2, NAN, NAN, NAN, NAN, NAN, NAN, NULL),
		RUN("a", RUN_STATUS_OK, 2, NAN, NAN, 63, 400, 2000, 0.5, NULL),
	};
	struct runstats_options opt = {.over_s = NAN};
	struct runstats_result res;
	is_int(runstats_compute(runs, 9, &opt, &res), 0, "groups");
	is_int(res.n, 2, "two labels");
	const struct runstats_label *a = &res.labels[0], *b = &res.labels[1];
	is_str(a->label, "a", "sorted by label");
	ok(runstats_result_label(&res, "a") == a && runstats_result_label(&res, "b") == b &&
		   !runstats_result_label(&res, "c"),
	   "a label's summary found by name; an unknown label has none");
	ok(a->swap_max_bytes.n == 3 && a->swap_max_bytes.max == 3000 &&
		   a->swap_max_bytes.p50 == 2000,
	   "a: swap of the ok runs that have it (n 3, max 3000, p50 2000)");
	is_int(a->count, 7, "a: 7 runs");
	ok(a->by_status[RUN_STATUS_OK] == 4 && a->by_status[RUN_STATUS_TIMEOUT] == 1 &&
		   a->by_status[RUN_STATUS_LOST] == 1 && a->by_status[RUN_STATUS_RUNNING] == 1 &&
		   a->by_status[RUN_STATUS_FAILED] == 0,
	   "a: counts by status");
	is_int(a->over, 0, "no threshold: over 0");
	ok(a->energy_partial == 1 && a->energy_missing == 2 && a->energy_not_ok == 1,
	   "a: energy covers 2 ok runs, one of them partly; leaves out 2 ok runs and 1 timeout");
	ok(b->energy_partial == 0 && b->energy_missing == 1 && b->energy_not_ok == 1,
	   "b: no ok run with energy; the signaled one has it");
	// ok durations 1 2 3 4: p50 2.5, p95 = 3 + 0.85 = 3.85, mean 2.5; the timeout is out
	is_near(a->duration_s.p50, 2.5, 0, "a: median of ok durations");
	is_near(a->duration_s.p95, 3.85, 1e-15, "a: p95 type 7");
	is_near(a->duration_s.max, 4, 0, "a: max ignores the 3600 s timeout");
	is_near(a->energy_j.p50, 3, 0, "a: energy over ok runs that have it");
	is_int(a->energy_j.n, 2, "a: two ok runs with energy");
	is_int(b->energy_j.n, 0, "b: no ok run with energy");
	ok(isnan(b->energy_j.p50) && isnan(b->energy_j.mean), "b: energy NaN (null), not 0");
	is_int(b->by_status[RUN_STATUS_SIGNALED], 1, "b: one signaled");
	ok(a->throttle_known == 3 && a->throttled == 2,
	   "a: 3 ok runs with a known throttled share, 2 of them throttled");
	ok(a->throttled_share.n == 2 && a->throttled_share.p50 == 0.375 &&
		   a->throttled_share.max == 0.5,
	   "a: the throttled runs' shares (0.25 and 0.5): p50 0.375; 0 and the timeout are out");
	ok(b->throttle_known == 1 && b->throttled == 0 && b->throttled_share.n == 0 &&
		   isnan(b->throttled_share.p50),
	   "b: one ok run, not throttled (the signaled one is out): no share summary");
	runstats_result_finish(&res);

	opt.over_s = 2.5;
	runstats_compute(runs, 9, &opt, &res);
	is_int(res.labels[0].over, 2, "over 2.5 s: 3 and 4 (ok runs only)");
	runstats_result_finish(&res);

	const double bad[] = {101};
	opt = (struct runstats_options){.over_s = NAN, .percentiles = bad, .n_percentiles = 1};
	is_int(runstats_compute(runs, 9, &opt, &res), -EINVAL, "percentile 101: -EINVAL");
	is_str(run_status_name(RUN_STATUS_SIGNALED), "signaled", "status name");
	enum run_status st;
	ok(run_status_parse("timeout", &st) && st == RUN_STATUS_TIMEOUT, "status parse");
	ok(!run_status_parse("Timeout", &st), "status names are exact");
}

/* A log-normal duration around @median (Box-Muller on the seeded generator). */
static double lognormal(double median, double sigma) {
	double u1 = ((double)(rng() >> 11) + 0.5) * 0x1.0p-53;
	double u2 = (double)(rng() >> 11) * 0x1.0p-53;
	return median * exp(sigma * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

static void test_compare(void) {
	// Board B takes 1.2 times as long as board A: independent runs, the true ratio is 1.2.
	*test_rng_state() = 649;
	double a[404], b[300];
	for (size_t i = 0; i < 404; i++) {
		a[i] = lognormal(1627, 0.05);
	}
	for (size_t i = 0; i < 300; i++) {
		b[i] = 1.2 * lognormal(1627, 0.05);
	}
	struct runstats_compare c;
	is_int(runstats_compare(a, 404, b, 300, 95, RUNSTATS_BOOTSTRAP_RESAMPLES,
				RUNSTATS_BOOTSTRAP_SEED, &c),
	       0, "compare");
	printf("# ratio %.5f, 95%% CI [%.5f, %.5f]\n", c.ratio, c.ci_low, c.ci_high);
	ok(c.ci_low < 1.2 && 1.2 < c.ci_high, "the 95% interval covers the true ratio 1.2");
	ok(c.ci_low < c.ratio && c.ratio < c.ci_high, "the ratio lies inside its interval");
	ok(c.ci_high - c.ci_low < 0.03, "404 vs 300 runs: the interval is narrow (< 0.03)");
	is_int(c.n_a, 404, "n_a");
	is_int(c.n_b, 300, "n_b");
	struct runstats_compare again;
	runstats_compare(a, 404, b, 300, 95, RUNSTATS_BOOTSTRAP_RESAMPLES, RUNSTATS_BOOTSTRAP_SEED,
			 &again);
	ok(again.ci_low == c.ci_low && again.ci_high == c.ci_high, "seeded: repeats exactly");

	// Coverage: over 40 data sets of 40 runs a side the 95% interval should miss about 2.
	int covered = 0;
	for (int k = 0; k < 40; k++) {
		double x[40], y[40];
		for (int i = 0; i < 40; i++) {
			x[i] = lognormal(1627, 0.05);
			y[i] = 1.2 * lognormal(1627, 0.05);
		}
		runstats_compare(x, 40, y, 40, 95, 1000, (uint64_t)k, &c);
		covered += c.ci_low <= 1.2 && 1.2 <= c.ci_high;
	}
	printf("# covered 1.2 in %d of 40\n", covered);
	ok(covered >= 32, "coverage of 1.2 near 95% over 40 data sets");

	const double with_nan[] = {NAN, 10, 12}, zero[] = {0, 10};
	is_int(runstats_compare(with_nan, 3, with_nan, 3, 95, 100, 1, &c), 0, "NAN skipped");
	is_int(c.n_a, 2, "NAN not counted");
	is_near(c.ratio, 1, 0, "same data: ratio 1");
	is_int(runstats_compare(zero, 2, a, 4, 95, 100, 1, &c), -EINVAL, "a zero: -EINVAL");
	is_int(runstats_compare(with_nan, 1, a, 4, 95, 100, 1, &c), -ENODATA, "no data: -ENODATA");
	is_int(runstats_compare(a, 4, a, 4, 100, 100, 1, &c), -EINVAL, "level 100: -EINVAL");

	const double sorted[] = {1, 2, 3, 4};
	is_near(runstats_quantile_sorted(sorted, 4, 95), 3.85, 1e-15, "quantile_sorted p95");
	ok(isnan(runstats_quantile_sorted(sorted, 0, 50)), "quantile of nothing: NaN");
}

/* The bootstrap as it was written first: each resample sorted, its type-7 median taken. */
static uint64_t ref_splitmix64(uint64_t *state) {
	uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int ref_cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double ref_median(const double *from, size_t n, double *tmp, uint64_t *state) {
	for (size_t i = 0; i < n; i++) {
		double u = (double)(ref_splitmix64(state) >> 11) * 0x1.0p-53;
		tmp[i] = from[(size_t)(u * (double)n)];
	}
	qsort(tmp, n, sizeof(*tmp), ref_cmp);
	return runstats_quantile_sorted(tmp, n, 50);
}

static void ref_compare(const double *a, size_t na, const double *b, size_t nb, unsigned resamples,
			uint64_t seed, double *lo, double *hi) {
	double *va = xcalloc(na, sizeof(*va)), *vb = xcalloc(nb, sizeof(*vb));
	double *tmp = xcalloc(na + nb, sizeof(*tmp)), *ratios = xcalloc(resamples, sizeof(*ratios));
	memcpy(va, a, na * sizeof(*va));
	memcpy(vb, b, nb * sizeof(*vb));
	qsort(va, na, sizeof(*va), ref_cmp);
	qsort(vb, nb, sizeof(*vb), ref_cmp);
	uint64_t state = seed;
	for (unsigned r = 0; r < resamples; r++) {
		double ma = ref_median(va, na, tmp, &state);
		ratios[r] = ref_median(vb, nb, tmp, &state) / ma;
	}
	qsort(ratios, resamples, sizeof(*ratios), ref_cmp);
	*lo = runstats_quantile_sorted(ratios, resamples, 2.5);
	*hi = runstats_quantile_sorted(ratios, resamples, 97.5);
	free(va);
	free(vb);
	free(tmp);
	free(ratios);
}

/*
 * The interval is the same, bit for bit, as sorting every resample gives: odd and even sizes,
 * one and two values, many ties (a duration at 1 ms repeats), draw for draw.
 */
static void test_bootstrap_exact(void) {
	static const size_t sizes[] = {1, 2, 3, 4, 7, 10, 40, 101, 404, 1071};
	double *a = xcalloc(1071, sizeof(*a)), *b = xcalloc(1071, sizeof(*b));
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], m = n > 3 ? n - 1 : n;
		for (size_t i = 0; i < n; i++) {
			a[i] = lognormal(1627, 0.05);
			b[i] = s % 2 ? floor(1.2 * lognormal(1627, 0.05) / 10) * 10 + 10 // ties
				     : 1.2 * lognormal(1627, 0.05);
		}
		struct runstats_compare c;
		runstats_compare(a, n, b, m, 95, 500, 7 + s, &c);
		double lo, hi;
		ref_compare(a, n, b, m, 500, 7 + s, &lo, &hi);
		char what[80];
		snprintf(what, sizeof(what),
			 "%zu against %zu values: the interval of sorted resamples", n, m);
		ok(c.ci_low == lo && c.ci_high == hi, what);
		if (c.ci_low != lo || c.ci_high != hi) {
			printf("#   got [%.17g, %.17g], want [%.17g, %.17g]\n", c.ci_low, c.ci_high,
			       lo, hi);
		}
	}
	free(a);
	free(b);
}

/* Metrics per label: type 7 on the ok runs' values, a metric of a failed run left out. */
static void test_metrics(void) {
	struct runmetric_set m[5] = {{0}};
	char *err = NULL;
	runmetric_put(&m[0], "latency", 12.5, "ms", &err);
	runmetric_put(&m[0], "tok_s", 30.1, "", &err);
	runmetric_put(&m[1], "latency", 13.5, "ms", &err);
	runmetric_put(&m[2], "tok_s", 29, "", &err);
	runmetric_put(&m[2], "latency", 11, "ms", &err);
	runmetric_put(&m[3], "latency", 99, "ms", &err); // the failed run's
	runmetric_put(&m[4], "tok_s", 31, "", &err);
	const struct runstats_run runs[] = {
		RUN("llm", RUN_STATUS_OK, 10, NAN, NAN, NAN, NAN, NAN, NAN, &m[0]),
		RUN("llm", RUN_STATUS_OK, 11, NAN, NAN, NAN, NAN, NAN, NAN, &m[1]),
		RUN("llm", RUN_STATUS_OK, 12, NAN, NAN, NAN, NAN, NAN, NAN, &m[2]),
		RUN("llm", RUN_STATUS_FAILED, 13, NAN, NAN, NAN, NAN, NAN, NAN, &m[3]),
		RUN("llm", RUN_STATUS_OK, 14, NAN, NAN, NAN, NAN, NAN, NAN, &m[4]),
		RUN("idle", RUN_STATUS_OK, 60, NAN, NAN, NAN, NAN, NAN, NAN, NULL),
	};
	const double pcts[] = {90};
	struct runstats_options opt = {.over_s = NAN, .percentiles = pcts, .n_percentiles = 1};
	struct runstats_result res;
	is_int(runstats_compute(runs, 6, &opt, &res), 0, "metrics computed");
	const struct runstats_label *l = runstats_result_label(&res, "llm");
	is_int(l->n_metrics, 2, "two metrics, by name");
	const struct runstats_metric *lat = runstats_label_metric(l, "latency");
	// numpy: [11, 12.5, 13.5]: mean 12.333.., p50 12.5, p95 13.4, p90 13.3
	ok(lat && lat->n == 3 && lat->p50 == 12.5 && lat->min == 11 && lat->max == 13.5,
	   "latency: the ok runs' three values");
	is_near(lat->p95, 13.4, 1e-12, "latency p95 (type 7)");
	is_near(lat->percentiles[0], 13.3, 1e-12, "latency p90");
	is_near(lat->mean, 37.0 / 3, 1e-15, "latency mean");
	is_str(lat->unit, "ms", "its unit");
	const struct runstats_metric *tok = runstats_label_metric(l, "tok_s");
	ok(tok && tok->n == 3 && tok->min == 29 && tok->max == 31 && tok->p50 == 30.1,
	   "tok_s: three runs carry it");
	is_near(tok->p95, 30.91, 1e-12, "tok_s p95");
	ok(runstats_label_metric(runstats_result_label(&res, "idle"), "latency") == NULL,
	   "a label without metrics has none");
	runstats_result_finish(&res);
	for (int i = 0; i < 5; i++) {
		runmetric_set_finish(&m[i]);
	}
}

int main(void) {
	test_job_log();
	test_groups();
	test_compare();
	test_bootstrap_exact();
	test_metrics();
	return test_done();
}
