/*
 * One sampling cycle: the unit the sampler reads, the store writes whole, the live snapshot
 * publishes and the capacitor tracker adds. A header of its own so none of them needs another's.
 */
#ifndef CYCLE_H
#define CYCLE_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "clock.h"

/** One sampling cycle, stored whole or not at all. */
struct cycle {
	int64_t ts;          // s since epoch, UTC: the cycle's wall-clock stamp
	const char *boot_id; // may be NULL
	enum clock_state clock;
	size_t n;
	const struct channel *channels; // borrowed, n entries
	const struct reading *readings; // borrowed, n entries; err != 0 stores nothing
	// Nonzero: equal values promise the same channel list, described the same, so a consumer
	// that checked one cycle's channels may skip checking the next
	// (sampler_channels_version()). 0: no promise, compare.
	uint64_t channels_version;
};

#endif
