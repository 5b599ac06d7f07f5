/* The lifetime model against the reference's vectors, closed forms and error cases. */
#include "lifetime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h" // config_capacitor_init(): a capacitors: entry's defaults
#include "lifetime-fixture.h"
#include "test.h"

static struct capacitor_config cap(double life_h, double temp_c) {
	struct capacitor_config c;
	config_capacitor_init(&c);
	c.name = "C1";
	c.sensor = "thermal/test";
	c.rated_life_h = life_h;
	c.rated_temp_c = temp_c;
	return c;
}

static double life(double life_h, double rated_c, double temp_c) {
	struct capacitor_config cc = cap(life_h, rated_c);
	struct lifetime_params p = params(&cc);
	return lifetime_life_at(&p, temp_c);
}

/* Independent I0 by its power series: sum ((x/2)^k / k!)^2. */
static double bessel_i0(double x) {
	double term = 1, sum = 1;
	for (int k = 1; k < 60; k++) {
		term *= (x / 2) / k;
		sum += term * term;
	}
	return sum;
}

static void test_published_vectors(void) {
	// V1
	is_near(life(2000, 105, 95), 4000, 0, "V1 2000 h @105 °C at 95 °C");
	is_near(life(2000, 105, 85), 8000, 0, "V1 at 85 °C");
	is_near(life(2000, 105, 75), 16000, 0, "V1 at 75 °C");
	is_near(life(2000, 105, 65), 32000, 0, "V1 at 65 °C");
	is_near(life(2000, 105, 65) / LIFETIME_HOURS_PER_YEAR, 3.653, 1e-3, "V1 32,000 h = 3.65 y");
	// V2
	is_near(life(1000, 105, 55), 32000, 0, "V2 1000 h @105 °C at 55 °C");
	// V4
	is_near(life(1000, 85, 45), 16000, 0, "V4 1000 h @85 °C at 45 °C");
	is_near(life(1000, 105, 45), 64000, 0, "V4 1000 h @105 °C at 45 °C");
	// V12: polymer x10 per 20 K, wet x2 per 10 K
	struct capacitor_config cc = cap(2000, 105);
	cc.type = CAPACITOR_TYPE_POLYMER;
	struct lifetime_params p = params(&cc);
	is_near(lifetime_life_at(&p, 85), 20000, 1e-15, "V12 polymer at 85 °C");
	is_near(lifetime_life_at(&p, 65), 200000, 1e-15, "V12 polymer at 65 °C");
	is_near(life(2000, 105, 85), 8000, 0, "V12 wet at 85 °C");
	ok(lifetime_life_at(&p, 85) > life(2000, 105, 85), "V12 polymer outlives wet at 85 °C");
}

static void test_ripple_vectors(void) {
	// V6: Jianghai/Albertsen K_R with dT0 = 5 K, at 65 °C
	const double ratio[] = {0, 0.5, 1.0, 1.2};
	const double want[] = {45254.8, 41498.9, 32000, 23588.3};
	for (int i = 0; i < 4; i++) {
		struct capacitor_config cc = cap(2000, 105);
		cc.self_heating = SELF_HEATING_RIPPLE;
		cc.current_a = ratio[i];
		cc.rated_ripple_a = 1.0;
		cc.rated_rise_k = 5;
		struct lifetime_params p = params(&cc);
		char what[64];
		snprintf(what, sizeof(what), "V6 I/I_R = %g -> %g h", ratio[i], want[i]);
		is_near(lifetime_life_at(&p, 65), want[i], 2e-6, what);
		ok(p.ripple_over_rated == (ratio[i] > 1),
		   "V6 over-rated ripple flagged only above 1");
	}
	// V13: the beta form expressed as R_th = 1 / (beta * A)
	double area = M_PI * 1.0 * (1.0 + 4 * 2.0) / 4;
	double beta = 2.3e-3 * pow(area, -0.2);
	is_near(area, 7.0686, 1e-4, "V13 can surface 7.0686 cm2");
	is_near(beta, 1.5555e-3, 1e-4, "V13 beta 1.5555e-3 W/(K cm2)");
	struct capacitor_config cc = cap(2000, 105);
	cc.self_heating = SELF_HEATING_POWER;
	cc.current_a = 1;
	cc.esr_ohm = 0.1;
	cc.rth_k_per_w = 1 / (beta * area);
	struct lifetime_params p = params(&cc);
	is_near(p.rise_k, 9.095, 1e-3, "V13 case rise 9.095 K");
	is_near(lifetime_life_at(&p, 65), 32000 / pow(2, 0.9095), 1e-3,
		"V13 rise shifts the temperature");
	cc.self_heating = SELF_HEATING_RISE;
	cc.rise_k = 3.2;
	p = params(&cc);
	is_near(lifetime_life_at(&p, 61.8), 32000, 1e-12, "fixed 3.2 K rise on 61.8 °C ambient");
}

