/*
 * The report laid out as a document: sections of headings, paragraphs, tables and charts in
 * plain text, from the computed answers alone (report.c). Values read as the unit registry
 * says (unit.c: hertz as MHz, bytes as MiB); temperatures and seconds with two decimals.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "report-internal.h"
#include "stats.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

static void iso(int64_t ts, char out[TIMEFMT_ISO_LEN]) {
	timefmt_iso(ts, out);
}

/* Places of @ch's statistics as shown: temperatures two, else the unit registry's columns. */
static int places_of(const struct channel *ch) {
	if (ch->kind == CHANNEL_KIND_TEMPERATURE) {
		return 2;
	}
	int p = unit_places(ch->unit, true);
	if (p < 0) {
		p = stats_resolution_digits(ch->resolution);
	}
	return p < 0 ? 3 : p > 3 ? 3 : p;
}

/* The channel's label when it says more than its key. */
static const char *label_of(const struct channel *ch) {
	return ch->label && strcmp(ch->label, ch->key) != 0 ? ch->label : "";
}

/* ---- one board ---- */

static const char *weight_text(enum query_weight w) {
	return w == QUERY_WEIGHT_TIME
		       ? "weighted by time: each sample counts the time it stands for"
		       : "weighted by samples: each sample counts once";
}

static void window_rows(const struct report *rep, struct report_block *t) {
	char a[TIMEFMT_ISO_LEN], b[TIMEFMT_ISO_LEN], s[64];
	size_t n = rep->n_boards;
	report_row(t);
	report_cell(t, 0, "board");
	for (size_t i = 0; i < n; i++) {
		const struct report_board *bd = &rep->boards[i];
		report_cell(t, 1 + i, "%s",
			    bd->model ? bd->model : "not recorded (no run fingerprint)");
	}
	report_row(t);
	report_cell(t, 0, "kernel");
	for (size_t i = 0; i < n; i++) {
		report_cell(t, 1 + i, "%s",
			    rep->boards[i].kernel ? rep->boards[i].kernel : "not recorded");
	}
	report_row(t);
	report_cell(t, 0, "database");
	for (size_t i = 0; i < n; i++) {
		report_cell(t, 1 + i, "%s", rep->boards[i].file);
	}
	report_row(t);
	report_cell(t, 0, "window");
	for (size_t i = 0; i < n; i++) {
		const struct report_board *bd = &rep->boards[i];
		if (bd->has_stats) {
			iso(bd->stats.from, a);
			iso(bd->stats.to, b);
			report_cell(t, 1 + i, "%s .. %s", a, b);
		} else {
			report_cell(t, 1 + i, "no history stored");
		}
	}
	static const char *const names[] = {"first sample", "last sample"};
	for (size_t e = 0; e < 2; e++) {
		report_row(t);
		report_cell(t, 0, "%s", names[e]);
		for (size_t i = 0; i < n; i++) {
			const struct report_board *bd = &rep->boards[i];
			if (!bd->empty) {
				iso(e == 0 ? bd->first_ts : bd->last_ts, a);
				report_cell(t, 1 + i, "%s", a);
			} else {
				report_cell(t, 1 + i, "-");
			}
		}
	}
	report_row(t);
	report_cell(t, 0, "samples");
	for (size_t i = 0; i < n; i++) {
		const struct query_stats *st = &rep->boards[i].stats;
		report_cell(t, 1 + i, "%lld of %lld expected", (long long)st->cycles,
			    (long long)st->expected_cycles);
	}
	report_row(t);
	report_cell(t, 0, "coverage");
	for (size_t i = 0; i < n; i++) {
		const struct report_board *bd = &rep->boards[i];
		if (!bd->has_stats || bd->empty) {
			report_cell(t, 1 + i, "-");
			continue;
		}
		unit_duration(s, sizeof(s), (double)bd->stats.longest_gap_s);
		report_cell(t, 1 + i, "%.1f %%, %s%s", 100.0 * bd->stats.coverage,
			    bd->stats.longest_gap_s > 0 ? "longest gap " : "no gaps",
			    bd->stats.longest_gap_s > 0 ? s : "");
	}
	report_row(t);
	report_cell(t, 0, "interval");
	for (size_t i = 0; i < n; i++) {
		const struct query_stats *st = &rep->boards[i].stats;
		if (!rep->boards[i].has_stats || rep->boards[i].empty) {
			report_cell(t, 1 + i, "-");
		} else if (st->mixed_intervals) {
			report_cell(t, 1 + i, "%lld s (mixed: %lld to %lld s)",
				    (long long)st->interval_s, (long long)st->min_interval_s,
				    (long long)st->max_interval_s);
		} else {
			report_cell(t, 1 + i, "%lld s", (long long)st->interval_s);
		}
	}
	report_row(t);
	report_cell(t, 0, "unsynced cycles left out");
	for (size_t i = 0; i < n; i++) {
		report_cell(t, 1 + i, "%lld", (long long)rep->boards[i].stats.unsynced);
	}
}

