/*
 * Run statistics: per-label counts and exact type-7 order statistics (stats.c on quantized
 * values), and a seeded percentile bootstrap for the ratio of two medians (Efron & Tibshirani,
 * "An Introduction to the Bootstrap", ch. 13).
 */
#include "runstats.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "xalloc.h"

/* Two groups' order: by value, the runs without the tag (NULL) last. */
static int cmp_group(const char *a, const char *b) {
	return a && b ? strcmp(a, b) : (a == NULL) - (b == NULL);
}

/* By label, then by group (the --by tag's value). */
static int cmp_run_label(const void *a, const void *b) {
	const struct runstats_run *const *x = a, *const *y = b;
	int c = strcmp((*x)->label, (*y)->label);
	return c ? c : cmp_group((*x)->group, (*y)->group);
}

/*
 * A label's figures, in runstats.h's order, each summarised from one double of the runs: where
 * its summary stands in struct runstats_label and its value in struct runstats_run, its
 * quantization step (exact statistics at it: 10^-places of its RUNSTATS_PLACES_*) and the floor
 * its values must be above (-INFINITY: every finite one).
 */
static const struct figure {
	size_t summary_at, run_at;
	double resolution, floor_v;
} figures[] = {
	{offsetof(struct runstats_label, duration_s), offsetof(struct runstats_run, duration_s),
	 0.001, -INFINITY},
	{offsetof(struct runstats_label, energy_j), offsetof(struct runstats_run, energy_j), 0.001,
	 -INFINITY},
	{offsetof(struct runstats_label, temp_max_c), offsetof(struct runstats_run, temp_max_c),
	 0.001, -INFINITY},
	{offsetof(struct runstats_label, rss_max_bytes),
	 offsetof(struct runstats_run, rss_max_bytes), 1, -INFINITY},
	{offsetof(struct runstats_label, swap_max_bytes),
	 offsetof(struct runstats_run, swap_max_bytes), 1, -INFINITY},
	{offsetof(struct runstats_label, throttled_share),
	 offsetof(struct runstats_run, throttled_share), 1e-6, 0},
	{offsetof(struct runstats_label, loaded_share), offsetof(struct runstats_run, loaded_share),
	 1e-6, 0},
};

static struct runstats_summary *label_summary(struct runstats_label *l, const struct figure *f) {
	return (struct runstats_summary *)((char *)l + f->summary_at);
}

/* The ok runs' values of one figure above @floor (-INFINITY: every finite one). */
static void summarise(struct runstats_summary *s, const struct runstats_run *const *runs, size_t n,
		      size_t offset, double resolution, double floor_v,
		      const struct runstats_options *opt) {
	struct stats_acc acc;
	stats_init(&acc);
	for (size_t i = 0; i < n; i++) {
		double v = *(const double *)((const char *)runs[i] + offset);
		if (runs[i]->status != RUN_STATUS_OK || !isfinite(v) || !(v > floor_v)) {
			continue;
		}
		stats_add(&acc, llround(v / resolution), 0);
	}
	stats_seal(&acc);
	*s = (struct runstats_summary){
		.n = (size_t)acc.count, .p50 = NAN, .p95 = NAN, .max = NAN, .mean = NAN};
	if (opt->n_percentiles) {
		s->percentiles = xcalloc(opt->n_percentiles, sizeof(double));
	}
	for (size_t k = 0; k < opt->n_percentiles; k++) {
		s->percentiles[k] =
			acc.count ? stats_percentile(&acc, opt->percentiles[k], resolution) : NAN;
	}
	if (acc.count > 0) {
		s->p50 = stats_percentile(&acc, 50, resolution);
		s->p95 = stats_percentile(&acc, 95, resolution);
		s->max = stats_value(acc.max_q, resolution);
		s->mean = stats_mean(&acc, resolution);
	}
	stats_finish(&acc);
}

/* One value of a metric of an ok run, for the grouping by name. */
struct metric_value {
	const char *name, *unit;
	double value;
	size_t order; // the run's place: equal names keep the runs' start order
};