/*
 * The worked examples, each within 1 %. Sources:
 * - the relative-life table (life x1/x2/x4/x8 for 0/10/20/30 K cooler): the 10 K rule, Chemi-Con
 *   FAQ "Lifetime of Aluminum Electrolytic Capacitors" eq. (8) with B_t = 2;
 * - COSEL FAQ "Electrolytic Capacitor Lifetime at Varying Ambient Temperatures"
 *   (https://www.cosel.com/en/coselplus/technical/100): 1000 h @105 °C, 8 h each at 45/55/65 °C,
 *   "Ta (57.2 °C) is higher than the average ambient temperature of 55 °C";
 * - Nichicon's estimated-life calculator (https://www.nichicon.co.jp/english/products/lifetime/
 *   snap_in.html: inputs Lo, To, Tn, In, Im) on the formula of Nichicon's 2014 life-formula
 *   letter, Ln = Lo 2^((To - Tn)/10) K^((dto - dtn)/10), dtn = dto (In / Im)^2, K = 2 at or
 *   below the rated ripple: 5000 h @105 °C at 65 °C, 1.5 A of a 2.0 A rating, dto = 5 K ->
 *   93,103 h (derived);
 * - Cornell Dubilier's life calculators (https://www.cde.com/Snapplet/, the Aluminum
 *   Electrolytic Capacitor Application Guide, "Reliability and Lifetime"): life keyed to the
 *   core, L = Lb 2^((Tm - Tc)/10), Tc = Ta + I^2 ESR theta: a 3000 h part with a 95 °C core
 *   rating at 55 °C ambient, 2 A ripple through 0.1 ohm and 12.5 K/W -> Tc = 60 °C,
 *   33,941 h (derived);
 * - the voltage term as Jianghai states it (Albertsen, K_V = (U/U_R)^-2.5; V7 of the shared
 *   notes): 2000 h @105 °C at 65 °C, U/U_R = 0.8 -> 55,901.7 h.
 */
static void test_worked_examples(void) {
	struct capacitor_config cc = cap(2000, 105);
	struct lifetime_params p = params(&cc);
	struct lifetime_acc acc;
	struct lifetime_result r;
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 65, 1);
	lifetime_summarize(&p, &acc, 0, &r);
	const double table[] = {1, 2, 4, 8};
	for (int k = 0; k < LIFETIME_N_RELATIVE; k++) {
		char what[64];
		snprintf(what, sizeof(what), "relative life %g K cooler: x%g", 10.0 * k, table[k]);
		is_near(r.relative[k].factor, table[k], 0.01, what);
	}

	cc = cap(1000, 105);
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 45, 8);
	lifetime_acc_add(&acc, &p, 55, 8);
	lifetime_acc_add(&acc, &p, 65, 8);
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.equivalent_temp_c, 57.2, 0.01, "COSEL mixed conditions: 57.2 °C");

	cc = cap(5000, 105);
	cc.self_heating = SELF_HEATING_RIPPLE;
	cc.current_a = 1.5;
	cc.rated_ripple_a = 2.0;
	cc.rated_rise_k = 5;
	p = params(&cc);
	double nichicon = 5000 * pow(2, 4) * pow(2, (5 - 5 * 0.75 * 0.75) / 10);
	is_near(nichicon, 93103, 0.01, "Nichicon: the calculator's formula gives 93,103 h");
	is_near(lifetime_life_at(&p, 65), nichicon, 0.01, "Nichicon calculator example");

	cc = cap(3000, 95);
	cc.self_heating = SELF_HEATING_POWER;
	cc.current_a = 2;
	cc.esr_ohm = 0.1;
	cc.rth_k_per_w = 12.5;
	p = params(&cc);
	is_near(p.rise_k, 5, 1e-12, "CDE: core rise I^2 ESR theta = 5 K");
	is_near(lifetime_life_at(&p, 55), 33941, 0.01, "CDE life-calculator example with ripple");

	cc = cap(2000, 105);
	cc.voltage = (struct capacitor_voltage){0.8 * 35, 35, 2.5};
	p = params(&cc);
	is_near(p.voltage_factor, 1.746928, 1e-6, "K_V = 0.8^-2.5");
	is_near(lifetime_life_at(&p, 65), 55901.7, 0.01, "Jianghai V7 with the voltage term");
}

static void test_arrhenius(void) {
	struct capacitor_config cc = cap(2000, 105);
	cc.model = LIFETIME_MODEL_ARRHENIUS;
	// "E_a ~ 0.832 eV": the value that makes B_t = 2 exact between 95 and 105 °C
	cc.ea_ev = 8.617333262e-5 * log(2) / (1 / 368.15 - 1 / 378.15);
	is_near(cc.ea_ev, 0.832, 1e-3, "derived E_a is 0.832 eV");
	struct lifetime_params p = params(&cc);
	is_near(lifetime_life_at(&p, 40), 399382, 2e-6, "Arrhenius 0.832 eV at 40 °C: 399,382 h");
	is_near(life(2000, 105, 40), 181019, 2e-6, "2x rule at 40 °C: 181,019 h");
	is_near(lifetime_life_at(&p, 95) / 2000, 2.0, 1e-14, "0.832 eV doubles life 105 -> 95 °C");
	is_near(lifetime_life_at(&p, 40) / lifetime_life_at(&p, 50), 2.59, 5e-3,
		"per-10 K factor 2.59 at 40-50 °C");
	is_near(lifetime_life_at(&p, 115) / lifetime_life_at(&p, 125), 1.87, 2e-3,
		"per-10 K factor 1.87 at 115-125 °C");
	// the inverse and the Boltzmann constant as specified
	double t = lifetime_temp_for_life(&p, lifetime_life_at(&p, 57.3));
	is_near(t, 57.3, 1e-12, "Arrhenius inverse round trip");
	double k = 8.617333262e-5;
	double want = 2000 * exp(p.ea_ev / k * (1 / (70 + 273.15) - 1 / (105 + 273.15)));
	is_near(lifetime_life_at(&p, 70), want, 1e-15, "Arrhenius with k = 8.617333262e-5 eV/K");
}

