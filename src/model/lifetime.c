/*
 * Capacitor life from temperature: the B_t rule (life x B_t per 10 K below rating, x10 per 20 K
 * for polymer parts) or Arrhenius, and Palmgren-Miner damage D = sum dt / L(T) over a history.
 */
#include "lifetime.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static const char *const warning_names[] = {
	[LIFETIME_WARN_ABOVE_RATED] = "above_rated",
	[LIFETIME_WARN_BELOW_VALIDITY] = "below_validity",
	[LIFETIME_WARN_BT2_LOW] = "bt2_below_60c",
	[LIFETIME_WARN_LIFE_CAPPED] = "life_capped",
	[LIFETIME_WARN_CALENDAR_CAP] = "calendar_cap",
	[LIFETIME_WARN_EXHAUSTED] = "life_exhausted",
	[LIFETIME_WARN_POLYMER_WET] = "polymer_wet_rule",
	[LIFETIME_WARN_RIPPLE_OVER] = "ripple_over_rated",
	[LIFETIME_WARN_DATA_GAPS] = "data_gaps",
	[LIFETIME_WARN_UNSYNCED] = "unsynced_cycles",
	[LIFETIME_WARN_NO_DATA] = "no_data",
	[LIFETIME_WARN_SENSOR] = "sensor_not_found",
	[LIFETIME_WARN_SHORT_HISTORY] = "short_history",
	[LIFETIME_WARN_HISTORY_TRIMMED] = "history_trimmed",
	[LIFETIME_WARN_INVALID] = "invalid_rating",
	[LIFETIME_WARN_NOT_TEMPERATURE] = "not_temperature",
	[LIFETIME_WARN_EXTRAPOLATED] = "in_service_extrapolated",
};

const char *lifetime_warning_name(enum lifetime_warning_code code) {
	if ((size_t)code < sizeof(warning_names) / sizeof(warning_names[0]) &&
	    warning_names[code]) {
		return warning_names[code];
	}
	return "unknown";
}

