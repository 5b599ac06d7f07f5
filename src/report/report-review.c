/*
 * The capacitor design review laid out as a document (report-internal.h): per capacitor its
 * data, the temperatures it ages at, what the measurements show against what the configuration
 * says, its profile, consumed life, warnings and the review checklist.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-internal.h"
#include "timefmt.h"
#include "xalloc.h"

/* A row of a two- or three-column table: a name, a value, a note. */
static __attribute__((format(printf, 4, 5))) void fact(struct report_block *t, const char *name,
						       const char *note, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	char *value = xvasprintf(fmt, ap);
	va_end(ap);
	report_row(t);
	report_cell(t, 0, "%s", name);
	report_cell(t, 1, "%s", value);
	if (t->cols > 2) {
		report_cell(t, 2, "%s", note ? note : "");
	}
	free(value);
}

static struct report_block *facts(struct report_doc *doc, bool notes) {
	static const char *const head[] = {"", "value", "note"};
	struct report_block *t = report_table(doc, notes ? 3 : 2, head);
	for (size_t c = 0; c < t->cols; c++) {
		t->right[c] = false;
	}
	return t;
}

static void part_data(struct report_doc *doc, const struct report_board *b, size_t i) {
	const struct capacitor_config *cc = b->life.entries[i].cc;
	const struct lifetime_params *p = &b->params[i];
	report_heading(doc, "Part data");
	struct report_block *t = facts(doc, false);
	fact(t, "rated life", NULL, "%g h", cc->rated_life_h);
	fact(t, "rated temperature", NULL, "%g °C (%s)", cc->rated_temp_c,
	     temp_basis_name(cc->basis));
	fact(t, "type", NULL, "%s", capacitor_type_name(cc->type));
	if (!b->params_ok[i]) {
		fact(t, "model", NULL, "invalid rating: see the warnings");
	} else if (p->model == LIFETIME_MODEL_BT) {
		fact(t, "model", NULL, "B_t rule: life x%g per %g K cooler (%s)", p->base,
		     p->step_k, p->bt_given ? "bt as configured" : "the default for the type");
	} else {
		fact(t, "model", NULL, "Arrhenius, activation energy %g eV", p->ea_ev);
	}
	switch (cc->self_heating) {
	case SELF_HEATING_RIPPLE:
		fact(t, "ripple rating", NULL, "%g A rated ripple with a %g K rise; %g A in use",
		     cc->rated_ripple_a, cc->rated_rise_k, cc->current_a);
		for (size_t k = 0; k < cc->n_ripple; k++) {
			const struct capacitor_ripple *r = &cc->ripple[k];
			fact(t, "ripple component", NULL,
			     "%g A at %g Hz, frequency multiplier %g: %g A at the rated frequency",
			     r->current_a, r->freq_hz, r->multiplier, r->current_a / r->multiplier);
		}
		if (cc->n_ripple) {
			fact(t, "ripple in use", NULL,
			     "sqrt(sum (I / multiplier)²) = %g A at the rated frequency, against the "
			     "%g A rating%s",
			     cc->current_a, cc->rated_ripple_a,
			     cc->current_a > cc->rated_ripple_a ? ": OVER THE RATING" : "");
		}
		break;
	case SELF_HEATING_POWER:
		fact(t, "ripple rating", NULL,
		     "not configured; %g A at an ESR of %g ohm, %g K/W to ambient", cc->current_a,
		     cc->esr_ohm, cc->rth_k_per_w);
		break;
	default:
		fact(t, "ripple rating", NULL, "not configured");
	}
	fact(t, "seal-ageing limit", NULL, "%g years (%.0f h)", lifetime_cap_years(cc),
	     lifetime_cap_years(cc) * LIFETIME_HOURS_PER_YEAR);
	fact(t, "model valid from", NULL, "%g °C%s",
	     isnan(cc->validity_low_c) ? LIFETIME_DEFAULT_LOW_C : cc->validity_low_c,
	     isnan(cc->validity_low_c) ? " (the default)" : "");
	if (cc->has_in_service) {
		char at[TIMEFMT_ISO_LEN];
		timefmt_iso(cc->in_service, at);
		fact(t, "in service since", NULL, "%.10s", at);
	} else {
		fact(t, "in service since", NULL,
		     "not recorded: the part counts as old as its "
		     "observed time");
	}
}

