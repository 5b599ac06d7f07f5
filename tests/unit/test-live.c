/* live: deep copies in and out, and a consistent snapshot while a writer thread publishes. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "live.h"
#include "test.h"

#define N_CH 4

static void make_cycle(struct channel *ch, struct reading *rd, char names[N_CH][48], int64_t k) {
	for (int i = 0; i < N_CH; i++) {
		snprintf(names[i], sizeof(names[i]), "thermal/zone%d-%lld", i, (long long)k);
		ch[i] = (struct channel){.key = names[i],
					 .source = "thermal",
					 .label = names[i],
					 .kind = CHANNEL_KIND_TEMPERATURE,
					 .unit = "celsius",
					 .resolution = 0.001};
		rd[i] = (struct reading){.value = (double)k, .err = i == 3 ? -EIO : 0};
	}
}

static void test_copies(void) {
	struct live *live = live_create();
	struct live_snapshot snap = {0};

	live_snapshot(live, &snap);
	is_int(snap.ts, 0, "before the first cycle ts is 0");
	is_int(snap.n, 0, "before the first cycle there are no channels");
	ok(snap.channels == NULL && snap.capacitors == NULL, "empty snapshot has no arrays");
	live_snapshot_finish(&snap);

	struct channel ch[N_CH];
	struct reading rd[N_CH];
	char names[N_CH][48];
	make_cycle(ch, rd, names, 7);
	struct cycle cycle = {.ts = 1787000000, .n = N_CH, .channels = ch, .readings = rd};
	struct live_health health = {.started = 1786990000,
				     .interval_ms = 60000,
				     .cycles_total = 3,
				     .cycle_seconds = 0.012,
				     .clock = CLOCK_STATE_SYNCED};
	live_publish(live, &cycle, &health);
	// The publisher's buffers are its own: overwrite them after publishing.
	make_cycle(ch, rd, names, 99);

	live_snapshot(live, &snap);
	is_int(snap.ts, 1787000000, "ts copied");
	is_int(snap.n, N_CH, "channel count copied");
	is_str(snap.channels[0].key, "thermal/zone0-7", "key deep-copied");
	ok(snap.channels[0].key != names[0], "key is not the publisher's pointer");
	is_str(snap.channels[2].unit, "celsius", "unit kept");
	is_near(snap.readings[1].value, 7, 0, "reading copied");
	is_int(snap.readings[3].err, -EIO, "missing value kept as an error");
	is_int(snap.health.cycles_total, 3, "health copied");
	is_int(snap.health.clock, CLOCK_STATE_SYNCED, "clock state copied");

	// A failed cycle updates health only; the last values stay.
	health.cycles_failed = 1;
	live_publish(live, NULL, &health);
	struct live_snapshot snap2 = {0};
	live_snapshot(live, &snap2);
	is_int(snap2.n, N_CH, "NULL cycle keeps the channels");
	is_int(snap2.health.cycles_failed, 1, "NULL cycle updates health");
	live_snapshot_finish(&snap2);

	char cap_name[] = "C12 input bulk";
	char cap_sensor[] = "iio/maxim_thermocouple/temp";
	struct capstate caps[] = {{.name = cap_name,
				   .sensor = cap_sensor,
				   .consumed_fraction = 0.25,
				   .remaining_h = 12000,
				   .effective_life_h = 16000}};
	live_publish_capacitors(live, caps, 1);
	cap_name[0] = 'X';
	live_snapshot(live, &snap2);
	is_int(snap2.n_capacitors, 1, "capacitor count");
	is_str(snap2.capacitors[0].name, "C12 input bulk", "capacitor name deep-copied");
	is_near(snap2.capacitors[0].consumed_fraction, 0.25, 0, "consumed fraction copied");
	live_snapshot_finish(&snap2);
	ok(snap2.capacitors == NULL && snap2.n == 0, "finish zeroes the snapshot");

	live_publish_capacitors(live, NULL, 0);
	live_snapshot(live, &snap2);
	is_int(snap2.n_capacitors, 0, "capacitors cleared");
	live_snapshot_finish(&snap2);

	// The old snapshot survives further publishing and destruction.
	live_destroy(live);
	is_str(snap.channels[3].label, "thermal/zone3-7", "snapshot outlives the live state");
	live_snapshot_finish(&snap);
	live_snapshot_finish(&snap); // a zeroed struct is accepted
	live_destroy(NULL);
}

/* A steady channel list (the usual cycle): readings replaced in place, channels kept. */
static void test_steady(void) {
	struct live *live = live_create();
	struct channel ch[N_CH];
	struct reading rd[N_CH];
	char names[N_CH][48];
	make_cycle(ch, rd, names, 1);
	struct cycle cycle = {.ts = 60, .n = N_CH, .channels = ch, .readings = rd};
	live_publish(live, &cycle, NULL);
	struct live_snapshot first = {0};
	live_snapshot(live, &first);

	rd[0].value = 42.5;
	rd[3] = (struct reading){.value = 7, .err = 0};
	cycle.ts = 120;
	live_publish(live, &cycle, NULL);
	struct live_snapshot snap = {0};
	live_snapshot(live, &snap);
	is_int(snap.ts, 120, "the steady cycle's stamp");
	is_near(snap.readings[0].value, 42.5, 0, "the steady cycle's reading");
	is_int(snap.readings[3].err, 0, "an error cleared");
	is_str(snap.channels[1].key, "thermal/zone1-1", "the channels kept");
	is_near(first.readings[0].value, 1, 0, "an earlier snapshot keeps its own readings");
	live_snapshot_finish(&snap);

	ch[2].label = "renamed"; // a changed label is a changed list: copied anew
	cycle.ts = 180;
	live_publish(live, &cycle, NULL);
	live_snapshot(live, &snap);
	is_str(snap.channels[2].label, "renamed", "a changed channel is published");
	is_int(snap.ts, 180, "with its cycle");
	live_snapshot_finish(&snap);
	live_snapshot_finish(&first);
	live_destroy(live);
}