static void add_profile(struct lifetime_acc *acc, const struct lifetime_params *p, const double *t,
			const double *h, int n) {
	for (int i = 0; i < n; i++) {
		lifetime_acc_add(acc, p, t[i], h[i]);
	}
}

static void test_miner(void) {
	// COSEL FAQ: 1000 h @105 °C, 8 h each at 45/55/65 °C -> Ta = 57.2 °C
	struct capacitor_config cc = cap(1000, 105);
	struct lifetime_params p = params(&cc);
	struct lifetime_acc acc;
	lifetime_acc_init(&acc);
	add_profile(&acc, &p, (double[]){45, 55, 65}, (double[]){8, 8, 8}, 3);
	struct lifetime_result r;
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.life_uncapped_h, 24 / (8.0 / 64000 + 8.0 / 32000 + 8.0 / 16000), 1e-14,
		"COSEL effective life");
	is_near(r.equivalent_temp_c, 57.2, 1e-3, "COSEL equivalent temperature 57.2 °C");
	is_near(r.mean_temp_c, 55, 1e-15, "COSEL mean 55 °C");
	is_near(r.life_at_mean_temp_h, 32000, 1e-15, "life at the mean temperature beside it");
	ok(r.life_at_mean_temp_h > r.life_uncapped_h, "the mean temperature overstates life");
	is_near(r.rate_per_h, 1 / r.life_uncapped_h, 1e-15, "rate is 1 / L_eff");

	// Two-level closed form: p at T1, 1 - p at T2
	double frac = 0.3, t1 = 85, t2 = 55;
	lifetime_acc_init(&acc);
	add_profile(&acc, &p, (double[]){t1, t2}, (double[]){frac * 100, (1 - frac) * 100}, 2);
	lifetime_summarize(&p, &acc, 0, &r);
	double l1 = life(1000, 105, t1), l2 = life(1000, 105, t2);
	is_near(r.life_uncapped_h, 1 / (frac / l1 + (1 - frac) / l2), 1e-14, "two-level L_eff");
	is_near(r.life_at_mean_temp_h, life(1000, 105, frac * t1 + (1 - frac) * t2), 1e-14,
		"two-level life at the mean");
	is_near(lifetime_life_at(&p, r.equivalent_temp_c), r.life_uncapped_h, 1e-12,
		"life at T_eq is L_eff");

	// V19: one year of 1-minute samples at 65 °C, then the remaining life at 45 °C
	struct capacitor_config c2 = cap(2000, 105);
	struct lifetime_params p2 = params(&c2);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p2, 65, 1.0 / 60);
	is_near(lifetime_sum_value(&acc.damage), 5.2083e-7, 1e-4, "V19 damage per sample");
	for (int i = 1; i < 8760 * 60; i++) {
		lifetime_acc_add(&acc, &p2, 65, 1.0 / 60);
	}
	is_near(lifetime_sum_value(&acc.damage), 0.27375, 1e-13, "V19 D after 8760 h = 0.27375");
	is_near(lifetime_sum_value(&acc.observed_h), 8760, 1e-14, "V19 observed 8760 h");
	double remaining = (1 - lifetime_sum_value(&acc.damage)) * lifetime_life_at(&p2, 45);
	is_near(remaining, 92960, 1e-12, "V19 remaining at 45 °C = 92,960 h");
	lifetime_summarize(&p2, &acc, 0, &r);
	is_near(r.remaining_h, (1 - 0.27375) * 32000, 1e-12, "V19 remaining at the long-run rate");
	ok(!r.capped, "V19 not capped");

	// Compensated summation: 525,600 terms of 1/60 h sum to 8760 within one rounding
	struct lifetime_sum s = {0};
	double plain = 0;
	for (int i = 0; i < 525600; i++) {
		lifetime_sum_add(&s, 1.0 / 60);
		plain += 1.0 / 60;
	}
	ok(fabs(lifetime_sum_value(&s) - 525600 * (1.0 / 60)) <= 8760 * 2.3e-16,
	   "Neumaier sum exact to the last bit");
	printf("# plain sum error %.3g h, compensated %.3g h\n", plain - 8760,
	       lifetime_sum_value(&s) - 8760);
}

