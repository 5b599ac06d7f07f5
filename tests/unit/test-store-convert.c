/*
 * The conversion of a database an older thermlog wrote (store-convert.c): a seeded history in
 * the old layout (cycles in their own table, a packed row of values a cycle, hourly rollups,
 * hours whose values retention pruned), written at every schema version from 1 to 10, reads the
 * same before, during and after its conversion, value for value and rollup for rollup; a
 * conversion stopped at any transaction resumes to the same result; a day that does not match
 * its old rollups stops it with the old tables kept; imports wait for it.
 */
#include <errno.h>
#include <sqlite3.h>

#include "codec.h"
#include "sql/store-migrations.h"
#include "store-fixture.h"
#include "test.h"
#include "xalloc.h"

#define N_VERSIONS  ((int)(sizeof(store_migrations) / sizeof(store_migrations[0])))
#define OLD_VERSION 10               // the last schema before the chunks (sql/0011-chunks.sql)
#define H0          (T0 - 2 * 86400) // the history's first hour
#define PRUNED      (H0 + 6 * 3600)  // values before it were pruned by the old retention
#define MAX_CYCLES  4096

/* The seeded history, as the old thermlog stored it and as every read must give it back. */
struct truth {
	int64_t ts[MAX_CYCLES];
	int clock[MAX_CYCLES];
	int boot[MAX_CYCLES]; // boots.id, 0 = imported
	bool has[MAX_CYCLES][N_CHANS];
	int64_t q[MAX_CYCLES][N_CHANS];
	size_t n;
	int64_t rolled; // the old rollup horizon: hours before it were rolled up
};

static struct truth truth;

static void seed_truth(unsigned seed) {
	srand(seed);
	int64_t t = H0 + 17;
	int64_t q[N_CHANS] = {45000, 1800000, 2};
	truth.n = 0;
	while (t < H0 + 60 * 3600 && truth.n < MAX_CYCLES) {
		size_t i = truth.n++;
		truth.ts[i] = t;
		int hour = (int)((t - H0) / 3600);
		truth.clock[i] = hour % 9 == 4    ? CLOCK_STATE_UNSYNCED
				 : hour % 13 == 7 ? CLOCK_STATE_UNKNOWN
						  : CLOCK_STATE_SYNCED;
		truth.boot[i] = hour < 20 ? 1 : hour % 17 == 3 ? 0 : 2;
		q[0] += (rand() % 3 - 1) * 923 + (rand() % 5 == 0);
		q[1] = rand() % 6 == 0 ? (408 + 96 * (rand() % 20)) * 1000 : q[1];
		q[2] = rand() % 11 == 0 ? rand() % 5 : q[2];
		for (int c = 0; c < N_CHANS; c++) {
			truth.has[i][c] = rand() % 19 != 0 || (c == 0 && rand() % 2);
			truth.q[i][c] = q[c];
		}
		int r = rand() % 100;
		t += r < 70 ? 60 : r < 85 ? 20 : r < 98 ? 60 + rand() % 600 : 2 * 3600;
	}
	truth.rolled = (truth.ts[truth.n - 1] / 3600) * 3600;
}

/* Runs @sql on @db, failing the test on an error. */
static void sql(sqlite3 *db, const char *text) {
	char *err = NULL;
	if (sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK) {
		printf("# %s: %s\n", text, err);
		ok(false, "the old layout is written");
	}
	sqlite3_free(err);
}

