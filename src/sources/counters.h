/*
 * Kernel residency and energy counters read at a run's start and stop (cpufreq time_in_state,
 * devfreq trans_stat, cooling-device time_in_state_ms, hwmon energy*_input), their deltas, and
 * trapezoid integration of power samples when no counter exists. Parsers and arithmetic are
 * pure; the readers take the sysfs root as an fd.
 */
#ifndef COUNTERS_H
#define COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The kernel's formats of residency tables. */
enum counters_format {
	/* cpufreq policyN/stats/time_in_state: "<kHz> <time>" lines, time in 10 ms units */
	COUNTERS_FORMAT_CPUFREQ,
	/* devfreq <dev>/trans_stat: a transition matrix whose rows are "<Hz>:" and whose last
	 * column is time(ms); "Not Supported." when the device has no frequency table */
	COUNTERS_FORMAT_DEVFREQ,
	/* cooling_deviceN/stats/time_in_state_ms: "state<N>\t<ms>" lines */
	COUNTERS_FORMAT_COOLING,
};

/** One level's cumulative residency. */
struct counters_level {
	int64_t level;   // frequency in Hz (cpufreq, devfreq) or cooling state index
	int64_t time_ms; // time spent at this level since the counter started
};

/** A residency table as read at one moment; levels sorted ascending, no duplicates. */
struct counters_table {
	struct counters_level *levels;
	size_t n;
};

/**
 * Parses the text of a residency file in @format into @out (levels allocated; free with
 * counters_table_finish()). Returns 0, -ENOTSUP for devfreq's "Not Supported." (no table),
 * -ENODATA for an empty file, or -EBADMSG for text that is not the format.
 */
int counters_parse(enum counters_format format, const char *text, struct counters_table *out);
/**
 * Reads and parses @path relative to @root_fd. Returns 0, or what the parse returns, or the
 * read's negative errno: -ENOENT when the kernel has no such counter (CONFIG_CPU_FREQ_STAT or
 * CONFIG_THERMAL_STATISTICS off), -EFBIG when the kernel refuses a table over one page.
 */
int counters_read(int root_fd, const char *path, enum counters_format format,
		  struct counters_table *out);
/** Frees the levels; accepts a zeroed table. */
void counters_table_finish(struct counters_table *table);

/** What one device did between two snapshots. */
struct counters_residency {
	struct counters_level *levels; // the same levels as the snapshots, time_ms = the delta
	size_t n;
	int64_t total_ms;     // sum of the deltas
	int64_t top_level;    // the highest level in the table (highest available frequency)
	int64_t below_top_ms; // time at any level below top_level (cooling: time at state 0 is
			      // "below"; use active_ms there)
	int64_t active_ms; // time at any level above the lowest (cooling: state > 0)
};

/**
 * The residency between @start and @stop (the same file read at a run's start and stop).
 * Returns 0, or -ESTALE when the two cannot be compared: the levels differ (the policy was
 * re-created) or a counter went backwards (someone wrote `reset`); the caller then falls back
 * to samples and says so. @out is allocated; free with counters_residency_finish().
 */
int counters_residency(const struct counters_table *start, const struct counters_table *stop,
		       struct counters_residency *out);
void counters_residency_finish(struct counters_residency *r); // accepts a zeroed struct

/**
 * Time with any of @n cooling devices active (state > 0), from their residencies over the same
 * run. Per-device counters cannot tell whether two devices were active at the same moment,
 * so the answer is a range: *low_ms = the longest single device's active time, *high_ms = the
 * sum of them, at most the run. The two are equal when at most one device was active.
 */
void counters_cooling_any(const struct counters_residency *devices, size_t n, int64_t *low_ms,
			  int64_t *high_ms);

/** How an energy delta was obtained. */
enum counters_energy_method {
	COUNTERS_ENERGY_DELTA, // stop - start
	COUNTERS_ENERGY_WRAP,  // the counter passed its documented maximum and restarted at 0
	COUNTERS_ENERGY_RESET, // it went backwards with no known maximum: counted from 0
};

