/*
 * The capacitor review's checks (capcheck.c): vent clearance by case diameter, steady state on
 * an analytic step response, the weighted correlation, the self-heating check and the basis a
 * part with several sensors ages at.
 */
#include "capcheck.h"

#include <stdlib.h>
#include <string.h>

#include "config.h" // config_capacitor_init(): a capacitors: entry's defaults
#include "lifetime-fixture.h"
#include "test.h"

static struct capacitor_config cap(void) {
	struct capacitor_config c;
	config_capacitor_init(&c);
	c.name = "C1";
	c.sensor = "ambient";
	c.rated_life_h = 2000;
	c.rated_temp_c = 105;
	return c;
}

static void vent(double d, double c, enum capcheck_vent_verdict want, double req,
		 const char *what) {
	struct capcheck_vent v;
	capcheck_vent_check(d, c, &v);
	char buf[200];
	snprintf(buf, sizeof(buf), "vent: %s (%g mm can, %g mm) -> %s", what, d, c,
		 capcheck_vent_verdict_name(want));
	ok(v.verdict == want && (isnan(req) ? isnan(v.required_mm) : v.required_mm == req), buf);
	if (v.verdict != want) {
		printf("#   got %s: %s\n", capcheck_vent_verdict_name(v.verdict), v.rule);
	}
}

static void test_vent(void) {
	// Each class at and just below its limit (Chemi-Con: 8-16 mm: 2 mm, 18-35: 3, 40+: 5).
	vent(8, 2, CAPCHECK_VENT_PASS, 2, "8-16 mm class at its limit");
	vent(8, 1.99, CAPCHECK_VENT_FAIL, 2, "8-16 mm class just below");
	vent(16, 2, CAPCHECK_VENT_PASS, 2, "16 mm is in the 8-16 mm class");
	vent(16, 1.99, CAPCHECK_VENT_FAIL, 2, "16 mm just below");
	vent(18, 3, CAPCHECK_VENT_PASS, 3, "18-35 mm class at its limit");
	vent(18, 2.99, CAPCHECK_VENT_FAIL, 3, "18-35 mm class just below");
	vent(35, 3, CAPCHECK_VENT_PASS, 3, "35 mm is in the 18-35 mm class");
	vent(35, 2.99, CAPCHECK_VENT_FAIL, 3, "35 mm just below");
	vent(40, 5, CAPCHECK_VENT_PASS, 5, "40 mm class at its limit");
	vent(40, 4.99, CAPCHECK_VENT_FAIL, 5, "40 mm class just below");
	vent(76, 5, CAPCHECK_VENT_PASS, 5, "a 76 mm screw-terminal can");
	// Between classes the larger class's clearance; under 8 mm the smallest class's.
	vent(17, 3, CAPCHECK_VENT_PASS, 3, "17 mm takes the 18-35 mm class's 3 mm");
	vent(17, 2.5, CAPCHECK_VENT_FAIL, 3, "17 mm with 2.5 mm");
	vent(36, 5, CAPCHECK_VENT_PASS, 5, "36 mm takes the 40 mm class's 5 mm");
	vent(39, 4, CAPCHECK_VENT_FAIL, 5, "39 mm with 4 mm");
	vent(6.3, 2, CAPCHECK_VENT_PASS, 2, "6.3 mm takes the smallest class's 2 mm");
	vent(5, 1.5, CAPCHECK_VENT_FAIL, 2, "5 mm with 1.5 mm");
	vent(NAN, 3, CAPCHECK_VENT_NOT_RECORDED, NAN, "a missing diameter");
	vent(10, NAN, CAPCHECK_VENT_NO_CLEARANCE, 2, "a diameter without a clearance");
	struct capcheck_vent v;
	capcheck_vent_check(NAN, NAN, &v);
	is_str(capcheck_vent_verdict_name(v.verdict), "not recorded",
	       "a missing diameter says not recorded");
	capcheck_vent_check(17, 3, &v);
	ok(strstr(v.rule, "between the 8-16 mm and 18-35 mm classes") != NULL,
	   "the rule names the in-between case");
}

/*
 * A step response with a 20-minute time constant: 20 K step at t0 after two hours at 40 °C,
 * sampled every minute. The analytic calm condition over the 10-minute window:
 * before the window reaches back past t0, T(t) - T(t - W) = dT (1 - e^-(t-t0)/tau); after,
 * dT e^-(t-t0)/tau (e^(W/tau) - 1). Calm while that is at most 1 K.
 */
