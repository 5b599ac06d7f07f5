/*
 * Runs answers over many runs: per-label statistics (runstats.c over the stored runs) and the
 * same workload on two boards, written as the JSON the CLI and the API share.
 */
#include "runs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonread.h"
#include "runs-internal.h"
#include "runtag.h"
#include "throttle-report.h"
#include "unit.h"
#include "xalloc.h"

/* --- statistics --------------------------------------------------------------------------- */

/* The most swap in use during a run, from its figures' "memory" object; NAN when not kept. */
static double swap_max_of(const struct jsonread_node *figures) {
	const struct jsonread_node *mem = jsonread_get(figures, "memory");
	const struct jsonread_node *v = mem ? jsonread_get(mem, "swap_used_max_bytes") : NULL;
	return v && v->kind == JSONREAD_NUMBER ? v->number : NAN;
}

static int collect(void *ctx, const struct store_run *run) {
	struct runs_set *set = ctx;
	enum run_status status = run->status;
	struct jsonread_node *figures = runs_figures_parse(run->figures); // read once for all
	set->runs = xgrow(set->runs, &set->cap, set->n + 1, sizeof(*set->runs));
	set->runs[set->n++] = (struct runstats_run){
		.label = xstrdup(run->label),
		.status = status,
		.duration_s = run->ended ? (double)(run->end_ms - run->start_ms) / 1000.0 : NAN,
		.energy_j = run->energy_j,
		.energy_coverage = run->energy_coverage,
		.temp_max_c = run->temp_max_c,
		.rss_max_bytes = run->rss_max_bytes,
		.swap_max_bytes = swap_max_of(figures),
		.metrics = runs_metrics_of(&set->metrics, run->id),
		.group = set->by ? runtag_value(run->tags, set->by) : NULL,
	};
	struct throttle_report r;
	struct runs_shares shares;
	runs_run_throttle_parsed(set->episodes, run, figures, &r, &shares);
	throttle_report_finish(&r);
	jsonread_node_free(figures);
	struct runstats_run *added = &set->runs[set->n - 1];
	added->throttled_share = shares.board;
	// Where the loads were not measured, the board's share stands in (and is counted so).
	added->loaded_is_board = isnan(shares.loaded) && isfinite(shares.board);
	added->loaded_share = added->loaded_is_board ? shares.board : shares.loaded;
	set->fingerprints = xgrow(set->fingerprints, &set->cap_text, set->n, 2 * sizeof(char *));
	set->fingerprints[2 * (set->n - 1)] = run->fingerprint ? xstrdup(run->fingerprint) : NULL;
	set->fingerprints[2 * (set->n - 1) + 1] = xstrdup(run->tags ? run->tags : "{}");
	return 0;
}

void runs_set_finish(struct runs_set *set) {
	for (size_t i = 0; i < set->n; i++) {
		free((char *)set->runs[i].label);
		free((char *)set->runs[i].group);
		free(set->fingerprints[2 * i]);
		free(set->fingerprints[2 * i + 1]);
	}
	free(set->runs);
	free(set->fingerprints);
	runs_metrics_finish(&set->metrics);
	*set = (struct runs_set){0};
}

int runs_set_read(struct store *store, const struct runs_stats_options *opt, struct runs_set *set) {
	*set = (struct runs_set){0};
	struct runs_episodes e;
	runs_episodes_read(store, opt->filter.has_from ? opt->filter.from_ms : 0, INT64_MAX / 2,
			   &e);
	set->episodes = &e;
	set->by = opt->by;
	int rc = runs_metrics_read(store, &opt->filter, &set->metrics);
	rc = rc == 0 ? store_runs_scan(store, &opt->filter, collect, set) : rc;
	set->episodes = NULL;
	runs_episodes_finish(&e);
	return rc;
}

