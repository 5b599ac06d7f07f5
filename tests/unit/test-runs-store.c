/* The store's runs write side: open, close, fast samples, and the running runs read back. */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "log.h"
#include "store.h"
#include "test.h"
#include "xalloc.h"

static char tmpdir[] = "/tmp/test-runs-store-XXXXXX";

static struct channel chans[] = {
	{.key = "thermal/soc-thermal",
	 .source = "thermal",
	 .label = "SoC",
	 .kind = CHANNEL_KIND_TEMPERATURE,
	 .unit = "celsius",
	 .resolution = 0.001},
	{.key = "hwmon/ina226-i2c-4-40/power1",
	 .source = "hwmon",
	 .label = "board power",
	 .kind = CHANNEL_KIND_POWER,
	 .unit = "watts",
	 .resolution = 0.000001},
	{.key = "thermal/not-registered",
	 .source = "thermal",
	 .kind = CHANNEL_KIND_TEMPERATURE,
	 .unit = "celsius",
	 .resolution = 0.001},
};

/* A query's one text value through a second connection, as another reader sees it. */
static char *query_text(const char *path, const char *sql) {
	sqlite3 *db;
	sqlite3_stmt *st;
	char *out = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return NULL;
	}
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
			out = xstrdup((const char *)sqlite3_column_text(st, 0));
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return out;
}

static void check_text(const char *path, const char *sql, const char *want, const char *what) {
	char *got = query_text(path, sql);
	is_str(got, want, what);
	free(got);
}

static void test_begin_end(const char *path) {
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open for writing");
	int64_t id = 0;
	struct store_run_new run = {.label = "sdxl",
				    .tags = "{\"model\":\"v1\"}",
				    .start_ms = 1787000400123,
				    .pid = 4242,
				    .boot_id = "0123456789abcdef0123456789abcdef",
				    .start_snapshot = "{\"cpufreq\":{}}",
				    .fingerprint = "{\"kernel\":\"6.1.0\"}"};
	is_int(store_run_begin(store, &run, &id), 0, "a run opens");
	ok(id > 0, "it has an id");
	struct store_run_new bad = {.label = "", .start_ms = 1};
	int64_t bad_id = 0;
	is_int(store_run_begin(store, &bad, &bad_id), -EINVAL, "a run without a label is refused");

	struct store_run_open *open = NULL;
	size_t n = 0;
	is_int(store_runs_open_list(store, &open, &n), 0, "running runs are listed");
	is_int(n, 1, "one is running");
	if (n == 1) {
		is_int(open[0].id, id, "its id");
		is_str(open[0].label, "sdxl", "its label");
		is_str(open[0].tags, "{\"model\":\"v1\"}", "its tags");
		is_int(open[0].start_ms, 1787000400123, "its start to the ms");
		is_int(open[0].pid, 4242, "its pid");
		is_str(open[0].start_snapshot, "{\"cpufreq\":{}}", "its start counters");
		is_str(open[0].fingerprint, "{\"kernel\":\"6.1.0\"}", "its fingerprint");
	}
	store_runs_open_free(open, n);

	struct store_run_end end = {.end_ms = 1787000401000,
				    .status = RUN_STATUS_FAILED,
				    .has_exit_code = true,
				    .exit_code = 3,
				    .energy_j = 12.5,
				    .energy_method = "counter",
				    .energy_coverage = 1,
				    .temp_max_c = 71.25,
				    .rss_max_bytes = 1048576,
				    .figures = "{\"heat\":{}}"};
	struct store_run_end early = end;
	early.end_ms = 1787000400000;
	is_int(store_run_end(store, id, &early), -EINVAL, "an end before the start is refused");
	struct store_run_end odd = end;
	odd.status = RUN_STATUS_RUNNING;
	is_int(store_run_end(store, id, &odd), -EINVAL, "'running' is no final status");
	is_int(store_run_end(store, id, &end), 0, "the run closes");
	is_int(store_run_end(store, id, &end), -EALREADY, "a second stop is refused");
	is_int(store_run_end(store, id + 100, &end), -ENOENT, "an unknown run is named");
	store_runs_open_list(store, &open, &n);
	is_int(n, 0, "nothing runs any more");
	store_runs_open_free(open, n);

	check_text(path,
		   "SELECT printf('%s %d %s %d %s %.2f %s %g %.3f %d %s %s', label, start_ms, "
		   "end_ms, exit_code, status, energy_j, energy_method, energy_coverage, "
		   "temp_max_c, rss_max_bytes, figures, origin) FROM runs",
		   "sdxl 1787000400123 1787000401000 3 failed 12.50 counter 1 71.250 1048576 "
		   "{\"heat\":{}} live",
		   "the stored row holds what the stop said");
	check_text(path, "SELECT boot IS NOT NULL AND signal IS NULL FROM runs", "1",
		   "the boot is kept and the unknown signal is null");

	// Unknown figures are NULL, never a fake 0.
	int64_t id2;
	struct store_run_new run2 = {.label = "build", .start_ms = 1787000500000};
	store_run_begin(store, &run2, &id2);
	struct store_run_end lost = {.end_ms = 1787000560000,
				     .status = RUN_STATUS_LOST,
				     .energy_j = NAN,
				     .energy_coverage = NAN,
				     .temp_max_c = NAN,
				     .rss_max_bytes = -1};
	is_int(store_run_end(store, id2, &lost), 0, "a lost run closes");
	check_text(path,
		   "SELECT (energy_j IS NULL) + (temp_max_c IS NULL) + (rss_max_bytes IS NULL) + "
		   "(exit_code IS NULL) + (pid IS NULL) + (tags = '{}') FROM runs WHERE label = "
		   "'build'",
		   "6", "unknown figures stay null and tags default to {}");
	store_close(store);
}

