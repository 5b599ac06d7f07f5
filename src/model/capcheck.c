/*
 * The capacitor review's checks against the measurements (capcheck.h): the self-heating and
 * the ambient sensor, steady state (Chemi-Con: "evaluate conditions only after temperatures
 * have fully stabilized"), and the vent clearance by case diameter.
 */
#include "capcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void capcheck_corr_add(struct capcheck_corr *c, double x, double y, double w) {
	if (!isfinite(x) || !isfinite(y) || !(w > 0)) {
		return;
	}
	// West (1979): the weighted means and co-moments one pair at a time, without the
	// cancellation of sum(x^2) - n mean^2 over a year of samples.
	double w1 = c->w + w;
	double dx = x - c->mx, dy = y - c->my;
	c->mx += dx * w / w1;
	c->my += dy * w / w1;
	c->sxx += w * dx * (x - c->mx);
	c->syy += w * dy * (y - c->my);
	c->sxy += w * dx * (y - c->my);
	c->w = w1;
}

double capcheck_corr_value(const struct capcheck_corr *c) {
	if (!(c->w > 0) || !(c->sxx > 0) || !(c->syy > 0)) {
		return NAN;
	}
	return c->sxy / sqrt(c->sxx * c->syy);
}

void capcheck_rise_init(struct capcheck_rise *c) {
	*c = (struct capcheck_rise){0};
}

void capcheck_rise_add(struct capcheck_rise *c, double ambient_c, double case_c, double modelled_k,
		       double dt_h) {
	if (!isfinite(ambient_c) || !isfinite(case_c) || !(dt_h > 0)) {
		return;
	}
	lifetime_sum_add(&c->hours, dt_h);
	lifetime_sum_add(&c->measured_h, (case_c - ambient_c) * dt_h);
	if (isfinite(modelled_k)) {
		lifetime_sum_add(&c->modelled_hours, dt_h);
		lifetime_sum_add(&c->modelled_h, modelled_k * dt_h);
	}
	if (ambient_c > case_c) {
		lifetime_sum_add(&c->ambient_above_h, dt_h);
	}
}

void capcheck_rise_add_load(struct capcheck_rise *c, double ambient_c, double case_c, double load,
			    bool have_case, double dt_h) {
	capcheck_corr_add(&c->ambient_load, ambient_c, load, dt_h);
	if (have_case) {
		capcheck_corr_add(&c->case_load, case_c, load, dt_h);
	}
}

/* Whether the ambient sensor follows the load as a case sensor would. */
static bool follows_load(const struct capcheck_rise_result *o) {
	double a = o->ambient_load_r, c = o->case_load_r;
	return a >= CAPCHECK_LOAD_CORRELATION ||
	       (c >= CAPCHECK_LOAD_CASE_MIN && a >= CAPCHECK_LOAD_LIKE_CASE * c);
}

/* "12 % of the paired time" / "follows the part's load (r = 0.93)": why it looks like a case. */
static void why_case(const struct capcheck_rise_result *o, char *out, size_t len) {
	size_t used = 0;
	out[0] = '\0';
	if (o->hours > 0 && o->ambient_above_h > CAPCHECK_ABOVE_SHARE * o->hours) {
		used += (size_t)snprintf(out, len,
					 "it reads above the case sensor %.0f %% of the paired "
					 "time (the measured rise averages %+.1f K)",
					 100 * o->ambient_above_h / o->hours, o->measured_mean_k);
	}
	if (follows_load(o) && used < len) {
		char cas[48] = "";
		if (isfinite(o->case_load_r)) {
			snprintf(cas, sizeof(cas), ", the case sensor's r = %.2f", o->case_load_r);
		}
		snprintf(out + used, len - used,
			 "%sit follows the part's own load (correlation r = %.2f%s)",
			 used ? "; " : "", o->ambient_load_r, cas);
	}
}

