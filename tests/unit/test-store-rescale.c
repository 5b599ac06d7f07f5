/*
 * The rescale (store-rescale.c): a finer resolution rescales a channel's stored integers exactly,
 * raw rows and rollups.
 */

#include <string.h>

#include <sqlite3.h>

#include "store-fixture.h"
#include "test.h"
#include "timefmt.h"
#include "xalloc.h"

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

/* Every rollup of the fan (hourly or daily) as the reader gets it: their sums and bins. */
struct fan_rollups {
	int64_t id, n, sum, bins;
};

static int fan_rollup(void *ctx, const struct store_rollup *r) {
	struct fan_rollups *f = ctx;
	if (r->channel_id == f->id) {
		f->n++;
		f->sum += r->sum_q;
		for (size_t b = 0; b < r->n_bins; b++) {
			f->bins += r->bin_q[b] * r->bin_count[b];
		}
	}
	return 0;
}

/* The fan's rollups (hourly, or daily) of the history's hours rolled up before the refinement. */
static struct fan_rollups fan_sums(struct store *store, int64_t id, bool days) {
	struct fan_rollups f = {.id = id};
	(days ? store_scan_rollup_days : store_scan_rollups)(store, INT64_MIN, T0 - 3600, &id, 1,
							     fan_rollup, &f);
	return f;
}

/* Every raw row of a database file, through SQLite directly: ts and blob (growing). */
struct all_rows {
	int64_t *ts;
	uint8_t **data;
	size_t *len;
	size_t n, cap;
};

