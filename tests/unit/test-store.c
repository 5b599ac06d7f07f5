/* The store: schema and migrations, cycles, channels, rollups, retention, readers, backup. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "buf.h"
#include "codec.h"
#include "fixture.h"
#include "log.h"
#include "store.h"
#include "test.h"
#include "xalloc.h"

#define T0 1787000400 // 2026-08-17T21:00:00Z, an hour boundary (T0 % 3600 == 0)

static char tmpdir[] = "/tmp/test-store-XXXXXX";

static char *tmp_path(const char *name) {
	return xasprintf("%s/%s", tmpdir, name);
}

static int exec_raw(const char *path, const char *sql);

static void remove_db(const char *path) {
	const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < 4; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		unlink(p);
		free(p);
	}
}

/* Three channels like the sampler's: a zone (m°C), a cpufreq policy (kHz) and a fan state. */
static struct channel chans[] = {
	{FIXTURE_SOC_THERMAL, .label = "SoC", .path = "class/thermal/thermal_zone0/temp"},
	{FIXTURE_POLICY4, .label = "big cores 0"},
	{FIXTURE_PWM_FAN, .label = "fan", .meta = "{\"max_state\":4}"},
};
#define N_CHANS 3

static int put(struct store *store, int64_t ts, enum clock_state clock, const double *values,
	       const int *errs) {
	struct reading r[N_CHANS];
	for (int i = 0; i < N_CHANS; i++) {
		r[i] = (struct reading){.value = values[i], .err = errs ? errs[i] : 0};
	}
	struct cycle c = {.ts = ts,
			  .boot_id = "3f1c0f7e-5b0a-4a43-9c1e-2f0d2b1a9e11",
			  .clock = clock,
			  .n = N_CHANS,
			  .channels = chans,
			  .readings = r};
	return store_write_cycle(store, &c);
}

struct collect {
	struct store_sample s[256];
	size_t n;
	int stop_after;
};

/* Sum, min, max and lowest bin of the rollups seen. */
struct rollup_sum {
	int64_t sum, min, max, bin0;
	size_t n;
};

static int rollup_first(void *ctx, const struct store_rollup *r) {
	struct rollup_sum *s = ctx;
	s->sum += r->sum_q;
	s->min = s->n == 0 || r->min_q < s->min ? r->min_q : s->min;
	s->max = s->n == 0 || r->max_q > s->max ? r->max_q : s->max;
	s->bin0 = s->n == 0 && r->n_bins ? r->bin_q[0] : s->bin0;
	s->n++;
	return 0;
}

static int collect_sample(void *ctx, const struct store_sample *s) {
	struct collect *c = ctx;
	if (c->n < 256) {
		c->s[c->n] = *s;
	}
	c->n++;
	return c->stop_after && (int)c->n == c->stop_after ? 42 : 0;
}

static int64_t channel_id(struct store *store, const char *key) {
	struct store_channel *list;
	size_t n;
	int64_t id = -1;
	if (store_channels(store, &list, &n) < 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].ch.key, key) == 0) {
			id = list[i].id;
		}
	}
	store_channels_free(list, n);
	return id;
}

static void test_open_memory(void) {
	struct store *store;
	is_int(store_open(&store, ":memory:", STORE_MODE_WRITE), 0, "open :memory:");
	struct store_info info;
	is_int(store_info(store, &info), 0, "info on an empty store");
	is_int(info.cycles, 0, "no cycles");
	is_int(info.last_cycle, 0, "last_cycle 0 when empty");
	char *v = NULL;
	is_int(store_state_get(store, "nothing", &v), -ENOENT, "missing state is -ENOENT");
	ok(v == NULL, "missing state leaves NULL");
	store_close(store);
	store_close(NULL);
}

static void test_cycle_round_trip(void) {
	struct store *store;
	is_int(store_open(&store, ":memory:", STORE_MODE_WRITE), 0, "open");
	// 41.234 °C, 1.8 GHz in kHz steps, fan state 3; the second cycle misses the fan.
	double v1[] = {41.234, 1800000000, 3};
	double v2[] = {-12.5, 408000000, 0};
	int e2[] = {0, 0, -ENODATA};
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v1, NULL), 0, "first cycle stored");
	is_int(put(store, T0 + 60, CLOCK_STATE_UNKNOWN, v2, e2), 0, "second cycle stored");
	is_int(put(store, T0 + 60, CLOCK_STATE_SYNCED, v1, NULL), -EEXIST, "same ts refused");

	struct collect c = {0};
	is_int(store_scan_samples(store, 0, INT64_MAX, NULL, 0, false, collect_sample, &c), 0,
	       "scan all");
	is_int(c.n, 5, "five values: the missing reading stored no row");
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	int64_t cpu = channel_id(store, "cpufreq/policy4");
	int64_t fan = channel_id(store, "cooling/pwm-fan");
	ok(soc > 0 && cpu > 0 && fan > 0, "channels registered");
	is_int(c.s[0].ts, T0, "ordered by ts");
	ok(c.s[0].channel_id < c.s[1].channel_id && c.s[1].channel_id < c.s[2].channel_id,
	   "then by channel id");
	for (size_t i = 0; i < 3; i++) {
		int64_t want = c.s[i].channel_id == soc   ? 41234
			       : c.s[i].channel_id == cpu ? 1800000
							  : 3;
		is_int(c.s[i].q, want, "quantized exactly (q = llround(value / resolution))");
	}
	is_int(c.s[0].clock, CLOCK_STATE_SYNCED, "clock state kept");
	is_int(c.s[3].ts, T0 + 60, "second cycle");
	is_int(c.s[3].clock, CLOCK_STATE_UNKNOWN, "unknown clock kept");
	bool neg = false;
	for (size_t i = 3; i < 5; i++) {
		neg |= c.s[i].channel_id == soc && c.s[i].q == -12500;
	}
	ok(neg, "negative values round trip");

	struct collect only = {0};
	int64_t ids[] = {cpu};
	store_scan_samples(store, 0, INT64_MAX, ids, 1, false, collect_sample, &only);
	is_int(only.n, 2, "channel filter");
	is_int(only.s[1].q, 408000, "filtered value");

	struct collect win = {0};
	store_scan_samples(store, T0 + 1, T0 + 61, NULL, 0, false, collect_sample, &win);
	is_int(win.n, 2, "window is [from, to)");

	struct collect stop = {.stop_after = 2};
	is_int(store_scan_samples(store, 0, INT64_MAX, NULL, 0, false, collect_sample, &stop), 42,
	       "a nonzero callback return stops the scan and is returned");
	is_int(stop.n, 2, "stopped after two");

	struct store_info info;
	store_info(store, &info);
	is_int(info.cycles, 2, "two cycles");
	is_int(info.first_cycle, T0, "first cycle");
	is_int(info.last_cycle, T0 + 60, "last cycle");
	store_close(store);
}

/*
 * The writer remembers where each position of the channel list was found last cycle: a list
 * that changes order, loses a channel, gains a new one or lists one twice still stores every
 * value under its own channel.
 */
static void test_channel_list_changes(void) {
	struct store *store;
	is_int(store_open(&store, ":memory:", STORE_MODE_WRITE), 0, "open");
	struct channel extra = {.key = "thermal/gpu-thermal",
				.source = "thermal",
				.label = "GPU",
				.kind = CHANNEL_KIND_TEMPERATURE,
				.unit = "celsius",
				.resolution = 0.001};
	// Positions: 0 soc, 1 cpu, 2 fan; then reversed; then soc and a new gpu before it; then
	// fan twice (the first value is kept).
	const struct channel *lists[4][3] = {{&chans[0], &chans[1], &chans[2]},
					     {&chans[2], &chans[1], &chans[0]},
					     {&extra, &chans[0], NULL},
					     {&chans[2], &chans[2], &chans[1]}};
	const double values[4][3] = {
		{40.001, 1000000000, 1}, {2, 1200000000, 41.002}, {50.5, 42.003, 0}, {3, 4, 1.4e9}};
	for (int c = 0; c < 4; c++) {
		struct channel ch[3];
		struct reading r[3];
		size_t n = 0;
		for (int i = 0; i < 3 && lists[c][i]; i++) {
			ch[n] = *lists[c][i];
			r[n++] = (struct reading){.value = values[c][i]};
		}
		struct cycle cy = {.ts = T0 + 60 * c,
				   .clock = CLOCK_STATE_SYNCED,
				   .n = n,
				   .channels = ch,
				   .readings = r};
		is_int(store_write_cycle(store, &cy), 0,
		       "cycle with a changed channel list stored");
	}
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	int64_t cpu = channel_id(store, "cpufreq/policy4");
	int64_t fan = channel_id(store, "cooling/pwm-fan");
	int64_t gpu = channel_id(store, "thermal/gpu-thermal");
	struct collect got = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, false, collect_sample, &got);
	struct {
		int64_t ts, id, q;
	} want[] = {{T0, soc, 40001},       {T0, cpu, 1000000},      {T0, fan, 1},
		    {T0 + 60, soc, 41002},  {T0 + 60, cpu, 1200000}, {T0 + 60, fan, 2},
		    {T0 + 120, soc, 42003}, {T0 + 120, gpu, 50500},  {T0 + 180, cpu, 1400000},
		    {T0 + 180, fan, 3}};
	size_t n_want = sizeof(want) / sizeof(want[0]);
	is_int(got.n, n_want, "every value stored once");
	size_t right = 0;
	for (size_t i = 0; i < got.n && i < n_want; i++) {
		bool same = false;
		for (size_t j = 0; j < n_want; j++) {
			same |= got.s[i].ts == want[j].ts && got.s[i].channel_id == want[j].id &&
				got.s[i].q == want[j].q;
		}
		right += same;
	}
	is_int(right, n_want, "each value under its own channel");
	store_close(store);
}

static int copy_file(const char *from, const char *to) {
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[4096];
	size_t n;
	int rc = in && out ? 0 : -errno;
	while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		rc = fwrite(buf, 1, n, out) == n ? 0 : -EIO;
	}
	if (in) {
		fclose(in);
	}
	if (out && fclose(out) != 0 && rc == 0) {
		rc = -EIO;
	}
	return rc;
}

/*
 * A database written before the run form (the portable fixture's rows are pairs) takes new
 * rows in the run form beside its old ones, and both read back.
 */
static void test_mixed_rows(void) {
	char *old = tmp_path("old.db");
	remove_db(old);
	is_int(copy_file("fixtures/db/amd64.db", old), 0, "copy a database of pair rows");
	struct store *store;
	is_int(store_open(&store, old, STORE_MODE_WRITE), 0, "open it as the writer");
	struct store_info info;
	store_info(store, &info);
	struct collect before = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &before);
	double v[] = {41.5, 1800000000, 2};
	int64_t ts = info.last_cycle + 60;
	is_int(put(store, ts, CLOCK_STATE_SYNCED, v, NULL), 0, "a cycle appended to it");
	struct collect c = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &c);
	is_int(c.n, before.n + 3, "the old rows and the new one read back");
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	struct collect last = {0};
	store_scan_samples(store, ts, ts + 1, NULL, 0, true, collect_sample, &last);
	bool found = false;
	for (size_t i = 0; i < last.n; i++) {
		found |= last.s[i].channel_id == soc && last.s[i].q == 41500;
	}
	ok(last.n == 3 && found, "the new row's values under their channels");
	store_close(store);
	remove_db(old);
	free(old);
}

static int count_cycle(void *ctx, const struct store_cycle *c) {
	struct store_cycle *list = ctx;
	size_t i = 0;
	while (list[i].ts != 0) {
		i++;
	}
	list[i] = *c;
	return 0;
}

static void test_unsynced_and_cycles(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	double v[] = {40, 1000000000, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	put(store, T0 + 60, CLOCK_STATE_UNSYNCED, v, NULL);
	put(store, T0 + 120, CLOCK_STATE_UNKNOWN, v, NULL);
	struct collect c = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, false, collect_sample, &c);
	is_int(c.n, 6, "unsynced cycle skipped by default");
	struct collect all = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &all);
	is_int(all.n, 9, "include_unsynced keeps it");
	is_int(all.s[3].clock, CLOCK_STATE_UNSYNCED, "and marks it");

	struct store_cycle cycles[8] = {0};
	is_int(store_scan_cycles(store, T0, T0 + 121, count_cycle, cycles), 0, "scan cycles");
	is_int(cycles[2].ts, T0 + 120, "three cycles in order");
	is_int(cycles[1].clock, CLOCK_STATE_UNSYNCED, "cycle clock state");
	ok(cycles[3].ts == 0, "no more");
	struct store_info info;
	store_info(store, &info);
	is_int(info.unsynced_cycles, 1, "info counts unsynced cycles");
	is_str(clock_state_name(CLOCK_STATE_UNSYNCED), "unsynced", "clock state name");
	store_close(store);
}