static void test_sine(void) {
	// 1440 one-minute samples of 65 ± 15 °C: L_eff = L(65) / I0(15 ln2 / 10)
	struct capacitor_config cc = cap(2000, 105);
	struct lifetime_params p = params(&cc);
	const double amps[] = {5, 10, 15, 20};
	const double costs[] = {1.03, 1.12, 1.289, 1.54};
	for (int a = 0; a < 4; a++) {
		struct lifetime_acc acc;
		lifetime_acc_init(&acc);
		for (int i = 0; i < 1440; i++) {
			lifetime_acc_add(&acc, &p, 65 + amps[a] * sin(2 * M_PI * i / 1440),
					 1.0 / 60);
		}
		struct lifetime_result r;
		lifetime_summarize(&p, &acc, 0, &r);
		double i0 = bessel_i0(amps[a] * log(2) / 10);
		char what[80];
		snprintf(what, sizeof(what), "daily sine ±%g K: L_eff = L(mean) / I0", amps[a]);
		is_near(r.life_uncapped_h, 32000 / i0, 1e-12, what);
		snprintf(what, sizeof(what), "daily sine ±%g K: mean overstates life %.3gx",
			 amps[a], costs[a]);
		is_near(r.life_at_mean_temp_h / r.life_uncapped_h, costs[a], 5e-3, what);
	}
}

static void test_outputs_and_warnings(void) {
	struct capacitor_config cc = cap(2000, 105);
	struct lifetime_params p = params(&cc);
	struct lifetime_acc acc;
	struct lifetime_result r;

	// life above the 15-year cap: capped, the uncapped figure kept
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 40, 24);
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.life_uncapped_h, 181019, 2e-6, "uncapped life at 40 °C");
	is_near(r.life_h, 131400, 0, "life capped at 15 y = 131,400 h");
	ok(r.capped, "capped flag");
	ok(find_warning(&r, LIFETIME_WARN_LIFE_CAPPED) != NULL, "life_capped warning");
	ok(find_warning(&r, LIFETIME_WARN_BT2_LOW) != NULL, "B_t = 2 below 60 °C note");
	ok(find_warning(&r, LIFETIME_WARN_BELOW_VALIDITY) == NULL, "40 °C is inside the band");
	is_near(r.remaining_h, 131400 - 24, 1e-15, "remaining bounded by the cap minus the age");
	is_near(r.relative[0].factor, 1, 0, "relative 0 K: 1x");
	is_near(r.relative[1].factor, 2, 0, "relative 10 K: 2x");
	is_near(r.relative[2].factor, 4, 0, "relative 20 K: 4x");
	is_near(r.relative[3].factor, 8, 0, "relative 30 K: 8x");
	is_near(r.relative[3].life_h, 8 * r.life_uncapped_h, 0, "relative life at -30 K");

	// calendar cap from in_service; the unobserved service time ages the part too
	cc.in_service = 0;
	cc.has_in_service = true;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 40, 100);
	double life40 = 2000 * pow(2, 6.5);
	int64_t now = (int64_t)130000 * 3600;
	lifetime_summarize(&p, &acc, now, &r);
	is_near(r.remaining_h, 1400, 1e-12, "calendar cap leaves 131,400 - 130,000 h");
	ok(r.capped, "calendar cap sets capped");
	const struct lifetime_warning *w = find_warning(&r, LIFETIME_WARN_CALENDAR_CAP);
	ok(w && strstr(w->message, "seal-ageing"), "calendar_cap warning explains");
	is_near(r.consumed_fraction, 100 / life40, 1e-12, "consumed: the observed damage");
	is_near(r.unobserved_service_h, 129900, 0, "129,900 h in service without samples");
	is_near(r.consumed_extrapolated, 129900 / life40, 1e-12,
		"extrapolated at the observed rate");
	is_near(r.consumed_total, 130000 / life40, 1e-12, "total over the whole service");
	ok(find_warning(&r, LIFETIME_WARN_EXTRAPOLATED) != NULL, "in_service_extrapolated warning");
	is_near(r.remaining_uncapped_h, life40 - 130000, 1e-12, "thermal remaining after it all");
	ok(!r.past_life, "not past its life");

	// in service for longer than the estimated life
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 65, 100);
	lifetime_summarize(&p, &acc, now, &r);
	is_near(r.consumed_fraction, 100.0 / 32000, 1e-15, "observed damage alone is small");
	is_near(r.consumed_total, 130000.0 / 32000, 1e-12, "the whole service: 4.06 lives");
	ok(r.past_life && r.remaining_h == 0, "past its estimated life, nothing remains");
	w = find_warning(&r, LIFETIME_WARN_EXHAUSTED);
	ok(w && strstr(w->message, "past its estimated life"), "life_exhausted says so");

	// above rated, below validity
	cc = cap(2000, 105);
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 110, 1);
	lifetime_acc_add(&acc, &p, 35, 3);
	lifetime_summarize(&p, &acc, 0, &r);
	w = find_warning(&r, LIFETIME_WARN_ABOVE_RATED);
	ok(w && strstr(w->message, "underestimated") && strstr(w->message, "1.0 h"),
	   "above_rated warning with time");
	w = find_warning(&r, LIFETIME_WARN_BELOW_VALIDITY);
	ok(w && strstr(w->message, "3.0 h") && strstr(w->message, "40 °C"),
	   "below_validity warning with time and bound");
	is_near(r.above_rated_h, 1, 0, "time above rated");
	is_near(r.below_validity_h, 3, 0, "time below validity");
	is_str(lifetime_warning_name(LIFETIME_WARN_ABOVE_RATED), "above_rated", "code name");

	// configurable validity bound
	cc.validity_low_c = 60;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 50, 1);
	lifetime_summarize(&p, &acc, 0, &r);
	w = find_warning(&r, LIFETIME_WARN_BELOW_VALIDITY);
	ok(w && strstr(w->message, "all the time below 60 °C"), "validity_low_c 60 °C applies");

	// polymer part on the wet rule
	cc = cap(2000, 105);
	cc.type = CAPACITOR_TYPE_POLYMER;
	cc.bt = 2;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 85, 1);
	lifetime_summarize(&p, &acc, 0, &r);
	ok(find_warning(&r, LIFETIME_WARN_POLYMER_WET) != NULL, "polymer on the wet rule warned");
	is_near(lifetime_life_at(&p, 85), 8000, 0, "explicit bt wins over the polymer default");

	// no data
	lifetime_acc_init(&acc);
	lifetime_summarize(&p, &acc, 0, &r);
	ok(isnan(r.life_h) && isnan(r.equivalent_temp_c), "no data: figures NAN");
	ok(find_warning(&r, LIFETIME_WARN_NO_DATA) != NULL, "no_data warning");

	// exhausted
	cc = cap(2000, 105);
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 105, 2500);
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.remaining_h, 0, 0, "no remaining life past D = 1");
	ok(find_warning(&r, LIFETIME_WARN_EXHAUSTED) != NULL, "life_exhausted warning");
}

