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
	[LIFETIME_WARN_ABOVE_VALID] = "above_validity",
	[LIFETIME_WARN_BT2_105] = "bt2_rated_105c",
	[LIFETIME_WARN_RISE_MISMATCH] = "self_heating_mismatch",
	[LIFETIME_WARN_AMBIENT_IS_CASE] = "ambient_looks_like_case",
	[LIFETIME_WARN_TRANSIENT] = "mostly_transient",
	[LIFETIME_WARN_SENSOR_MISSING] = "sensor_missing",
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
const char *const ripple_formula_names[] = {"proportional", "buck_input", NULL};
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

void lifetime_rise_for_current(const struct lifetime_params *p, double current_a, double *age_k,
			       double *rise_k) {
	switch (p->self_heating) {
	case SELF_HEATING_POWER:
		*age_k = *rise_k = current_a * current_a * p->esr_ohm * p->rth_k_per_w;
		return;
	case SELF_HEATING_RIPPLE: {
		/*
		 * The rated life already contains the rise at rated ripple, so only the difference
		 * counts (Albertsen/Jianghai K_R, Nichicon): below rated ripple it lengthens life.
		 * Above rated ripple Jianghai uses K_i = 4, i.e. the excess rise counts double.
		 */
		double ratio = current_a / p->rated_ripple_a;
		*rise_k = p->rated_rise_k * ratio * ratio;
		*age_k = p->rated_rise_k * (ratio * ratio - 1);
		if (ratio > 1) {
			*age_k *= 2;
		}
		return;
	}
	case SELF_HEATING_RISE:
		*age_k = *rise_k = p->modelled_rise_k;
		return;
	case SELF_HEATING_NONE:
		break;
	}
	*age_k = *rise_k = 0;
}

double lifetime_ripple_current(const struct lifetime_params *p, double value, bool watts) {
	if (!isfinite(value) || value < 0) {
		return NAN;
	}
	double i = p->ripple_formula == RIPPLE_FORMULA_BUCK_INPUT
			   ? (watts ? value / p->ripple_k : value) * p->ripple_duty
			   : p->ripple_k * value;
	return i / p->ripple_multiplier;
}

/* The measured ripple (ripple_from): its formula's constants, checked. */
static bool ripple_from_init(struct lifetime_params *p, const struct capacitor_config *cc,
			     char **err) {
	const struct capacitor_ripple_from *rf = &cc->ripple_from;
	if (!rf->channel) {
		return true;
	}
	if (cc->self_heating != SELF_HEATING_POWER && cc->self_heating != SELF_HEATING_RIPPLE) {
		return fail(err, "ripple_from needs self_heating in the power form {esr_ohm, "
				 "rth_k_per_w} or the ripple form {rated_ripple_a, rated_rise_k}: "
				 "the measured current heats the part through it");
	}
	double mult = isnan(rf->multiplier) ? 1 : rf->multiplier;
	if (!in_range(mult, 0, 100) || !(mult > 0)) {
		return fail(err, "ripple_from: multiplier must be above 0 and at most 100 (got %g)",
			    mult);
	}
	p->ripple_multiplier = mult;
	p->ripple_formula = rf->formula;
	if (rf->formula == RIPPLE_FORMULA_BUCK_INPUT) {
		if (!in_range(rf->v_in, 0, 1e4) || !in_range(rf->v_out, 0, 1e4) ||
		    !(rf->v_out > 0) || !(rf->v_out < rf->v_in)) {
			return fail(
				err,
				"ripple_from: buck_input needs 0 < v_out < v_in (got v_in %g V, "
				"v_out %g V)",
				rf->v_in, rf->v_out);
		}
		double d = rf->v_out / rf->v_in;
		p->ripple_duty = sqrt(d * (1 - d));
		p->ripple_k = rf->v_out; // a watts channel's output current is P / v_out
	} else {
		if (!in_range(rf->k, 0, 1e3) || !(rf->k > 0)) {
			return fail(err,
				    "ripple_from: proportional needs k above 0 and at most 1000 "
				    "(got %g)",
				    rf->k);
		}
		p->ripple_k = rf->k;
	}
	p->ripple_measured = true;
	return true;
}

