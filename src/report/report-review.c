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

/* A table of figures: each one's name, its value and a note (text, not aligned right). */
static struct report_block *figures(struct report_doc *doc) {
	static const char *const head[] = {"figure", "value", "note"};
	struct report_block *t = report_table(doc, 3, head);
	t->right[2] = false;
	return t;
}

/* A row of table @t: figure @name and its value @v with @places places. */
static void figure_row(struct report_block *t, const char *name, double v, int places) {
	report_row(t);
	report_cell(t, 0, "%s", name);
	report_num(t, 1, v, places);
}

/* The validity band, the upper category, the voltage term and the sensor's uncertainty. */
static void part_bands(struct report_block *t, const struct lifetime_params *p) {
	fact(t, "validity band", NULL, "[%g, %g] °C%s", p->validity_low_c, p->valid_high_c,
	     p->valid_configured ? " (valid_c: where the series' coefficient is stated)"
				 : " (the default: the lowest ambient calculators accept to the "
				   "rated temperature)");
	fact(t, "upper category temperature", NULL, "%g °C%s", p->max_temp_c,
	     p->max_temp_c == p->rated_temp_c ? " (the rated temperature)" : "");
	if (p->voltage_on) {
		fact(t, "voltage term", NULL,
		     "x%.3f on every life (voltage: applied / rated, "
		     "to the configured exponent)",
		     p->voltage_factor);
	} else {
		fact(t, "voltage term", NULL, "none (K_V = 1)");
	}
	fact(t, "sensor uncertainty", NULL, "±%g K%s", p->uncertainty_k,
	     p->uncertainty_k == CAPACITOR_DEFAULT_UNCERTAINTY_K ? " (the default: a thermocouple)"
								 : "");
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
		if (isnan(cc->current_a)) {
			fact(t, "ripple rating", NULL,
			     "%g A rated ripple with a %g K rise; the current in use measured",
			     cc->rated_ripple_a, cc->rated_rise_k);
			break;
		}
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
		if (isnan(cc->current_a)) {
			fact(t, "ripple rating", NULL,
			     "not configured; the measured current at an ESR of %g ohm, %g K/W to "
			     "ambient",
			     cc->esr_ohm, cc->rth_k_per_w);
			break;
		}
		fact(t, "ripple rating", NULL,
		     "not configured; %g A at an ESR of %g ohm, %g K/W to ambient", cc->current_a,
		     cc->esr_ohm, cc->rth_k_per_w);
		break;
	default:
		fact(t, "ripple rating", NULL, "not configured");
	}
	fact(t, "seal-ageing limit", NULL, "%g years (%.0f h)", lifetime_cap_years(cc),
	     lifetime_cap_years(cc) * LIFETIME_HOURS_PER_YEAR);
	if (b->params_ok[i]) {
		part_bands(t, p);
	}
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

/* What is added to the temperature the part ages at, as "self-heating added" reads. */
static void added_row(struct report_block *t, const struct report_board *b, size_t i) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	const struct lifetime_params *p = &b->params[i];
	if (!b->params_ok[i]) {
		fact(t, "self-heating added", NULL, "-");
	} else if (p->ripple_measured && p->basis == TEMP_BASIS_AMBIENT) {
		fact(t, "self-heating added", NULL,
		     "each sample's, from the current on %s: %+.2f K on average",
		     e->load_key ? e->load_key : e->cc->ripple_from.channel, e->r.self_heating_k);
	} else if (p->self_heating != SELF_HEATING_NONE && p->basis != TEMP_BASIS_AMBIENT) {
		fact(t, "self-heating added", NULL,
		     "none: the %s reading contains it (the modelled rise is checked below)",
		     temp_basis_name(p->basis));
	} else if (p->self_heating != SELF_HEATING_NONE) {
		fact(t, "self-heating added", NULL, "%+.2f K", p->rise_k);
	} else {
		fact(t, "self-heating added", NULL, "none");
	}
}

