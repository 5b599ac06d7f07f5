/*
 * The simulated board's response to work (thermlogd --demo --board): instead of the demo's
 * timetable, the board heats with the load declared on it (simload.h), through first-order lags
 * per zone, throttles its big cores at their passive trips (step_wise, one OPP per state), spins
 * its fan, draws power and cools toward its ambient when left alone. Pure: a state stepped
 * forward by the caller with the mean load of each interval; the time scale makes a minute of
 * the board's physics pass in a second of the wall clock.
 */
#ifndef SIMBOARD_H
#define SIMBOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simsensor.h"

#define SIMBOARD_MAX_STATES 16 // cooling states a big cluster's device has at most, 0 included
#define SIMBOARD_MAX_OPPS   16 // OPPs of a cluster's table at most

enum simboard_cooling {
	SIMBOARD_COOLING_FAN,     // heatsink and the ROCK 5C's pwm-fan on soc-thermal's trip
	SIMBOARD_COOLING_PASSIVE, // the heatsink alone: no fan device, hotter under load
};

/** What tells two simulated boards of the one model apart. */
struct simboard_params {
	double ambient_c;    // the air around the board, °C
	int64_t big_max_khz; // the big cores' binned maximum, an OPP (0: the top OPP)
	enum simboard_cooling cooling;
	double time_scale; // the board's seconds per second of the wall clock, 1 .. 3600
};

/** Ambient 25 °C, the top OPP reached, the fan, time scale 1. */
void simboard_params_default(struct simboard_params *p);

/**
 * Reads "KEY=VALUE[,KEY=VALUE...]" over @p (defaults kept for keys not given): ambient=°C
 * (-20 .. 60), big_max=MHz (an OPP of the big cores' table), cooling=fan|passive,
 * time_scale=N. False with *err (newly allocated) naming the key at fault.
 */
bool simboard_params_parse(const char *spec, struct simboard_params *p, char **err);

/** The load on the board over an interval: each CPU's and NPU core's busy share, %. */
struct simboard_load {
	double cpu_pct[SIM_CPUS];
	double npu_pct[SIM_NPU_CORES];
};

/** The board's state; counters count wall-clock time, as the kernel's do. */
struct simboard {
	struct simboard_params p;
	int64_t t_ms;                      // the instant the state is for (ms since epoch)
	double excess_k[SIM_ZONE_COUNT];   // each zone over the ambient
	double tc_k, cj_k;                 // the thermocouple and its cold junction over it
	int cool_state[SIM_POLICY_COUNT];  // the cpufreq cooling devices' cur_state
	int fan_state;                     // pwm-fan, 0 .. 4 (0 when passive)
	int64_t cpu_khz[SIM_POLICY_COUNT]; // the governor's clock over the last interval
	double power_w;                    // the board's draw over the last interval
	struct simboard_load load;         // the mean load of the last interval
	double busy_ticks[SIM_CPUS];       // busy time since the boot, 1/100 s
	int64_t state_ms[SIM_POLICY_COUNT][SIMBOARD_MAX_STATES]; // time at each cooling state
	int64_t opp_ms[SIM_POLICY_COUNT][SIMBOARD_MAX_OPPS];     // time at each OPP (cpufreq stats)
};

/** The big cores' OPPs on this board (kHz, ascending; the top is cpuinfo_max_freq). */
const int64_t *simboard_big_opp(size_t *n);
/** The little cores' OPPs. */
const int64_t *simboard_little_opp(size_t *n);

/**
 * The board left alone long enough to settle at @t_ms, booted @uptime_s before: every zone at
 * its idle offset over the ambient, counters as a mostly idle uptime leaves them.
 */
void simboard_init(struct simboard *b, const struct simboard_params *p, int64_t t_ms,
		   int64_t uptime_s);

/**
 * Steps the board from b->t_ms to @t_ms (later; an earlier or equal time changes nothing) under
 * @load, the mean load of that interval: the governor picks each cluster's clock under its cap,
 * the draw follows the load and the clocks, each zone moves toward its steady temperature by the
 * lag of its time constant over the interval times the time scale, then step_wise moves the big
 * clusters' cooling states and the fan follows soc-thermal.
 */
void simboard_step(struct simboard *b, const struct simboard_load *load, int64_t t_ms);

/**
 * What sysfs shows of the board at its instant, in sim_model()'s terms (temperatures with the
 * sensor noise of @seed, TSADC steps, clocks, caps, states, loads, ADC values).
 */
void simboard_state(const struct simboard *b, uint64_t seed, struct sim_state *out);

/** The board's draw in W as the INA226 reads it at its instant (with a little noise). */
double simboard_power_w(const struct simboard *b, uint64_t seed);

#endif
