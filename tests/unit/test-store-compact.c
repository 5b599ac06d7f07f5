/*
 * The store's compaction (store-compact.c) and its one reader of a series (store-series.c):
 * seeded histories read the same before and after their blocks are compacted, whatever the
 * window; the noisiest channels stay in their pages' cells (no overflow page, dbstat); a write
 * into a compacted block reopens it; imports, fast samples, a refinement and a repair over
 * compacted blocks; a full disk during a compaction loses nothing.
 */
#include <errno.h>
#include <sqlite3.h>

#include "store-fixture.h"
#include "test.h"
#include "xalloc.h"

#define BLOCK (4 * 3600)

static int64_t block_of(int64_t t) {
	return t - ((t % BLOCK) + BLOCK) % BLOCK;
}

/* What a history reads as: every value, every cycle, the last own cycle before a few times. */
struct snapshot {
	struct all_samples values;
	struct store_cycle *cycles;
	size_t n_cycles, cap_cycles;
	int64_t last_own[4];
	struct store_info info;
};

static int keep_cycle(void *ctx, const struct store_cycle *c) {
	struct snapshot *s = ctx;
	s->cycles = xgrow(s->cycles, &s->cap_cycles, s->n_cycles + 1, sizeof(*s->cycles));
	s->cycles[s->n_cycles++] = *c;
	return 0;
}

static struct snapshot snapshot(struct store *store, int64_t from, int64_t to) {
	struct snapshot s = {0};
	int rc;
	s.values = scan_all(store, from, to, &rc);
	store_scan_cycles(store, from, to, keep_cycle, &s);
	static const int64_t at[] = {T0 - 1, T0 + 5 * 3600, T0 + 86400, INT64_MAX};
	for (int i = 0; i < 4; i++) {
		store_last_own_cycle(store, at[i], &s.last_own[i]);
	}
	store_info(store, &s.info);
	return s;
}

static bool same_snapshot(const struct snapshot *a, const struct snapshot *b) {
	bool same = same_samples(&a->values, &b->values) && a->n_cycles == b->n_cycles &&
		    a->info.cycles == b->info.cycles &&
		    a->info.unsynced_cycles == b->info.unsynced_cycles &&
		    a->info.first_cycle == b->info.first_cycle &&
		    a->info.last_cycle == b->info.last_cycle;
	for (size_t i = 0; same && i < a->n_cycles; i++) {
		same = a->cycles[i].ts == b->cycles[i].ts &&
		       a->cycles[i].clock == b->cycles[i].clock;
	}
	for (int i = 0; same && i < 4; i++) {
		same = a->last_own[i] == b->last_own[i];
	}
	return same;
}

static void snapshot_free(struct snapshot *s) {
	free(s->values.s);
	free(s->cycles);
}

/* A cycle of chans[] at @ts from an imported source (no boot id) or the daemon's. */
static int put_cycle(struct store *store, int64_t ts, enum clock_state clock, const double *v,
		     const int *errs, bool own) {
	struct reading r[N_CHANS];
	for (int i = 0; i < N_CHANS; i++) {
		r[i] = (struct reading){.value = v[i], .err = errs ? errs[i] : 0};
	}
	struct cycle c = {.ts = ts,
			  .clock = clock,
			  .boot_id = own ? "4d4a0b6c-5b8e-4c7e-9f1a-2b3c4d5e6f70" : NULL,
			  .channels = chans,
			  .readings = r,
			  .n = N_CHANS};
	return store_write_cycle(store, &c);
}

/*
 * A seeded day and a half: spacings of 5 s to 20 min, gaps of hours, channels missing now and
 * then (a cycle without any value too), unsynced stretches, cycles of no daemon.
 */
