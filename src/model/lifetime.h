/*
 * Electrolytic capacitor wear-out life from temperature: the B_t rule L = L_0 * B^((T_0 - T)/10)
 * or Arrhenius, with Palmgren-Miner damage accumulation over a measured history. Pure: no I/O,
 * no clock, no globals; times are parameters.
 */
#ifndef LIFETIME_H
#define LIFETIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define LIFETIME_HOURS_PER_YEAR 8760.0         // 365 d x 24 h, the basis every year figure uses
#define LIFETIME_BOLTZMANN_EV   8.617333262e-5 // eV/K
#define LIFETIME_KELVIN_OFFSET  273.15
#define LIFETIME_DEFAULT_CAP_Y  15.0 // seal ageing limit (Nichicon, TDK, Beckhoff)
#define LIFETIME_DEFAULT_LOW_C  40.0 // lowest ambient manufacturer calculators accept
#define LIFETIME_BT2_LOW_C      60.0 // the B_t = 2 rule deviates from Arrhenius below
#define LIFETIME_BT2_HIGH_C     95.0 // Chemi-Con's B_t = 2 approximation: roughly 60-95 °C
#define LIFETIME_MIN_RATED_C    40.0
#define LIFETIME_MAX_RATED_C    200.0
#define LIFETIME_MAX_WARNINGS   24
#define LIFETIME_WARNING_LEN    480
#define LIFETIME_N_RELATIVE     4 // reductions 0, 10, 20, 30 K

enum lifetime_model {
	LIFETIME_MODEL_BT,
	LIFETIME_MODEL_ARRHENIUS,
};

enum capacitor_type {
	CAPACITOR_TYPE_WET,
	CAPACITOR_TYPE_POLYMER,
};

/*
 * The three temperatures of a capacitor (Nippon Chemi-Con's definitions): the ambient at the
 * mounting location, without the part's own heating; the case surface, which contains that
 * heating; the core (hot spot), hotter than the surface.
 */
enum temp_basis {
	TEMP_BASIS_AMBIENT,
	TEMP_BASIS_CASE,
	TEMP_BASIS_CORE,
};
#define TEMP_BASIS_N 3

enum self_heating_form {
	SELF_HEATING_NONE,
	SELF_HEATING_RISE,  // rise_k
	SELF_HEATING_POWER, // current_a^2 * esr_ohm * rth_k_per_w
	// rated_rise_k * ((current_a / rated_ripple_a)^2 - 1), doubled above rated ripple: the
	// rated life already includes the rise at rated ripple, so only the difference counts
	SELF_HEATING_RIPPLE,
};

/*
 * The free-text notes of a capacitor's design review (a capacitors: entry's review: map): how
 * the part is mounted and measured, for a review document to print beside the figures.
 */
enum capacitor_review_key {
	CAPACITOR_REVIEW_ENCLOSURE,
	CAPACITOR_REVIEW_ORIENTATION,
	CAPACITOR_REVIEW_THERMOCOUPLE,
	CAPACITOR_REVIEW_INSULATION,
	CAPACITOR_REVIEW_HEAT_SOURCES,
	CAPACITOR_REVIEW_VENT_CLEARANCE,
	CAPACITOR_REVIEW_SERIES_CONDITIONS,
	CAPACITOR_REVIEW_N,
};
/* "enclosure", "orientation", "thermocouple", "insulation", "heat_sources", "vent_clearance",
 * "series_conditions", indexed by the enum, then NULL. */
extern const char *const capacitor_review_keys[];

#define CAPACITOR_RIPPLE_MAX 8

/*
 * One frequency component of a capacitor's ripple current (self_heating: ripple:), with the
 * series' frequency multiplier: the factor its ripple rating has at @freq_hz relative to the
 * rated frequency. The components add as I = sqrt(sum (current_a / multiplier)^2), the current
 * at the rated frequency that heats the part the same.
 */
struct capacitor_ripple {
	double freq_hz, current_a, multiplier;
};

/* How a measured channel becomes the capacitor's ripple current (ripple_from: formula:). */
enum ripple_formula {
	RIPPLE_FORMULA_PROPORTIONAL, // I_rms = k * the channel's value (a bulk capacitor's share)
	RIPPLE_FORMULA_BUCK_INPUT,   // a buck's input capacitor: I_out * sqrt(D (1 - D)),
				     // D = v_out / v_in (I_out = the value, or watts / v_out)
};