/* The hourly rollups the old thermlog wrote: every rolled-up hour of each channel. */
static void write_rollups(sqlite3 *db) {
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db,
			   "INSERT INTO rollups (hour, channel_id, count, sum, min, max, max_ts, "
			   "unsynced, hist) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
			   -1, &st, NULL);
	static int64_t vals[MAX_CYCLES];
	static uint8_t blob[MAX_CYCLES * 2 * CODEC_VARINT_MAX];
	for (int64_t hour = H0; hour < truth.rolled; hour += 3600) {
		for (int c = 0; c < N_CHANS; c++) {
			size_t n = 0;
			int64_t sum = 0, unsynced = 0, max_ts = 0, min = 0, max = 0;
			for (size_t i = 0; i < truth.n; i++) {
				if (truth.ts[i] < hour || truth.ts[i] >= hour + 3600 ||
				    !truth.has[i][c]) {
					continue;
				}
				if (truth.clock[i] == CLOCK_STATE_UNSYNCED) {
					unsynced++;
					continue;
				}
				int64_t v = truth.q[i][c];
				min = n == 0 || v < min ? v : min;
				if (n == 0 || v > max) {
					max = v;
					max_ts = truth.ts[i];
				}
				vals[n++] = v;
				sum += v;
			}
			if (n == 0 && unsynced == 0) {
				continue;
			}
			for (size_t a = 1; a < n; a++) { // insertion sort: an hour is small
				int64_t v = vals[a];
				size_t b = a;
				for (; b > 0 && vals[b - 1] > v; b--) {
					vals[b] = vals[b - 1];
				}
				vals[b] = v;
			}
			size_t len = codec_hist_encode_values(blob, vals, n);
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			sqlite3_bind_int64(st, 1, hour);
			sqlite3_bind_int(st, 2, c + 1);
			sqlite3_bind_int64(st, 3, (int64_t)n);
			sqlite3_bind_int64(st, 4, sum);
			if (n > 0) {
				sqlite3_bind_int64(st, 5, min);
				sqlite3_bind_int64(st, 6, max);
				sqlite3_bind_int64(st, 7, max_ts);
			}
			sqlite3_bind_int64(st, 8, unsynced);
			sqlite3_bind_blob(st, 9, blob, (int)len, SQLITE_STATIC);
			sqlite3_step(st);
		}
	}
	sqlite3_finalize(st);
}

/* The cycles and their rows of values (pair rows, or coded against the row before). */
static void write_cycles(sqlite3 *db) {
	sqlite3_stmt *cyc, *row;
	sqlite3_prepare_v2(db, "INSERT INTO cycles (ts, boot, clock) VALUES (?1, ?2, ?3)", -1, &cyc,
			   NULL);
	sqlite3_prepare_v2(db, "INSERT INTO samples (ts, clock, data) VALUES (?1, ?2, ?3)", -1,
			   &row, NULL);
	struct codec_pair pairs[N_CHANS], prev[N_CHANS];
	size_t n_prev = 0;
	int64_t prev_hour = INT64_MIN;
	uint8_t blob[CODEC_ROW_MAX(N_CHANS)];
	for (size_t i = 0; i < truth.n; i++) {
		sqlite3_reset(cyc);
		sqlite3_clear_bindings(cyc);
		sqlite3_bind_int64(cyc, 1, truth.ts[i]);
		if (truth.boot[i]) {
			sqlite3_bind_int(cyc, 2, truth.boot[i]);
		}
		sqlite3_bind_int(cyc, 3, truth.clock[i]);
		sqlite3_step(cyc);
		size_t n = 0;
		for (int c = 0; c < N_CHANS; c++) {
			if (truth.has[i][c]) {
				pairs[n++] = (struct codec_pair){c + 1, truth.q[i][c]};
			}
		}
		if (truth.ts[i] < PRUNED || n == 0) {
			continue; // pruned values, or a cycle without any: no row
		}
		int64_t hour = truth.ts[i] / 3600 * 3600;
		bool delta = hour == prev_hour && i % 3 != 0; // the old writers' forms, mixed
		size_t len = delta ? codec_row_encode(blob, pairs, n, prev, n_prev)
				   : codec_pairs_encode(blob, pairs, n);
		memcpy(prev, pairs, n * sizeof(*pairs));
		n_prev = n;
		prev_hour = hour;
		sqlite3_reset(row);
		sqlite3_bind_int64(row, 1, truth.ts[i]);
		sqlite3_bind_int(row, 2, truth.clock[i]);
		sqlite3_bind_blob(row, 3, blob, (int)len, SQLITE_STATIC);
		sqlite3_step(row);
	}
	sqlite3_finalize(cyc);
	sqlite3_finalize(row);
}

