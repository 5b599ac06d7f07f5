/*
 * The report laid out as a document: sections of headings, paragraphs, tables and charts in
 * plain text, from the computed answers alone (report.c). Values read as the unit registry
 * says (unit.c: hertz as MHz, bytes as MiB); temperatures with two decimals, durations as
 * unit_duration() writes them. The Board, Load and Throttling sections are report-board.c's,
 * those of two boards report-compare.c's.
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

/* ---- one board ---- */

/* Which channels a table of statistics takes. */
enum table_rows {
	ROWS_ZONES,       // the thermal zones
	ROWS_OTHER_TEMPS, // temperatures that are no thermal zone: thermocouples, ambients
	ROWS_MEMORY,      // memory and swap
};

static bool row_wanted(enum table_rows rows, const struct channel *ch) {
	switch (rows) {
	case ROWS_ZONES:
		return report_is_zone(ch);
	case ROWS_OTHER_TEMPS:
		return ch->kind == CHANNEL_KIND_TEMPERATURE && !report_is_zone(ch);
	case ROWS_MEMORY:
		return ch->kind == CHANNEL_KIND_MEMORY;
	}
	return false;
}

/* How many channels with samples @rows selects in @b's window. */
static size_t rows_of(const struct report_board *b, enum table_rows rows) {
	size_t n = 0;
	for (size_t k = 0; k < b->stats.sel.n; k++) {
		n += row_wanted(rows, query_selection_channel(&b->stats.sel, k)) &&
		     b->stats.acc[k].count > 0;
	}
	return n;
}

/* What a temperature that is no zone measures: its role, or what its source says it is. */
static const char *temperature_what(const struct report_board *b, const struct channel *ch) {
	bool thermocouple = strstr(ch->key, "thermocouple") ||
			    (ch->meta && strstr(ch->meta, "\"thermocouple_type\""));
	if (report_role(b, ch->key) == ROLE_AMBIENT) {
		return thermocouple ? "ambient: the thermocouple's cold junction" : "ambient";
	}
	if (thermocouple) {
		return "thermocouple";
	}
	return strncmp(ch->key, "hwmon/", 6) == 0 ? "hwmon sensor" : "temperature sensor";
}

/*
 * The channels @rows selects in board @b's window, one row each: the channel (its label beside
 * the key when it says more), what it measures (other temperatures), the unit, the samples,
 * mean, p50, p95 (and min), max with its time.
 */
static size_t channel_table(struct report_doc *doc, const struct report_board *b,
			    enum table_rows rows) {
	const struct query_stats *s = &b->stats;
	bool with_min = rows == ROWS_MEMORY, with_what = rows == ROWS_OTHER_TEMPS;
	static const char *const head[] = {"channel", "what", "unit", "samples", "mean",
					   "p50",     "p95",  "min",  "max",     "max at (UTC)"};
	const char *h[10];
	size_t cols = 0;
	for (size_t i = 0; i < 10; i++) {
		if ((i != 7 || with_min) && (i != 1 || with_what)) {
			h[cols++] = head[i];
		}
	}
	struct report_block *t = NULL;
	size_t n = 0;
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		const struct stats_acc *acc = &s->acc[k];
		if (!row_wanted(rows, ch) || acc->count == 0) {
			continue;
		}
		if (!t) {
			t = report_table(doc, cols, h);
			t->right[1] = false;
			t->right[2] = !with_what;
		}
		double factor;
		const char *unit = unit_symbol(ch->unit, &factor);
		int places = report_places(ch);
		size_t c = 0;
		report_row(t);
		const char *label = report_label(ch);
		report_cell(t, c++, *label ? "%s (%s)" : "%s", ch->key, label);
		if (with_what) {
			report_cell(t, c++, "%s", temperature_what(b, ch));
		}
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
	if (t) {
		t->right[0] = false;
	}
	return n;
}

#define CLOCK_STATES_SHOWN 6

/* Residency per CPU cluster and devfreq device: "held 1800 MHz for 60.0 % of the time". */
static void clocks(struct report_doc *doc, const struct report_board *b) {
	const struct query_stats *s = &b->stats;
	static const char *const head[] = {"channel", "part", "mean MHz", "residency"};
	struct report_block *t = NULL;
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		if (!report_clock_sampled(s, k)) {
			continue;
		}
		if (!t) {
			t = report_table(doc, 4, head);
			t->right[0] = t->right[1] = t->right[3] = false;
		}
		double factor;
		unit_symbol(ch->unit, &factor);
		struct buf r;
		buf_init(&r);
		report_residency(s, k, CLOCK_STATES_SHOWN, &r);
		report_row(t);
		const char *label = report_label(ch);
		enum role role = report_role(b, ch->key);
		report_cell(t, 0, *label ? "%s (%s)" : "%s", ch->key, label);
		report_cell(t, 1, "%s", role == ROLE_NONE ? "-" : role_text(role));
		report_num(t, 2, query_stats_mean(s, k) * factor, report_places(ch));
		report_cell(t, 3, "%s", r.data ? r.data : "");
		buf_finish(&r);
	}
	if (!t) {
		report_para(doc,
			    "No clock (cpufreq or devfreq) channel has samples in this window.");
	}
}

