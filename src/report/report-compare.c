/*
 * The report's sections of two boards (report-doc.c lays out the rest): the verdict, the zones,
 * clocks and memory of both boards side by side (paired by role, report.c), the runs compared as
 * `runs compare` computes them, each label's per-test figures side by side, and both boards'
 * peaks on one time axis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "report-internal.h"
#include "stats.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

static void ratio(struct report_block *t, size_t col, double b, double a) {
	report_num(t, col, a != 0 ? b / a : NAN, 3);
}

/* Whether slot @k of the first board, of @kind, has a counterpart with samples to compare. */
static ssize_t counterpart(const struct report *rep, size_t k, enum channel_kind kind) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	ssize_t o = rep->pair[k];
	bool clock = kind == CHANNEL_KIND_FREQUENCY;
	if (o < 0 || a->stats.acc[k].count == 0 || b->stats.acc[o].count == 0 ||
	    (clock && (!report_clock_sampled(&a->stats, k) ||
		       !report_clock_sampled(&b->stats, (size_t)o)))) {
		return -1;
	}
	return o;
}

/* The part column: "big-core zone (role)", or "same key" for one paired by its name. */
static void part_cell(struct report_block *t, size_t col, const struct report *rep, size_t k) {
	enum role r = rep->boards[0].roles[k];
	const char *why = rep->pair_why[k];
	if (why && strcmp(why, "map") == 0) {
		report_cell(t, col, "--map-channel");
	} else if (r != ROLE_NONE) {
		report_cell(t, col, "%s", role_text(r));
	} else {
		report_cell(t, col, "same key");
	}
}

/*
 * Channels of @kind on both boards side by side, each with its counterpart (report.c pairs
 * them: by hand, by role, by key): mean, p95 and max of each and B over A, in the unit registry's
 * reading (MHz, MiB, with a unit column; temperatures in °C without one, as differences);
 * clocks add each board's commonest states. Returns the rows.
 */
static size_t compared(struct report_doc *doc, const struct report *rep, enum channel_kind kind,
		       const char *first) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	bool clock = kind == CHANNEL_KIND_FREQUENCY;
	bool unit_col = kind != CHANNEL_KIND_TEMPERATURE; // zones: °C, said under the table
	const char *head[] = {first,   "unit",        "mean A",      "mean B", "B/A",
			      "p95 A", "p95 B",       "B/A",         "max A",  "max B",
			      "B/A",   "residency A", "residency B", "part"};
	if (!clock) {
		head[11] = "part"; // no residency columns
	}
	// Temperatures compare as differences: °C has no true zero, a ratio of two means nothing.
	const char *zone_head[] = {first,   "mean A", "mean B", "B−A K", "p95 A", "p95 B",
				   "B−A K", "max A",  "max B",  "B−A K", "part"};
	size_t base = unit_col ? 2 : 1; // the first figure's column
	size_t cols = clock ? 14 : unit_col ? 12 : 11;
	struct report_block *t = NULL;
	size_t n = 0;
	for (size_t k = 0; k < a->stats.sel.n; k++) {
		const struct channel *ch = query_selection_channel(&a->stats.sel, k);
		ssize_t o = ch->kind == kind ? counterpart(rep, k, kind) : -1;
		if (o < 0) {
			continue;
		}
		if (!t) {
			t = report_table(doc, cols, unit_col ? head : zone_head);
			t->right[0] = t->right[cols - 1] = false;
			if (unit_col) {
				t->right[1] = false;
			}
			if (clock) {
				t->right[11] = t->right[12] = false;
			}
		}
		const struct channel *cb = query_selection_channel(&b->stats.sel, (size_t)o);
		double factor = 1;
		const char *unit = unit_col ? unit_symbol(ch->unit, &factor) : NULL;
		int places = report_places(ch);
		double v[6] = {
			query_stats_mean(&a->stats, k) * factor,
			query_stats_mean(&b->stats, (size_t)o) * factor,
			query_stats_percentile(&a->stats, k, 95) * factor,
			query_stats_percentile(&b->stats, (size_t)o, 95) * factor,
			stats_value(a->stats.acc[k].max_q, ch->resolution) * factor,
			stats_value(b->stats.acc[o].max_q, cb->resolution) * factor,
		};
		report_row(t);
		if (strcmp(ch->key, cb->key) == 0) {
			report_cell(t, 0, "%s", ch->key);
		} else {
			report_cell(t, 0, "%s (B: %s)", ch->key, cb->key);
		}
		if (unit_col) {
			report_cell(t, 1, "%s", unit);
		}
		for (size_t f = 0; f < 3; f++) {
			report_num(t, base + 3 * f, v[2 * f], places);
			report_num(t, base + 1 + 3 * f, v[2 * f + 1], places);
			if (kind == CHANNEL_KIND_TEMPERATURE) {
				report_num(t, base + 2 + 3 * f, v[2 * f + 1] - v[2 * f], places);
			} else {
				ratio(t, base + 2 + 3 * f, v[2 * f + 1], v[2 * f]);
			}
		}
		for (size_t side = 0; clock && side < 2; side++) {
			struct buf r;
			buf_init(&r);
			report_residency(side ? &b->stats : &a->stats, side ? (size_t)o : k, 3, &r);
			report_cell(t, 11 + side, "%s", r.data ? r.data : "");
			buf_finish(&r);
		}
		part_cell(t, cols - 1, rep, k);
		n++;
	}
	return n;
}