static int cmp_metric_value(const void *a, const void *b) {
	const struct metric_value *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* Neumaier's compensated sum: the mean of values of any magnitude, as numpy's (to 1e-15). */
static double compensated_mean(const double *v, size_t n) {
	double sum = 0, c = 0;
	for (size_t i = 0; i < n; i++) {
		double t = sum + v[i];
		c += fabs(sum) >= fabs(v[i]) ? (sum - t) + v[i] : (v[i] - t) + sum;
		sum = t;
	}
	return (sum + c) / (double)n;
}

static int cmp_double(const void *a, const void *b);

/* One metric's values (@n of them, sorted here) into @m. */
static void summarise_metric(struct runstats_metric *m, double *v, size_t n,
			     const struct runstats_options *opt) {
	qsort(v, n, sizeof(*v), cmp_double);
	m->n = n;
	m->mean = compensated_mean(v, n);
	m->p50 = runstats_quantile_sorted(v, n, 50);
	m->p95 = runstats_quantile_sorted(v, n, 95);
	m->min = v[0];
	m->max = v[n - 1];
	if (opt->n_percentiles) {
		m->percentiles = xcalloc(opt->n_percentiles, sizeof(double));
	}
	for (size_t k = 0; k < opt->n_percentiles; k++) {
		m->percentiles[k] = runstats_quantile_sorted(v, n, opt->percentiles[k]);
	}
}

/* Every metric of the ok runs of one label, by name (the unit the first run recorded). */
static void summarise_metrics(struct runstats_label *l, const struct runstats_run *const *runs,
			      size_t n, const struct runstats_options *opt) {
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		total += runs[i]->status == RUN_STATUS_OK && runs[i]->metrics ? runs[i]->metrics->n
									      : 0;
	}
	if (total == 0) {
		return;
	}
	struct metric_value *all = xcalloc(total, sizeof(*all));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct runmetric_set *set = runs[i]->metrics;
		for (size_t m = 0; runs[i]->status == RUN_STATUS_OK && set && m < set->n; m++) {
			all[k] = (struct metric_value){set->m[m].name, set->m[m].unit,
						       set->m[m].value, k};
			k++;
		}
	}
	qsort(all, total, sizeof(*all), cmp_metric_value);
	double *values = xcalloc(total, sizeof(*values));
	size_t cap = 0;
	for (size_t i = 0; i < total;) {
		size_t j = i;
		const char *unit = "";
		while (j < total && strcmp(all[i].name, all[j].name) == 0) {
			unit = *unit ? unit : all[j].unit ? all[j].unit : "";
			values[j - i] = all[j].value;
			j++;
		}
		l->metrics = xgrow(l->metrics, &cap, l->n_metrics + 1, sizeof(*l->metrics));
		struct runstats_metric *m = &l->metrics[l->n_metrics++];
		*m = (struct runstats_metric){.name = xstrdup(all[i].name), .unit = xstrdup(unit)};
		summarise_metric(m, values, j - i, opt);
		i = j;
	}
	free(values);
	free(all);
}

int runstats_compute(const struct runstats_run *runs, size_t n, const struct runstats_options *opt,
		     struct runstats_result *out) {
	*out = (struct runstats_result){0};
	for (size_t k = 0; k < opt->n_percentiles; k++) {
		if (!(opt->percentiles[k] >= 0 && opt->percentiles[k] <= 100)) {
			return -EINVAL;
		}
	}
	const struct runstats_run **sorted = xcalloc(n + 1, sizeof(*sorted));
	for (size_t i = 0; i < n; i++) {
		if (!runs[i].label) {
			free(sorted);
			return -EINVAL;
		}
		sorted[i] = &runs[i];
	}
	qsort(sorted, n, sizeof(*sorted), cmp_run_label);
	size_t cap = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && strcmp(sorted[j]->label, sorted[i]->label) == 0 &&
		       cmp_group(sorted[j]->group, sorted[i]->group) == 0) {
			j++;
		}
		out->labels = xgrow(out->labels, &cap, out->n + 1, sizeof(*out->labels));
		struct runstats_label *l = &out->labels[out->n++];
		*l = (struct runstats_label){.label = xstrdup(sorted[i]->label),
					     .group = sorted[i]->group ? xstrdup(sorted[i]->group)
								       : NULL,
					     .count = j - i};
		for (size_t k = i; k < j; k++) {
			const struct runstats_run *r = sorted[k];
			if ((unsigned)r->status < RUN_STATUS_COUNT) {
				l->by_status[r->status]++;
			}
			if (r->status == RUN_STATUS_OK && r->duration_s > opt->over_s) {
				l->over++; // false for a NAN threshold
			}
			bool energy = isfinite(r->energy_j);
			if (r->status != RUN_STATUS_OK) {
				l->energy_not_ok += energy;
			} else if (!energy) {
				l->energy_missing++;
			} else if (r->energy_coverage < 1) { // false for NAN: unknown counts whole
				l->energy_partial++;
			}
			if (r->status == RUN_STATUS_OK && isfinite(r->throttled_share)) {
				l->throttle_known++;
				l->throttled += r->throttled_share > 0;
			}
			if (r->status == RUN_STATUS_OK && isfinite(r->loaded_share)) {
				l->loaded_known++;
				l->loaded_throttled += r->loaded_share > 0;
				l->loaded_from_board += r->loaded_is_board;
			}
		}
		for (size_t f = 0; f < sizeof(figures) / sizeof(figures[0]); f++) {
			summarise(label_summary(l, &figures[f]), sorted + i, j - i,
				  figures[f].run_at, figures[f].resolution, figures[f].floor_v,
				  opt);
		}
		summarise_metrics(l, sorted + i, j - i, opt);
		i = j;
	}
	free(sorted);
	return 0;
}

const struct runstats_metric *runstats_label_metric(const struct runstats_label *l,
						    const char *name) {
	for (size_t i = 0; i < l->n_metrics; i++) {
		if (strcmp(l->metrics[i].name, name) == 0) {
			return &l->metrics[i];
		}
	}
	return NULL;
}