static void expect_error(struct capacitor_config cc, const char *needle, const char *what) {
	struct lifetime_params p;
	char *err = NULL;
	bool okay = lifetime_params_init(&p, &cc, &err);
	ok(!okay && err && strstr(err, needle), what);
	if (err && !strstr(err, needle)) {
		printf("#   message: %s\n", err);
	}
	free(err);
}

/*
 * An in-service date before 1970 is a date like any other (a 1925 typo for 2025): the part
 * is that old, so the calendar cap applies. Read from a configuration as the daemon reads it.
 */
static void test_in_service_before_1970(void) {
	static const char yaml[] = "capacitors:\n  - name: C1\n    sensor: thermal/test\n"
				   "    rated_life_h: 2000\n    rated_temp_c: 105\n"
				   "    in_service: 1925-06-01\n";
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	bool loaded = config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors);
	ok(loaded && cfg.n_capacitors == 1, "a capacitor in service since 1925 loads");
	free(errors);
	if (!loaded || cfg.n_capacitors != 1) {
		config_finish(&cfg);
		return;
	}
	struct lifetime_params p = params(&cfg.capacitors[0]);
	struct lifetime_acc acc;
	struct lifetime_result r;
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 40, 24);
	int64_t now = 1767225600; // 2026-01-01
	lifetime_summarize(&p, &acc, now, &r);
	is_near(r.service_h, (double)(now - -1407024000) / 3600, 1e-12,
		"in service for 100.6 years (1925-06-01 is -1407024000)");
	ok(r.capped && r.remaining_h == 0, "past the 15-year calendar cap: nothing remains");
	config_finish(&cfg);
}

static void test_errors(void) {
	expect_error(cap(0, 105), "rated life must be a positive", "zero life");
	expect_error(cap(-2000, 105), "rated life must be a positive", "negative life");
	expect_error(cap(NAN, 105), "rated life must be a positive", "NaN life");
	expect_error(cap(2000, 300), "rated_temp_c 300 °C is out of range", "T0 too high");
	expect_error(cap(2000, 20), "out of range", "T0 too low");
	struct capacitor_config cc = cap(2000, 105);
	cc.basis = TEMP_BASIS_CASE;
	cc.self_heating = SELF_HEATING_RISE;
	cc.rise_k = 3;
	expect_error(cc, "count it twice", "self-heating on a case basis");
	expect_error(cc, "a case sensor", "names the case basis");
	cc.basis = TEMP_BASIS_CORE;
	expect_error(cc, "a core sensor", "self-heating on a core basis");
	cc = cap(2000, 105);
	cc.bt = 1;
	expect_error(cc, "bt must be above 1", "bt = 1");
	cc = cap(2000, 105);
	cc.model = LIFETIME_MODEL_ARRHENIUS;
	expect_error(cc, "needs ea_ev", "arrhenius without ea_ev");
	cc.ea_ev = -1;
	expect_error(cc, "ea_ev must be above 0", "negative ea_ev");
	cc = cap(2000, 105);
	cc.ea_ev = 0.8;
	expect_error(cc, "arrhenius only", "ea_ev on the bt model");
	cc = cap(2000, 105);
	cc.life_cap_years = 0;
	expect_error(cc, "life_cap_years", "zero cap");
	cc = cap(2000, 105);
	cc.validity_low_c = 110;
	expect_error(cc, "validity_low_c", "validity bound above rating");
	cc = cap(2000, 105);
	cc.self_heating = SELF_HEATING_POWER;
	cc.current_a = 1;
	cc.esr_ohm = 0;
	cc.rth_k_per_w = 10;
	expect_error(cc, "esr_ohm > 0", "power form without ESR");
	cc.self_heating = SELF_HEATING_RIPPLE;
	cc.rated_ripple_a = 0;
	cc.rated_rise_k = 5;
	expect_error(cc, "rated_ripple_a > 0", "ripple form without rated ripple");
}