static bool self_heating_init(struct lifetime_params *p, const struct capacitor_config *cc,
			      const struct lifetime_names *nm, char **err) {
	p->self_heating = cc->self_heating;
	p->modelled_rise_k = p->const_rise_k = NAN;
	bool have_current = isfinite(cc->current_a);
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
		break;
	case SELF_HEATING_POWER:
		if ((have_current && !in_range(cc->current_a, 0, 1e4)) ||
		    (!have_current && !p->ripple_measured) || !in_range(cc->esr_ohm, 0, 1e3) ||
		    !(cc->esr_ohm > 0) || !in_range(cc->rth_k_per_w, 0, 1e4) ||
		    !(cc->rth_k_per_w > 0)) {
			return fail(err,
				    "self-heating needs current_a >= 0, esr_ohm > 0 and "
				    "rth_k_per_w > 0 (got %g A, %g ohm, %g K/W)",
				    cc->current_a, cc->esr_ohm, cc->rth_k_per_w);
		}
		p->esr_ohm = cc->esr_ohm;
		p->rth_k_per_w = cc->rth_k_per_w;
		break;
	case SELF_HEATING_RIPPLE:
		if ((have_current && !in_range(cc->current_a, 0, 1e4)) ||
		    (!have_current && !p->ripple_measured) ||
		    !in_range(cc->rated_ripple_a, 0, 1e4) || !(cc->rated_ripple_a > 0) ||
		    !in_range(cc->rated_rise_k, 0, 50)) {
			return fail(err,
				    "ripple self-heating needs current_a >= 0, rated_ripple_a > 0 "
				    "and 0 <= rated_rise_k <= 50 K (got %g A, %g A, %g K)",
				    cc->current_a, cc->rated_ripple_a, cc->rated_rise_k);
		}
		p->rated_ripple_a = cc->rated_ripple_a;
		p->rated_rise_k = cc->rated_rise_k;
		break;
	default:
		return fail(err, "unknown self-heating form");
	}
	double age = p->rise_k, rise = p->rise_k;
	if (cc->self_heating != SELF_HEATING_RISE && have_current) {
		lifetime_rise_for_current(p, cc->current_a, &age, &rise);
		p->ripple_over_rated = cc->self_heating == SELF_HEATING_RIPPLE &&
				       cc->current_a > cc->rated_ripple_a;
		if (cc->self_heating == SELF_HEATING_POWER && rise > 100) {
			return fail(err,
				    "self-heating I^2*ESR*Rth = %g K is implausible (over 100 K): "
				    "check current_a, esr_ohm and rth_k_per_w",
				    rise);
		}
	} else if (cc->self_heating != SELF_HEATING_RISE) {
		age = rise = NAN; // the rise is each sample's (ripple_from)
	}
	p->const_rise_k = age;
	p->modelled_rise_k = rise;
	// Only an ambient temperature lacks the part's own heating; with a measured ripple the
	// rise is added per sample instead.
	p->rise_k = p->basis == TEMP_BASIS_AMBIENT && !p->ripple_measured ? age : 0;
	return true;
}

/* Which temperatures are measured, and the best founded of them: core, else case, else ambient. */
static bool sensors_init(struct lifetime_params *p, const struct capacitor_config *cc, char **err) {
	bool any = false;
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		p->measured[b] = cc->sensors[b] != NULL;
		any = any || p->measured[b];
	}
	if (!any) { // the single sensor + basis form as a caller filled it
		if ((unsigned)cc->basis >= TEMP_BASIS_N) {
			return fail(err, "unknown temperature basis");
		}
		p->measured[cc->basis] = true;
	}
	p->basis = p->measured[TEMP_BASIS_CORE]   ? TEMP_BASIS_CORE
		   : p->measured[TEMP_BASIS_CASE] ? TEMP_BASIS_CASE
						  : TEMP_BASIS_AMBIENT;
	return true;
}

const char *lifetime_basis_reason(const struct lifetime_params *p) {
	bool amb = p->measured[TEMP_BASIS_AMBIENT], sh = p->self_heating != SELF_HEATING_NONE;
	switch (p->basis) {
	case TEMP_BASIS_CORE:
		return "the core (hot spot) is measured: the temperature the electrolyte ages at, "
		       "nothing added to it";
	case TEMP_BASIS_CASE:
		return amb ? "the case is measured (no core sensor): the part's own heating is in "
			     "the reading, so nothing is added to it; the ambient sensor serves to "
			     "check the self-heating"
			   : "the case is measured (no core sensor): the part's own heating is in "
			     "the reading, so nothing is added to it";
	case TEMP_BASIS_AMBIENT:
		break;
	}
	if (p->ripple_measured) {
		return "only the ambient is measured: each sample's self-heating, from the "
		       "measured ripple current, is added to it";
	}
	return sh ? "only the ambient is measured: the modelled self-heating is added to it"
		  : "only the ambient is measured, and no self-heating is configured: the part "
		    "is taken to carry at most its rated ripple, whose rise the rated life "
		    "already contains";
}