static void test_channels(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	double v[] = {40, 1000000000, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	put(store, T0 + 60, CLOCK_STATE_SYNCED, v, NULL);
	put(store, T0 + 3600, CLOCK_STATE_SYNCED, v, NULL);
	struct store_channel *list;
	size_t n;
	is_int(store_channels(store, &list, &n), 0, "list channels");
	is_int(n, 3, "three channels");
	is_str(list[0].ch.key, "cooling/pwm-fan", "ordered by key");
	is_str(list[0].ch.meta, "{\"max_state\":4}", "meta kept");
	is_str(list[2].ch.key, "thermal/soc-thermal", "last key");
	is_str(list[2].ch.label, "SoC", "label");
	is_str(list[2].ch.unit, "celsius", "unit");
	is_int(list[2].ch.kind, CHANNEL_KIND_TEMPERATURE, "kind");
	is_near(list[2].ch.resolution, 0.001, 1e-15, "resolution");
	is_str(list[2].ch.path, "class/thermal/thermal_zone0/temp", "path");
	ok(list[1].ch.path == NULL, "NULL path stays NULL");
	is_int(list[2].first_seen, T0, "first seen");
	is_int(list[2].last_seen, T0 + 3600, "last seen is the last cycle");
	ok(list[2].present, "present");
	store_channels_free(list, n);

	const char *keys[] = {"thermal/soc-thermal", "cpufreq/policy4"};
	is_int(store_mark_present(store, keys, 2, T0 + 3700), 0, "mark present");
	store_channels(store, &list, &n);
	ok(!list[0].present, "the fan is absent");
	ok(list[1].present && list[2].present, "the others present");
	store_channels_free(list, n);

	// The fan comes back: its history is still there and it is present again.
	put(store, T0 + 3660, CLOCK_STATE_SYNCED, v, NULL);
	store_channels(store, &list, &n);
	ok(list[0].present, "a channel seen again is present");
	is_int(list[0].last_seen, T0 + 3660, "last seen within the hour is the last cycle");
	is_int(list[0].first_seen, T0, "and keeps its first_seen");
	store_channels_free(list, n);
	struct collect c = {0};
	int64_t fan = channel_id(store, "cooling/pwm-fan");
	store_scan_samples(store, 0, INT64_MAX, &fan, 1, false, collect_sample, &c);
	is_int(c.n, 4, "history kept across absence");

	// A new label is written through; a coarser resolution keeps the finer stored one.
	chans[0].label = "SoC package";
	chans[0].resolution = 0.5;
	double w[] = {41.234, 1000000000, 1};
	put(store, T0 + 3720, CLOCK_STATE_SYNCED, w, NULL);
	chans[0].label = "SoC";
	chans[0].resolution = 0.001;
	store_channels(store, &list, &n);
	is_str(list[2].ch.label, "SoC package", "label updated on change");
	is_int(list[2].last_seen, T0 + 3720, "last seen is the last cycle, not the hour's first");
	is_near(list[2].ch.resolution, 0.001, 1e-15, "a coarser resolution does not coarsen");
	store_channels_free(list, n);
	struct collect d = {0};
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	store_scan_samples(store, T0 + 3720, T0 + 3721, &soc, 1, false, collect_sample, &d);
	is_int(d.s[0].q, 41234, "quantized with the stored resolution");
	store_close(store);
}

static void test_state(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	is_int(store_state_set(store, "capwatch.c1", "{\"damage\":0.25}"), 0, "state set");
	is_int(store_state_set(store, "capwatch.c1", "{\"damage\":0.5}"), 0, "state overwrite");
	char *v;
	is_int(store_state_get(store, "capwatch.c1", &v), 0, "state get");
	is_str(v, "{\"damage\":0.5}", "latest value");
	free(v);
	store_close(store);
}

/* A transaction open around cycles (the demo's backfill) and an import. */
static void test_transactions(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	double v[] = {40, 1000000000, 1};
	is_int(store_begin(store), 0, "begin");
	for (int i = 0; i < 10; i++) {
		put(store, T0 + 60 * i, CLOCK_STATE_SYNCED, v, NULL);
	}
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v, NULL), -EEXIST,
	       "a refused cycle inside a transaction");
	is_int(store_commit(store), 0, "and the transaction still commits");
	struct store_info info;
	store_info(store, &info);
	is_int(info.cycles, 10, "ten cycles from one transaction");

	store_begin(store);
	put(store, T0 + 6000, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_rollback(store), 0, "rollback");
	store_info(store, &info);
	is_int(info.cycles, 10, "rolled back cycle is gone");
	is_int(put(store, T0 + 6000, CLOCK_STATE_SYNCED, v, NULL), 0,
	       "and its ts can be written again");
	store_close(store);
}

static void test_import(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	double v[] = {40, 1000000000, 1};
	put(store, T0 + 60, CLOCK_STATE_UNSYNCED, v, NULL);
	struct channel ext = {.key = "bench/thermocouple",
			      .kind = CHANNEL_KIND_TEMPERATURE,
			      .unit = "celsius",
			      .resolution = 0.01};
	int64_t id, again;
	is_int(store_channel_ensure(store, &ext, &id), 0, "ensure a new channel");
	is_int(store_channel_ensure(store, &ext, &again), 0, "ensure it again");
	is_int(again, id, "same id");
	int64_t soc;
	is_int(store_channel_ensure(store, &chans[0], &soc), 0, "ensure a known channel");
	is_int(soc, channel_id(store, "thermal/soc-thermal"), "gives its id");
	struct channel bad = {.key = "has space", .resolution = 1};
	int64_t bad_id;
	is_int(store_channel_ensure(store, &bad, &bad_id), -EINVAL, "bad key refused");

	store_begin(store);
	enum store_import_result res;
	is_int(store_insert_sample(store, T0, id, 2512, &res), 0, "import into a new cycle");
	is_int(res, STORE_IMPORT_NEW, "a new value");
	is_int(store_insert_sample(store, T0 + 60, id, 2600, &res), 0,
	       "import into a daemon cycle");
	is_int(res, STORE_IMPORT_NEW, "merged is new");
	is_int(store_insert_sample(store, T0 + 60, soc, 99999, &res), 0, "existing value kept");
	is_int(res, STORE_IMPORT_CONFLICT, "a different stored value is a conflict");
	is_int(store_insert_sample(store, T0 + 60, soc, 40000, &res), 0, "same value again");
	is_int(res, STORE_IMPORT_IDENTICAL, "the same stored value is identical");
	is_int(store_commit(store), 0, "commit");
	struct collect c = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &c);
	is_int(c.n, 5, "one new cycle value plus one merged");
	is_int(c.s[0].clock, CLOCK_STATE_SYNCED, "imported cycle is synced");
	is_int(c.s[0].q, 2512, "imported q");
	is_int(c.s[1].clock, CLOCK_STATE_UNSYNCED, "a merged value keeps its cycle's clock");
	bool kept = false, merged = false;
	for (size_t i = 1; i < c.n; i++) {
		kept |= c.s[i].channel_id == soc && c.s[i].q == 40000;
		merged |= c.s[i].channel_id == id && c.s[i].q == 2600;
	}
	ok(kept, "re-import does not overwrite");
	ok(merged, "merged into the existing cycle");
	struct store_channel *list;
	size_t n;
	store_channels(store, &list, &n);
	is_str(list[0].ch.key, "bench/thermocouple", "imported channel listed");
	is_str(list[0].ch.source, "import", "source import");
	is_int(list[0].first_seen, T0, "first seen from the data");
	is_int(list[0].last_seen, T0 + 60, "last seen from the data");
	ok(!list[0].present, "imported channels are not live");
	store_channels_free(list, n);
	store_close(store);
}

/*
 * Integers imported before the daemon sees a channel must not coarsen its live readings: the
 * finer live resolution rescales the stored integers exactly, and a later finer import works.
 */
static void test_resolution_refine(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	struct channel imp = {.key = "thermal/soc-thermal",
			      .kind = CHANNEL_KIND_TEMPERATURE,
			      .unit = "celsius",
			      .resolution = 1};
	int64_t id;
	is_int(store_channel_ensure(store, &imp, &id), 0, "import registers at 1 degree");
	store_begin(store);
	store_insert_sample(store, T0 - 7200, id, 45, NULL);
	store_insert_sample(store, T0 - 7140, id, 46, NULL);
	// A later cycle of another channel closes that hour, so it is rolled up.
	struct channel other = {.key = "x/other", .kind = CHANNEL_KIND_OTHER, .resolution = 1};
	int64_t other_id;
	store_channel_ensure(store, &other, &other_id);
	store_insert_sample(store, T0 - 3600, other_id, 1, NULL);
	is_int(store_commit(store), 0, "imported 45, 46");
	is_int(store_maintain(store, T0, 0), 0, "rolled up");
	double v[] = {43.461, 1000000000, 1};
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v, NULL), 0, "a live cycle at 0.001");
	struct store_channel *list;
	size_t n;
	store_channels(store, &list, &n);
	is_near(list[2].ch.resolution, 0.001, 1e-15, "the channel now has the live resolution");
	store_channels_free(list, n);
	struct collect c = {0};
	store_scan_samples(store, 0, INT64_MAX, &id, 1, false, collect_sample, &c);
	is_int(c.n, 3, "three values");
	is_int(c.s[0].q, 45000, "imported 45 rescaled exactly");
	is_int(c.s[1].q, 46000, "imported 46 rescaled exactly");
	is_int(c.s[2].q, 43461, "live 43.461 stored exactly");
	struct rollup_sum r = {0};
	store_scan_rollups(store, T0 - 7200, T0, &id, 1, rollup_first, &r);
	is_int(r.sum, 91000, "rollup sum rescaled");
	is_int(r.min, 45000, "rollup min rescaled");
	is_int(r.max, 46000, "rollup max rescaled");
	is_int(r.bin0, 45000, "histogram rescaled");

	// A later import with finer values refines again (0.001 -> 0.0001).
	double applied = 0;
	is_int(store_channel_refine(store, id, 0.0001, &applied), 0, "finer import refines");
	is_near(applied, 0.0001, 1e-18, "to 0.0001");
	store_begin(store);
	is_int(store_insert_sample(store, T0 - 60, id, 432345, NULL), 0, "import 43.2345");
	store_commit(store);
	struct collect d = {0};
	store_scan_samples(store, 0, INT64_MAX, &id, 1, false, collect_sample, &d);
	is_int(d.s[0].q, 450000, "old values rescaled again");
	is_int(d.s[3].q, 434610, "live value rescaled again");
	store_close(store);
}

/* A daemon's connection sees what an import on another connection did to the channels. */
static void test_import_beside_writer(void) {
	char *path = tmp_path("beside.db");
	struct store *daemon, *import;
	is_int(store_open(&daemon, path, STORE_MODE_WRITE), 0, "daemon connection");
	double v[] = {40, 1000000000, 1};
	put(daemon, T0, CLOCK_STATE_SYNCED, v, NULL); // loads the daemon's channel cache
	is_int(store_open(&import, path, STORE_MODE_WRITE), 0, "import connection");
	int64_t soc = channel_id(import, "thermal/soc-thermal");
	double applied;
	is_int(store_channel_refine(import, soc, 0.0001, &applied), 0, "import refines soc");
	struct channel ext = {.key = "x/new", .kind = CHANNEL_KIND_OTHER, .resolution = 1};
	int64_t id;
	is_int(store_channel_ensure(import, &ext, &id), 0, "import adds a channel");
	store_close(import);
	double w[] = {41.5, 1000000000, 1};
	is_int(put(daemon, T0 + 60, CLOCK_STATE_SYNCED, w, NULL), 0, "the daemon's next cycle");
	struct collect c = {0};
	store_scan_samples(daemon, 0, INT64_MAX, &soc, 1, false, collect_sample, &c);
	is_int(c.n, 2, "two soc values");
	is_int(c.s[0].q, 400000, "the earlier value rescaled by the import");
	is_int(c.s[1].q, 415000, "the daemon quantizes at the import's finer resolution");
	store_close(daemon);
	remove_db(path);
	free(path);
}

/*
 * The daemon's cycle reads neither the history generation nor the runs from the database
 * when nothing changed, yet sees an import by another connection after its next cycle, and
 * its own run writes at once.
 */
static void test_change_marks(void) {
	char *path = tmp_path("marks.db");
	struct store *daemon, *other;
	is_int(store_open(&daemon, path, STORE_MODE_WRITE), 0, "daemon connection");
	double v[] = {40, 1000000000, 1};
	put(daemon, T0, CLOCK_STATE_SYNCED, v, NULL);
	int64_t gen = -1;
	is_int(store_history_generation(daemon, &gen), 0, "generation read");
	is_int(gen, 0, "no import yet");
	struct store_runs_mark m0, m1, m2, m3;
	store_runs_mark(daemon, &m0);
	put(daemon, T0 + 60, CLOCK_STATE_SYNCED, v, NULL);
	store_runs_mark(daemon, &m1);
	ok(m0.others == m1.others && m0.own == m1.own, "own cycles leave the runs mark");

	is_int(store_open(&other, path, STORE_MODE_WRITE), 0, "import connection");
	int64_t soc = channel_id(other, "thermal/soc-thermal");
	is_int(store_insert_sample(other, T0 - 600, soc, 39000, NULL), 0, "import a value");
	struct store_run_import run = {.label = "job",
				       .status = RUN_STATUS_OK,
				       .import_key = "k1",
				       .start_ms = (T0 - 900) * 1000LL,
				       .end_ms = (T0 - 300) * 1000LL,
				       .exit_code = -1,
				       .energy_j = NAN,
				       .temp_max_c = NAN,
				       .rss_max_bytes = NAN};
	is_int(store_run_import(other, &run, NULL), 0, "import a run");
	store_close(other);

	put(daemon, T0 + 120, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_history_generation(daemon, &gen), 0, "generation read again");
	is_int(gen, 1, "the import is seen after the daemon's next cycle");
	store_runs_mark(daemon, &m2);
	ok(m2.others != m1.others, "the runs mark moved for the other connection's commit");

	struct store_run_new mine = {.label = "mine", .start_ms = (T0 + 130) * 1000LL};
	int64_t id;
	is_int(store_run_begin(daemon, &mine, &id), 0, "a run begins through the daemon");
	store_runs_mark(daemon, &m3);
	ok(m3.own != m2.own, "the runs mark moved at once for the daemon's own run");
	store_close(daemon);
	remove_db(path);
	free(path);
}