/* How the sensor's reading becomes the temperature the model ages the part at. */
static void assumptions(struct report_doc *doc, const struct report_board *b, size_t i) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	const struct capacitor_config *cc = e->cc;
	double rise = b->params_ok[i] ? b->params[i].rise_k : NAN;
	report_heading(doc, "Sensor and basis");
	struct report_block *t = facts(doc, false);
	if (strcmp(cc->sensor, e->sensor_key) != 0) {
		fact(t, "sensor", NULL, "%s (configured as %s)", e->sensor_key, cc->sensor);
	} else {
		fact(t, "sensor", NULL, "%s", e->sensor_key);
	}
	fact(t, "basis", NULL, "%s", temp_basis_name(cc->basis));
	if (isfinite(rise) && cc->self_heating != SELF_HEATING_NONE) {
		fact(t, "self-heating added", NULL, "%+.2f K", rise);
	} else {
		fact(t, "self-heating added", NULL, "none");
	}
	const char *why;
	if (cc->basis == TEMP_BASIS_CASE || cc->basis == TEMP_BASIS_CORE) {
		report_para(
			doc,
			"The sensor measures the part's %s: its reading already contains the part's "
			"own ripple heating, so nothing is added to it (thermlog refuses self-heating "
			"on a case or core basis, which would count that heating twice). The rated "
			"temperature is taken as a %s temperature.",
			cc->basis == TEMP_BASIS_CASE ? "case" : "core (hot-spot) temperature",
			temp_basis_name(cc->basis));
		return;
	}
	switch (cc->self_heating) {
	case SELF_HEATING_RISE:
		why = "the configured rise (rise_k) is added to every sample";
		break;
	case SELF_HEATING_POWER:
		why = "I² x ESR x Rth (current_a, esr_ohm, rth_k_per_w) is added to every sample";
		break;
	case SELF_HEATING_RIPPLE:
		why = b->params_ok[i] && b->params[i].ripple_over_rated
			      ? "the rated life already contains the rise at rated ripple, so only "
				"rated_rise_k x ((current_a / rated_ripple_a)² - 1) is added, doubled "
				"above the rated ripple"
			      : "the rated life already contains the rise at rated ripple, so only "
				"rated_rise_k x ((current_a / rated_ripple_a)² - 1) is added (below "
				"the rated ripple it is negative)";
		break;
	default:
		why = "no self-heating is added: the part is taken to carry at most its rated "
		      "ripple, whose rise the rated life already contains";
	}
	report_para(
		doc,
		"The sensor reads the air around the part (ambient), the scale the rating is stated "
		"on; an ambient sensor does not see the part's own heating, so it is counted once, "
		"here: %s. The tables below give the measured temperature and, where self-heating "
		"is added, the effective one the model ages the part at.",
		why);
}