int runs_stats(struct store *store, const struct runs_stats_options *opt,
	       struct runstats_result *out) {
	struct runs_set set;
	*out = (struct runstats_result){0};
	int rc = runs_set_read(store, opt, &set);
	if (rc == 0) {
		struct runstats_options ro = {.over_s = opt->over_s,
					      .percentiles = opt->percentiles,
					      .n_percentiles = opt->n_percentiles};
		rc = runstats_compute(set.runs, set.n, &ro, out);
	}
	runs_set_finish(&set);
	return rc;
}

/* The decimals of @p (0 for 95, 1 for 99.9), at most 6. */
static int decimals_of(double p) {
	int d = 0;
	while (d < 6 && fabs(p - round(p)) > 1e-9) {
		p *= 10;
		d++;
	}
	return d;
}

/*
 * A figure's summary over a label's runs as the member @key; null when no run has it. Its
 * values are integer multiples of 10^-@places (runstats' quantum): the maximum has those
 * places, a type-7 percentile at most two more (three for a p with one decimal...), written
 * exactly; the mean three more. No float noise either way.
 */
static void write_summary(struct json *j, const char *key, const struct runstats_summary *s,
			  int places, const struct runs_stats_options *opt) {
	if (s->n == 0) {
		json_field_null(j, key);
		return;
	}
	json_key(j, key);
	json_object_begin(j);
	json_field_int(j, "n", (int64_t)s->n);
	json_field_decimal(j, "p50", s->p50, places + 2);
	json_field_decimal(j, "p95", s->p95, places + 2);
	json_field_decimal(j, "max", s->max, places);
	json_field_decimal(j, "mean", s->mean, places + 3);
	for (size_t k = 0; opt && k < opt->n_percentiles; k++) {
		char pkey[40];
		runs_percentile_key(opt->percentiles[k], pkey);
		json_field_decimal(j, pkey, s->percentiles[k],
				   places + 2 + decimals_of(opt->percentiles[k]));
	}
	json_object_end(j);
}

void runs_write_label(struct json *j, const struct runstats_label *l,
		      const struct testfig_result *board, const struct runs_stats_options *opt) {
	json_object_begin(j);
	json_field_string(j, "label", l->label);
	if (opt && opt->by) {
		json_key(j, "by");
		json_object_begin(j);
		json_field_string(j, "tag", opt->by);
		json_field_string(j, "value", l->group);
		json_object_end(j);
	}
	json_field_int(j, "count", (int64_t)l->count);
	for (int s = 0; s < RUN_STATUS_COUNT; s++) {
		json_field_int(j, run_status_name((enum run_status)s), (int64_t)l->by_status[s]);
	}
	json_field_int(j, "over", (int64_t)l->over);
	write_summary(j, "duration_s", &l->duration_s, RUNSTATS_PLACES_DURATION, opt);
	write_summary(j, "energy_j", &l->energy_j, RUNSTATS_PLACES_ENERGY, opt);
	json_field_int(j, "energy_partial", (int64_t)l->energy_partial);
	json_field_int(j, "energy_missing", (int64_t)l->energy_missing);
	json_field_int(j, "energy_not_ok", (int64_t)l->energy_not_ok);
	write_summary(j, "temp_max_c", &l->temp_max_c, RUNSTATS_PLACES_TEMP, opt);
	write_summary(j, "rss_max_bytes", &l->rss_max_bytes, RUNSTATS_PLACES_BYTES, opt);
	write_summary(j, "swap_max_bytes", &l->swap_max_bytes, RUNSTATS_PLACES_BYTES, opt);
	json_key(j, "throttle");
	if (l->throttle_known == 0) {
		json_null(j); // no ok run whose throttling is known
	} else {
		json_object_begin(j);
		json_field_int(j, "runs", (int64_t)l->throttle_known);
		json_field_int(j, "throttled", (int64_t)l->throttled);
		json_field_double(j, "throttled_ratio",
				  (double)l->throttled / (double)l->throttle_known);
		write_summary(j, "share", &l->throttled_share, RUNSTATS_PLACES_SHARE, opt);
		// The share of the domains each run loaded: what its own work felt.
		json_key(j, "loaded");
		json_object_begin(j);
		json_field_int(j, "runs", (int64_t)l->loaded_known);
		json_field_int(j, "throttled", (int64_t)l->loaded_throttled);
		json_field_double(j, "throttled_ratio",
				  l->loaded_known
					  ? (double)l->loaded_throttled / (double)l->loaded_known
					  : NAN);
		write_summary(j, "share", &l->loaded_share, RUNSTATS_PLACES_SHARE, opt);
		json_field_int(j, "board_share_used", (int64_t)l->loaded_from_board);
		json_object_end(j);
		json_object_end(j);
	}
	runs_write_metric_summaries(j, l, opt ? opt->percentiles : NULL,
				    opt ? opt->n_percentiles : 0);
	if (board) {
		const struct testfig_label *f = testfig_result_label(board, l->label, l->group);
		json_key(j, "board");
		if (f) {
			testfig_write_json(f, j);
		} else {
			json_null(j);
		}
	}
	json_object_end(j);
}