static void all_rows_read(const char *path, struct all_rows *r) {
	sqlite3 *db;
	sqlite3_stmt *st;
	r->n = 0;
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	sqlite3_prepare_v2(db, "SELECT ts, data FROM samples ORDER BY ts", -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (r->n == r->cap) {
			size_t c = r->cap;
			r->ts = xgrow(r->ts, &c, r->n + 1, sizeof(*r->ts));
			r->data = xrealloc(r->data, c * sizeof(*r->data));
			r->len = xrealloc(r->len, c * sizeof(*r->len));
			r->cap = c;
		}
		r->ts[r->n] = sqlite3_column_int64(st, 0);
		r->len[r->n] = (size_t)sqlite3_column_bytes(st, 1);
		r->data[r->n] = xcalloc(r->len[r->n] + 1, 1);
		memcpy(r->data[r->n], sqlite3_column_blob(st, 1), r->len[r->n]);
		r->n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void all_rows_free(struct all_rows *r) {
	for (size_t i = 0; i < r->n; i++) {
		free(r->data[i]);
	}
	r->n = 0;
}

static void all_rows_finish(struct all_rows *r) {
	all_rows_free(r);
	free(r->ts);
	free(r->data);
	free(r->len);
}

/* The raw rows whose bytes differ between @a and @b (the same ts in both). */
static size_t rows_changed(const struct all_rows *a, const struct all_rows *b) {
	size_t changed = 0;
	for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
		if (a->ts[i] < b->ts[j]) {
			i++;
		} else if (a->ts[i] > b->ts[j]) {
			j++;
		} else {
			changed += a->len[i] != b->len[j] ||
				   memcmp(a->data[i], b->data[j], a->len[i]) != 0;
			i++, j++;
		}
	}
	return changed;
}

/*
 * A live reading finer than a long history refines it without rewriting the history inside the
 * cycle: the cycle rescales only the rows of its own UTC day, every read scales the older ones
 * at once, and store_rescale_work() rewrites them a bounded batch at a time, newest first, the
 * merged days staying merged. (Before, the cycle rewrote every row of the channel: 11 s on a
 * ten-year history, the loop held.)
 */
static void test_refine_in_batches(void) {
	char *path = tmp_path("batches.db");
	remove_db(path);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	// Ten days of two-minute cycles before T0 (7200 rows), rolled up and merged into days.
	int64_t start = T0 - 10 * 86400, rows_before = 0;
	store_begin(store);
	for (int64_t ts = start; ts < T0; ts += 120, rows_before++) {
		double v[] = {40 + (ts / 120) % 7, 1e9, (double)((ts / 600) % 5)};
		put(store, ts, CLOCK_STATE_SYNCED, v, NULL);
	}
	store_commit(store);
	is_int(store_maintain(store, T0, 0), 0, "ten days of history rolled up and merged");
	int64_t fan = channel_id(store, chans[2].key), day_horizon = 0;
	store_day_horizon(store, &day_horizon);
	int rc;
	struct all_samples before = scan_all(store, INT64_MIN, INT64_MAX, &rc);
	struct fan_rollups hours = fan_sums(store, fan, false), days = fan_sums(store, fan, true);
	struct all_rows rows_a = {0}, rows_b = {0}, *old = &rows_a, *now = &rows_b;
	all_rows_read(path, old);

	// The fan now reads in quarters: a live cycle at T0 refines it by 4.
	chans[2].resolution = 0.25;
	double v[] = {41, 1e9, 2.25};
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v, NULL), 0, "a cycle with the fan at 0.25");
	all_rows_read(path, now);
	size_t day_rows = (size_t)((T0 - timefmt_floor(T0, 86400)) / 120);
	ok(rows_changed(old, now) <= day_rows,
	   "the cycle rewrote only the rows of its own day, not the ten days before");
	struct all_samples mid = scan_all(store, INT64_MIN, T0, &rc);
	bool scaled = rc == 0 && mid.n == before.n;
	for (size_t i = 0; scaled && i < mid.n; i++) {
		int64_t f = mid.s[i].channel_id == fan ? 4 : 1;
		scaled = mid.s[i].ts == before.s[i].ts && mid.s[i].q == before.s[i].q * f;
	}
	ok(scaled, "yet every stored value reads at the finer resolution at once");
	struct fan_rollups h1 = fan_sums(store, fan, false), d1 = fan_sums(store, fan, true);
	ok(h1.n == hours.n && h1.sum == 4 * hours.sum && h1.bins == 4 * hours.bins,
	   "and every hourly rollup");
	int64_t horizon_now = 0;
	store_day_horizon(store, &horizon_now);
	ok(d1.n == days.n && d1.sum == 4 * days.sum && d1.bins == 4 * days.bins &&
		   horizon_now == day_horizon,
	   "and every merged day, which stays merged");

	// The rest in batches of about 600 rows, a maintenance and a cycle among them.
	int batches = 0, too_big = 0;
	bool more = true;
	while (more && batches < 1000) {
		struct all_rows *a = now;
		now = old;
		old = a;
		all_rows_free(now);
		rc = store_rescale_work(store, 600, &more);
		all_rows_read(path, now);
		too_big += rc < 0 || rows_changed(old, now) > 600 + 30; // whole hours
		if (batches++ == 3) {
			store_maintain(store, T0 + 3600, 0);
			double w[] = {42, 1e9, 3.5};
			put(store, T0 + 3600 + 60, CLOCK_STATE_SYNCED, w, NULL);
		}
	}
	ok(!more && batches > 5, "the history rescaled in batches");
	is_int(too_big, 0, "none failed or rewrote more than 600 rows and the hour it ended in");
	struct all_samples after = scan_all(store, INT64_MIN, T0, &rc);
	ok(rc == 0 && same_samples(&after, &mid), "every value reads as it did meanwhile");
	struct fan_rollups h2 = fan_sums(store, fan, false), d2 = fan_sums(store, fan, true);
	ok(h2.sum == 4 * hours.sum && d2.sum == 4 * days.sum && d2.bins == 4 * days.bins,
	   "rollups and merged days too, now stored at the finer resolution");
	chans[2].resolution = 1;
	store_close(store);
	struct store *reader;
	store_open(&reader, path, STORE_MODE_READ);
	struct all_samples again = scan_all(reader, INT64_MIN, T0, &rc);
	ok(rc == 0 && same_samples(&again, &mid), "another connection reads the same");
	store_close(reader);
	free(before.s);
	free(mid.s);
	free(after.s);
	free(again.s);
	all_rows_finish(&rows_a);
	all_rows_finish(&rows_b);
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_resolution_refine();
	test_delta_rescale();
	test_refine_in_batches();
	store_fixture_end();
	return test_done();
}