static void board_section(struct report_doc *doc, const struct report *rep) {
	report_section(doc, "Board and window");
	const char *head[3] = {"", rep->boards[0].name,
			       rep->n_boards > 1 ? rep->boards[1].name : ""};
	struct report_block *t = report_table(doc, 1 + rep->n_boards, head);
	for (size_t c = 1; c < t->cols; c++) {
		t->right[c] = false;
	}
	window_rows(rep, t);
}

/* Channels of @kind in @s, one row each: mean, p50, p95 (and min), max with its time. */
static size_t channel_table(struct report_doc *doc, const struct query_stats *s,
			    enum channel_kind kind, bool with_min) {
	static const char *const head[] = {"channel", "label", "unit", "samples", "mean",
					   "p50",     "p95",   "min",  "max",     "max at (UTC)"};
	const char *h[10];
	size_t cols = 0;
	for (size_t i = 0; i < 10; i++) {
		if (i != 7 || with_min) {
			h[cols++] = head[i];
		}
	}
	struct report_block *t = NULL;
	size_t n = 0;
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		const struct stats_acc *acc = &s->acc[k];
		if (ch->kind != kind || acc->count == 0) {
			continue;
		}
		if (!t) {
			t = report_table(doc, cols, h);
			t->right[1] = t->right[2] = false;
		}
		double factor;
		const char *unit = unit_symbol(ch->unit, &factor);
		int places = places_of(ch);
		size_t c = 0;
		report_row(t);
		report_cell(t, c++, "%s", ch->key);
		report_cell(t, c++, "%s", label_of(ch));
		report_cell(t, c++, "%s", unit);
		report_cell(t, c++, "%lld", (long long)acc->count);
		report_num(t, c++, query_stats_mean(s, k) * factor, places);
		report_num(t, c++, query_stats_percentile(s, k, 50) * factor, places);
		report_num(t, c++, query_stats_percentile(s, k, 95) * factor, places);
		if (with_min) {
			report_num(t, c++, stats_value(acc->min_q, ch->resolution) * factor,
				   places);
		}
		report_num(t, c++, stats_value(acc->max_q, ch->resolution) * factor, places);
		char at[TIMEFMT_ISO_LEN];
		iso(acc->max_ts, at);
		report_cell(t, c++, "%s", at);
		n++;
	}
	return n;
}

struct share {
	double value;
	int64_t count;
};

static int by_count(const void *pa, const void *pb) {
	const struct share *a = pa, *b = pb;
	return a->count != b->count ? (a->count < b->count ? 1 : -1)
				    : (a->value < b->value) - (a->value > b->value);
}

#define CLOCK_STATES_SHOWN 6

/*
 * Appends @s's residency of slot @k to @out, the commonest state first: "held 1800 MHz for
 * 60.0 % of the time, 1416 MHz 30.0 %", at most @shown states (and how many more).
 */