/* The stored label of channel @key, or "" (owned by a static buffer). */
static const char *stored_label(struct store *store, const char *key) {
	static char label[64];
	struct store_channel *list;
	size_t n;
	label[0] = '\0';
	if (store_channels(store, &list, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			if (strcmp(list[i].ch.key, key) == 0) {
				snprintf(label, sizeof(label), "%s", list[i].ch.label);
			}
		}
		store_channels_free(list, n);
	}
	return label;
}

/*
 * A cycle whose channels_version matches the last committed one skips comparing the channel
 * descriptions; a new version, or another connection's change to the channels, makes the
 * next cycle compare (and restore) them.
 */
static void test_channels_version(void) {
	char *path = tmp_path("version.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open");
	struct channel ch[N_CHANS];
	memcpy(ch, chans, sizeof(ch));
	struct reading r[N_CHANS] = {{.value = 40}, {.value = 1e9}, {.value = 1}};
	struct cycle c = {.ts = T0,
			  .clock = CLOCK_STATE_SYNCED,
			  .n = N_CHANS,
			  .channels = ch,
			  .readings = r,
			  .channels_version = 7};
	is_int(store_write_cycle(store, &c), 0, "a cycle of version 7");
	is_str(stored_label(store, "thermal/soc-thermal"), "SoC", "label stored");

	ch[0].label = "SoC (renamed)";
	c.ts += 60;
	c.channels_version = 8;
	is_int(store_write_cycle(store, &c), 0, "a cycle of version 8, the label changed");
	is_str(stored_label(store, "thermal/soc-thermal"), "SoC (renamed)",
	       "a new version: the new label is stored");

	// Another connection relabels the channel behind the writer's back.
	is_int(exec_raw(path, "UPDATE channels SET label = 'other' WHERE key = "
			      "'thermal/soc-thermal'"),
	       SQLITE_OK, "another connection relabels soc");
	c.ts += 60;
	is_int(store_write_cycle(store, &c), 0, "the same version 8 again");
	is_str(stored_label(store, "thermal/soc-thermal"), "SoC (renamed)",
	       "the other connection's change made the writer compare and restore its label");

	// A cycle inside a transaction that rolls back promises nothing for the next one.
	store_begin(store);
	ch[0].label = "rolled back";
	c.ts += 60;
	c.channels_version = 9;
	store_write_cycle(store, &c);
	store_rollback(store);
	ch[0].label = "SoC (renamed)";
	c.ts += 60;
	c.channels_version = 8;
	is_int(store_write_cycle(store, &c), 0, "version 8 after a rolled-back version 9");
	is_str(stored_label(store, "thermal/soc-thermal"), "SoC (renamed)", "label right");
	store_close(store);
	remove_db(path);
	free(path);
}

/* store_channel_counts() agrees with the list: known channels, and those present. */
static void test_channel_counts(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	size_t total = 9, present = 9;
	is_int(store_channel_counts(store, &total, &present), 0, "counts of an empty database");
	ok(total == 0 && present == 0, "no channels yet");
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	const char *keys[] = {chans[0].key, chans[2].key};
	is_int(store_mark_present(store, keys, 2, T0 + 30), 0, "one channel left the list");
	is_int(store_channel_counts(store, &total, &present), 0, "counts");
	is_int(total, 3, "three channels known");
	is_int(present, 2, "two of them present");
	store_close(store);
}

/* A failing cycle leaves nothing: the database refuses to grow past a page limit. */
static void test_atomic_disk_full(void) {
	char *path = tmp_path("full.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open a file");
	double v[] = {40, 1000000000, 1};
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v, NULL), 0, "first cycle");
	struct store_info before;
	store_info(store, &before);
	store_limit_pages(store, 1); // smaller than the database: every new page fails
	struct channel many[40];
	struct reading r[40];
	char keys[40][32];
	for (int i = 0; i < 40; i++) {
		snprintf(keys[i], sizeof(keys[i]), "hwmon/chip/temp%d", i);
		many[i] = (struct channel){
			.key = keys[i],
			.source = "hwmon",
			.label = keys[i],
			.kind = CHANNEL_KIND_TEMPERATURE,
			.unit = "celsius",
			.resolution = 0.001,
			.meta = "{\"padding\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}"};
		r[i] = (struct reading){.value = 30 + i};
	}
	struct cycle big = {.ts = T0 + 60, .n = 40, .channels = many, .readings = r};
	is_int(store_write_cycle(store, &big), -ENOSPC, "disk full is -ENOSPC");
	struct store_info after;
	store_info(store, &after);
	is_int(after.cycles, before.cycles, "no cycle row left behind");
	struct collect c = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &c);
	is_int(c.n, 3, "no sample left behind");
	ok(channel_id(store, "hwmon/chip/temp0") == -1, "no channel left behind");

	store_limit_pages(store, 1000000);
	is_int(store_write_cycle(store, &big), 0, "the same cycle stores once space returns");
	ok(channel_id(store, "hwmon/chip/temp39") > 0, "with its channels");
	store_close(store);
	remove_db(path);
	free(path);
}

static void test_files(void) {
	char *path = tmp_path("a.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "create a file database");
	store_close(store);
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "reopen it");
	store_close(store);
	// The header: user_version (offset 60) and application_id (offset 68), big-endian.
	unsigned char header[72] = {0};
	FILE *h = fopen(path, "rb");
	ok(h && fread(header, 1, sizeof(header), h) == sizeof(header), "read the header");
	fclose(h);
	ok(memcmp(header, "SQLite format 3", 16) == 0, "a SQLite file");
	is_int(header[60] << 24 | header[61] << 16 | header[62] << 8 | header[63], 7,
	       "user_version is the number of migrations applied");
	ok(memcmp(header + 68, "THLG", 4) == 0, "application_id marks it as thermlog's");
	is_int(store_open(&store, path, STORE_MODE_READ), 0, "a reader opens it");
	struct store_info info;
	is_int(store_info(store, &info), 0, "and reads the applied schema");
	store_close(store);

	// The same file with another application's id is a foreign database.
	char *foreign = tmp_path("foreign.db");
	FILE *src = fopen(path, "rb"), *dst = fopen(foreign, "wb");
	int ch;
	for (long i = 0; (ch = fgetc(src)) != EOF; i++) {
		fputc(i >= 68 && i < 72 ? 0x11 : ch, dst);
	}
	fclose(src);
	fclose(dst);
	is_int(store_open(&store, foreign, STORE_MODE_WRITE), -EMEDIUMTYPE,
	       "a SQLite database of another application is refused");
	remove_db(foreign);
	free(foreign);

	// A database of schema 1 gets the later migrations when a writer opens it.
	store_open(&store, path, STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_UNSYNCED, v, NULL);
	store_close(store);
	// Back to schema 1's version: the later migrations are idempotent but for 0006's ADD
	// COLUMN, so that column goes too (a schema-5 file has no runs.error), and 0007's table.
	sqlite3 *raw = NULL;
	ok(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
		   sqlite3_exec(raw,
				"ALTER TABLE runs DROP COLUMN error; DROP TABLE throttle_episodes; "
				"PRAGMA user_version = 1",
				NULL, NULL, NULL) == SQLITE_OK,
	   "set user_version 1 (and drop runs.error, throttle_episodes)");
	sqlite3_close(raw);
	is_int(store_open(&store, path, STORE_MODE_READ), -EPROTO,
	       "a reader does not migrate an older schema");
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "a writer migrates it");
	store_info(store, &info);
	is_int(info.unsynced_cycles, 1, "data kept across the migration");
	store_close(store);
	h = fopen(path, "rb");
	ok(h && fseek(h, 63, SEEK_SET) == 0 && fgetc(h) == 7, "user_version 7 again");
	fclose(h);

	char *text = tmp_path("text.db");
	FILE *f = fopen(text, "w");
	for (int i = 0; i < 200; i++) {
		fputs("time,channel,value\n", f);
	}
	fclose(f);
	is_int(store_open(&store, text, STORE_MODE_WRITE), -EINVAL, "a text file is refused");
	ok(store == NULL, "no store on error");
	is_int(store_open(&store, text, STORE_MODE_READ), -EINVAL, "also for readers");
	remove_db(text);
	free(text);

	char *missing = tmp_path("missing.db");
	ok(store_open(&store, missing, STORE_MODE_READ) < 0, "a reader does not create");
	ok(access(missing, F_OK) != 0, "no file was created");
	free(missing);

	// A file from a newer thermlog: schema version far ahead.
	char *newer = tmp_path("newer.db");
	store_open(&store, newer, STORE_MODE_WRITE);
	store_close(store);
	// user_version is the big-endian integer at offset 60 of the header (no WAL after close).
	FILE *db = fopen(newer, "r+b");
	ok(db && fseek(db, 60, SEEK_SET) == 0 && fwrite("\0\0\0\x63", 1, 4, db) == 4,
	   "set user_version 99 in the file header");
	fclose(db);
	is_int(store_open(&store, newer, STORE_MODE_WRITE), -ENOTSUP, "a newer schema is refused");
	is_int(store_open(&store, newer, STORE_MODE_READ), -ENOTSUP, "also for readers");
	remove_db(newer);
	free(newer);
	remove_db(path);
	free(path);
}

struct rollups {
	struct store_rollup r[64];
	int64_t bins_q[64][64], bins_n[64][64];
	size_t n;
};

static int collect_rollup(void *ctx, const struct store_rollup *r) {
	struct rollups *c = ctx;
	if (c->n < 64 && r->n_bins <= 64) {
		c->r[c->n] = *r;
		memcpy(c->bins_q[c->n], r->bin_q, r->n_bins * sizeof(int64_t));
		memcpy(c->bins_n[c->n], r->bin_count, r->n_bins * sizeof(int64_t));
	}
	c->n++;
	return 0;
}

