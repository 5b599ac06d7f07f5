/* The shared unit-test fixture (fixture.h): the seeded history and its channels. */
#include "fixture.h"

#include <errno.h>

#include "store.h"

struct channel fixture_channels[FIXTURE_CHANNELS] = {
	{FIXTURE_BIGCORE0_THERMAL, .label = "bigcore0"},
	{FIXTURE_SOC_THERMAL, .label = "SoC"},
	{FIXTURE_NPU, .label = "NPU",
	 .meta = "{\"governor\":\"rknpu_ondemand\",\"min_freq\":300000000,"
		 "\"max_freq\":1000000000}"},
};

struct fixture_history fixture_hist;

struct store *fixture_store(uint64_t (*rand)(void)) {
	struct store *store;
	if (store_open(&store, ":memory:", STORE_MODE_WRITE) < 0) {
		return NULL;
	}
	const int64_t opp[] = {300000000, 600000000, 800000000, 1000000000};
	int64_t ts = FIXTURE_T0;
	store_begin(store);
	for (int i = 0; i < FIXTURE_CYCLES; i++) {
		ts += i == 1500 ? 3 * 3600 : 60; // a three-hour gap in the middle
		fixture_hist.ts[i] = ts;
		fixture_hist.unsynced[i] = i >= 100 && i < 130; // half an hour before NTP
		struct reading r[FIXTURE_CHANNELS];
		for (int c = 0; c < FIXTURE_CHANNELS; c++) {
			int64_t q = c == 2 ? opp[rand() % 4]
					   : 40000 + (int64_t)(rand() % 35) * 1000 + (c ? 0 : 769);
			r[c] = (struct reading){.value =
							(double)q * fixture_channels[c].resolution};
			if (c == 1 && i % 97 == 5) {
				r[c].err = -ENODEV; // a missed reading: no value, never a fake 0
			}
			fixture_hist.q[i][c] = q;
			fixture_hist.have[i][c] = r[c].err == 0;
		}
		struct cycle cy = {.ts = ts,
				   .boot_id = "b1",
				   .clock = fixture_hist.unsynced[i] ? CLOCK_STATE_UNSYNCED
								     : CLOCK_STATE_SYNCED,
				   .n = FIXTURE_CHANNELS,
				   .channels = fixture_channels,
				   .readings = r};
		if (store_write_cycle(store, &cy) < 0) {
			store_close(store);
			return NULL;
		}
	}
	store_commit(store);
	return store;
}