static void residency(const struct query_stats *s, size_t k, size_t shown, struct buf *out) {
	const struct channel *ch = query_selection_channel(&s->sel, k);
	bool by_time = s->weight == QUERY_WEIGHT_TIME;
	const struct stats_acc *tis = by_time ? &s->time_acc[k] : &s->acc[k];
	double factor;
	const char *unit = unit_symbol(ch->unit, &factor);
	size_t n_bins;
	const struct stats_bin *bins = stats_bins(tis, &n_bins);
	struct share *sh = xcalloc(n_bins ? n_bins : 1, sizeof(*sh));
	for (size_t i = 0; i < n_bins; i++) {
		sh[i] = (struct share){stats_value(bins[i].q, ch->resolution) * factor,
				       bins[i].count};
	}
	qsort(sh, n_bins, sizeof(*sh), by_count);
	int places = places_of(ch);
	for (size_t i = 0; i < n_bins && i < shown; i++) {
		double pct = 100.0 * (double)sh[i].count / (double)tis->count;
		buf_printf(out, i == 0 ? "held %.*f %s for %.1f %% of the %s" : ", %.*f %s %.1f %%",
			   places, sh[i].value, unit, pct, by_time ? "time" : "samples");
	}
	if (n_bins > shown) {
		buf_printf(out, ", %zu more state%s", n_bins - shown,
			   n_bins - shown == 1 ? "" : "s");
	}
	free(sh);
}

/* Whether slot @k of @s is a clock with samples (of the weighing the statistics use). */
static bool clock_sampled(const struct query_stats *s, size_t k) {
	const struct channel *ch = query_selection_channel(&s->sel, k);
	const struct stats_acc *tis = s->weight == QUERY_WEIGHT_TIME ? &s->time_acc[k] : &s->acc[k];
	return ch->kind == CHANNEL_KIND_FREQUENCY && tis->count > 0;
}

/* Residency per CPU cluster and devfreq device: "held 1800 MHz for 60.0 % of the time". */
static void clocks(struct report_doc *doc, const struct query_stats *s) {
	static const char *const head[] = {"channel", "label", "mean MHz", "residency"};
	struct report_block *t = NULL;
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		if (!clock_sampled(s, k)) {
			continue;
		}
		if (!t) {
			t = report_table(doc, 4, head);
			t->right[1] = t->right[3] = false;
		}
		double factor;
		unit_symbol(ch->unit, &factor);
		struct buf r;
		buf_init(&r);
		residency(s, k, CLOCK_STATES_SHOWN, &r);
		report_row(t);
		report_cell(t, 0, "%s", ch->key);
		report_cell(t, 1, "%s", label_of(ch));
		report_num(t, 2, query_stats_mean(s, k) * factor, places_of(ch));
		report_cell(t, 3, "%s", r.data ? r.data : "");
		buf_finish(&r);
	}
	if (!t) {
		report_para(doc,
			    "No clock (cpufreq or devfreq) channel has samples in this window.");
	}
}

static void peak(struct report_doc *doc, const struct report_board *b, const char *chart_name) {
	if (!b->has_peak) {
		report_para(doc,
			    "No peak to show: no zone has raw samples around its maximum in this "
			    "window (they may have been pruned to hourly rollups).");
		return;
	}
	const struct query_peak *pk = &b->peak;
	const struct channel *ch = pk->channel;
	double factor;
	const char *unit = unit_symbol(ch->unit, &factor);
	char at[TIMEFMT_ISO_LEN], from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
	iso(pk->max_ts, at);
	iso(pk->row_ts[0], from);
	iso(pk->row_ts[pk->n_rows - 1], to);
	report_para(doc,
		    "The hottest zone, %s%s%s%s, peaked at %.2f %s at %s. The chart shows the %zu "
		    "cycles around it (%s .. %s): the big-core zone solid, the NPU zone dashed, "
		    "the other zones faint.",
		    ch->key, *label_of(ch) ? " (" : "", label_of(ch), *label_of(ch) ? ")" : "",
		    stats_value(pk->max_q, ch->resolution) * factor, unit, at, pk->n_rows, from,
		    to);
	report_chart_add(doc, chart_name, report_chart_peak(b),
			 xasprintf("Zones around the maximum of %s (%s)", ch->key, unit));
}

static void status_others(const struct runstats_label *l, struct buf *out) {
	static const enum run_status others[] = {RUN_STATUS_SIGNALED, RUN_STATUS_TIMEOUT,
						 RUN_STATUS_LOST, RUN_STATUS_RUNNING};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		if (l->by_status[others[i]] > 0) {
			buf_printf(out, "%s%zu %s", out->len ? ", " : "", l->by_status[others[i]],
				   run_status_name(others[i]));
		}
	}
	if (!out->len) {
		buf_puts(out, "-");
	}
}