static int cmp_q(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Three hours of 20-second cycles with repeated values; every fifth cycle unsynced. */
static void fill_hours(struct store *store, unsigned seed) {
	srand(seed);
	for (int i = 0; i < 3 * 180; i++) {
		double v[] = {40 + (rand() % 50) * 0.125, (408 + 96 * (rand() % 4)) * 1e6,
			      rand() % 5};
		int errs[] = {0, i % 7 == 3 ? -EIO : 0, 0};
		put(store, T0 + 20 * i, i % 5 == 4 ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED, v,
		    errs);
	}
}

/* Every rollup must equal what the raw rows of its hour give. */
static void check_rollups(struct store *store, const char *what) {
	struct rollups *got = xcalloc(1, sizeof(*got));
	store_scan_rollups(store, T0, T0 + 3 * 3600, NULL, 0, collect_rollup, got);
	bool all = got->n == 9;
	for (size_t i = 0; i < got->n && i < 64; i++) {
		const struct store_rollup *r = &got->r[i];
		struct collect *raw = xcalloc(1, sizeof(*raw));
		store_scan_samples(store, r->hour, r->hour + 3600, &r->channel_id, 1, true,
				   collect_sample, raw);
		int64_t q[256], n = 0, unsynced = 0, sum = 0, max = INT64_MIN, max_ts = 0;
		for (size_t j = 0; j < raw->n; j++) {
			if (raw->s[j].clock == CLOCK_STATE_UNSYNCED) {
				unsynced++;
				continue;
			}
			q[n++] = raw->s[j].q;
			sum += raw->s[j].q;
			if (raw->s[j].q > max) {
				max = raw->s[j].q;
				max_ts = raw->s[j].ts;
			}
		}
		qsort(q, (size_t)n, sizeof(q[0]), cmp_q);
		bool same = r->count == n && r->unsynced == unsynced && r->sum_q == sum &&
			    r->min_q == q[0] && r->max_q == max && r->max_ts == max_ts;
		// Expand the histogram and compare value by value with the sorted raw values.
		int64_t k = 0;
		for (size_t b = 0; b < r->n_bins; b++) {
			same &= b == 0 || got->bins_q[i][b] > got->bins_q[i][b - 1];
			for (int64_t c = 0; c < got->bins_n[i][b]; c++, k++) {
				same &= k < n && q[k] == got->bins_q[i][b];
			}
		}
		same &= k == n;
		all &= same;
		free(raw);
	}
	ok(all, what);
	free(got);
}

static void test_rollups(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	fill_hours(store, 7);
	int64_t horizon;
	is_int(store_maintain(store, T0 + 3600 + 5, 0), 0, "maintain after the first hour");
	store_rollup_horizon(store, &horizon);
	is_int(horizon, T0 + 3600, "one hour rolled up");
	is_int(store_maintain(store, T0 + 5 * 3600, 0), 0, "maintain later");
	store_rollup_horizon(store, &horizon);
	is_int(horizon, T0 + 2 * 3600, "the hour holding the last cycle stays raw");

	// A cycle in a later hour closes the third one.
	double v[] = {40, 1e9, 1};
	put(store, T0 + 3 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	store_maintain(store, T0 + 5 * 3600, 0);
	store_rollup_horizon(store, &horizon);
	is_int(horizon, T0 + 3 * 3600, "all complete hours rolled up");
	check_rollups(store, "rollups equal the raw values: count, sum, min, max, max_ts, "
			     "unsynced and every histogram bin");

	struct rollups *got = xcalloc(1, sizeof(*got));
	int64_t cpu = channel_id(store, "cpufreq/policy4");
	store_scan_rollups(store, T0 + 3600, T0 + 2 * 3600, &cpu, 1, collect_rollup, got);
	is_int(got->n, 1, "one channel, one hour");
	is_int(got->r[0].hour, T0 + 3600, "its hour");
	int64_t present = 0, unsynced = 0; // fill_hours(): i % 7 == 3 misses, i % 5 == 4 unsynced
	for (int i = 180; i < 360; i++) {
		present += i % 7 != 3;
		unsynced += i % 7 != 3 && i % 5 == 4;
	}
	is_int(got->r[0].count + got->r[0].unsynced, present, "missing readings are not counted");
	is_int(got->r[0].unsynced, unsynced, "unsynced values counted apart");
	ok(got->r[0].n_bins <= 4, "four frequencies at most: one bin each");
	free(got);

	// An imported value in a rolled-up hour is rolled up again, exactly.
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	is_int(store_insert_sample(store, T0 + 10, soc, 99000, NULL), 0,
	       "import into a rolled-up hour");
	store_rollup_horizon(store, &horizon);
	is_int(horizon, T0, "the horizon moves back");
	store_maintain(store, T0 + 5 * 3600, 0);
	check_rollups(store, "re-rolled hours equal the raw values");
	got = xcalloc(1, sizeof(*got));
	store_scan_rollups(store, T0, T0 + 3600, &soc, 1, collect_rollup, got);
	is_int(got->r[0].max_q, 99000, "the imported maximum is in the rollup");
	is_int(got->r[0].max_ts, T0 + 10, "with its time");
	free(got);
	store_close(store);
}

static void test_retention(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	fill_hours(store, 11);
	double v[] = {40, 1e9, 1};
	put(store, T0 + 3 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	// Keep 2 hours of raw values at T0 + 3h30: the first hour goes.
	is_int(store_maintain(store, T0 + 3 * 3600 + 1800, 7200), 0, "maintain with retention");
	struct collect c = {0};
	store_scan_samples(store, T0, T0 + 3600, NULL, 0, true, collect_sample, &c);
	is_int(c.n, 0, "raw values of the first hour pruned");
	struct collect d = {0};
	store_scan_samples(store, T0 + 3600, T0 + 3600 + 20, NULL, 0, true, collect_sample, &d);
	is_int(d.n, 3, "the second hour is kept");
	struct rollups *got = xcalloc(1, sizeof(*got));
	store_scan_rollups(store, T0, T0 + 3600, NULL, 0, collect_rollup, got);
	is_int(got->n, 3, "rollups of the pruned hour stay");
	free(got);
	struct store_info info;
	store_info(store, &info);
	is_int(info.cycles, 3 * 180 + 1, "cycle rows stay for coverage");
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	is_int(store_insert_sample(store, T0 + 30, soc, 1, NULL), -ERANGE,
	       "an import before the pruned horizon is refused");

	// Pruning is batched: many hours pruned over several transactions.
	for (int i = 0; i < 3000; i++) {
		put(store, T0 + 4 * 3600 + i, CLOCK_STATE_SYNCED, v, NULL);
	}
	put(store, T0 + 6 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_maintain(store, T0 + 9 * 3600, 3600), 0, "maintain prunes in batches");
	struct collect e = {0};
	store_scan_samples(store, 0, T0 + 6 * 3600, NULL, 0, true, collect_sample, &e);
	is_int(e.n, 0, "everything before the retention window pruned");
	struct collect f = {0};
	store_scan_samples(store, T0 + 6 * 3600, INT64_MAX, NULL, 0, true, collect_sample, &f);
	is_int(f.n, 3, "newest hour kept: it is not rolled up yet");
	store_close(store);
}

static struct throttle_episode episode(const char *domain, int64_t start, int64_t end,
				       int64_t last_seen) {
	struct throttle_episode ep = {
		.start = start,
		.end = end,
		.last_seen = last_seen,
		.duration_ms = ((end ? end : last_seen) - start) * 1000,
		.max_hz = 2256000000,
		.trip = -1,
	};
	snprintf(ep.domain, sizeof(ep.domain), "%s", domain);
	return ep;
}

/* Throttle episodes: written open and updated, closed after a restart, pruned with raw rows. */
static void test_throttle(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	fill_hours(store, 11);
	struct throttle_episode a = episode("cpufreq/policy6", T0 + 60, 0, T0 + 120);
	a.min_hz = 1416000000;
	a.cause = THROTTLE_CAUSE_THERMAL;
	snprintf(a.zone, sizeof(a.zone), "soc-thermal");
	a.trip = 0;
	a.trip_temp_mc = 60000;
	a.trip_hyst_mc = 2000;
	a.have_temp = true;
	a.temp_start_mc = 58000;
	a.temp_peak_mc = 62000;
	a.n_cooling = 2;
	a.cooling[0] = (struct throttle_cooling){.type = "cpufreq-cpu6", .dev = 2, .state = 3};
	a.cooling[1] =
		(struct throttle_cooling){.type = "devfreq-fb000000.gpu", .dev = 3, .state = 1};
	struct throttle_episode b = episode("devfreq/fb000000.gpu", T0 + 100, T0 + 101, T0 + 101);
	b.duration_ms = 400;
	b.method = THROTTLE_METHOD_COUNTERS;
	b.cause = THROTTLE_CAUSE_THERMAL;
	struct throttle_episode c = episode("cpufreq/policy0", T0 + 7000, T0 + 7300, T0 + 7290);
	c.stuck = true;
	struct throttle_episode *eps[] = {&a, &b, &c};
	is_int(store_throttle_put(store, eps, 3), 0, "three episodes written");
	ok(a.row > 0 && b.row > a.row && c.row > b.row, "each gets its row");
	int64_t row = a.row;
	a.last_seen = T0 + 180;
	a.min_hz = 1200000000;
	a.duration_ms = 120000;
	is_int(store_throttle_put(store, eps, 1), 0, "the open one updated");
	is_int(a.row, row, "in place");

	struct throttle_episode *got;
	size_t n;
	is_int(store_throttle_list(store, T0, T0 + 3600, &got, &n), 0, "list the first hour");
	is_int(n, 2, "two episodes overlap it");
	if (n == 2) {
		is_str(got[0].domain, "cpufreq/policy6", "oldest first");
		is_int(got[0].end, 0, "open");
		is_int(got[0].last_seen, T0 + 180, "last seen as updated");
		is_int(got[0].min_hz, 1200000000, "depth as updated");
		ok(got[0].cause == THROTTLE_CAUSE_THERMAL && got[0].method == THROTTLE_METHOD_POLL,
		   "cause and method");
		is_str(got[0].zone, "soc-thermal", "zone");
		ok(got[0].trip == 0 && got[0].trip_temp_mc == 60000 && got[0].trip_hyst_mc == 2000,
		   "trip");
		ok(got[0].have_temp && got[0].temp_start_mc == 58000 &&
			   got[0].temp_peak_mc == 62000,
		   "temperatures");
		is_int(got[0].n_cooling, 2, "two cooling devices");
		ok(got[0].cooling[1].dev == 3 && got[0].cooling[1].state == 1 &&
			   strcmp(got[0].cooling[1].type, "devfreq-fb000000.gpu") == 0,
		   "cooling device read back");
		ok(got[1].method == THROTTLE_METHOD_COUNTERS && got[1].duration_ms == 400 &&
			   got[1].min_hz == 0 && got[1].trip == -1 && !got[1].have_temp,
		   "a counters episode: unknown depth, no zone");
	}
	free(got);
	store_throttle_list(store, T0 + 150, T0 + 3600, &got, &n);
	is_int(n, 1, "an episode ended before the window is not in it");
	free(got);

	int64_t closed;
	is_int(store_throttle_close_open(store, &closed), 0, "close the open ones");
	is_int(closed, 1, "one was open");
	store_throttle_list(store, T0, T0 + 3600, &got, &n);
	ok(n == 2 && got[0].end == T0 + 180 && got[0].duration_ms == 120000,
	   "closed at the last cycle that saw it");
	free(got);

	double v[] = {40, 1e9, 1};
	put(store, T0 + 3 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_maintain(store, T0 + 3 * 3600 + 1800, 7200), 0, "maintain with retention");
	store_throttle_list(store, 0, INT64_MAX, &got, &n);
	ok(n == 1 && got[0].stuck && got[0].start == T0 + 7000,
	   "episodes ended before the raw horizon pruned with the raw rows");
	free(got);
	store_close(store);
}

/* thermlog repair: cycles after a cut go with their samples and later rollups, in one step. */
static void test_drop_after(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	fill_hours(store, 2); // T0 .. T0 + 3h, every 20 s
	double v[] = {40, 1e9, 1};
	int64_t future = T0 + 366 * 86400;
	is_int(put(store, future, CLOCK_STATE_UNSYNCED, v, NULL), 0, "a glitch a year ahead");
	is_int(put(store, future + 1, CLOCK_STATE_UNSYNCED, v, NULL), 0, "and one more");
	is_int(put(store, future + 7200, CLOCK_STATE_SYNCED, v, NULL), 0, "a later synced one");
	// A maintenance run from the glitch's time rolls up the glitch's hours.
	is_int(store_maintain(store, future + 7200, 0), 0, "maintain from the glitch");
	struct store_drop drop;
	int64_t cut = T0 + 3 * 3600;
	is_int(store_drop_after(store, cut, true, &drop), 0, "dry run");
	is_int(drop.cycles, 3, "counts the 3 future cycles");
	is_int(drop.first, future, "first");
	is_int(drop.last, future + 7200, "last");
	ok(drop.rollups > 0, "and the rollups of their hours");
	struct store_info info;
	store_info(store, &info);
	is_int(info.last_cycle, future + 7200, "a dry run changes nothing");
	is_int(store_drop_after(store, cut, false, &drop), 0, "repair");
	is_int(drop.cycles, 3, "removed 3 cycles");
	store_info(store, &info);
	is_int(info.last_cycle, T0 + 3 * 3600 - 20, "the last cycle is the last true one");
	is_int(info.cycles, 3 * 180, "every true cycle stays");
	struct collect c = {0};
	store_scan_samples(store, cut + 1, INT64_MAX, NULL, 0, true, collect_sample, &c);
	is_int(c.n, 0, "no samples after the cut");
	struct rollups *got = xcalloc(1, sizeof(*got));
	store_scan_rollups(store, cut + 1, INT64_MAX, NULL, 0, collect_rollup, got);
	is_int(got->n, 0, "no rollups after the cut");
	free(got);
	is_int(store_drop_after(store, cut, false, &drop), 0, "a second repair");
	is_int(drop.cycles, 0, "finds nothing");
	is_int(put(store, cut + 60, CLOCK_STATE_SYNCED, v, NULL), 0, "cycles go on");
	store_close(store);
}

static int dump_sample(void *ctx, const struct store_sample *s) {
	buf_printf(ctx, "s %lld %lld %lld %d\n", (long long)s->ts, (long long)s->channel_id,
		   (long long)s->q, s->clock);
	return 0;
}

static int dump_cycle(void *ctx, const struct store_cycle *c) {
	buf_printf(ctx, "c %lld %d\n", (long long)c->ts, c->clock);
	return 0;
}

static int dump_rollup(void *ctx, const struct store_rollup *r) {
	buf_printf(ctx, "r %lld %lld %lld %lld %lld %lld %lld %lld", (long long)r->channel_id,
		   (long long)r->hour, (long long)r->count, (long long)r->sum_q,
		   (long long)r->min_q, (long long)r->max_q, (long long)r->max_ts,
		   (long long)r->unsynced);
	for (size_t i = 0; i < r->n_bins; i++) {
		buf_printf(ctx, " %lld:%lld", (long long)r->bin_q[i], (long long)r->bin_count[i]);
	}
	buf_putc(ctx, '\n');
	return 0;
}

/* Everything a reader can see, as text. */
static char *dump(struct store *store) {
	struct buf b;
	buf_init(&b);
	struct store_channel *list;
	size_t n;
	store_channels(store, &list, &n);
	for (size_t i = 0; i < n; i++) {
		buf_printf(&b, "ch %lld %s %s %s %s %g %lld %lld %d\n", (long long)list[i].id,
			   list[i].ch.key, list[i].ch.label, list[i].ch.unit,
			   list[i].ch.meta ? list[i].ch.meta : "-", list[i].ch.resolution,
			   (long long)list[i].first_seen, (long long)list[i].last_seen,
			   list[i].present);
	}
	store_channels_free(list, n);
	store_scan_cycles(store, 0, INT64_MAX, dump_cycle, &b);
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, dump_sample, &b);
	store_scan_rollups(store, 0, INT64_MAX, NULL, 0, dump_rollup, &b);
	int64_t horizon;
	store_rollup_horizon(store, &horizon);
	buf_printf(&b, "horizon %lld\n", (long long)horizon);
	char *v;
	if (store_state_get(store, "capwatch.c1", &v) == 0) {
		buf_printf(&b, "state %s\n", v);
		free(v);
	}
	return buf_steal(&b);
}

static void test_backup(void) {
	char *path = tmp_path("live.db"), *copy = tmp_path("copy.db");
	struct store *store, *reader, *backup;
	store_open(&store, path, STORE_MODE_WRITE);
	fill_hours(store, 3);
	double v[] = {40, 1e9, 1};
	put(store, T0 + 3 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	store_maintain(store, T0 + 4 * 3600, 0);
	store_state_set(store, "capwatch.c1", "{\"damage\":0.125}");
	is_int(store_open(&reader, path, STORE_MODE_READ), 0, "reader beside the writer");
	store_begin(store); // a write in progress must not leak into the copy
	put(store, T0 + 3 * 3600 + 60, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_backup(reader, copy), 0, "backup while a write is in progress");
	store_rollback(store);
	is_int(store_open(&backup, copy, STORE_MODE_READ), 0, "the copy opens");
	char *a = dump(store), *b = dump(backup);
	ok(strlen(a) > 10000, "a realistic database to compare");
	is_str(b, a, "the copy has identical logical content");
	free(a);
	free(b);
	store_close(backup);
	store_close(reader);
	store_close(store);
	remove_db(copy);
	remove_db(path);
	free(copy);
	free(path);
}

static int count_per_cycle(void *ctx, const struct store_sample *s) {
	int64_t *last = ctx; // [last ts, values in it, cycles with a wrong count]
	if (s->ts != last[0]) {
		last[2] += last[0] != 0 && last[1] != N_CHANS;
		last[0] = s->ts;
		last[1] = 0;
	}
	last[1]++;
	return 0;
}

static int64_t file_page_size(const char *path) {
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t size = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			size = sqlite3_column_int64(st, 0);
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return size;
}

/* Temporary tables that @sql's plan builds on every execution on @path, or -1. */
static int ephemeral_tables(const char *path, const char *sql) {
	sqlite3 *db;
	sqlite3_stmt *st;
	int n = -1;
	char *explain = xasprintf("EXPLAIN %s", sql);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, explain, -1, &st, NULL) == SQLITE_OK) {
		n = 0;
		while (sqlite3_step(st) == SQLITE_ROW) {
			n += strcmp((const char *)sqlite3_column_text(st, 1), "OpenEphemeral") == 0;
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	free(explain);
	return n;
}

/* The result code of @sql on @path, run by a plain connection. */
static int exec_raw(const char *path, const char *sql) {
	sqlite3 *db;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	sqlite3_close(db);
	return rc;
}

/*
 * A cycle's two inserts and the channel update build no temporary table (a CHECK written as an
 * IN list did, on every insert), in a new database and in one migrated from schema 2; the
 * constraints still refuse what they refused.
 */
static void test_insert_plans(void) {
	char *fresh = tmp_path("plans.db"), *old = tmp_path("plans-old.db");
	remove_db(old);
	is_int(copy_file("fixtures/db/amd64.db", old), 0, "copy a schema 2 database");
	const char *paths[] = {fresh, old};
	const char *names[] = {"new", "migrated"};
	char what[128];
#define WHAT(text) (snprintf(what, sizeof(what), "%s: %s", names[i], text), what)
	for (int i = 0; i < 2; i++) {
		struct store *store;
		is_int(store_open(&store, paths[i], STORE_MODE_WRITE), 0, WHAT("opened"));
		store_close(store);
		is_int(ephemeral_tables(paths[i], "INSERT INTO cycles (ts, boot, clock) "
						  "VALUES (1, NULL, 1)"),
		       0, WHAT("a cycle insert builds no temporary table"));
		is_int(ephemeral_tables(paths[i], "INSERT INTO samples (ts, clock, data) "
						  "VALUES (1, 1, x'00')"),
		       0, WHAT("a samples insert builds no temporary table"));
		is_int(ephemeral_tables(paths[i], "UPDATE channels SET present = 1 WHERE id = 1"),
		       0, WHAT("a channel update builds no temporary table"));
		is_int(exec_raw(paths[i], "INSERT INTO cycles (ts, clock) VALUES (5, 3)"),
		       SQLITE_CONSTRAINT, WHAT("clock 3 is still refused"));
		is_int(exec_raw(paths[i],
				"INSERT INTO samples (ts, clock, data) VALUES (5, -1, x'')"),
		       SQLITE_CONSTRAINT, WHAT("clock -1 is still refused"));
		is_int(exec_raw(paths[i], "INSERT INTO channels (key, source, label, kind, unit, "
					  "resolution, first_seen, last_seen, present) VALUES "
					  "('x', 's', 'l', 'k', 'u', 1, 0, 0, 2)"),
		       SQLITE_CONSTRAINT, WHAT("present 2 is still refused"));
		is_int(exec_raw(paths[i], "PRAGMA integrity_check"), SQLITE_OK, WHAT("integrity"));
	}
#undef WHAT
	remove_db(fresh);
	remove_db(old);
	free(fresh);
	free(old);
}

/* A reader in another process while the writer commits: it sees whole cycles only. */
static void test_reader_while_writing(void) {
	char *path = tmp_path("rw.db");
	struct store *store, *reader;
	store_open(&store, path, STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_open(&reader, path, STORE_MODE_READ), 0, "open a reader");
	store_begin(store);
	put(store, T0 + 60, CLOCK_STATE_SYNCED, v, NULL);
	struct store_info info;
	is_int(store_info(reader, &info), 0, "the reader reads during a write transaction");
	is_int(info.cycles, 1, "and does not see uncommitted cycles");
	store_commit(store);
	store_info(reader, &info);
	is_int(info.cycles, 2, "it sees them once committed");
	ok(info.size_bytes > 4096, "size counts the database and its WAL");
	struct store_info w1, w2;
	store_info(store, &w1);
	put(store, T0 + 90, CLOCK_STATE_SYNCED, v, NULL);
	store_info(store, &w2);
	ok(w1.bytes_written > 0, "the writer counts the bytes it wrote");
	int64_t page = file_page_size(path);
	ok(w2.bytes_written >= w1.bytes_written + 2 * page &&
		   w2.bytes_written <= w1.bytes_written + 4 * page,
	   "a cycle writes two or three pages");
	is_int(put(reader, T0 + 120, CLOCK_STATE_SYNCED, v, NULL), -EROFS, "a reader cannot write");
	is_int(store_maintain(reader, T0, 0), -EROFS, "nor maintain");
	// Every write step refuses a reader the same way, before any SQL.
	struct store_drop drop;
	is_int(store_drop_after(reader, T0, true, &drop), -EROFS, "nor drop cycles");
	struct channel ch = {.key = "ro/x",
			     .source = "import",
			     .label = "x",
			     .unit = "celsius",
			     .resolution = 0.1};
	int64_t id = 0, closed = 0;
	double applied;
	is_int(store_channel_ensure(reader, &ch, &id), -EROFS, "nor add a channel");
	is_int(store_insert_sample(reader, T0, 1, 400, NULL), -EROFS, "nor import a value");
	is_int(store_channel_refine(reader, 1, 0.01, &applied), -EROFS, "nor refine a channel");
	is_int(store_state_set(reader, "ro", "x"), -EROFS, "nor set state");
	is_int(store_throttle_close_open(reader, &closed), -EROFS, "nor close episodes");
	const char *keys[] = {"ro/x"};
	is_int(store_mark_present(reader, keys, 1, T0), -EROFS, "nor mark channels present");
	store_close(store);

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct store *w;
		if (store_open(&w, path, STORE_MODE_WRITE) < 0) {
			free(path);
			_exit(1);
		}
		int bad = 0;
		for (int i = 0; i < 400; i++) {
			bad |= put(w, T0 + 180 + 60 * i, CLOCK_STATE_SYNCED, v, NULL) != 0;
		}
		store_close(w);
		free(path);
		_exit(bad);
	}
	int64_t torn = 0, reads = 0, errors = 0;
	int status = -1;
	for (;;) {
		int64_t last[3] = {0};
		errors += store_scan_samples(reader, 0, INT64_MAX, NULL, 0, false, count_per_cycle,
					     last) != 0;
		torn += last[2] + (last[1] != N_CHANS);
		reads++;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			break;
		}
	}
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer process stored 400 cycles");
	is_int(errors, 0, "no read failed while the other process wrote");
	is_int(torn, 0, "every read saw whole cycles");
	ok(reads > 0, "reads happened");
	store_info(reader, &info);
	is_int(info.cycles, 403, "the reader sees the final state");
	store_close(reader);
	remove_db(path);
	free(path);
}

static void test_corrupt(void) {
	char *path = tmp_path("corrupt.db");
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	fill_hours(store, 5);
	store_close(store);
	// Keep page 1 (header and schema), overwrite pages 2 to 4 with noise.
	FILE *f = fopen(path, "r+b");
	fseek(f, 4096, SEEK_SET);
	for (int i = 0; i < 3 * 4096; i++) {
		fputc((i * 7919) & 0xff, f);
	}
	fclose(f);
	is_int(store_open(&store, path, STORE_MODE_WRITE), -EINVAL,
	       "a corrupt database is -EINVAL (moved aside by the daemon)");
	remove_db(path);
	free(path);
}

/* A database the user may read but not write (root is dropped to nobody to check this). */
static void test_read_only_file(void) {
	char *path = tmp_path("ro.db");
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	store_close(store);
	const char *suffixes[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		chmod(p, 0444);
		free(p);
	}
	chmod(tmpdir, 0755);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (getuid() == 0 && setuid(65534) < 0) {
			_exit(100);
		}
		struct store *w = NULL, *r = NULL;
		int rc_w = store_open(&w, path, STORE_MODE_WRITE);
		int rc_r = store_open(&r, path, STORE_MODE_READ);
		struct store_info info = {0};
		int rc_i = r ? store_info(r, &info) : -1;
		store_close(w);
		store_close(r);
		free(path);
		_exit(rc_w == -EACCES ? (rc_r == 0 && rc_i == 0 && info.cycles == 1 ? 0 : 2) : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	chmod(tmpdir, 0700);
	is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	       "a read-only file: -EACCES for the writer, the reader still reads it");
	remove_db(path);
	free(path);
}

/* An imported row far in the future neither blocks the daemon's cycles nor becomes its anchor. */
static void test_future_import(void) {
	struct store *store;
	is_int(store_open(&store, ":memory:", STORE_MODE_WRITE), 0, "open");
	double v[] = {40, 1000000000, 1};
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v, NULL), 0, "a daemon cycle");
	int64_t id, last;
	is_int(store_channel_ensure(store, &chans[0], &id), 0, "the imported channel");
	int64_t y2099 = 4070908800; // 2099-01-01
	is_int(store_insert_sample(store, y2099, id, 4000, NULL), 0, "an imported row dated 2099");
	is_int(put(store, T0 + 60, CLOCK_STATE_SYNCED, v, NULL), 0,
	       "a later daemon cycle is still stored");
	is_int(put(store, T0 + 60, CLOCK_STATE_SYNCED, v, NULL), -EEXIST, "a duplicate is not");
	is_int(store_last_own_cycle(store, INT64_MAX, &last), 0, "last own cycle");
	is_int(last, T0 + 60, "is the daemon's, not the imported 2099 row");
	is_int(store_last_own_cycle(store, T0 + 30, &last), 0, "last own cycle up to a bound");
	is_int(last, T0, "respects the bound");
	is_int(store_last_own_cycle(store, T0 - 1, &last), 0, "none before the first");
	is_int(last, 0, "is 0");
	store_close(store);
}

