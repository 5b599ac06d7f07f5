/*
 * Capacitor lifetime over the stored history: the full recomputation that `thermlog lifetime`
 * and GET /api/v1/lifetime show, replayed through capreplay.c like the daemon's running sums
 * (capwatch.h), so their figures agree to the bit.
 */
#ifndef LIFETIME_REPORT_H
#define LIFETIME_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capcheck.h"
#include "config.h"
#include "json.h"
#include "lifetime.h"

struct store;

/** One capacitor's figures over a window of the stored history. */
struct lifetime_report_entry {
	const struct capacitor_config *cc; // borrowed from the config
	char *sensor_key; // owned: the matched channel key, or the configured sensor
	struct lifetime_result r;
	double coverage;           // observed time / stored span of the window, NAN when empty
	double p95_temp_c;         // time-weighted, NAN when empty
	double life_at_p95_temp_h; // uncapped
	// Owned: the time the replay gave each stored sensor temperature, ascending (dt_h in
	// hours; the weights of the damage sum, so they add up to r.observed_h). NULL and 0
	// when nothing was observed. What a temperature profile (lifetime-profile.h) bins.
	struct lifetime_point *temps;
	size_t n_temps;
	// Owned, with a measured ripple only (the rise is each sample's): the time per model
	// temperature (to 1e-6 K), what the profile bins instead of temps. NULL otherwise.
	struct lifetime_point *model_temps;
	size_t n_model_temps;
	double p95_effective_temp_c;     // the p95 of the temperature the model ages the part at
	char *sensor_keys[TEMP_BASIS_N]; // owned: each measured temperature's matched key (or
					 // the configured name when none matched); NULL = none
	char *load_key;                  // owned: the load or current channel, NULL = none
	const char *basis_reason;        // static: why the part ages at cc->basis
	bool has_check;                  // an ambient sensor with a case sensor or a load
	struct capcheck_rise_result check;
	// Steady state per measured sensor, with the report's steady flag (else NULL): owned,
	// finished (only the figures and lists are left).
	struct capcheck_steady *steady[TEMP_BASIS_N];
	struct capcheck_vent vent; // the vent clearance against the table by case diameter
};

struct lifetime_report {
	int64_t from, to;   // the stored span evaluated (0, 0 when empty)
	int64_t interval_s; // nominal sampling interval inferred from the cycles' spacing
	size_t n;
	struct lifetime_report_entry *entries; // one per configured capacitor, in config order
};

/**
 * Recomputes every configured capacitor from the raw samples with from <= ts < to
 * (INT64_MIN/INT64_MAX or 0 for open ends), and from the hourly rollups for whole hours whose
 * raw samples were pruned. Without @include_unsynced, a merged day (store_scan_rollup_days())
 * whose cycles all have one spacing s, the day's first one too, is read as its histogram: each
 * stored value stands for s, exactly as struct lifetime_spacing would give it sample by sample.
 * @now (s since epoch) bounds the calendar age.
 * Returns 0, or a negative errno with *err newly allocated (caller frees).
 */
int lifetime_report_compute(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			    bool include_unsynced, int64_t now, struct lifetime_report *rep,
			    char **err);

/** What lifetime_report_compute_with() adds. */
enum lifetime_report_flag {
	LIFETIME_REPORT_UNSYNCED = 1, // keep the cycles with an unsynchronized clock
	LIFETIME_REPORT_STEADY = 2,   // steady state per sensor (every sample replayed)
};
/**
 * lifetime_report_compute() with @flags (enum lifetime_report_flag): with
 * LIFETIME_REPORT_STEADY every capacitor is replayed sample by sample (no daily histograms)
 * and each sensor's steady periods and transients are found (the design review's).
 */
int lifetime_report_compute_with(struct store *store, const struct config *cfg, int64_t from,
				 int64_t to, unsigned flags, int64_t now,
				 struct lifetime_report *rep, char **err);
void lifetime_report_finish(struct lifetime_report *rep); // accepts a zeroed struct

#define LIFETIME_SERIES_POINTS 12 // points of a consumed-life chart

