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
#include "xalloc.h"

/* --- statistics --------------------------------------------------------------------------- */

struct run_set {
	struct runstats_run *runs;
	size_t n, cap;
	const struct runs_episodes *episodes; // for each run's throttled share
	char *fingerprint;                    // of the latest ok run (scan order is start order)
	char *tags;
	struct runs_metrics metrics; // of every run in the set
	const char *by;              // the tag the runs are grouped by, or NULL
};

/* The most swap in use during a run, from its figures' "memory" object; NAN when not kept. */
static double swap_max_of(const char *figures) {
	if (!figures) {
		return NAN;
	}
	struct jsonread_error err;
	size_t len = strlen(figures);
	struct jsonread_node *tree = jsonread_parse(figures, len, len, &err);
	const struct jsonread_node *mem = tree ? jsonread_get(tree, "memory") : NULL;
	const struct jsonread_node *v = mem ? jsonread_get(mem, "swap_used_max_bytes") : NULL;
	double swap = v && v->kind == JSONREAD_NUMBER ? v->number : NAN;
	jsonread_node_free(tree);
	return swap;
}

static int collect(void *ctx, const struct store_run *run) {
	struct run_set *set = ctx;
	enum run_status status = run->status;
	set->runs = xgrow(set->runs, &set->cap, set->n + 1, sizeof(*set->runs));
	set->runs[set->n++] = (struct runstats_run){
		.label = xstrdup(run->label),
		.status = status,
		.duration_s = run->ended ? (double)(run->end_ms - run->start_ms) / 1000.0 : NAN,
		.energy_j = run->energy_j,
		.energy_coverage = run->energy_coverage,
		.temp_max_c = run->temp_max_c,
		.rss_max_bytes = run->rss_max_bytes,
		.swap_max_bytes = swap_max_of(run->figures),
		.metrics = runs_metrics_of(&set->metrics, run->id),
		.group = set->by ? runtag_value(run->tags, set->by) : NULL,
	};
	struct throttle_report r;
	struct runs_shares shares;
	runs_run_throttle(set->episodes, run, &r, &shares);
	throttle_report_finish(&r);
	struct runstats_run *added = &set->runs[set->n - 1];
	added->throttled_share = shares.board;
	// Where the loads were not measured, the board's share stands in (and is counted so).
	added->loaded_is_board = isnan(shares.loaded) && isfinite(shares.board);
	added->loaded_share = added->loaded_is_board ? shares.board : shares.loaded;
	if (status == RUN_STATUS_OK) {
		free(set->fingerprint);
		free(set->tags);
		set->fingerprint = run->fingerprint ? xstrdup(run->fingerprint) : NULL;
		set->tags = xstrdup(run->tags ? run->tags : "{}");
	}
	return 0;
}

static void run_set_finish(struct run_set *set) {
	for (size_t i = 0; i < set->n; i++) {
		free((char *)set->runs[i].label);
		free((char *)set->runs[i].group);
	}
	free(set->runs);
	free(set->fingerprint);
	free(set->tags);
	runs_metrics_finish(&set->metrics);
	*set = (struct run_set){0};
}

static int stats_of(struct store *store, const struct runs_stats_options *opt,
		    struct runstats_result *out, struct run_set *set) {
	struct runs_episodes e;
	runs_episodes_read(store, opt->filter.has_from ? opt->filter.from_ms : 0, INT64_MAX / 2,
			   &e);
	set->episodes = &e;
	set->by = opt->by;
	int rc = runs_metrics_read(store, &opt->filter, &set->metrics);
	rc = rc == 0 ? store_runs_scan(store, &opt->filter, collect, set) : rc;
	set->episodes = NULL;
	runs_episodes_finish(&e);
	if (rc < 0) {
		return rc;
	}
	struct runstats_options ro = {.over_s = opt->over_s,
				      .percentiles = opt->percentiles,
				      .n_percentiles = opt->n_percentiles};
	return runstats_compute(set->runs, set->n, &ro, out);
}

