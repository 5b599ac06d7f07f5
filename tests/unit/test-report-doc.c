/* The report's document: bounded while it is built (report_options.max_bytes). */
#include <math.h>
#include <stdio.h>

#include "buf.h"
#include "fixture.h"
#include "log.h"
#include "report.h"
#include "store.h"
#include "test.h"

#define LABELS 3000
#define BUDGET (64 * 1024)

/* The report of @store as @format with a budget of @max_bytes; false if it was not computed. */
static bool write_report(struct store *store, enum report_format format, size_t max_bytes,
			 struct buf *out) {
	struct report_options opt = {
		.now = FIXTURE_T0 + 4 * 86400, .over_s = NAN, .max_bytes = max_bytes};
	struct store *stores[1] = {store};
	const char *files[1] = {"fixture.db"};
	struct report rep;
	char *err = NULL;
	int rc = report_compute(stores, files, 1, &opt, &rep, &err);
	if (rc == 0) {
		report_write(&rep, format, NULL, out);
	} else {
		printf("# report_compute: %s\n", err ? err : "?");
	}
	free(err);
	report_finish(&rep);
	return rc == 0;
}

/*
 * A report of thousands of run labels, each a row of the tables per label: without a budget every
 * row is written; with one the document stops growing past it and ends saying so, in HTML and
 * in Markdown alike.
 */
static void test_budget(void) {
	struct store *store = fixture_store(rng);
	store_begin(store);
	for (int i = 0; i < LABELS; i++) {
		char label[32], key[32];
		snprintf(label, sizeof(label), "job-%04d", i);
		snprintf(key, sizeof(key), "k%d", i);
		struct store_run_import run = {.label = label,
					       .start_ms = (FIXTURE_T0 + 60 * (int64_t)i) * 1000,
					       .end_ms = (FIXTURE_T0 + 60 * (int64_t)i + 30) * 1000,
					       .status = RUN_STATUS_OK,
					       .exit_code = 0,
					       .energy_j = NAN,
					       .temp_max_c = NAN,
					       .rss_max_bytes = NAN,
					       .import_key = key};
		store_run_import(store, &run, NULL);
	}
	is_int(store_commit(store), 0, "3000 runs of distinct labels imported");
	static const char *const note = "This report stops here";
	const enum report_format formats[] = {REPORT_HTML, REPORT_MARKDOWN};
	const char *names[] = {"HTML", "Markdown"};
	for (int f = 0; f < 2; f++) {
		struct buf whole, cut;
		buf_init(&whole);
		buf_init(&cut);
		char what[160];
		bool done = write_report(store, formats[f], 0, &whole) &&
			    write_report(store, formats[f], BUDGET, &cut);
		snprintf(what, sizeof(what), "%s without a budget: every label, %zu bytes",
			 names[f], whole.len);
		ok(done && whole.len > 4 * BUDGET && strstr(whole.data, "job-2999") &&
			   !strstr(whole.data, note),
		   what);
		snprintf(what, sizeof(what),
			 "%s with a budget of %d bytes: %zu bytes, cut and said", names[f], BUDGET,
			 cut.len);
		// The first labels' rows (of the throttling per label, which comes before the runs),
		// not the last's.
		ok(done && cut.len <= BUDGET + 16 * 1024 && strstr(cut.data, note) &&
			   strstr(cut.data, "job-0001") && !strstr(cut.data, "job-2999"),
		   what);
		buf_finish(&whole);
		buf_finish(&cut);
	}
	store_close(store);
}

int main(int argc, char **argv) {
	log_init(LOG_LEVEL_ERROR);
	test_seed(argc, argv);
	test_budget();
	return test_done();
}