static bool shown(const struct report_options *opt, const char *label) {
	for (size_t i = 0; i < opt->n_labels; i++) {
		if (strcmp(opt->labels[i], label) == 0) {
			return true;
		}
	}
	return opt->n_labels == 0;
}

static void runs(struct report_doc *doc, const struct report *rep, const struct report_board *b) {
	const struct runstats_result *r = &b->runs;
	bool over = isfinite(rep->opt.over_s);
	char thr[32] = "";
	if (over) {
		unit_duration(thr, sizeof(thr), rep->opt.over_s);
	}
	char over_n[64], over_share[64];
	snprintf(over_n, sizeof(over_n), "over %s", thr);
	snprintf(over_share, sizeof(over_share), "over %s %%", thr);
	const char *head[] = {"label", "attempts", "completed", "failed", "other", "mean s",
			      "p50 s", "p95 s",    "min s",     "max s",  over_n,  over_share};
	struct report_block *t = NULL;
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct runstats_label *l = &r->labels[i];
		if (!shown(&rep->opt, l->label)) {
			continue;
		}
		if (!t) {
			t = report_table(doc, over ? 12 : 10, head);
			t->right[4] = false;
		}
		const struct runstats_summary *d = &l->duration_s;
		report_row(t);
		report_cell(t, 0, "%s", l->label);
		report_cell(t, 1, "%zu", l->count);
		report_cell(t, 2, "%zu", l->by_status[RUN_STATUS_OK]);
		report_cell(t, 3, "%zu", l->by_status[RUN_STATUS_FAILED]);
		struct buf o;
		buf_init(&o);
		status_others(l, &o);
		report_cell(t, 4, "%s", o.data);
		buf_finish(&o);
		report_num(t, 5, d->n ? d->mean : NAN, 2);
		report_num(t, 6, d->n ? d->p50 : NAN, 2);
		report_num(t, 7, d->n ? d->p95 : NAN, 2);
		report_num(t, 8, d->n ? d->percentiles[0] : NAN, 2);
		report_num(t, 9, d->n ? d->max : NAN, 2);
		if (over) {
			size_t ok = l->by_status[RUN_STATUS_OK];
			report_cell(t, 10, "%zu", l->over);
			report_num(t, 11, ok ? 100.0 * (double)l->over / (double)ok : NAN, 2);
		}
		n++;
	}
	if (!t) {
		report_para(doc, "No runs in this window%s.",
			    rep->opt.n_labels ? " with these labels" : "");
		return;
	}
	report_para(
		doc,
		"Durations of the completed (ok) runs in seconds; percentiles are exact type 7 "
		"(numpy's default), min is p0.%s",
		over ? " \"over\" counts the completed runs longer than the threshold, and their "
		       "share of the completed runs."
		     : "");
	static const char *const ehead[] = {
		"label",           "energy runs",      "energy mean J",
		"energy mean Wh",  "energy p50 J",     "energy p95 J",
		"energy coverage", "peak RSS p50 MiB", "peak RSS max MiB",
		"swap max MiB"};
	struct report_block *e = report_table(doc, 10, ehead);
	e->right[6] = false;
	double mib;
	unit_symbol("bytes", &mib);
	for (size_t i = 0; i < r->n; i++) {
		const struct runstats_label *l = &r->labels[i];
		if (!shown(&rep->opt, l->label)) {
			continue;
		}
		const struct runstats_summary *en = &l->energy_j, *rss = &l->rss_max_bytes;
		size_t ok = l->by_status[RUN_STATUS_OK];
		report_row(e);
		report_cell(e, 0, "%s", l->label);
		report_cell(e, 1, "%zu", en->n);
		report_num(e, 2, en->n ? en->mean : NAN, 2);
		report_num(e, 3, en->n ? en->mean / 3600.0 : NAN, 4);
		report_num(e, 4, en->n ? en->p50 : NAN, 2);
		report_num(e, 5, en->n ? en->p95 : NAN, 2);
		struct buf cov;
		buf_init(&cov);
		buf_printf(&cov, "%zu of %zu ok runs", en->n, ok);
		if (l->energy_partial) {
			buf_printf(&cov, ", %zu of them partial", l->energy_partial);
		}
		if (l->energy_not_ok) {
			buf_printf(&cov, "; %zu runs not ok left out", l->energy_not_ok);
		}
		report_cell(e, 6, "%s", cov.data);
		buf_finish(&cov);
		report_num(e, 7, rss->n ? rss->p50 * mib : NAN, 1);
		report_num(e, 8, rss->n ? rss->max * mib : NAN, 1);
		report_num(e, 9, l->swap_max_bytes.n ? l->swap_max_bytes.max * mib : NAN, 1);
	}
}

