/*
 * What the simulated ROCK 5C's two models share (sim.c's timetable, simboard.c's board under
 * work): its zones, policies and the state sysfs shows, and how its sensors read: the TSADC's
 * code table and a seeded noise.
 */
#ifndef SIMSENSOR_H
#define SIMSENSOR_H

#include <stdbool.h>
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

/** splitmix64's finalizer: a well-mixed 64-bit value from @x. */
uint64_t sim_mix(uint64_t x);
/** A well-mixed hash of @seed and an event's coordinates @a, @b (splitmix64). */
uint64_t sim_hash(uint64_t seed, uint64_t a, uint64_t b);
/** Uniform in [0, 1) from a hash. */
double sim_unit(uint64_t h);
/** Sensor noise within ±@amplitude, the same for the same (@seed, @channel, @t s). */
double sim_noise(uint64_t seed, uint64_t channel, int64_t t, double amplitude);
/** Converts °C to what the RK3588 TSADC driver prints (its code table, linear in between). */
int32_t sim_tsadc_mc(double celsius);
/**
 * The SARADC's raw values at @t (12 bit, 0.439453125 mV per LSB): ch0/ch1 keys pulled up, ch2
 * the 5 V rail (@rail_v) through 47k/10k, ch3 headphone detect, ch4-7 unconnected pins near
 * ground, with @seed's noise.
 */
void sim_saradc(uint64_t seed, int64_t t, double rail_v, int32_t raw[SIM_SARADC_CHANNELS]);

#endif