static void seeded_history(struct store *store, unsigned seed) {
	srand(seed);
	int64_t t = T0 - 3 * 3600 + rand() % 600;
	double temp = 45, freq = 1.8e9, fan = 2;
	while (t < T0 + 33 * 3600) {
		temp += (rand() % 9 - 4) * 0.125;
		freq = rand() % 5 == 0 ? (408 + 96 * (rand() % 20)) * 1e6 : freq;
		fan = rand() % 9 == 0 ? rand() % 5 : fan;
		double v[] = {temp, freq, fan};
		int errs[] = {rand() % 13 == 0 ? -EIO : 0, rand() % 17 == 0 ? -EIO : 0,
			      rand() % 31 == 0 ? -EIO : 0};
		if (rand() % 97 == 0) {
			errs[0] = errs[1] = errs[2] = -EIO;
		}
		enum clock_state clock = (t / 3600) % 7 == 3    ? CLOCK_STATE_UNSYNCED
					 : (t / 3600) % 11 == 5 ? CLOCK_STATE_UNKNOWN
								: CLOCK_STATE_SYNCED;
		put_cycle(store, t, clock, v, errs, (t / 1800) % 5 != 2);
		int r = rand() % 100;
		t += r < 60   ? 60
		     : r < 80 ? 5 + rand() % 30
		     : r < 98 ? 60 + rand() % 1200
			      : 3 * 3600;
	}
}

static void test_round_trip(void) {
	bool all = true, parts = true;
	for (unsigned seed = 1; seed <= 12 && all; seed++) {
		struct store *store;
		store_open(&store, ":memory:", STORE_MODE_WRITE);
		seeded_history(store, seed);
		struct snapshot before = snapshot(store, INT64_MIN, INT64_MAX);
		int64_t cut[][2] = {{T0 + 1234, T0 + 7 * 3600 + 17},
				    {T0 - 3600, T0 + BLOCK},
				    {T0 + 3 * BLOCK - 1, T0 + 3 * BLOCK + 1}};
		struct snapshot window[3];
		for (int w = 0; w < 3; w++) {
			window[w] = snapshot(store, cut[w][0], cut[w][1]);
		}
		all = store_maintain(store, T0 + 40 * 3600, 0) == 0;
		struct snapshot after = snapshot(store, INT64_MIN, INT64_MAX);
		all = all && same_snapshot(&before, &after);
		for (int w = 0; w < 3; w++) {
			struct snapshot again = snapshot(store, cut[w][0], cut[w][1]);
			parts = parts && same_snapshot(&window[w], &again);
			snapshot_free(&again);
			snapshot_free(&window[w]);
		}
		snapshot_free(&before);
		snapshot_free(&after);
		store_close(store);
	}
	ok(all, "12 seeded histories read the same compacted: values, cycles, clocks, boots");
	ok(parts, "and so do windows that start and end inside blocks");
}

/* The pages SQLite moved a chunk's or a map's rest to (pagetype 'overflow'), or -1. */
static int64_t overflow_pages(const char *path) {
	return query_raw(path, "SELECT count(*) FROM dbstat WHERE pagetype = 'overflow' AND "
			       "name IN ('chunks', 'blocks')");
}

/*
 * The noisiest channels there are: a devfreq in Hz switching among its OPPs every sample and
 * floating ADC inputs (12-bit noise at the SARADC's resolution), at one sample a second: no
 * chunk may spill into overflow pages, on the 2 KiB pages of a new database and on the 4 KiB
 * pages of an older one; the chunks that would are split into parts.
 */
static struct channel noisy[6];
static char noisy_keys[6][32];

/* Cycles of the noisy channels every @step s over [@from, @to), in one transaction. */
static void write_noisy(struct store *store, int64_t from, int64_t to, int64_t step) {
	static const int64_t opp[] = {528000000, 1068000000, 1560000000, 2112000000};
	for (int i = 0; i < 6; i++) {
		snprintf(noisy_keys[i], sizeof(noisy_keys[i]),
			 i < 2 ? "devfreq/dmc%d" : "iio/saradc/voltage%d", i);
		noisy[i] = (struct channel){.key = noisy_keys[i],
					    .source = "test",
					    .label = noisy_keys[i],
					    .kind = i < 2 ? CHANNEL_KIND_FREQUENCY
							  : CHANNEL_KIND_VOLTAGE,
					    .unit = i < 2 ? "hertz" : "volt",
					    .resolution = i < 2 ? 1 : 0.000439453125};
	}
	srand(7);
	struct reading r[6];
	store_begin(store);
	for (int64_t t = from; t < to; t += step) {
		for (int i = 0; i < 6; i++) {
			r[i] = (struct reading){
				.value = i < 2 ? (double)opp[rand() % 4]
					       : (rand() % 4096) * 0.000439453125,
			};
		}
		struct cycle c = {.ts = t,
				  .clock = CLOCK_STATE_SYNCED,
				  .channels = noisy,
				  .readings = r,
				  .n = 6};
		store_write_cycle(store, &c);
	}
	store_commit(store);
}