/* Whether slot @k of board B is some channel of A's counterpart. */
static bool paired_there(const struct report *rep, size_t k) {
	for (size_t i = 0; i < rep->boards[0].stats.sel.n; i++) {
		if (rep->pair[i] == (ssize_t)k) {
			return true;
		}
	}
	return false;
}

/*
 * The channels of @kind with samples on one board and no counterpart on the other, listed as
 * such: never compared with a namesake of another part.
 */
static void unmatched(struct report_doc *doc, const struct report *rep, enum channel_kind kind) {
	struct buf u = {0};
	for (size_t side = 0; side < 2; side++) {
		const struct report_board *bd = &rep->boards[side];
		for (size_t k = 0; k < bd->stats.sel.n; k++) {
			const struct channel *ch = query_selection_channel(&bd->stats.sel, k);
			bool alone = side ? !paired_there(rep, k) : rep->pair[k] < 0;
			if (ch->kind != kind || bd->stats.acc[k].count == 0 || !alone) {
				continue;
			}
			enum role r = bd->roles[k];
			buf_printf(&u, "%s%s (%s, %s)", u.len ? ", " : "", ch->key,
				   side ? "B" : "A", r == ROLE_NONE ? "no role" : role_text(r));
		}
	}
	if (u.len) {
		report_para(doc,
			    "Unmatched, not compared: %s: no channel of the same part on the other "
			    "board (a channel is never compared with a namesake of another part; "
			    "--map-channel A=B or the configuration's roles: pair them).",
			    u.data);
	}
	buf_finish(&u);
}

/* Starts a section of both boards side by side; false, saying so, when one has no samples. */
static bool compared_section(struct report_doc *doc, const struct report *rep, const char *title,
			     const char *what) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	report_section(doc, "%s", title);
	if (a->empty || b->empty) {
		report_para(doc, "No comparison of %s: %s has no samples in this window.", what,
			    a->empty ? a->name : b->name);
		return false;
	}
	return true;
}