struct scan_watch {
	size_t base, peak; // heap in use before the scan, and the most during it
	int64_t first, last;
	size_t n;
};

static int watch_run(void *ctx, const struct store_run *run) {
	struct scan_watch *w = ctx;
	size_t now = mallinfo2().uordblks;
	w->peak = now > w->peak ? now : w->peak;
	w->first = w->n++ == 0 ? run->id : w->first;
	w->last = run->id;
	return 0;
}

/*
 * Scanning runs holds one row at a time, not all of them: with 600 runs of 4 KiB figures
 * (2.4 MiB) the heap in use during the scan stays within 256 KiB of where it began (a sort of
 * the rows in memory held them all), all runs or the newest 100, oldest first either way.
 */
static void test_scan_memory(const char *path) {
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open for writing");
	char *figures = xcalloc(1, 4096 + 16);
	strcpy(figures, "{\"pad\":\"");
	memset(figures + 8, 'x', 4096);
	strcpy(figures + 8 + 4096, "\"}");
	int rc = store_begin(store);
	for (int i = 0; i < 600 && rc == 0; i++) {
		int64_t id;
		// every tenth run starts at the same ms as the one before: ties go by id
		int64_t start = 1787000400000 + (int64_t)(i - (i % 10 == 9)) * 60000;
		struct store_run_new run = {.label = i % 2 ? "a" : "b", .start_ms = start};
		struct store_run_end end = {
			.end_ms = start + 1000, .status = RUN_STATUS_OK, .figures = figures};
		rc = store_run_begin(store, &run, &id);
		rc = rc ? rc : store_run_end(store, id, &end);
	}
	rc = rc ? rc : store_commit(store);
	is_int(rc, 0, "600 runs with 4 KiB of figures each");
	free(figures);
	store_close(store);
	struct store *reader;
	is_int(store_open(&reader, path, STORE_MODE_READ), 0, "open for reading");
	struct store_run_filter all = {0}, newest = {.limit = 100},
				label = {.label = "a", .limit = 50};
	const struct store_run_filter *filters[] = {&all, &newest, &label};
	const char *names[] = {"all runs", "the newest 100", "the newest 50 of a label"};
	size_t want[] = {600, 100, 50};
	int64_t want_first[] = {1, 501, 502};
	size_t opened = mallinfo2().uordblks;
	for (size_t k = 0; k < 3; k++) {
		struct scan_watch w = {0};
		w.base = w.peak = mallinfo2().uordblks;
		is_int(store_runs_scan(reader, filters[k], watch_run, &w), 0, names[k]);
		char what[160];
		snprintf(what, sizeof(what), "%s: %zu runs, oldest first (%lld..%lld)", names[k],
			 w.n, (long long)w.first, (long long)w.last);
		ok(w.n == want[k] && w.first == want_first[k] && w.last == 600, what);
		if (w.base == 0) {
			printf("# %s: no heap figures from this allocator (mallinfo2)\n", names[k]);
			continue;
		}
		snprintf(what, sizeof(what), "%s: the heap grew %zu KiB during the scan", names[k],
			 (w.peak - w.base) / 1024);
		ok(w.peak - w.base < 256 * 1024, what);
	}
	// The scans filled the reader's page cache (the file is 2.4 MB); released, the heap is
	// where it was before them.
	size_t scanned = mallinfo2().uordblks;
	store_release_memory(reader);
	size_t released = mallinfo2().uordblks;
	if (opened > 0) {
		char what[160];
		snprintf(what, sizeof(what),
			 "the reader's cache is given back: %zd KiB over the open reader after the "
			 "scans, %zd KiB after store_release_memory()",
			 ((ssize_t)scanned - (ssize_t)opened) / 1024,
			 ((ssize_t)released - (ssize_t)opened) / 1024);
		ok(scanned > opened + 64 * 1024 && released < opened + 16 * 1024, what);
	}
	store_release_memory(NULL);
	store_close(reader);
}