const struct runstats_label *runstats_result_label(const struct runstats_result *r,
						   const char *label) {
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->labels[i].label, label) == 0) {
			return &r->labels[i];
		}
	}
	return NULL;
}

void runstats_result_finish(struct runstats_result *result) {
	if (!result) {
		return;
	}
	for (size_t i = 0; i < result->n; i++) {
		struct runstats_label *l = &result->labels[i];
		free(l->label);
		free(l->group);
		for (size_t f = 0; f < sizeof(figures) / sizeof(figures[0]); f++) {
			free(label_summary(l, &figures[f])->percentiles);
		}
		for (size_t m = 0; m < l->n_metrics; m++) {
			free(l->metrics[m].name);
			free(l->metrics[m].unit);
			free(l->metrics[m].percentiles);
		}
		free(l->metrics);
	}
	free(result->labels);
	*result = (struct runstats_result){0};
}

/* Type 7 between @a and @b, the values at ranks k and k + 1, at fraction @t of the way. */
static double lerp7(double a, double b, double t) {
	// numpy's _lerp: from the nearer end, so the result stays within [a, b]
	return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

double runstats_quantile_sorted(const double *sorted, size_t n, double p) {
	if (n == 0 || !(p >= 0 && p <= 100)) {
		return NAN;
	}
	double h = (double)(n - 1) * (p / 100);
	size_t k = (size_t)floor(h);
	if (k + 1 >= n) {
		return sorted[n - 1];
	}
	return lerp7(sorted[k], sorted[k + 1], h - (double)k);
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Copies the finite values of @v; false if one is <= 0. */
static bool copy_positive(const double *v, size_t n, double *out, size_t *m) {
	*m = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i])) {
			continue;
		}
		if (!(v[i] > 0) || isinf(v[i])) {
			return false;
		}
		out[(*m)++] = v[i];
	}
	return true;
}

/* splitmix64 (Steele, Lea, Flood 2014): small, seedable, the same on every platform. */
static uint64_t splitmix64(uint64_t *state) {
	uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/*
 * The median of @n values drawn with replacement from @sorted (ascending): the draws are
 * counted per index in @count (n entries), so the resample's ranks k and k + 1 are found by
 * walking the counts, in O(n) instead of sorting it: the same value as sorting the drawn
 * values and taking their type-7 median, draw for draw.
 */
static double resample_median(const double *sorted, size_t n, uint32_t *count, uint64_t *state) {
	memset(count, 0, n * sizeof(*count));
	for (size_t i = 0; i < n; i++) {
		// 53 random bits scaled to [0, n): unbiased to 2^-53 relative
		double u = (double)(splitmix64(state) >> 11) * 0x1.0p-53;
		count[(size_t)(u * (double)n)]++;
	}
	double h = (double)(n - 1) * 0.5;
	size_t k = (size_t)floor(h), seen = 0, j = 0;
	while (seen + count[j] <= k) { // the index holding rank k
		seen += count[j++];
	}
	double a = sorted[j];
	if (k + 1 >= n) {
		return a;
	}
	if (seen + count[j] <= k + 1) { // rank k + 1 lies further on
		seen += count[j++];
		while (count[j] == 0) {
			j++;
		}
	}
	return lerp7(a, sorted[j], h - (double)k);
}

int runstats_compare(const double *a, size_t n_a, const double *b, size_t n_b, double level,
		     unsigned resamples, uint64_t seed, struct runstats_compare *out) {
	*out = (struct runstats_compare){.level = level, .resamples = resamples, .seed = seed};
	if (!(level > 0 && level < 100) || resamples == 0) {
		return -EINVAL;
	}
	double *va = xcalloc(n_a + 1, sizeof(double)), *vb = xcalloc(n_b + 1, sizeof(double));
	uint32_t *count = xcalloc((n_a > n_b ? n_a : n_b) + 1, sizeof(*count));
	double *ratios = xcalloc(resamples, sizeof(double));
	int rc = 0;
	if (!copy_positive(a, n_a, va, &out->n_a) || !copy_positive(b, n_b, vb, &out->n_b)) {
		rc = -EINVAL;
		goto out;
	}
	if (out->n_a == 0 || out->n_b == 0) {
		rc = -ENODATA;
		goto out;
	}
	qsort(va, out->n_a, sizeof(double), cmp_double);
	qsort(vb, out->n_b, sizeof(double), cmp_double);
	out->median_a = runstats_quantile_sorted(va, out->n_a, 50);
	out->median_b = runstats_quantile_sorted(vb, out->n_b, 50);
	out->ratio = out->median_b / out->median_a;
	uint64_t state = seed;
	for (unsigned r = 0; r < resamples; r++) {
		double ma = resample_median(va, out->n_a, count, &state);
		double mb = resample_median(vb, out->n_b, count, &state);
		ratios[r] = mb / ma;
	}
	qsort(ratios, resamples, sizeof(double), cmp_double);
	out->ci_low = runstats_quantile_sorted(ratios, resamples, (100 - level) / 2);
	out->ci_high = runstats_quantile_sorted(ratios, resamples, (100 + level) / 2);
out:
	free(ratios);
	free(count);
	free(vb);
	free(va);
	return rc;
}