/* The zones of both boards side by side: mean, p95 and max, B over A. */
static void zones_compared(struct report_doc *doc, const struct report *rep) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	if (!compared_section(doc, rep, "Zones compared", "zones")) {
		return;
	}
	if (compared(doc, rep, CHANNEL_KIND_TEMPERATURE, "zone") == 0) {
		report_para(doc, "The boards have no zone of the same part in common.");
	} else {
		report_para(
			doc,
			"A is %s, B is %s; °C, %s; B−A is B's figure minus A's in kelvin "
			"(temperatures compare as differences, never as ratios). Each row pairs "
			"a channel with its counterpart of the same part (big-core zone with "
			"big-core zone), whatever their names.",
			a->name, b->name, report_weight_text(a->stats.weight));
	}
	unmatched(doc, rep, CHANNEL_KIND_TEMPERATURE);
}

/* The clocks and the memory and swap of both boards side by side, as the zones are. */
static void clocks_memory_compared(struct report_doc *doc, const struct report *rep) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	if (!compared_section(doc, rep, "Clocks compared", "clocks or memory")) {
		return;
	}
	if (compared(doc, rep, CHANNEL_KIND_FREQUENCY, "clock") == 0) {
		report_para(doc, "The boards have no clock (cpufreq or devfreq) of the same part "
				 "in common.");
	} else {
		report_para(
			doc,
			"A is %s, B is %s; each clock's mean, p95 and max (%s) and B/A, and each "
			"board's three commonest states (residency, as in its Clocks table); the big "
			"cluster with the big cluster, whatever its policy's number.",
			a->name, b->name, report_weight_text(a->stats.weight));
	}
	unmatched(doc, rep, CHANNEL_KIND_FREQUENCY);
	report_section(doc, "Memory and swap compared");
	if (compared(doc, rep, CHANNEL_KIND_MEMORY, "channel") == 0) {
		report_para(doc, "The boards have no memory or swap channel in common.");
	} else {
		report_para(doc, "A is %s, B is %s; MiB, %s; B/A is B's figure over A's.", a->name,
			    b->name, report_weight_text(a->stats.weight));
	}
}

static void interval(struct report_block *t, size_t col, const struct runstats_compare *r,
		     bool has) {
	if (has) {
		report_cell(t, col, "%.3f .. %.3f", r->ci_low, r->ci_high);
	} else {
		report_cell(t, col, "-");
	}
}

/*
 * Comparable or not, at the top: each compared label's verdict (runs compare's), the reasons
 * once each.
 */
void report_verdict_section(struct report_doc *doc, const struct report *rep) {
	report_section(doc, "Comparable or not");
	bool comparable = true;
	struct report_block *t = NULL;
	for (size_t i = 0; i < rep->n_compares; i++) {
		const struct report_compare *c = &rep->compares[i];
		if (c->rc < 0) {
			continue;
		}
		comparable = comparable && c->c.verdict.comparable;
		for (size_t k = 0; k < c->c.verdict.n; k++) {
			const struct verdict_reason *r = &c->c.verdict.reasons[k];
			bool seen = false;
			for (size_t p = 0; t && p + 1 < t->rows && !seen; p++) {
				seen = strcmp(t->cells[(p + 1) * t->cols + 2], r->message) == 0;
			}
			if (seen) {
				continue;
			}
			if (!t) {
				static const char *const head[] = {"label", "reason", "why"};
				t = report_table(doc, 3, head);
				t->right[1] = t->right[2] = false;
			}
			report_row(t);
			report_cell(t, 0, "%s", c->label);
			report_cell(t, 1, "%s", r->code);
			report_cell(t, 2, "%s", r->message);
		}
	}
	report_para(doc, "%s",
		    rep->n_compares == 0 ? "No run label is on both boards: nothing to judge."
		    : comparable ? "comparable: the conditions were like for like by every rule "
				   "(ambient, clocks, governors, executable, throttle exposure, "
				   "cooling)."
				 : "not comparable: the reasons above, each with both boards' "
				   "figures, make the runs' figures not like for like.");
}