static void mission_profile(struct report_doc *doc, const struct report_board *b, size_t i,
			    const char *chart_name) {
	const struct lifetime_profile_entry *pe = &b->profile.entries[i];
	report_heading(doc, "Mission profile");
	if (pe->n_bins == 0) {
		report_para(
			doc,
			"No temperature samples in this window: no profile (the warnings say why).");
		return;
	}
	double rise = pe->e->r.self_heating_k;
	bool measured = isfinite(rise) && rise != 0;
	static const char *const head[] = {"effective °C", "measured °C", "hours",
					   "time %",       "consumed %",  "T_bin °C"};
	const char *h[6];
	size_t cols = 0;
	for (size_t c = 0; c < 6; c++) {
		if (c != 1 || measured) {
			h[cols++] = c == 0 && !measured ? "bin °C" : head[c];
		}
	}
	struct report_block *t = report_table(doc, cols, h);
	t->right[1] = !measured;
	for (size_t k = 0; k < pe->n_bins; k++) {
		const struct lifetime_profile_bin *bin = &pe->bins[k];
		size_t c = 0;
		report_row(t);
		report_cell(t, c++, "[%g,%g)", bin->from_c, bin->to_c);
		if (measured) {
			report_cell(t, c++, "[%g,%g)", bin->from_c - rise, bin->to_c - rise);
		}
		report_num(t, c++, bin->hours, 2);
		report_num(t, c++, pe->hours > 0 ? 100 * bin->hours / pe->hours : NAN, 2);
		report_num(t, c++,
			   pe->consumed_fraction > 0
				   ? 100 * bin->consumed_fraction / pe->consumed_fraction
				   : NAN,
			   2);
		report_num(t, c++, bin->temp_c, 2);
	}
	report_para(
		doc,
		"Hours per %g K bin of the temperature the model ages the part at%s, each bin's "
		"share of the hours and of the consumed life, and T_bin, the constant temperature "
		"that consumes the bin's share in its hours (a mission-profile row), as thermlog "
		"lifetime profile --json has them: %.2f h, consumed %.6f in all.",
		b->profile.bin_k, measured ? " (the measured one plus the self-heating)" : "",
		pe->hours, pe->consumed_fraction);
	report_chart_add(doc, chart_name, report_chart_profile(pe, b->profile.bin_k),
			 xasprintf("Hours per %g K bin of %s's %s temperature", b->profile.bin_k,
				   pe->e->cc->name, measured ? "effective" : "measured"));
}

static void consumed_over_time(struct report_doc *doc, const struct report_board *b, size_t i,
			       const struct report_options *opt, const char *chart_name) {
	const struct lifetime_series *s = &b->series[i];
	report_heading(doc, "Consumed life over time");
	size_t shown = 0;
	for (size_t k = 0; k < s->n; k++) {
		shown += isfinite(s->consumed[k]);
	}
	if (shown == 0) {
		report_para(doc, "No consumed life to chart in this window.");
		return;
	}
	report_chart_add(doc, chart_name, report_chart_consumed(s, b->life.entries[i].cc),
			 xasprintf("Consumed life of %s from the window's start",
				   b->life.entries[i].cc->name));
	static const char *const head[] = {"up to (UTC)", "observed h", "consumed"};
	struct report_block *t = report_table(doc, 3, head);
	for (size_t k = 0; k < s->n; k++) {
		char at[TIMEFMT_ISO_LEN];
		timefmt_iso(s->to[k], at);
		report_row(t);
		report_cell(t, 0, "%s", at);
		report_num(t, 1, s->observed_h[k], 2);
		report_num(t, 2, s->consumed[k], 6);
	}
	char from[TIMEFMT_ISO_LEN + 16] = "";
	if (opt->has_from) {
		char at[TIMEFMT_ISO_LEN];
		timefmt_iso(opt->from, at);
		snprintf(from, sizeof(from), "--from %s ", at);
	}
	report_para(
		doc,
		"Each row is thermlog lifetime --json %s--to TIME: the life consumed in the "
		"observed time from the window's start to TIME, not extrapolated; the last row is "
		"the whole window (TIME its last sample).",
		from);
}

