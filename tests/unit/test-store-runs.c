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

static int collect_metric(void *ctx, const struct store_run_metric *m) {
	struct buf *b = ctx;
	buf_printf(b, "%lld:%s=%g%s ", (long long)m->run_id, m->name, m->value, m->unit);
	return 0;
}

/* A run's metrics: stored with an import, a stop and alone; one unit a name. */
static void test_run_metrics(void) {
	char *path = tmp_path("metrics.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open");
	const int64_t t = INT64_C(1790812800000);
	struct store_run_metric im[] = {{.name = "latency", .value = 12.5, .unit = "ms"},
					{.name = "tok_s", .value = 30, .unit = ""}};
	int rc[3] = {1, 1, 1};
	struct store_run_import a = {.label = "llm",
				     .start_ms = t,
				     .end_ms = t + 1000,
				     .status = RUN_STATUS_OK,
				     .exit_code = 0,
				     .energy_j = NAN,
				     .temp_max_c = NAN,
				     .rss_max_bytes = NAN,
				     .import_key = "llm|a",
				     .metrics = im,
				     .n_metrics = 2,
				     .metric_rc = rc};
	bool added = false;
	is_int(store_run_import(store, &a, &added), 0, "an import with metrics");
	ok(added && rc[0] == 0 && rc[1] == 0, "both stored");
	struct store_run_new live = {.label = "llm", .start_ms = t + 5000};
	int64_t id;
	is_int(store_run_begin(store, &live, &id), 0, "a live run begins");
	// Without a unit, latency takes its name's; in seconds it is refused, the rest kept.
	struct store_run_metric em[] = {{.name = "latency", .value = 13, .unit = ""},
					{.name = "tok_s", .value = 31, .unit = "tok/s"},
					{.name = "new", .value = -1, .unit = ""}};
	struct store_run_end end = {.end_ms = t + 9000,
				    .status = RUN_STATUS_OK,
				    .energy_j = NAN,
				    .energy_coverage = NAN,
				    .temp_max_c = NAN,
				    .rss_max_bytes = -1,
				    .metrics = em,
				    .n_metrics = 3,
				    .metric_rc = rc};
	is_int(store_run_end(store, id, &end), 0, "a stop with metrics");
	ok(rc[0] == 0 && rc[1] == 0 && rc[2] == 0, "tok_s had no unit yet: it takes tok/s");
	struct store_run_metric late[] = {{.name = "latency", .value = 2, .unit = "s"},
					  {.name = "quality", .value = 0.5, .unit = ""}};
	is_int(store_run_metrics_put(store, id, late, 2, rc), 0, "metrics after the end");
	ok(rc[0] == -EDOM && rc[1] == 0, "a metric in another unit than its name's is refused");
	is_int(store_run_metrics_put(store, 999, late + 1, 1, rc), -ENOENT, "no such run");
	char *unit;
	is_int(store_run_metric_unit(store, "latency", &unit), 0, "a name's unit");
	is_str(unit, "ms", "latency: ms");
	free(unit);
	store_run_metric_unit(store, "nothing", &unit);
	is_str(unit, "", "a name never recorded: none");
	free(unit);
	struct buf got = {0};
	is_int(store_run_metrics_scan(store, NULL, collect_metric, &got), 0, "scan every run's");
	is_str(got.data,
	       "1:latency=12.5ms 1:tok_s=30 2:latency=13ms 2:new=-1 2:quality=0.5 2:tok_s=31tok/s ",
	       "in the runs' order, each run's by name, units resolved");
	buf_clear(&got);
	struct store_run_filter from = {.from_ms = t + 1, .has_from = true};
	store_run_metrics_scan(store, &from, collect_metric, &got);
	ok(got.data && strncmp(got.data, "2:", 2) == 0, "the filter selects the runs");
	buf_clear(&got);
	is_int(store_run_metrics_get(store, 1, collect_metric, &got), 0, "one run's");
	is_str(got.data, "1:latency=12.5ms 1:tok_s=30 ", "run 1's metrics");
	buf_finish(&got);
	store_close(store);
	remove_db(path);
	free(path);
}

static int count_run(void *ctx, const struct store_run *run) {
	(void)run;
	(*(int *)ctx)++;
	return 0;
}

/* The runs a tags filter selects: every tag with its value, whatever characters they hold. */
static void test_tag_filter(void) {
	char *path = tmp_path("tags.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open");
	const int64_t t = INT64_C(1790812800000);
	static const char *const tags[] = {"{\"start\":\"cold\",\"q\\\"k\":\"ä \\\" v\"}",
					   "{\"start\":\"warm\"}", "{}"};
	for (int i = 0; i < 3; i++) {
		char key[16];
		snprintf(key, sizeof(key), "k%d", i);
		struct store_run_import r = {.label = "x",
					     .start_ms = t + i * 1000,
					     .end_ms = t + i * 1000 + 500,
					     .status = RUN_STATUS_OK,
					     .exit_code = 0,
					     .energy_j = NAN,
					     .temp_max_c = NAN,
					     .rss_max_bytes = NAN,
					     .import_key = key,
					     .tags = tags[i]};
		bool added;
		store_run_import(store, &r, &added);
	}
	static const struct {
		const char *want;
		int n;
	} cases[] = {{"{\"start\":\"cold\"}", 1},
		     {"{\"start\":\"warm\"}", 1},
		     {"{\"q\\\"k\":\"ä \\\" v\"}", 1},
		     {"{\"start\":\"cold\",\"q\\\"k\":\"ä \\\" v\"}", 1},
		     {"{\"start\":\"cold\",\"q\\\"k\":\"other\"}", 0},
		     {"{\"start\":\"hot\"}", 0},
		     {"{}", 3}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct store_run_filter f = {.tags = cases[i].want};
		int n = 0;
		is_int(store_runs_scan(store, &f, count_run, &n), 0, cases[i].want);
		is_int(n, cases[i].n, "runs carrying those tags");
	}
	store_close(store);
	// A crafted row whose tags are no JSON matches no tag filter, and breaks no scan.
	sqlite3 *db;
	sqlite3_open(path, &db);
	is_int(sqlite3_exec(db, "UPDATE runs SET tags = 'not json' WHERE import_key = 'k1'", NULL,
			    NULL, NULL),
	       SQLITE_OK, "a crafted tags text");
	sqlite3_close(db);
	store_open(&store, path, STORE_MODE_READ);
	struct store_run_filter f = {.tags = "{\"start\":\"warm\"}"};
	int n = 0;
	is_int(store_runs_scan(store, &f, count_run, &n), 0, "a filter over it");
	is_int(n, 0, "matches nothing");
	store_close(store);
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_tag_filter();
	test_runs_read();
	test_run_metrics();
	store_fixture_end();
	return test_done();
}