static void lifetime(struct report_doc *doc, const struct report *rep,
		     const struct report_board *b) {
	const struct lifetime_report *lr = &b->life;
	if (!rep->opt.cfg || rep->opt.cfg->n_capacitors == 0) {
		report_para(doc, "No capacitors are configured (a 'capacitors:' section of the "
				 "configuration adds them).");
		return;
	}
	static const char *const head[] = {"capacitor",   "sensor",           "observed h",
					   "coverage %",  "consumed %",       "effective life h",
					   "remaining h", "mean temp °C",     "p95 temp °C",
					   "life band h", "remaining band h", "warnings"};
	if (b->empty) {
		report_para(doc, "No samples in this window: no capacitor aged in it.");
		return;
	}
	struct report_block *t = report_table(doc, 12, head);
	t->right[1] = t->right[11] = false;
	for (size_t i = 0; i < lr->n; i++) {
		const struct lifetime_report_entry *en = &lr->entries[i];
		report_row(t);
		report_cell(t, 0, "%s", en->cc->name);
		report_cell(t, 1, "%s", en->sensor_key);
		report_num(t, 2, en->r.observed_h, 1);
		report_num(t, 3, 100.0 * en->coverage, 1);
		report_num(t, 4, 100.0 * en->r.consumed_fraction, 4);
		report_num(t, 5, en->r.life_h, 0);
		report_num(t, 6, en->r.remaining_h, 0);
		report_num(t, 7, en->r.mean_temp_c, 2);
		report_num(t, 8, en->p95_temp_c, 2);
		// The band of the sensor's uncertainty: the reading hotter to cooler.
		if (isfinite(en->r.band.life_h[0])) {
			report_cell(t, 9, "%.0f-%.0f", en->r.band.life_h[0], en->r.band.life_h[1]);
			report_cell(t, 10, "%.0f-%.0f", en->r.band.remaining_h[0],
				    en->r.band.remaining_h[1]);
		} else {
			report_cell(t, 9, "-");
			report_cell(t, 10, "-");
		}
		struct buf w;
		buf_init(&w);
		for (size_t k = 0; k < en->r.n_warnings; k++) {
			buf_printf(&w, "%s%s", k ? "; " : "", en->r.warnings[k].message);
		}
		report_cell(t, 11, "%s", w.len ? w.data : "-");
		buf_finish(&w);
	}
	report_para(doc,
		    "From the stored history of the window, as thermlog lifetime computes it "
		    "(temperatures time-weighted; effective life and remaining hours capped as it "
		    "states; the bands with the reading the sensor's uncertainty hotter to "
		    "cooler).");
}