static void test_size_rule(void) {
	for (int pages = 0; pages < 2; pages++) {
		char *path = tmp_path(pages ? "noisy4k.db" : "noisy.db");
		remove_db(path);
		if (pages) { // an empty file SQLite takes as new, made with 4 KiB pages
			FILE *f = fopen(path, "w");
			fclose(f);
			exec_raw(path,
				 "PRAGMA page_size = 4096; PRAGMA application_id = 1414024263; "
				 "VACUUM");
		}
		struct store *store;
		store_open(&store, path, STORE_MODE_WRITE);
		write_noisy(store, T0, T0 + 9 * 3600, 1);
		int rc;
		struct all_samples want = scan_all(store, INT64_MIN, INT64_MAX, &rc);
		is_int(store_maintain(store, T0 + 9 * 3600, 0), 0,
		       pages ? "4 KiB pages: compacted" : "2 KiB pages: compacted");
		struct all_samples got = scan_all(store, INT64_MIN, INT64_MAX, &rc);
		ok(rc == 0 && want.n == 6 * 9 * 3600 && same_samples(&got, &want),
		   "every noisy value reads back");
		store_close(store);
		is_int(query_raw(path, "PRAGMA page_size"), pages ? 4096 : 2048, "its page size");
		is_int(overflow_pages(path), 0, "no chunk and no map has an overflow page");
		ok(query_raw(path, "SELECT count(*) FROM chunks WHERE part > 10") > 0,
		   "the large chunks were split into parts");
		int64_t room = pages ? 1002 - 40 : 487 - 40;
		ok(query_raw(path, "SELECT max(length(data)) FROM chunks") <= room,
		   "none is longer than its page's cell allows");
		free(want.s);
		free(got.s);
		remove_db(path);
		free(path);
	}
}

/* A cycle or an import stamped into a compacted block reopens it; it is compacted again. */
/* A file @name holding seeded history @seed, compacted; its path in *@path (to free). */
static struct store *compacted_file(const char *name, unsigned seed, char **path) {
	*path = tmp_path(name);
	remove_db(*path);
	struct store *store;
	store_open(&store, *path, STORE_MODE_WRITE);
	seeded_history(store, seed);
	is_int(store_maintain(store, T0 + 40 * 3600, 0), 0, "compacted");
	return store;
}

static void test_reopen(void) {
	char *path;
	struct store *store = compacted_file("reopen.db", 21, &path);
	int64_t blocks = query_raw(path, "SELECT count(*) FROM blocks");
	ok(blocks > 5, "blocks written");
	double v[] = {51.5, 1.2e9, 3};
	int64_t at = T0 + BLOCK + 61; // inside the second block, between its cycles
	struct snapshot before = snapshot(store, INT64_MIN, INT64_MAX);
	is_int(put_cycle(store, at, CLOCK_STATE_SYNCED, v, NULL, true), 0,
	       "a cycle stamped into a compacted block is stored");
	is_int(query_fmt(path, "SELECT count(*) FROM blocks WHERE block = %lld",
			 (long long)block_of(at)),
	       0, "its block is back in the head");
	struct collect c = {0};
	store_scan_samples(store, at, at + 1, NULL, 0, true, collect_sample, &c);
	ok(c.n == 3 && c.s[0].q == 51500, "it reads back");
	struct snapshot mid = snapshot(store, INT64_MIN, INT64_MAX);
	ok(mid.values.n == before.values.n + 3 && mid.n_cycles == before.n_cycles + 1,
	   "beside every value stored before");
	is_int(put_cycle(store, mid.cycles[10].ts, CLOCK_STATE_SYNCED, v, NULL, true), -EEXIST,
	       "a stamp stored in a compacted block is refused");
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	enum store_import_result res;
	int64_t in_block = mid.cycles[mid.n_cycles / 2].ts;
	is_int(store_insert_sample(store, in_block + 1, soc, 47000, &res), 0,
	       "an import into another compacted block");
	ok(res == STORE_IMPORT_NEW, "is new there");
	is_int(store_maintain(store, T0 + 40 * 3600, 0), 0, "maintenance after them");
	struct snapshot after = snapshot(store, INT64_MIN, INT64_MAX);
	is_int(query_fmt(path, "SELECT count(*) FROM samples WHERE ts < %lld",
			 (long long)block_of(after.cycles[after.n_cycles - 1].ts)),
	       0, "both blocks are compacted again");
	ok(after.values.n == mid.values.n + 1 && after.n_cycles == mid.n_cycles + 1,
	   "with the new cycle and the imported value");
	is_int(store_insert_sample(store, in_block + 1, soc, 47000, &res), 0,
	       "the same import again");
	ok(res == STORE_IMPORT_IDENTICAL, "is identical");
	store_insert_sample(store, in_block + 1, soc, 47001, &res);
	ok(res == STORE_IMPORT_CONFLICT, "another value there is a conflict");
	snapshot_free(&before);
	snapshot_free(&mid);
	snapshot_free(&after);
	store_close(store);
	remove_db(path);
	free(path);
}