static void to_date(struct report_doc *doc, const struct report_board *b, size_t i,
		    const struct report_options *opt) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	const struct lifetime_result *r = &e->r;
	report_heading(doc, "Consumed life to date");
	if (!(r->observed_h > 0) || !isfinite(r->consumed_fraction)) {
		report_para(doc,
			    "Nothing observed in this window: no figures (the warnings say why).");
		return;
	}
	static const char *const head[] = {"figure", "value", "note"};
	struct report_block *t = report_table(doc, 3, head);
	t->right[2] = false;
	report_row(t);
	report_cell(t, 0, "observed h");
	report_num(t, 1, r->observed_h, 2);
	report_cell(t, 2, "coverage %.1f %% of the window's stored span", 100 * e->coverage);
	report_row(t);
	report_cell(t, 0, "consumed, observed");
	report_num(t, 1, r->consumed_fraction, 6);
	report_cell(t, 2, "D, the Miner sum over the observed time");
	report_row(t);
	report_cell(t, 0, "consumed, extrapolated");
	report_num(t, 1, e->cc->has_in_service ? r->consumed_extrapolated : NAN, 6);
	if (e->cc->has_in_service) {
		report_cell(t, 2, "over %.0f h in service without samples, at the observed rate",
			    r->unobserved_service_h);
	} else {
		report_cell(t, 2, "none: no in-service date");
	}
	report_row(t);
	report_cell(t, 0, "consumed, total");
	report_num(t, 1, r->consumed_total, 6);
	report_cell(t, 2, "%s", r->past_life ? "PAST ITS ESTIMATED LIFE" : "");
	report_row(t);
	report_cell(t, 0, "effective life h");
	report_num(t, 1, r->life_h, 0);
	report_cell(t, 2, "%.1f years%s", r->life_h / LIFETIME_HOURS_PER_YEAR,
		    r->capped ? "; capped (see the warnings)" : "");
	report_row(t);
	report_cell(t, 0, "uncapped life h");
	report_num(t, 1, r->life_uncapped_h, 0);
	report_cell(t, 2, "observed hours over D");
	double rise = r->self_heating_k;
	static const char *const temps[] = {"equivalent temperature °C", "mean temperature °C",
					    "p95 temperature °C"};
	double tv[] = {r->equivalent_temp_c, r->mean_temp_c, e->p95_temp_c};
	for (size_t k = 0; k < 3; k++) {
		report_row(t);
		report_cell(t, 0, "%s", temps[k]);
		report_num(t, 1, tv[k], 2);
		if (rise != 0 && isfinite(tv[k])) {
			report_cell(t, 2, "measured; %.2f °C effective", tv[k] + rise);
		} else {
			report_cell(t, 2, "measured");
		}
	}
	report_row(t);
	report_cell(t, 0, "remaining h");
	report_num(t, 1, r->remaining_h, 0);
	report_cell(t, 2, "%.1f years", r->remaining_h / LIFETIME_HOURS_PER_YEAR);
	// From the report's time with an in-service date (the age runs to it), else from the
	// last sample: nothing is known of the time after it.
	int64_t base = e->cc->has_in_service ? opt->now : b->life.to;
	report_row(t);
	report_cell(t, 0, "projected end of life");
	if (isfinite(r->remaining_h)) {
		char at[TIMEFMT_ISO_LEN], from[TIMEFMT_ISO_LEN];
		timefmt_iso(base + (int64_t)llround(r->remaining_h * 3600.0), at);
		timefmt_iso(base, from);
		report_cell(t, 1, "%.10s", at);
		report_cell(t, 2, "%.10s (%s) + the remaining hours", from,
			    e->cc->has_in_service ? "the report's date" : "the last sample");
	} else {
		report_cell(t, 1, "-");
	}
	report_para(doc, "As thermlog lifetime --json computes it over the window; temperatures "
			 "time-weighted, on the sensor's scale.");
}

static void relative_lives(struct report_doc *doc, const struct lifetime_report_entry *e) {
	const struct lifetime_result *r = &e->r;
	report_heading(doc, "Relative lives");
	if (!isfinite(r->relative[1].factor)) {
		report_para(doc, "No relative lives: nothing observed.");
		return;
	}
	static const char *const head[] = {"cooler by K", "life factor", "life h (uncapped)",
					   "life h (capped)"};
	struct report_block *t = report_table(doc, 4, head);
	double cap_h = lifetime_cap_years(e->cc) * LIFETIME_HOURS_PER_YEAR;
	for (int k = 1; k < LIFETIME_N_RELATIVE; k++) {
		report_row(t);
		report_num(t, 0, r->relative[k].reduction_k, 0);
		report_num(t, 1, r->relative[k].factor, 3);
		report_num(t, 2, r->relative[k].life_h, 0);
		report_num(t, 3, r->relative[k].life_h > cap_h ? cap_h : r->relative[k].life_h, 0);
	}
	report_para(doc,
		    "The life if the part ran that much cooler than its equivalent temperature "
		    "(%.2f °C), as thermlog lifetime --json's relative_lifetime; the capped column "
		    "bounds it by the seal-ageing limit.",
		    r->equivalent_temp_c);
}