/* A database of schema @version holding the seeded history as the old thermlog kept it. */
static void write_old(const char *path, int version) {
	remove_db(path);
	sqlite3 *db;
	sqlite3_open(path, &db);
	sql(db, "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; BEGIN");
	for (int v = 0; v < version; v++) {
		sql(db, store_migrations[v]);
	}
	char *meta =
		xasprintf("PRAGMA user_version = %d; PRAGMA application_id = 1414024263", version);
	sql(db, meta);
	free(meta);
	sql(db, "INSERT INTO boots (id, boot_id) VALUES (1, 'first-boot'), (2, 'second-boot')");
	for (int c = 0; c < N_CHANS; c++) {
		char *ch = xasprintf("INSERT INTO channels (id, key, source, label, kind, unit, "
				     "resolution, first_seen, last_seen) VALUES (%d, '%s', 'test', "
				     "'%s', '%s', '%s', %.17g, %lld, %lld)",
				     c + 1, chans[c].key, chans[c].label,
				     channel_kind_name(chans[c].kind), chans[c].unit,
				     chans[c].resolution, (long long)truth.ts[0],
				     (long long)truth.ts[truth.n - 1]);
		sql(db, ch);
		free(ch);
	}
	write_cycles(db);
	write_rollups(db);
	char *state = xasprintf("INSERT INTO state (key, value) VALUES ('store.rollup_horizon', "
				"'%lld'), ('store.raw_horizon', '%lld')",
				(long long)truth.rolled, (long long)PRUNED);
	sql(db, state);
	free(state);
	sql(db, "COMMIT");
	sqlite3_close(db);
}

/* Whether every value from PRUNED on reads back as the truth, unsynced ones too. */
static bool values_match(struct store *store) {
	int rc;
	struct all_samples got = scan_all(store, INT64_MIN, INT64_MAX, &rc);
	size_t k = 0;
	bool same = rc == 0;
	for (size_t i = 0; same && i < truth.n; i++) {
		for (int c = 0; same && c < N_CHANS; c++) {
			if (truth.ts[i] < PRUNED || !truth.has[i][c]) {
				continue;
			}
			same = k < got.n && got.s[k].ts == truth.ts[i] &&
			       got.s[k].channel_id == c + 1 && got.s[k].q == truth.q[i][c] &&
			       (int)got.s[k].clock == truth.clock[i];
			k++;
		}
	}
	same = same && k == got.n;
	free(got.s);
	return same;
}

struct cycle_check {
	size_t n;
	bool same;
};

static int check_cycle(void *ctx, const struct store_cycle *c) {
	struct cycle_check *cc = ctx;
	cc->same = cc->same && cc->n < truth.n && c->ts == truth.ts[cc->n] &&
		   (int)c->clock == truth.clock[cc->n];
	cc->n++;
	return 0;
}

/* Every cycle with its clock, and the last one of each boot's daemon. */
static bool cycles_match(struct store *store) {
	struct cycle_check cc = {.same = true};
	store_scan_cycles(store, INT64_MIN, INT64_MAX, check_cycle, &cc);
	int64_t own = 0, want = 0;
	for (size_t i = 0; i < truth.n; i++) {
		want = truth.boot[i] ? truth.ts[i] : want;
	}
	store_last_own_cycle(store, INT64_MAX, &own);
	struct store_info info;
	store_info(store, &info);
	return cc.same && cc.n == truth.n && own == want && info.cycles == (int64_t)truth.n &&
	       info.first_cycle == truth.ts[0] && info.last_cycle == truth.ts[truth.n - 1];
}

/* The rollups of every rolled-up hour, the pruned ones' from their table, as written. */
struct rollup_check {
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t n;
	bool same;
};