struct fast_window {
	int64_t n, first, last;
};

static int fast_tally(void *ctx, const struct store_run_sample *s) {
	int64_t *t = ctx;
	t[0]++;
	t[1] += s->q + s->ts_ms % 1000 + s->channel_id;
	return 0;
}

static int fast_window(void *ctx, const struct store_run_sample *s) {
	struct fast_window *w = ctx;
	w->first = w->n++ == 0 ? s->ts_ms : w->first;
	w->last = s->ts_ms;
	return 0;
}

/* Fast samples: compacted into blocks of their own (series 1), read back the same. */
static void test_fast(void) {
	char *path = tmp_path("fast.db");
	remove_db(path);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL); // registers the channels
	srand(3);
	struct reading r[3600][N_CHANS];
	struct store_run_instant s[3600];
	for (int i = 0; i < 3600; i++) {
		for (int c = 0; c < N_CHANS; c++) {
			r[i][c] = (struct reading){.value = c == 0   ? 40 + (rand() % 80) * 0.125
							    : c == 1 ? (408 + 96 * (rand() % 20)) *
									       1e6
								     : rand() % 5,
						   .err = rand() % 50 == 0 ? -EIO : 0};
		}
		s[i] = (struct store_run_instant){.ts_ms = (int64_t)T0 * 1000 + 1000 * i +
							   rand() % 7,
						  .n = N_CHANS,
						  .channels = chans,
						  .readings = r[i]};
	}
	for (int i = 0; i < 3600; i += 24) {
		store_run_samples_put(store, &s[i], 24);
	}
	int64_t before[2] = {0}, after[2] = {0};
	store_run_samples_scan(store, 0, INT64_MAX, fast_tally, before);
	put(store, T0 + 3 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_maintain(store, T0 + 3 * 3600, 0), 0, "maintained");
	ok(query_raw(path, "SELECT count(*) FROM blocks WHERE series = 1") >= 3,
	   "the fast samples' blocks are compacted");
	is_int(query_raw(path, "SELECT count(*) FROM run_samples"), 0, "and left the head");
	store_run_samples_scan(store, 0, INT64_MAX, fast_tally, after);
	ok(before[0] > 10000 && before[0] == after[0] && before[1] == after[1],
	   "every fast sample reads back");
	struct fast_window w = {0};
	store_run_samples_scan(store, (int64_t)T0 * 1000 + 600500, (int64_t)T0 * 1000 + 601500,
			       fast_window, &w);
	ok(w.n > 0 && w.first >= (int64_t)T0 * 1000 + 600500 &&
		   w.last < (int64_t)T0 * 1000 + 601500,
	   "a window of milliseconds inside a block");
	store_close(store);
	is_int(overflow_pages(path), 0, "no chunk and no map has an overflow page");
	ok(query_raw(path, "SELECT count(*) FROM blocks WHERE part > 0") > 0,
	   "the maps of jittered milliseconds were split into parts");
	remove_db(path);
	free(path);
}