/* valid_c (or validity_low_c) and max_temp_c. */
static bool validity_init(struct lifetime_params *p, const struct capacitor_config *cc,
			  char **err) {
	if (!isnan(cc->valid_low_c) && !isnan(cc->validity_low_c)) {
		return fail(err, "give valid_c or validity_low_c, not both (valid_c's first value "
				 "is the lower bound)");
	}
	p->valid_configured = !isnan(cc->valid_low_c);
	p->validity_low_c = p->valid_configured         ? cc->valid_low_c
			    : isnan(cc->validity_low_c) ? LIFETIME_DEFAULT_LOW_C
							: cc->validity_low_c;
	p->valid_high_c = p->valid_configured ? cc->valid_high_c : p->rated_temp_c;
	if (!isfinite(p->validity_low_c) || p->validity_low_c >= p->rated_temp_c ||
	    p->validity_low_c <= -LIFETIME_KELVIN_OFFSET) {
		return fail(err, "%s must be below the rated temperature %g °C (got %g)",
			    p->valid_configured ? "valid_c's lower bound" : "validity_low_c",
			    p->rated_temp_c, p->validity_low_c);
	}
	if (!in_range(p->valid_high_c, p->validity_low_c, LIFETIME_MAX_RATED_C) ||
	    !(p->valid_high_c > p->validity_low_c)) {
		return fail(err,
			    "valid_c: the upper bound %g °C must be above the lower %g °C and "
			    "at most %g °C",
			    p->valid_high_c, p->validity_low_c, LIFETIME_MAX_RATED_C);
	}
	p->max_temp_c = isnan(cc->max_temp_c) ? p->rated_temp_c : cc->max_temp_c;
	if (!in_range(p->max_temp_c, LIFETIME_MIN_RATED_C, LIFETIME_MAX_RATED_C)) {
		return fail(err, "max_temp_c %g °C is out of range (%g to %g °C)", p->max_temp_c,
			    LIFETIME_MIN_RATED_C, LIFETIME_MAX_RATED_C);
	}
	return true;
}

/* The voltage term, the sensor's uncertainty and the checks' settings. */
static bool extras_init(struct lifetime_params *p, const struct capacitor_config *cc,
			const struct lifetime_names *nm, char **err) {
	const struct capacitor_voltage *v = &cc->voltage;
	p->voltage_factor = 1;
	if (!isnan(v->applied_v) || !isnan(v->rated_v) || !isnan(v->exponent)) {
		if (!in_range(v->rated_v, 0, 1e5) || !(v->rated_v > 0) ||
		    !in_range(v->applied_v, 0, v->rated_v) || !(v->applied_v > 0) ||
		    !in_range(v->exponent, 0, 20) || !(v->exponent > 0)) {
			return fail(err,
				    "voltage: needs 0 < applied_v <= rated_v and 0 < exponent <= "
				    "20 (got %g V, %g V, %g): above the rated voltage no model "
				    "applies",
				    v->applied_v, v->rated_v, v->exponent);
		}
		p->voltage_on = true;
		p->voltage_factor = pow(v->applied_v / v->rated_v, -v->exponent);
	}
	p->uncertainty_k =
		isnan(cc->uncertainty_k) ? CAPACITOR_DEFAULT_UNCERTAINTY_K : cc->uncertainty_k;
	p->rise_tolerance_k =
		isnan(cc->rise_tolerance_k) ? CAPACITOR_DEFAULT_RISE_TOL_K : cc->rise_tolerance_k;
	p->rise_tolerance_pct = isnan(cc->rise_tolerance_pct) ? CAPACITOR_DEFAULT_RISE_TOL_PCT
							      : cc->rise_tolerance_pct;
	p->steady_rate_k =
		isnan(cc->steady_rate_k) ? CAPACITOR_DEFAULT_STEADY_RATE_K : cc->steady_rate_k;
	double soak =
		isnan(cc->steady_soak_min) ? CAPACITOR_DEFAULT_STEADY_SOAK : cc->steady_soak_min;
	p->steady_soak_s = soak * 60;
	if (!in_range(p->uncertainty_k, 0, 20)) {
		return fail(err, "%s must be between 0 and 20 K (got %g)", nm->uncertainty_k,
			    p->uncertainty_k);
	}
	if (!in_range(p->rise_tolerance_k, 0, 100) || !in_range(p->rise_tolerance_pct, 0, 1000)) {
		return fail(err,
			    "self_heating_tolerance: k between 0 and 100 K and pct between 0 and "
			    "1000 (got %g K, %g %%)",
			    p->rise_tolerance_k, p->rise_tolerance_pct);
	}
	if (!in_range(p->steady_rate_k, 0, 100) || !(p->steady_rate_k > 0) ||
	    !in_range(soak, 0, 7 * 24 * 60) || !(soak > 0)) {
		return fail(
			err,
			"steady_state: rate_k_per_10min above 0 and at most 100, soak_min above "
			"0 and at most a week (got %g K, %g min)",
			p->steady_rate_k, soak);
	}
	return true;
}