/* Why the modelled rise is what it is, for an ambient the part ages at. */
static const char *added_why(const struct report_board *b, size_t i) {
	const struct lifetime_params *p = &b->params[i];
	switch (p->self_heating) {
	case SELF_HEATING_RISE:
		return "the configured rise (rise_k) is added to every sample";
	case SELF_HEATING_POWER:
		return p->ripple_measured
			       ? "I² x ESR x Rth with I each sample's ripple from the measured current "
				 "is added to that sample"
			       : "I² x ESR x Rth (current_a, esr_ohm, rth_k_per_w) is added to every "
				 "sample";
	case SELF_HEATING_RIPPLE:
		if (p->ripple_measured) {
			return "the rated life already contains the rise at rated ripple, so only "
			       "rated_rise_k x ((I / rated_ripple_a)² - 1) is added to each sample, "
			       "I its ripple from the measured current (doubled above the rated "
			       "ripple)";
		}
		return p->ripple_over_rated
			       ? "the rated life already contains the rise at rated ripple, so only "
				 "rated_rise_k x ((current_a / rated_ripple_a)² - 1) is added, doubled "
				 "above the rated ripple"
			       : "the rated life already contains the rise at rated ripple, so only "
				 "rated_rise_k x ((current_a / rated_ripple_a)² - 1) is added (below "
				 "the rated ripple it is negative)";
	case SELF_HEATING_NONE:
		break;
	}
	return "no self-heating is added: the part is taken to carry at most its rated ripple, "
	       "whose rise the rated life already contains";
}

/* The three temperatures, the one the part ages at and why, and what is added to it. */
static void temperatures(struct report_doc *doc, const struct report_board *b, size_t i) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	const struct capacitor_config *cc = e->cc;
	report_heading(doc, "Temperatures");
	struct report_block *t = facts(doc, false);
	for (int k = 0; k < TEMP_BASIS_N; k++) {
		const char *name = lifetime_sensor_of(cc, (enum temp_basis)k);
		const char *key = e->sensor_keys[k];
		if (!name) {
			fact(t, temp_basis_names[k], NULL, "not measured");
		} else if (key && strcmp(key, name) != 0) {
			fact(t, temp_basis_names[k], NULL, "%s (configured as %s)", key, name);
		} else {
			fact(t, temp_basis_names[k], NULL, "%s", name);
		}
	}
	fact(t, "ages at", NULL, "the %s temperature%s%s", temp_basis_name(cc->basis),
	     e->basis_reason ? ": " : "", e->basis_reason ? e->basis_reason : "");
	added_row(t, b, i);
	if (cc->basis != TEMP_BASIS_AMBIENT) {
		report_para(doc,
			    "The part ages at its %s: that reading already contains the part's own "
			    "ripple heating, so nothing is added to it (adding it would count that "
			    "heating twice). The rated temperature is taken as a %s temperature.",
			    cc->basis == TEMP_BASIS_CASE ? "case" : "core (hot-spot) temperature",
			    temp_basis_name(cc->basis));
		return;
	}
	report_para(doc,
		    "The part ages at the air around it (ambient), the scale the rating is stated "
		    "on; an ambient sensor does not see the part's own heating, so it is counted "
		    "once, here: %s. The tables below give the measured temperature and, where "
		    "self-heating is added, the effective one the model ages the part at.",
		    b->params_ok[i] ? added_why(b, i) : "the rating is invalid");
}

/* ---- what the measurements show against what the configuration says ---- */

/* The measured rise (case - ambient) beside the modelled one. */
static void heating_check(struct report_doc *doc, const struct report_board *b, size_t i) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	const struct capcheck_rise_result *c = &e->check;
	report_heading(doc, "Self-heating: measured against modelled");
	if (!e->has_check || !c->paired) {
		report_para(
			doc,
			"Not checked against measurements: that needs an ambient and a case "
			"sensor read at the same cycles (sensors: {ambient, case}). %s",
			isfinite(e->check.modelled_mean_k) ||
					e->cc->self_heating != SELF_HEATING_NONE
				? "The modelled self-heating is from configuration, not verified."
				: "No self-heating is configured either.");
		return;
	}
	struct report_block *t = figures(doc);
	figure_row(t, "measured rise, mean K", c->measured_mean_k, 2);
	report_cell(t, 2, "case - ambient, time-weighted over %.1f h of paired samples", c->hours);
	figure_row(t, "measured rise, p95 K", c->measured_p95_k, 2);
	figure_row(t, "modelled rise K", c->modelled_mean_k, 2);
	report_cell(t, 2, "%s",
		    isfinite(c->modelled_mean_k) ? "self_heating, as configured"
						 : "no self_heating configured");
	report_row(t);
	report_cell(t, 0, "verdict");
	if (isfinite(c->modelled_mean_k)) {
		report_cell(t, 1, "%s", c->mismatch ? "DISAGREE" : "agree");
		report_cell(t, 2,
			    "within %.2f K: the larger of %g K and %g %% of the modelled rise",
			    c->tolerance_k, CAPACITOR_DEFAULT_RISE_TOL_K,
			    CAPACITOR_DEFAULT_RISE_TOL_PCT);
	} else {
		report_cell(t, 1, "-");
		report_cell(t, 2, "nothing modelled to compare");
	}
	report_para(
		doc,
		"A case sensor sees less than the core (Rubycon's core/case ratio is 1.0 to 1.6 "
		"by diameter), hence the tolerance. The tolerance is self_heating_tolerance's "
		"when configured.");
}