/* runs: read side */

struct run_list {
	int64_t ids[8];
	char labels[8][32];
	char status[8][16];
	double temp[8];
	int exit_code[8];
	size_t n;
};

static int collect_run(void *ctx, const struct store_run *run) {
	struct run_list *l = ctx;
	if (l->n < 8) {
		l->ids[l->n] = run->id;
		snprintf(l->labels[l->n], sizeof(l->labels[0]), "%s", run->label);
		snprintf(l->status[l->n], sizeof(l->status[0]), "%s", run_status_name(run->status));
		l->temp[l->n] = run->temp_max_c;
		l->exit_code[l->n] = run->exit_code;
	}
	l->n++;
	return 0;
}

static int collect_run_sample(void *ctx, const struct store_run_sample *s) {
	struct buf *b = ctx;
	buf_printf(b, "%lld:%lld=%lld ", (long long)s->ts_ms, (long long)s->channel_id,
		   (long long)s->q);
	return 0;
}

static void test_runs_read(void) {
	char *path = tmp_path("runs.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open runs db");
	const int64_t t = INT64_C(1790812800000);
	struct store_run_import a = {.label = "sdxl",
				     .start_ms = t + 500,
				     .end_ms = t + 1627290,
				     .status = RUN_STATUS_OK,
				     .exit_code = 0,
				     .energy_j = 12692.5,
				     .energy_method = "job log",
				     .temp_max_c = 70.5,
				     .rss_max_bytes = NAN,
				     .import_key = "sdxl|a"};
	struct store_run_import b = a;
	b.label = "rerank";
	b.start_ms = t + 2000000;
	b.end_ms = t + 2000100;
	b.status = RUN_STATUS_FAILED;
	b.exit_code = 3;
	b.energy_j = NAN;
	b.temp_max_c = NAN;
	b.import_key = "rerank|b";
	bool added;
	is_int(store_run_import(store, &a, &added), 0, "import a run");
	ok(added, "it was added");
	is_int(store_run_import(store, &b, &added), 0, "import another");
	is_int(store_run_import(store, &a, &added), 0, "import the first again");
	ok(!added, "a re-import adds nothing");
	struct store_run_import bad = a;
	bad.end_ms = a.start_ms - 1;
	bad.import_key = "bad";
	is_int(store_run_import(store, &bad, &added), -EINVAL, "end before start is refused");

	struct run_list l = {0};
	is_int(store_runs_scan(store, NULL, collect_run, &l), 0, "scan all runs");
	is_int(l.n, 2, "two runs");
	is_str(l.labels[0], "sdxl", "in start order");
	is_near(l.temp[0], 70.5, 0, "temp_max_c kept");
	ok(isnan(l.temp[1]), "an unknown figure reads as NAN");
	is_int(l.exit_code[1], 3, "exit code kept");
	struct store_run_filter f = {.label = "rerank"};
	l = (struct run_list){0};
	is_int(store_runs_scan(store, &f, collect_run, &l), 0, "scan one label");
	is_int(l.n, 1, "one run of that label");
	is_str(l.status[0], "failed", "its status");
	f = (struct store_run_filter){
		.has_from = true, .from_ms = t + 1000, .has_to = true, .to_ms = t + 2000001};
	l = (struct run_list){0};
	is_int(store_runs_scan(store, &f, collect_run, &l), 0, "scan a window");
	is_int(l.n, 1, "runs starting in [from, to)");
	int64_t id = l.ids[0];
	l = (struct run_list){0};
	is_int(store_run_get(store, id, collect_run, &l), 0, "get a run by id");
	is_str(l.labels[0], "rerank", "the right one");
	is_int(store_run_get(store, id + 100, collect_run, &l), -ENOENT, "an unknown id");
	store_close(store);

	// The fast samples are written by the daemon; here they are put in with SQL directly.
	sqlite3 *db;
	is_int(sqlite3_open(path, &db), SQLITE_OK, "open with sqlite");
	struct codec_pair pairs[][2] = {{{1, 4000}, {3, -5}}, {{1, 4100}, {2, 7}}};
	for (int i = 0; i < 2; i++) {
		uint8_t blob[64];
		size_t len = codec_pairs_encode(blob, pairs[i], 2);
		sqlite3_stmt *st;
		sqlite3_prepare_v2(db, "INSERT INTO run_samples VALUES (?1, ?2)", -1, &st, NULL);
		sqlite3_bind_int64(st, 1, t + 5000 * (i + 1));
		sqlite3_bind_blob(st, 2, blob, (int)len, SQLITE_TRANSIENT);
		is_int(sqlite3_step(st), SQLITE_DONE, "insert a fast sample");
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	is_int(store_open(&store, path, STORE_MODE_READ), 0, "open read-only");
	struct buf got;
	buf_init(&got);
	is_int(store_run_samples_scan(store, t, t + 10001, collect_run_sample, &got), 0,
	       "scan fast samples");
	is_str(got.data,
	       "1790812805000:1=4000 1790812805000:3=-5 1790812810000:1=4100 "
	       "1790812810000:2=7 ",
	       "every value in order");
	buf_clear(&got);
	is_int(store_run_samples_scan(store, t + 5001, t + 10000, collect_run_sample, &got), 0,
	       "an empty window");
	ok(got.len == 0, "has no sample");
	buf_finish(&got);
	is_int(store_run_import(store, &a, &added), -EROFS, "import needs write mode");
	store_close(store);
	remove_db(path);
	free(path);
}

/* The plain answer store_info() must equal: every cycle scanned. */
struct cycle_tally {
	int64_t cycles, unsynced, first, last;
};

static int tally_cycle(void *ctx, const struct store_cycle *cy) {
	struct cycle_tally *c = ctx;
	if (c->cycles == 0) {
		c->first = cy->ts;
	}
	c->last = cy->ts;
	c->cycles++;
	c->unsynced += cy->clock == CLOCK_STATE_UNSYNCED;
	return 0;
}

static bool info_matches(struct store *store, const char *when) {
	struct cycle_tally want = {0};
	struct store_info info;
	store_scan_cycles(store, INT64_MIN, INT64_MAX, tally_cycle, &want);
	bool good = store_info(store, &info) == 0 && info.cycles == want.cycles &&
		    info.unsynced_cycles == want.unsynced && info.first_cycle == want.first &&
		    info.last_cycle == want.last;
	if (!good) {
		printf("# %s: info %lld cycles %lld unsynced [%lld, %lld], scan %lld %lld "
		       "[%lld, %lld]\n",
		       when, (long long)info.cycles, (long long)info.unsynced_cycles,
		       (long long)info.first_cycle, (long long)info.last_cycle,
		       (long long)want.cycles, (long long)want.unsynced, (long long)want.first,
		       (long long)want.last);
	}
	return good;
}

/* Writes the cycles of [from, to) every 60 s; a seeded few are skipped, unsynced or unknown. */
static void put_days(struct store *store, int64_t from, int64_t to, uint32_t *seed) {
	double v[] = {40, 1e9, 1};
	store_begin(store);
	for (int64_t ts = from; ts < to; ts += 60) {
		*seed = *seed * 1103515245u + 12345u;
		unsigned r = (*seed >> 16) % 100;
		if (r < 3) {
			continue;
		}
		enum clock_state clock = r < 10   ? CLOCK_STATE_UNSYNCED
					 : r < 13 ? CLOCK_STATE_UNKNOWN
						  : CLOCK_STATE_SYNCED;
		put(store, ts, clock, v, NULL);
	}
	store_commit(store);
}

/*
 * store_info() counts merged days from cycle_days and only the tail from the cycles: equal to
 * the plain count through unsynced cycles, imports into merged days, a repair and a refinement.
 */
static void test_info_from_days(void) {
	uint32_t seed = 15;
	printf("# seed %u\n", seed);
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	int64_t day0 = T0 - T0 % 86400 + 86400;
	ok(info_matches(store, "empty"), "info on an empty store equals the scan");
	put_days(store, day0 - 3 * 3600, day0 + 4 * 86400 + 5 * 3600, &seed);
	ok(info_matches(store, "unmerged"), "before any merge, info equals the scan");
	is_int(store_maintain(store, day0 + 4 * 86400 + 5 * 3600, 0), 0, "maintain");
	int64_t horizon = 0;
	store_day_horizon(store, &horizon);
	is_int(horizon, day0 + 4 * 86400, "four whole days and the partial first one are merged");
	ok(info_matches(store, "merged"), "merged days plus the tail equal the scan");

	// Imports: new cycles inside merged days (rolled-up hours) and before the first cycle.
	struct channel ext = {.key = "bench/thermocouple",
			      .kind = CHANNEL_KIND_TEMPERATURE,
			      .unit = "celsius",
			      .resolution = 0.01};
	int64_t id;
	store_channel_ensure(store, &ext, &id);
	store_begin(store);
	for (int i = 0; i < 50; i++) {
		store_insert_sample(store, day0 + 2 * 86400 + i * 1200 + 30, id, 2500 + i, NULL);
	}
	store_commit(store);
	// The horizon moved back to a day whose row is still there, stale until the next merge.
	ok(info_matches(store, "imported"), "after imports into merged days, info equals the scan");
	store_begin(store);
	store_insert_sample(store, day0 - 5 * 86400 + 30, id, 2400, NULL);
	store_commit(store);
	ok(info_matches(store, "imported early"), "and after one before the first cycle");
	store_maintain(store, day0 + 4 * 86400 + 5 * 3600, 0);
	ok(info_matches(store, "imported, merged"), "and after they are merged again");

	put_days(store, day0 + 4 * 86400 + 5 * 3600, day0 + 7 * 86400, &seed);
	store_maintain(store, day0 + 7 * 86400, 0);
	ok(info_matches(store, "more days"), "more days merged, info equals the scan");

	struct store_drop drop;
	is_int(store_drop_after(store, day0 + 5 * 86400 + 7 * 3600 + 90, false, &drop), 0,
	       "repair: drop after a cut inside a merged day");
	ok(info_matches(store, "dropped"), "after the repair, info equals the scan");
	store_maintain(store, day0 + 7 * 86400, 0);
	ok(info_matches(store, "dropped, merged"), "and after the next merge");

	double applied;
	is_int(store_channel_refine(store, id, 0.001, &applied), 0, "refine the imported channel");
	ok(info_matches(store, "refined"), "after a refinement, info equals the scan");
	put_days(store, day0 + 7 * 86400, day0 + 9 * 86400 + 600, &seed);
	store_maintain(store, day0 + 9 * 86400 + 600, 0);
	store_day_horizon(store, &horizon);
	is_int(horizon, day0 + 9 * 86400, "merged again up to the last whole day");
	ok(info_matches(store, "refined, merged"), "and after the next merge");
	store_close(store);
}

/* New databases get 2 KiB pages (half the WAL bytes per commit); existing ones keep theirs. */
static void test_page_size(void) {
	char *path = tmp_path("pages.db");
	remove_db(path);
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "create a database");
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	store_close(store);
	is_int(file_page_size(path), 2048, "a new database has 2 KiB pages");
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open it again");
	store_close(store);
	is_int(file_page_size(path), 2048, "and keeps them");
	remove_db(path);
	is_int(copy_file("fixtures/db/amd64.db", path), 0, "copy a database of 4 KiB pages");
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open it as the writer");
	is_int(put(store, T0 + 600 * 86400, CLOCK_STATE_SYNCED, v, NULL), 0, "write a cycle");
	store_close(store);
	is_int(file_page_size(path), 4096, "an existing database keeps its page size");
	remove_db(path);
	free(path);
}