const struct lifetime_names lifetime_config_names = {
	.rated_life_h = "rated_life_h",
	.rated_temp_c = "rated_temp_c",
	.model = "model: ",
	.bt = "bt",
	.ea_ev = "ea_ev",
	.rise_k = "rise_k",
	.life_cap_years = "life_cap_years",
	.uncertainty_k = "uncertainty_k",
};

const char *lifetime_sensor_of(const struct capacitor_config *cc, enum temp_basis basis) {
	bool any = false;
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		any = any || cc->sensors[b];
	}
	if (any) {
		return (unsigned)basis < TEMP_BASIS_N ? cc->sensors[basis] : NULL;
	}
	return basis == cc->basis ? cc->sensor : NULL;
}

const char *lifetime_load_of(const struct capacitor_config *cc) {
	return cc->ripple_from.channel ? cc->ripple_from.channel : cc->load_channel;
}

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

	if (!sensors_init(p, cc, err) || !ripple_from_init(p, cc, err)) {
		return false;
	}
	if (cc->self_heating != SELF_HEATING_NONE && p->basis != TEMP_BASIS_AMBIENT &&
	    !cc->sensors_map) {
		const char *what = p->basis == TEMP_BASIS_CASE ? "a case" : "a core";
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
	return validity_init(p, cc, err) && extras_init(p, cc, nm, err);
}

double lifetime_life_at_model(const struct lifetime_params *p, double model_c) {
	if (p->model == LIFETIME_MODEL_ARRHENIUS) {
		double tk = model_c + LIFETIME_KELVIN_OFFSET;
		double t0k = p->rated_temp_c + LIFETIME_KELVIN_OFFSET;
		if (!(tk > 0)) {
			return NAN;
		}
		return p->rated_life_h * p->voltage_factor *
		       exp(p->ea_ev / LIFETIME_BOLTZMANN_EV * (1 / tk - 1 / t0k));
	}
	// pow() keeps whole steps exact: 2000 h at 65 °C on a 105 °C part is 2000 * 16
	return p->rated_life_h * p->voltage_factor *
	       pow(p->base, (p->rated_temp_c - model_c) / p->step_k);
}

double lifetime_life_at(const struct lifetime_params *p, double sensor_c) {
	return lifetime_life_at_model(p, sensor_c + p->rise_k);
}

double lifetime_temp_for_life(const struct lifetime_params *p, double life_h) {
	if (!(life_h > 0) || !isfinite(life_h)) {
		return NAN;
	}
	double ratio = log(life_h / (p->rated_life_h * p->voltage_factor));
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
	lifetime_acc_add_rise(acc, p, sensor_c, p->rise_k, dt_h, n);
}

/* The band the B_t = 2 coefficient is taken to hold over: valid_c, else Chemi-Con's 60-95 °C. */
static void bt2_band(const struct lifetime_params *p, double *lo, double *hi) {
	*lo = p->valid_configured ? p->validity_low_c : LIFETIME_BT2_LOW_C;
	*hi = p->valid_configured ? p->valid_high_c : LIFETIME_BT2_HIGH_C;
}

