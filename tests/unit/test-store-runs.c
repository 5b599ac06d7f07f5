/*
 * The store's runs (store-runs.c): imported runs, their scans and the fast samples.
 */

#include <errno.h>

#include <sqlite3.h>

#include "buf.h"
#include "codec.h"
#include "store-fixture.h"
#include "test.h"

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

int main(void) {
	store_fixture_begin();
	test_runs_read();
	store_fixture_end();
	return test_done();
}