static void peak(struct report_doc *doc, const struct report *rep, const struct report_board *b,
		 const char *chart_name) {
	if (!b->has_peak) {
		report_para(
			doc, "%s",
			rep->opt.peak_channel
				? "No peak to show: the channel --peak-channel names has no raw "
				  "samples around its maximum in this window."
				: "No peak to show: no thermal zone has raw samples around its "
				  "maximum in this window (they may have been pruned to hourly "
				  "rollups).");
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
	enum role role = report_role(b, ch->key);
	const char *label = report_label(ch);
	struct buf what = {0};
	buf_puts(&what, rep->opt.peak_channel ? "The channel --peak-channel chose, "
					      : "The hottest zone, ");
	buf_puts(&what, ch->key);
	if (*label) {
		buf_printf(&what, " (%s)", label);
	}
	if (role != ROLE_NONE) {
		buf_printf(&what, ", the %s,", role_text(role));
	} else {
		buf_puts(&what, ",");
	}
	report_para(
		doc,
		"%s peaked at %.2f %s at %s. The chart shows the %zu cycles around it (%s .. %s) "
		"in minutes from the peak, each thermal zone in its role's line style (the "
		"legend names them).",
		what.data, stats_value(pk->max_q, ch->resolution) * factor, unit, at, pk->n_rows,
		from, to);
	buf_finish(&what);
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
		if (!report_label_shown(&rep->opt, l->label)) {
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
		if (!report_label_shown(&rep->opt, l->label)) {
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
	report_section_of(doc, rep, i, "Zones");
	if (b->empty) {
		char a[TIMEFMT_ISO_LEN], z[TIMEFMT_ISO_LEN];
		iso(rep->opt.has_from ? rep->opt.from : b->stats.from, a);
		iso(rep->opt.has_to ? rep->opt.to : b->stats.to, z);
		if (b->has_stats || rep->opt.has_from || rep->opt.has_to) {
			report_para(
				doc,
				"No samples in this window (%s .. %s): there are no zone, clock, "
				"load, peak or memory figures to show.",
				a, z);
		} else {
			report_para(doc, "No samples: the database holds no history yet.");
		}
	} else {
		if (channel_table(doc, b, ROWS_ZONES) == 0) {
			report_para(doc, "No thermal zone has samples in this window.");
		}
		report_para(
			doc,
			"The thermal zones, in °C with two decimals; mean and percentiles %s (as "
			"thermlog stats --weight %s).",
			report_weight_text(b->stats.weight), query_weight_name(b->stats.weight));
		if (rows_of(b, ROWS_OTHER_TEMPS) > 0) { // few boards have them: no empty section
			report_section_of(doc, rep, i, "Other temperatures");
			channel_table(doc, b, ROWS_OTHER_TEMPS);
			report_para(doc,
				    "Temperatures that are no thermal zone, each said for what "
				    "it measures: never taken for the board's heat (its zones).");
		}
		report_section_of(doc, rep, i, "Clocks");
		clocks(doc, b);
		report_load_section(doc, rep, i);
		report_throttle_section(doc, rep, i);
		report_section_of(doc, rep, i, "Peak");
		char name[16];
		snprintf(name, sizeof(name), rep->n_boards > 1 ? "peak-%zu" : "peak", i + 1);
		peak(doc, rep, b, name);
		report_section_of(doc, rep, i, "Memory and swap");
		if (channel_table(doc, b, ROWS_MEMORY) == 0) {
			report_para(doc, "No memory or swap channel has samples in this window.");
		}
	}
	report_section_of(doc, rep, i, "Runs");
	runs(doc, rep, b);
	report_section_of(doc, rep, i, "Capacitor lifetime");
	lifetime(doc, rep, b);
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
		report_verdict_section(doc, rep); // at the top: is the rest like for like at all?
	}
	report_board_section(doc, rep);
	if (rep->opt.lifetime != REPORT_LIFETIME_ONLY) {
		if (rep->n_boards > 1) {
			report_compare_sections(doc, rep);
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