/* The sensitivity band, the validity band per side, max_temp_c and the voltage term. */
static void test_band_and_validity(void) {
	struct capacitor_config cc = cap(2000, 105);
	struct lifetime_params p = params(&cc);
	struct lifetime_acc acc;
	struct lifetime_result r;
	is_near(p.uncertainty_k, 2, 0, "uncertainty_k defaults to 2 K");
	is_near(p.voltage_factor, 1, 0, "no voltage term by default");
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 65, 10);
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.band.life_uncapped_h[0], 32000 / pow(2, 0.2), 1e-12,
		"band: the life 2 K hotter is the short end");
	is_near(r.band.life_uncapped_h[1], 32000 * pow(2, 0.2), 1e-12, "and 2 K cooler the long");
	is_near(r.band.remaining_h[0], (1 - 10 / (32000 / pow(2, 0.2))) * 32000 / pow(2, 0.2),
		1e-12, "remaining at the short end");
	ok(r.band.life_h[0] < r.life_h && r.life_h < r.band.life_h[1], "the life inside its band");
	cc.uncertainty_k = 0;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 65, 10);
	lifetime_summarize(&p, &acc, 0, &r);
	ok(r.band.life_h[0] == r.life_h && r.band.life_h[1] == r.life_h, "no uncertainty, no band");

	cc = cap(2000, 105);
	cc.valid_low_c = 60;
	cc.valid_high_c = 95;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 55, 1);
	lifetime_acc_add(&acc, &p, 80, 1);
	lifetime_acc_add(&acc, &p, 100, 1);
	lifetime_summarize(&p, &acc, 0, &r);
	double d55 = 1 / (2000 * pow(2, 5)), d80 = 1 / (2000 * pow(2, 2.5)),
	       d100 = 1 / (2000 * pow(2, 0.5));
	is_near(r.validity.below_h, 1, 0, "an hour below valid_c");
	is_near(r.validity.above_h, 1, 0, "an hour above it");
	is_near(r.validity.below_share, d55 / (d55 + d80 + d100), 1e-12, "its share of D");
	is_near(r.validity.above_share, d100 / (d55 + d80 + d100), 1e-12, "and that one's");
	const struct lifetime_warning *w = find_warning(&r, LIFETIME_WARN_BT2_105);
	ok(w && strstr(w->message, "Chemi-Con's approximation over roughly 60-95 °C") &&
		   strstr(w->message, "rated 105 °C or more may need a corrected coefficient") &&
		   strstr(w->message, "[60, 95]"),
	   "a 105 °C part on B_t = 2 outside its band: the article's sentence");
	w = find_warning(&r, LIFETIME_WARN_ABOVE_VALID);
	ok(w && strstr(w->message, "above 95 °C") && strstr(w->message, "of the consumed life"),
	   "above_validity with its share of the consumed life");
	ok(find_warning(&r, LIFETIME_WARN_ABOVE_RATED) == NULL, "100 °C is not above rated");
	cc.bt = 2.2;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 55, 1);
	lifetime_summarize(&p, &acc, 0, &r);
	ok(find_warning(&r, LIFETIME_WARN_BT2_105) == NULL, "a corrected B_t is not flagged");
	cc = cap(2000, 85);
	cc.valid_low_c = 60;
	cc.valid_high_c = 85;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 55, 1);
	lifetime_summarize(&p, &acc, 0, &r);
	ok(find_warning(&r, LIFETIME_WARN_BT2_105) == NULL, "an 85 °C part is not flagged");

	cc = cap(2000, 105);
	cc.max_temp_c = 100;
	p = params(&cc);
	lifetime_acc_init(&acc);
	lifetime_acc_add(&acc, &p, 102, 1);
	lifetime_summarize(&p, &acc, 0, &r);
	w = find_warning(&r, LIFETIME_WARN_ABOVE_RATED);
	ok(w && strstr(w->message, "above the upper category 100 °C"),
	   "max_temp_c: time above the upper category");
	is_near(r.validity.above_max_h, 1, 0, "counted");

	cc = cap(2000, 105);
	cc.valid_low_c = 60;
	cc.valid_high_c = 95;
	cc.validity_low_c = 50;
	expect_error(cc, "give valid_c or validity_low_c", "valid_c beside validity_low_c");
	cc.validity_low_c = NAN;
	cc.valid_high_c = 55;
	expect_error(cc, "upper bound 55 °C must be above", "valid_c upside down");
	cc = cap(2000, 105);
	cc.voltage = (struct capacitor_voltage){40, 35, 2.5};
	expect_error(cc, "applied_v <= rated_v", "overvoltage refused");
	cc.voltage = (struct capacitor_voltage){20, 35, NAN};
	expect_error(cc, "exponent", "a voltage term without its exponent");
	cc = cap(2000, 105);
	cc.uncertainty_k = -1;
	expect_error(cc, "uncertainty_k", "a negative uncertainty");
}