/*
 * The ripple current per sample from a measured channel (ripple_from:), folded to the rated
 * frequency by the series' frequency multiplier as the per-frequency form is.
 */
struct capacitor_ripple_from {
	char *channel; // channel key or label; NULL = no measured ripple
	enum ripple_formula formula;
	double k; // proportional: amperes of ripple per ampere (or per watt) of the channel
	double v_in, v_out; // buck_input
	double multiplier; // the series' frequency multiplier at the ripple's frequency (default 1)
};

/* The optional voltage term K_V = (applied_v / rated_v)^-exponent (voltage:); off when NAN. */
struct capacitor_voltage {
	double applied_v, rated_v, exponent;
};

#define CAPACITOR_DEFAULT_UNCERTAINTY_K 2.0  // a thermocouple's tolerance (type K class 2: 2.5 K)
#define CAPACITOR_DEFAULT_RISE_TOL_K    3.0  // measured vs modelled self-heating: 3 K ...
#define CAPACITOR_DEFAULT_RISE_TOL_PCT  50.0 // ... or 50 % of the modelled rise
#define CAPACITOR_DEFAULT_STEADY_RATE_K 1.0  // steady: below 1 K per 10 min ...
#define CAPACITOR_DEFAULT_STEADY_SOAK   30.0 // ... held for 30 min

/** A capacitor as rated by its datasheet and placed on a sensor (a capacitors: entry). */
struct capacitor_config {
	char *name;
	char *sensor; // channel key or label
	enum temp_basis basis;
	double rated_life_h;
	double rated_temp_c;
	enum lifetime_model model;
	double bt;    // NAN = default for the type (2.0 wet; polymer uses 10 per 20 K)
	double ea_ev; // arrhenius only; NAN = unset
	enum capacitor_type type;
	enum self_heating_form self_heating;
	double rise_k, current_a, esr_ohm, rth_k_per_w, rated_ripple_a, rated_rise_k;
	struct capacitor_ripple ripple[CAPACITOR_RIPPLE_MAX]; // per frequency; current_a is their
	size_t n_ripple;                                      // sum at the rated frequency
	int64_t in_service;                  // unix seconds (UTC midnight; any date, 1925 too)
	bool has_in_service;                 // in_service is set (a negative date is a date)
	int in_service_line, in_service_col; // where it was set, for the date's warnings
	double life_cap_years;               // default 15
	double validity_low_c;               // NAN = the model's default (40 °C)
	int line;                            // where it was defined, for messages
	char *review[CAPACITOR_REVIEW_N];    // free text by enum capacitor_review_key; NULL = not
					     // recorded. Not part of the model.
	// The sensors: map by basis (NULL = not measured); the single sensor + basis form fills
	// the one of its basis. sensor and basis above are then the one the part ages at.
	char *sensors[TEMP_BASIS_N];
	bool sensors_map; // given as sensors: (self_heating is then allowed beside case or core)
	struct capacitor_ripple_from ripple_from;
	char *load_channel;        // the part's load or current, NULL = ripple_from's channel
	double rise_tolerance_k;   // measured vs modelled self-heating (default 3 K ...
	double rise_tolerance_pct; // ... or 50 %)
	double steady_rate_k;      // steady state: |dT| below this per 10 min (default 1 K) ...
	double steady_soak_min;    // ... held this long (default 30 min)
	double valid_low_c, valid_high_c; // valid_c: where B_t or E_a is stated; NAN = default
	double max_temp_c;                // the upper category temperature; NAN = rated_temp_c
	struct capacitor_voltage voltage;
	double case_diameter_mm, vent_clearance_mm; // NAN = not recorded
	char *vent_facing;                          // free text, NULL = not recorded
	double uncertainty_k;                       // the sensor's uncertainty (default 2 K)
};

/*
 * Names of the enums above as the configuration and the command line spell them. The tables
 * are indexed by the enum and end in NULL; parse returns false for an unknown name.
 */