static bool fail(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(char **err, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	*err = xvasprintf(fmt, ap);
	va_end(ap);
	return false;
}

static bool in_range(double v, double lo, double hi) {
	return isfinite(v) && v >= lo && v <= hi;
}

const char *const lifetime_model_names[] = {"bt", "arrhenius", NULL};
const char *const capacitor_type_names[] = {"wet", "polymer", NULL};
const char *const temp_basis_names[] = {"ambient", "case", "core", NULL};
const char *const capacitor_review_keys[] = {
	[CAPACITOR_REVIEW_ENCLOSURE] = "enclosure",
	[CAPACITOR_REVIEW_ORIENTATION] = "orientation",
	[CAPACITOR_REVIEW_THERMOCOUPLE] = "thermocouple",
	[CAPACITOR_REVIEW_INSULATION] = "insulation",
	[CAPACITOR_REVIEW_HEAT_SOURCES] = "heat_sources",
	[CAPACITOR_REVIEW_VENT_CLEARANCE] = "vent_clearance",
	[CAPACITOR_REVIEW_SERIES_CONDITIONS] = "series_conditions",
	[CAPACITOR_REVIEW_N] = NULL,
};

static const char *name_in(const char *const *names, size_t n, unsigned i) {
	return i < n ? names[i] : "unknown";
}

static bool parse_in(const char *const *names, const char *name, unsigned *out) {
	for (unsigned i = 0; names[i]; i++) {
		if (strcmp(names[i], name) == 0) {
			*out = i;
			return true;
		}
	}
	return false;
}

const char *lifetime_model_name(enum lifetime_model model) {
	return name_in(lifetime_model_names, 2, model);
}

bool lifetime_model_parse(const char *name, enum lifetime_model *out) {
	unsigned i;
	if (!parse_in(lifetime_model_names, name, &i)) {
		return false;
	}
	*out = (enum lifetime_model)i;
	return true;
}

const char *capacitor_type_name(enum capacitor_type type) {
	return name_in(capacitor_type_names, 2, type);
}

bool capacitor_type_parse(const char *name, enum capacitor_type *out) {
	unsigned i;
	if (!parse_in(capacitor_type_names, name, &i)) {
		return false;
	}
	*out = (enum capacitor_type)i;
	return true;
}

const char *temp_basis_name(enum temp_basis basis) {
	return name_in(temp_basis_names, 3, basis);
}

bool temp_basis_parse(const char *name, enum temp_basis *out) {
	unsigned i;
	if (!parse_in(temp_basis_names, name, &i)) {
		return false;
	}
	*out = (enum temp_basis)i;
	return true;
}

static bool self_heating_init(struct lifetime_params *p, const struct capacitor_config *cc,
			      const struct lifetime_names *nm, char **err) {
	switch (cc->self_heating) {
	case SELF_HEATING_NONE:
		p->rise_k = 0;
		return true;
	case SELF_HEATING_RISE:
		if (!in_range(cc->rise_k, 0, 100)) {
			return fail(err, "self-heating %s must be between 0 and 100 K (got %g)",
				    nm->rise_k, cc->rise_k);
		}
		p->rise_k = cc->rise_k;
		return true;
	case SELF_HEATING_POWER:
		if (!in_range(cc->current_a, 0, 1e4) || !in_range(cc->esr_ohm, 0, 1e3) ||
		    !(cc->esr_ohm > 0) || !in_range(cc->rth_k_per_w, 0, 1e4) ||
		    !(cc->rth_k_per_w > 0)) {
			return fail(err,
				    "self-heating needs current_a >= 0, esr_ohm > 0 and "
				    "rth_k_per_w > 0 (got %g A, %g ohm, %g K/W)",
				    cc->current_a, cc->esr_ohm, cc->rth_k_per_w);
		}
		p->rise_k = cc->current_a * cc->current_a * cc->esr_ohm * cc->rth_k_per_w;
		if (p->rise_k > 100) {
			return fail(err,
				    "self-heating I^2*ESR*Rth = %g K is implausible (over 100 K): "
				    "check current_a, esr_ohm and rth_k_per_w",
				    p->rise_k);
		}
		return true;
	case SELF_HEATING_RIPPLE: {
		if (!in_range(cc->current_a, 0, 1e4) || !in_range(cc->rated_ripple_a, 0, 1e4) ||
		    !(cc->rated_ripple_a > 0) || !in_range(cc->rated_rise_k, 0, 50)) {
			return fail(err,
				    "ripple self-heating needs current_a >= 0, rated_ripple_a > 0 "
				    "and 0 <= rated_rise_k <= 50 K (got %g A, %g A, %g K)",
				    cc->current_a, cc->rated_ripple_a, cc->rated_rise_k);
		}
		/*
		 * The rated life already contains the rise at rated ripple, so only the difference
		 * counts (Albertsen/Jianghai K_R, Nichicon): below rated ripple it lengthens life.
		 * Above rated ripple Jianghai uses K_i = 4, i.e. the excess rise counts double.
		 */
		double ratio = cc->current_a / cc->rated_ripple_a;
		p->rise_k = cc->rated_rise_k * (ratio * ratio - 1);
		if (ratio > 1) {
			p->rise_k *= 2;
			p->ripple_over_rated = true;
		}
		return true;
	}
	}
	return fail(err, "unknown self-heating form");
}

const struct lifetime_names lifetime_config_names = {
	.rated_life_h = "rated_life_h",
	.rated_temp_c = "rated_temp_c",
	.model = "model: ",
	.bt = "bt",
	.ea_ev = "ea_ev",
	.rise_k = "rise_k",
	.life_cap_years = "life_cap_years",
};

double lifetime_cap_years(const struct capacitor_config *cc) {
	return isnan(cc->life_cap_years) ? LIFETIME_DEFAULT_CAP_Y : cc->life_cap_years;
}

bool lifetime_params_init(struct lifetime_params *p, const struct capacitor_config *cc,
			  char **err) {
	return lifetime_params_init_named(p, cc, &lifetime_config_names, err);
}

bool lifetime_params_init_named(struct lifetime_params *p, const struct capacitor_config *cc,
				const struct lifetime_names *nm, char **err) {
	char model_bt[32], model_arr[48];
	snprintf(model_bt, sizeof(model_bt), "%sbt", nm->model);
	snprintf(model_arr, sizeof(model_arr), "%sarrhenius", nm->model);
	*p = (struct lifetime_params){0};
	if (!isfinite(cc->rated_life_h) || !(cc->rated_life_h > 0)) {
		return fail(err, "%s: the rated life must be a positive number of hours (got %g)",
			    nm->rated_life_h, cc->rated_life_h);
	}
	if (!in_range(cc->rated_temp_c, LIFETIME_MIN_RATED_C, LIFETIME_MAX_RATED_C)) {
		return fail(err,
			    "%s %g °C is out of range: electrolytic capacitors "
			    "are rated between %g and %g °C (typically 85, 105 or 125 °C)",
			    nm->rated_temp_c, cc->rated_temp_c, LIFETIME_MIN_RATED_C,
			    LIFETIME_MAX_RATED_C);
	}
	p->rated_life_h = cc->rated_life_h;
	p->rated_temp_c = cc->rated_temp_c;
	p->model = cc->model;
	p->type = cc->type;
	p->basis = cc->basis;
	p->in_service = cc->in_service;
	p->has_in_service = cc->has_in_service;
	p->step_k = 10;
	p->ea_ev = NAN;
	p->base = NAN;

	switch (cc->model) {
	case LIFETIME_MODEL_BT:
		if (!isnan(cc->ea_ev)) {
			return fail(err,
				    "%s applies to %s only (this capacitor uses %s; set %s or drop "
				    "%s)",
				    nm->ea_ev, model_arr, model_bt, model_arr, nm->ea_ev);
		}
		if (!isnan(cc->bt)) {
			if (!in_range(cc->bt, 1, 10) || !(cc->bt > 1)) {
				return fail(err,
					    "%s must be above 1 and at most 10 (life factor per "
					    "10 K; got %g)",
					    nm->bt, cc->bt);
			}
			p->base = cc->bt;
			p->bt_given = true;
		} else if (cc->type == CAPACITOR_TYPE_POLYMER) {
			p->base = 10; // x10 per 20 K (Würth SN008, Panasonic)
			p->step_k = 20;
		} else {
			p->base = 2;
		}
		break;
	case LIFETIME_MODEL_ARRHENIUS:
		if (!isnan(cc->bt)) {
			return fail(
				err,
				"%s applies to %s only (this capacitor uses %s; give %s instead)",
				nm->bt, model_bt, model_arr, nm->ea_ev);
		}
		if (isnan(cc->ea_ev)) {
			return fail(err,
				    "%s needs %s, the activation energy in eV "
				    "(0.832 eV matches B_t = 2 between 95 and 105 °C)",
				    model_arr, nm->ea_ev);
		}
		if (!in_range(cc->ea_ev, 0, 5) || !(cc->ea_ev > 0)) {
			return fail(err, "%s must be above 0 and at most 5 eV (got %g)", nm->ea_ev,
				    cc->ea_ev);
		}
		p->ea_ev = cc->ea_ev;
		break;
	default:
		return fail(err, "unknown lifetime model");
	}

	if (cc->self_heating != SELF_HEATING_NONE && cc->basis != TEMP_BASIS_AMBIENT) {
		const char *what = cc->basis == TEMP_BASIS_CASE ? "a case" : "a core";
		return fail(err,
			    "self-heating is only added to an ambient temperature: %s sensor "
			    "already measures the capacitor's own ripple heating, so adding it "
			    "again would count it twice; remove self_heating or use basis: ambient",
			    what);
	}
	if (!self_heating_init(p, cc, nm, err)) {
		return false;
	}

	double cap_y = lifetime_cap_years(cc);
	if (!in_range(cap_y, 0, 100) || !(cap_y > 0)) {
		return fail(err, "%s must be above 0 and at most 100 (got %g)", nm->life_cap_years,
			    cap_y);
	}
	p->life_cap_h = cap_y * LIFETIME_HOURS_PER_YEAR;

	p->validity_low_c = isnan(cc->validity_low_c) ? LIFETIME_DEFAULT_LOW_C : cc->validity_low_c;
	if (!isfinite(p->validity_low_c) || p->validity_low_c >= p->rated_temp_c ||
	    p->validity_low_c <= -LIFETIME_KELVIN_OFFSET) {
		return fail(err,
			    "validity_low_c must be below the rated temperature %g °C (got %g)",
			    p->rated_temp_c, p->validity_low_c);
	}
	return true;
}

double lifetime_life_at_model(const struct lifetime_params *p, double model_c) {
	if (p->model == LIFETIME_MODEL_ARRHENIUS) {
		double tk = model_c + LIFETIME_KELVIN_OFFSET;
		double t0k = p->rated_temp_c + LIFETIME_KELVIN_OFFSET;
		if (!(tk > 0)) {
			return NAN;
		}
		return p->rated_life_h * exp(p->ea_ev / LIFETIME_BOLTZMANN_EV * (1 / tk - 1 / t0k));
	}
	// pow() keeps whole steps exact: 2000 h at 65 °C on a 105 °C part is 2000 * 16
	return p->rated_life_h * pow(p->base, (p->rated_temp_c - model_c) / p->step_k);
}

double lifetime_life_at(const struct lifetime_params *p, double sensor_c) {
	return lifetime_life_at_model(p, sensor_c + p->rise_k);
}

double lifetime_temp_for_life(const struct lifetime_params *p, double life_h) {
	if (!(life_h > 0) || !isfinite(life_h)) {
		return NAN;
	}
	double ratio = log(life_h / p->rated_life_h);
	if (p->model == LIFETIME_MODEL_ARRHENIUS) {
		double t0k = p->rated_temp_c + LIFETIME_KELVIN_OFFSET;
		double inv = 1 / t0k + LIFETIME_BOLTZMANN_EV / p->ea_ev * ratio;
		return inv > 0 ? 1 / inv - LIFETIME_KELVIN_OFFSET : NAN;
	}
	return p->rated_temp_c - p->step_k * ratio / log(p->base);
}

/* The life factor of cooling by @reduction_k from model temperature @model_c. */
static double relative_factor(const struct lifetime_params *p, double model_c, double reduction_k) {
	if (p->model == LIFETIME_MODEL_ARRHENIUS) {
		double tk = model_c + LIFETIME_KELVIN_OFFSET;
		if (!(tk - reduction_k > 0)) {
			return NAN;
		}
		return exp(p->ea_ev / LIFETIME_BOLTZMANN_EV * (1 / (tk - reduction_k) - 1 / tk));
	}
	return pow(p->base, reduction_k / p->step_k);
}

void lifetime_sum_add(struct lifetime_sum *sum, double x) {
	double t = sum->s + x;
	if (fabs(sum->s) >= fabs(x)) {
		sum->c += (sum->s - t) + x;
	} else {
		sum->c += (x - t) + sum->s;
	}
	sum->s = t;
}

double lifetime_sum_value(const struct lifetime_sum *sum) {
	return sum->s + sum->c;
}

void lifetime_acc_init(struct lifetime_acc *acc) {
	*acc = (struct lifetime_acc){.min_c = NAN, .max_c = NAN};
}

void lifetime_acc_add(struct lifetime_acc *acc, const struct lifetime_params *p, double sensor_c,
		      double dt_h) {
	lifetime_acc_add_n(acc, p, sensor_c, dt_h, 1);
}

void lifetime_acc_add_n(struct lifetime_acc *acc, const struct lifetime_params *p, double sensor_c,
			double dt_h, int64_t n) {
	if (!isfinite(sensor_c) || !isfinite(dt_h) || !(dt_h > 0)) {
		return;
	}
	double model_c = sensor_c + p->rise_k;
	double life = lifetime_life_at_model(p, model_c);
	if (!(life > 0)) {
		return;
	}
	lifetime_sum_add(&acc->damage, dt_h / life);
	lifetime_sum_add(&acc->observed_h, dt_h);
	lifetime_sum_add(&acc->temp_h, sensor_c * dt_h);
	if (model_c > p->rated_temp_c) {
		lifetime_sum_add(&acc->above_rated_h, dt_h);
	}
	if (model_c < p->validity_low_c) {
		lifetime_sum_add(&acc->below_validity_h, dt_h);
	}
	if (model_c < LIFETIME_BT2_LOW_C) {
		lifetime_sum_add(&acc->below_bt2_h, dt_h);
	}
	if (acc->samples == 0 || sensor_c < acc->min_c) {
		acc->min_c = sensor_c;
	}
	if (acc->samples == 0 || sensor_c > acc->max_c) {
		acc->max_c = sensor_c;
	}
	acc->samples += n;
}

void lifetime_acc_format(const struct lifetime_acc *acc, struct buf *out) {
	buf_printf(out,
		   "v1 n=%" PRId64
		   " d=%a,%a obs=%a,%a t=%a,%a ab=%a,%a be=%a,%a b2=%a,%a min=%a max=%a",
		   acc->samples, acc->damage.s, acc->damage.c, acc->observed_h.s, acc->observed_h.c,
		   acc->temp_h.s, acc->temp_h.c, acc->above_rated_h.s, acc->above_rated_h.c,
		   acc->below_validity_h.s, acc->below_validity_h.c, acc->below_bt2_h.s,
		   acc->below_bt2_h.c, acc->min_c, acc->max_c);
}

/* Reads "name=" then @n comma-separated doubles; advances *s. */
static bool parse_field(const char **s, const char *name, double *v, int n) {
	while (**s == ' ') {
		(*s)++;
	}
	size_t len = strlen(name);
	if (strncmp(*s, name, len) != 0 || (*s)[len] != '=') {
		return false;
	}
	*s += len + 1;
	for (int i = 0; i < n; i++) {
		if (i > 0 && *(*s)++ != ',') {
			return false;
		}
		char *end;
		v[i] = strtod(*s, &end);
		if (end == *s) {
			return false;
		}
		*s = end;
	}
	return **s == ' ' || **s == '\0';
}

bool lifetime_acc_parse(struct lifetime_acc *acc, const char *text) {
	const char *s = text;
	if (strncmp(s, "v1 n=", 5) != 0) {
		return false;
	}
	s += 5;
	char *end;
	long long n = strtoll(s, &end, 10);
	if (end == s || *end != ' ' || n < 0) {
		return false;
	}
	s = end;
	double d[2], obs[2], t[2], ab[2], be[2], b2[2], mn, mx;
	if (!parse_field(&s, "d", d, 2) || !parse_field(&s, "obs", obs, 2) ||
	    !parse_field(&s, "t", t, 2) || !parse_field(&s, "ab", ab, 2) ||
	    !parse_field(&s, "be", be, 2) || !parse_field(&s, "b2", b2, 2) ||
	    !parse_field(&s, "min", &mn, 1) || !parse_field(&s, "max", &mx, 1) || *s != '\0') {
		return false;
	}
	*acc = (struct lifetime_acc){
		.damage = {d[0], d[1]},
		.observed_h = {obs[0], obs[1]},
		.temp_h = {t[0], t[1]},
		.above_rated_h = {ab[0], ab[1]},
		.below_validity_h = {be[0], be[1]},
		.below_bt2_h = {b2[0], b2[1]},
		.min_c = mn,
		.max_c = mx,
		.samples = n,
	};
	return true;
}

void lifetime_warn(struct lifetime_result *r, enum lifetime_warning_code code, const char *fmt,
		   ...) {
	if (r->n_warnings >= LIFETIME_MAX_WARNINGS) {
		return;
	}
	struct lifetime_warning *w = &r->warnings[r->n_warnings++];
	w->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->message, sizeof(w->message), fmt, ap);
	va_end(ap);
}