/* ---- delta rows: a row coded against the row before it in its UTC hour ---- */

#define DELTA_ROWS 150 // two and a half hours of one-minute cycles, from T0 + 30 s

/* The history every delta test writes: a random walk like a board's, seeded. */
struct delta_history {
	int64_t ts[DELTA_ROWS];
	double v[DELTA_ROWS][N_CHANS];
};

static void delta_history_init(struct delta_history *h, unsigned seed) {
	srand(seed);
	double temp = 45.0, freq = 1800e6, fan = 2;
	for (int i = 0; i < DELTA_ROWS; i++) {
		temp += (rand() % 9 - 4) * 0.077;
		if (rand() % 4 == 0) {
			freq = (408 + 96 * (rand() % 20)) * 1e6;
		}
		if (rand() % 10 == 0) {
			fan = rand() % 5;
		}
		h->ts[i] = T0 + 30 + 60 * i;
		h->v[i][0] = temp;
		h->v[i][1] = freq;
		h->v[i][2] = fan;
	}
}

/* Every stored value, in ts then channel order (a growing array the caller frees). */
struct all_samples {
	struct store_sample *s;
	size_t n, cap;
};

static int all_sample(void *ctx, const struct store_sample *s) {
	struct all_samples *a = ctx;
	a->s = xgrow(a->s, &a->cap, a->n + 1, sizeof(*a->s));
	a->s[a->n++] = *s;
	return 0;
}

static struct all_samples scan_all(struct store *store, int64_t from, int64_t to, int *rc) {
	struct all_samples a = {0};
	*rc = store_scan_samples(store, from, to, NULL, 0, true, all_sample, &a);
	return a;
}

static bool same_samples(const struct all_samples *a, const struct all_samples *b) {
	if (a->n != b->n) {
		return false;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (a->s[i].ts != b->s[i].ts || a->s[i].channel_id != b->s[i].channel_id ||
		    a->s[i].q != b->s[i].q || a->s[i].clock != b->s[i].clock) {
			return false;
		}
	}
	return true;
}

/* Whether every stored value is the history's, quantized at the channels' resolutions. */
static bool matches_history(const struct all_samples *a, const struct delta_history *h,
			    const bool *present) {
	size_t k = 0;
	for (int i = 0; i < DELTA_ROWS; i++) {
		if (present && !present[i]) {
			continue;
		}
		for (int c = 0; c < N_CHANS; c++, k++) {
			int64_t want = llround(h->v[i][c] / chans[c].resolution);
			if (k >= a->n || a->s[k].ts != h->ts[i] || a->s[k].q != want) {
				return false;
			}
		}
	}
	return k == a->n;
}

/* The raw rows of a database file, through SQLite directly: ts and blob. */
struct raw_rows {
	int64_t ts[4 * DELTA_ROWS];
	uint8_t *data[4 * DELTA_ROWS];
	size_t len[4 * DELTA_ROWS];
	size_t n;
};

