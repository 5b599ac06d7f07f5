/*
 * The board as it stands, once, for a campaign's fingerprint: what two boards of one model must
 * share for their figures to compare (docs/CAMPAIGN.md): each CPU cluster's hardware maximum,
 * frequency table and governor; each devfreq device's governor and tunables (the DMC's
 * upthreshold); the thermal zones' trips and the cooling devices bound to them; RAM; kernel and
 * its command line; the device tree's model and compatible; the NPU driver's version where
 * debugfs shows it. Read through the sources' readers under the configured roots, so a test's
 * tree and the demo's board answer as a real one does; what cannot be read is null.
 */
#ifndef BOARDINFO_H
#define BOARDINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

/**
 * Writes the board's description as one JSON object to @j: "model", "compatible" (a list),
 * "kernel", "cmdline", "ram_bytes", "npu_driver", "cpufreq" (per policy: "policy", "cpus",
 * "cpuinfo_max_hz", "frequencies_hz", "governor"), "devfreq" (per device: "name", "governor",
 * "min_hz", "max_hz", "frequencies_hz", "tunables": {file: text}), "thermal" (per zone:
 * "zone", "type", "policy", "trips": [{"type", "temp_c", "hyst_c"}], "cooling": [{"device",
 * "type", "trip"}]), "cooling" (per device: "device", "type", "max_state").
 */
void boardinfo_json(const char *sysfs_root, const char *procfs_root, const char *debugfs_root,
		    struct json *j);

/**
 * The types of the cooling devices bound to a passive trip of some zone (the channel keys'
 * "cooling/TYPE" part), each once, in device order: what a campaign's gate wants at state 0.
 * A NULL-terminated array (free each and the array), never NULL.
 */
char **boardinfo_passive_cooling(const char *sysfs_root);

#endif
