/*
 * The demo's simulated Radxa ROCK 5C: a sysfs tree laid out like an RK3588 BSP 6.1 kernel's, in a
 * temporary directory, driven by a small deterministic thermal model.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simsensor.h"

/**
 * The thermal model, pure: the state at @t (s since epoch) for @seed. Idle around 38-40 °C;
 * bursts of 25-minute NPU jobs (NPU at 1.0 GHz) heat the NPU and big cores toward 65-75 °C with
 * first-order lags; the thermocouple beside the bulk capacitor follows the board more slowly.
 * Each job takes the big-core zones over their passive trip (SIM_BIG_TRIP_MC): step_wise raises
 * the zone's cpufreq cooling device one state per 2 K above it, which caps the policy's
 * scaling_max_freq one OPP per state, and lowers it again as the zone falls below each step
 * minus the hysteresis, a minute or so after the job. The CPUs' and the NPU cores' busy shares
 * follow the workload (model load, the NPU job, image save, the reranker).
 * The same (seed, t) always gives the same state.
 */
void sim_model(uint64_t seed, int64_t t, struct sim_state *out);

/*
 * The simulated workload's runs: "sdxl-image" wraps each NPU job (model load before it, image
 * save after it, so 1515-1555 s; about 1 in 6 fails at the end with exit 1) and "reranker"
 * takes 30-150 s in about half of the 10-minute slots (1 in 12 fails with exit 2).
 */
struct sim_run {
	const char *label;  // static
	int64_t start, end; // s since epoch
	int exit_code;      // 0 = ok
};

/**
 * The runs starting in [@from, @to), by start time: fills at most @cap of @out and returns how
 * many there are (more than @cap when @out is too small). Pure, like sim_model().
 */
size_t sim_runs(uint64_t seed, int64_t from, int64_t to, struct sim_run *out, size_t cap);

/**
 * The latest whole minute at or before @t at which no run is under way or ends and every
 * cooling device is at state 0: where a history can begin with nothing already going, and
 * where the demo's replay with fast samples begins (no run stored without them then has one
 * of their instants in its window, its end included). Runs and their
 * cooling last under an hour, so it is less than an hour before @t. Pure, like sim_model().
 */
int64_t sim_quiet_minute(uint64_t seed, int64_t t);

/**
 * Board power at @t in watts, what the INA226 on the 5 V input reads: about 3 W idle, more
 * while runs are active (the NPU jobs most). Pure; sim_write() prints it as power1_input (µW).
 */
double sim_power_w(uint64_t seed, int64_t t);

/** Policy @p's cpufreq name ("policy4") and its CPUs as related_cpus prints them ("4 5"). */
const char *sim_policy_name(enum sim_policy p);
const char *sim_policy_cpus(enum sim_policy p);

struct sim;
struct simboard_params;

/**
 * Creates the tree in a new directory under @parent (NULL = $TMPDIR, else /dev/shm, else
 * /tmp) and writes the state at @t. Returns NULL on error (logged).
 */
struct sim *sim_create(const char *parent, uint64_t seed, int64_t t);
/**
 * sim_create() for a board that answers to work (simboard.h) instead of the timetable: @board
 * (copied) says its ambient, binned clock, cooling and time scale; NULL is sim_create(). The
 * tree gains the big cores' OPPs to 2.4 GHz, sim/board (the parameters, one "key value" a line)
 * and sim/work/ (simload.h), the files a campaign's fingerprint reads (proc/meminfo,
 * proc/sys/kernel/osrelease, proc/cmdline, the device tree's compatible, debug/rknpu/version,
 * the DMC's upthreshold), and no pwm-fan when passive. It starts settled at idle.
 */
struct sim *sim_create_board(const char *parent, uint64_t seed, int64_t t,
			     const struct simboard_params *board);
/**
 * The tree's root directory: use it as the sysfs root; procfs_root is its proc/ and
 * debugfs_root its debug/. Owned by @sim.
 */
const char *sim_root(const struct sim *sim);
/**
 * Rewrites every changing file (temperatures, clocks, caps, cooling states, raw ADC values,
 * proc/stat, debug/rknpu/load) for time @t. The counters (proc/stat ticks, the cooling
 * devices' stats/time_in_state_ms) count from the tree's boot, 8 days before sim_create()'s @t,
 * and are the same function of @t whatever order the times are written in. 0 or -errno.
 */
int sim_write(struct sim *sim, int64_t t);
/**
 * sim_write() at @t_ms: a board under work steps to it with the work declared since its last
 * write (the same instant again changes nothing); the timetable writes its second.
 */
int sim_write_ms(struct sim *sim, int64_t t_ms);
/** Removes the tree and frees @sim; accepts NULL. */
void sim_destroy(struct sim *sim);

#endif
