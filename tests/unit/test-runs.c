/*
 * The runs module (src/runs/runs.c) over a store in a temporary file: the job-log import
 * (counts, repeats, bad rows, a second import), the list and one run as JSON, the label check
 * behind every "no run has the label" and the per-label summary /metrics exports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "jsonread.h"
#include "runs.h"
#include "runsummary.h"
#include "store.h"
#include "test.h"
#include "xalloc.h"

#define T0_S   1785542400LL // 2026-08-01T00:00:00Z
#define NOW_MS ((T0_S + 30 * 86400) * 1000)

static struct store *store;
static struct config cfg;
static char dir[] = "/tmp/test-runs-XXXXXX";

/* Imports @csv; the result and the errors in @errors (cleared first). */
static int import(const char *csv, bool skip_bad, struct runs_import_result *res,
		  struct buf *errors) {
	FILE *in = fmemopen((void *)csv, strlen(csv), "r");
	struct runs_import_options opt = {
		.default_label = "job", .unix_per_s = 1, .skip_bad = skip_bad, .cfg = &cfg};
	buf_clear(errors);
	int rc = runs_import(store, in, "jobs.csv", &opt, NOW_MS, res, errors);
	fclose(in);
	return rc;
}

/* The text of @json parsed; NULL (and a failed check) when it is no JSON. */
static struct jsonread_node *parse(const struct buf *json) {
	struct jsonread_error err;
	struct jsonread_node *root = jsonread_parse(json->data, json->len, 1 << 24, &err);
	ok(root != NULL, "the answer is JSON");
	return root;
}

static const struct jsonread_node *member(const struct jsonread_node *obj, const char *key) {
	return obj ? jsonread_get(obj, key) : NULL;
}

static const char log_text[] =
	"start,end,status,label,exit_code,energy_j\n"
	"1785553200,1785554700,ok,sdxl-image,0,17250.5\n" // 03:00, 1500 s
	"1785564000,1785565560,failed,sdxl-image,1,\n"    // 06:00, 1560 s
	"1785574800,1785574920,ok,reranker,0,300\n"       // 09:00, 120 s
	"1785574800,1785574920,ok,reranker,0,300\n"       // the same row again: one run
	"1785585600,1785587100,ok,sdxl-image,0,17000\n";  // 12:00, 1500 s

static void test_import(void) {
	struct buf errors;
	buf_init(&errors);
	struct runs_import_result res;
	ok(import(log_text, false, &res, &errors) == 0, "a job log imports");
	is_int(res.rows, 4, "four good rows: a repeat is one");
	is_int(res.repeated, 1, "one repeating an earlier row exactly");
	is_int(res.added, 4, "four runs stored");
	is_int(res.bad, 0, "no bad row");
	ok(import(log_text, false, &res, &errors) == 0 && res.added == 0 && res.unchanged == 4,
	   "imported again: nothing added, four unchanged");
	const char *bad = "start,end,status,label\n"
			  "1785596400,1785596500,ok,late\n"
			  "946000000,946000100,ok,early\n"; // 1999: before 2000-01-01
	ok(import(bad, false, &res, &errors) < 0 && res.added == 0 && res.bad == 1 &&
		   strstr(errors.data ? errors.data : "", "jobs.csv:3") != NULL,
	   "a bad row refuses the log, named by file and line");
	ok(import(bad, true, &res, &errors) == 0 && res.added == 1 && res.bad == 1,
	   "--skip-bad imports the good row alone");
	buf_finish(&errors);
}

