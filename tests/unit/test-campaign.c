/*
 * Campaigns read back (runs/campaign.c): a campaign with its repetitions and their runs, which
 * slots ended (a lost run's did not), the per-step sums and the JSON; the idle baseline from
 * the stored cycles; the clocks a burst's figures say it reached.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign.h"
#include "jsonread.h"
#include "store-fixture.h"
#include "test.h"

static const char suite_text[] = "name: five\n"
				 "steps:\n"
				 "  - {label: npu-op, command: [op], repetitions: 2, warmup: 1}\n"
				 "  - {label: warm, command: [inf], repetitions: 1, start: warm}\n";

/* A run of @label from @start_ms, ended with @status unless that is RUN_STATUS_RUNNING. */
static int64_t run(struct store *store, const char *label, int64_t start_ms,
		   enum run_status status) {
	struct store_run_new row = {.label = label, .tags = "{}", .start_ms = start_ms};
	int64_t id = 0;
	store_run_begin(store, &row, &id);
	if (status != RUN_STATUS_RUNNING) {
		struct store_run_end end = {.end_ms = start_ms + 2500,
					    .status = status,
					    .has_exit_code = status != RUN_STATUS_LOST,
					    .exit_code = status == RUN_STATUS_FAILED ? 1 : 0,
					    .energy_j = NAN,
					    .energy_coverage = NAN,
					    .temp_max_c = NAN,
					    .rss_max_bytes = -1};
		store_run_end(store, id, &end);
	}
	return id;
}

static void rep(struct store *store, int64_t campaign, int64_t seq, const char *step, unsigned n,
		bool warmup, int64_t run_id, enum campaigngate_outcome gate, int64_t wait_ms) {
	struct store_campaign_run r = {.campaign = campaign,
				       .seq = seq,
				       .step = (char *)step,
				       .rep = n,
				       .warmup = warmup,
				       .run = run_id,
				       .start = strcmp(step, "warm") == 0 ? CAMPAIGN_START_WARM
									  : CAMPAIGN_START_COLD,
				       .gate = gate,
				       .gate_wait_ms = wait_ms,
				       .warm_ms = -1};
	store_campaign_run_put(store, &r);
}

static void test_view(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	struct store_campaign c = {.name = "five",
				   .suite_path = "five.yaml",
				   .suite_hash = "x",
				   .suite = "{}",
				   .suite_text = (char *)suite_text,
				   .created_ms = T0 * 1000LL,
				   .status = CAMPAIGN_STATUS_RUNNING,
				   .runner_pid = 0x7ffffff0}; // no such process
	int64_t id;
	store_campaign_create(store, &c, &id);
	int64_t t = T0 * 1000LL + 1000;
	rep(store, id, 0, "npu-op", 1, true, run(store, "npu-op", t, RUN_STATUS_OK),
	    CAMPAIGNGATE_PASSED, 4000);
	rep(store, id, 1, "npu-op", 1, false, run(store, "npu-op", t + 5000, RUN_STATUS_FAILED),
	    CAMPAIGNGATE_TIMEOUT, 30000);
	rep(store, id, 2, "npu-op", 2, false, run(store, "npu-op", t + 9000, RUN_STATUS_LOST),
	    CAMPAIGNGATE_PASSED, 1500);

	struct campaign_view v;
	char *err = NULL;
	is_int(campaign_view_load(store, "/proc", id, &v, &err), 0, "the campaign read back");
	ok(v.suite.n_steps == 2 && v.n_reps == 3, "its suite and repetitions");
	ok(!v.runner_alive, "a runner that is gone is not alive");
	is_int(v.slots, 4, "four slots: a warmup, two repetitions, a warm one");
	is_int(v.slots_ended, 2, "two ended: the warmup and the failed repetition");
	struct campaignplan_slot rep2 = {0, 2, false}, rep1 = {0, 1, false};
	ok(!campaign_view_slot_ended(&v, &rep2) && campaign_view_slot_ended(&v, &rep1),
	   "a lost run's repetition did not end; a failed one did");
	const struct campaign_step_sum *s = &v.steps[0];
	ok(s->attempts == 3 && s->ok == 1 && s->failed == 1 && s->lost == 1 &&
		   s->gate_timeouts == 1 && s->gate_wait_ms == 35500 && s->ended == 2,
	   "the step's sums: outcomes, gate timeouts, the time waited");
	ok(s->cold == 1 && s->warm == 0, "one measured cold repetition ended");

	struct buf out = {0};
	struct json j;
	json_init(&j, &out, false);
	campaign_view_json(&v, &j);
	struct jsonread_error e;
	struct jsonread_node *root = jsonread_parse(out.data, out.len, 1 << 20, &e);
	ok(root != NULL, "the view is JSON");
	is_str(jsonread_string(jsonread_get(root, "status")), "stopped",
	       "a campaign whose runner is gone reads stopped");
	const struct jsonread_node *reps = jsonread_get(root, "repetitions");
	ok(reps && reps->n == 3 &&
		   strcmp(jsonread_string(jsonread_get(reps->items[2], "status")), "lost") == 0 &&
		   strcmp(jsonread_string(jsonread_get(reps->items[1], "gate")), "timeout") == 0,
	   "each repetition with its run's status and its gate");
	jsonread_node_free(root);
	buf_finish(&out);
	campaign_view_finish(&v);

	buf_init(&out);
	json_init(&j, &out, false);
	is_int(campaign_list_json(store, "/proc", &j), 0, "the list");
	ok(strstr(out.data, "\"slots_ended\":2") && strstr(out.data, "\"gate_wait_s\":35.500"),
	   "with each campaign's progress and wait");
	buf_finish(&out);
	is_int(campaign_view_load(store, "/proc", id + 1, &v, &err), -ENOENT, "an unknown id");
	campaign_view_finish(&v);
	store_close(store);
	free(err);
}