/* Each label on both boards as `runs compare` computes it, and the fingerprint differences. */
/* "A / B" with @places places, "-" for a side without the figure. */
static void pair(struct report_block *t, size_t col, double a, double b, int places) {
	char x[32] = "-", y[32] = "-";
	if (isfinite(a)) {
		snprintf(x, sizeof(x), "%.*f", places, a);
	}
	if (isfinite(b)) {
		snprintf(y, sizeof(y), "%.*f", places, b);
	}
	report_cell(t, col, "%s / %s", x, y);
}

static void runs_compared(struct report_doc *doc, const struct report *rep) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	report_section(doc, "Runs compared");
	if (rep->n_compares == 0) {
		report_para(doc, "No run label is on both boards.");
		return;
	}
	static const char *const head[] = {"label",           "attempts A / B", "ok A / B",
					   "failed % A / B",  "p50 A s",        "p50 B s",
					   "p95 A / B s",     "over A / B",     "duration B/A",
					   "95 % interval",   "energy B/A",     "power A / B W",
					   "exposure A / B %"};
	struct report_block *t = report_table(doc, 13, head);
	bool few = false;
	const struct runstats_compare *method = NULL;
	for (size_t i = 0; i < rep->n_compares; i++) {
		const struct report_compare *c = &rep->compares[i];
		report_row(t);
		if (strcmp(c->label, c->other_label) != 0) {
			report_cell(t, 0, "%s (B: %s)", c->label, c->other_label);
		} else {
			report_cell(t, 0, "%s", c->label);
		}
		if (c->rc < 0) {
			for (size_t col = 1; col < 13; col++) {
				report_cell(t, col, "-");
			}
			continue;
		}
		const struct runstats_label *la = c->c.a, *lb = c->c.b;
		size_t ok_a = la->by_status[RUN_STATUS_OK], ok_b = lb->by_status[RUN_STATUS_OK];
		size_t end_a = la->count - la->by_status[RUN_STATUS_RUNNING],
		       end_b = lb->count - lb->by_status[RUN_STATUS_RUNNING];
		few = few || ok_a < RUNS_COMPARE_FEW || ok_b < RUNS_COMPARE_FEW;
		method = &c->c.duration;
		report_cell(t, 1, "%zu / %zu", la->count, lb->count);
		report_cell(t, 2, "%zu / %zu", ok_a, ok_b);
		pair(t, 3, end_a ? 100.0 * (double)(end_a - ok_a) / (double)end_a : NAN,
		     end_b ? 100.0 * (double)(end_b - ok_b) / (double)end_b : NAN, 1);
		report_num(t, 4, c->c.duration.median_a, 2);
		report_num(t, 5, c->c.duration.median_b, 2);
		pair(t, 6, la->duration_s.p95, lb->duration_s.p95, 2);
		report_cell(t, 7, "%zu / %zu", la->over, lb->over);
		report_num(t, 8, c->c.duration.ratio, 3);
		interval(t, 9, &c->c.duration, true);
		report_num(t, 10, c->c.has_energy ? c->c.energy.ratio : NAN, 3);
		double pa = c->c.fig_a && c->c.fig_a->n_power ? c->c.fig_a->power[0].mean : NAN;
		double pb = c->c.fig_b && c->c.fig_b->n_power ? c->c.fig_b->power[0].mean : NAN;
		if (isnan(pa) && la->energy_j.n && la->duration_s.n) {
			pa = la->energy_j.mean /
			     la->duration_s.mean; // energy over time: the mean draw
		}
		if (isnan(pb) && lb->energy_j.n && lb->duration_s.n) {
			pb = lb->energy_j.mean / lb->duration_s.mean;
		}
		pair(t, 11, pa, pb, 2);
		double ea = c->c.fig_a ? 100 * c->c.fig_a->loaded_share : NAN,
		       eb = c->c.fig_b ? 100 * c->c.fig_b->loaded_share : NAN;
		pair(t, 12, ea, eb, 1);
	}
	for (size_t i = 0; i < rep->n_compares; i++) {
		const struct report_compare *c = &rep->compares[i];
		for (size_t k = 0; c->rc == 0 && k < c->c.n_metrics; k++) {
			const struct runs_compare_metric *m = &c->c.metrics[k];
			if (m->has_ratio) {
				report_para(
					doc,
					"%s: metric %s, B over A %.3f (95 %% interval %.3f .. %.3f)",
					c->label, m->name, m->ratio.ratio, m->ratio.ci_low,
					m->ratio.ci_high);
			} else {
				report_para(doc, "%s: metric %s: no ratio (%s)", c->label, m->name,
					    m->note);
			}
		}
	}
	if (rep->n_unmatched_a || rep->n_unmatched_b) {
		struct buf u = {0};
		for (size_t i = 0; i < rep->n_unmatched_a; i++) {
			buf_printf(&u, "%s%s (A)", u.len ? ", " : "", rep->unmatched_a[i]);
		}
		for (size_t i = 0; i < rep->n_unmatched_b; i++) {
			buf_printf(&u, "%s%s (B)", u.len ? ", " : "", rep->unmatched_b[i]);
		}
		report_para(doc,
			    "Unmatched, not compared: %s (a label of one board without a run of "
			    "the same or a --map-label label on the other).",
			    u.data);
		buf_finish(&u);
	}
	if (method) {
		report_para(
			doc,
			"A is %s, B is %s, each over its own window. Failed is of the ended runs; "
			"over counts the ok runs over --over; exposure is the share of the runs' "
			"time their loaded domains were throttled (points). Ratio of type-7 "
			"medians (B over A) with a %g %% percentile-bootstrap interval, %u "
			"resamples, seed %llu (as thermlog runs compare).%s",
			a->name, b->name, method->level, method->resamples,
			(unsigned long long)method->seed,
			few ? " Some labels have fewer than 10 ok runs on a side: their interval is "
			      "too narrow to trust."
			    : "");
	}
	struct report_block *d = NULL;
	for (size_t i = 0; i < rep->n_compares; i++) {
		const struct report_compare *c = &rep->compares[i];
		for (size_t k = 0; c->rc == 0 && k < c->c.n_diffs; k++) {
			if (!d) {
				report_heading(doc, "Fingerprint differences");
				static const char *const dh[] = {"label", "key", "A", "B"};
				d = report_table(doc, 4, dh);
				d->right[1] = d->right[2] = d->right[3] = false;
			}
			report_row(d);
			report_cell(d, 0, "%s", c->label);
			report_cell(d, 1, "%s", c->c.diffs[k].key);
			report_cell(d, 2, "%s", c->c.diffs[k].here ? c->c.diffs[k].here : "none");
			report_cell(d, 3, "%s", c->c.diffs[k].other ? c->c.diffs[k].other : "none");
		}
	}
	if (!d) {
		report_para(doc,
			    "The latest ok runs' fingerprints (board, kernel, governors, command, "
			    "tags) do not differ.");
	}
}