int runs_stats(struct store *store, const struct runs_stats_options *opt,
	       struct runstats_result *out) {
	struct run_set set = {0};
	*out = (struct runstats_result){0};
	int rc = stats_of(store, opt, out, &set);
	run_set_finish(&set);
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

static void write_label(struct json *j, const struct runstats_label *l,
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

#define STATS_METHOD                                                                               \
	"exact type-7 percentiles (numpy linear) and mean over the ok runs that have the figure, " \
	"at 1 ms, 1 mJ, 0.001 C and 1 byte; metrics type 7 on their values as given"

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
	json_field_string(&j, "method", STATS_METHOD);
	json_field_double(&j, "over_s", opt->over_s);
	json_key(&j, "labels");
	json_array_begin(&j);
	for (size_t i = 0; i < r->n; i++) {
		write_label(&j, &r->labels[i], board, opt);
	}
	json_array_end(&j);
	json_object_end(&j);
}

/* "30 minutes", "2 hours", "90 s": how a threshold reads in a sentence. */
static void format_threshold(double s, struct buf *out) {
	double whole = floor(s);
	if (whole == s && s >= 3600 && fmod(s, 3600) == 0) {
		buf_printf(out, "%.0f hour%s", s / 3600, s == 3600 ? "" : "s");
	} else if (whole == s && s >= 60 && fmod(s, 60) == 0) {
		buf_printf(out, "%.0f minute%s", s / 60, s == 60 ? "" : "s");
	} else {
		buf_printf(out, "%g s", s);
	}
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
		format_threshold(over_s, out);
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

/* --- compare ------------------------------------------------------------------------------ */

/* A top-level member of a stored JSON object: its key and its value written compact. */
struct member {
	const char *key; // borrowed from the tree
	char *value;
};

/*
 * The top-level members of the stored JSON object @text (NULL, or not an object: none), each
 * value written back by jsonread_write(), so that only a different value differs.
 */
static size_t members_of(const char *text, struct jsonread_node **tree, struct member **out) {
	struct jsonread_error err;
	size_t len = text ? strlen(text) : 0;
	*tree = text ? jsonread_parse(text, len, len, &err) : NULL;
	*out = NULL;
	if (!*tree || (*tree)->kind != JSONREAD_OBJECT) {
		return 0;
	}
	size_t n = (*tree)->n / 2;
	*out = xcalloc(n + 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		struct buf value;
		buf_init(&value);
		struct json j;
		json_init(&j, &value, false);
		jsonread_write(&j, (*tree)->items[2 * i + 1]);
		(*out)[i] = (struct member){(*tree)->items[2 * i]->text, buf_steal(&value)};
	}
	return n;
}

static void members_free(struct jsonread_node *tree, struct member *m, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(m[i].value);
	}
	free(m);
	jsonread_node_free(tree);
}

static const char *member_value(const struct member *m, size_t n, const char *key) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].key, key) == 0) {
			return m[i].value;
		}
	}
	return NULL;
}

static void add_diff(struct runs_compare *c, size_t *cap, const char *key, const char *here,
		     const char *other) {
	c->diffs = xgrow(c->diffs, cap, c->n_diffs + 1, sizeof(*c->diffs));
	c->diffs[c->n_diffs++] = (struct runs_difference){
		xstrdup(key), xstrdup(here ? here : "none"), xstrdup(other ? other : "none")};
}

/* One warning per top-level key whose value differs, keys of either side. */
static void diff_objects(struct runs_compare *c, size_t *cap, const char *prefix, const char *a,
			 const char *b) {
	struct member *ma, *mb;
	struct jsonread_node *ta, *tb;
	size_t na = members_of(a, &ta, &ma), nb = members_of(b, &tb, &mb);
	for (size_t i = 0; i < na + nb; i++) {
		const struct member *m = i < na ? &ma[i] : &mb[i - na];
		if (i >= na && member_value(ma, na, m->key)) {
			continue; // compared from A's side
		}
		const char *va = member_value(ma, na, m->key), *vb = member_value(mb, nb, m->key);
		if (!va || !vb || strcmp(va, vb) != 0) {
			char *key = prefix ? xasprintf("%s.%s", prefix, m->key) : xstrdup(m->key);
			add_diff(c, cap, key, va, vb);
			free(key);
		}
	}
	members_free(ta, ma, na);
	members_free(tb, mb, nb);
}