static void test_list(void) {
	struct buf out;
	buf_init(&out);
	struct store_run_filter f = {.label = "sdxl-image"};
	ok(runs_list_json(store, &f, false, &out) == 0, "the list of one label");
	struct jsonread_node *root = parse(&out);
	const struct jsonread_node *runs = member(root, "runs");
	is_int(runs ? runs->n : 0, 3, "three sdxl-image runs");
	int64_t id = 0;
	const struct jsonread_node *first = runs && runs->n ? runs->items[0] : NULL;
	ok(first && jsonread_int(member(first, "id"), 1, INT64_MAX, &id), "each run has its id");
	is_str(jsonread_string(member(first, "status")), "ok", "the first is ok");
	is_str(member(first, "duration_s") ? member(first, "duration_s")->text : NULL, "1500.000",
	       "its duration from its start and end, to the millisecond");
	ok(member(root, "truncated") == NULL, "not cut short");
	jsonread_node_free(root);

	f = (struct store_run_filter){.limit = 2};
	buf_clear(&out);
	ok(runs_list_json(store, &f, false, &out) == 0, "the list with a limit");
	root = parse(&out);
	runs = member(root, "runs");
	const struct jsonread_node *cut = member(root, "truncated");
	int64_t matched = 0;
	ok(runs && runs->n == 2 && cut && jsonread_int(member(cut, "matched"), 0, 100, &matched) &&
		   matched == 5,
	   "the newest two of five, and it says so");
	is_str(runs && runs->n == 2 ? jsonread_string(member(runs->items[1], "label")) : NULL,
	       "late", "listed oldest first");
	jsonread_node_free(root);

	buf_clear(&out);
	ok(runs_get_json(store, id, &out) == 0, "one run by its id");
	root = parse(&out);
	is_str(jsonread_string(member(root, "label")), "sdxl-image", "its label");
	jsonread_node_free(root);
	buf_clear(&out);
	is_int(runs_get_json(store, 99999, &out), -ENOENT, "no such run: -ENOENT");
	buf_clear(&out);
	is_int(runs_show_json(store, &cfg, 99999, false, &out), -ENOENT,
	       "runs show of no such run: -ENOENT");
	buf_finish(&out);
}

static void test_labels(void) {
	struct buf hint;
	buf_init(&hint);
	is_int(runs_label_known(store, "reranker", &hint), 1, "a stored label is known");
	ok(hint.len == 0, "... with no hint");
	is_int(runs_label_known(store, "sdxl", &hint), 0, "a label no run has");
	is_str(hint.data, "; did you mean 'sdxl-image'?", "the label containing it suggested");
	buf_clear(&hint);
	is_int(runs_label_known(store, "rerankr", &hint), 0, "a typo");
	is_str(hint.data, "; did you mean 'reranker'?", "the label one edit away suggested");
	buf_clear(&hint);
	is_int(runs_label_known(store, "zzz", &hint), 0, "nothing near");
	ok(hint.len == 0, "... suggests nothing");
	buf_finish(&hint);

	char *err = NULL;
	is_int(runs_label_check(store, NULL, &err), 0, "no label: nothing to check");
	is_int(runs_label_check(store, "late", &err), 0, "a known label passes");
	ok(err == NULL, "... with no message");
	is_int(runs_label_check(store, "sdxl", &err), -EINVAL, "an unknown label is -EINVAL");
	is_str(err, "no run has the label 'sdxl'; did you mean 'sdxl-image'?",
	       "the one message CLI and API give");
	free(err);
}

static void test_summary(void) {
	struct runsummary_label *labels = NULL;
	size_t n = 0;
	ok(runs_summary(store, 10, &labels, &n) == 0, "the summary");
	is_int(n, 3, "three labels");
	is_str(n == 3 ? labels[0].label : NULL, "late", "sorted by label");
	is_str(n == 3 ? labels[2].label : NULL, "sdxl-image", "... sdxl-image last");
	ok(n == 3 && labels[2].by_status[RUN_STATUS_OK] == 2 &&
		   labels[2].by_status[RUN_STATUS_FAILED] == 1,
	   "sdxl-image: two ok, one failed");
	ok(n == 3 && labels[2].duration_count == 2 && labels[2].duration_sum_s == 3000.0,
	   "its ok runs' durations summed");
	ok(n == 3 && labels[2].energy_j_total > 34250.4 && labels[2].energy_j_total < 34250.6,
	   "the energy of its ended runs that measured one");
	runs_summary_free(labels, n);

	ok(runs_summary(store, 1, &labels, &n) == 0, "the summary with room for one label");
	is_int(n, 2, "the label with the most runs and 'other'");
	is_str(n == 2 ? labels[0].label : NULL, "other", "'other' sorted in");
	ok(n == 2 && labels[0].by_status[RUN_STATUS_OK] == 2 &&
		   strcmp(labels[1].label, "sdxl-image") == 0,
	   "the two others summed under 'other'");
	runs_summary_free(labels, n);
}

int main(void) {
	ok(mkdtemp(dir) != NULL, "a scratch directory");
	char *path = xasprintf("%s/runs.db", dir);
	config_init(&cfg);
	ok(store_open(&store, path, STORE_MODE_WRITE) == 0, "a store");
	test_import();
	test_list();
	test_labels();
	test_summary();
	store_close(store);
	config_finish(&cfg);
	static const char *const files[] = {"", "-wal", "-shm", ".lock"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = xasprintf("%s%s", path, files[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
	free(path);
	return test_done();
}