/* The sections of board @i; with two boards each heading names the board. */
static void board_sections(struct report_doc *doc, const struct report *rep, size_t i) {
	const struct report_board *b = &rep->boards[i];
	const char *of = rep->n_boards > 1 ? b->name : NULL;
#define TITLE(s) "%s%s%s", s, of ? ": " : "", of ? of : ""
	report_section(doc, TITLE("Zones"));
	if (b->empty) {
		char a[TIMEFMT_ISO_LEN], z[TIMEFMT_ISO_LEN];
		iso(rep->opt.has_from ? rep->opt.from : b->stats.from, a);
		iso(rep->opt.has_to ? rep->opt.to : b->stats.to, z);
		if (b->has_stats || rep->opt.has_from || rep->opt.has_to) {
			report_para(
				doc,
				"No samples in this window (%s .. %s): there are no zone, clock, "
				"peak or memory figures to show.",
				a, z);
		} else {
			report_para(doc, "No samples: the database holds no history yet.");
		}
	} else {
		if (channel_table(doc, &b->stats, CHANNEL_KIND_TEMPERATURE, false) == 0) {
			report_para(doc, "No temperature channel has samples in this window.");
		}
		report_para(doc,
			    "Temperatures in °C with two decimals; mean and percentiles %s (as "
			    "thermlog stats --weight %s).",
			    weight_text(b->stats.weight), query_weight_name(b->stats.weight));
		report_section(doc, TITLE("Clocks"));
		clocks(doc, &b->stats);
		report_section(doc, TITLE("Peak"));
		char name[16];
		snprintf(name, sizeof(name), rep->n_boards > 1 ? "peak-%zu" : "peak", i + 1);
		peak(doc, b, name);
		report_section(doc, TITLE("Memory and swap"));
		if (channel_table(doc, &b->stats, CHANNEL_KIND_MEMORY, true) == 0) {
			report_para(doc, "No memory or swap channel has samples in this window.");
		}
	}
	report_section(doc, TITLE("Runs"));
	runs(doc, rep, b);
	report_section(doc, TITLE("Capacitor lifetime"));
	lifetime(doc, rep, b);
#undef TITLE
}

/* ---- two boards ---- */

static ssize_t slot_of(const struct query_stats *s, const char *key) {
	for (size_t k = 0; k < s->sel.n; k++) {
		if (strcmp(query_selection_channel(&s->sel, k)->key, key) == 0) {
			return (ssize_t)k;
		}
	}
	return -1;
}

static void ratio(struct report_block *t, size_t col, double b, double a) {
	report_num(t, col, a != 0 ? b / a : NAN, 3);
}

/*
 * Channels of @kind on both boards side by side: mean, p95 and max of each and B over A, in
 * the unit registry's reading (MHz, MiB, with a unit column; zones in °C without one);
 * clocks add each board's commonest states.
 * Returns the rows.
 */
static size_t compared(struct report_doc *doc, const struct report *rep, enum channel_kind kind,
		       const char *first) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	bool clock = kind == CHANNEL_KIND_FREQUENCY;
	bool unit_col = kind != CHANNEL_KIND_TEMPERATURE; // zones: °C, said under the table
	const char *head[] = {first,   "unit",        "mean A",     "mean B", "B/A",
			      "p95 A", "p95 B",       "B/A",        "max A",  "max B",
			      "B/A",   "residency A", "residency B"};
	// Temperatures compare as differences: °C has no true zero, a ratio of two means nothing.
	const char *zone_head[] = {first,   "mean A", "mean B", "B−A K", "p95 A",
				   "p95 B", "B−A K",  "max A",  "max B", "B−A K"};
	size_t base = unit_col ? 2 : 1; // the first figure's column
	size_t cols = clock ? 13 : unit_col ? 11 : 10;
	struct report_block *t = NULL;
	size_t n = 0;
	for (size_t k = 0; k < a->stats.sel.n; k++) {
		const struct channel *ch = query_selection_channel(&a->stats.sel, k);
		ssize_t o = slot_of(&b->stats, ch->key);
		if (ch->kind != kind || o < 0 || a->stats.acc[k].count == 0 ||
		    b->stats.acc[o].count == 0 ||
		    (clock &&
		     (!clock_sampled(&a->stats, k) || !clock_sampled(&b->stats, (size_t)o)))) {
			continue;
		}
		if (!t) {
			t = report_table(doc, cols, unit_col ? head : zone_head);
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
		int places = places_of(ch);
		double v[6] = {
			query_stats_mean(&a->stats, k) * factor,
			query_stats_mean(&b->stats, (size_t)o) * factor,
			query_stats_percentile(&a->stats, k, 95) * factor,
			query_stats_percentile(&b->stats, (size_t)o, 95) * factor,
			stats_value(a->stats.acc[k].max_q, ch->resolution) * factor,
			stats_value(b->stats.acc[o].max_q, cb->resolution) * factor,
		};
		report_row(t);
		report_cell(t, 0, "%s", ch->key);
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
			residency(side ? &b->stats : &a->stats, side ? (size_t)o : k, 3, &r);
			report_cell(t, 11 + side, "%s", r.data ? r.data : "");
			buf_finish(&r);
		}
		n++;
	}
	return n;
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
		report_para(doc, "The boards have no zone in common.");
		return;
	}
	report_para(doc,
		    "A is %s, B is %s; °C, %s; B−A is B's figure minus A's in kelvin (temperatures "
		    "compare as differences, never as ratios).",
		    a->name, b->name, weight_text(a->stats.weight));
}