/* The figure of the ok runs of a side (one label's runs) as an array for the bootstrap. */
static double *ok_values(const struct run_set *set, size_t offset, size_t *n) {
	double *v = xcalloc(set->n + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct runstats_run *r = &set->runs[i];
		double x = *(const double *)((const char *)r + offset);
		if (r->status == RUN_STATUS_OK && isfinite(x)) {
			v[(*n)++] = x;
		}
	}
	return v;
}

static int compare_figure(const struct run_set *a, const struct run_set *b, size_t offset,
			  struct runstats_compare *out) {
	size_t na, nb;
	double *va = ok_values(a, offset, &na), *vb = ok_values(b, offset, &nb);
	int rc = runstats_compare(va, na, vb, nb, 95, RUNSTATS_BOOTSTRAP_RESAMPLES,
				  RUNSTATS_BOOTSTRAP_SEED, out);
	free(va);
	free(vb);
	return rc;
}

/* The values of metric @name of the ok runs of a side, for the bootstrap. */
static double *metric_values(const struct run_set *set, const char *name, size_t *n) {
	double *v = xcalloc(set->n + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct runstats_run *r = &set->runs[i];
		const struct runmetric *m = r->metrics && r->status == RUN_STATUS_OK
						    ? runmetric_find(r->metrics, name)
						    : NULL;
		if (m) {
			v[(*n)++] = m->value;
		}
	}
	return v;
}

/* One metric of either side (NULL where the side has none) compared as the duration is. */
static void compare_metric(const struct run_set *sa, const struct run_set *sb,
			   const struct runstats_metric *a, const struct runstats_metric *b,
			   struct runs_compare_metric *out) {
	*out = (struct runs_compare_metric){.name = xstrdup(a ? a->name : b->name),
					    .unit_a = xstrdup(a ? a->unit : ""),
					    .unit_b = xstrdup(b ? b->unit : ""),
					    .n_a = a ? a->n : 0,
					    .n_b = b ? b->n : 0};
	if (!a || !b) {
		out->note = a ? "only here" : "only on the other board";
		return;
	}
	if (strcmp(a->unit, b->unit) != 0) {
		out->note = "the boards record it in different units";
		return;
	}
	size_t na, nb;
	double *va = metric_values(sa, a->name, &na), *vb = metric_values(sb, a->name, &nb);
	out->has_ratio = runstats_compare(va, na, vb, nb, 95, RUNSTATS_BOOTSTRAP_RESAMPLES,
					  RUNSTATS_BOOTSTRAP_SEED, &out->ratio) == 0;
	out->note = out->has_ratio ? NULL : "not every value is positive: no ratio of medians";
	free(va);
	free(vb);
}

/* Every metric of either side's ok runs of the label, by name. */
static void compare_metrics(struct runs_compare *c, const struct run_set *sa,
			    const struct run_set *sb) {
	const struct runstats_label *a = c->a, *b = c->b;
	c->metrics = xcalloc(a->n_metrics + b->n_metrics + 1, sizeof(*c->metrics));
	for (size_t i = 0, k = 0; i < a->n_metrics || k < b->n_metrics;) {
		int order = i == a->n_metrics   ? 1
			    : k == b->n_metrics ? -1
						: strcmp(a->metrics[i].name, b->metrics[k].name);
		compare_metric(sa, sb, order <= 0 ? &a->metrics[i] : NULL,
			       order >= 0 ? &b->metrics[k] : NULL, &c->metrics[c->n_metrics++]);
		i += order <= 0;
		k += order >= 0;
	}
}

static void add_warning(struct runs_compare *c, size_t *cap, char *text) {
	c->warnings = xgrow(c->warnings, cap, c->n_warnings + 1, sizeof(*c->warnings));
	c->warnings[c->n_warnings++] = text;
}

