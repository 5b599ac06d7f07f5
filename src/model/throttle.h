/*
 * Throttle episodes: a pure state machine fed each cycle's readings of the frequency domains
 * (cpufreq policies, devfreq devices), the thermal zones with their trips and the cooling
 * devices. A domain is throttled while its effective maximum is below its hardware maximum; an
 * episode is one throttled interval, with its depth, its cause and what explains it. Between
 * two cycles the cooling devices' time_in_state_ms deltas catch episodes shorter than the
 * interval. No I/O, no clock, no globals: time is the cycle's stamp. See docs/THROTTLE.md.
 */
#ifndef THROTTLE_H
#define THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define THROTTLE_NAME_LEN    64
#define THROTTLE_MAX_DOMAINS 32
#define THROTTLE_MAX_ZONES   32
#define THROTTLE_MAX_CDEVS   32
#define THROTTLE_MAX_TRIPS   12
#define THROTTLE_MAX_BINDS   12
#define THROTTLE_MAX_STATES  32
#define THROTTLE_MAX_COOLING 8
#define THROTTLE_MAX_CPUS    64 // x86 CPUs whose thermal_throttle counters are read
/* An episode is stuck when its cap holds this long with every bound zone below trip - hyst. */
#define THROTTLE_STUCK_S 300

/** One frequency domain as read this cycle. */
struct throttle_domain_reading {
	char name[THROTTLE_NAME_LEN]; // "cpufreq/policy6", "devfreq/fb000000.gpu"
	int64_t cap_hz;               // effective maximum (scaling_max_freq, max_freq)
	int64_t max_hz;               // hardware maximum (cpuinfo_max_freq, top OPP)
};

struct throttle_trip {
	int64_t temp_mc;
	int64_t hyst_mc; // 0 when the zone has no hyst file
	bool passive;
};

/** One thermal zone: its temperature, trips and bindings to cooling devices. */
struct throttle_zone_reading {
	char name[THROTTLE_NAME_LEN]; // the zone's type, as in the channel key thermal/<type>
	bool valid;                   // temp read this cycle
	int64_t temp_mc;
	struct throttle_trip trips[THROTTLE_MAX_TRIPS];
	size_t n_trips;
	struct {
		int cdev; // cooling_deviceN's N
		int trip; // the trip index it is bound at, -1 unknown
	} binds[THROTTLE_MAX_BINDS];
	size_t n_binds;
};

/** One cooling device. */
struct throttle_cdev_reading {
	int dev;                        // cooling_deviceN's N
	char type[THROTTLE_NAME_LEN];   // "cpufreq-cpu6", "thermal-cpufreq-0", "pwm-fan"
	bool caps;                      // it caps a frequency (cpufreq, devfreq, idle injection)
	char domain[THROTTLE_NAME_LEN]; // the domain it caps, "" when its type does not say
	int64_t cur_state;              // -1 unread
	bool counters;                  // stats/time_in_state_ms read
	int64_t state_ms[THROTTLE_MAX_STATES]; // cumulative time per state
	size_t n_states;
};

/**
 * Whole-board signals, the domain "board": x86 CPUs' thermal_throttle counters (cumulative
 * since boot, so throttling between two cycles is seen however short), and the Raspberry Pi's
 * under-voltage alarm (hwmon rpi_volt in0_lcrit_alarm, the firmware's "under-voltage now").
 */
struct throttle_board_reading {
	struct {
		int cpu;
		int64_t events;  // core_throttle_count + package_throttle_count
		int64_t time_ms; // the larger of core/package_throttle_total_time_ms; -1 = no file
	} cpus[THROTTLE_MAX_CPUS];
	size_t n_cpus;  // CPUs read this cycle; 0 = no counters (not x86, or unreadable)
	bool has_alarm; // in0_lcrit_alarm read this cycle
	bool alarm;     // and it said 1: under-voltage
};