/**
 * The energy in joules between two readings of a cumulative µJ counter (hwmon energy*_input,
 * powercap energy_uj). A decrease is a wrap when @max_uj (the documented range, e.g.
 * max_energy_range_uj) is nonzero and a reset otherwise, in which case the energy since the
 * reset (@stop_uj) is all that is known. Returns the method.
 */
enum counters_energy_method counters_energy_delta(uint64_t start_uj, uint64_t stop_uj,
						  uint64_t max_uj, double *joules);
const char *counters_energy_method_name(enum counters_energy_method method);

/** A power sample for integration: NAN power marks a failed read (a gap). */
struct counters_power_sample {
	double t_s;     // monotonic seconds
	double power_w; // watts
};

/** The result of integrating power over a run. */
struct counters_integral {
	double joules;    // energy over the covered part of the run
	double coverage;  // covered time / run time, 0..1
	double covered_s; // time between usable sample pairs inside the run
	size_t n_samples; // valid samples inside the run
};

/**
 * Trapezoid integration of @n samples (in time order) over the run [@start_s, @stop_s]:
 * each pair of consecutive valid samples at most @max_gap_s apart contributes
 * (t1 - t0)(p0 + p1) / 2, clipped to the run with linear interpolation at its edges. Nothing
 * is extrapolated: a pair further apart, or a NAN between, is a gap, and @out->coverage says
 * how much of the run the energy covers. Returns 0, or -ENODATA when no pair covers any of
 * the run (fewer than two usable samples: no energy, never 0 J), or -EINVAL for a run that
 * does not end after it starts.
 */
int counters_integrate_power(const struct counters_power_sample *samples, size_t n, double start_s,
			     double stop_s, double max_gap_s, struct counters_integral *out);

/** hwmon power*_input / power*_average (µW) in watts. */
double counters_power_hwmon_w(int64_t uw);
/** hwmon in*_input (mV) times curr*_input (mA) in watts. */
double counters_power_vi_w(int64_t mv, int64_t ma);
/** IIO in_powerY_raw × in_powerY_scale (milliwatts, unlike hwmon) in watts. */
double counters_power_iio_w(double raw, double scale);

/* --- snapshots: the counter files as read at one moment (a run's start, its stop) --------- */

enum counters_snap_kind {
	COUNTERS_SNAP_CPUFREQ, // cpufreq/policyN: stats/time_in_state
	COUNTERS_SNAP_DEVFREQ, // devfreq/NAME: trans_stat
	COUNTERS_SNAP_COOLING, // cooling/TYPE#N: stats/time_in_state_ms
	COUNTERS_SNAP_ENERGY,  // hwmon/CHIP/energyN: energyN_input (uJ)
	COUNTERS_SNAP_KINDS,
};

/* One counter file's text; parsed only when two snapshots are differenced. */
struct counters_snap_file {
	enum counters_snap_kind kind;
	char *key;  // "cpufreq/policy4", "devfreq/fdab0000.npu", "cooling/pwm-fan#2",
		    // "hwmon/ina238/energy1"
	char *path; // relative to the sysfs root
	char *text; // as read, its trailing newline removed
};

struct counters_snapshot {
	struct counters_snap_file *files;
	size_t n, cap;
};

/** Reads every residency and energy counter the kernel offers under @root_fd into @s. */
void counters_snapshot_read(int root_fd, struct counters_snapshot *s);
/** Appends a file to @s, which takes @key, @path and @text (allocated). */
void counters_snapshot_add(struct counters_snapshot *s, enum counters_snap_kind kind, char *key,
			   char *path, char *text);
void counters_snapshot_finish(struct counters_snapshot *s); // accepts a zeroed snapshot
/** The file of @s read from @path, or NULL. */
const struct counters_snap_file *counters_snapshot_find(const struct counters_snapshot *s,
							const char *path);
/** "cpufreq", "devfreq", "cooling", "energy"; and back (false for another name). */
const char *counters_snap_kind_name(enum counters_snap_kind kind);
bool counters_snap_kind_parse(const char *name, enum counters_snap_kind *out);

#endif