extern const char *const lifetime_model_names[]; // "bt", "arrhenius"
extern const char *const capacitor_type_names[]; // "wet", "polymer"
extern const char *const temp_basis_names[];     // "ambient", "case", "core"
extern const char *const ripple_formula_names[]; // "proportional", "buck_input"
const char *lifetime_model_name(enum lifetime_model model);
bool lifetime_model_parse(const char *name, enum lifetime_model *out);
const char *capacitor_type_name(enum capacitor_type type);
bool capacitor_type_parse(const char *name, enum capacitor_type *out);
const char *temp_basis_name(enum temp_basis basis);

/** A validated capacitor model, derived from a struct capacitor_config. */
struct lifetime_params {
	// Which temperatures are measured; basis (below) is the best founded of them, the one the
	// part ages at: the core if measured, else the case, else the ambient.
	bool measured[TEMP_BASIS_N];
	double rated_life_h; // L_0
	double rated_temp_c; // T_0, on the model's temperature scale (ambient, case or core)
	enum lifetime_model model;
	double base;   // bt model: life x base per -step K
	double step_k; // 10, or 20 for a polymer part on its default rule
	double ea_ev;  // arrhenius
	enum capacitor_type type;
	bool bt_given; // B_t set explicitly
	enum temp_basis basis;
	enum self_heating_form self_heating;
	double rise_k; // added to the sensor temperature (ambient basis only); may be negative
		       // for the ripple form below rated ripple. 0 with a measured ripple
		       // (ripple_from), whose rise is a sample's own.
	bool ripple_over_rated;
	int64_t in_service;    // s since epoch; samples for time before it do not age the part
	bool has_in_service;   // in_service is set
	double life_cap_h;     // life_cap_years * 8760
	double validity_low_c; // valid_c's lower end (validity_low_c, default 40 °C)
	double valid_high_c;   // valid_c's upper end (default rated_temp_c)
	double max_temp_c;     // the upper category temperature (default rated_temp_c)
	bool valid_configured; // valid_c given
	// The self-heating as configured (self_heating:) beside what is added: the rise the part
	// would show above its ambient (case - ambient, for the check against the measurements;
	// the ripple form's rated_rise_k * (I / I_R)^2); NAN without self_heating.
	double modelled_rise_k;
	double esr_ohm, rth_k_per_w, rated_ripple_a, rated_rise_k; // the power and ripple forms
	bool ripple_measured; // ripple_from: the rise is each sample's, from a measured channel
	enum ripple_formula ripple_formula;
	double ripple_k, ripple_duty, ripple_multiplier;
	double const_rise_k;   // the rise at the configured current_a (NAN: none given), for the
			       // consumed life with a constant ripple beside the measured one
	double voltage_factor; // K_V (1 = no voltage term)
	bool voltage_on;
	double uncertainty_k;                        // the band: life at the reading -/+ this
	double rise_tolerance_k, rise_tolerance_pct; // the self-heating check's tolerance
	double steady_rate_k, steady_soak_s;         // steady state: K per 10 min, soak
};

/**
 * How error messages name the settings: the configuration's keys ("ea_ev") or a command's flags
 * ("--ea-ev"). "model" is what precedes a model's name ("model: ", "--model ").
 */
struct lifetime_names {
	const char *rated_life_h, *rated_temp_c, *model, *bt, *ea_ev, *rise_k, *life_cap_years,
		*uncertainty_k;
};
extern const struct lifetime_names lifetime_config_names; // the keys of a capacitors: entry

/**
 * Validates @cc and fills @p. On error returns false and sets *err to a newly allocated
 * sentence naming the problem with the configuration's keys (caller frees); *err is untouched
 * on success.
 */
bool lifetime_params_init(struct lifetime_params *p, const struct capacitor_config *cc, char **err);
/** The same, naming the settings with @names (e.g. the flags of `thermlog lifetime calc`). */
bool lifetime_params_init_named(struct lifetime_params *p, const struct capacitor_config *cc,
				const struct lifetime_names *names, char **err);

/**
 * The sensor @cc names for temperature @basis: its sensors: entry, or for the single form its
 * sensor on its basis; NULL when that temperature is not measured. Borrowed from @cc.
 */