void capcheck_rise_summarize(const struct lifetime_params *p, const struct capcheck_rise *c,
			     double p95_k, const char *ambient, struct capcheck_rise_result *out,
			     struct lifetime_result *r) {
	double h = lifetime_sum_value(&c->hours);
	double mh = lifetime_sum_value(&c->modelled_hours);
	*out = (struct capcheck_rise_result){
		.paired = h > 0,
		.hours = h,
		.measured_mean_k = h > 0 ? lifetime_sum_value(&c->measured_h) / h : NAN,
		.measured_p95_k = h > 0 ? p95_k : NAN,
		.modelled_mean_k = mh > 0 ? lifetime_sum_value(&c->modelled_h) / mh : NAN,
		.tolerance_k = NAN,
		.ambient_above_h = lifetime_sum_value(&c->ambient_above_h),
		.ambient_load_r = capcheck_corr_value(&c->ambient_load),
		.case_load_r = capcheck_corr_value(&c->case_load),
	};
	if (!p->ripple_measured) {
		out->modelled_mean_k = p->modelled_rise_k; // a constant (NAN: none configured)
	}
	if (out->paired && isfinite(out->modelled_mean_k)) {
		double rel = p->rise_tolerance_pct / 100 * fabs(out->modelled_mean_k);
		out->tolerance_k = rel > p->rise_tolerance_k ? rel : p->rise_tolerance_k;
		double diff = out->measured_mean_k - out->modelled_mean_k;
		out->mismatch = fabs(diff) > out->tolerance_k;
		if (out->mismatch) {
			lifetime_warn(
				r, LIFETIME_WARN_RISE_MISMATCH,
				"the measured self-heating (case - ambient) averages %.2f K "
				"(p95 %.2f K) over %.1f h, the modelled one %.2f K: they differ "
				"by %.2f K, beyond the tolerance of %.2f K (%g K or %g %% of "
				"the modelled rise); check self_heating and where the sensors "
				"sit",
				out->measured_mean_k, out->measured_p95_k, h, out->modelled_mean_k,
				fabs(diff), out->tolerance_k, p->rise_tolerance_k,
				p->rise_tolerance_pct);
		}
	}
	out->looks_like_case =
		(h > 0 && out->ambient_above_h > CAPCHECK_ABOVE_SHARE * h) || follows_load(out);
	if (out->looks_like_case) {
		char why[320];
		why_case(out, why, sizeof(why));
		lifetime_warn(
			r, LIFETIME_WARN_AMBIENT_IS_CASE,
			"this ambient sensor looks like a case measurement: %s %s; an ambient "
			"sensor must not see the part's own heating (never label a can's "
			"surface as ambient)",
			ambient ? ambient : "the ambient sensor", why);
	}
}

/* ---- steady state ---- */

void capcheck_steady_init(struct capcheck_steady *st, double rate_k, double soak_s) {
	*st = (struct capcheck_steady){
		.rate_k_per_s = rate_k / CAPCHECK_STEADY_WINDOW_S,
		.soak_s = soak_s,
	};
}

void capcheck_steady_finish(struct capcheck_steady *st) {
	if (!st) {
		return;
	}
	free(st->ts);
	free(st->temp);
	st->ts = NULL;
	st->temp = NULL;
	st->cap = st->n = st->head = 0;
}

/* The ring's i-th oldest sample. */
static size_t ring_at(const struct capcheck_steady *st, size_t i) {
	return (st->head + i) % st->cap;
}

static void ring_push(struct capcheck_steady *st, int64_t ts, double temp) {
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 16;
		int64_t *nts = xcalloc(cap, sizeof(*nts));
		double *nt = xcalloc(cap, sizeof(*nt));
		for (size_t i = 0; i < st->n; i++) {
			nts[i] = st->ts[ring_at(st, i)];
			nt[i] = st->temp[ring_at(st, i)];
		}
		free(st->ts);
		free(st->temp);
		st->ts = nts;
		st->temp = nt;
		st->cap = cap;
		st->head = 0;
	}
	size_t at = ring_at(st, st->n);
	st->ts[at] = ts;
	st->temp[at] = temp;
	st->n++;
}

/* Whether the sample at @ts is calm against the latest one a window before it. */
static bool calm_at(struct capcheck_steady *st, int64_t ts, double temp) {
	for (size_t i = st->n; i-- > 0;) {
		size_t at = ring_at(st, i);
		int64_t span = ts - st->ts[at];
		if (span >= CAPCHECK_STEADY_WINDOW_S) {
			return span <= 2 * CAPCHECK_STEADY_WINDOW_S &&
			       fabs(temp - st->temp[at]) <= st->rate_k_per_s * (double)span;
		}
	}
	return false; // no sample a window back yet
}

/* Keeps the newest sample at least a window before @ts and everything after it. */
static void ring_trim(struct capcheck_steady *st, int64_t ts) {
	while (st->n >= 2 && ts - st->ts[ring_at(st, 1)] >= CAPCHECK_STEADY_WINDOW_S) {
		st->head = (st->head + 1) % st->cap;
		st->n--;
	}
}

static void note_transient(struct capcheck_steady *st, int64_t to, bool reached) {
	st->n_transients_total++;
	if (st->n_transients < CAPCHECK_MAX_LISTED) {
		st->transients[st->n_transients++] = (struct capcheck_transient){
			.from = st->transient_from,
			.to = to,
			.from_window_start = st->transient_from_start,
			.reached = reached,
		};
	}
	st->in_transient = false;
}

static void note_period(struct capcheck_steady *st) {
	st->n_periods_total++;
	if (st->n_periods < CAPCHECK_MAX_LISTED) {
		st->periods[st->n_periods++] = (struct capcheck_period){st->run_from, st->run_last};
	}
}

/* The calm run ends: a steady one is a period; a short one's time was transient after all. */
static void end_run(struct capcheck_steady *st) {
	if (!st->in_run) {
		return;
	}
	if (st->run_steady) {
		note_period(st);
	} else {
		lifetime_sum_add(&st->transient_h, lifetime_sum_value(&st->pending_h));
		lifetime_sum_add(&st->transient_d, lifetime_sum_value(&st->pending_d));
	}
	st->pending_h = st->pending_d = (struct lifetime_sum){0};
	st->in_run = st->run_steady = false;
}