static double pct_of(double part, double whole) {
	return whole > 0 ? 100 * part / whole : 0;
}

/* "12.5 h (3.1 % of the observed time)", or "all the time" for a constant temperature. */
static void describe_share(char *out, size_t len, double part, double whole) {
	if (part >= whole) {
		snprintf(out, len, "all the time");
	} else {
		snprintf(out, len, "%.1f h (%.1f %% of the observed time)", part,
			 pct_of(part, whole));
	}
}

static void model_warnings(const struct lifetime_params *p, const struct lifetime_acc *acc,
			   struct lifetime_result *r) {
	double obs = r->observed_h;
	double above = lifetime_sum_value(&acc->above_rated_h);
	double below = lifetime_sum_value(&acc->below_validity_h);
	double below60 = lifetime_sum_value(&acc->below_bt2_h);
	char share[96];
	if (above > 0) {
		describe_share(share, sizeof(share), above, obs);
		lifetime_warn(
			r, LIFETIME_WARN_ABOVE_RATED,
			"%s above the rated %g °C, up to %.1f °C: the formula is extrapolated "
			"there, so the damage is likely underestimated",
			share, p->rated_temp_c, acc->max_c + p->rise_k);
	}
	if (below > 0) {
		describe_share(share, sizeof(share), below, obs);
		lifetime_warn(
			r, LIFETIME_WARN_BELOW_VALIDITY,
			"%s below %g °C, outside the model's validity band (manufacturer "
			"calculators accept %g °C up to the rated temperature): life there is "
			"extrapolated",
			share, p->validity_low_c, p->validity_low_c);
	}
	if (p->model == LIFETIME_MODEL_BT && p->base == 2 && p->step_k == 10 && below60 > 0 &&
	    below60 > below) {
		describe_share(share, sizeof(share), below60, obs);
		lifetime_warn(
			r, LIFETIME_WARN_BT2_LOW,
			"%s below %g °C, where the B_t = 2 rule departs from Arrhenius (they "
			"agree at 70-90 °C): there it predicts a shorter life, so the estimate "
			"is conservative",
			share, LIFETIME_BT2_LOW_C);
	}
	if (p->type == CAPACITOR_TYPE_POLYMER && p->model == LIFETIME_MODEL_BT && p->bt_given &&
	    p->base < 3) {
		lifetime_warn(r, LIFETIME_WARN_POLYMER_WET,
			      "polymer part evaluated with B_t = %g per 10 K, the wet-electrolyte "
			      "rule; polymer parts follow x10 per 20 K (B_t = 3.16), so this "
			      "understates their life below the rated temperature",
			      p->base);
	}
	if (p->ripple_over_rated) {
		lifetime_warn(r, LIFETIME_WARN_RIPPLE_OVER,
			      "ripple current exceeds the rated ripple current: outside the "
			      "permissible range, the excess self-heating counts double (K_i = 4)");
	}
}