double lifetime_acc_add_rise(struct lifetime_acc *acc, const struct lifetime_params *p,
			     double sensor_c, double rise_k, double dt_h, int64_t n) {
	if (!isfinite(sensor_c) || !isfinite(rise_k) || !isfinite(dt_h) || !(dt_h > 0)) {
		return 0;
	}
	double model_c = sensor_c + rise_k;
	double life = lifetime_life_at_model(p, model_c);
	if (!(life > 0)) {
		return 0;
	}
	double d = dt_h / life;
	lifetime_sum_add(&acc->damage, d);
	lifetime_sum_add(&acc->observed_h, dt_h);
	lifetime_sum_add(&acc->temp_h, sensor_c * dt_h);
	lifetime_sum_add(&acc->rise_h, rise_k * dt_h);
	// The band: the reading uncertainty_k off either way (the rise is not a reading).
	double u = p->uncertainty_k;
	lifetime_sum_add(&acc->damage_cool,
			 u == 0 ? d : dt_h / lifetime_life_at_model(p, model_c - u));
	lifetime_sum_add(&acc->damage_hot,
			 u == 0 ? d : dt_h / lifetime_life_at_model(p, model_c + u));
	if (p->ripple_measured && isfinite(p->const_rise_k) && p->basis == TEMP_BASIS_AMBIENT) {
		lifetime_sum_add(&acc->damage_const,
				 dt_h / lifetime_life_at_model(p, sensor_c + p->const_rise_k));
	}
	if (model_c > p->max_temp_c) {
		lifetime_sum_add(&acc->above_rated_h, dt_h);
	}
	if (model_c < p->validity_low_c) {
		lifetime_sum_add(&acc->below_validity_h, dt_h);
		lifetime_sum_add(&acc->below_valid_d, d);
	}
	if (model_c > p->valid_high_c) {
		lifetime_sum_add(&acc->above_valid_h, dt_h);
		lifetime_sum_add(&acc->above_valid_d, d);
	}
	if (model_c < LIFETIME_BT2_LOW_C) {
		lifetime_sum_add(&acc->below_bt2_h, dt_h);
	}
	double lo, hi;
	bt2_band(p, &lo, &hi);
	if (model_c < lo || model_c > hi) {
		lifetime_sum_add(&acc->bt2_out_h, dt_h);
		lifetime_sum_add(&acc->bt2_out_d, d);
	}
	if (acc->samples == 0 || sensor_c < acc->min_c) {
		acc->min_c = sensor_c;
	}
	if (acc->samples == 0 || sensor_c > acc->max_c) {
		acc->max_c = sensor_c;
	}
	acc->samples += n;
	return d;
}

/* The sums of the text form, in its order, with their names. */
struct acc_sum_field {
	const char *name;
	struct lifetime_sum *sum;
};
#define ACC_N_SUMS 15

static void acc_sums(struct lifetime_acc *acc, struct acc_sum_field out[ACC_N_SUMS]) {
	const struct acc_sum_field f[ACC_N_SUMS] = {
		{"d", &acc->damage},
		{"obs", &acc->observed_h},
		{"t", &acc->temp_h},
		{"ab", &acc->above_rated_h},
		{"be", &acc->below_validity_h},
		{"b2", &acc->below_bt2_h},
		{"dc", &acc->damage_cool},
		{"dh", &acc->damage_hot},
		{"dk", &acc->damage_const},
		{"bd", &acc->below_valid_d},
		{"av", &acc->above_valid_h},
		{"ad", &acc->above_valid_d},
		{"rh", &acc->rise_h},
		{"oh", &acc->bt2_out_h},
		{"od", &acc->bt2_out_d},
	};
	memcpy(out, f, sizeof(f));
}