/* Whether the sensor declared ambient behaves like one: above the case, following the load. */
static void ambient_check(struct report_doc *doc, const struct lifetime_report_entry *e) {
	const struct capcheck_rise_result *c = &e->check;
	report_heading(doc, "The ambient sensor");
	if (!e->has_check) {
		report_para(doc,
			    "Not checked against measurements: that needs an ambient sensor beside "
			    "a case sensor or a load channel (load_channel, ripple_from).");
		return;
	}
	struct report_block *t = figures(doc);
	figure_row(t, "above the case sensor h", c->paired ? c->ambient_above_h : NAN, 1);
	report_cell(t, 2, "%s",
		    c->paired ? "a true ambient never reads above the part's case"
			      : "no case sensor read beside it");
	figure_row(t, "correlation with the load", c->ambient_load_r, 2);
	if (isfinite(c->case_load_r)) {
		report_cell(t, 2, "%s %s; the case sensor's %.2f", e->load_key ? "load" : "",
			    e->load_key ? e->load_key : "", c->case_load_r);
	} else {
		report_cell(t, 2, "%s", e->load_key ? e->load_key : "no load channel declared");
	}
	report_row(t);
	report_cell(t, 0, "verdict");
	report_cell(t, 1, "%s",
		    c->looks_like_case ? "looks like a case measurement" : "behaves as an ambient");
	report_para(doc,
		    "Never label a can's surface as ambient: an ambient sensor that reads above "
		    "the case, or follows the part's own load (r at least %.1f, or %.0f %% of the "
		    "case sensor's), is flagged.",
		    CAPCHECK_LOAD_CORRELATION, 100 * CAPCHECK_LOAD_LIKE_CASE);
}

/* A measured ripple beside the constant current_a: both consumed lives. */
static void ripple_check(struct report_doc *doc, const struct lifetime_report_entry *e) {
	const struct capacitor_config *cc = e->cc;
	if (!cc->ripple_from.channel) {
		return;
	}
	const struct lifetime_result *r = &e->r;
	report_heading(doc, "Ripple: measured against constant");
	static const char *const head[] = {"figure", "measured ripple", "constant current_a"};
	struct report_block *t = report_table(doc, 3, head);
	t->right[1] = t->right[2] = false; // a channel's name among the numbers
	report_row(t);
	report_cell(t, 0, "ripple");
	report_cell(t, 1, "%s, %s", e->load_key ? e->load_key : cc->ripple_from.channel,
		    ripple_formula_names[cc->ripple_from.formula]);
	if (isnan(cc->current_a)) {
		report_cell(t, 2, "not configured");
	} else {
		report_cell(t, 2, "%g A", cc->current_a);
	}
	figure_row(t, "consumed", r->consumed_fraction, 6);
	report_num(t, 2, r->consumed_constant_ripple, 6);
	figure_row(t, "life h (uncapped)", r->life_uncapped_h, 0);
	report_num(t, 2, r->life_constant_ripple_h, 0);
	report_para(
		doc,
		"The measured one derives each sample's ripple from the channel through the "
		"converter relation and adds that sample's rise; the constant one adds the "
		"rise of current_a to every sample.%s",
		cc->basis != TEMP_BASIS_AMBIENT
			? " The part ages at its case or core, whose reading contains the ripple "
			  "heating: the ripple only enters the self-heating check."
			: "");
}