void lifetime_summarize(const struct lifetime_params *p, const struct lifetime_acc *acc,
			int64_t now, struct lifetime_result *r) {
	*r = (struct lifetime_result){0};
	double obs = lifetime_sum_value(&acc->observed_h);
	double d = lifetime_sum_value(&acc->damage);
	r->observed_h = obs;
	r->consumed_fraction = d;
	r->min_temp_c = acc->min_c;
	r->max_temp_c = acc->max_c;
	r->above_rated_h = lifetime_sum_value(&acc->above_rated_h);
	r->below_validity_h = lifetime_sum_value(&acc->below_validity_h);
	r->self_heating_k = p->rise_k;
	// Without an in-service date the part is at least as old as the observed time.
	bool have_age = p->has_in_service && now >= p->in_service;
	double age_h = have_age ? (double)(now - p->in_service) / 3600.0 : obs;
	r->service_h = r->unobserved_service_h = have_age ? age_h : NAN;
	r->consumed_total = d;
	for (int i = 0; i < LIFETIME_N_RELATIVE; i++) {
		r->relative[i] = (struct lifetime_relative){10.0 * i, NAN, NAN};
	}
	if (!(obs > 0) || !(d > 0)) {
		r->rate_per_h = r->life_uncapped_h = r->life_h = NAN;
		r->remaining_uncapped_h = r->remaining_h = NAN;
		r->equivalent_temp_c = r->mean_temp_c = r->life_at_mean_temp_h = NAN;
		r->min_temp_c = r->max_temp_c = NAN;
		r->consumed_total = obs > 0 ? d : NAN;
		lifetime_warn(r, LIFETIME_WARN_NO_DATA,
			      "no temperature samples: nothing to estimate");
		return;
	}
	r->rate_per_h = d / obs;
	r->life_uncapped_h = obs / d;
	// A constant temperature is its own equivalent; the inverse would add rounding.
	double eq_model = acc->min_c == acc->max_c ? acc->min_c + p->rise_k
						   : lifetime_temp_for_life(p, r->life_uncapped_h);
	r->equivalent_temp_c = eq_model - p->rise_k;
	r->mean_temp_c = lifetime_sum_value(&acc->temp_h) / obs;
	r->life_at_mean_temp_h = lifetime_life_at(p, r->mean_temp_c);
	for (int i = 0; i < LIFETIME_N_RELATIVE; i++) {
		double f = relative_factor(p, eq_model, r->relative[i].reduction_k);
		r->relative[i].factor = f;
		r->relative[i].life_h = r->life_uncapped_h * f;
	}

	model_warnings(p, acc, r);

	r->life_h = r->life_uncapped_h;
	if (r->life_uncapped_h > p->life_cap_h) {
		r->life_h = p->life_cap_h;
		r->capped = true;
		lifetime_warn(r, LIFETIME_WARN_LIFE_CAPPED,
			      "estimated life %.0f h (%.1f years of 8760 h) exceeds the %g-year "
			      "seal-ageing limit of %.0f h: capped there; the uncapped figure is "
			      "theoretical, for comparison only",
			      r->life_uncapped_h, r->life_uncapped_h / LIFETIME_HOURS_PER_YEAR,
			      p->life_cap_h / LIFETIME_HOURS_PER_YEAR, p->life_cap_h);
	}

	if (have_age) {
		r->unobserved_service_h = age_h > obs ? age_h - obs : 0;
		r->consumed_extrapolated = r->rate_per_h * r->unobserved_service_h;
		r->consumed_total = d + r->consumed_extrapolated;
		if (r->unobserved_service_h > 0) {
			lifetime_warn(
				r, LIFETIME_WARN_EXTRAPOLATED,
				"in service for %.0f h (%.1f years of 8760 h), %.0f h of them "
				"without samples (before the stored history and in its gaps): "
				"extrapolated from the observed profile, they add %.4f to the "
				"observed consumed fraction %.4f (total %.4f)",
				age_h, age_h / LIFETIME_HOURS_PER_YEAR, r->unobserved_service_h,
				r->consumed_extrapolated, d, r->consumed_total);
		}
	}
	double total = r->consumed_total;
	r->past_life = total >= 1;
	r->remaining_uncapped_h = total < 1 ? (1 - total) * r->life_uncapped_h : 0;
	if (r->past_life) {
		lifetime_warn(
			r, LIFETIME_WARN_EXHAUSTED,
			"past its estimated life: consumed %.0f %% of the rated wear-out life "
			"(fraction %.3f%s): replace the part or check it (capacitance, ESR)",
			100 * total, total,
			r->consumed_extrapolated > 0 ? ", partly extrapolated" : "");
	}
	double calendar_left = p->life_cap_h - age_h;
	if (calendar_left < 0) {
		calendar_left = 0;
	}
	r->remaining_h = r->remaining_uncapped_h;
	if (calendar_left < r->remaining_h) {
		r->remaining_h = calendar_left;
		r->capped = true;
		if (have_age) {
			lifetime_warn(r, LIFETIME_WARN_CALENDAR_CAP,
				      "in service for %.0f h (%.1f years of 8760 h): the %g-year "
				      "seal-ageing limit leaves %.0f h, less than the thermal "
				      "remaining life of %.0f h",
				      age_h, age_h / LIFETIME_HOURS_PER_YEAR,
				      p->life_cap_h / LIFETIME_HOURS_PER_YEAR, calendar_left,
				      r->remaining_uncapped_h);
		}
	}
}