/*
 * A full disk during a compaction: the block stays in the head, nothing is lost, and the
 * compaction is done once there is room again.
 */
static void test_disk_full(void) {
	char *path = tmp_path("full.db");
	remove_db(path);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	write_noisy(store, T0, T0 + 9 * 3600, 10);
	store_close(store);
	is_int(exec_raw(path, "VACUUM"), SQLITE_OK, "no free page left in the file");
	store_open(&store, path, STORE_MODE_WRITE);
	struct snapshot before = snapshot(store, INT64_MIN, INT64_MAX);
	int64_t pages = query_raw(path, "PRAGMA page_count");
	store_limit_pages(store, pages); // not a page more: the chunks do not fit
	ok(store_maintain(store, T0 + 9 * 3600, 0) == -ENOSPC, "a compaction on a full disk fails");
	struct snapshot mid = snapshot(store, INT64_MIN, INT64_MAX);
	ok(same_snapshot(&before, &mid), "nothing is lost: the head keeps the data");
	is_int(query_raw(path, "SELECT count(*) FROM blocks"), 0, "no block was compacted");
	store_limit_pages(store, 1 << 30);
	is_int(store_maintain(store, T0 + 9 * 3600, 0), 0, "with room again it is done");
	struct snapshot after = snapshot(store, INT64_MIN, INT64_MAX);
	ok(same_snapshot(&before, &after), "and every value reads as before");
	ok(query_raw(path, "SELECT count(*) FROM blocks") > 0, "from compacted blocks");
	snapshot_free(&before);
	snapshot_free(&mid);
	snapshot_free(&after);
	store_close(store);
	remove_db(path);
	free(path);
}

/* A refinement multiplies a compacted channel's values exactly; a repair cuts inside a block. */
static void test_refine_and_repair(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	seeded_history(store, 9);
	is_int(store_maintain(store, T0 + 40 * 3600, 0), 0, "compacted");
	struct snapshot before = snapshot(store, INT64_MIN, INT64_MAX);
	int64_t soc = channel_id(store, "thermal/soc-thermal");
	double applied = 0;
	is_int(store_channel_refine(store, soc, 0.0001, &applied), 0, "refine a compacted channel");
	struct snapshot after = snapshot(store, INT64_MIN, INT64_MAX);
	bool scaled = after.values.n == before.values.n;
	for (size_t i = 0; scaled && i < after.values.n; i++) {
		const struct store_sample *a = &before.values.s[i], *b = &after.values.s[i];
		scaled = a->ts == b->ts && a->channel_id == b->channel_id &&
			 b->q == (a->channel_id == soc ? a->q * 10 : a->q);
	}
	ok(scaled, "its values are ten times the integers, the others unchanged");
	int64_t cut = T0 + 2 * BLOCK + 1000;
	struct store_drop drop;
	is_int(store_drop_after(store, cut, false, &drop), 0, "a repair cuts inside a block");
	struct snapshot left = snapshot(store, INT64_MIN, INT64_MAX);
	size_t kept = 0;
	while (kept < after.n_cycles && after.cycles[kept].ts <= cut) {
		kept++;
	}
	ok(left.n_cycles == kept && drop.cycles == (int64_t)(after.n_cycles - kept),
	   "the cycles after the cut are gone, those before it kept");
	ok(left.values.n > 0 && left.values.s[left.values.n - 1].ts <= cut,
	   "and so are their values");
	snapshot_free(&before);
	snapshot_free(&after);
	snapshot_free(&left);
	store_close(store);
}

/* Each window's samples of store_scan_sample_windows(), kept apart. */
struct by_window {
	struct all_samples w[12];
	int stop_at; // the answer 7 at this sample (0: never)
	int seen;
};

static int window_sample(void *ctx, size_t window, const struct store_sample *s) {
	struct by_window *b = ctx;
	if (++b->seen == b->stop_at) {
		return 7;
	}
	return window < 12 ? all_sample(&b->w[window], s) : -1;
}

