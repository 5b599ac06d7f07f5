/*
 * The throttle tracker's readings from sysfs. throttlescan_create() walks the tree once: each
 * cpufreq policy's and devfreq device's hardware maximum, the thermal zones that can explain a
 * cap (a passive trip or a bound cooling device) with their trips (and hysteresis) and
 * bindings, each cooling device's type and the domain it caps. Each cycle throttlescan_read()
 * reads only what moves, through files held open: the caps, those zones' temperatures, the
 * cooling devices' cur_state and (for devices that cap) time_in_state_ms. What appears or goes
 * later, or a trip moved, is seen by the next create (the daemon makes one when a rescan
 * changes its channels, and at a reload).
 */
#ifndef THROTTLESCAN_H
#define THROTTLESCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "throttle.h"

struct sampler;

struct throttlescan;

/**
 * The topology of the sysfs tree at @root_fd (borrowed: it must outlive the handle). What
 * cannot be read is left out (a domain without a hardware maximum, a zone without a type, a
 * cooling device without one); never fails.
 */
struct throttlescan *throttlescan_create(int root_fd);
void throttlescan_destroy(struct throttlescan *ts); // accepts NULL

/** How many domains, zones and cooling devices @ts reads each cycle. */
void throttlescan_counts(const struct throttlescan *ts, size_t *domains, size_t *zones,
			 size_t *cdevs);

/**
 * What a limit left out (THROTTLE_MAX_ZONES, _CDEVS, _DOMAINS, _CPUS, _TRIPS, _BINDS), each
 * with how many and the first: "8 thermal zones past the first 32 left out (thermal_zone40
 * on: ...)"; NULL when nothing was. The daemon says it once (it is the board's, not a cycle's).
 */
const char *throttlescan_limits(const struct throttlescan *ts);

/**
 * Fills @in's domains, zones and cooling devices with this cycle's readings (@in->ts is the
 * caller's): a domain whose cap cannot be read (an offline policy) is left out this cycle, a
 * zone's unread temperature is marked invalid, a device's unread state -1 and unread counters
 * absent. A zone's temperature and a device's state that @same_pass (the sampler of this
 * cycle, on the same root; may be NULL) read in its last pass are taken from it, not read
 * again (sampler_file_int()). Never fails.
 */
void throttlescan_read(struct throttlescan *ts, struct throttle_input *in,
		       const struct sampler *same_pass);

/**
 * The domain a cooling device of @type caps, from its type: "cpufreq-cpuN" the policy whose
 * related CPUs hold N (@policy_cpus[i] lists policy i's, @n_policies of them, named
 * @policy_names[i]), "thermal-cpufreq-N" the N-th policy, "devfreq-NAME" "devfreq/NAME".
 * Writes "" into @out when the type does not say.
 */
void throttlescan_cdev_domain(const char *type, const char *const *policy_names,
			      const char *const *policy_cpus, size_t n_policies,
			      char out[static THROTTLE_NAME_LEN]);

/** The highest number in @text (devfreq available_frequencies: "300000000 400000000 ..."). */
bool throttlescan_top_frequency(const char *text, int64_t *hz);

#endif