/**
 * A capacitor's consumed life at points of a window: each point is `thermlog lifetime --json
 * --from FROM --to TO`'s consumed_fraction (and its band's ends) and observed_h; the last point
 * is the window's own report, its time the last sample's.
 */
struct lifetime_series {
	size_t n;
	int64_t to[LIFETIME_SERIES_POINTS + 1];
	double consumed[LIFETIME_SERIES_POINTS + 1];
	double consumed_band[LIFETIME_SERIES_POINTS + 1][2]; // the reading hotter, cooler
	double observed_h[LIFETIME_SERIES_POINTS + 1];
};

/**
 * The consumed life of each capacitor of @rep (computed with lifetime_report_compute() from
 * @from, INT64_MIN for the stored history's start) at up to LIFETIME_SERIES_POINTS points
 * evenly spaced over its stored span (whole hours once it spans that many): @series holds
 * rep->n entries. 0, or -errno with *err newly allocated.
 */
int lifetime_report_series(struct store *store, const struct config *cfg, int64_t from, int64_t now,
			   const struct lifetime_report *rep, struct lifetime_series *series,
			   char **err);
/**
 * The JSON of GET /api/v1/lifetime/series: {"capacitors": [{"name", "sensor", "basis",
 * "points": [{"to", "observed_h", "consumed_fraction", "consumed_fraction_band"}]}]}, over
 * [@from, @to) as lifetime_report_compute(). 0 or -errno with *err.
 */
int lifetime_series_json(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			 int64_t now, struct json *out, char **err);

/**
 * The JSON of `thermlog lifetime --json`, appended to @out: {"from", "to" (the first and the
 * last sample evaluated, unix s; null when none), "interval_s", "capacitors": [{"name", "sensor",
 * "basis", "observed_h", "coverage", "consumed_fraction", "effective_life_h",
 * "life_uncapped_h", "equivalent_temp_c", "mean_temp_c", "life_at_mean_temp_h", "p95_temp_c",
 * "life_at_p95_temp_h", "remaining_h", "capped", "warnings": [{"code", "message"}],
 * "relative_lifetime": [{"reduction_k", "factor", "life_h"}], "self_heating_k",
 * "equivalent_effective_temp_c", "mean_effective_temp_c", "p95_effective_temp_c", "in_service",
 * "unobserved_service_h", "consumed_fraction_extrapolated", "consumed_fraction_total",
 * "past_estimated_life", "review": {"enclosure", ...}}]}. The effective temperatures are the
 * measured ones plus the self-heating rise (what the model ages the part at). Hours;
 * effective_life_h and remaining_h are capped (see "capped"), the comparison lives
 * (life_uncapped_h, life at the mean and p95 temperatures) are not; temperatures are time-weighted,
 * on the sensor's scale; null where unknown. Arguments as lifetime_report_compute(); 0 or -errno
 * with *err.
 */
int lifetime_report_json(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			 bool include_unsynced, int64_t now, struct json *out, char **err);
/** Writes a computed report as the JSON above. */
void lifetime_report_write_json(const struct lifetime_report *rep, struct json *out);
/**
 * Writes the members naming @e's capacitor ("name", "sensor", "basis", "basis_reason": why it
 * ages at that temperature) into an open object.
 */
void lifetime_report_write_part(const struct lifetime_report_entry *e, struct json *out);
/**
 * Writes @cc's design-review notes as the report's "review" object: every key of
 * capacitor_review_keys[] in that order, its text or null when not recorded.
 */
void lifetime_report_write_review(const struct capacitor_config *cc, struct json *out);
/**
 * Writes @r's sensitivity band as the report's "band" object: {"uncertainty_k",
 * "effective_life_h", "life_uncapped_h", "remaining_h", "consumed_fraction"}, each but the first
 * a pair [the reading uncertainty_k hotter (the short end), cooler].
 */
void lifetime_report_write_band(const struct lifetime_result *r, struct json *out);
/** Writes @r's warnings as the report's "warnings" array: [{"code", "message"}]. */
void lifetime_report_write_warnings(const struct lifetime_result *r, struct json *out);

#endif
