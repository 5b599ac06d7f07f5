/*
 * The replay of a capacitor's stored history, shared by the full report (lifetime-report.c)
 * and the daemon's running sums (capwatch.c): included cycles in time order, their samples
 * (and, for pruned hours, rollups; for merged days, histograms) added to each capacitor's
 * lifetime_acc through one function, so both give the same figures to the bit.
 */
#ifndef CAPREPLAY_H
#define CAPREPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capcheck.h"
#include "lifetime.h"
#include "stats.h"
#include "store.h"

/* The channels a capacitor may be read from at once: its temperatures, then its load. */
enum capreplay_role {
	CAPREPLAY_AMBIENT = TEMP_BASIS_AMBIENT,
	CAPREPLAY_CASE = TEMP_BASIS_CASE,
	CAPREPLAY_CORE = TEMP_BASIS_CORE,
	CAPREPLAY_LOAD, // the load or current (ripple_from's channel, or load_channel)
	CAPREPLAY_N_ROLES,
};

/* Resolution of the measured self-heating's histogram (mK) and of the model temperature's. */
#define CAPREPLAY_RISE_RES  0.001
#define CAPREPLAY_MODEL_RES 1e-6

/*
 * A capacitor read from several channels at once: each cycle's values are gathered, then
 * added together (capreplay_add_cycle()). The checks are optional, for the report. Only
 * capreplay_run() replays joint targets (not capreplay_days()).
 */
struct capreplay_joint {
	int64_t ids[CAPREPLAY_N_ROLES]; // -1 = not read
	double res[CAPREPLAY_N_ROLES];
	bool load_watts;  // the load channel is in watts (else amperes)
	bool load_ripple; // the load channel is ripple_from's: the rise is each sample's
	int64_t q[CAPREPLAY_N_ROLES];
	bool have[CAPREPLAY_N_ROLES];                 // the cycle being gathered
	struct capcheck_rise *check;                  // optional: the self-heating check
	struct capcheck_steady *steady[TEMP_BASIS_N]; // optional: per measured sensor
	struct stats_acc *rise_secs;                  // optional: seconds per mK of case - ambient
	struct stats_acc *model_secs; // optional: seconds per µK of the model temperature
};

struct capreplay_target {
	const struct lifetime_params *p; // NULL with acc NULL: only the time (secs) is kept
	struct lifetime_acc *acc;
	int64_t channel_id; // -1: no channel, only the time advances
	double resolution;
	struct lifetime_spacing *sp; // advanced by the replay past the cycles it already holds
	int64_t cycle_ts;            // the cycle whose sample is expected next
	int64_t cycle_dt;            // its interval, s
	struct lifetime_point *pts;  // optional: collected for percentiles
	size_t n_pts, cap_pts;
	bool collect;
	struct stats_acc *secs; // optional: seconds per stored integer, for percentiles
	bool cycle_gap;         // time was missed before the expected cycle
	// Optional: read with other channels (several sensors, a load); channel_id is then the
	// one the part ages at. NULL: one channel.
	struct capreplay_joint *joint;
};

struct capreplay_info {
	int64_t nominal_s;   // median spacing: what a rolled-up value stands for
	int64_t raw_from;    // the first raw sample in the window, INT64_MAX = none
	int64_t rollup_from; // the first hour taken from rollups, INT64_MAX = none
	int64_t rollup_to;   // rollup hours end here (= the hour of raw_from)
};

/* What the warnings and the report's span need of the replayed cycles. */
struct capreplay_summary {
	int64_t n, first, last;       // cycles replayed (after the rolled-up hours)
	int64_t unsynced;             // unsynced cycles in the window (excluded unless included)
	int64_t gaps, gap_s, longest; // as struct lifetime_spacing sees the replayed cycles
};

/* A channel unit in degrees Celsius: the only one the model takes. */
bool capreplay_is_celsius(const char *unit);

/* The stored channel a capacitor's sensor names: a key first, else a label. */
const struct store_channel *capreplay_match_channel(const struct store_channel *list, size_t n,
						    const char *sensor);

/*
 * The one place a stored value becomes damage, for the replay and the live update alike.
 * False when the sample is not this part's (before its in-service date).
 */
bool capreplay_add_sample(struct capreplay_target *t, double temp_c);

/** Empties a joint target's gathered cycle (before gathering the next). */
void capreplay_joint_clear(struct capreplay_joint *j);
/**
 * The same for a joint target: the values gathered in t->joint for the cycle at t->cycle_ts
 * become damage (the temperature p->basis names, with each sample's rise from a measured
 * ripple), feed the optional checks, and are cleared. False when the part did not age in it
 * (its temperature, or the current its rise needs, missing; before its in-service date).
 */
bool capreplay_add_cycle(struct capreplay_target *t);

/*
 * Replays [from, to): whole hours before the first raw sample (pruned by retention) from the
 * hourly rollups, then the included cycles and the samples of the targets' channels, summed up
 * in *@h. Rollup values stand for the median spacing of the cycles (@fallback_s with fewer
 * than two). The first raw sample stands for nothing: no interval before it is known, and so
 * the figures never depend on which configuration the reader has. The cycles are read a chunk
 * at a time beside their samples: memory does not grow with the window.
 */
int capreplay_run(struct store *store, int64_t from, int64_t to, bool include_unsynced,
		  int64_t fallback_s, struct capreplay_target *targets, size_t n,
		  struct capreplay_summary *h, struct capreplay_info *info);

/*
 * The report's replay (unsynced cycles left out) over the merged days of the store's daily
 * level: the same figures as capreplay_run() (sums over temperatures, so equal up to the
 * rounding of the sums), reading a steady day's histograms instead of its samples and
 * replaying raw only the edges, the other days and what follows the merged days, a week of
 * days at a time. Returns 1 (nothing done) when the window holds no merged day.
 */
int capreplay_days(struct store *store, int64_t from, int64_t to, int64_t fallback_s,
		   struct capreplay_target *targets, size_t n, struct capreplay_summary *h,
		   struct capreplay_info *info);

/* The time-weighted percentile of seconds per stored integer (lifetime_percentile's rule). */
double capreplay_percentile(struct stats_acc *secs, double resolution, double pct);

#endif
