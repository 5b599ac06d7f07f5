/*
 * The capacitor review's checks against the measurements (pure: no I/O, no clock, no globals):
 * the measured self-heating (case - ambient) beside the modelled one, an ambient sensor that
 * behaves like a case measurement, the periods of steady state and the time to equilibrium
 * after each change, and the vent clearance by case diameter.
 */
#ifndef CAPCHECK_H
#define CAPCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lifetime.h"

/*
 * An ambient sensor that follows the load this closely (Pearson r) looks like a case one; so
 * does one that follows it nearly as closely as the case sensor does (CAPCHECK_LOAD_LIKE_CASE
 * of the case's r, when the case's r is at least CAPCHECK_LOAD_CASE_MIN): a true ambient's
 * daily swing dilutes its r, and the part's own heating is what the case adds to it.
 */
#define CAPCHECK_LOAD_CORRELATION 0.7
#define CAPCHECK_LOAD_LIKE_CASE   0.9
#define CAPCHECK_LOAD_CASE_MIN    0.3
/* An ambient sensor reading above the case one this share of the paired time looks like one. */
#define CAPCHECK_ABOVE_SHARE 0.5
/* Steady state: the rate is taken over this window ("1 K per 10 min"). */
#define CAPCHECK_STEADY_WINDOW_S 600
/* A transient drawing more than this share of the consumed life is flagged. */
#define CAPCHECK_TRANSIENT_SHARE 0.5
/* Periods and transients a steady-state detector lists (the rest are counted). */
#define CAPCHECK_MAX_LISTED 64

/** A time-weighted Pearson correlation, updated one pair at a time (West's weighted update). */
struct capcheck_corr {
	double w, mx, my, sxx, syy, sxy;
};
void capcheck_corr_add(struct capcheck_corr *c, double x, double y, double w);
/** r, or NAN with no pairs or a constant series. */
double capcheck_corr_value(const struct capcheck_corr *c);

/**
 * The self-heating check's sums over the samples where both the ambient and the case were
 * read: the measured rise case - ambient and the modelled one, time-weighted; the time the
 * ambient read above the case; the ambient's and the case's correlation with the load.
 */
struct capcheck_rise {
	struct lifetime_sum hours, measured_h, modelled_hours, modelled_h, ambient_above_h;
	struct capcheck_corr ambient_load, case_load;
};
void capcheck_rise_init(struct capcheck_rise *c);
/** One paired sample of @dt_h hours; @modelled_k NAN when no rise is modelled. */
void capcheck_rise_add(struct capcheck_rise *c, double ambient_c, double case_c, double modelled_k,
		       double dt_h);
/** One sample with the load read (@load any unit): the sensors' correlations with it. */
void capcheck_rise_add_load(struct capcheck_rise *c, double ambient_c, double case_c, double load,
			    bool have_case, double dt_h);

/** What the self-heating check found. Figures NAN when not known. */
struct capcheck_rise_result {
	bool paired;            // ambient and case were both read at some sample
	double hours;           // paired time
	double measured_mean_k; // time-weighted mean of case - ambient
	double measured_p95_k;  // its time-weighted p95 (given by the caller, from its histogram)
	double modelled_mean_k; // time-weighted mean of the modelled rise (NAN: none modelled)
	double tolerance_k;     // the tolerance applied: max(k, pct % of the modelled rise)
	bool mismatch;          // |measured - modelled| beyond the tolerance
	double ambient_above_h; // time the ambient read above the case
	double ambient_load_r;  // NAN without a load channel
	double case_load_r;     // NAN without a load channel or a case sensor
	bool looks_like_case;   // the ambient sensor reads above the case or follows the load
};

/**
 * Derives the check's verdicts from @c and @p95_k (the measured rise's p95) and appends the
 * self_heating_mismatch and ambient_looks_like_case warnings (both figures in each) to @r.
 * @ambient names the ambient sensor in the messages.
 */