/* ripple_from: the measured current's rise per sample, and the constant one beside it. */
static void test_ripple_from(void) {
	struct capacitor_config cc = cap(2000, 105);
	cc.self_heating = SELF_HEATING_RIPPLE;
	cc.rated_ripple_a = 2;
	cc.rated_rise_k = 5;
	cc.current_a = 1;
	cc.ripple_from = (struct capacitor_ripple_from){.channel = "hwmon/ina226/curr1",
							.formula = RIPPLE_FORMULA_BUCK_INPUT,
							.v_in = 12,
							.v_out = 5,
							.multiplier = NAN,
							.k = NAN};
	struct lifetime_params p = params(&cc);
	ok(p.ripple_measured && p.rise_k == 0, "measured ripple: no constant rise added");
	double d = 5.0 / 12;
	is_near(lifetime_ripple_current(&p, 3, false), 3 * sqrt(d * (1 - d)), 1e-15,
		"buck input: I_out sqrt(D (1 - D))");
	is_near(lifetime_ripple_current(&p, 15, true), 3 * sqrt(d * (1 - d)), 1e-15,
		"a power channel: I_out = P / v_out");
	double age, rise;
	lifetime_rise_for_current(&p, 1, &age, &rise);
	is_near(rise, 5 * 0.25, 1e-15, "the physical rise at 1 A of 2 A");
	is_near(age, 5 * (0.25 - 1), 1e-15, "the aging rise relative to the rated one");
	is_near(p.const_rise_k, age, 0, "the constant current's rise for the comparison");
	cc.ripple_from.formula = RIPPLE_FORMULA_PROPORTIONAL;
	cc.ripple_from.k = 0.4;
	cc.ripple_from.multiplier = 0.8;
	p = params(&cc);
	is_near(lifetime_ripple_current(&p, 2, false), 0.4 * 2 / 0.8, 1e-15,
		"proportional, folded by the frequency multiplier");
	cc.current_a = NAN;
	p = params(&cc);
	ok(isnan(p.const_rise_k), "no current_a: no constant comparison");
	cc.self_heating = SELF_HEATING_RISE;
	cc.rise_k = 3;
	expect_error(cc, "ripple_from needs self_heating in the power form",
		     "ripple_from on the rise form");
	cc.self_heating = SELF_HEATING_RIPPLE;
	cc.ripple_from.formula = RIPPLE_FORMULA_BUCK_INPUT;
	cc.ripple_from.v_in = 5;
	cc.ripple_from.v_out = 12;
	expect_error(cc, "0 < v_out < v_in", "a buck that boosts");
}

static void expect_profile_error(const char *text, const char *needle) {
	struct lifetime_point *pts;
	size_t n;
	char *err = NULL;
	bool okay = lifetime_profile_parse(text, &pts, &n, &err);
	char what[96];
	snprintf(what, sizeof(what), "profile '%s' rejected: %s", text, needle);
	ok(!okay && pts == NULL && n == 0 && err && strstr(err, needle), what);
	if (err && !strstr(err, needle)) {
		printf("#   message: %s\n", err);
	}
	free(err);
}

static void test_profiles(void) {
	struct lifetime_point *pts;
	size_t n;
	char *err = NULL;
	ok(lifetime_profile_parse("45:8,55:8,65:8.5,-10:1", &pts, &n, &err), "profile parses");
	is_int(n, 4, "four elements");
	is_near(pts[2].temp_c, 65, 0, "third temperature");
	is_near(pts[2].dt_h, 8.5, 0, "third hours");
	is_near(pts[3].temp_c, -10, 0, "negative temperature");
	free(pts);
	expect_profile_error("", "empty profile");
	expect_profile_error("65", "element 1 '65': expected TEMP:HOURS");
	expect_profile_error("65:8;55:4", "element 1 '65:8;55:4'");
	expect_profile_error("65:8,abc:1", "element 2 'abc:1'");
	expect_profile_error("65:8,", "ends with ','");
	expect_profile_error("65:0", "hours must be positive");
	expect_profile_error("65:-2", "hours must be positive");
	expect_profile_error("-300:1", "out of range");
	expect_profile_error("65:8,,55:1", "element 2");
}

static void test_percentile(void) {
	struct lifetime_point pts[100];
	for (int i = 0; i < 100; i++) {
		pts[i] = (struct lifetime_point){99 - i, 1.0 / 60}; // reversed: sorting is needed
	}
	is_near(lifetime_percentile(pts, 100, 95), 94, 0, "p95 of 0..99 is the 95th value");
	is_near(lifetime_percentile(pts, 100, 50), 49, 0, "p50 nearest rank");
	is_near(lifetime_percentile(pts, 100, 100), 99, 0, "p100 is the max");
	struct lifetime_point w[] = {{50, 9}, {80, 1}};
	is_near(lifetime_percentile(w, 2, 95), 80, 0, "time-weighted: 10 % of time at 80 °C");
	is_near(lifetime_percentile(w, 2, 90), 50, 0, "90 % of time at or below 50 °C");
	ok(isnan(lifetime_percentile(w, 0, 95)), "empty is NAN");
}