/** Everything one cycle read. */
struct throttle_input {
	int64_t ts; // the cycle's stamp, s since epoch
	struct throttle_domain_reading domains[THROTTLE_MAX_DOMAINS];
	size_t n_domains;
	struct throttle_zone_reading zones[THROTTLE_MAX_ZONES];
	size_t n_zones;
	struct throttle_cdev_reading cdevs[THROTTLE_MAX_CDEVS];
	size_t n_cdevs;
	struct throttle_board_reading board;
};

enum throttle_cause { THROTTLE_CAUSE_CAP, THROTTLE_CAUSE_THERMAL };
enum throttle_method { THROTTLE_METHOD_POLL, THROTTLE_METHOD_COUNTERS };

struct throttle_cooling {
	char type[THROTTLE_NAME_LEN];
	int dev;       // cooling_deviceN's N, -1 unknown (read back from the store)
	int64_t state; // the deepest state seen during the episode
};

/** One episode, open (end 0) or closed. */
struct throttle_episode {
	int64_t row; // the caller's handle (the store's row id); 0 = none yet
	char domain[THROTTLE_NAME_LEN];
	int64_t start;       // s since epoch: the first cycle that saw it
	int64_t end;         // the first cycle that saw it released; 0 = open
	int64_t last_seen;   // the last cycle that saw it
	int64_t duration_ms; // end - start, or last_seen - start while open; counters:
			     // the counted time in the interval
	int64_t min_hz;      // the deepest cap seen; 0 = unknown (counters)
	int64_t max_hz;      // the hardware maximum
	enum throttle_cause cause;
	enum throttle_method method;
	char zone[THROTTLE_NAME_LEN]; // the zone that explains it, "" = none
	int trip;                     // that zone's trip index, -1 = none
	int64_t trip_temp_mc, trip_hyst_mc;
	bool have_temp;
	int64_t temp_start_mc, temp_peak_mc;
	struct throttle_cooling cooling[THROTTLE_MAX_COOLING];
	size_t n_cooling;
	bool stuck;
	int64_t cool_since; // since when every bound zone is below trip - hyst; 0 = not
};

/** A domain's state for /metrics. */
struct throttle_domain_state {
	char name[THROTTLE_NAME_LEN];
	bool throttled;
	int64_t ms[2]; // throttled time since the tracker started, by enum throttle_cause
};

struct throttle_tracker;

struct throttle_tracker *throttle_tracker_create(void);
void throttle_tracker_destroy(struct throttle_tracker *t); // accepts NULL

/**
 * Feeds one cycle. Opens an episode for a domain newly capped, deepens and explains open ones,
 * closes those released (at this cycle's stamp) or whose domain vanished (at the last cycle
 * that saw them), and adds closed counter episodes for domains a capping cooling device was
 * active on between the previous cycle and this one while the polls saw no cap. A stamp not
 * after the previous one is ignored.
 */
void throttle_tracker_update(struct throttle_tracker *t, const struct throttle_input *in);

/**
 * The episodes this update touched: those closed by it, then every open one. Valid until the
 * next update; the caller may set ->row, which an open episode keeps.
 */
struct throttle_episode *const *throttle_tracker_episodes(struct throttle_tracker *t, size_t *n);

/** Copies up to @max domains seen since the tracker started (in the order first seen) into
 * @out; returns how many. */
size_t throttle_tracker_domains(const struct throttle_tracker *t, struct throttle_domain_state *out,
				size_t max);

/** Starts the domains' throttled times (throttle_tracker_domains()) over from 0, the episodes
 * kept: a tracker fed a replayed history (the demo's) goes on live counting from there. */
void throttle_tracker_zero_totals(struct throttle_tracker *t);

/** True when the domain reading is a cap: both read, and the effective max below the max. */
bool throttle_capped(const struct throttle_domain_reading *d);
/** True when a cooling device of @type caps frequencies (not a fan). */
bool throttle_cdev_caps(const char *type);

const char *throttle_cause_name(enum throttle_cause cause);    // "cap", "thermal"
const char *throttle_method_name(enum throttle_method method); // "poll", "counters"

#endif