static int check_rollup(void *ctx, const struct store_rollup *r) {
	struct rollup_check *rc = ctx;
	sqlite3_reset(rc->st);
	sqlite3_bind_int64(rc->st, 1, r->hour);
	sqlite3_bind_int64(rc->st, 2, r->channel_id);
	bool row = sqlite3_step(rc->st) == SQLITE_ROW;
	rc->same = rc->same && row && sqlite3_column_int64(rc->st, 0) == r->count &&
		   sqlite3_column_int64(rc->st, 1) == r->sum_q &&
		   sqlite3_column_int64(rc->st, 2) == r->unsynced &&
		   (r->count == 0 || (sqlite3_column_int64(rc->st, 3) == r->min_q &&
				      sqlite3_column_int64(rc->st, 4) == r->max_q &&
				      sqlite3_column_int64(rc->st, 5) == r->max_ts));
	rc->n++;
	return 0;
}

/* Compared with the rollups of @reference, a copy of the old database never converted. */
static bool rollups_match(struct store *store, const char *reference) {
	struct rollup_check rc = {.same = true};
	sqlite3_open_v2(reference, &rc.db, SQLITE_OPEN_READONLY, NULL);
	sqlite3_prepare_v2(rc.db,
			   "SELECT count, sum, unsynced, min, max, max_ts FROM rollups WHERE "
			   "hour = ?1 AND channel_id = ?2",
			   -1, &rc.st, NULL);
	store_scan_rollups(store, H0, truth.rolled, NULL, 0, check_rollup, &rc);
	sqlite3_stmt *count;
	sqlite3_prepare_v2(rc.db, "SELECT count(*) FROM rollups", -1, &count, NULL);
	sqlite3_step(count);
	bool all = sqlite3_column_int64(count, 0) == (int64_t)rc.n;
	sqlite3_finalize(count);
	sqlite3_finalize(rc.st);
	sqlite3_close(rc.db);
	return rc.same && all;
}

/* Maintenance until none is left (a conversion takes several steps). */
static int maintain_all(struct store *store) {
	int rc;
	while ((rc = store_maintain_some(store, truth.ts[truth.n - 1] + 86400, 0, 50)) == 1) {
	}
	return rc;
}

