/*
 * The store's campaigns (store-campaign.c): a campaign written, updated and read back by id,
 * by name and in a list; its repetitions written (and rewritten when a run ends) in order;
 * refused on a read-only connection.
 */

#include <errno.h>

#include "store-fixture.h"
#include "test.h"

static struct store_campaign campaign(const char *name, int64_t created_ms) {
	return (struct store_campaign){
		.name = (char *)name,
		.suite_path = (char *)"/suites/five.yaml",
		.suite_hash = (char *)"ab12",
		.suite = (char *)"{\"name\":\"five\"}",
		.suite_text = (char *)"name: five\n",
		.created_ms = created_ms,
		.status = CAMPAIGN_STATUS_RUNNING,
		.runner_pid = 4242,
		.runner_start = 987654,
	};
}

static void test_campaigns(void) {
	char *path = tmp_path("campaign.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open for writing");
	struct store_campaign a = campaign("five-tests", T0 * 1000LL),
			      b = campaign("other", T0 * 1000LL + 5);
	int64_t ida = 0, idb = 0, idc = 0;
	ok(store_campaign_create(store, &a, &ida) == 0 && ida > 0, "a campaign created");
	ok(store_campaign_create(store, &b, &idb) == 0 && idb > ida, "a second one");
	struct store_campaign c = campaign("five-tests", T0 * 1000LL + 10);
	ok(store_campaign_create(store, &c, &idc) == 0, "the same suite again, later");
	// Its run, as the daemon would record it, for the repetitions' foreign key.
	struct store_run_new row = {
		.label = "npu-op", .tags = "{\"campaign\":\"1\"}", .start_ms = T0 * 1000LL + 20};
	int64_t run = 0;
	is_int(store_run_begin(store, &row, &run), 0, "a run");

	struct store_campaign got;
	is_int(store_campaign_get(store, ida, &got), 0, "read back by id");
	ok(strcmp(got.name, "five-tests") == 0 && got.status == CAMPAIGN_STATUS_RUNNING &&
		   got.runner_pid == 4242 && got.runner_start == 987654 && got.board == NULL &&
		   got.ended_ms == 0 && got.fingerprint == NULL && got.idle_run == 0,
	   "every column as written, NULLs as none");
	got.status = CAMPAIGN_STATUS_DONE;
	got.ended_ms = T0 * 1000LL + 99;
	got.runner_pid = 0;
	got.fingerprint = strdup("{\"model\":\"Radxa ROCK 5C\"}");
	got.baseline = strdup("{\"zones\":{}}");
	got.idle_run = run;
	got.board = strdup("A");
	is_int(store_campaign_update(store, &got), 0, "updated");
	store_campaign_finish(&got);
	is_int(store_campaign_get(store, ida, &got), 0, "read again");
	ok(got.status == CAMPAIGN_STATUS_DONE && got.ended_ms == T0 * 1000LL + 99 &&
		   got.runner_pid == 0 && got.idle_run == run && strcmp(got.board, "A") == 0 &&
		   strcmp(got.fingerprint, "{\"model\":\"Radxa ROCK 5C\"}") == 0,
	   "the update kept");
	store_campaign_finish(&got);
	is_int(store_campaign_get(store, 999, &got), -ENOENT, "an unknown id");
	is_int(store_campaign_latest(store, "five-tests", &got), 0, "the latest by name");
	is_int(got.id, idc, "is the newest of that name");
	store_campaign_finish(&got);
	is_int(store_campaign_latest(store, "nope", &got), -ENOENT, "no campaign of that name");
	struct store_campaign *list;
	size_t n;
	is_int(store_campaign_list(store, &list, &n), 0, "the list");
	ok(n == 3 && list[0].id == ida && list[2].id == idc, "oldest first");
	store_campaigns_free(list, n);

	struct store_campaign_run r = {.campaign = ida,
				       .seq = 0,
				       .step = (char *)"npu-op",
				       .rep = 1,
				       .warmup = true,
				       .run = run,
				       .start = CAMPAIGN_START_COLD,
				       .gate = CAMPAIGNGATE_PASSED,
				       .gate_wait_ms = 1234,
				       .gate_detail = (char *)"passed",
				       .warm_ms = -1};
	is_int(store_campaign_run_put(store, &r), 0, "a repetition");
	r.seq = 1;
	r.warmup = false;
	r.gate = CAMPAIGNGATE_TIMEOUT;
	r.gate_wait_ms = 30000;
	r.start = CAMPAIGN_START_WARM;
	r.warm_ms = 250;
	is_int(store_campaign_run_put(store, &r), 0, "a second");
	r.missing_metrics = (char *)"latency_ms";
	is_int(store_campaign_run_put(store, &r), 0, "the second again, at its end");
	struct store_campaign_run *rows;
	is_int(store_campaign_runs(store, ida, &rows, &n), 0, "the repetitions");
	ok(n == 2 && rows[0].seq == 0 && rows[0].warmup && rows[0].gate == CAMPAIGNGATE_PASSED &&
		   rows[0].gate_wait_ms == 1234 && rows[0].warm_ms == -1 &&
		   rows[0].missing_metrics == NULL,
	   "the first as written");
	ok(rows[1].gate == CAMPAIGNGATE_TIMEOUT && rows[1].start == CAMPAIGN_START_WARM &&
		   rows[1].warm_ms == 250 && strcmp(rows[1].missing_metrics, "latency_ms") == 0,
	   "the second rewritten in place");
	store_campaign_runs_free(rows, n);
	is_int(store_campaign_runs(store, idb, &rows, &n), 0, "another campaign's");
	is_int(n, 0, "has none");
	store_campaign_runs_free(rows, n);
	store_close(store);

	is_int(store_open(&store, path, STORE_MODE_READ), 0, "open read-only");
	is_int(store_campaign_create(store, &a, &ida), -EROFS, "a reader writes no campaign");
	is_int(store_campaign_get(store, idb, &got), 0, "but reads them");
	store_campaign_finish(&got);
	store_close(store);
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_campaigns();
	store_fixture_end();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
