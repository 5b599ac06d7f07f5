/* The metrics of runs: read once for a list or a statistic, and written as JSON (runs-internal.h).
 */
#include "runs-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "xalloc.h"

void runs_percentile_key(double p, char key[40]) {
	char num[32];
	json_format_double(num, p);
	snprintf(key, 40, "p%s", num);
}

/* Adds a stored metric to @m: the rows of one run come together (the scans' order). */
static int add_metric(void *ctx, const struct store_run_metric *metric) {
	struct runs_metrics *m = ctx;
	if (m->n == 0 || m->runs[m->n - 1].id != metric->run_id) {
		m->runs = xgrow(m->runs, &m->cap, m->n + 1, sizeof(*m->runs));
		m->runs[m->n++] = (struct runs_metrics_run){.id = metric->run_id};
	}
	char *err = NULL;
	// Checked when stored; a crafted row that breaks the rules is left out of the answer.
	runmetric_put(&m->runs[m->n - 1].set, metric->name, metric->value, metric->unit, &err);
	free(err);
	return 0;
}

static int cmp_by_id(const void *a, const void *b) {
	int64_t x = ((const struct runs_metrics_run *)a)->id;
	int64_t y = ((const struct runs_metrics_run *)b)->id;
	return (x > y) - (x < y);
}

int runs_metrics_read(struct store *store, const struct store_run_filter *filter,
		      struct runs_metrics *m) {
	*m = (struct runs_metrics){0};
	int rc = store_run_metrics_scan(store, filter, add_metric, m);
	if (m->n > 1) {
		qsort(m->runs, m->n, sizeof(*m->runs), cmp_by_id);
	}
	return rc;
}

int runs_metrics_read_run(struct store *store, int64_t id, struct runs_metrics *m) {
	*m = (struct runs_metrics){0};
	return store_run_metrics_get(store, id, add_metric, m);
}

const struct runmetric_set *runs_metrics_of(const struct runs_metrics *m, int64_t id) {
	if (!m || m->n == 0) {
		return NULL;
	}
	struct runs_metrics_run key = {.id = id};
	const struct runs_metrics_run *r = bsearch(&key, m->runs, m->n, sizeof(key), cmp_by_id);
	return r ? &r->set : NULL;
}

void runs_metrics_finish(struct runs_metrics *m) {
	if (!m) {
		return;
	}
	for (size_t i = 0; i < m->n; i++) {
		runmetric_set_finish(&m->runs[i].set);
	}
	free(m->runs);
	*m = (struct runs_metrics){0};
}

void runs_write_metrics(struct json *j, const struct runmetric_set *set) {
	static const struct runmetric_set none = {0};
	json_key(j, "metrics");
	runmetric_write_json(set ? set : &none, j);
}

void runs_write_metric_summaries(struct json *j, const struct runstats_label *l,
				 const double *percentiles, size_t n_percentiles) {
	json_key(j, "metrics");
	json_array_begin(j);
	for (size_t i = 0; i < l->n_metrics; i++) {
		const struct runstats_metric *m = &l->metrics[i];
		json_object_begin(j);
		json_field_string(j, "name", m->name);
		json_field_string(j, "unit", *m->unit ? m->unit : NULL);
		json_field_int(j, "n", (int64_t)m->n);
		json_field_double(j, "mean", m->mean);
		json_field_double(j, "p50", m->p50);
		json_field_double(j, "p95", m->p95);
		json_field_double(j, "min", m->min);
		json_field_double(j, "max", m->max);
		for (size_t k = 0; k < n_percentiles; k++) {
			char key[40];
			runs_percentile_key(percentiles[k], key);
			json_field_double(j, key, m->percentiles[k]);
		}
		json_object_end(j);
	}
	json_array_end(j);
}