/* One sensor's steady state: a row of the table. */
static void steady_row(struct report_block *t, const char *name, const struct capcheck_steady *st,
		       bool drive) {
	double sh = lifetime_sum_value(&st->steady_h), th = lifetime_sum_value(&st->transient_h);
	double sd = lifetime_sum_value(&st->steady_d), td = lifetime_sum_value(&st->transient_d);
	report_row(t);
	report_cell(t, 0, "%s%s", name, drive ? " (ages at)" : "");
	report_num(t, 1, sh, 1);
	report_num(t, 2, sh + th > 0 ? 100 * sh / (sh + th) : NAN, 1);
	report_num(t, 3, th, 1);
	report_cell(t, 4, "%zu", st->n_periods_total);
	report_num(t, 5, drive && sd + td > 0 ? 100 * td / (sd + td) : NAN, 1);
}

#define TRANSIENTS_SHOWN 12

/* The drive sensor's transients: when each began and how long equilibrium took. */
static void transients(struct report_doc *doc, const struct capcheck_steady *st) {
	if (st->n_transients == 0) {
		return;
	}
	static const char *const head[] = {"transient from (UTC)", "to (UTC)",
					   "time to equilibrium min", "note"};
	struct report_block *t = report_table(doc, 4, head);
	t->right[3] = false;
	size_t shown = st->n_transients < TRANSIENTS_SHOWN ? st->n_transients : TRANSIENTS_SHOWN;
	for (size_t k = 0; k < shown; k++) {
		const struct capcheck_transient *tr = &st->transients[k];
		char a[TIMEFMT_ISO_LEN], z[TIMEFMT_ISO_LEN];
		timefmt_iso(tr->from, a);
		timefmt_iso(tr->to, z);
		report_row(t);
		report_cell(t, 0, "%s", a);
		report_cell(t, 1, "%s", z);
		report_num(t, 2, tr->reached ? (double)(tr->to - tr->from) / 60 : NAN, 1);
		report_cell(t, 3, "%s%s", tr->reached ? "" : "not steady by the window's end",
			    tr->from_window_start
				    ? (tr->reached ? "from the window's start or a gap"
						   : "; from the start or a gap")
				    : "");
	}
	if (st->n_transients_total > shown) {
		report_para(doc, "%zu more transients are left out of this table.",
			    st->n_transients_total - shown);
	}
}

/* Steady state per sensor: "evaluate conditions only after temperatures have stabilized". */
static void steady_state(struct report_doc *doc, const struct report_board *b, size_t i) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	report_heading(doc, "Steady state");
	bool any = false;
	for (int k = 0; k < TEMP_BASIS_N; k++) {
		any = any || e->steady[k];
	}
	if (!any) {
		report_para(doc, "Not computed: no sensor of this part was read in the window.");
		return;
	}
	const struct lifetime_params *p = &b->params[i];
	static const char *const head[] = {"sensor",         "steady h",
					   "steady %",       "transient h",
					   "steady periods", "consumed in transients %"};
	struct report_block *t = report_table(doc, 6, head);
	t->right[0] = false;
	for (int k = 0; k < TEMP_BASIS_N; k++) {
		if (e->steady[k]) {
			steady_row(t, temp_basis_names[k], e->steady[k], k == (int)e->cc->basis);
		}
	}
	report_para(doc,
		    "Chemi-Con: for continuous-duty products, evaluate conditions only after "
		    "temperatures have fully stabilized. A sample is calm when it moved less than "
		    "%g K against the one 10 minutes before; a calm run of at least %g min is "
		    "steady, all of it. Time to equilibrium runs from the first sample that moved "
		    "faster to the first of the next steady period.",
		    b->params_ok[i] ? p->steady_rate_k : CAPACITOR_DEFAULT_STEADY_RATE_K,
		    b->params_ok[i] ? p->steady_soak_s / 60 : CAPACITOR_DEFAULT_STEADY_SOAK);
	const struct capcheck_steady *st = e->steady[e->cc->basis];
	if (st) {
		transients(doc, st);
	}
}

/* A row of the validity table: @side (its band in column 1 follows), its hours, their share
 * of the @obs observed hours, and the share of the consumed life spent there (NAN: none). */