/* ---- each label's per-test figures side by side ---- */

/* The key of the counterpart on board B of board A's channel @key, or NULL. */
static const char *counterpart_key(const struct report *rep, const char *key) {
	const struct query_stats *a = &rep->boards[0].stats, *b = &rep->boards[1].stats;
	for (size_t k = 0; k < a->sel.n; k++) {
		if (strcmp(query_selection_channel(&a->sel, k)->key, key) == 0) {
			return rep->pair[k] >= 0
				       ? query_selection_channel(&b->sel, rep->pair[k])->key
				       : NULL;
		}
	}
	return NULL;
}

/* The counterpart of a per-test figure's key: a cluster "cluster/policyN" its policy's. */
static char *figure_counterpart(const struct report *rep, const char *key) {
	if (strncmp(key, "cluster/", 8) == 0) {
		char policy[96];
		snprintf(policy, sizeof(policy), "cpufreq/%s", key + 8);
		const char *there = counterpart_key(rep, policy);
		return there && strncmp(there, "cpufreq/", 8) == 0
			       ? xasprintf("cluster/%s", there + 8)
			       : NULL;
	}
	const char *there = counterpart_key(rep, key);
	return there ? xstrdup(there) : NULL;
}

static const struct testfig_figure *figure_find(const struct testfig_figure *f, size_t n,
						size_t stride, const char *key) {
	for (size_t i = 0; key && i < n; i++) {
		const struct testfig_figure *x =
			(const struct testfig_figure *)((const char *)f + i * stride);
		if (strcmp(x->key, key) == 0) {
			return x;
		}
	}
	return NULL;
}

