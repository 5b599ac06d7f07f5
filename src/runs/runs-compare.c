/*
 * The same workload on two boards (runs.h): each board's side read once (its runs, their
 * per-test figures and the verdict's facts), a label of one compared with a label of the other
 * (the ratio of medians with its bootstrap interval, every common metric, the throttle
 * exposure, the fingerprints and the verdict), written as the JSON the CLI and the API share.
 */
#include "runs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boardfacts.h"
#include "json.h"
#include "jsonread.h"
#include "runs-internal.h"
#include "xalloc.h"

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

/* One label's runs of a side: shallow copies of the side's, their strings its own. */
struct label_runs {
	struct runstats_run *runs;
	size_t n;
	const char *fingerprint, *tags; // of the latest ok run (the fingerprint NULL when none)
};

/* The figure of the ok runs of a side (one label's runs) as an array for the bootstrap. */
static double *ok_values(const struct label_runs *set, size_t offset, size_t *n) {
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

static int compare_figure(const struct label_runs *a, const struct label_runs *b, size_t offset,
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
static double *metric_values(const struct label_runs *set, const char *name, size_t *n) {
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
static void compare_metric(const struct label_runs *sa, const struct label_runs *sb,
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
static void compare_metrics(struct runs_compare *c, const struct label_runs *sa,
			    const struct label_runs *sb) {
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
static size_t drop_throttled(struct label_runs *set) {
	size_t kept = 0, ok = 0;
	for (size_t i = 0; i < set->n; i++) {
		struct runstats_run *r = &set->runs[i];
		if (r->loaded_share > 0) { // false for NAN: unknown stays
			ok += r->status == RUN_STATUS_OK;
			continue;
		}
		set->runs[kept++] = *r;
	}
	set->n = kept;
	return ok;
}

/* The statistics of one label's runs, as runs_stats() gives them for the label. */
static int label_stats(const struct label_runs *set, struct runstats_result *out) {
	struct runstats_options ro = {.over_s = NAN};
	runstats_result_finish(out);
	return runstats_compute(set->runs, set->n, &ro, out);
}

/* Leaves the throttled runs out of @set and computes its statistics again into @out. */
static int exclude_throttled(struct runstats_result *out, struct label_runs *set,
			     size_t *excluded) {
	*excluded = drop_throttled(set);
	return label_stats(set, out);
}

/* One side's window in s, for the ambient: [from, to), 0 where the filter leaves it open. */
static void side_window(const struct store_run_filter *f, int64_t *from, int64_t *to) {
	*from = f->has_from ? f->from_ms / 1000 : 0;
	*to = f->has_to ? (f->to_ms + 999) / 1000 : 0;
}

struct runs_side {
	char *name;
	struct runs_set set;        // its runs in the window, with their fingerprints and tags
	struct testfig_result figs; // the per-test figures of every label
	struct verdict_board facts; // the verdict's facts of the board
};

int runs_side_read(struct store *store, const struct store_run_filter *filter, const char *name,
		   struct runs_side **out) {
	struct runs_side *s = *out = xcalloc(1, sizeof(*s));
	s->name = xstrdup(name);
	struct runs_stats_options o = {.filter = *filter, .over_s = NAN};
	o.filter.limit = 0;
	o.filter.by_label = false;
	int rc = runs_set_read(store, &o, &s->set);
	struct testfig_options fo = {.filter = o.filter};
	rc = rc == 0 ? testfig_compute(store, &fo, &s->figs) : rc;
	int64_t from, to;
	side_window(filter, &from, &to);
	return rc == 0 ? verdict_board_read(store, from, to, &s->facts) : rc;
}

void runs_side_destroy(struct runs_side *s) {
	if (!s) {
		return;
	}
	free(s->name);
	runs_set_finish(&s->set);
	testfig_result_finish(&s->figs);
	verdict_board_finish(&s->facts);
	free(s);
}

const struct testfig_result *runs_side_figures(const struct runs_side *s) {
	return &s->figs;
}

const struct verdict_board *runs_side_facts(const struct runs_side *s) {
	return &s->facts;
}

int runs_side_stats(const struct runs_side *s, double over_s, const double *percentiles,
		    size_t n_percentiles, struct runstats_result *out) {
	struct runstats_options ro = {
		.over_s = over_s, .percentiles = percentiles, .n_percentiles = n_percentiles};
	return runstats_compute(s->set.runs, s->set.n, &ro, out);
}

/* The runs of @label in @side (copies; NULL group), the latest ok one's fingerprint and tags. */
static void label_runs_of(const struct runs_side *side, const char *label, struct label_runs *out) {
	const struct runs_set *set = &side->set;
	*out = (struct label_runs){.runs = xcalloc(set->n + 1, sizeof(*out->runs))};
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->runs[i].label, label) != 0) {
			continue;
		}
		out->runs[out->n] = set->runs[i];
		out->runs[out->n++].group = NULL;
		if (set->runs[i].status == RUN_STATUS_OK) {
			out->fingerprint = set->fingerprints[2 * i];
			out->tags = set->fingerprints[2 * i + 1];
		}
	}
}

/* The verdict on the two sides' runs of the label (verdict.h). */
static void judge(const struct runs_side *a, const struct runs_side *b,
		  const struct role_pair *pairs, size_t n_pairs, struct runs_compare *c) {
	struct verdict_side *va = xcalloc(2, sizeof(*va)), *vb = va + 1;
	verdict_side_of(&a->facts, a->name, c->label, c->fig_a, va);
	verdict_side_of(&b->facts, b->name, c->other_label, c->fig_b, vb);
	verdict_judge_paired(va, vb, pairs, n_pairs, &c->verdict);
	free(va);
}

/* The fingerprint and tag differences of the two sides' latest ok runs. */
static void differences(struct runs_compare *c, const struct label_runs *sa,
			const struct label_runs *sb) {
	size_t cap = 0;
	if (!sa->fingerprint != !sb->fingerprint) {
		// One side recorded none (imported runs): one warning, not one per key of the
		// other.
		add_diff(c, &cap, "fingerprint", sa->fingerprint ? "recorded" : NULL,
			 sb->fingerprint ? "recorded" : NULL);
	} else {
		diff_objects(c, &cap, NULL, sa->fingerprint, sb->fingerprint);
	}
	if (strcmp(sa->tags ? sa->tags : "{}", sb->tags ? sb->tags : "{}") != 0) {
		diff_objects(c, &cap, "tags", sa->tags, sb->tags);
	}
}

int runs_compare_sides(const struct runs_side *here, const struct runs_side *other,
		       const char *label, const char *other_label, bool exclude,
		       const struct role_pair *pairs, size_t n_pairs, struct runs_compare *out) {
	const char *la = label, *lb = other_label ? other_label : label;
	*out = (struct runs_compare){
		.label = xstrdup(la), .other_label = xstrdup(lb), .exclude_throttled = exclude};
	struct label_runs sa, sb;
	label_runs_of(here, la, &sa);
	label_runs_of(other, lb, &sb);
	int rc = label_stats(&sa, &out->result_a);
	rc = rc == 0 ? label_stats(&sb, &out->result_b) : rc;
	if (rc < 0) {
		goto out;
	}
	// The exposure of all the ok runs, before any exclusion
	throttle_warnings(out, runstats_result_label(&out->result_a, la),
			  runstats_result_label(&out->result_b, lb));
	if (exclude) {
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
	out->fig_a = testfig_result_label(&here->figs, la, NULL);
	out->fig_b = testfig_result_label(&other->figs, lb, NULL);
	judge(here, other, pairs, n_pairs, out);
	differences(out, &sa, &sb);
out:
	free(sa.runs);
	free(sb.runs);
	return rc;
}

/* A board's name for the verdict: @given, else as its database declares or recorded it, else
 * @fallback. Newly allocated. */
static char *board_name(struct store *store, const char *given, const char *fallback) {
	if (given) {
		return xstrdup(given);
	}
	struct boardfacts f;
	boardfacts_read(store, NULL, &f);
	char *name = xstrdup(f.board.name ? f.board.name : f.model ? f.model : fallback);
	boardfacts_finish(&f);
	return name;
}

int runs_compare(struct store *here, struct store *other, const struct runs_compare_options *opt,
		 struct runs_compare *out) {
	const char *la = opt->label, *lb = opt->other_label ? opt->other_label : opt->label;
	struct store_run_filter fa = opt->here, fb = opt->other;
	fa.label = la;
	fb.label = lb;
	struct runs_side *a = NULL, *b = NULL;
	char *na = board_name(here, opt->name_here, "this board"),
	     *nb = board_name(other, opt->name_other, "the other board");
	if (strcmp(na, nb) == 0) { // two boards of one model: said apart
		char *x = xasprintf("%s (this board)", na), *y = xasprintf("%s (the other)", nb);
		free(na);
		free(nb);
		na = x;
		nb = y;
	}
	int rc = runs_side_read(here, &fa, na, &a);
	if (rc == 0) {
		rc = runs_side_read(other, &fb, nb, &b);
	}
	free(na);
	free(nb);
	if (rc == 0) {
		rc = runs_compare_sides(a, b, la, lb, opt->exclude_throttled, opt->map_channel,
					opt->n_map_channel, out);
		// The figures are the comparison's own from now on: the sides go.
		out->board_a = a->figs;
		out->board_b = b->figs;
		a->figs = b->figs = (struct testfig_result){0};
	} else {
		*out = (struct runs_compare){.label = xstrdup(la), .other_label = xstrdup(lb)};
	}
	runs_side_destroy(a);
	runs_side_destroy(b);
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
	json_field_string(&j, "statistics", RUNS_STATS_METHOD);
	json_field_string(&j, "ratio", "median of the other board over the median of this board");
	json_field_string(&j, "ci",
			  "percentile bootstrap of the ratio of type-7 medians, splitmix64");
	json_field_int(&j, "resamples", c->duration.resamples);
	json_field_int(&j, "seed", (int64_t)c->duration.seed);
	json_object_end(&j);
	json_key(&j, "here");
	runs_write_label(&j, c->a, NULL, NULL);
	json_key(&j, "other_board");
	runs_write_label(&j, c->b, NULL, NULL);
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