static void test_steady_step(void) {
	const double tau = 1200, step = 20, base = 40, rate_k = 1, soak = 1800;
	const int64_t t0 = 7200, dt = 60, end = t0 + 4 * 3600, w = CAPCHECK_STEADY_WINDOW_S;
	struct capcheck_steady st;
	capcheck_steady_init(&st, rate_k, soak);
	double total_h = 0;
	for (int64_t t = 0; t <= end; t += dt) {
		double temp = t < t0 ? base : base + step * (1 - exp(-(double)(t - t0) / tau));
		double d = 1e-6 * exp2((temp - 105) / 10) * 60;
		capcheck_steady_add(&st, t, temp, dt / 3600.0, d, false);
		total_h += dt / 3600.0;
	}
	capcheck_steady_end(&st);
	// Analytic: the first sample after t0 that moves more than 1 K in its window...
	int64_t leave = -1;
	for (int64_t t = t0 + dt; t <= end && leave < 0; t += dt) {
		double rise = t - t0 <= w
				      ? step * (1 - exp(-(double)(t - t0) / tau))
				      : step * exp(-(double)(t - t0) / tau) * (exp(w / tau) - 1);
		if (rise > rate_k) {
			leave = t;
		}
	}
	// ...and the first calm one after it: t - t0 >= tau ln(dT (e^(W/tau) - 1) / 1 K).
	double t_calm = t0 + tau * log(step * (exp(w / tau) - 1) / rate_k);
	int64_t back = (int64_t)ceil(t_calm / dt) * dt;
	is_int(st.n_periods, 2, "two steady periods: before the step and after it settles");
	is_int(st.periods[0].from, w, "the first is steady from the first full window");
	ok(llabs(st.periods[0].to - (leave - dt)) <= dt,
	   "the first period ends at the last calm sample before the step (to one sample)");
	ok(llabs(st.periods[1].from - back) <= dt,
	   "the second begins where the analytic rate falls below 1 K per 10 min (one sample)");
	if (llabs(st.periods[1].from - back) > dt) {
		printf("#   want %lld got %lld\n", (long long)back, (long long)st.periods[1].from);
	}
	is_int(st.periods[1].to, end, "and lasts to the window's end");
	is_int(st.n_transients, 2, "two transients: the window's start and the step");
	ok(st.transients[0].from_window_start && st.transients[0].reached,
	   "the first began with the window");
	ok(!st.transients[1].from_window_start && st.transients[1].reached,
	   "the step's transient was seen and settled");
	double want_eq = (double)(back - leave);
	double got_eq = (double)(st.transients[1].to - st.transients[1].from);
	ok(fabs(got_eq - want_eq) <= dt,
	   "time to equilibrium after the step = analytic (one sample)");
	printf("# time to equilibrium %.0f s (analytic %.0f s: tau ln(dT (e^(W/tau)-1)) = %.0f s "
	       "after the step)\n",
	       got_eq, want_eq, t_calm - t0);
	double steady_h = lifetime_sum_value(&st.steady_h),
	       transient_h = lifetime_sum_value(&st.transient_h);
	is_near(steady_h + transient_h, total_h, 1e-12, "steady and transient hours add up");
	double want_steady = ((leave - dt - w) / dt + 1 + (end - back) / dt + 1) * dt / 3600.0;
	ok(fabs(steady_h - want_steady) <= 2.0 * dt / 3600,
	   "steady hours = analytic (one sample each end)");
	capcheck_steady_finish(&st);

	// A soak longer than any calm run: nothing is steady, all of it one transient.
	capcheck_steady_init(&st, rate_k, 6 * 3600);
	for (int64_t t = 0; t <= end; t += dt) {
		double temp = t < t0 ? base : base + step * (1 - exp(-(double)(t - t0) / tau));
		capcheck_steady_add(&st, t, temp, dt / 3600.0, 1, false);
	}
	capcheck_steady_end(&st);
	ok(st.n_periods == 0 && lifetime_sum_value(&st.steady_h) == 0, "no run lasts the soak");
	ok(st.n_transients == 1 && !st.transients[0].reached,
	   "the one transient never reached equilibrium");
	is_near(lifetime_sum_value(&st.transient_d), (double)(end / dt + 1), 1e-12,
		"all of the consumed life from transients");
	capcheck_steady_finish(&st);

	// A gap breaks a run: the window begins again after it.
	capcheck_steady_init(&st, rate_k, soak);
	for (int64_t t = 0; t <= 7200; t += dt) {
		capcheck_steady_add(&st, t, base, dt / 3600.0, 0, false);
	}
	capcheck_steady_add(&st, 7200 + 3600, base, dt / 3600.0, 0, true);
	ok(st.in_transient && st.transient_from_start && st.n_periods == 1,
	   "after a gap the steady period is closed and the change is unseen");
	capcheck_steady_end(&st);
	capcheck_steady_finish(&st);
}