static void warnings(struct report_doc *doc, const struct lifetime_result *r) {
	report_heading(doc, "Warnings");
	if (r->n_warnings == 0) {
		report_para(doc, "No warnings.");
		return;
	}
	static const char *const head[] = {"code", "message"};
	struct report_block *t = report_table(doc, 2, head);
	t->right[1] = false;
	for (size_t k = 0; k < r->n_warnings; k++) {
		report_row(t);
		report_cell(t, 0, "%s", lifetime_warning_name(r->warnings[k].code));
		report_cell(t, 1, "%s", r->warnings[k].message);
	}
}

static void checklist(struct report_doc *doc, const struct lifetime_report_entry *e) {
	const struct capacitor_config *cc = e->cc;
	report_heading(doc, "Review checklist");
	static const char *const head[] = {"item", "record", "from"};
	struct report_block *t = report_table(doc, 3, head);
	t->right[1] = t->right[2] = false;
	static const struct {
		const char *item;
		enum capacitor_review_key key;
	} items[] = {
		{"real enclosure reproduced", CAPACITOR_REVIEW_ENCLOSURE},
		{"orientation reproduced", CAPACITOR_REVIEW_ORIENTATION},
		{"thermocouple contact", CAPACITOR_REVIEW_THERMOCOUPLE},
		{"thermocouple insulation", CAPACITOR_REVIEW_INSULATION},
		{"ambient, case and core kept apart", CAPACITOR_REVIEW_N},
		{"series test conditions and validity", CAPACITOR_REVIEW_SERIES_CONDITIONS},
		{"heat sources nearby", CAPACITOR_REVIEW_HEAT_SOURCES},
		{"vent clearance", CAPACITOR_REVIEW_VENT_CLEARANCE},
	};
	for (size_t k = 0; k < sizeof(items) / sizeof(items[0]); k++) {
		report_row(t);
		report_cell(t, 0, "%s", items[k].item);
		if (items[k].key == CAPACITOR_REVIEW_N) {
			report_cell(t, 1, "sensor %s on the %s basis; self-heating %s",
				    e->sensor_key, temp_basis_name(cc->basis),
				    cc->self_heating == SELF_HEATING_NONE ? "not added"
									  : "added once");
			report_cell(t, 2, "configuration: sensor, basis, self_heating");
		} else if (cc->review[items[k].key]) {
			report_cell(t, 1, "%s", cc->review[items[k].key]);
			report_cell(t, 2, "review: %s", capacitor_review_keys[items[k].key]);
		} else {
			report_cell(t, 1, "not recorded");
			report_cell(t, 2, "review: %s", capacitor_review_keys[items[k].key]);
		}
	}
	report_para(doc, "The records are the free text of the capacitor's review: map in the "
			 "configuration; an item without one reads \"not recorded\".");
}

/* The design review of board @bi: a section a capacitor. */
void report_review_sections(struct report_doc *doc, const struct report *rep, size_t bi) {
	const struct report_board *b = &rep->boards[bi];
	const char *of = rep->n_boards > 1 ? b->name : NULL;
	if (!rep->opt.cfg || rep->opt.cfg->n_capacitors == 0 || !b->has_review) {
		report_section(doc, "Capacitor design review%s%s", of ? ": " : "", of ? of : "");
		report_para(doc, "No capacitors are configured (a 'capacitors:' section of the "
				 "configuration adds them): there is nothing to review.");
		return;
	}
	for (size_t i = 0; i < b->life.n; i++) {
		const struct lifetime_report_entry *e = &b->life.entries[i];
		report_section(doc, "Capacitor design review: %s%s%s", e->cc->name,
			       of ? " on " : "", of ? of : "");
		part_data(doc, b, i);
		assumptions(doc, b, i);
		char name[48];
		snprintf(name, sizeof(name),
			 rep->n_boards > 1 ? "cap%zu-profile-%zu" : "cap%zu-profile", i + 1,
			 bi + 1);
		mission_profile(doc, b, i, name);
		snprintf(name, sizeof(name),
			 rep->n_boards > 1 ? "cap%zu-consumed-%zu" : "cap%zu-consumed", i + 1,
			 bi + 1);
		consumed_over_time(doc, b, i, &rep->opt, name);
		to_date(doc, b, i, &rep->opt);
		relative_lives(doc, e);
		warnings(doc, &e->r);
		checklist(doc, e);
	}
}