const char *lifetime_sensor_of(const struct capacitor_config *cc, enum temp_basis basis);
/**
 * The load or current channel of @cc: ripple_from's channel, else load_channel; NULL = none.
 */
const char *lifetime_load_of(const struct capacitor_config *cc);

/** @cc's seal-ageing cap in years: life_cap_years, or LIFETIME_DEFAULT_CAP_Y when unset. */
double lifetime_cap_years(const struct capacitor_config *cc);

/**
 * Why the part ages at the temperature of p->basis: one sentence naming what is measured and
 * whether the self-heating is added (static text).
 */
const char *lifetime_basis_reason(const struct lifetime_params *p);

/**
 * The ripple current at the rated frequency from a measured @value of ripple_from's channel
 * (amperes, or watts with @watts) through its formula and frequency multiplier; NAN for a
 * value that is not finite or negative.
 */
double lifetime_ripple_current(const struct lifetime_params *p, double value, bool watts);
/**
 * The self-heating at ripple current @current_a (at the rated frequency) in p's form: *age_k
 * what the model adds to an ambient temperature (the ripple form: only the difference to the
 * rated rise, doubled above the rated ripple), *rise_k the rise above ambient the part shows.
 */
void lifetime_rise_for_current(const struct lifetime_params *p, double current_a, double *age_k,
			       double *rise_k);

/** Life in hours (uncapped) at a constant *sensor* temperature (self-heating added here). */
double lifetime_life_at(const struct lifetime_params *p, double sensor_c);
/** Life in hours (uncapped) at a model temperature (sensor + self-heating). */
double lifetime_life_at_model(const struct lifetime_params *p, double model_c);
/** The model temperature at which the uncapped life is @life_h (inverse of the above). */
double lifetime_temp_for_life(const struct lifetime_params *p, double life_h);

/** Neumaier's compensated sum: adds terms of very different size without losing the small. */
struct lifetime_sum {
	double s, c;
};
void lifetime_sum_add(struct lifetime_sum *sum, double x);
double lifetime_sum_value(const struct lifetime_sum *sum);

/**
 * Running damage: everything a report needs that can be summed sample by sample, so the daemon
 * can add cycles one at a time and a full recomputation over the same samples in the same order
 * gives the identical bits. Temperatures are on the sensor's scale.
 */
struct lifetime_acc {
	struct lifetime_sum damage;     // D = sum of dt / L(T)
	struct lifetime_sum observed_h; // sum of dt
	struct lifetime_sum temp_h;     // sum of T * dt, for the time-weighted mean
	struct lifetime_sum above_rated_h, below_validity_h, below_bt2_h;
	// The band: D with the reading uncertainty_k cooler and hotter.
	struct lifetime_sum damage_cool, damage_hot;
	struct lifetime_sum damage_const; // with the constant ripple (measured ripple only)
	struct lifetime_sum below_valid_d, above_valid_h, above_valid_d; // outside valid_c
	struct lifetime_sum rise_h;                                      // sum of rise * dt
	// Outside the band B_t = 2 stands for (valid_c, else Chemi-Con's 60-95 °C): time, D.
	struct lifetime_sum bt2_out_h, bt2_out_d;
	double min_c, max_c; // NAN before the first sample
	int64_t samples;
};

/** Zeroes @acc. */
void lifetime_acc_init(struct lifetime_acc *acc);
/** Adds @dt_h hours at sensor temperature @sensor_c. Non-finite values are ignored. */
void lifetime_acc_add(struct lifetime_acc *acc, const struct lifetime_params *p, double sensor_c,
		      double dt_h);
/**
 * Adds @n samples at the same sensor temperature standing for @dt_h hours together (a bin of
 * a histogram): the damage is a sum over temperatures, so this equals @n separate adds up to
 * the rounding of the sums.
 */
void lifetime_acc_add_n(struct lifetime_acc *acc, const struct lifetime_params *p, double sensor_c,
			double dt_h, int64_t n);
/**
 * Adds @n samples at sensor temperature @sensor_c standing for @dt_h hours together, with the
 * self-heating @rise_k (p->rise_k for the configured one, a sample's own for a measured
 * ripple). Returns the damage added (0 when nothing was).
 */
double lifetime_acc_add_rise(struct lifetime_acc *acc, const struct lifetime_params *p,
			     double sensor_c, double rise_k, double dt_h, int64_t n);