struct writer {
	struct live *live;
	int cycles;
	bool steady; // the same channel names every cycle
};

static void *writer_run(void *arg) {
	struct writer *w = arg;
	struct channel ch[N_CH];
	struct reading rd[N_CH];
	char names[N_CH][48];
	for (int k = 1; k <= w->cycles; k++) {
		make_cycle(ch, rd, names, w->steady ? 0 : k);
		for (int i = 0; i < N_CH; i++) {
			rd[i].value = (double)k;
		}
		struct cycle cycle = {.ts = k, .n = N_CH, .channels = ch, .readings = rd};
		struct live_health health = {.cycles_total = k};
		live_publish(w->live, &cycle, &health);
	}
	return NULL;
}

static void test_concurrent(bool steady) {
	struct live *live = live_create();
	struct writer w = {.live = live, .cycles = 20000, .steady = steady};
	pthread_t t;
	pthread_create(&t, NULL, writer_run, &w);
	int inconsistent = 0, snaps = 0;
	int64_t last = 0;
	bool monotonic = true;
	while (last < w.cycles) {
		struct live_snapshot s = {0};
		live_snapshot(live, &s);
		snaps++;
		if (s.ts < last) {
			monotonic = false;
		}
		last = s.ts;
		if (s.ts > 0) {
			char want[48];
			snprintf(want, sizeof(want), "thermal/zone1-%lld",
				 (long long)(steady ? 0 : s.ts));
			if (s.n != N_CH || s.health.cycles_total != s.ts ||
			    s.readings[0].value != (double)s.ts ||
			    strcmp(s.channels[1].key, want) != 0) {
				inconsistent++;
			}
		}
		live_snapshot_finish(&s);
	}
	pthread_join(t, NULL);
	is_int(inconsistent, 0, "every snapshot is one whole cycle");
	ok(monotonic, "snapshots never go back in time");
	ok(snaps > 0, "reader took snapshots");
	live_destroy(live);
}

int main(void) {
	test_copies();
	test_steady();
	test_concurrent(false);
	test_concurrent(true);
	return test_done();
}