static void test_baseline(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	for (int i = 0; i < 20; i++) {
		// The zone cools toward 40 °C: the second half averages 40.5.
		double values[N_CHANS] = {i < 10 ? 45 : i % 2 ? 41 : 40, 408000, 0};
		put(store, T0 + i, CLOCK_STATE_UNSYNCED, values, NULL);
	}
	char *globs[] = {"thermal/*"};
	struct campaign_baseline b;
	char *err = NULL;
	is_int(campaign_baseline_compute(store, globs, 1, T0 + 10, T0 + 20, &b, &err), 0,
	       "a baseline over the second half, unsynced cycles counted");
	ok(b.n == 1 && strcmp(b.zones[0].key, "thermal/soc-thermal") == 0 &&
		   fabs(b.zones[0].baseline_c - 40.5) < 1e-9,
	   "each zone's mean");
	struct buf out = {0};
	struct json j;
	json_init(&j, &out, false);
	campaign_baseline_json(&b, &j);
	struct campaign_baseline back;
	ok(campaign_baseline_parse(out.data, &back) && back.n == 1 && back.from == T0 + 10 &&
		   fabs(back.zones[0].baseline_c - 40.5) < 1e-9,
	   "written and read back");
	campaign_baseline_finish(&back);
	campaign_baseline_finish(&b);
	buf_finish(&out);
	is_int(campaign_baseline_compute(store, globs, 1, T0 + 100, T0 + 200, &b, &err), -ENODATA,
	       "no sample in the window: no baseline");
	campaign_baseline_finish(&b);
	free(err);
	ok(!campaign_baseline_parse("{\"zones\":{}}", &back), "a baseline without zones is none");
	campaign_baseline_finish(&back);
	store_close(store);
}

static void test_reached(void) {
	struct buf out = {0};
	campaign_reached_json(
		"{\"residency\":{\"cpufreq/policy4\":{\"method\":\"time_in_state\",\"seconds\":"
		"{\"408000000\":1.5,\"2304000000\":8.25,\"2400000000\":0}},\"cpufreq/policy6\":"
		"{\"method\":\"fast_samples\",\"seconds\":{\"408000000\":2},\"max_hz_seen\":"
		"2208000000},\"devfreq/dmc\":{\"seconds\":{\"2112000000\":3}}}}",
		&out);
	is_str(out.data, "{\"cpufreq/policy4\":2304000000,\"cpufreq/policy6\":2208000000}",
	       "the highest level with time spent (a level listed at 0 s is not reached)");
	buf_clear(&out);
	campaign_reached_json(NULL, &out);
	is_str(out.data, "{}", "no figures: nothing reached");
	buf_finish(&out);
}

int main(void) {
	store_fixture_begin();
	test_view();
	test_baseline();
	test_reached();
	store_fixture_end();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
