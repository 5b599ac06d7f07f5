/*
 * The rescale (store-rescale.c): a finer resolution rescales a channel's stored integers exactly,
 * raw rows and rollups.
 */

#include "store-fixture.h"
#include "test.h"

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

int main(void) {
	store_fixture_begin();
	test_resolution_refine();
	test_delta_rescale();
	store_fixture_end();
	return test_done();
}
