/*
 * The store's writer (store-write.c): cycles, the channel cache and list, which channels are
 * present, and rows coded against the row before them in their hour.
 */

#include <errno.h>

#include <sqlite3.h>

#include "codec.h"
#include "store-fixture.h"
#include "test.h"
#include "xalloc.h"

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

int main(void) {
	store_fixture_begin();
	test_cycle_round_trip();
	test_channel_list_changes();
	test_mixed_rows();
	test_channels();
	test_channels_version();
	test_delta_rows();
	test_delta_any_order();
	test_delta_old_rows_and_damage();
	store_fixture_end();
	return test_done();
}