static void test_persistence(void) {
	struct capacitor_config cc = cap(2000, 105);
	struct lifetime_params p = params(&cc);
	struct lifetime_acc a, b;
	lifetime_acc_init(&a);
	for (int i = 0; i < 1000; i++) {
		lifetime_acc_add(&a, &p, 30 + 0.037 * i, 1.0 / 60);
	}
	struct buf text;
	buf_init(&text);
	lifetime_acc_format(&a, &text);
	ok(lifetime_acc_parse(&b, text.data), "state parses");
	ok(memcmp(&a, &b, sizeof(a)) == 0, "state restored bit for bit");
	// continuing after a restore gives the same bits as never stopping
	lifetime_acc_add(&a, &p, 77.7, 1.0 / 60);
	lifetime_acc_add(&b, &p, 77.7, 1.0 / 60);
	ok(memcmp(&a, &b, sizeof(a)) == 0, "resumed accumulation identical");
	struct lifetime_acc empty, e2;
	lifetime_acc_init(&empty);
	buf_clear(&text);
	lifetime_acc_format(&empty, &text);
	ok(lifetime_acc_parse(&e2, text.data) && isnan(e2.min_c) && e2.samples == 0,
	   "empty state round trip");
	ok(!lifetime_acc_parse(&e2, "v2 n=3 d=1,2"), "truncated state rejected");
	ok(!lifetime_acc_parse(&e2, "v1 n=3 d=1,2 obs=1,0"),
	   "the old version is rejected (recomputed)");
	ok(!lifetime_acc_parse(&e2, ""), "empty text rejected");
	buf_finish(&text);
}

static void test_spacing(void) {
	struct lifetime_spacing sp;
	lifetime_spacing_init(&sp);
	int64_t gap;
	is_int(lifetime_spacing_next(&sp, 1000, 60, &gap), 60,
	       "first sample: the configured interval");
	is_int(lifetime_spacing_next(&sp, 1300, 60, &gap), 300,
	       "the first spacing sets the cadence");
	is_int(gap, 0, "no gap");
	is_int(lifetime_spacing_next(&sp, 1601, 60, &gap), 301, "jitter is kept");
	is_int(lifetime_spacing_next(&sp, 2050, 60, &gap), 449, "under 1.5 spacings: observed");
	is_int(lifetime_spacing_next(&sp, 2350, 60, &gap), 300, "back to the cadence");
	is_int(lifetime_spacing_next(&sp, 9550, 60, &gap), 300,
	       "a gap counts the previous interval");
	is_int(gap, 6900, "the rest of the gap is unobserved");
	is_int(lifetime_spacing_next(&sp, 9850, 60, &gap), 300, "after a gap the cadence resumes");
	is_int(gap, 0, "and is no gap");
	is_int(lifetime_spacing_next(&sp, 9855, 60, &gap), 5,
	       "a faster cadence is followed at once");
	is_int(lifetime_spacing_next(&sp, 9915, 60, &gap), 5, "a slower one is first a gap");
	is_int(gap, 55, "of the excess");
	is_int(lifetime_spacing_next(&sp, 9975, 60, &gap), 60, "then followed");
}

/* Jensen: for random profiles L_eff <= L(mean) and T_eq >= mean. Prints the seed. */
static void test_random_profiles(unsigned seed) {
	printf("# seed %u (rerun with -s %u)\n", seed, seed);
	srand(seed);
	struct capacitor_config cc = cap(5000, 105);
	struct lifetime_params p = params(&cc);
	bool jensen = true, inverse = true;
	for (int k = 0; k < 200; k++) {
		struct lifetime_acc acc;
		lifetime_acc_init(&acc);
		int n = 1 + rand() % 50;
		for (int i = 0; i < n; i++) {
			lifetime_acc_add(&acc, &p, 20 + 90.0 * rand() / RAND_MAX,
					 0.01 + 10.0 * rand() / RAND_MAX);
		}
		struct lifetime_result r;
		lifetime_summarize(&p, &acc, 0, &r);
		jensen &= r.life_uncapped_h <= r.life_at_mean_temp_h * (1 + 1e-12) &&
			  r.equivalent_temp_c >= r.mean_temp_c - 1e-9;
		inverse &= fabs(lifetime_life_at(&p, r.equivalent_temp_c) / r.life_uncapped_h - 1) <
			   1e-12;
	}
	ok(jensen, "random profiles: mean temperature never understates the damage");
	ok(inverse, "random profiles: life at T_eq equals L_eff");
}

int main(int argc, char **argv) {
	unsigned seed = 20260820;
	int opt;
	while ((opt = getopt(argc, argv, "s:")) != -1) {
		if (opt == 's') {
			seed = (unsigned)strtoul(optarg, NULL, 10);
		}
	}
	test_published_vectors();
	test_worked_examples();
	test_band_and_validity();
	test_ripple_from();
	test_ripple_vectors();
	test_arrhenius();
	test_miner();
	test_sine();
	test_outputs_and_warnings();
	test_in_service_before_1970();
	test_errors();
	test_profiles();
	test_percentile();
	test_persistence();
	test_spacing();
	test_random_profiles(seed);
	return test_done();
}
