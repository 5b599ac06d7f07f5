/*
 * The store's imports and repair (store-import.c): channels ensured, values merged into cycles,
 * rows dropped after a cut.
 */

#include <errno.h>

#include "store-fixture.h"
#include "test.h"
#include "xalloc.h"

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

/*
 * The batch forms a wide import uses: channels ensured at once (ids in the order given, a key
 * given twice one id, a bad key refusing them all) and a cycle's values merged in one write
 * (new, identical, conflicting, a channel twice: the first counts), as value by value.
 */
static void test_batches(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	double v[] = {40, 1000000000, 1};
	put(store, T0 + 60, CLOCK_STATE_UNSYNCED, v, NULL);
	struct channel chs[] = {
		{.key = "wide/z",
		 .kind = CHANNEL_KIND_TEMPERATURE,
		 .unit = "celsius",
		 .resolution = 0.1},
		{.key = "wide/a",
		 .kind = CHANNEL_KIND_TEMPERATURE,
		 .unit = "celsius",
		 .resolution = 0.1},
		chans[0],
		{.key = "wide/z",
		 .kind = CHANNEL_KIND_TEMPERATURE,
		 .unit = "celsius",
		 .resolution = 0.1},
		{.key = "has space", .resolution = 1},
	};
	int64_t ids[5];
	is_int(store_channels_ensure(store, chs, 5, ids), -EINVAL, "a bad key among them: refused");
	struct store_channel *list;
	size_t n;
	store_channels(store, &list, &n);
	size_t before = n;
	store_channels_free(list, n);
	is_int(store_channels_ensure(store, chs, 4, ids), 0, "four channels ensured at once");
	store_channels(store, &list, &n);
	is_int(n, before + 2, "two new ones (a key twice, one known)");
	store_channels_free(list, n);
	ok(ids[0] > 0 && ids[1] == ids[0] + 1, "ids in the order given, not the keys'");
	is_int(ids[3], ids[0], "a key given twice: one id");
	is_int(ids[2], channel_id(store, "thermal/soc-thermal"), "a known key: its id");

	struct store_import_value vals[] = {
		{.channel_id = ids[0], .q = 401}, {.channel_id = ids[2], .q = 40000},
		{.channel_id = ids[1], .q = 402}, {.channel_id = ids[0], .q = 409},
		{.channel_id = ids[2], .q = 1},
	};
	store_begin(store);
	is_int(store_insert_samples(store, T0 + 60, vals, 5), 0, "a cycle's values merged at once");
	is_int(vals[0].result, STORE_IMPORT_NEW, "a new channel's value: new");
	is_int(vals[1].result, STORE_IMPORT_IDENTICAL, "the daemon's same value: identical");
	is_int(vals[2].result, STORE_IMPORT_NEW, "the other new one: new");
	is_int(vals[3].result, STORE_IMPORT_CONFLICT, "a channel again: the first one counts");
	is_int(vals[4].result, STORE_IMPORT_CONFLICT, "the daemon's value kept");
	struct store_import_value again[] = {{.channel_id = ids[1], .q = 402},
					     {.channel_id = ids[0], .q = 402}};
	is_int(store_insert_samples(store, T0 + 60, again, 2), 0, "the same cycle again");
	ok(again[0].result == STORE_IMPORT_IDENTICAL && again[1].result == STORE_IMPORT_CONFLICT,
	   "re-imported: identical, conflicting");
	is_int(store_insert_samples(store, T0 + 120, vals, 0), 0, "no values: nothing to do");
	is_int(store_commit(store), 0, "commit");
	struct collect c = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &c);
	int64_t z = 0, a = 0, soc = 0;
	for (size_t i = 0; i < c.n; i++) {
		z = c.s[i].channel_id == ids[0] ? c.s[i].q : z;
		a = c.s[i].channel_id == ids[1] ? c.s[i].q : a;
		soc = c.s[i].channel_id == ids[2] ? c.s[i].q : soc;
	}
	ok(z == 401 && a == 402 && soc == 40000, "stored: the first values, the daemon's kept");
	is_int(c.s[0].clock, CLOCK_STATE_UNSYNCED, "the cycle keeps its clock");
	store_close(store);
}

int main(void) {
	store_fixture_begin();
	test_import();
	test_batches();
	test_import_beside_writer();
	test_future_import();
	test_drop_after();
	test_delta_import();
	test_delta_drop_after();
	store_fixture_end();
	return test_done();
}
