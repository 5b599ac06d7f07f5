/*
 * A campaign's suite (campaign-suite.c): the smallest suite and a full one read,
 * every bad one named at its line and column before anything runs, the canonical JSON's hash
 * blind to layout, and what a changed suite changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-suite.h"
#include "test.h"

static const char smallest[] = "name: five-tests\n"
			       "locked: {model: anima-512, precision: fp16, steps: 20, seed: "
			       "20260812}\n"
			       "idle: {duration: 5m}\n"
			       "gate: {tolerance_k: 2, max_wait: 30m}\n"
			       "order: sequential\n"
			       "steps:\n"
			       "  - label: npu-op\n"
			       "    command: [./matmul-bench, --shape, \"1024x8192x2048\"]\n"
			       "    repetitions: 10\n"
			       "    warmup: 1\n"
			       "    start: cold\n"
			       "    metrics: [latency_ms]\n";

static void test_smallest(void) {
	struct campaign_suite s;
	char *err = NULL;
	ok(campaign_suite_parse("five.yaml", smallest, strlen(smallest), &s, &err),
	   "the issue's smallest suite reads");
	is_str(err, NULL, "without errors");
	is_str(s.name, "five-tests", "name");
	is_int(s.n_locked, 4, "four locked facts");
	is_str(s.locked[3].key, "seed", "locked in file order");
	is_str(s.locked[3].value, "20260812", "numbers kept as written");
	is_int(s.idle_ms, 300000, "idle 5m");
	is_int(s.burst_ms, 10000, "the burst's default 10 s");
	is_near(s.tolerance_k, 2, 0, "tolerance");
	is_int(s.max_wait_ms, 1800000, "max_wait 30m");
	is_int(s.order, CAMPAIGN_ORDER_SEQUENTIAL, "sequential");
	is_int(s.n_steps, 1, "one step");
	const struct campaign_step *st = &s.steps[0];
	is_str(st->label, "npu-op", "label");
	ok(!st->command.shell && st->command.argc == 3 &&
		   strcmp(st->command.argv[2], "1024x8192x2048") == 0 &&
		   st->command.argv[3] == NULL,
	   "an argv list, NULL-ended");
	ok(st->repetitions == 10 && st->warmup == 1 && st->start == CAMPAIGN_START_COLD,
	   "repetitions, warmup, start");
	ok(st->n_metrics == 1 && strcmp(st->metrics[0], "latency_ms") == 0,
	   "an undeclared suite names any valid metric");
	is_int(st->line, 7, "the step's line");
	ok(!s.metrics_declared && s.n_zones == 1 && strcmp(s.zones[0], "thermal/*") == 0,
	   "the gate watches the thermal zones by default");
	campaign_suite_finish(&s);
	free(err);
}

static const char full[] =
	"# the Five Tests\n"
	"name: five-tests\n"
	"tags: {board: rock-5c}\n"
	"metrics: {latency_ms: ms, tokens_per_s: tok/s}\n"
	"idle: {duration: 20s, burst: 2s, burst_command: [simload, --cpu, all=100]}\n"
	"gate: {tolerance_k: 1.5, max_wait: 40s, warm_within: 5s, warm_up: "
	"'simload --cpu all=60 --for 1s', zones: [thermal/*-thermal]}\n"
	"steps:\n"
	"  - label: all-core\n"
	"    command: simload --cpu all=100 --for 2s\n"
	"    repetitions: 3\n"
	"    start: any\n"
	"    timeout: 1m\n"
	"    tags: {threads: all}\n"
	"  - label: inference-warm\n"
	"    command: [simload, --npu, all=90]\n"
	"    start: warm\n"
	"    warmup: 1\n"
	"    metrics: [tokens_per_s]\n";

static void test_full(void) {
	struct campaign_suite s;
	char *err = NULL;
	ok(campaign_suite_parse("full.yaml", full, strlen(full), &s, &err), "a full suite reads");
	is_str(err, NULL, "without errors");
	ok(s.metrics_declared && s.n_metrics == 2 && strcmp(s.metrics[1].value, "tok/s") == 0,
	   "declared metrics and their units");
	ok(s.idle_ms == 20000 && s.burst_ms == 2000 && s.burst.argc == 3, "idle and its burst");
	ok(s.warm_up.shell && strcmp(s.warm_up.argv[0], "/bin/sh") == 0 &&
		   strcmp(s.warm_up.argv[2], "simload --cpu all=60 --for 1s") == 0,
	   "a string command runs through /bin/sh -c");
	ok(s.warm_within_ms == 5000 && s.max_wait_ms == 40000 && s.tolerance_k == 1.5,
	   "the gate's settings");
	ok(s.n_zones == 1 && strcmp(s.zones[0], "thermal/*-thermal") == 0, "the gate's zones");
	ok(s.steps[0].timeout_ms == 60000 && s.steps[0].start == CAMPAIGN_START_ANY &&
		   s.steps[0].n_tags == 1 && strcmp(s.steps[0].tags[0].value, "all") == 0,
	   "a step's timeout, start and tags");
	ok(s.steps[1].repetitions == 1 && s.steps[1].start == CAMPAIGN_START_WARM,
	   "repetitions default to 1");
	ok(campaign_suite_step(&s, "inference-warm") == &s.steps[1] &&
		   !campaign_suite_step(&s, "nope"),
	   "a step by label");

	// The same suite written otherwise hashes the same; a changed one names its changes.
	const char *reflowed =
		"steps:\n"
		"- {label: all-core, command: 'simload --cpu all=100 --for 2s', "
		"repetitions: 3, start: any, timeout: 60s, tags: {threads: all}}\n"
		"- label: inference-warm\n"
		"  warmup: 1\n"
		"  command: [simload, --npu, all=90]\n"
		"  start: warm\n"
		"  metrics: [tokens_per_s]\n"
		"gate:\n  tolerance_k: 1.5\n  max_wait: 40000ms\n  warm_within: 5s\n"
		"  warm_up: simload --cpu all=60 --for 1s\n  zones: [thermal/*-thermal]\n"
		"idle: {burst_command: [simload, --cpu, all=100], duration: 20s, burst: "
		"2s}\n"
		"metrics:\n  latency_ms: ms\n  tokens_per_s: tok/s\n"
		"tags: {board: rock-5c}\n"
		"name: five-tests\n";
	struct campaign_suite r;
	char *err2 = NULL;
	ok(campaign_suite_parse("reflowed.yaml", reflowed, strlen(reflowed), &r, &err2),
	   "the same suite, laid out otherwise");
	char ha[65], hb[65];
	campaign_suite_hash(&s, ha);
	campaign_suite_hash(&r, hb);
	is_str(hb, ha, "hashes alike");
	struct buf diff = {0};
	ok(!campaign_suite_diff(&s, &r, &diff), "no difference");
	campaign_suite_finish(&r);
	free(err2);

	const char *changed = "name: five-tests\n"
			      "tags: {board: rock-5c}\n"
			      "metrics: {latency_ms: ms, tokens_per_s: tok/s}\n"
			      "idle: {duration: 20s, burst: 2s, burst_command: [simload, --cpu, "
			      "all=100]}\n"
			      "gate: {tolerance_k: 3, max_wait: 40s, warm_within: 5s, warm_up: "
			      "'simload --cpu all=60 --for 1s', zones: [thermal/*-thermal]}\n"
			      "steps:\n"
			      "  - label: all-core\n"
			      "    command: simload --cpu all=100 --for 2s\n"
			      "    repetitions: 5\n"
			      "    start: any\n"
			      "    timeout: 1m\n"
			      "    tags: {threads: all}\n"
			      "  - label: npu-op\n"
			      "    command: [simload, --npu, all=90]\n";
	ok(campaign_suite_parse("changed.yaml", changed, strlen(changed), &r, &err2),
	   "a changed suite reads");
	ok(campaign_suite_diff(&s, &r, &diff), "it differs");
	printf("# %s\n", diff.data);
	ok(strstr(diff.data, "gate.tolerance_k 1.5 -> 3") &&
		   strstr(diff.data, "steps.all-core: repetitions 3 -> 5") &&
		   strstr(diff.data, "step inference-warm removed") &&
		   strstr(diff.data, "step npu-op added"),
	   "the diff names each change with its values");
	buf_finish(&diff);
	campaign_suite_finish(&r);
	free(err2);
	campaign_suite_finish(&s);
	free(err);
}

/* Each bad suite is refused with its problem at FILE:LINE:COL. */
static void test_errors(void) {
	static const char *const cases[][2] = {
		// a typo'd key, with the near one
		{"name: x\nsteps:\n  - label: a\n    comand: [true]\n",
		 "bad.yaml:4:5: unknown key 'comand' in steps[0]: did you mean 'command'?"},
		{"name: x\ngate: {tolerence_k: 2}\nsteps: [{label: a, command: [true]}]\n",
		 "bad.yaml:2:8: unknown key 'tolerence_k' in gate: did you mean 'tolerance_k'?"},
		// a missing command
		{"name: x\nsteps:\n  - label: a\n    repetitions: 2\n",
		 "bad.yaml:3:5: steps[0] (a): no command"},
		{"name: x\nsteps:\n  - label: a\n    command: []\n",
		 "bad.yaml:4:14: steps[0] (a).command: expected a command"},
		// a negative repetition count
		{"name: x\nsteps:\n  - label: a\n    command: [true]\n    repetitions: -3\n",
		 "bad.yaml:5:18: steps[0] (a).repetitions: must be 1 or more, got -3 (negative)"},
		{"name: x\nsteps:\n  - label: a\n    command: [true]\n    repetitions: 0\n",
		 "bad.yaml:5:18: steps[0] (a).repetitions: must be between 1 and 100000, got 0"},
		// a metric the suite does not declare
		{"name: x\nmetrics: {latency_ms: ms}\nsteps:\n  - label: a\n    command: [true]\n"
		 "    metrics: [latncy_ms]\n",
		 "bad.yaml:6:15: steps[0] (a).metrics: unknown metric 'latncy_ms'; did you mean "
		 "'latency_ms'?"},
		// the rest
		{"steps: [{label: a, command: [true]}]\n", "bad.yaml:1:1: no name"},
		{"name: x\n", "bad.yaml:1:1: no steps"},
		// an empty steps: (found by fuzz-campaign: it read as a suite of no step)
		{"name: x\nsteps:\n# nothing\n", "bad.yaml:2:7: steps: no step to run"},
		{"name: x\nsteps: [{label: a, command: [true], start: hot}]\n",
		 "start: 'hot' is not one of cold, warm, any"},
		{"name: x\norder: interleaved\nsteps: [{label: a, command: [true], start: warm}]\n",
		 "a warm step needs order: sequential"},
		{"name: x\nsteps: [{label: a, command: [true]}, {label: a, command: [false]}]\n",
		 "the label 'a' is steps[0]'s too"},
		{"name: x\nsteps: [{label: idle, command: [true]}]\n", "the campaign's own"},
		{"name: x\nsteps: [{label: a, command: [true], tags: {rep: 3}}]\n",
		 "'rep' is a tag the campaign sets itself"},
		{"name: x\nsteps: [{label: a, command: [true], timeout: 10}]\n",
		 "timeout: '10' has no unit"},
		{"name: x\nsteps: [{label: a, command: [true]}]\nsteps: []\n", "duplicate"},
		// a second metrics: section (found by fuzz-campaign: it wrote past the first's)
		{"name: x\nmetrics: {a: ms}\nmetrics: [b, c, d, e, f]\nsteps: [{label: a, command: "
		 "[true]}]\n",
		 "duplicate"},
		{"name: x\nsteps: [{label: a, command: [true]]\n", "bad.yaml:2:"},
		{"", "an empty suite"},
		{"~\n", "bad.yaml:1:1: an empty suite"}, // found by fuzz-campaign
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct campaign_suite s;
		char *err = NULL;
		bool read = campaign_suite_parse("bad.yaml", cases[i][0], strlen(cases[i][0]), &s,
						 &err);
		char what[200];
		snprintf(what, sizeof(what), "refused: %s", cases[i][1]);
		ok(!read && err && strstr(err, cases[i][1]), what);
		if (read || !err || !strstr(err, cases[i][1])) {
			printf("#   got: %s\n", err ? err : "(nothing)");
		}
		campaign_suite_finish(&s);
		free(err);
	}
	// Every problem of one file at once, in file order.
	const char *many = "name: x\nsteps:\n  - label: a\n    comand: [true]\n"
			   "  - label: b\n    command: [true]\n    repetitions: -1\n";
	struct campaign_suite s;
	char *err = NULL;
	ok(!campaign_suite_parse("bad.yaml", many, strlen(many), &s, &err) && err &&
		   strstr(err, "bad.yaml:3:5: steps[0] (a): no command") &&
		   strstr(err, "bad.yaml:7:18: steps[1] (b).repetitions") &&
		   strstr(err, "bad.yaml:3:5") < strstr(err, "bad.yaml:7:18"),
	   "every problem, in file order");
	campaign_suite_finish(&s);
	free(err);
	ok(!campaign_suite_load("/nonexistent/suite.yaml", &s, &err) && err &&
		   strstr(err, "/nonexistent/suite.yaml:1:1: could not read the suite"),
	   "a missing file is named");
	campaign_suite_finish(&s);
	free(err);
}

int main(void) {
	test_smallest();
	test_full();
	test_errors();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