static void raw_rows_read(const char *path, struct raw_rows *r) {
	sqlite3 *db;
	sqlite3_stmt *st;
	r->n = 0;
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	sqlite3_prepare_v2(db, "SELECT ts, data FROM samples ORDER BY ts", -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW && r->n < 4 * DELTA_ROWS) {
		r->ts[r->n] = sqlite3_column_int64(st, 0);
		r->len[r->n] = (size_t)sqlite3_column_bytes(st, 1);
		r->data[r->n] = xcalloc(r->len[r->n] + 1, 1);
		memcpy(r->data[r->n], sqlite3_column_blob(st, 1), r->len[r->n]);
		r->n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void raw_rows_free(struct raw_rows *r) {
	for (size_t i = 0; i < r->n; i++) {
		free(r->data[i]);
	}
	r->n = 0;
}

static void raw_exec(const char *path, const char *sql) {
	sqlite3 *db;
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		printf("# %s: %s\n", sql, err);
	}
	sqlite3_free(err);
	sqlite3_close(db);
}

/* Writes the history's rows in @order (indices) into a new database at @path. */
static struct store *delta_db(const char *path, const struct delta_history *h, const int *order) {
	remove_db(path);
	struct store *store;
	if (store_open(&store, path, STORE_MODE_WRITE) < 0) {
		return NULL;
	}
	for (int k = 0; k < DELTA_ROWS; k++) {
		int i = order ? order[k] : k;
		put(store, h->ts[i], CLOCK_STATE_SYNCED, h->v[i], NULL);
	}
	return store;
}

/*
 * Steady cycles are stored against the row before them in their hour: after the first row of
 * an hour, the rows are delta rows and smaller than the same values coded absolute.
 */
static void test_delta_rows(void) {
	struct delta_history h;
	delta_history_init(&h, 11);
	char *path = tmp_path("delta.db");
	struct store *store = delta_db(path, &h, NULL);
	int rc;
	struct all_samples a = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && matches_history(&a, &h, NULL), "every value reads back as written");
	store_close(store);

	struct raw_rows r;
	raw_rows_read(path, &r);
	size_t delta = 0, opens = 0, stored = 0, absolute = 0;
	bool first_absolute = true;
	for (size_t i = 0; i < r.n; i++) {
		bool opens_hour = i == 0 || r.ts[i] / 3600 != r.ts[i - 1] / 3600;
		bool is_delta = codec_row_is_delta(r.data[i], r.len[i]);
		opens += opens_hour;
		delta += is_delta;
		first_absolute = first_absolute && !(opens_hour && is_delta);
		stored += r.len[i];
		// The same values coded alone, as every row was before.
		struct codec_pair pairs[N_CHANS];
		for (int c = 0; c < N_CHANS; c++) {
			pairs[c] = (struct codec_pair){c + 1,
						       llround(h.v[i][c] / chans[c].resolution)};
		}
		uint8_t buf[CODEC_ROW_MAX(N_CHANS)];
		absolute += codec_pairs_encode(buf, pairs, N_CHANS);
	}
	is_int(opens, 3, "the rows span three hours");
	ok(first_absolute, "the first row of each hour is absolute");
	ok(delta >= (r.n - opens) * 3 / 4, "most other rows are delta rows");
	ok(stored * 10 < absolute * 9, "delta rows take less than nine tenths of absolute ones");
	printf("# %zu bytes in %zu rows (%zu delta), %zu absolute\n", stored, r.n, delta, absolute);
	raw_rows_free(&r);
	free(a.s);
	remove_db(path);
	free(path);
}

/*
 * Rows written in any order (a queue flushed late, an out-of-order cycle) end as the same
 * bytes as rows written in order: each row is coded against the one before it in its hour.
 * A scan from inside an hour reads the same values as the whole scan has there.
 */
static void test_delta_any_order(void) {
	struct delta_history h;
	delta_history_init(&h, 12);
	int order[DELTA_ROWS];
	for (int i = 0; i < DELTA_ROWS; i++) {
		order[i] = i;
	}
	srand(99);
	for (int i = DELTA_ROWS - 1; i > 0; i--) {
		int j = rand() % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	char *in_order = tmp_path("order.db"), *shuffled = tmp_path("shuffled.db");
	struct store *a = delta_db(in_order, &h, NULL);
	struct store *b = delta_db(shuffled, &h, order);
	int rc_a, rc_b;
	struct all_samples sa = scan_all(a, 0, INT64_MAX, &rc_a);
	struct all_samples sb = scan_all(b, 0, INT64_MAX, &rc_b);
	ok(rc_a == 0 && rc_b == 0 && same_samples(&sa, &sb) && matches_history(&sb, &h, NULL),
	   "rows written in random order read as rows written in order");
	// From the middle of an hour: the chain is read from the hour's first row.
	int64_t from = h.ts[47];
	struct all_samples tail = scan_all(b, from, INT64_MAX, &rc_b);
	struct all_samples want = {.s = sa.s + 47 * N_CHANS, .n = sa.n - 47 * N_CHANS};
	ok(rc_b == 0 && same_samples(&tail, &want), "a scan from inside an hour reads the same");
	struct all_samples one = scan_all(b, h.ts[100], h.ts[100] + 1, &rc_b);
	struct all_samples want1 = {.s = sa.s + 100 * N_CHANS, .n = N_CHANS};
	ok(rc_b == 0 && same_samples(&one, &want1), "one row inside an hour reads the same");
	store_close(a);
	store_close(b);
	struct raw_rows ra, rb;
	raw_rows_read(in_order, &ra);
	raw_rows_read(shuffled, &rb);
	bool same = ra.n == rb.n && ra.n == DELTA_ROWS;
	for (size_t i = 0; same && i < ra.n; i++) {
		same = ra.len[i] == rb.len[i] && memcmp(ra.data[i], rb.data[i], ra.len[i]) == 0;
	}
	ok(same, "and are stored as the same bytes");
	raw_rows_free(&ra);
	raw_rows_free(&rb);
	free(sa.s);
	free(sb.s);
	free(tail.s);
	free(one.s);
	remove_db(in_order);
	remove_db(shuffled);
	free(in_order);
	free(shuffled);
}

/* An import into the middle of an hour: a new row between two, a value merged into a row. */
static void test_delta_import(void) {
	struct delta_history h;
	delta_history_init(&h, 13);
	bool present[DELTA_ROWS];
	int order[DELTA_ROWS], n = 0;
	for (int i = 0; i < DELTA_ROWS; i++) {
		present[i] = i != 70; // the cycle at 70 is missing from the daemon's rows
		if (present[i]) {
			order[n++] = i;
		}
	}
	char *path = tmp_path("import.db");
	remove_db(path);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	for (int k = 0; k < n; k++) {
		put(store, h.ts[order[k]], CLOCK_STATE_SYNCED, h.v[order[k]], NULL);
	}
	int rc;
	struct all_samples before = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && matches_history(&before, &h, present), "the daemon's rows, one missing");
	// The missing cycle imported value by value: a new row between two of an hour.
	store_begin(store);
	for (int c = 0; c < N_CHANS; c++) {
		int64_t id = channel_id(store, chans[c].key);
		int64_t q = llround(h.v[70][c] / chans[c].resolution);
		enum store_import_result res;
		is_int(store_insert_sample(store, h.ts[70], id, q, &res), 0, "import into the gap");
	}
	is_int(store_commit(store), 0, "committed");
	struct all_samples after = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && matches_history(&after, &h, NULL), "the imported row reads between its "
							 "neighbours, and they read as before");
	// A conflicting value changes nothing; a new channel merges into a row mid-hour.
	enum store_import_result res;
	int64_t soc = channel_id(store, chans[0].key);
	store_insert_sample(store, h.ts[71], soc, 1, &res);
	is_int(res, STORE_IMPORT_CONFLICT, "a different value at a stored (ts, channel) conflicts");
	struct channel extra = {.key = "iio/extra", .kind = CHANNEL_KIND_OTHER, .resolution = 1};
	int64_t extra_id;
	store_channel_ensure(store, &extra, &extra_id);
	store_begin(store);
	is_int(store_insert_sample(store, h.ts[72], extra_id, -7, &res), 0, "a value merged");
	is_int(store_insert_sample(store, h.ts[74], extra_id, 90, &res), 0, "two rows later");
	store_commit(store);
	struct all_samples merged = scan_all(store, 0, INT64_MAX, &rc);
	struct all_samples rest = {0};
	int64_t extra_q[2] = {0};
	for (size_t i = 0; i < merged.n; i++) {
		if (merged.s[i].channel_id == extra_id) {
			extra_q[merged.s[i].ts == h.ts[74]] = merged.s[i].q;
		} else {
			all_sample(&rest, &merged.s[i]);
		}
	}
	ok(rc == 0 && merged.n == after.n + 2 && extra_q[0] == -7 && extra_q[1] == 90 &&
		   matches_history(&rest, &h, NULL),
	   "the merged values read back, every other value as before");
	// A second channel merged into every row: forwards through the first hours, backwards
	// through the last (each row's neighbours must be the ones stored, not a stale copy).
	struct channel more = {.key = "iio/more", .kind = CHANNEL_KIND_OTHER, .resolution = 1};
	int64_t more_id;
	store_channel_ensure(store, &more, &more_id);
	store_begin(store);
	bool all_new = true;
	for (int k = 0; k < DELTA_ROWS; k++) {
		int i = k < 100 ? k : DELTA_ROWS - 1 - (k - 100);
		all_new = all_new &&
			  store_insert_sample(store, h.ts[i], more_id, 1000 + i, &res) == 0 &&
			  res == STORE_IMPORT_NEW;
	}
	is_int(store_commit(store), 0, "a channel merged into every row");
	ok(all_new, "every value new");
	struct all_samples every = scan_all(store, 0, INT64_MAX, &rc);
	bool right = rc == 0 && every.n == merged.n + DELTA_ROWS;
	struct all_samples others = {0};
	for (size_t i = 0; right && i < every.n; i++) {
		if (every.s[i].channel_id == more_id) {
			right = every.s[i].q == 1000 + (every.s[i].ts - h.ts[0]) / 60;
		} else if (every.s[i].channel_id != extra_id) {
			all_sample(&others, &every.s[i]);
		}
	}
	ok(right && matches_history(&others, &h, NULL),
	   "each row holds its merged value and the others as before");
	free(every.s);
	free(others.s);
	// A writer appending to that hour now continues the chain of the imported rows.
	double v[] = {44.5, 1200e6, 3};
	is_int(put(store, h.ts[DELTA_ROWS - 1] + 20, CLOCK_STATE_SYNCED, v, NULL), 0, "appended");
	struct all_samples last = scan_all(store, h.ts[DELTA_ROWS - 1] + 20, INT64_MAX, &rc);
	ok(rc == 0 && last.n == 3 && last.s[0].q == 44500 && last.s[1].q == 1200000 &&
		   last.s[2].q == 3,
	   "a cycle after them reads back");
	store_close(store);
	free(before.s);
	free(after.s);
	free(merged.s);
	free(rest.s);
	free(last.s);
	remove_db(path);
	free(path);
}

/* Commits left before the next one is turned into a rollback (-1: none is), for any connection. */
static int commits_left = -1;

static int fail_commit(void *ctx) {
	(void)ctx;
	if (commits_left < 0) {
		return 0;
	}
	return commits_left-- == 0;
}

static int hook_connection(sqlite3 *db, const char **err, const void *api) {
	(void)err;
	(void)api;
	sqlite3_commit_hook(db, fail_commit, NULL);
	return SQLITE_OK;
}

/*
 * Pruning deletes a batch of rows a transaction; a batch ends where its count does, mostly
 * inside an hour. The row after it there lost its base and must read right on its own, also
 * when the next batch never comes (the daemon stopped; here its commit fails).
 */
static void test_delta_prune(void) {
	sqlite3_auto_extension((void (*)(void))hook_connection);
	char *path = tmp_path("prune.db");
	remove_db(path);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	struct delta_history h;
	delta_history_init(&h, 14);
	// 1100 cycles 10 s apart (three hours), then the history's hours after them.
	for (int i = 0; i < 1100; i++) {
		put(store, T0 - 4 * 3600 + 10 * i, CLOCK_STATE_SYNCED, h.v[i % DELTA_ROWS], NULL);
	}
	for (int i = 0; i < DELTA_ROWS; i++) {
		put(store, h.ts[i], CLOCK_STATE_SYNCED, h.v[i], NULL);
	}
	is_int(store_maintain(store, T0 + 4 * 3600, 0), 0, "rolled up");
	int rc;
	struct all_samples want = scan_all(store, T0 - 4 * 3600 + 10 * 1024, INT64_MAX, &rc);
	commits_left = 1; // the first batch commits, the second does not
	ok(store_maintain(store, T0 + 4 * 3600, 4 * 3600) < 0, "pruning stopped after a batch");
	commits_left = -1;
	struct all_samples got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && got.n > 0 && got.s[0].ts == T0 - 4 * 3600 + 10 * 1024 &&
		   got.s[0].ts % 3600 != 0,
	   "the first batch ended inside an hour");
	ok(rc == 0 && same_samples(&got, &want), "every row left reads as before");
	free(got.s);
	// The prune finished: whole hours gone, the rest unchanged.
	is_int(store_maintain(store, T0 + 4 * 3600, 4 * 3600), 0, "pruning finished");
	got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && matches_history(&got, &h, NULL), "only the history after the cutoff is left");
	store_close(store);
	sqlite3_cancel_auto_extension((void (*)(void))hook_connection);
	free(got.s);
	free(want.s);
	remove_db(path);
	free(path);
}

