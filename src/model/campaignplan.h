/*
 * A campaign's arithmetic, pure: the order its repetitions run in (sequential or interleaved),
 * the first one a resume owes, the thermal gate's verdict on the board's state against its idle
 * baseline, and the time left. No I/O, no clock, no globals: the runner (src/cli/campaign.c)
 * feeds it what it read.
 */
#ifndef CAMPAIGNPLAN_H
#define CAMPAIGNPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/** How a step's repetition starts. */
enum campaign_start {
	CAMPAIGN_START_COLD, // the gate passed immediately before it
	CAMPAIGN_START_WARM, // within warm_within of the step's previous repetition, no gate
	CAMPAIGN_START_ANY,  // no gate, no condition
};

/** Where a campaign stands. */
enum campaign_status {
	CAMPAIGN_STATUS_RUNNING, // a runner works on it
	CAMPAIGN_STATUS_STOPPED, // it ended before its last repetition: --resume goes on
	CAMPAIGN_STATUS_DONE,    // every repetition ended
};

/** What the gate did before a repetition. */
enum campaigngate_outcome {
	CAMPAIGNGATE_NONE,    // no gate: a warm or an any start
	CAMPAIGNGATE_PASSED,  // the board was back at its idle baseline
	CAMPAIGNGATE_TIMEOUT, // the maximum wait passed first: the run went on, marked so
};

/** What the plan needs of a step. */
struct campaignplan_step {
	unsigned repetitions, warmup;
};

/** One repetition of the campaign: step @step's warmup run or repetition @rep (1-based). */
struct campaignplan_slot {
	uint32_t step;
	uint32_t rep;
	bool warmup;
};

/**
 * The campaign's slots in the order they run, into @out (at most @cap; NULL counts): sequential,
 * each step's warmup runs then its repetitions, steps in order; interleaved, round k takes each
 * step's k-th slot in step order (its warmup runs first), so the steps alternate A B A B and a
 * slow drift over the campaign touches them alike. Returns how many slots there are.
 */
size_t campaignplan_slots(const struct campaignplan_step *steps, size_t n, bool interleaved,
			  struct campaignplan_slot *out, size_t cap);

/** @a and @b name the same repetition. */
bool campaignplan_same(const struct campaignplan_slot *a, const struct campaignplan_slot *b);

/**
 * The first of the @n slots of @plan not among the @n_ended slots of @ended (the repetitions
 * recorded as ended): where a resume continues. @n when every one ended.
 */
size_t campaignplan_resume(const struct campaignplan_slot *plan, size_t n,
			   const struct campaignplan_slot *ended, size_t n_ended);

/* --- the gate ----------------------------------------------------------------------------- */

/** A watched zone: its idle baseline and its reading now (°C). */
struct campaigngate_zone {
	const char *key;
	double baseline_c;
	bool present; // read now
	double now_c;
};

/** What the gate sees of the board now. */
struct campaigngate_input {
	const struct campaigngate_zone *zones;
	size_t n_zones;
	double tolerance_k;
	const char *open_episode; // a throttle episode still open (its domain), or NULL
	const char *cooling;      // a cooling device bound to a passive trip above state 0, or NULL
	int64_t cooling_state;    // its state
};

enum campaigngate_state {
	CAMPAIGNGATE_PASS,      // every zone within tolerance, nothing throttled or cooling
	CAMPAIGNGATE_THROTTLED, // a throttle episode is open
	CAMPAIGNGATE_COOLING,   // a passive trip's cooling device is above state 0
	CAMPAIGNGATE_HOT,       // a zone is above its baseline by more than the tolerance
	CAMPAIGNGATE_COLD,      // a zone is below it by more (none above): a warm-up helps
	CAMPAIGNGATE_NO_DATA,   // a watched zone has no reading
};

struct campaigngate_verdict {
	enum campaigngate_state state;
	const struct campaigngate_zone *zone; // the zone furthest out (HOT, COLD, NO_DATA)
	double off_k;                         // its reading minus its baseline
};

/**
 * The gate's verdict: throttling first, then an active cooling device, then the zone furthest
 * above its baseline beyond the tolerance, then the one furthest below it; pass when none.
 */
void campaigngate_check(const struct campaigngate_input *in, struct campaigngate_verdict *out);

/** "pass", "throttled", "cooling", "hot", "cold", "no_data". */
const char *campaigngate_state_name(enum campaigngate_state state);

/**
 * Why the gate holds, one line for the progress and the record: "bigcore0-thermal 46.3 °C,
 * 4.4 K over its idle baseline 41.9 (± 2 K)", "cpufreq/policy4 is throttled", "pwm-fan at
 * state 2 (a passive trip's cooling)", "passed: every zone within ± 2 K".
 */
void campaigngate_describe(const struct campaigngate_input *in,
			   const struct campaigngate_verdict *v, struct buf *out);

/* --- the time left ------------------------------------------------------------------------ */

/**
 * The seconds the @n slots of @todo should take: each step's mean duration and mean gate wait
 * so far (@mean_s and @wait_s, per step; a step without any yet takes @fallback_s and no wait).
 */
double campaignplan_eta_s(const struct campaignplan_slot *todo, size_t n, const double *mean_s,
			  const double *wait_s, double fallback_s);

#endif