/* The clocks and the memory and swap of both boards side by side, as the zones are. */
static void clocks_memory_compared(struct report_doc *doc, const struct report *rep) {
	const struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	if (!compared_section(doc, rep, "Clocks compared", "clocks or memory")) {
		return;
	}
	if (compared(doc, rep, CHANNEL_KIND_FREQUENCY, "clock") == 0) {
		report_para(doc,
			    "The boards have no clock (cpufreq or devfreq) channel in common.");
	} else {
		report_para(
			doc,
			"A is %s, B is %s; each clock's mean, p95 and max (%s) and B/A, and each "
			"board's three commonest states (residency, as in its Clocks table).",
			a->name, b->name, weight_text(a->stats.weight));
	}
	report_section(doc, "Memory and swap compared");
	if (compared(doc, rep, CHANNEL_KIND_MEMORY, "channel") == 0) {
		report_para(doc, "The boards have no memory or swap channel in common.");
	} else {
		report_para(doc, "A is %s, B is %s; MiB, %s; B/A is B's figure over A's.", a->name,
			    b->name, weight_text(a->stats.weight));
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
static void verdict_section(struct report_doc *doc, const struct report *rep) {
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

void report_charts_free(struct report_chart *charts, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(charts[i].name);
		free(charts[i].svg);
	}
	free(charts);
}

void report_doc_build(const struct report *rep, struct report_doc *doc) {
	*doc = (struct report_doc){.max_bytes = rep->opt.max_bytes};
	const char *what = rep->opt.lifetime == REPORT_LIFETIME_ONLY
				   ? "thermlog capacitor design review"
				   : "thermlog report";
	doc->title = rep->n_boards > 1 ? xasprintf("%s: %s against %s", what, rep->boards[0].name,
						   rep->boards[1].name)
				       : xasprintf("%s: %s", what, rep->boards[0].name);
	if (rep->n_boards > 1 && rep->opt.lifetime != REPORT_LIFETIME_ONLY) {
		verdict_section(doc, rep); // at the top: is the rest like for like at all?
	}
	board_section(doc, rep);
	if (rep->opt.lifetime != REPORT_LIFETIME_ONLY) {
		if (rep->n_boards > 1) {
			zones_compared(doc, rep);
			clocks_memory_compared(doc, rep);
			runs_compared(doc, rep);
		}
		for (size_t i = 0; i < rep->n_boards; i++) {
			board_sections(doc, rep, i);
		}
	}
	for (size_t i = 0; rep->opt.lifetime != REPORT_LIFETIME_NONE && i < rep->n_boards; i++) {
		report_review_sections(doc, rep, i);
	}
	if (report_over_budget(doc)) {
		double factor;
		const char *symbol = unit_symbol("bytes", &factor);
		doc->max_bytes = 0; // the last word is always said
		doc->cut = false;
		report_section(doc, "Report cut");
		report_para(
			doc,
			"This report stops here: it reached the %.*f %s its answer may hold, so what "
			"would follow the last table or section shown is left out. Ask for a shorter "
			"window or fewer run labels.",
			unit_places("bytes", false), (double)rep->opt.max_bytes * factor, symbol);
	}
}

void report_doc_finish(struct report_doc *doc) {
	for (size_t i = 0; i < doc->n; i++) {
		report_block_free(&doc->blocks[i]);
	}
	report_block_free(&doc->sink);
	free(doc->blocks);
	report_charts_free(doc->charts, doc->n_charts);
	free(doc->title);
	*doc = (struct report_doc){0};
}