void capcheck_rise_summarize(const struct lifetime_params *p, const struct capcheck_rise *c,
			     double p95_k, const char *ambient, struct capcheck_rise_result *out,
			     struct lifetime_result *r);

/** A period of steady state, [from, to] (s since epoch: the first and last steady samples). */
struct capcheck_period {
	int64_t from, to;
};

/**
 * A transient: from its start (the first sample that moved faster than the rate after a
 * steady period, or the window's first sample) to equilibrium (the first sample of the next
 * steady period), or unfinished at the window's end (to = the last sample, reached false).
 */
struct capcheck_transient {
	int64_t from, to;
	bool from_window_start; // began with the window: the change itself was not seen
	bool reached;           // equilibrium reached in the window
};

/**
 * Steady state of one sensor: a sample is calm when |T - T'| <= rate * (t - t'), T' the
 * latest sample at least CAPCHECK_STEADY_WINDOW_S before it (and no more than twice that);
 * a run of calm samples without a gap lasting at least the soak is a steady period, all of
 * it. Hours and consumed life are summed as steady or transient (a calm run shorter than the
 * soak is transient). Keeps the last window's samples (O(window / interval) memory).
 */
struct capcheck_steady {
	double rate_k_per_s, soak_s;
	// the samples of the last window, a ring
	int64_t *ts;
	double *temp;
	size_t cap, head, n;
	// the current calm run
	bool in_run, run_steady;
	int64_t run_from, run_last;
	struct lifetime_sum pending_h, pending_d;
	// the current transient
	bool in_transient, transient_from_start;
	int64_t transient_from;
	bool seen_any;
	int64_t last_ts;
	struct lifetime_sum steady_h, transient_h, steady_d, transient_d;
	struct capcheck_period periods[CAPCHECK_MAX_LISTED];
	size_t n_periods, n_periods_total;
	struct capcheck_transient transients[CAPCHECK_MAX_LISTED];
	size_t n_transients, n_transients_total;
};

/** @rate_k: per 10 minutes; @soak_s: seconds. */
void capcheck_steady_init(struct capcheck_steady *st, double rate_k, double soak_s);
void capcheck_steady_finish(struct capcheck_steady *st); // accepts NULL or a zeroed struct
/**
 * Adds the sample at @ts (after the previous one) of @temp_c standing for @dt_h hours that
 * consumed @damage of the part's life (0 for a sensor the part does not age at); @gap: time
 * was missed before it, so no run spans it.
 */
void capcheck_steady_add(struct capcheck_steady *st, int64_t ts, double temp_c, double dt_h,
			 double damage, bool gap);
/** Closes the open run and transient at the last sample (call once, at the window's end). */
void capcheck_steady_end(struct capcheck_steady *st);

/** Vent clearance against Chemi-Con's table by case diameter. */
enum capcheck_vent_verdict {
	CAPCHECK_VENT_NOT_RECORDED, // no case diameter
	CAPCHECK_VENT_NO_CLEARANCE, // a diameter, but no clearance recorded
	CAPCHECK_VENT_PASS,
	CAPCHECK_VENT_FAIL,
};

struct capcheck_vent {
	enum capcheck_vent_verdict verdict;
	double required_mm; // NAN when not recorded
	char rule[200];     // the rule applied, as a sentence
};

/**
 * Checks @clearance_mm above the vent for a can of @diameter_mm (NAN: not recorded): 8-16 mm
 * needs 2 mm, 18-35 mm 3 mm, 40 mm and more 5 mm. A diameter between two classes (over 16
 * and under 18, over 35 and under 40) takes the larger class's clearance; under 8 mm (the
 * table starts at 8, some series at 6.3) the smallest class's 2 mm.
 */
void capcheck_vent_check(double diameter_mm, double clearance_mm, struct capcheck_vent *out);
/** "pass", "fail", "not recorded", "clearance not recorded". */
const char *capcheck_vent_verdict_name(enum capcheck_vent_verdict v);

#endif
