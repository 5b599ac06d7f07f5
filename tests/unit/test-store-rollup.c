/*
 * The store's rollups (store-rollup.c): hours rolled up exactly, merged into days, retention in
 * batches.
 */

#include <errno.h>

#include <sqlite3.h>

#include "store-fixture.h"
#include "test.h"
#include "xalloc.h"

static int cmp_q(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Every rollup of the @hours from T0 must equal what the raw rows of its hour give. */
static void check_rollups(struct store *store, int hours, const char *what) {
	struct rollups *got = xcalloc(1, sizeof(*got));
	store_scan_rollups(store, T0, T0 + hours * 3600, NULL, 0, collect_rollup, got);
	bool all = got->n == (size_t)hours * N_CHANS;
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
	check_rollups(store, 3,
		      "rollups equal the raw values: count, sum, min, max, max_ts, "
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
	check_rollups(store, 3, "re-rolled hours equal the raw values");
	got = xcalloc(1, sizeof(*got));
	store_scan_rollups(store, T0, T0 + 3600, &soc, 1, collect_rollup, got);
	is_int(got->r[0].max_q, 99000, "the imported maximum is in the rollup");
	is_int(got->r[0].max_ts, T0 + 10, "with its time");
	free(got);
	store_close(store);
}

/*
 * An hour of more distinct values than the store looks up one by one (64): its bins come from
 * the values sorted, the same bins. The values go down and up again, with repeats. Beside it
 * the hour's clocks (20 values far apart: looked up) and a state of 0..4 (a narrow range:
 * counted by value) are checked too, so each of the three ways makes its bins here.
 */
static void test_many_values(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	srand(11);
	for (int i = 0; i < 180; i++) {
		double v[] = {60 - (i < 90 ? i : 180 - i) * 0.25 + (rand() % 8) * 0.125,
			      (408 + 96 * (rand() % 20)) * 1e6, rand() % 5};
		put(store, T0 + 20 * i, CLOCK_STATE_SYNCED, v, NULL);
	}
	struct rollups *got = xcalloc(1, sizeof(*got));
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	store_scan_rollups(store, T0, T0 + 3600, &soc, 1, collect_rollup, got);
	ok(got->n == 1 && got->r[0].n_bins > 64, "an hour of more than 64 distinct values");
	free(got);
	check_rollups(store, 1, "its rollups equal the raw values, every histogram bin");
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

/*
 * Commits that change something, or with @compactions_only those of transactions that delete
 * head rows (a compaction), left before the next one is turned into a rollback (-1: none is),
 * for any connection.
 */
static int commits_left = -1;
static bool compactions_only, compacting;
static int64_t changes_seen;

static int fail_commit(void *ctx) {
	int64_t changes = sqlite3_total_changes64(ctx);
	bool counts = compactions_only ? compacting : changes != changes_seen;
	changes_seen = changes;
	compacting = false;
	return counts && commits_left >= 0 && commits_left-- == 0;
}

static void note_change(void *ctx, int op, const char *db, const char *table, sqlite3_int64 row) {
	(void)ctx;
	(void)db;
	(void)row;
	compacting = compacting || (op == SQLITE_DELETE && strcmp(table, "samples") == 0);
}

static void note_rollback(void *ctx) {
	(void)ctx;
	compacting = false;
}

static int hook_connection(sqlite3 *db, const char **err, const void *api) {
	(void)err;
	(void)api;
	sqlite3_commit_hook(db, fail_commit, db);
	sqlite3_rollback_hook(db, note_rollback, NULL);
	sqlite3_update_hook(db, note_change, NULL);
	return SQLITE_OK;
}

/*
 * Compaction moves one block a transaction. When a commit fails (a full disk, the daemon
 * killed), the block not committed stays in the head, every value reads as before, and the
 * next maintenance compacts it.
 */
static void test_compaction_stopped(void) {
	sqlite3_auto_extension((void (*)(void))hook_connection);
	char *path = tmp_path("compact.db");
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
	int64_t end = T0 + 4 * 3600; // two blocks closed before it
	put(store, end, CLOCK_STATE_SYNCED, h.v[0], NULL);
	int rc;
	struct all_samples want = scan_all(store, 0, INT64_MAX, &rc);
	// The first block commits, the second does not.
	compactions_only = true;
	commits_left = 1;
	ok(store_maintain(store, end, 0) < 0, "compaction stopped by a failed commit");
	commits_left = -1;
	struct all_samples got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && same_samples(&got, &want), "every value reads as before");
	free(got.s);
	is_int(query_raw(path, "SELECT count(DISTINCT block) FROM blocks"), 1,
	       "one block was compacted");
	is_int(store_maintain(store, end, 0), 0, "compaction finished");
	is_int(query_raw(path, "SELECT count(DISTINCT block) FROM blocks"), 2, "both blocks are");
	got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && same_samples(&got, &want), "and still every value reads as before");
	store_close(store);
	sqlite3_cancel_auto_extension((void (*)(void))hook_connection);
	free(got.s);
	free(want.s);
	remove_db(path);
	free(path);
}

#define BLOCK (4 * 3600) // the store's block of cycles

/*
 * Retention deletes the values of a batch of compacted blocks a transaction. When a commit fails,
 * what was not committed reads as before; the next maintenance finishes, and only the values
 * after the cutoff are left, the cycles before it still counted.
 */
static void test_prune_stopped(void) {
	sqlite3_auto_extension((void (*)(void))hook_connection);
	char *path = tmp_path("prune.db");
	remove_db(path);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	struct delta_history h;
	delta_history_init(&h, 14);
	// Twelve days of cycles ten minutes apart: 72 blocks, more than a transaction's batch.
	int64_t start = T0 - 12 * 86400;
	for (int i = 0; i < 12 * 144; i++) {
		put(store, start + 600 * i, CLOCK_STATE_SYNCED, h.v[i % DELTA_ROWS], NULL);
	}
	int64_t now = T0;
	put(store, now, CLOCK_STATE_SYNCED, h.v[0], NULL);
	is_int(store_maintain(store, now, 0), 0, "rolled up and compacted");
	int rc;
	int64_t cutoff = T0 - 3600, first_block = start - ((start % BLOCK) + BLOCK) % BLOCK;
	struct all_samples want = scan_all(store, first_block + 64 * BLOCK, INT64_MAX, &rc);
	struct store_info before, after;
	store_info(store, &before);
	compactions_only = false;
	commits_left = 1; // the first batch commits, the second does not
	ok(store_maintain(store, now, now - cutoff) < 0, "pruning stopped after a batch");
	commits_left = -1;
	struct all_samples got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && same_samples(&got, &want), "the values after the first batch read as before");
	free(got.s);
	is_int(store_maintain(store, now, now - cutoff), 0, "pruning finished");
	got = scan_all(store, 0, INT64_MAX, &rc);
	ok(rc == 0 && got.n == 7 * 3 && got.s[0].ts == cutoff,
	   "only the values from the cutoff on are left");
	store_info(store, &after);
	is_int(after.cycles, before.cycles, "every cycle is still counted");
	int64_t raw = 0;
	store_raw_horizon(store, &raw);
	is_int(raw, cutoff, "the raw horizon is the cutoff");
	struct rollups *r = xcalloc(1, sizeof(*r));
	store_scan_rollups(store, start, start + 3600, NULL, 0, collect_rollup, r);
	ok(r->n == 3 && r->r[0].count == 6, "the rollups of the pruned hours stay");
	free(r);
	store_close(store);
	sqlite3_cancel_auto_extension((void (*)(void))hook_connection);
	free(got.s);
	free(want.s);
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_rollups();
	test_many_values();
	test_retention();
	test_info_from_days();
	test_compaction_stopped();
	test_prune_stopped();
	store_fixture_end();
	return test_done();
}