/* repair --drop-after inside an hour, then the writer goes on in that hour. */
static void test_delta_drop_after(void) {
	struct delta_history h;
	delta_history_init(&h, 15);
	char *path = tmp_path("drop.db");
	struct store *store = delta_db(path, &h, NULL);
	struct store_drop drop;
	// Inside the hour written last, which the writer still holds decoded.
	is_int(store_drop_after(store, h.ts[129], false, &drop), 0, "dropped after row 129");
	bool present[DELTA_ROWS];
	for (int i = 0; i < DELTA_ROWS; i++) {
		present[i] = i <= 129;
	}
	int rc;
	struct all_samples got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && matches_history(&got, &h, present), "the rows up to the cut read as before");
	free(got.s);
	// Rows written again after the cut (the clock came back) continue from row 129.
	for (int i = 130; i < DELTA_ROWS; i++) {
		put(store, h.ts[i], CLOCK_STATE_SYNCED, h.v[i], NULL);
	}
	got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && matches_history(&got, &h, NULL), "and the rows written after it too");
	store_close(store);
	free(got.s);
	remove_db(path);
	free(path);
}

/* A finer resolution rescales a channel's values in delta rows; the next cycle builds on them. */
static void test_delta_rescale(void) {
	struct delta_history h;
	delta_history_init(&h, 16);
	char *path = tmp_path("rescale.db");
	struct store *store = delta_db(path, &h, NULL);
	int rc;
	struct all_samples before = scan_all(store, 0, INT64_MAX, &rc);
	int64_t fan = channel_id(store, chans[2].key);
	double applied;
	is_int(store_channel_refine(store, fan, 0.25, &applied), 0, "the fan state refined to 1/4");
	struct all_samples after = scan_all(store, 0, INT64_MAX, &rc);
	bool scaled = rc == 0 && after.n == before.n;
	for (size_t i = 0; scaled && i < after.n; i++) {
		int64_t f = after.s[i].channel_id == fan ? 4 : 1;
		scaled = after.s[i].ts == before.s[i].ts && after.s[i].q == before.s[i].q * f;
	}
	ok(scaled, "its values are 4 times what they were, the others as they were");
	double v[] = {44.5, 1200e6, 2.25};
	struct channel fine = chans[2];
	chans[2].resolution = 0.25;
	is_int(put(store, h.ts[DELTA_ROWS - 1] + 20, CLOCK_STATE_SYNCED, v, NULL), 0, "a cycle");
	chans[2] = fine;
	struct all_samples last = scan_all(store, h.ts[DELTA_ROWS - 1] + 20, INT64_MAX, &rc);
	ok(rc == 0 && last.n == 3 && last.s[2].q == 9, "a cycle after it in the hour reads back");
	store_close(store);
	free(before.s);
	free(after.s);
	free(last.s);
	remove_db(path);
	free(path);
}

/*
 * A database whose rows were written before delta rows (both absolute forms, written here
 * directly) reads the same after the writer adds delta rows to the same hour; a delta row
 * cut short, or one whose hour lost its first row behind the store's back, is an error.
 */
static void test_delta_old_rows_and_damage(void) {
	struct delta_history h;
	delta_history_init(&h, 17);
	char *path = tmp_path("old-rows.db");
	remove_db(path);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	for (int i = 0; i < 100; i++) {
		put(store, h.ts[i], CLOCK_STATE_SYNCED, h.v[i], NULL);
	}
	store_close(store);
	// Rows 0..99 rewritten as the writer wrote them before: runs, and pairs for odd rows.
	sqlite3 *db;
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
	sqlite3_stmt *upd;
	sqlite3_prepare_v2(db, "UPDATE samples SET data = ?2 WHERE ts = ?1", -1, &upd, NULL);
	for (int i = 0; i < 100; i++) {
		struct codec_pair pairs[N_CHANS];
		uint8_t buf[CODEC_ROW_MAX(N_CHANS)];
		size_t len = 0;
		for (int c = 0; c < N_CHANS; c++) {
			pairs[c] = (struct codec_pair){c + 1,
						       llround(h.v[i][c] / chans[c].resolution)};
			if (i % 2) { // (id delta, zigzag q), the first form
				len += codec_put_varint(buf + len, 1);
				len += codec_put_varint(buf + len, codec_zigzag(pairs[c].q));
			}
		}
		if (i % 2 == 0) {
			len = codec_pairs_encode(buf, pairs, N_CHANS);
		}
		sqlite3_bind_int64(upd, 1, h.ts[i]);
		sqlite3_bind_blob(upd, 2, buf, (int)len, SQLITE_TRANSIENT);
		sqlite3_step(upd);
		sqlite3_reset(upd);
	}
	sqlite3_finalize(upd);
	sqlite3_close(db);
	store_open(&store, path, STORE_MODE_WRITE);
	for (int i = 100; i < DELTA_ROWS; i++) {
		put(store, h.ts[i], CLOCK_STATE_SYNCED, h.v[i], NULL);
	}
	int rc;
	struct all_samples old = scan_all(store, 0, INT64_MAX, &rc);
	size_t want_n = (size_t)DELTA_ROWS * N_CHANS;
	ok(rc == 0 && old.n == want_n, "old rows and delta rows read in one hour");
	ok(rc == 0 && matches_history(&old, &h, NULL), "every value is the history's");
	double v[] = {45, 1e9, 1};
	is_int(put(store, h.ts[99] + 10, CLOCK_STATE_SYNCED, v, NULL), 0,
	       "a cycle between an old row and a delta row");
	struct all_samples mixed = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && mixed.n == want_n + 3, "reads with the row after it coded again");
	store_close(store);
	free(old.s);
	free(mixed.s);

	// Damage: a delta row cut short.
	struct raw_rows r;
	raw_rows_read(path, &r);
	int64_t cut_ts = 0;
	for (size_t i = 0; i < r.n && !cut_ts; i++) {
		if (codec_row_is_delta(r.data[i], r.len[i]) && r.ts[i] > h.ts[110]) {
			cut_ts = r.ts[i];
		}
	}
	raw_rows_free(&r);
	char *sql = xasprintf("UPDATE samples SET data = substr(data, 1, length(data) - 1) "
			      "WHERE ts = %lld",
			      (long long)cut_ts);
	raw_exec(path, sql);
	free(sql);
	store_open(&store, path, STORE_MODE_WRITE);
	struct all_samples bad = scan_all(store, cut_ts, cut_ts + 1, &rc);
	is_int(rc, -EINVAL, "a delta row cut short is an error");
	free(bad.s);
	// The writer goes on: a cycle later in that hour is stored, readable on its own.
	double later[] = {46, 1e9, 2};
	int64_t later_ts = h.ts[119] + 10;
	is_int(put(store, later_ts, CLOCK_STATE_SYNCED, later, NULL), 0,
	       "a cycle after the damage in its hour is stored");
	store_close(store);
	raw_rows_read(path, &r);
	bool alone = false;
	for (size_t i = 0; i < r.n; i++) {
		alone |= r.ts[i] == later_ts && !codec_row_is_delta(r.data[i], r.len[i]);
	}
	raw_rows_free(&r);
	ok(alone, "absolute: it needs no row before it");
	// Damage: an hour's first row deleted behind the store's back leaves a delta row first.
	sql = xasprintf("DELETE FROM samples WHERE ts = %lld", (long long)h.ts[150 - 1 - 19]);
	raw_exec(path, sql);
	free(sql);
	int64_t hour3 = (h.ts[DELTA_ROWS - 1] / 3600) * 3600;
	sql = xasprintf("DELETE FROM samples WHERE ts = (SELECT min(ts) FROM samples WHERE ts >= "
			"%lld)",
			(long long)hour3);
	raw_exec(path, sql);
	free(sql);
	store_open(&store, path, STORE_MODE_WRITE);
	bad = scan_all(store, hour3, INT64_MAX, &rc);
	is_int(rc, -EINVAL, "a delta row without the row before it is an error, not values");
	free(bad.s);
	store_close(store);
	remove_db(path);
	free(path);
}

/* A scan in slices, as an export reads: each stops at the first value of a row. */
struct slicer {
	struct all_samples got;
	int64_t cursor;
	size_t rows_left; // rows to read before stopping
	int64_t row_ts;
};

static int slice_sample(void *ctx, const struct store_sample *s) {
	struct slicer *sl = ctx;
	if (s->ts != sl->row_ts) {
		sl->row_ts = s->ts;
		if (sl->rows_left-- == 0) {
			sl->cursor = s->ts;
			return 1;
		}
	}
	return all_sample(&sl->got, s);
}

/*
 * Slice after slice from the row the last one stopped at reads what one scan reads, also when
 * rows change between slices: here or on another connection, at the row a slice stopped at.
 */
static void test_delta_slices(void) {
	struct delta_history h;
	delta_history_init(&h, 18);
	char *path = tmp_path("slices.db");
	struct store *store = delta_db(path, &h, NULL);
	struct store *reader;
	store_open(&reader, path, STORE_MODE_READ);
	int rc;
	struct all_samples whole = scan_all(reader, 0, INT64_MAX, &rc);
	struct slicer sl = {.cursor = 0, .row_ts = -1};
	int slices = 0;
	do {
		sl.rows_left = 7;
		sl.row_ts = -1;
		rc = store_scan_samples(reader, sl.cursor, INT64_MAX, NULL, 0, true, slice_sample,
					&sl);
		slices++;
	} while (rc == 1);
	ok(rc == 0 && slices > 20 && same_samples(&sl.got, &whole), "slices read as one scan");
	free(sl.got.s);
	// A scan from the very start after a whole one (which held no stopping row) reads all.
	struct all_samples again = scan_all(reader, INT64_MIN, INT64_MAX, &rc);
	ok(rc == 0 && same_samples(&again, &whole), "a scan from INT64_MIN after one that ended");
	free(again.s);

	// Between two slices the writer merges a value into the row the first stopped at.
	struct channel extra = {.key = "iio/extra", .kind = CHANNEL_KIND_OTHER, .resolution = 1};
	int64_t extra_id;
	store_channel_ensure(store, &extra, &extra_id);
	sl = (struct slicer){.rows_left = 30, .row_ts = -1};
	rc = store_scan_samples(reader, 0, INT64_MAX, NULL, 0, true, slice_sample, &sl);
	enum store_import_result res;
	store_begin(store);
	store_insert_sample(store, sl.cursor, extra_id, 77, &res);
	store_commit(store);
	sl.rows_left = 1000;
	sl.row_ts = -1;
	rc = store_scan_samples(reader, sl.cursor, INT64_MAX, NULL, 0, true, slice_sample, &sl);
	bool seen = false;
	for (size_t i = 0; i < sl.got.n; i++) {
		seen |= sl.got.s[i].ts == sl.cursor && sl.got.s[i].channel_id == extra_id &&
			sl.got.s[i].q == 77;
	}
	ok(rc == 0 && seen && sl.got.n == whole.n + 1,
	   "a value another connection wrote meanwhile is read in the next slice");
	free(sl.got.s);
	// The same on one connection: the writer scans, writes, scans on.
	struct all_samples now = scan_all(store, 0, INT64_MAX, &rc);
	sl = (struct slicer){.rows_left = 60, .row_ts = -1};
	rc = store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, slice_sample, &sl);
	store_begin(store);
	store_insert_sample(store, sl.cursor, extra_id, 78, &res);
	store_commit(store);
	sl.rows_left = 1000;
	sl.row_ts = -1;
	rc = store_scan_samples(store, sl.cursor, INT64_MAX, NULL, 0, true, slice_sample, &sl);
	seen = false;
	for (size_t i = 0; i < sl.got.n; i++) {
		seen |= sl.got.s[i].ts == sl.cursor && sl.got.s[i].channel_id == extra_id &&
			sl.got.s[i].q == 78;
	}
	ok(rc == 0 && seen && sl.got.n == now.n + 1, "and one this connection wrote");
	free(sl.got.s);
	free(now.s);
	free(whole.s);
	store_close(reader);
	store_close(store);
	remove_db(path);
	free(path);
}

int main(void) {
	log_init(LOG_LEVEL_ERROR);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_open_memory();
	test_cycle_round_trip();
	test_channel_list_changes();
	test_mixed_rows();
	test_unsynced_and_cycles();
	test_channels();
	test_state();
	test_transactions();
	test_import();
	test_resolution_refine();
	test_import_beside_writer();
	test_change_marks();
	test_insert_plans();
	test_channels_version();
	test_channel_counts();
	test_future_import();
	test_atomic_disk_full();
	test_rollups();
	test_retention();
	test_throttle();
	test_drop_after();
	test_info_from_days();
	test_files();
	test_page_size();
	test_backup();
	test_reader_while_writing();
	test_corrupt();
	test_read_only_file();
	test_runs_read();
	test_delta_rows();
	test_delta_any_order();
	test_delta_import();
	test_delta_prune();
	test_delta_drop_after();
	test_delta_rescale();
	test_delta_old_rows_and_damage();
	test_delta_slices();
	rmdir(tmpdir);
	return test_done();
}