/* "throttled in 3 of 10 ok runs, median throttled share 12.50 %" of one side. */
static char *exposure_text(const struct runstats_label *l) {
	if (l->loaded_throttled == 0) {
		return xasprintf("loaded domains throttled in none of %zu ok runs",
				 l->loaded_known);
	}
	return xasprintf("loaded domains throttled in %zu of %zu ok runs, median throttled share "
			 "%.2f %%",
			 l->loaded_throttled, l->loaded_known, 100.0 * l->loaded_share.p50);
}

/* The warnings on the two sides' throttle exposure (runs_compare() says the rule). */
static void throttle_warnings(struct runs_compare *c, const struct runstats_label *a,
			      const struct runstats_label *b) {
	size_t cap = 0;
	if (!a || !b || (a->loaded_known == 0 && b->loaded_known == 0)) {
		return; // neither side knows: nothing to tell apart
	}
	if (a->loaded_known == 0 || b->loaded_known == 0) {
		add_warning(c, &cap,
			    xasprintf("throttling is not known %s (no throttle episodes kept for "
				      "its ok runs): the sides may differ in it",
				      a->loaded_known == 0 ? "here" : "on the other board"));
		return;
	}
	bool differs = (a->loaded_throttled == 0) != (b->loaded_throttled == 0);
	if (!differs && a->loaded_throttled > 0) {
		double lo = fmin(a->loaded_share.p50, b->loaded_share.p50);
		double hi = fmax(a->loaded_share.p50, b->loaded_share.p50);
		differs = hi > RUNS_COMPARE_SHARE_RATIO * lo && hi - lo >= RUNS_COMPARE_SHARE_APART;
	}
	if (differs) {
		char *ta = exposure_text(a), *tb = exposure_text(b);
		add_warning(c, &cap,
			    xasprintf("throttle exposure differs: %s here, %s on the other board%s",
				      ta, tb,
				      c->exclude_throttled ? ""
							   : " (--exclude-throttled compares "
							     "the unthrottled runs)"));
		free(ta);
		free(tb);
	}
}

/* Leaves the runs of @set throttled at all out of it; returns how many ok runs went. */
static size_t drop_throttled(struct run_set *set) {
	size_t kept = 0, ok = 0;
	for (size_t i = 0; i < set->n; i++) {
		struct runstats_run *r = &set->runs[i];
		if (r->loaded_share > 0) { // false for NAN: unknown stays
			ok += r->status == RUN_STATUS_OK;
			free((char *)r->label);
			free((char *)r->group);
			continue;
		}
		set->runs[kept++] = *r;
	}
	set->n = kept;
	return ok;
}

/* Leaves the throttled runs out of @set and computes its statistics again into @out. */
static int exclude_throttled(struct runstats_result *out, struct run_set *set, size_t *excluded) {
	*excluded = drop_throttled(set);
	struct runstats_options ro = {.over_s = NAN};
	runstats_result_finish(out);
	return runstats_compute(set->runs, set->n, &ro, out);
}

/* One side's window in s, for the ambient: [from, to), 0 where the filter leaves it open. */
static void side_window(const struct store_run_filter *f, int64_t *from, int64_t *to) {
	*from = f->has_from ? f->from_ms / 1000 : 0;
	*to = f->has_to ? (f->to_ms + 999) / 1000 : 0;
}

/* Each side's per-test figures of its label, and the verdict on the two. */
static int compare_boards(struct store *here, struct store *other,
			  const struct runs_compare_options *opt, struct runs_compare *c) {
	struct testfig_options fa = {.filter = opt->here}, fb = {.filter = opt->other};
	fa.filter.label = c->label;
	fb.filter.label = c->other_label;
	int rc = testfig_compute(here, &fa, &c->board_a);
	rc = rc == 0 ? testfig_compute(other, &fb, &c->board_b) : rc;
	if (rc < 0) {
		return rc;
	}
	c->fig_a = testfig_result_label(&c->board_a, c->label, NULL);
	c->fig_b = testfig_result_label(&c->board_b, c->other_label, NULL);
	struct verdict_side *a = xcalloc(2, sizeof(*a)), *b = a + 1;
	int64_t from, to;
	side_window(&opt->here, &from, &to);
	rc = verdict_side_read(here, opt->name_here ? opt->name_here : "this board", from, to,
			       c->label, c->fig_a, a);
	side_window(&opt->other, &from, &to);
	rc = rc == 0 ? verdict_side_read(other,
					 opt->name_other ? opt->name_other : "the other board",
					 from, to, c->other_label, c->fig_b, b)
		     : rc;
	if (rc == 0) {
		verdict_judge(a, b, &c->verdict);
	}
	free(a);
	return rc;
}