/** Appends an exact text form (hex floats) of @acc to @out. */
void lifetime_acc_format(const struct lifetime_acc *acc, struct buf *out);
/** Reads what lifetime_acc_format() wrote; false (acc untouched) on any malformation. */
bool lifetime_acc_parse(struct lifetime_acc *acc, const char *text);

/** Stable warning codes; the names are part of the JSON output. */
enum lifetime_warning_code {
	LIFETIME_WARN_ABOVE_RATED,     // "above_rated"
	LIFETIME_WARN_BELOW_VALIDITY,  // "below_validity"
	LIFETIME_WARN_BT2_LOW,         // "bt2_below_60c"
	LIFETIME_WARN_LIFE_CAPPED,     // "life_capped"
	LIFETIME_WARN_CALENDAR_CAP,    // "calendar_cap"
	LIFETIME_WARN_EXHAUSTED,       // "life_exhausted"
	LIFETIME_WARN_POLYMER_WET,     // "polymer_wet_rule"
	LIFETIME_WARN_RIPPLE_OVER,     // "ripple_over_rated"
	LIFETIME_WARN_DATA_GAPS,       // "data_gaps"
	LIFETIME_WARN_UNSYNCED,        // "unsynced_cycles"
	LIFETIME_WARN_NO_DATA,         // "no_data"
	LIFETIME_WARN_SENSOR,          // "sensor_not_found"
	LIFETIME_WARN_SHORT_HISTORY,   // "short_history"
	LIFETIME_WARN_HISTORY_TRIMMED, // "history_trimmed"
	LIFETIME_WARN_INVALID,         // "invalid_rating"
	LIFETIME_WARN_NOT_TEMPERATURE, // "not_temperature"
	LIFETIME_WARN_EXTRAPOLATED,    // "in_service_extrapolated"
	LIFETIME_WARN_ABOVE_VALID,     // "above_validity"
	LIFETIME_WARN_BT2_105,         // "bt2_rated_105c"
	LIFETIME_WARN_RISE_MISMATCH,   // "self_heating_mismatch"
	LIFETIME_WARN_AMBIENT_IS_CASE, // "ambient_looks_like_case"
	LIFETIME_WARN_TRANSIENT,       // "mostly_transient"
	LIFETIME_WARN_SENSOR_MISSING,  // "sensor_missing": a second sensor or the load not found
};

const char *lifetime_warning_name(enum lifetime_warning_code code);

struct lifetime_warning {
	enum lifetime_warning_code code;
	char message[LIFETIME_WARNING_LEN];
};

struct lifetime_relative {
	double reduction_k; // 0, 10, 20, 30
	double factor;      // life(T_eq - reduction) / life(T_eq)
	double life_h;      // uncapped
};

/*
 * The life with the reading the sensor's uncertainty cooler and hotter: index 0 is the short
 * end (the part u hotter than read), 1 the long end. Figures as in struct lifetime_result.
 */
struct lifetime_band {
	double uncertainty_k;
	double consumed_fraction[2];
	double life_uncapped_h[2], life_h[2], remaining_h[2];
};

/* Time outside the band over which B_t or E_a is stated (valid_c), with its share of D. */
struct lifetime_validity {
	double low_c, high_c, max_c;     // valid_c and the upper category temperature
	bool configured;                 // valid_c given (else the defaults)
	double below_h, above_h;         // hours below low_c and above high_c
	double below_share, above_share; // their share of the consumed life D
	double above_max_h;              // hours above max_c
	// A part rated 105 °C or more on B_t = 2: the band that coefficient stands for (valid_c,
	// else Chemi-Con's 60-95 °C), the hours outside it and their share of D.
	double bt2_low_c, bt2_high_c, bt2_out_h, bt2_out_share;
};