static void side_row(struct report_block *t, const char *side, double h, double obs,
		     double consumed) {
	report_row(t);
	report_cell(t, 0, "%s", side);
	report_num(t, 2, h, 1);
	report_num(t, 3, 100 * h / obs, 1);
	report_num(t, 4, 100 * consumed, 1);
}

/* Hours outside the validity band per side, with their share of the consumed life. */
static void validity(struct report_doc *doc, const struct report_board *b, size_t i) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	const struct lifetime_validity *v = &e->r.validity;
	report_heading(doc, "Validity band");
	if (!b->params_ok[i] || !(e->r.observed_h > 0)) {
		report_para(doc, "Nothing observed in this window.");
		return;
	}
	const struct lifetime_params *p = &b->params[i];
	static const char *const head[] = {"side", "band °C", "hours", "time %", "consumed %"};
	struct report_block *t = report_table(doc, 5, head);
	t->right[0] = t->right[1] = false; // "[60, 95]", "< 40": text, escaped
	double obs = e->r.observed_h;
	side_row(t, "below the validity band", v->below_h, obs, v->below_share);
	report_cell(t, 1, "< %g", v->low_c);
	side_row(t, "above the validity band", v->above_h, obs, v->above_share);
	report_cell(t, 1, "> %g", v->high_c);
	if (p->model == LIFETIME_MODEL_BT && p->base == 2 && p->step_k == 10) {
		side_row(t, "outside the B_t = 2 band", v->bt2_out_h, obs, v->bt2_out_share);
		report_cell(t, 1, "[%g, %g]", v->bt2_low_c, v->bt2_high_c);
	}
	side_row(t, "above the upper category", v->above_max_h, obs, NAN);
	report_cell(t, 1, "> %g", v->max_c);
	report_para(doc,
		    "Never apply the same coefficient across all series and temperature ranges: "
		    "B_t = 2 is Chemi-Con's approximation over roughly 60-95 °C, and parts rated "
		    "105 °C or more may need a corrected one. Temperatures the model ages the part "
		    "at; consumed %%: the share of the consumed life drawn there.");
}

/* The measurements' sections of a capacitor's review. */
static void report_measurements(struct report_doc *doc, const struct report_board *b, size_t i) {
	const struct lifetime_report_entry *e = &b->life.entries[i];
	heating_check(doc, b, i);
	ambient_check(doc, e);
	ripple_check(doc, e);
	steady_state(doc, b, i);
	validity(doc, b, i);
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
	bool measured = lifetime_profile_measured_edges(pe);
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
				   pe->e->cc->name,
				   rise != 0 && isfinite(rise) ? "effective" : "measured"));
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
	static const char *const head[] = {"up to (UTC)", "observed h", "consumed", "band"};
	struct report_block *t = report_table(doc, 4, head);
	for (size_t k = 0; k < s->n; k++) {
		char at[TIMEFMT_ISO_LEN];
		timefmt_iso(s->to[k], at);
		figure_row(t, at, s->observed_h[k], 2);
		report_num(t, 2, s->consumed[k], 6);
		report_cell(t, 3, "%.6f-%.6f", s->consumed_band[k][1], s->consumed_band[k][0]);
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
		"observed time from the window's start to TIME, not extrapolated, and its band "
		"(the reading the sensor's uncertainty cooler to hotter, dashed in the chart); the "
		"last row is the whole window (TIME its last sample).",
		from);
}