static void test_correlation(void) {
	struct capcheck_corr c = {0};
	// y = 3x + 1 with weights: r = 1; and against an independent series r near 0
	for (int i = 0; i < 100; i++) {
		capcheck_corr_add(&c, i, 3 * i + 1, 1 + i % 3);
	}
	is_near(capcheck_corr_value(&c), 1, 1e-12, "a linear relation: r = 1");
	struct capcheck_corr d = {0};
	for (int i = 0; i < 100; i++) {
		capcheck_corr_add(&d, i, -2.0 * i, 1);
	}
	is_near(capcheck_corr_value(&d), -1, 1e-12, "a falling one: r = -1");
	struct capcheck_corr e = {0};
	for (int i = 0; i < 10; i++) {
		capcheck_corr_add(&e, 5, i, 1);
	}
	ok(isnan(capcheck_corr_value(&e)), "a constant series has no r");
	// against numpy's weighted formula on a small case
	double x[] = {1, 2, 4, 7}, y[] = {2, 1, 5, 4}, wt[] = {1, 2, 1, 3};
	struct capcheck_corr f = {0};
	double sw = 0, mx = 0, my = 0;
	for (int i = 0; i < 4; i++) {
		capcheck_corr_add(&f, x[i], y[i], wt[i]);
		sw += wt[i];
		mx += wt[i] * x[i];
		my += wt[i] * y[i];
	}
	mx /= sw;
	my /= sw;
	double sxx = 0, syy = 0, sxy = 0;
	for (int i = 0; i < 4; i++) {
		sxx += wt[i] * (x[i] - mx) * (x[i] - mx);
		syy += wt[i] * (y[i] - my) * (y[i] - my);
		sxy += wt[i] * (x[i] - mx) * (y[i] - my);
	}
	is_near(capcheck_corr_value(&f), sxy / sqrt(sxx * syy), 1e-12,
		"the weighted r equals the two-pass formula");
}

/*
 * Three simulated channels over a day at one-minute samples: an ambient with a slow daily swing;
 * a case = ambient + 8 K x the load (the load switching 0 / 1 every 37 minutes); a "mislabelled
 * ambient" that is really the case (the case plus 0.3 K). A part configured with the true
 * ambient and the case, self_heating rise_k 3 K: the measured rise (about 4 K here) is set
 * beside the modelled 3 K within the tolerance; with rise_k 12 K it is a mismatch with both
 * figures. The mislabelled ambient reads above the case and follows the load: flagged.
 */