static int point_cmp(const void *a, const void *b) {
	double x = ((const struct lifetime_point *)a)->temp_c;
	double y = ((const struct lifetime_point *)b)->temp_c;
	return (x > y) - (x < y);
}

double lifetime_percentile(struct lifetime_point *pts, size_t n, double pct) {
	if (n == 0 || !(pct > 0) || pct > 100) {
		return NAN;
	}
	qsort(pts, n, sizeof(*pts), point_cmp);
	struct lifetime_sum total = {0};
	for (size_t i = 0; i < n; i++) {
		lifetime_sum_add(&total, pts[i].dt_h);
	}
	double all = lifetime_sum_value(&total);
	// A relative slack keeps equal weights on the nearest rank despite rounding in the sums.
	double target = pct / 100 * all * (1 - 1e-12);
	struct lifetime_sum cum = {0};
	for (size_t i = 0; i < n; i++) {
		lifetime_sum_add(&cum, pts[i].dt_h);
		if (lifetime_sum_value(&cum) >= target) {
			return pts[i].temp_c;
		}
	}
	return pts[n - 1].temp_c;
}

bool lifetime_profile_parse(const char *text, struct lifetime_point **pts, size_t *n, char **err) {
	*pts = NULL;
	*n = 0;
	size_t cap = 0;
	const char *s = text;
	if (!*s) {
		return fail(err, "empty profile: expected TEMP:HOURS[,TEMP:HOURS...]");
	}
	for (size_t i = 1;; i++) {
		const char *elem = s;
		size_t elem_len = strcspn(elem, ",");
		char *end;
		double t = strtod(s, &end);
		if (end == s || *end != ':') {
			fail(err, "profile element %zu '%.*s': expected TEMP:HOURS, e.g. 65:8", i,
			     (int)elem_len, elem);
			goto err;
		}
		s = end + 1;
		double h = strtod(s, &end);
		if (end == s || (*end != ',' && *end != '\0')) {
			fail(err, "profile element %zu '%.*s': expected TEMP:HOURS, e.g. 65:8", i,
			     (int)elem_len, elem);
			goto err;
		}
		if (!(t > -LIFETIME_KELVIN_OFFSET) || !(t < 500)) {
			fail(err, "profile element %zu '%.*s': temperature %g °C is out of range",
			     i, (int)elem_len, elem, t);
			goto err;
		}
		if (!isfinite(h) || !(h > 0)) {
			fail(err, "profile element %zu '%.*s': hours must be positive", i,
			     (int)elem_len, elem);
			goto err;
		}
		*pts = xgrow(*pts, &cap, *n + 1, sizeof(**pts));
		(*pts)[(*n)++] = (struct lifetime_point){t, h};
		if (*end == '\0') {
			return true;
		}
		s = end + 1;
		if (*s == '\0') {
			fail(err, "profile ends with ',': expected another TEMP:HOURS");
			goto err;
		}
	}
err:
	free(*pts);
	*pts = NULL;
	*n = 0;
	return false;
}