static void calm_sample(struct capcheck_steady *st, int64_t ts, double dt_h, double damage) {
	if (!st->in_run) {
		st->in_run = true;
		st->run_steady = false;
		st->run_from = ts;
	}
	st->run_last = ts;
	if (st->run_steady) {
		lifetime_sum_add(&st->steady_h, dt_h);
		lifetime_sum_add(&st->steady_d, damage);
		return;
	}
	lifetime_sum_add(&st->pending_h, dt_h);
	lifetime_sum_add(&st->pending_d, damage);
	if ((double)(ts - st->run_from) >= st->soak_s) {
		// Held for the soak: steady since the run began, and the transient ended there.
		st->run_steady = true;
		lifetime_sum_add(&st->steady_h, lifetime_sum_value(&st->pending_h));
		lifetime_sum_add(&st->steady_d, lifetime_sum_value(&st->pending_d));
		st->pending_h = st->pending_d = (struct lifetime_sum){0};
		if (st->in_transient) {
			note_transient(st, st->run_from, true);
		}
	}
}

void capcheck_steady_add(struct capcheck_steady *st, int64_t ts, double temp_c, double dt_h,
			 double damage, bool gap) {
	if (!isfinite(temp_c)) {
		return;
	}
	if (st->seen_any && ts <= st->last_ts) {
		return;
	}
	bool unseen_start = !st->seen_any || gap;
	if (gap) {
		st->n = st->head = 0; // no window spans a gap
	}
	bool calm = calm_at(st, ts, temp_c);
	ring_push(st, ts, temp_c);
	ring_trim(st, ts);
	st->seen_any = true;
	st->last_ts = ts;
	if (calm) {
		calm_sample(st, ts, dt_h, damage);
		return;
	}
	end_run(st);
	if (!st->in_transient) {
		st->in_transient = true;
		st->transient_from = ts;
		st->transient_from_start = unseen_start;
	}
	lifetime_sum_add(&st->transient_h, dt_h);
	lifetime_sum_add(&st->transient_d, damage);
}

void capcheck_steady_end(struct capcheck_steady *st) {
	if (!st->seen_any) {
		return;
	}
	end_run(st);
	if (st->in_transient) {
		note_transient(st, st->last_ts, false);
	}
}

/* ---- vent clearance ---- */

const char *capcheck_vent_verdict_name(enum capcheck_vent_verdict v) {
	switch (v) {
	case CAPCHECK_VENT_PASS:
		return "pass";
	case CAPCHECK_VENT_FAIL:
		return "fail";
	case CAPCHECK_VENT_NO_CLEARANCE:
		return "clearance not recorded";
	case CAPCHECK_VENT_NOT_RECORDED:
		break;
	}
	return "not recorded";
}

/*
 * Chemi-Con's vent clearances by case diameter (docs/LIFETIME.md), in order: a diameter below
 * @max_mm (or at most it, @upto) takes that row's clearance, named in the rule as @name says;
 * between two classes the larger class's, under the table the smallest class's.
 */
static const struct vent_class {
	double max_mm;
	bool upto;
	double required_mm;
	const char *name;
} vent_classes[] = {
	{8, false, 2,
	 "under 8 mm, below the table (it starts at 8 mm, some series at 6.3 mm): the smallest "
	 "class's"},
	{16, true, 2, "8-16 mm:"},
	{18, false, 3, "between the 8-16 mm and 18-35 mm classes: the larger class's"},
	{35, true, 3, "18-35 mm:"},
	{40, false, 5, "between the 18-35 mm and 40 mm classes: the larger class's"},
	{INFINITY, false, 5, "40 mm and more:"},
};

void capcheck_vent_check(double diameter_mm, double clearance_mm, struct capcheck_vent *out) {
	*out = (struct capcheck_vent){.verdict = CAPCHECK_VENT_NOT_RECORDED, .required_mm = NAN};
	if (!isfinite(diameter_mm) || !(diameter_mm > 0)) {
		snprintf(out->rule, sizeof(out->rule),
			 "case diameter not recorded (case_diameter_mm): the clearance needed "
			 "depends on it");
		return;
	}
	double d = diameter_mm;
	const struct vent_class *c = vent_classes;
	while (!(c->upto ? d <= c->max_mm : d < c->max_mm)) {
		c++; // the last class takes every finite diameter
	}
	out->required_mm = c->required_mm;
	int n = snprintf(out->rule, sizeof(out->rule),
			 "case diameter %g mm, %s at least %g mm above the vent", d, c->name,
			 out->required_mm);
	if (!isfinite(clearance_mm) || clearance_mm < 0) {
		out->verdict = CAPCHECK_VENT_NO_CLEARANCE;
		return;
	}
	// A clearance is measured to 0.01 mm at best: 1.999999 mm is the 2 mm it was given as.
	out->verdict =
		clearance_mm >= out->required_mm - 1e-9 ? CAPCHECK_VENT_PASS : CAPCHECK_VENT_FAIL;
	if (n > 0 && (size_t)n < sizeof(out->rule)) {
		snprintf(out->rule + n, sizeof(out->rule) - (size_t)n, "; %g mm recorded",
			 clearance_mm);
	}
}
