/*
 * The shared unit-test fixture: the board's channels as the sampler reports them, and a
 * seeded history of three of them (two thermal zones and the NPU's devfreq) in an in-memory
 * store, with the generated values kept for reference answers.
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "channel.h"

#define FIXTURE_T0       1787000000 // 2026-08-17T21:33:20Z: deliberately not on an hour
#define FIXTURE_CYCLES   3000       // 50 hours of minutes
#define FIXTURE_CHANNELS 3

/*
 * The board's channels as the sampler reports them (RK3588: tests/fixtures/rock5c), one
 * definition for every unit test: key, source, kind, unit and resolution. A test adds what it
 * asserts on itself, the label above all (plain, escaped or non-ASCII, as it needs):
 *     static struct channel chans[] = {{FIXTURE_SOC_THERMAL, .label = "SoC"}};
 */
#define FIXTURE_SOC_THERMAL                                                                  \
	.key = "thermal/soc-thermal", .source = "thermal", .kind = CHANNEL_KIND_TEMPERATURE, \
	.unit = "celsius", .resolution = 0.001 // m°C in sysfs
#define FIXTURE_BIGCORE0_THERMAL                                                                  \
	.key = "thermal/bigcore0-thermal", .source = "thermal", .kind = CHANNEL_KIND_TEMPERATURE, \
	.unit = "celsius", .resolution = 0.001
#define FIXTURE_POLICY4                                                                \
	.key = "cpufreq/policy4", .source = "cpufreq", .kind = CHANNEL_KIND_FREQUENCY, \
	.unit = "hertz", .resolution = 1000 // kHz in sysfs
#define FIXTURE_NPU                                                                         \
	.key = "devfreq/fdab0000.npu", .source = "devfreq", .kind = CHANNEL_KIND_FREQUENCY, \
	.unit = "hertz", .resolution = 1
#define FIXTURE_DMC                                                                \
	.key = "devfreq/dmc", .source = "devfreq", .kind = CHANNEL_KIND_FREQUENCY, \
	.unit = "hertz", .resolution = 1
#define FIXTURE_PWM_FAN                                                            \
	.key = "cooling/pwm-fan", .source = "cooling", .kind = CHANNEL_KIND_STATE, \
	.unit = "state", .resolution = 1
#define FIXTURE_FAN1                                                                      \
	.key = "hwmon/pwmfan-isa-0000/fan1", .source = "hwmon", .kind = CHANNEL_KIND_FAN, \
	.unit = "rpm", .resolution = 1
#define FIXTURE_THERMOCOUPLE                                                                     \
	.key = "iio/maxim_thermocouple/temp", .source = "iio", .kind = CHANNEL_KIND_TEMPERATURE, \
	.unit = "celsius", .resolution = 0.25
#define FIXTURE_SARADC2                                                                       \
	.key = "iio/fec10000.saradc/voltage2", .source = "iio", .kind = CHANNEL_KIND_VOLTAGE, \
	.unit = "millivolts", .resolution = 0.1

struct store;

/* The seeded history's channels: bigcore0, SoC and the NPU. */
extern struct channel fixture_channels[FIXTURE_CHANNELS];

/* The generated history, for the reference answers. */
struct fixture_history {
	int64_t ts[FIXTURE_CYCLES];
	int64_t q[FIXTURE_CYCLES][FIXTURE_CHANNELS];
	bool have[FIXTURE_CYCLES][FIXTURE_CHANNELS];
	bool unsynced[FIXTURE_CYCLES];
};
extern struct fixture_history fixture_hist;

/**
 * A minute cadence from FIXTURE_T0 with a three-hour gap in the middle, half an hour unsynced,
 * a missed SoC reading every 97 cycles, and values from @rand (the test's seeded generator).
 * Fills fixture_hist. The store is in memory; NULL on error.
 */
struct store *fixture_store(uint64_t (*rand)(void));

#endif