static void test_versions(void) {
	char *path = tmp_path("old.db"), *ref = tmp_path("reference.db");
	seed_truth(5);
	write_old(ref, OLD_VERSION);
	for (int version = 1; version <= OLD_VERSION; version++) {
		char what[96];
		write_old(path, version);
		struct store *store;
		snprintf(what, sizeof(what), "schema %d: opened", version);
		is_int(store_open(&store, path, STORE_MODE_WRITE), 0, what);
		struct store_convert state;
		store_convert_state(store, &state);
		snprintf(what, sizeof(what), "schema %d: being converted, read as before", version);
		ok(state.converting && values_match(store) && cycles_match(store) &&
			   rollups_match(store, ref),
		   what);
		snprintf(what, sizeof(what), "schema %d: converted", version);
		ok(maintain_all(store) == 0 && store_convert_state(store, &state) == 0 &&
			   !state.converting && !state.failed[0],
		   what);
		snprintf(what, sizeof(what), "schema %d: every value, cycle and rollup as before",
			 version);
		ok(values_match(store) && cycles_match(store) && rollups_match(store, ref), what);
		store_close(store);
		snprintf(what, sizeof(what),
			 "schema %d: the old tables went, the pruned hours' "
			 "rollups stayed",
			 version);
		ok(query_raw(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'cycles'") ==
				   0 &&
			   query_fmt(path, "SELECT count(*) FROM rollups WHERE hour >= %lld",
				     (long long)PRUNED) == 0 &&
			   query_raw(path, "SELECT count(*) FROM rollups") > 0 && integrity(path),
		   what);
	}
	remove_db(path);
	remove_db(ref);
	free(path);
	free(ref);
}

/*
 * Commits that change something left before the next one is turned into a rollback (-1: none
 * is), for any connection: a process killed there, its transaction lost.
 */
static int commits_left = -1;
static int64_t changes_seen;

static int fail_commit(void *ctx) {
	int64_t changes = sqlite3_total_changes64(ctx);
	bool counts = changes != changes_seen;
	changes_seen = changes;
	return counts && commits_left >= 0 && commits_left-- == 0;
}

static int hook_connection(sqlite3 *db, const char **err, const void *api) {
	(void)err;
	(void)api;
	sqlite3_commit_hook(db, fail_commit, db);
	return SQLITE_OK;
}

/*
 * Stopped at a seeded choice of its transactions (the process gone there), the conversion
 * resumes at the next open to the same result.
 */
static void test_interrupted(void) {
	char *path = tmp_path("stopped.db"), *ref = tmp_path("reference.db");
	seed_truth(9);
	write_old(ref, OLD_VERSION);
	sqlite3_auto_extension((void (*)(void))hook_connection);
	srand(77);
	bool all = true;
	int stopped = 0;
	for (int round = 0; round < 30 && all; round++) {
		write_old(path, OLD_VERSION);
		struct store *store;
		store_open(&store, path, STORE_MODE_WRITE);
		commits_left = rand() % 20; // of its 25 or so transactions
		stopped += maintain_all(store) < 0;
		commits_left = -1;
		store_close(store);
		bool a = store_open(&store, path, STORE_MODE_WRITE) == 0,
		     b = a && values_match(store), c = a && cycles_match(store),
		     d = a && rollups_match(store, ref);
		all = a && b && c && d;
		struct store_convert state;
		int m = maintain_all(store);
		store_convert_state(store, &state);
		bool e = values_match(store), f = cycles_match(store),
		     g = rollups_match(store, ref);
		store_close(store);
		bool h = integrity(path);
		all = all && m == 0 && !state.converting && e && f && g && h;
	}
	sqlite3_cancel_auto_extension((void (*)(void))hook_connection);
	ok(all && stopped == 30, "stopped at 30 seeded points, it reads as before and resumes to "
				 "the same result");
	remove_db(path);
	remove_db(ref);
	free(path);
	free(ref);
}

/*
 * A day whose values differ from the old rollups (here a rollup altered) stops the conversion
 * with the old tables kept and the reason said; the history reads as before; checked again
 * once retried, it converts. Imports wait for the conversion.
 */
static void test_check_fails(void) {
	char *path = tmp_path("differs.db");
	seed_truth(13);
	write_old(path, OLD_VERSION);
	int64_t hour = PRUNED + 5 * 3600;
	char *alter = xasprintf("UPDATE rollups SET sum = sum + 1 WHERE hour = %lld AND "
				"channel_id = 1",
				(long long)hour);
	is_int(exec_raw(path, alter), SQLITE_OK, "an old rollup altered");
	free(alter);
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	is_int(store_insert_sample(store, truth.ts[truth.n - 1] - 10, 1, 45000, NULL), -EBUSY,
	       "an import waits for the conversion");
	struct store_convert state;
	ok(maintain_all(store) == 0 && store_convert_state(store, &state) == 0 &&
		   state.converting && strstr(state.failed, "channel 1") &&
		   strstr(state.failed, "count, sum, min or max differs"),
	   "the conversion stops at the day that differs, saying where");
	ok(values_match(store) && cycles_match(store), "the history reads as before");
	ok(query_raw(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'cycles'") == 1 &&
		   query_fmt(path, "SELECT count(*) FROM rollups WHERE hour >= %lld",
			     (long long)PRUNED) > 0,
	   "the old tables are kept");
	alter = xasprintf("UPDATE rollups SET sum = sum - 1 WHERE hour = %lld AND channel_id = 1",
			  (long long)hour);
	exec_raw(path, alter);
	free(alter);
	is_int(store_convert_retry(store), 0, "retried");
	ok(maintain_all(store) == 0 && store_convert_state(store, &state) == 0 &&
		   !state.converting && values_match(store) && cycles_match(store),
	   "then it converts");
	is_int(store_insert_sample(store, truth.ts[truth.n - 1] - 10, 1, 45000, NULL), 0,
	       "and imports go on");
	store_close(store);
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_versions();
	test_interrupted();
	test_check_fails();
	store_fixture_end();
	return test_done();
}