/* How a pair of figures compares: temperatures and loads as differences, the rest as ratios. */
enum versus { VERSUS_KELVIN, VERSUS_POINTS, VERSUS_RATIO };

/* "+2.13 K", "-4.0 pt", "×0.958": B against A as @vs says. */
static void versus_cell(struct report_block *t, size_t col, double a, double b, enum versus vs,
			int places) {
	if (!isfinite(a) || !isfinite(b) || (vs == VERSUS_RATIO && a == 0)) {
		report_cell(t, col, "-");
	} else if (vs == VERSUS_RATIO) {
		report_cell(t, col, "×%.3f", b / a);
	} else {
		report_cell(t, col, "%+.*f %s", places, b - a, vs == VERSUS_KELVIN ? "K" : "pt");
	}
}

/* One row: a figure of A (@fa) and its counterpart's on B (@fb) in @factor units. */
static void figure_row(struct report_block *t, const struct testfig_figure *fa,
		       const struct testfig_figure *fb, const char *what, double factor, int places,
		       enum versus vs) {
	report_row(t);
	if (strcmp(fa->key, fb->key) == 0) {
		report_cell(t, 0, "%s %s", fa->key, what);
	} else {
		report_cell(t, 0, "%s (B: %s) %s", fa->key, fb->key, what);
	}
	const double va[3] = {fa->mean, fa->p95, fa->max}, vb[3] = {fb->mean, fb->p95, fb->max};
	for (size_t f = 0; f < 3; f++) {
		report_num(t, 1 + 3 * f, va[f] * factor, places);
		report_num(t, 2 + 3 * f, vb[f] * factor, places);
		versus_cell(t, 3 + 3 * f, va[f] * factor, vb[f] * factor, vs, places);
	}
}

/* The figures of one kind of @a paired with @b's (by their counterparts' keys). */
static size_t figure_rows(struct report_block *t, const struct report *rep,
			  const struct testfig_figure *fa, size_t na,
			  const struct testfig_figure *fb, size_t nb, size_t stride,
			  const char *what, double factor, int places, enum versus vs) {
	size_t n = 0;
	for (size_t i = 0; i < na; i++) {
		const struct testfig_figure *x =
			(const struct testfig_figure *)((const char *)fa + i * stride);
		char *there = figure_counterpart(rep, x->key);
		const struct testfig_figure *y = figure_find(fb, nb, stride, there);
		if (!y && strncmp(x->key, "load/", 5) == 0) {
			y = figure_find(fb, nb, stride, x->key); // an NPU core: by its key
		}
		free(there);
		if (y && x->seconds > 0 && y->seconds > 0) {
			figure_row(t, x, y, what, factor, places, vs);
			n++;
		}
	}
	return n;
}