static void test_samples(const char *path) {
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	// The minute series registers the first two channels; the third never was.
	struct reading r[3] = {{.value = 55.5}, {.value = 5.0}, {.value = 40}};
	struct cycle c = {.ts = 1787000400, .n = 2, .channels = chans, .readings = r};
	is_int(store_write_cycle(store, &c), 0, "a minute cycle registers two channels");
	struct store_channel *list;
	size_t n_ch;
	store_channels(store, &list, &n_ch);
	int64_t last_seen = n_ch > 0 ? list[0].last_seen : -1;
	store_channels_free(list, n_ch);

	struct reading r2[3] = {{.value = 60.125}, {.err = -EIO}, {.value = 41}};
	struct store_run_instant samples[2] = {
		{.ts_ms = 1787000405000, .n = 3, .channels = chans, .readings = r},
		{.ts_ms = 1787000410000, .n = 3, .channels = chans, .readings = r2},
	};
	is_int(store_run_samples_put(store, samples, 2), 0, "a batch of fast samples is stored");
	is_int(store_run_samples_put(store, samples, 1), 0, "a stamp stored twice is no error");
	check_text(path, "SELECT count(*) FROM run_samples", "2", "two rows, one per instant");
	check_text(path, "SELECT count(*) FROM samples", "1", "the minute series is untouched");
	store_channels(store, &list, &n_ch);
	is_int(n_ch, 2, "no channel was added by the fast samples");
	is_int(n_ch > 0 ? list[0].last_seen : -2, last_seen, "nor touched");
	store_channels_free(list, n_ch);

	// Decode the second row: the SoC temperature only (power failed, the third unknown).
	char *hex =
		query_text(path, "SELECT hex(data) FROM run_samples WHERE ts_ms = 1787000410000");
	ok(hex != NULL, "the row is there");
	uint8_t bytes[64];
	size_t len = 0;
	for (size_t i = 0; hex && hex[2 * i] && i < sizeof(bytes); i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		bytes[len++] = (uint8_t)v;
	}
	free(hex);
	struct codec_pair_iter it = {.p = bytes, .end = bytes + len};
	struct codec_pair pair;
	size_t pairs = 0;
	int64_t q = 0;
	while (codec_pair_next(&it, &pair)) {
		pairs++;
		q = pair.q;
	}
	is_int(pairs, 1, "one value: failed and unregistered channels store nothing");
	is_int(q, 60125, "60.125 °C kept exactly at 0.001");
	store_close(store);
}

int main(void) {
	log_init(LOG_LEVEL_ERROR);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	char *path = xasprintf("%s/runs.db", tmpdir);
	test_begin_end(path);
	char *path2 = xasprintf("%s/samples.db", tmpdir);
	test_samples(path2);
	char *path3 = xasprintf("%s/scan.db", tmpdir);
	test_scan_memory(path3);
	const char *suffixes[] = {"", "-wal", "-shm"};
	for (size_t i = 0; i < 3; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		unlink(p);
		free(p);
		p = xasprintf("%s%s", path2, suffixes[i]);
		unlink(p);
		free(p);
		p = xasprintf("%s%s", path3, suffixes[i]);
		unlink(p);
		free(p);
	}
	free(path);
	free(path2);
	free(path3);
	rmdir(tmpdir);
	return test_done();
}