int runs_board(struct store *store, const struct runs_stats_options *opt,
	       struct testfig_result *out) {
	struct testfig_options o = {.filter = opt->filter, .by = opt->by};
	return testfig_compute(store, &o, out);
}

void runs_stats_write_json(const struct runstats_result *r, const struct testfig_result *board,
			   const struct runs_stats_options *opt, bool pretty, struct buf *out) {
	struct json j;
	json_init(&j, out, pretty);
	json_object_begin(&j);
	json_field_string(&j, "method", RUNS_STATS_METHOD);
	json_field_double(&j, "over_s", opt->over_s);
	json_key(&j, "labels");
	json_array_begin(&j);
	for (size_t i = 0; i < r->n; i++) {
		runs_write_label(&j, &r->labels[i], board, opt);
	}
	json_array_end(&j);
	json_object_end(&j);
}

void runs_stats_summary_line(const struct runstats_label *l, double over_s, struct buf *out) {
	size_t ok = l->by_status[RUN_STATUS_OK];
	buf_printf(out, "%zu attempts, %zu completed", l->count, ok);
	static const enum run_status others[] = {RUN_STATUS_FAILED, RUN_STATUS_SIGNALED,
						 RUN_STATUS_TIMEOUT, RUN_STATUS_LOST,
						 RUN_STATUS_RUNNING};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		if (l->by_status[others[i]] > 0 || others[i] == RUN_STATUS_FAILED) {
			buf_printf(out, ", %zu %s", l->by_status[others[i]],
				   run_status_name(others[i]));
		}
	}
	if (l->duration_s.n > 0) {
		buf_printf(out, "; completed runs p50 %.2f s, p95 %.2f s, max %.2f s",
			   l->duration_s.p50, l->duration_s.p95, l->duration_s.max);
	}
	if (isfinite(over_s) && ok > 0) {
		buf_printf(out, "; %zu run%s (%.2f %%) over ", l->over, l->over == 1 ? "" : "s",
			   100.0 * (double)l->over / (double)ok);
		char thr[32];
		unit_duration(thr, sizeof(thr), over_s);
		buf_puts(out, thr);
	}
	if (l->throttle_known > 0) {
		buf_printf(out, "; throttled in %zu of %zu ok runs (%.2f %%)", l->throttled,
			   l->throttle_known,
			   100.0 * (double)l->throttled / (double)l->throttle_known);
		if (l->throttled_share.n > 0) {
			buf_printf(out, ", median throttled share %.2f %%",
				   100.0 * l->throttled_share.p50);
		}
		buf_printf(out,
			   " (the board: any domain); the domains they loaded in %zu (%.2f %%)",
			   l->loaded_throttled,
			   100.0 * (double)l->loaded_throttled / (double)l->loaded_known);
		if (l->loaded_share.n > 0) {
			buf_printf(out, ", median share %.2f %%", 100.0 * l->loaded_share.p50);
		}
		if (l->loaded_from_board > 0) {
			buf_printf(out, " (the board's for %zu runs without load figures)",
				   l->loaded_from_board);
		}
	}
}