/* "120000-131400": a life's band, the reading @u hotter to @u cooler. */
static void band_row(struct report_block *t, const char *name, const double h[2], double u) {
	report_row(t);
	report_cell(t, 0, "%s", name);
	if (isfinite(h[0]) && isfinite(h[1])) {
		report_cell(t, 1, "%.0f-%.0f", h[0], h[1]);
	} else {
		report_cell(t, 1, "-");
	}
	report_cell(t, 2, "the reading %g K hotter to %g K cooler (the sensor's uncertainty)", u,
		    u);
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
	struct report_block *t = figures(doc);
	figure_row(t, "observed h", r->observed_h, 2);
	report_cell(t, 2, "coverage %.1f %% of the window's stored span", 100 * e->coverage);
	figure_row(t, "consumed, observed", r->consumed_fraction, 6);
	report_cell(t, 2, "D, the Miner sum over the observed time");
	figure_row(t, "consumed, extrapolated",
		   e->cc->has_in_service ? r->consumed_extrapolated : NAN, 6);
	if (e->cc->has_in_service) {
		report_cell(t, 2, "over %.0f h in service without samples, at the observed rate",
			    r->unobserved_service_h);
	} else {
		report_cell(t, 2, "none: no in-service date");
	}
	figure_row(t, "consumed, total", r->consumed_total, 6);
	report_cell(t, 2, "%s", r->past_life ? "PAST ITS ESTIMATED LIFE" : "");
	figure_row(t, "effective life h", r->life_h, 0);
	report_cell(t, 2, "%.1f years%s", r->life_h / LIFETIME_HOURS_PER_YEAR,
		    r->capped ? "; capped (see the warnings)" : "");
	figure_row(t, "uncapped life h", r->life_uncapped_h, 0);
	report_cell(t, 2, "observed hours over D");
	band_row(t, "effective life h, band", r->band.life_h, r->band.uncertainty_k);
	band_row(t, "uncapped life h, band", r->band.life_uncapped_h, r->band.uncertainty_k);
	double rise = r->self_heating_k;
	static const char *const temps[] = {"equivalent temperature °C", "mean temperature °C",
					    "p95 temperature °C"};
	double tv[] = {r->equivalent_temp_c, r->mean_temp_c, e->p95_temp_c};
	for (size_t k = 0; k < 3; k++) {
		figure_row(t, temps[k], tv[k], 2);
		if (rise != 0 && isfinite(tv[k])) {
			report_cell(t, 2, "measured; %.2f °C effective", tv[k] + rise);
		} else {
			report_cell(t, 2, "measured");
		}
	}
	figure_row(t, "remaining h", r->remaining_h, 0);
	report_cell(t, 2, "%.1f years", r->remaining_h / LIFETIME_HOURS_PER_YEAR);
	band_row(t, "remaining h, band", r->band.remaining_h, r->band.uncertainty_k);
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
	struct report_block *t = report_text_table(doc, head);
	for (size_t k = 0; k < r->n_warnings; k++) {
		report_text_row(t, lifetime_warning_name(r->warnings[k].code),
				r->warnings[k].message);
	}
}

/* The vent's clearance by case diameter; electrical clearance is another matter. */
static void vent(struct report_doc *doc, const struct lifetime_report_entry *e) {
	const struct capacitor_config *cc = e->cc;
	const struct capcheck_vent *v = &e->vent;
	report_heading(doc, "Vent and clearances");
	struct report_block *t = facts(doc, false);
	if (isnan(cc->case_diameter_mm)) {
		fact(t, "case diameter", NULL, "not recorded");
	} else {
		fact(t, "case diameter", NULL, "%g mm", cc->case_diameter_mm);
	}
	if (isnan(cc->vent_clearance_mm)) {
		fact(t, "clearance above the vent", NULL, "not recorded");
	} else {
		fact(t, "clearance above the vent", NULL, "%g mm", cc->vent_clearance_mm);
	}
	fact(t, "vent facing", NULL, "%s", cc->vent_facing ? cc->vent_facing : "not recorded");
	if (isnan(v->required_mm)) {
		fact(t, "clearance needed", NULL, "not known: the case diameter is not recorded");
	} else {
		fact(t, "clearance needed", NULL, "%g mm", v->required_mm);
	}
	fact(t, "vent clearance", NULL, "%s: %s",
	     v->verdict == CAPCHECK_VENT_FAIL ? "FAIL" : capcheck_vent_verdict_name(v->verdict),
	     v->rule);
	fact(t, "electrical clearance and creepage", NULL, "not evaluated by this tool");
	report_para(
		doc,
		"The vent needs free space above it to open (Chemi-Con: 8-16 mm cans at least "
		"2 mm, 18-35 mm 3 mm, 40 mm and more 5 mm; between two classes the larger "
		"one's, under 8 mm 2 mm). That is mechanical clearance: electrical clearance and "
		"creepage are separate, and this tool does not evaluate them.");
}

