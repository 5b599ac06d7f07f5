/* A window's throttle totals to the millisecond (throttle_report_window): a run's interval. */
#include <string.h>

#include "test.h"
#include "throttle-report.h"

static struct throttle_episode poll_ep(const char *domain, int64_t start, int64_t end,
				       int64_t min_hz) {
	struct throttle_episode ep = {.start = start,
				      .end = end,
				      .last_seen = end - 1,
				      .duration_ms = (end - start) * 1000,
				      .min_hz = min_hz,
				      .max_hz = 2256000000,
				      .method = THROTTLE_METHOD_POLL,
				      .trip = -1};
	snprintf(ep.domain, sizeof(ep.domain), "%s", domain);
	return ep;
}

static void test_clip(void) {
	const int64_t t = 1796000000; // s
	struct throttle_episode eps[4] = {
		poll_ep("cpufreq/policy6", t + 10, t + 20, 1416000000),
		poll_ep("cpufreq/policy6", t + 30, t + 40, 1800000000),
		poll_ep("devfreq/fb000000.gpu", t + 50, 0, 500000000),
		// 300 ms counted between the cycles at t + 4 and t + 5
		{.start = t + 4,
		 .end = t + 5,
		 .last_seen = t + 4,
		 .duration_ms = 300,
		 .method = THROTTLE_METHOD_COUNTERS,
		 .trip = -1},
	};
	eps[2].last_seen = t + 55; // open: up to the last cycle that saw it
	snprintf(eps[3].domain, sizeof(eps[3].domain), "cpufreq/policy4");
	struct throttle_report r;
	// [t + 15.250, t + 35.750): 4.750 s of the first, 5.750 s of the second, 20.5 s long
	throttle_report_window(eps, 4, (t + 15) * 1000 + 250, (t + 35) * 1000 + 750, NULL, &r);
	is_int(r.n, 2, "two episodes overlap the window");
	is_int(r.n_domains, 1, "one domain");
	is_int(r.domains[0].throttled_ms, 4750 + 5750, "clipped to the millisecond at both ends");
	is_near(r.domains[0].share, 10500.0 / 20500.0, 1e-15, "share of the window's length");
	is_int(r.domains[0].min_hz, 1416000000, "the deepest cap of the two");
	ok(r.from == t + 15 && r.to == t + 36, "whole seconds around the window");
	throttle_report_finish(&r);

	// An open episode counts to its last cycle; a counters episode at most its interval's
	// part inside the window.
	throttle_report_window(eps, 4, (t + 4) * 1000 + 900, (t + 52) * 1000 + 500, "devfreq/*",
			       &r);
	ok(r.n == 1 && r.domains[0].throttled_ms == 2500, "the open GPU episode: 2.5 s, glob kept");
	throttle_report_finish(&r);
	throttle_report_window(eps, 4, (t + 4) * 1000 + 900, (t + 9) * 1000, "cpufreq/policy4", &r);
	ok(r.n == 1 && r.domains[0].throttled_ms == 100,
	   "counters: 300 ms counted, 100 ms of its interval inside: 100 ms");
	throttle_report_finish(&r);
	throttle_report_window(eps, 4, (t + 3) * 1000, (t + 9) * 1000, "cpufreq/policy4", &r);
	ok(r.n == 1 && r.domains[0].throttled_ms == 300, "counters: the whole interval inside");
	throttle_report_finish(&r);

	// Touching bounds: an episode ending at the window's start overlaps with 0 ms; one
	// starting at its end does not overlap.
	throttle_report_window(eps, 4, (t + 20) * 1000, (t + 30) * 1000, "cpufreq/policy6", &r);
	ok(r.n == 1 && r.domains[0].throttled_ms == 0, "[t+20, t+30): only the first touches");
	throttle_report_finish(&r);
	throttle_report_window(eps, 4, (t + 60) * 1000, (t + 60) * 1000, NULL, &r);
	ok(r.n == 0 && r.n_domains == 0, "an empty window has none");
	throttle_report_finish(&r);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_clip();
	return test_done();
}
