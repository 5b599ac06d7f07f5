/*
 * The store's reads (store-scan.c): cycles and samples scanned in time order, in slices, and the
 * channels' counts.
 */

#include "store-fixture.h"
#include "test.h"

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

struct nested {
	struct store *store;
	size_t outer, inner;
};

/* Each sample of the outer scan reads its cycle again with a scan of its own, inside it. */
static int scan_inside(void *ctx, const struct store_sample *s) {
	struct nested *n = ctx;
	struct collect c = {0};
	n->outer++;
	if (store_scan_samples(n->store, s->ts, s->ts + 1, NULL, 0, true, collect_sample, &c) ==
	    0) {
		n->inner += c.n;
	}
	return 0;
}

/* Field by field: a sample's padding is whatever the store's copy held. */
static bool same_collected(const struct collect *a, const struct collect *b) {
	for (size_t i = 0; i < a->n && i < 256; i++) {
		const struct store_sample *x = &a->s[i], *y = &b->s[i];
		if (x->ts != y->ts || x->channel_id != y->channel_id || x->q != y->q ||
		    x->clock != y->clock) {
			return false;
		}
	}
	return true;
}

/*
 * A scan keeps its statements for the next one (the store's spares): scans opened inside one
 * another each read with their own, compacted blocks and the head alike, and the scans after
 * them read the same.
 */
static void test_nested_scans(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	for (int i = 0; i < 6; i++) { // three cycles in a block that is compacted, three after
		put(store, T0 + (i < 3 ? i * 60 : 5 * 3600 + i * 60), CLOCK_STATE_SYNCED, v, NULL);
	}
	is_int(store_maintain(store, T0 + 6 * 3600, 0), 0, "the first block compacted");
	struct collect first = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &first);
	is_int(first.n, 18, "six cycles of three values");
	for (int round = 0; round < 2; round++) {
		struct nested n = {.store = store};
		is_int(store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, scan_inside, &n), 0,
		       round ? "again, with the statements kept" : "a scan with scans inside it");
		ok(n.outer == 18 && n.inner == 54, "each reads every value once");
	}
	struct collect last = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &last);
	ok(last.n == first.n && same_collected(&last, &first), "a scan after them reads the same");
	store_close(store);
}

int main(void) {
	store_fixture_begin();
	test_unsynced_and_cycles();
	test_channel_counts();
	test_delta_slices();
	test_nested_scans();
	store_fixture_end();
	return test_done();
}