/** The figures of one capacitor over a history (or a profile). */
struct lifetime_result {
	double observed_h;
	double consumed_fraction;    // D (thermal Miner sum)
	double rate_per_h;           // D / observed_h = 1 / life_uncapped_h
	double life_uncapped_h;      // L_eff = observed_h / D
	double life_h;               // L_eff capped at life_cap_h
	double remaining_uncapped_h; // (1 - D) * L_eff, at least 0
	double remaining_h;          // also bounded by the seal-ageing cap minus the part's age
	bool capped;                 // life_h or remaining_h was cut by a cap
	double equivalent_temp_c;    // constant sensor temperature consuming life at the same rate
	double mean_temp_c;          // time-weighted mean sensor temperature
	double life_at_mean_temp_h;  // uncapped, for comparison (Jensen: >= life_uncapped_h)
	double min_temp_c, max_temp_c;
	double above_rated_h, below_validity_h;
	double self_heating_k; // effective (model) temperature = sensor temperature + this (the
			       // time-weighted mean rise with a measured ripple)
	double voltage_factor; // K_V applied to every life (1 = none)
	struct lifetime_band band;
	struct lifetime_validity validity;
	// A measured ripple (ripple_from) beside the constant current_a: D with the constant one
	// and the uncapped life it gives; NAN when there is no such pair.
	double consumed_constant_ripple, life_constant_ripple_h;
	// Time in service (from in_service to @now) that no sample stands for, before the history
	// and in its gaps, ages the part at the observed rate: NAN (and 0 extrapolated) without
	// an in_service date.
	double service_h, unobserved_service_h;
	double consumed_extrapolated; // rate_per_h * unobserved_service_h
	double consumed_total;        // consumed_fraction + consumed_extrapolated
	bool past_life;               // consumed_total >= 1
	struct lifetime_relative relative[LIFETIME_N_RELATIVE];
	size_t n_warnings;
	struct lifetime_warning warnings[LIFETIME_MAX_WARNINGS];
};

/**
 * Derives every figure and the model warnings from @acc. @now (s since epoch) is only used
 * with p->in_service: for the calendar cap and the damage extrapolated over the time in service
 * that was not observed (remaining_h counts it). Figures are NAN when nothing was observed.
 */
void lifetime_summarize(const struct lifetime_params *p, const struct lifetime_acc *acc,
			int64_t now, struct lifetime_result *r);

/** Appends a warning (dropped beyond LIFETIME_MAX_WARNINGS). */
void lifetime_warn(struct lifetime_result *r, enum lifetime_warning_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** A temperature held for a while, for percentiles and profiles. */
struct lifetime_point {
	double temp_c;
	double dt_h;
};

/**
 * The time-weighted percentile (0 < @pct <= 100): the lowest temperature at or below which
 * at least @pct % of the time was spent. Sorts @pts in place. NAN when empty.
 */
double lifetime_percentile(struct lifetime_point *pts, size_t n, double pct);

/**
 * Parses a profile "T:HOURS[,T:HOURS...]" (°C, positive hours) into a newly allocated array.
 * On error returns false with *err naming the bad element (caller frees).
 */
bool lifetime_profile_parse(const char *text, struct lifetime_point **pts, size_t *n, char **err);

/**
 * What each sample stands for, decided from the spacing of the cycles alone, one cycle at a time
 * (so the daemon's running sum and a full replay agree): a sample stands for the spacing since
 * the previous cycle, and the first sample for @first_s (0 in the replay: nothing before it is
 * known, so no configured interval enters the figures). A spacing
 * over 1.5 times the previous one is a gap: the sample then stands for the previous sample's
 * interval and the rest is unobserved. The first spacing sets the cadence (imported logs keep
 * theirs), and a cadence that really changes is followed from its second spacing on.
 */
struct lifetime_spacing {
	int64_t prev_ts;      // s since epoch; INT64_MIN before the first cycle
	int64_t prev_spacing; // s; 0 = not known yet
	int64_t prev_dt;      // s the previous sample stood for
};

void lifetime_spacing_init(struct lifetime_spacing *sp);
/**
 * Advances to the cycle at @ts (after sp->prev_ts) and returns the seconds its sample stands
 * for; *gap_s (may be NULL) gets the unobserved seconds before it.
 */
int64_t lifetime_spacing_next(struct lifetime_spacing *sp, int64_t ts, int64_t first_s,
			      int64_t *gap_s);

/** A compact string of everything that changes the damage sum, to detect changed ratings. */
void lifetime_params_fingerprint(const struct lifetime_params *p, struct buf *out);

#endif