/*
 * Windows read by one reader (store_scan_sample_windows()) read as the whole history read
 * before the compaction, cut to each window: several in one compacted block (later, earlier,
 * overlapping, the same twice, one ending after the one before), across a block's edge, back to
 * an earlier block, empty, in the head, the whole history; all channels and one.
 */
static void test_windows(void) {
	bool same = true, stops = true;
	size_t in_block = 0; // values of the first four windows, all in one block
	for (unsigned seed = 1; seed <= 6; seed++) {
		struct store *store;
		store_open(&store, ":memory:", STORE_MODE_WRITE);
		seeded_history(store, seed);
		int rc;
		struct all_samples whole = scan_all(store, INT64_MIN, INT64_MAX, &rc);
		store_maintain(store, T0 + 40 * 3600, 0);
		int64_t b = block_of(T0 + BLOCK);
		struct store_window w[12] = {{b + 100, b + 1900},
					     {b + 2000, b + 2100},
					     {b + 1000, b + 5000},
					     {b + 1000, b + 5000},
					     {b + BLOCK - 600, b + BLOCK + 900},
					     {b + 60, b + 7200},
					     {b + 3 * BLOCK, b + 3 * BLOCK},
					     {b + BLOCK + 30, b + BLOCK + 40},
					     {T0 + 31 * 3600, T0 + 34 * 3600},
					     {b + 300, b + 400},
					     {INT64_MIN, INT64_MAX},
					     {b - 3600, b + 10}};
		int64_t one = channel_id(store, chans[1].key);
		for (int ids = 0; ids < 2; ids++) {
			struct by_window got = {0};
			rc = store_scan_sample_windows(store, w, 12, ids ? &one : NULL, ids, true,
						       window_sample, &got);
			same = same && rc == 0;
			for (int i = 0; i < 12; i++) {
				struct all_samples alone = {0};
				for (size_t k = 0; k < whole.n; k++) {
					const struct store_sample *x = &whole.s[k];
					if (x->ts >= w[i].from && x->ts < w[i].to &&
					    (ids == 0 || x->channel_id == one)) {
						all_sample(&alone, x);
					}
				}
				same = same && same_samples(&got.w[i], &alone);
				in_block += i < 4 && ids == 0 ? alone.n : 0;
				free(alone.s);
				free(got.w[i].s);
			}
		}
		struct by_window cut = {.stop_at = 40};
		stops = stops && store_scan_sample_windows(store, w, 12, NULL, 0, true,
							   window_sample, &cut) == 7;
		for (int i = 0; i < 12; i++) {
			free(cut.w[i].s);
		}
		free(whole.s);
		store_close(store);
	}
	ok(same && in_block > 200,
	   "windows read by one reader read as the history before its compaction");
	ok(stops, "and the function's first nonzero answer ends them");
}

/*
 * A read that meets a damaged chunk fails, and so does the same read again: a reader keeps no
 * block it could not read whole, which its cache would otherwise serve without the damage.
 */
static void test_damage_not_kept(void) {
	char *path;
	store_close(compacted_file("damage.db", 5, &path));
	int64_t block = query_raw(path, "SELECT min(block) FROM chunks WHERE series = 0 AND "
					"channel_id = 2");
	ok(exec_raw(path, "UPDATE chunks SET data = substr(data, 1, length(data) / 2) WHERE "
			  "series = 0 AND channel_id = 2 AND block = (SELECT min(block) FROM "
			  "chunks WHERE series = 0 AND channel_id = 2)") == 0,
	   "one channel's chunk of a block cut in half");
	struct store *reader;
	is_int(store_open(&reader, path, STORE_MODE_READ), 0, "a reader");
	for (int i = 0; i < 3; i++) {
		struct collect c = {0};
		int rc = store_scan_samples(reader, block, block + BLOCK, NULL, 0, true,
					    collect_sample, &c);
		ok(rc < 0,
		   i == 0 ? "a read of the block fails" : "and so does the same read again");
	}
	store_close(reader);
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_round_trip();
	test_windows();
	test_size_rule();
	test_reopen();
	test_fast();
	test_disk_full();
	test_refine_and_repair();
	test_damage_not_kept();
	store_fixture_end();
	return test_done();
}