void lifetime_acc_format(const struct lifetime_acc *acc, struct buf *out) {
	struct lifetime_acc copy = *acc;
	struct acc_sum_field sums[ACC_N_SUMS];
	acc_sums(&copy, sums);
	buf_printf(out, "v2 n=%" PRId64, acc->samples);
	for (size_t i = 0; i < ACC_N_SUMS; i++) {
		buf_printf(out, " %s=%a,%a", sums[i].name, sums[i].sum->s, sums[i].sum->c);
	}
	buf_printf(out, " min=%a max=%a", acc->min_c, acc->max_c);
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
	if (strncmp(s, "v2 n=", 5) != 0) {
		return false;
	}
	s += 5;
	char *end;
	long long n = strtoll(s, &end, 10);
	if (end == s || *end != ' ' || n < 0) {
		return false;
	}
	s = end;
	struct lifetime_acc got;
	lifetime_acc_init(&got);
	struct acc_sum_field sums[ACC_N_SUMS];
	acc_sums(&got, sums);
	for (size_t i = 0; i < ACC_N_SUMS; i++) {
		double v[2];
		if (!parse_field(&s, sums[i].name, v, 2)) {
			return false;
		}
		*sums[i].sum = (struct lifetime_sum){v[0], v[1]};
	}
	if (!parse_field(&s, "min", &got.min_c, 1) || !parse_field(&s, "max", &got.max_c, 1) ||
	    *s != '\0') {
		return false;
	}
	got.samples = n;
	*acc = got;
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

/* " (12.5 % of the consumed life)" for a share of D, "" when nothing was consumed there. */
static void describe_damage(char *out, size_t len, double share) {
	if (share > 0 && isfinite(share)) {
		snprintf(out, len, " (%.1f %% of the consumed life)", 100 * share);
	} else {
		out[0] = '\0';
	}
}

static void validity_warnings(const struct lifetime_params *p, const struct lifetime_acc *acc,
			      struct lifetime_result *r) {
	const struct lifetime_validity *v = &r->validity;
	double obs = r->observed_h;
	char share[96], dshare[64];
	if (v->above_max_h > 0) {
		describe_share(share, sizeof(share), v->above_max_h, obs);
		lifetime_warn(r, LIFETIME_WARN_ABOVE_RATED,
			      "%s above the %s %g °C, up to %.1f °C: the formula is extrapolated "
			      "there, so the damage is likely underestimated",
			      share, p->max_temp_c == p->rated_temp_c ? "rated" : "upper category",
			      p->max_temp_c, acc->max_c + r->self_heating_k);
	}
	if (v->below_h > 0) {
		describe_share(share, sizeof(share), v->below_h, obs);
		describe_damage(dshare, sizeof(dshare), v->below_share);
		if (p->valid_configured) {
			lifetime_warn(r, LIFETIME_WARN_BELOW_VALIDITY,
				      "%s below %g °C, the lower end of the band over which the "
				      "series' coefficient is stated (valid_c): life there is "
				      "extrapolated%s",
				      share, v->low_c, dshare);
		} else {
			lifetime_warn(r, LIFETIME_WARN_BELOW_VALIDITY,
				      "%s below %g °C, outside the model's validity band "
				      "(manufacturer calculators accept %g °C up to the rated "
				      "temperature): life there is extrapolated%s",
				      share, v->low_c, v->low_c, dshare);
		}
	}
	if (v->above_h > 0 && v->high_c < v->max_c) {
		describe_share(share, sizeof(share), v->above_h, obs);
		describe_damage(dshare, sizeof(dshare), v->above_share);
		lifetime_warn(r, LIFETIME_WARN_ABOVE_VALID,
			      "%s above %g °C, the upper end of the band over which the series' "
			      "coefficient is stated (valid_c): life there is extrapolated%s",
			      share, v->high_c, dshare);
	}
	// Chemi-Con: B_t = 2 is an approximation over roughly 60-95 °C; parts rated 105 °C or
	// more may need a corrected coefficient.
	if (p->model == LIFETIME_MODEL_BT && p->base == 2 && p->step_k == 10 &&
	    p->rated_temp_c >= 105 && v->bt2_out_h > 0) {
		describe_share(share, sizeof(share), v->bt2_out_h, obs);
		describe_damage(dshare, sizeof(dshare), v->bt2_out_share);
		lifetime_warn(r, LIFETIME_WARN_BT2_105,
			      "a part rated %g °C on B_t = 2 spent %s outside [%g, %g] °C%s: "
			      "B_t = 2 is Chemi-Con's approximation over roughly 60-95 °C, and "
			      "parts rated 105 °C or more may need a corrected coefficient; never "
			      "apply one coefficient across all series and temperature ranges",
			      p->rated_temp_c, share, v->bt2_low_c, v->bt2_high_c, dshare);
	}
}

static void model_warnings(const struct lifetime_params *p, const struct lifetime_acc *acc,
			   struct lifetime_result *r) {
	double obs = r->observed_h;
	double below = r->validity.below_h;
	double below60 = lifetime_sum_value(&acc->below_bt2_h);
	char share[96];
	validity_warnings(p, acc, r);
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

/* Life and remaining life from @obs hours consuming @d, as lifetime_summarize() defines them. */
struct life_figures {
	double life_uncapped_h, life_h, remaining_uncapped_h, remaining_h;
	double extrapolated, total, calendar_left;
	bool life_capped, remaining_capped;
};

static void life_figures(const struct lifetime_params *p, double obs, double d, bool have_age,
			 double age_h, struct life_figures *f) {
	*f = (struct life_figures){0};
	f->life_uncapped_h = obs / d;
	f->life_capped = f->life_uncapped_h > p->life_cap_h;
	f->life_h = f->life_capped ? p->life_cap_h : f->life_uncapped_h;
	f->total = d;
	if (have_age) {
		double unobserved = age_h > obs ? age_h - obs : 0;
		f->extrapolated = d / obs * unobserved;
		f->total = d + f->extrapolated;
	}
	f->remaining_uncapped_h = f->total < 1 ? (1 - f->total) * f->life_uncapped_h : 0;
	f->calendar_left = p->life_cap_h - age_h > 0 ? p->life_cap_h - age_h : 0;
	f->remaining_capped = f->calendar_left < f->remaining_uncapped_h;
	f->remaining_h = f->remaining_capped ? f->calendar_left : f->remaining_uncapped_h;
}

/* The band, the validity figures and the constant-ripple comparison of a summary. */
static void summarize_extras(const struct lifetime_params *p, const struct lifetime_acc *acc,
			     bool have_age, double age_h, struct lifetime_result *r) {
	double obs = r->observed_h, d = r->consumed_fraction;
	r->band.uncertainty_k = p->uncertainty_k;
	const struct lifetime_sum *ends[2] = {&acc->damage_hot, &acc->damage_cool};
	for (int k = 0; k < 2; k++) {
		struct life_figures f;
		double dk = lifetime_sum_value(ends[k]);
		r->band.consumed_fraction[k] = dk;
		life_figures(p, obs, dk, have_age, age_h, &f);
		r->band.life_uncapped_h[k] = f.life_uncapped_h;
		r->band.life_h[k] = f.life_h;
		r->band.remaining_h[k] = f.remaining_h;
	}
	struct lifetime_validity *v = &r->validity;
	v->below_share = lifetime_sum_value(&acc->below_valid_d) / d;
	v->above_share = lifetime_sum_value(&acc->above_valid_d) / d;
	v->bt2_out_share = lifetime_sum_value(&acc->bt2_out_d) / d;
	r->consumed_constant_ripple = r->life_constant_ripple_h = NAN;
	if (p->ripple_measured && isfinite(p->const_rise_k) && p->basis == TEMP_BASIS_AMBIENT) {
		r->consumed_constant_ripple = lifetime_sum_value(&acc->damage_const);
		r->life_constant_ripple_h = obs / r->consumed_constant_ripple;
	}
}

/* The figures with nothing observed: NAN, and the no_data warning. */
static void summarize_empty(struct lifetime_result *r, double obs, double d) {
	r->rate_per_h = r->life_uncapped_h = r->life_h = NAN;
	r->remaining_uncapped_h = r->remaining_h = NAN;
	r->equivalent_temp_c = r->mean_temp_c = r->life_at_mean_temp_h = NAN;
	r->min_temp_c = r->max_temp_c = NAN;
	r->consumed_total = obs > 0 ? d : NAN;
	r->consumed_constant_ripple = r->life_constant_ripple_h = NAN;
	r->validity.below_share = r->validity.above_share = r->validity.bt2_out_share = NAN;
	for (int k = 0; k < 2; k++) {
		r->band.consumed_fraction[k] = r->band.life_uncapped_h[k] = NAN;
		r->band.life_h[k] = r->band.remaining_h[k] = NAN;
	}
	lifetime_warn(r, LIFETIME_WARN_NO_DATA, "no temperature samples: nothing to estimate");
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
	// With a measured ripple each sample has its own rise: the mean stands for them.
	r->self_heating_k =
		p->ripple_measured && obs > 0 ? lifetime_sum_value(&acc->rise_h) / obs : p->rise_k;
	r->voltage_factor = p->voltage_factor;
	r->band.uncertainty_k = p->uncertainty_k;
	r->validity = (struct lifetime_validity){
		.low_c = p->validity_low_c,
		.high_c = p->valid_high_c,
		.max_c = p->max_temp_c,
		.configured = p->valid_configured,
		.below_h = r->below_validity_h,
		.above_h = lifetime_sum_value(&acc->above_valid_h),
		.above_max_h = r->above_rated_h,
		.bt2_out_h = lifetime_sum_value(&acc->bt2_out_h),
	};
	bt2_band(p, &r->validity.bt2_low_c, &r->validity.bt2_high_c);
	// Without an in-service date the part is at least as old as the observed time.
	bool have_age = p->has_in_service && now >= p->in_service;
	double age_h = have_age ? (double)(now - p->in_service) / 3600.0 : obs;
	r->service_h = r->unobserved_service_h = have_age ? age_h : NAN;
	r->consumed_total = d;
	for (int i = 0; i < LIFETIME_N_RELATIVE; i++) {
		r->relative[i] = (struct lifetime_relative){10.0 * i, NAN, NAN};
	}
	if (!(obs > 0) || !(d > 0)) {
		summarize_empty(r, obs, d);
		return;
	}
	struct life_figures f;
	life_figures(p, obs, d, have_age, age_h, &f);
	r->rate_per_h = d / obs;
	r->life_uncapped_h = f.life_uncapped_h;
	// A constant temperature is its own equivalent; the inverse would add rounding.
	double eq_model = acc->min_c == acc->max_c && !p->ripple_measured
				  ? acc->min_c + p->rise_k
				  : lifetime_temp_for_life(p, r->life_uncapped_h);
	r->equivalent_temp_c = eq_model - r->self_heating_k;
	r->mean_temp_c = lifetime_sum_value(&acc->temp_h) / obs;
	r->life_at_mean_temp_h = lifetime_life_at_model(p, r->mean_temp_c + r->self_heating_k);
	for (int i = 0; i < LIFETIME_N_RELATIVE; i++) {
		double fr = relative_factor(p, eq_model, r->relative[i].reduction_k);
		r->relative[i].factor = fr;
		r->relative[i].life_h = r->life_uncapped_h * fr;
	}
	summarize_extras(p, acc, have_age, age_h, r);

	model_warnings(p, acc, r);

	r->life_h = f.life_h;
	if (f.life_capped) {
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
		r->consumed_extrapolated = f.extrapolated;
		r->consumed_total = f.total;
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
	r->remaining_uncapped_h = f.remaining_uncapped_h;
	if (r->past_life) {
		lifetime_warn(
			r, LIFETIME_WARN_EXHAUSTED,
			"past its estimated life: consumed %.0f %% of the rated wear-out life "
			"(fraction %.3f%s): replace the part or check it (capacitance, ESR)",
			100 * total, total,
			r->consumed_extrapolated > 0 ? ", partly extrapolated" : "");
	}
	r->remaining_h = f.remaining_h;
	if (f.remaining_capped) {
		r->capped = true;
		if (have_age) {
			lifetime_warn(r, LIFETIME_WARN_CALENDAR_CAP,
				      "in service for %.0f h (%.1f years of 8760 h): the %g-year "
				      "seal-ageing limit leaves %.0f h, less than the thermal "
				      "remaining life of %.0f h",
				      age_h, age_h / LIFETIME_HOURS_PER_YEAR,
				      p->life_cap_h / LIFETIME_HOURS_PER_YEAR, f.calendar_left,
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
	// What else enters the sums: the band, the validity band, the voltage term, the basis
	// and a measured ripple's formula.
	buf_printf(out, " u=%a hi=%a mx=%a kv=%a bs=%d", p->uncertainty_k, p->valid_high_c,
		   p->max_temp_c, p->voltage_factor, (int)p->basis);
	if (p->ripple_measured) {
		buf_printf(out, " rf=%d k=%a du=%a mu=%a f=%d e=%a th=%a ir=%a dr=%a c=%a",
			   (int)p->ripple_formula, p->ripple_k, p->ripple_duty,
			   p->ripple_multiplier, (int)p->self_heating, p->esr_ohm, p->rth_k_per_w,
			   p->rated_ripple_a, p->rated_rise_k, p->const_rise_k);
	}
	if (p->has_in_service) { // it bounds which samples count
		buf_printf(out, " is=%lld", (long long)p->in_service);
	}
}