void lifetime_spacing_init(struct lifetime_spacing *sp) {
	*sp = (struct lifetime_spacing){.prev_ts = INT64_MIN};
}

int64_t lifetime_spacing_next(struct lifetime_spacing *sp, int64_t ts, int64_t first_s,
			      int64_t *gap_s) {
	int64_t dt, gap = 0;
	if (sp->prev_ts == INT64_MIN || ts <= sp->prev_ts) {
		dt = sp->prev_ts == INT64_MIN ? first_s : 0;
	} else {
		int64_t spacing = ts - sp->prev_ts;
		if (sp->prev_spacing > 0 && spacing * 2 > sp->prev_spacing * 3) {
			dt = sp->prev_dt;
			gap = spacing - dt;
		} else {
			dt = spacing;
		}
		sp->prev_spacing = spacing;
	}
	sp->prev_ts = ts > sp->prev_ts ? ts : sp->prev_ts;
	sp->prev_dt = dt;
	if (gap_s) {
		*gap_s = gap;
	}
	return dt;
}

void lifetime_params_fingerprint(const struct lifetime_params *p, struct buf *out) {
	buf_printf(out, "L0=%a T0=%a m=%d b=%a s=%a ea=%a r=%a lo=%a", p->rated_life_h,
		   p->rated_temp_c, (int)p->model, p->base, p->step_k, p->ea_ev, p->rise_k,
		   p->validity_low_c);
	if (p->has_in_service) { // it bounds which samples count
		buf_printf(out, " is=%lld", (long long)p->in_service);
	}
}