/* The checklist's line for a review note: from configuration, never verified. */
static void note_row(struct report_block *t, const char *item, const struct capacitor_config *cc,
		     enum capacitor_review_key key) {
	report_row(t);
	report_cell(t, 0, "%s", item);
	if (cc->review[key]) {
		report_cell(t, 1, "from configuration, not verified: %s", cc->review[key]);
	} else {
		report_cell(t, 1, "not recorded");
	}
	report_cell(t, 2, "review: %s", capacitor_review_keys[key]);
}

/* Ambient, case and core kept apart: the measurements' word when there is one. */
static void apart_row(struct report_block *t, const struct lifetime_report_entry *e) {
	const struct capcheck_rise_result *c = &e->check;
	report_row(t);
	report_cell(t, 0, "ambient, case and core kept apart");
	report_cell(t, 2, "sensors, basis, self_heating; the samples");
	if (!e->has_check) {
		report_cell(t, 1,
			    "from configuration, not verified: sensor %s on the %s basis; "
			    "self-heating %s",
			    e->sensor_key, temp_basis_name(e->cc->basis),
			    e->r.self_heating_k != 0 ? "added once" : "not added");
		return;
	}
	report_cell(t, 1,
		    "checked against measurements: the ambient %s %s (above the case %.1f h, r "
		    "with the load %s); the part ages at the %s, self-heating %s",
		    e->sensor_keys[TEMP_BASIS_AMBIENT],
		    c->looks_like_case ? "LOOKS LIKE A CASE MEASUREMENT" : "behaves as an ambient",
		    c->ambient_above_h, isfinite(c->ambient_load_r) ? "known" : "not known",
		    temp_basis_name(e->cc->basis),
		    e->cc->basis == TEMP_BASIS_AMBIENT ? "added once"
						       : "not added (in the reading)");
}

/* The modelled self-heating: the measured rise's word when both sensors were read. */
static void heating_row(struct report_block *t, const struct lifetime_report_entry *e) {
	const struct capcheck_rise_result *c = &e->check;
	report_row(t);
	report_cell(t, 0, "self-heating as modelled");
	report_cell(t, 2, "self_heating; case - ambient");
	if (e->has_check && c->paired && isfinite(c->modelled_mean_k)) {
		report_cell(t, 1,
			    "checked against measurements: measured %.2f K (p95 %.2f K) against "
			    "modelled %.2f K: %s",
			    c->measured_mean_k, c->measured_p95_k, c->modelled_mean_k,
			    c->mismatch ? "DISAGREE" : "agree within the tolerance");
	} else if (e->cc->self_heating != SELF_HEATING_NONE) {
		report_cell(t, 1,
			    "from configuration, not verified: no ambient and case pair read");
	} else {
		report_cell(t, 1, "not recorded: no self_heating configured");
	}
}

/* Stabilized temperatures: the steady state of the sensor the part ages at. */
static void steady_item(struct report_block *t, const struct lifetime_report_entry *e) {
	const struct capcheck_steady *st = e->steady[e->cc->basis];
	report_row(t);
	report_cell(t, 0, "evaluated at stabilized temperatures");
	report_cell(t, 2, "steady_state; the samples");
	if (!st) {
		report_cell(t, 1, "not checked: no samples of the sensor it ages at");
		return;
	}
	double sh = lifetime_sum_value(&st->steady_h), th = lifetime_sum_value(&st->transient_h);
	double sd = lifetime_sum_value(&st->steady_d), td = lifetime_sum_value(&st->transient_d);
	report_cell(t, 1,
		    "checked against measurements: steady %.1f %% of the time, %.1f %% of the "
		    "consumed life drawn in transients%s",
		    sh + th > 0 ? 100 * sh / (sh + th) : 0, sd + td > 0 ? 100 * td / (sd + td) : 0,
		    sd + td > 0 && td > CAPCHECK_TRANSIENT_SHARE * (sd + td)
			    ? ": MOSTLY FROM TRANSIENTS"
			    : "");
}

