/* A channel is one reading of the board (a zone's temperature, a cluster's clock) with a stable
 * key. */
#ifndef CHANNEL_H
#define CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Keys are printable ASCII without spaces, unique, and built from stable identities, never
 * from probe-order numbers (thermal_zoneN, hwmonN, iio:deviceN):
 *   thermal/<type>            thermal/soc-thermal (a repeated type gets "#2", "#3" ...)
 *   cooling/<type>            cooling/pwm-fan
 *   cpufreq/<policy>          cpufreq/policy4 (or cpufreq/cpu3 for a per-CPU directory)
 *   devfreq/<device>          devfreq/fdab0000.npu
 *   iio/<name>/<channel>      iio/maxim_thermocouple/temp, iio/fec10000.saradc/voltage2
 *   hwmon/<chip>/<feature>    hwmon/nvme-pci-0100/temp1
 *   meminfo/<figure>          meminfo/available, meminfo/swap_used, meminfo/swap_in
 *   <anything valid>          imported channels keep the CSV's name
 */
#define CHANNEL_KEY_MAX 200

enum channel_kind {
	CHANNEL_KIND_TEMPERATURE,
	CHANNEL_KIND_FREQUENCY,
	CHANNEL_KIND_VOLTAGE,
	CHANNEL_KIND_CURRENT,
	CHANNEL_KIND_POWER,
	CHANNEL_KIND_ENERGY,
	CHANNEL_KIND_FAN,
	CHANNEL_KIND_HUMIDITY,
	CHANNEL_KIND_STATE,  // cooling device state index
	CHANNEL_KIND_MEMORY, // bytes of memory or swap
	CHANNEL_KIND_LOAD,   // busy share of a CPU, NPU core or device, percent (0..100)
	CHANNEL_KIND_OTHER,
};

/** What a channel is; the sampler owns these for the channels it reads. */
struct channel {
	char *key;
	char *source; // "thermal", "cooling", "cpufreq", "devfreq", "iio", "hwmon", "meminfo",
		      // "import"
	char *label;
	enum channel_kind kind;
	const char *unit; // static: "celsius", "hertz", "volts", "amperes", "watts", "joules",
			  // "rpm", "bytes", "pages_per_second", ...
	/*
	 * The value step the source can express, in the unit: 0.001 for m°C and mV, 1 for Hz.
	 * The store keeps llround(value / resolution) as an integer, so statistics are exact
	 * at this resolution.
	 */
	double resolution;
	char *path; // sysfs path read, relative to the sysfs root
		    // ("class/thermal/thermal_zone0/temp"); absolute for /proc files
		    // ("/proc/meminfo": the meminfo source)
	char *meta; // a JSON object with source details (trips, governor, ...), or NULL
	// A bound of the source's own, inside its kind's: a cooling device's max_state. Values
	// above it are implausible (channel_plausible()); has_max false for most channels.
	bool has_max;
	double max;
};

/** One value of one channel in a cycle. */
struct reading {
	double value; // in the channel's unit, calibration applied; meaningless when err != 0
	int err;      // 0, or a negative errno: the value is missing, never a fake 0
	bool pending; // err is a rate's -EAGAIN: it needs a second reading (not a failure)
};

/** Whether @r is a failed read: an error, not a rate still waiting for its second reading. */
bool reading_failed(const struct reading *r);

const char *channel_kind_name(enum channel_kind kind);
/** Parses a kind name; false if unknown. */
bool channel_kind_parse(const char *name, enum channel_kind *out);
/** The kind a unit name measures ("millivolts" is a voltage); CHANNEL_KIND_OTHER if none. */
enum channel_kind channel_kind_of_unit(const char *unit);
/** The unit's static name if @name is a known unit, else NULL. */
const char *channel_unit_lookup(const char *name);
/** The usual unit of a kind ("celsius" for a temperature). */
const char *channel_kind_unit(enum channel_kind kind);
/**
 * Whether @value (in @c's unit, calibration applied) can be a real reading: finite,
 * representable at the channel's resolution (|value / resolution| < 2^53), and within the
 * physical bounds of its kind when it has the kind's usual unit (temperature -273.15..2000 °C,
 * frequency 0..1e12 Hz, voltage and current ±1e5, power ±1e8 W, energy 0..1e15 J, fan
 * 0..1e6 rpm, humidity 0..100 %, state 0..1e6, memory 0..1e15 bytes), and at most @c->max
 * when it has one. The one rule for samples and for what throttle detection reads. Pure.
 */
bool channel_plausible(const struct channel *c, double value);
/** Key rules: 1..CHANNEL_KEY_MAX bytes of printable ASCII, no spaces. */
bool channel_key_valid(const char *key);
/**
 * The coarsest resolution that both @a and @b are whole multiples of (a / m for the smallest
 * whole m up to 10^6), so values stored at @a can be rescaled exactly by *factor = m. False when
 * there is none (e.g. an irrational ratio): the caller keeps @a.
 */
bool channel_common_resolution(double a, double b, double *out, int64_t *factor);
struct json;
/**
 * The one channel object of every JSON answer (docs/API.md, GET /api/v1/latest), written into
 * the object open in @j: "key", "label" (the key when the channel has none), "source", "kind",
 * "unit". Stats, peak columns, samples and latest all start their channel objects with it.
 */
void channel_json_identity(struct json *j, const struct channel *c);
/**
 * The identity, then "value" (null when @r failed or waits for its second reading) and
 * "error" (null, or the error's message), into the open object: /api/v1/latest and
 * `thermlog sample --json`.
 */
void channel_json_reading(struct json *j, const struct channel *c, const struct reading *r);
/** Frees the strings of @c (not @c itself); accepts a zeroed struct. */
void channel_finish(struct channel *c);
/** Deep copy of @src into @dst. */
void channel_copy(struct channel *dst, const struct channel *src);
/** Deep copies of the @n channels at @src, in an array of at least one (free: channel_list_free).
 */
struct channel *channel_list_copy(const struct channel *src, size_t n);
/** Frees @list of @n channels from channel_list_copy() (NULL accepted). */
void channel_list_free(struct channel *list, size_t n);
/** Whether the lists @a (@na channels) and @b (@nb) have the same keys in the same order. */
bool channel_list_same_keys(const struct channel *a, size_t na, const struct channel *b, size_t nb);

#endif
