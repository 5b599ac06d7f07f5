/*
 * A campaign's arithmetic (model/campaignplan.c): the order of its repetitions, where a resume
 * goes on, the gate's verdict and its words, the time left.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "campaignplan.h"
#include "test.h"

/* The plan as "A1 A2 Bw1 B1" text. */
static void plan_text(const struct campaignplan_slot *s, size_t n, char *out, size_t size) {
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		len += (size_t)snprintf(out + len, size - len, "%s%c%s%u", i ? " " : "",
					'A' + (char)s[i].step, s[i].warmup ? "w" : "", s[i].rep);
	}
}

static void test_order(void) {
	const struct campaignplan_step steps[] = {{2, 0}, {2, 1}, {1, 0}};
	struct campaignplan_slot s[16];
	char text[128];
	size_t n = campaignplan_slots(steps, 3, false, s, 16);
	plan_text(s, n, text, sizeof(text));
	is_str(text, "A1 A2 Bw1 B1 B2 C1", "sequential: each step's warmups, then repetitions");
	is_int(campaignplan_slots(steps, 3, false, NULL, 0), 6, "counted without filling");
	n = campaignplan_slots(steps, 3, true, s, 16);
	plan_text(s, n, text, sizeof(text));
	is_str(text, "A1 Bw1 C1 A2 B1 B2", "interleaved: round by round, A B C A B ...");
	n = campaignplan_slots(steps, 3, true, s, 3);
	is_int(n, 6, "the count beyond the cap");
}

static void test_resume(void) {
	const struct campaignplan_step steps[] = {{3, 1}, {2, 0}};
	struct campaignplan_slot plan[8];
	size_t n = campaignplan_slots(steps, 2, false, plan, 8);
	is_int(campaignplan_resume(plan, n, NULL, 0), 0, "nothing ended: from the start");
	struct campaignplan_slot ended[] = {{0, 1, true}, {0, 1, false}, {0, 3, false}};
	is_int(campaignplan_resume(plan, n, ended, 3), 2,
	       "the first not ended (A2, though A3 ended)");
	struct campaignplan_slot all[8];
	memcpy(all, plan, sizeof(all));
	is_int(campaignplan_resume(plan, n, all, n), n, "all ended: nothing owed");
	struct campaignplan_slot warm_only[] = {{0, 1, true}};
	ok(!campaignplan_same(&warm_only[0], &plan[1]),
	   "a warmup is not the repetition of its number");
}

static void test_gate(void) {
	struct campaigngate_zone z[] = {{"thermal/soc-thermal", 40.0, true, 41.5},
					{"thermal/bigcore0-thermal", 41.9, true, 46.3},
					{"thermal/npu-thermal", 39.0, true, 36.0}};
	struct campaigngate_input in = {.zones = z, .n_zones = 3, .tolerance_k = 2};
	struct campaigngate_verdict v;
	campaigngate_check(&in, &v);
	ok(v.state == CAMPAIGNGATE_HOT && v.zone == &z[1] && fabs(v.off_k - 4.4) < 1e-9,
	   "a zone over its tolerance holds the gate (hot before cold)");
	struct buf b = {0};
	campaigngate_describe(&in, &v, &b);
	is_str(b.data,
	       "thermal/bigcore0-thermal 46.3 °C, 4.4 K over its idle baseline 41.9 (± 2 K)",
	       "and says so with its figures");
	buf_clear(&b);
	z[1].now_c = 43.8;
	campaigngate_check(&in, &v);
	ok(v.state == CAMPAIGNGATE_COLD && v.zone == &z[2], "then the coldest zone");
	z[2].now_c = 37.1;
	campaigngate_check(&in, &v);
	ok(v.state == CAMPAIGNGATE_PASS, "within ± 2 K everywhere: pass (43.8 is 1.9 over)");
	campaigngate_describe(&in, &v, &b);
	is_str(b.data, "passed: every zone within ± 2 K of its idle baseline", "pass's words");
	buf_clear(&b);
	in.cooling = "cpufreq-cpu4";
	in.cooling_state = 2;
	campaigngate_check(&in, &v);
	ok(v.state == CAMPAIGNGATE_COOLING, "a passive trip's cooling device above 0 holds it");
	campaigngate_describe(&in, &v, &b);
	is_str(b.data, "cpufreq-cpu4 at state 2 (a passive trip's cooling)", "cooling's words");
	buf_clear(&b);
	in.open_episode = "cpufreq/policy4";
	campaigngate_check(&in, &v);
	ok(v.state == CAMPAIGNGATE_THROTTLED, "an open throttle episode first");
	in.open_episode = NULL;
	in.cooling = NULL;
	z[0].present = false;
	campaigngate_check(&in, &v);
	ok(v.state == CAMPAIGNGATE_NO_DATA && v.zone == &z[0], "a zone without a reading holds it");
	is_str(campaigngate_state_name(CAMPAIGNGATE_COLD), "cold", "state names");
	buf_finish(&b);
}

static void test_eta(void) {
	struct campaignplan_slot todo[] = {{0, 1, false}, {0, 2, false}, {1, 1, false}};
	double mean[] = {10, NAN}, wait[] = {5, NAN};
	is_near(campaignplan_eta_s(todo, 3, mean, wait, 30), 60, 1e-12,
		"two of step A at 10 s + 5 s of gate, one unknown at the fallback");
}

int main(void) {
	test_order();
	test_resume();
	test_gate();
	test_eta();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