/* One side's statistics: the runs of @label its @filter selects. */
static int side_stats(struct store *store, const struct store_run_filter *filter, const char *label,
		      struct runstats_result *out, struct run_set *set) {
	struct runs_stats_options opt = {.filter = *filter, .over_s = NAN};
	opt.filter.label = label;
	opt.filter.limit = 0;
	opt.filter.by_label = false;
	return stats_of(store, &opt, out, set);
}

int runs_compare(struct store *here, struct store *other, const struct runs_compare_options *opt,
		 struct runs_compare *out) {
	const char *la = opt->label, *lb = opt->other_label ? opt->other_label : opt->label;
	*out = (struct runs_compare){.label = xstrdup(la),
				     .other_label = xstrdup(lb),
				     .exclude_throttled = opt->exclude_throttled};
	struct run_set sa = {0}, sb = {0};
	int rc = side_stats(here, &opt->here, la, &out->result_a, &sa);
	if (rc == 0) {
		rc = side_stats(other, &opt->other, lb, &out->result_b, &sb);
	}
	if (rc < 0) {
		goto out;
	}
	// The exposure of all the ok runs, before any exclusion
	throttle_warnings(out, runstats_result_label(&out->result_a, la),
			  runstats_result_label(&out->result_b, lb));
	if (opt->exclude_throttled) {
		rc = exclude_throttled(&out->result_a, &sa, &out->excluded_a);
		rc = rc == 0 ? exclude_throttled(&out->result_b, &sb, &out->excluded_b) : rc;
		if (rc < 0) {
			goto out;
		}
	}
	out->a = runstats_result_label(&out->result_a, la);
	out->b = runstats_result_label(&out->result_b, lb);
	if (!out->a || !out->b || out->a->duration_s.n == 0 || out->b->duration_s.n == 0) {
		rc = -ENODATA;
		goto out;
	}
	rc = compare_figure(&sa, &sb, offsetof(struct runstats_run, duration_s), &out->duration);
	if (rc < 0) {
		goto out;
	}
	out->has_duration = true;
	// Energy is compared only when both boards measured it; a missing meter is no error.
	out->has_energy = compare_figure(&sa, &sb, offsetof(struct runstats_run, energy_j),
					 &out->energy) == 0;
	compare_metrics(out, &sa, &sb);
	if ((rc = compare_boards(here, other, opt, out)) < 0) {
		goto out;
	}
	size_t cap = 0;
	if (!sa.fingerprint != !sb.fingerprint) {
		// One side recorded none (imported runs): one warning, not one per key of the
		// other.
		add_diff(out, &cap, "fingerprint", sa.fingerprint ? "recorded" : NULL,
			 sb.fingerprint ? "recorded" : NULL);
	} else {
		diff_objects(out, &cap, NULL, sa.fingerprint, sb.fingerprint);
	}
	if (strcmp(sa.tags ? sa.tags : "{}", sb.tags ? sb.tags : "{}") != 0) {
		diff_objects(out, &cap, "tags", sa.tags, sb.tags);
	}
out:
	run_set_finish(&sa);
	run_set_finish(&sb);
	return rc;
}

void runs_compare_finish(struct runs_compare *c) {
	testfig_result_finish(&c->board_a);
	testfig_result_finish(&c->board_b);
	verdict_finish(&c->verdict);
	free(c->label);
	free(c->other_label);
	runstats_result_finish(&c->result_a);
	runstats_result_finish(&c->result_b);
	for (size_t i = 0; i < c->n_diffs; i++) {
		free(c->diffs[i].key);
		free(c->diffs[i].here);
		free(c->diffs[i].other);
	}
	free(c->diffs);
	for (size_t i = 0; i < c->n_warnings; i++) {
		free(c->warnings[i]);
	}
	free(c->warnings);
	for (size_t i = 0; i < c->n_metrics; i++) {
		free(c->metrics[i].name);
		free(c->metrics[i].unit_a);
		free(c->metrics[i].unit_b);
	}
	free(c->metrics);
	*c = (struct runs_compare){0};
}

