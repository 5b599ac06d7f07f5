/*
 * The shared test fixture: three channels as the sampler reports them (two thermal zones and
 * the NPU's devfreq) and a seeded history of them in an in-memory store, with the generated
 * values kept for reference answers.
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "channel.h"

#define FIXTURE_T0       1787000000 // 2026-08-17T21:33:20Z: deliberately not on an hour
#define FIXTURE_CYCLES   3000       // 50 hours of minutes
#define FIXTURE_CHANNELS 3

struct store;

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
