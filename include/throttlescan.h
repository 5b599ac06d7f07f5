/*
 * The throttle tracker's readings from sysfs: each cpufreq policy's and devfreq device's
 * effective and hardware maxima, each thermal zone's temperature, trips (with hysteresis) and
 * bindings, each cooling device's state and time_in_state_ms counters. Read once per cycle.
 */
#ifndef THROTTLESCAN_H
#define THROTTLESCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "throttle.h"

/**
 * Fills @in's domains, zones and cooling devices from the sysfs tree at @root_fd (@in->ts is
 * the caller's). What cannot be read is left out (a domain without both maxima, a zone without
 * a type) or marked unread (a zone's temp, a device's counters); never fails.
 */
void throttlescan_read(int root_fd, struct throttle_input *in);

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