/* The series' coefficient and its band, against the time spent outside it. */
static void validity_row(struct report_block *t, const struct lifetime_report_entry *e) {
	const struct lifetime_validity *v = &e->r.validity;
	report_row(t);
	report_cell(t, 0, "series test conditions and validity");
	report_cell(t, 2, "valid_c, max_temp_c, review: series_conditions; the samples");
	const char *note = e->cc->review[CAPACITOR_REVIEW_SERIES_CONDITIONS];
	if (!(e->r.observed_h > 0)) {
		report_cell(t, 1, "from configuration, not verified: %s",
			    note ? note : "nothing observed");
		return;
	}
	report_cell(t, 1,
		    "checked against measurements: %.1f h below and %.1f h above [%g, %g] °C "
		    "(%.1f %% and %.1f %% of the consumed life)%s%s",
		    v->below_h, v->above_h, v->low_c, v->high_c, 100 * v->below_share,
		    100 * v->above_share, note ? "; from configuration, not verified: " : "",
		    note ? note : "");
}

/* The vent clearance against the table: configuration, checked by rule. */
static void vent_row(struct report_block *t, const struct lifetime_report_entry *e) {
	const struct capcheck_vent *v = &e->vent;
	const char *note = e->cc->review[CAPACITOR_REVIEW_VENT_CLEARANCE];
	report_row(t);
	report_cell(t, 0, "vent clearance");
	report_cell(t, 2, "case_diameter_mm, vent_clearance_mm, review: vent_clearance");
	if (v->verdict == CAPCHECK_VENT_NOT_RECORDED) {
		report_cell(t, 1, "not recorded (case_diameter_mm)%s%s",
			    note ? "; from configuration, not verified: " : "", note ? note : "");
		return;
	}
	report_cell(t, 1, "from configuration, checked against the table: %s (%s)",
		    v->verdict == CAPCHECK_VENT_FAIL ? "FAIL"
						     : capcheck_vent_verdict_name(v->verdict),
		    v->rule);
}

/*
 * The article's checklist: per item what the measurements show ("checked against
 * measurements"), what only the configuration says ("from configuration, not verified"), or
 * that nothing was recorded; never a bare pass.
 */
static void checklist(struct report_doc *doc, const struct lifetime_report_entry *e) {
	const struct capacitor_config *cc = e->cc;
	report_heading(doc, "Review checklist");
	static const char *const head[] = {"item", "record", "from"};
	struct report_block *t = report_table(doc, 3, head);
	t->right[1] = t->right[2] = false;
	note_row(t, "real enclosure reproduced", cc, CAPACITOR_REVIEW_ENCLOSURE);
	note_row(t, "orientation reproduced", cc, CAPACITOR_REVIEW_ORIENTATION);
	note_row(t, "thermocouple contact", cc, CAPACITOR_REVIEW_THERMOCOUPLE);
	note_row(t, "thermocouple insulation", cc, CAPACITOR_REVIEW_INSULATION);
	apart_row(t, e);
	heating_row(t, e);
	steady_item(t, e);
	validity_row(t, e);
	note_row(t, "heat sources nearby", cc, CAPACITOR_REVIEW_HEAT_SOURCES);
	vent_row(t, e);
	report_row(t);
	report_cell(t, 0, "electrical clearance and creepage");
	report_cell(t, 1, "not evaluated by this tool");
	report_cell(t, 2, "-");
	report_para(doc,
		    "\"Checked against measurements\" rests on the stored samples of the window; "
		    "\"from configuration, not verified\" is what the configuration (its review: "
		    "notes and keys) says and nothing measured confirms; an item without either "
		    "reads \"not recorded\".");
}

/* The design review of board @bi: a section a capacitor. */
void report_review_sections(struct report_doc *doc, const struct report *rep, size_t bi) {
	const struct report_board *b = &rep->boards[bi];
	const char *of = rep->n_boards > 1 ? b->name : NULL;
	if (!rep->opt.cfg || rep->opt.cfg->n_capacitors == 0 || !b->has_review) {
		report_section_of(doc, rep, bi, "Capacitor design review");
		report_para(doc, "No capacitors are configured (a 'capacitors:' section of the "
				 "configuration adds them): there is nothing to review.");
		return;
	}
	for (size_t i = 0; i < b->life.n; i++) {
		const struct lifetime_report_entry *e = &b->life.entries[i];
		report_section(doc, "Capacitor design review: %s%s%s", e->cc->name,
			       of ? " on " : "", of ? of : "");
		part_data(doc, b, i);
		temperatures(doc, b, i);
		report_measurements(doc, b, i);
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
		vent(doc, e);
		checklist(doc, e);
	}
}