/* The ratio of a figure's medians on two boards as the member @key; null when not known. */
static void write_ratio(struct json *j, const char *key, const struct runstats_compare *r,
			bool has) {
	if (!has) {
		json_field_null(j, key);
		return;
	}
	json_key(j, key);
	json_object_begin(j);
	json_field_double(j, "median_here", r->median_a);
	json_field_double(j, "median_other", r->median_b);
	json_field_double(j, "ratio", r->ratio);
	json_field_double(j, "ci_low", r->ci_low);
	json_field_double(j, "ci_high", r->ci_high);
	json_field_double(j, "level", r->level);
	json_object_end(j);
}

void runs_compare_write_json(const struct runs_compare *c, const char *other_name, bool pretty,
			     struct buf *out) {
	struct json j;
	json_init(&j, out, pretty);
	json_object_begin(&j);
	json_field_string(&j, "label", c->label);
	json_field_string(&j, "other_label", c->other_label);
	json_field_string(&j, "other", other_name);
	json_key(&j, "verdict");
	verdict_write_json(&c->verdict, &j);
	json_key(&j, "method");
	json_object_begin(&j);
	json_field_string(&j, "statistics", STATS_METHOD);
	json_field_string(&j, "ratio", "median of the other board over the median of this board");
	json_field_string(&j, "ci",
			  "percentile bootstrap of the ratio of type-7 medians, splitmix64");
	json_field_int(&j, "resamples", c->duration.resamples);
	json_field_int(&j, "seed", (int64_t)c->duration.seed);
	json_object_end(&j);
	json_key(&j, "here");
	write_label(&j, c->a, NULL, NULL);
	json_key(&j, "other_board");
	write_label(&j, c->b, NULL, NULL);
	write_ratio(&j, "duration_s", &c->duration, c->has_duration);
	write_ratio(&j, "energy_j", &c->energy, c->has_energy);
	json_key(&j, "metrics");
	json_array_begin(&j);
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct runs_compare_metric *m = &c->metrics[i];
		json_object_begin(&j);
		json_field_string(&j, "name", m->name);
		json_field_string(&j, "unit_here", *m->unit_a ? m->unit_a : NULL);
		json_field_string(&j, "unit_other", *m->unit_b ? m->unit_b : NULL);
		json_field_int(&j, "n_here", (int64_t)m->n_a);
		json_field_int(&j, "n_other", (int64_t)m->n_b);
		write_ratio(&j, "ratio", &m->ratio, m->has_ratio);
		json_field_string(&j, "note", m->note);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "warnings");
	json_array_begin(&j);
	for (size_t i = 0; i < c->n_diffs; i++) {
		struct buf w;
		buf_init(&w);
		buf_printf(&w, "%s differs: %s here, %s on the other board", c->diffs[i].key,
			   c->diffs[i].here, c->diffs[i].other);
		json_string(&j, w.data);
		buf_finish(&w);
	}
	for (size_t i = 0; i < c->n_warnings; i++) {
		json_string(&j, c->warnings[i]);
	}
	json_array_end(&j);
	json_key(&j, "board_here");
	if (c->fig_a) {
		testfig_write_json(c->fig_a, &j);
	} else {
		json_null(&j);
	}
	json_key(&j, "board_other");
	if (c->fig_b) {
		testfig_write_json(c->fig_b, &j);
	} else {
		json_null(&j);
	}
	json_key(&j, "excluded_throttled");
	if (c->exclude_throttled) {
		json_object_begin(&j);
		json_field_int(&j, "here", (int64_t)c->excluded_a);
		json_field_int(&j, "other_board", (int64_t)c->excluded_b);
		json_object_end(&j);
	} else {
		json_null(&j);
	}
	json_object_end(&j);
}