static void test_rise_check(void) {
	struct capacitor_config cc = cap();
	cc.sensors_map = true;
	cc.sensors[TEMP_BASIS_AMBIENT] = "ambient";
	cc.sensors[TEMP_BASIS_CASE] = "case";
	cc.self_heating = SELF_HEATING_RISE;
	cc.rise_k = 12;
	struct lifetime_params p = params(&cc);
	ok(p.basis == TEMP_BASIS_CASE, "ambient and case measured: the part ages at the case");
	is_near(p.rise_k, 0, 0, "the self-heating is not added to the case");
	is_near(p.modelled_rise_k, 12, 0, "the modelled rise is kept for the check");
	ok(strstr(lifetime_basis_reason(&p), "nothing is added") != NULL,
	   "the reason says nothing is added");
	struct capcheck_rise good, bad;
	capcheck_rise_init(&good);
	capcheck_rise_init(&bad);
	struct lifetime_acc acc;
	lifetime_acc_init(&acc);
	struct lifetime_sum hand = {0};
	double sum_rise = 0;
	int n = 1440;
	for (int i = 0; i < n; i++) {
		double amb = 45 + 5 * sin(2 * M_PI * i / 1440);
		double load = (i / 37) % 2;
		double cas = amb + 8 * load;
		double mislabelled = cas + 0.3;
		capcheck_rise_add(&good, amb, cas, p.modelled_rise_k, 1.0 / 60);
		capcheck_rise_add_load(&good, amb, cas, load, true, 1.0 / 60);
		capcheck_rise_add(&bad, mislabelled, cas, p.modelled_rise_k, 1.0 / 60);
		capcheck_rise_add_load(&bad, mislabelled, cas, load, true, 1.0 / 60);
		lifetime_acc_add_rise(&acc, &p, cas, p.rise_k, 1.0 / 60, 1);
		// by hand: the case temperature, nothing added
		lifetime_sum_add(&hand, (1.0 / 60) / (2000 * pow(2, (105 - cas) / 10)));
		sum_rise += cas - amb;
	}
	struct lifetime_result r;
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.consumed_fraction, lifetime_sum_value(&hand), 1e-13,
		"D at the case temperature, self-heating not added twice (by hand)");
	struct capcheck_rise_result o;
	capcheck_rise_summarize(&p, &good, 8, "ambient", &o, &r);
	is_near(o.measured_mean_k, sum_rise / n, 1e-12, "measured rise: the time-weighted mean");
	is_near(o.modelled_mean_k, 12, 0, "modelled rise beside it");
	is_near(o.tolerance_k, 6, 1e-12, "tolerance: the larger of 3 K and 50 % of 12 K");
	ok(o.mismatch, "a 12 K model against a ~4 K measurement is a mismatch");
	const struct lifetime_warning *w = find_warning(&r, LIFETIME_WARN_RISE_MISMATCH);
	char want[64];
	snprintf(want, sizeof(want), "averages %.2f K", sum_rise / n);
	ok(w && strstr(w->message, want) && strstr(w->message, "modelled one 12.00 K") &&
		   strstr(w->message, "p95 8.00 K"),
	   "the warning gives both figures (and the p95)");
	ok(!o.looks_like_case, "the true ambient is not flagged");
	ok(o.ambient_load_r < CAPCHECK_LOAD_CORRELATION && o.case_load_r > 0.7,
	   "the case follows the load, the ambient does not");

	struct lifetime_result r2 = {0};
	capcheck_rise_summarize(&p, &bad, 0, "mislabelled", &o, &r2);
	ok(o.looks_like_case, "the mislabelled ambient is flagged");
	w = find_warning(&r2, LIFETIME_WARN_AMBIENT_IS_CASE);
	ok(w && strstr(w->message, "this ambient sensor looks like a case measurement") &&
		   strstr(w->message, "mislabelled") &&
		   strstr(w->message, "reads above the case") &&
		   strstr(w->message, "follows the part's own load"),
	   "with both reasons");

	// The same model within the tolerance: no warning.
	cc.rise_k = 3;
	p = params(&cc);
	struct lifetime_result r3 = {0};
	capcheck_rise_summarize(&p, &good, 8, "ambient", &o, &r3);
	ok(!o.mismatch && find_warning(&r3, LIFETIME_WARN_RISE_MISMATCH) == NULL,
	   "3 K modelled against ~4 K measured: within 3 K");
	if (o.mismatch) {
		printf("#   measured %g modelled %g tolerance %g\n", o.measured_mean_k,
		       o.modelled_mean_k, o.tolerance_k);
	}
}

/* The best-founded temperature: core, else case, else ambient + the modelled rise. */
static void test_basis(void) {
	struct capacitor_config cc = cap();
	cc.self_heating = SELF_HEATING_RISE;
	cc.rise_k = 4;
	struct lifetime_params p = params(&cc);
	ok(p.basis == TEMP_BASIS_AMBIENT && p.rise_k == 4, "ambient alone: the rise is added");
	cc.sensors_map = true;
	cc.sensors[TEMP_BASIS_AMBIENT] = "a";
	cc.sensors[TEMP_BASIS_CORE] = "k";
	p = params(&cc);
	ok(p.basis == TEMP_BASIS_CORE && p.rise_k == 0, "core measured: core, nothing added");
	cc.sensors[TEMP_BASIS_AMBIENT] = NULL;
	cc.sensors[TEMP_BASIS_CASE] = "c";
	p = params(&cc);
	ok(p.basis == TEMP_BASIS_CORE, "core beats case");
	// the single form keeps refusing self-heating on a case sensor
	struct capacitor_config single = cap();
	single.basis = TEMP_BASIS_CASE;
	single.self_heating = SELF_HEATING_RISE;
	single.rise_k = 3;
	struct lifetime_params q;
	char *err = NULL;
	ok(!lifetime_params_init(&q, &single, &err) && err && strstr(err, "count it twice"),
	   "the single sensor + basis: case form still refuses self_heating");
	free(err);
}

int main(void) {
	test_vent();
	test_steady_step();
	test_correlation();
	test_rise_check();
	test_basis();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
