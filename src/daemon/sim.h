/*
 * The demo's simulated Radxa ROCK 5C: a sysfs tree laid out like an RK3588 BSP 6.1 kernel's, in a
 * temporary directory, driven by a small deterministic thermal model.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Thermal zones in TSADC channel order (thermal_zone0..6 on the BSP). */
enum sim_zone {
	SIM_ZONE_SOC,
	SIM_ZONE_BIGCORE0,
	SIM_ZONE_BIGCORE1,
	SIM_ZONE_LITTLECORE,
	SIM_ZONE_CENTER,
	SIM_ZONE_GPU,
	SIM_ZONE_NPU,
	SIM_ZONE_COUNT,
};

/* cpufreq policies: policy0 (A55 cpu0-3), policy4 (A76 cpu4-5), policy6 (A76 cpu6-7). */
enum sim_policy {
	SIM_POLICY_LITTLE,
	SIM_POLICY_BIG0,
	SIM_POLICY_BIG1,
	SIM_POLICY_COUNT,
};

#define SIM_SARADC_CHANNELS 8
#define SIM_JOB_S           1500 // an NPU job lasts 25 minutes
#define SIM_NPU_BUSY_HZ     1000000000LL
#define SIM_CPUS            8 // cpu0-3 A55 (policy0), cpu4-7 A76 (policy4, policy6)
#define SIM_NPU_CORES       3
#define SIM_BIG_TRIP_MC     60000 // the big-core zones' passive trip (trip_point_0)
#define SIM_BIG_HYST_MC     2000
#define SIM_COOL_STATES     6 // the big cores' cpufreq cooling states reached: 0..5

/** The board at one instant, in the units sysfs prints. */
struct sim_state {
	double zone_c[SIM_ZONE_COUNT];   // the model's temperature, °C
	int32_t zone_mc[SIM_ZONE_COUNT]; // what the TSADC reports: ~1 °C steps, m°C
	int32_t tc_raw;         // MAX31855 in_temp_raw: 0.25 °C per LSB (in_temp_scale 250)
	int32_t tc_ambient_raw; // cold junction: 0.0625 °C per LSB
	int fan_state;          // pwm-fan cur_state, 0..4
	int64_t cpu_khz[SIM_POLICY_COUNT];
	int64_t npu_hz, gpu_hz, dmc_hz;
	int32_t saradc_raw[SIM_SARADC_CHANNELS]; // 12 bit, 0.439453125 mV per LSB
	bool npu_busy;                           // an NPU job runs at this instant
	int cool_state[SIM_POLICY_COUNT];        // the policy's cpufreq cooling device cur_state
	int64_t cap_khz[SIM_POLICY_COUNT]; // scaling_max_freq: the OPP cool_state steps down to
	int cpu_busy_pct[SIM_CPUS];        // each CPU's busy share at this second, %
	int npu_load_pct[SIM_NPU_CORES];   // rknpu/load per core
};

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

/** Converts °C to what the RK3588 TSADC driver prints (its code table, linear in between). */
int32_t sim_tsadc_mc(double celsius);

struct sim;

/**
 * Creates the tree in a new directory under @parent (NULL = $TMPDIR, else /dev/shm, else
 * /tmp) and writes the state at @t. Returns NULL on error (logged).
 */
struct sim *sim_create(const char *parent, uint64_t seed, int64_t t);
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
/** Removes the tree and frees @sim; accepts NULL. */
void sim_destroy(struct sim *sim);

#endif