/* Label @c's per-test figures of both boards: zones, clocks, loads and power. */
static void label_figures(struct report_doc *doc, const struct report *rep,
			  const struct report_compare *c) {
	const struct testfig_label *a = c->c.fig_a, *b = c->c.fig_b;
	if (strcmp(c->label, c->other_label) != 0) {
		report_heading(doc, "%s (B: %s)", c->label, c->other_label);
	} else {
		report_heading(doc, "%s", c->label);
	}
	if (!a || !b) {
		report_para(doc, "No per-test figures: a board has no ok run of it with samples.");
		return;
	}
	static const char *const head[] = {"figure", "mean A", "mean B", "B vs A", "p95 A",
					   "p95 B",  "B vs A", "max A",  "max B",  "B vs A"};
	struct report_block *t = report_table(doc, 10, head);
	t->right[0] = false;
	double mhz;
	unit_symbol("hertz", &mhz);
	size_t n = figure_rows(t, rep, a->zones, a->n_zones, b->zones, b->n_zones,
			       sizeof(*a->zones), "°C", 1, 2, VERSUS_KELVIN);
	n += figure_rows(t, rep, &a->clocks[0].f, a->n_clocks, &b->clocks[0].f, b->n_clocks,
			 sizeof(*a->clocks), "MHz", mhz, 0, VERSUS_RATIO);
	n += figure_rows(t, rep, a->loads, a->n_loads, b->loads, b->n_loads, sizeof(*a->loads),
			 "load %", 1, 1, VERSUS_POINTS);
	n += figure_rows(t, rep, a->power, a->n_power, b->power, b->n_power, sizeof(*a->power), "W",
			 1, 2, VERSUS_RATIO);
	report_para(doc,
		    "While the ok runs were under way (%zu runs on A over %.0f s, %zu on B over "
		    "%.0f s): %zu figures of the same parts; temperatures as B−A in K, clocks "
		    "(max: the highest reached) and power as B over A, loads as B−A in points. "
		    "Throttled: %.1f %% of A's runs' time for the domains they loaded (the board "
		    "%.1f %%), %.1f %% of B's (%.1f %%).",
		    a->runs, a->window_s, b->runs, b->window_s, n, 100 * a->loaded_share,
		    100 * a->board_share, 100 * b->loaded_share, 100 * b->board_share);
}

static void figures_compared(struct report_doc *doc, const struct report *rep) {
	report_section(doc, "Per-test figures compared");
	size_t n = 0;
	for (size_t i = 0; i < rep->n_compares; i++) {
		if (rep->compares[i].rc == 0) {
			label_figures(doc, rep, &rep->compares[i]);
			n++;
		}
	}
	if (n == 0) {
		report_para(doc, "No run label has ok runs on both boards.");
	} else {
		report_para(doc,
			    "A is %s, B is %s, each over its own window (runs stats --board "
			    "of each, as runs compare gives them).",
			    rep->boards[0].name, rep->boards[1].name);
	}
}

/* Both boards' peaks on one chart, each in minutes from its own. */
static void peaks_compared(struct report_doc *doc, const struct report *rep) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	report_section(doc, "Peaks compared");
	if (!a->has_peak || !b->has_peak) {
		report_para(doc,
			    "No chart of both peaks: %s has no peak to show (see its Peak "
			    "section).",
			    a->has_peak ? b->name : a->name);
		return;
	}
	double va = stats_value(a->peak.max_q, a->peak.channel->resolution),
	       vb = stats_value(b->peak.max_q, b->peak.channel->resolution);
	char ta[TIMEFMT_ISO_LEN], tb[TIMEFMT_ISO_LEN];
	timefmt_iso(a->peak.max_ts, ta);
	timefmt_iso(b->peak.max_ts, tb);
	report_para(doc,
		    "A's %s peaked at %.2f °C at %s, B's %s at %.2f °C at %s (%+.2f K); the chart "
		    "draws each over its own cycles around its peak, on one axis of minutes from "
		    "the peak.",
		    a->peak.channel->key, va, ta, b->peak.channel->key, vb, tb, vb - va);
	report_chart_add(doc, "peaks", report_chart_peaks(rep),
			 xasprintf("%s on %s and %s on %s around their peaks (°C)",
				   a->peak.channel->key, a->name, b->peak.channel->key, b->name));
}

void report_compare_sections(struct report_doc *doc, const struct report *rep) {
	zones_compared(doc, rep);
	clocks_memory_compared(doc, rep);
	runs_compared(doc, rep);
	figures_compared(doc, rep);
	peaks_compared(doc, rep);
}
