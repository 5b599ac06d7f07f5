/*
 * The demo's workload: the simulated runs (labels, durations, failures, no overlap), the INA226
 * power they draw, the week's runs in the backfill and the live loop's runs through runsock.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "demo.h"
#include "log.h"
#include "runsock.h"
#include "sampler.h"
#include "sim.h"
#include "store.h"
#include "test.h"
#include "throttle.h"
#include "xalloc.h"

#define T0   1787000000LL // 2026-08-17
#define WEEK (7 * 86400)
#define SEED 7

/*
 * Energy by 1 s trapezoids over the INA226's 25 mW steps: the reference for both paths. *bound
 * gets the sampling bound of 5 s trapezoids: a step of power moves their sum by at most half an
 * interval times the step, and a run has at most two steps up and two down.
 */
static double energy_fine(int64_t start, int64_t end, double *bound) {
	double j = 0, lo = INFINITY, hi = -INFINITY;
	for (int64_t t = start; t < end; t++) {
		double a = 0.025 * (double)llround(sim_power_w(SEED, t) / 0.025);
		double b = 0.025 * (double)llround(sim_power_w(SEED, t + 1) / 0.025);
		j += 0.5 * (a + b);
		lo = fmin(lo, fmin(a, b));
		hi = fmax(hi, fmax(a, b));
	}
	*bound = 4 * 2.5 * (hi - lo);
	return j;
}

static void test_schedule(void) {
	size_t n = sim_runs(SEED, T0, T0 + WEEK, NULL, 0);
	struct sim_run *runs = xcalloc(n, sizeof(*runs));
	ok(sim_runs(SEED, T0, T0 + WEEK, runs, n) == n, "the count is stable");
	size_t sdxl = 0, sdxl_failed = 0, rerank = 0, rerank_failed = 0;
	bool durations_ok = true, sorted = true, overlap = false;
	int64_t last_end[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		int64_t d = runs[i].end - runs[i].start;
		bool is_sdxl = strcmp(runs[i].label, "sdxl-image") == 0;
		if (is_sdxl) {
			sdxl++;
			sdxl_failed += runs[i].exit_code != 0;
			durations_ok = durations_ok && d >= 1515 && d <= 1555;
		} else {
			rerank++;
			rerank_failed += runs[i].exit_code != 0;
			durations_ok = durations_ok && d >= 30 && d <= 150;
		}
		sorted = sorted && (i == 0 || runs[i - 1].start <= runs[i].start);
		overlap = overlap || runs[i].start < last_end[is_sdxl];
		last_end[is_sdxl] = runs[i].end;
	}
	ok(sdxl >= 80 && rerank >= 300, "a week holds both labels' runs");
	ok(sdxl_failed > 0 && sdxl_failed < sdxl / 3, "some sdxl-image runs fail");
	ok(rerank_failed > 0 && rerank_failed < rerank / 5, "some reranker runs fail");
	ok(durations_ok, "sdxl-image 1515-1555 s, reranker 30-150 s");
	ok(sorted, "by start time");
	ok(!overlap, "runs of one label never overlap");

	// Power: an NPU job draws several watts over the idle board.
	struct sim_run *job = NULL;
	for (size_t i = 0; i < n && !job; i++) {
		job = strcmp(runs[i].label, "sdxl-image") == 0 ? &runs[i] : NULL;
	}
	double busy = sim_power_w(SEED, job->start + 600);
	double before = sim_power_w(SEED, job->start - 1);
	ok(busy > 8 && busy < 10, "an sdxl-image job draws 8-10 W");
	ok(before < busy - 4, "well over the board before it");
	free(runs);
}

struct seen {
	size_t live, imported, with_energy, energy_ok, failed;
	size_t replayed, replayed_with_figures, replayed_with_samples;
	int64_t replay_from_ms;
	int64_t from_ms;
	int64_t sample_count;
};

static int count_sample(void *ctx, const struct store_run_sample *sample) {
	(void)sample;
	(*(int64_t *)ctx)++;
	return 0;
}

struct run_check {
	struct seen *seen;
	struct store *store;
};

static int check_run(void *ctx, const struct store_run *run) {
	struct run_check *c = ctx;
	struct seen *s = c->seen;
	bool live = run->start_ms >= s->from_ms;
	s->live += live;
	s->imported += !live;
	s->failed += run->status == RUN_STATUS_FAILED;
	if (!isnan(run->energy_j) && run->energy_method &&
	    strcmp(run->energy_method, "power_trapezoid") == 0) {
		s->with_energy++;
		double bound;
		double want = energy_fine(run->start_ms / 1000, run->end_ms / 1000, &bound);
		if (fabs(run->energy_j - want) <= bound) {
			s->energy_ok++;
		} else {
			printf("# run %lld (%s): %.1f J, want %.1f J\n", (long long)run->id,
			       run->label, run->energy_j, want);
		}
	}
	if (live) {
		store_run_samples_scan(c->store, run->start_ms, run->end_ms + 1, count_sample,
				       &s->sample_count);
	} else if (run->start_ms >= s->replay_from_ms) {
		int64_t n = 0;
		store_run_samples_scan(c->store, run->start_ms, run->end_ms + 1, count_sample, &n);
		s->replayed++;
		s->replayed_with_samples += n > 0;
		s->replayed_with_figures += run->figures && strstr(run->figures, "\"residency\"");
	}
	return 0;
}

/*
 * The backfill's throttle episodes are the model's caps on its one-minute grid (from the
 * quiet minute before the week, sim_quiet_minute()): an episode of
 * policy4 per run of throttled minutes, from its first minute to the first minute released, and
 * the one the week ends in left open, its tracker handed on (demo_take_tracker()) for the live
 * loop to go on with it. The sampler has the load channels.
 */
static void test_backfill_throttle(struct demo *demo, struct store *store, struct sampler *sampler,
				   int64_t now) {
	// The week begins at the quiet minute before it, if a run is under way a week ago.
	int64_t from = sim_quiet_minute(SEED, now - WEEK), to = (now - 1) / 60 * 60;
	struct {
		int64_t start, end;
	} want[400];
	size_t n_want = 0;
	bool was = false;
	for (int64_t t = from; t <= to && n_want < 400; t += 60) {
		struct sim_state s;
		sim_model(SEED, t, &s);
		bool capped = s.cool_state[SIM_POLICY_BIG0] > 0;
		if (capped && !was) {
			want[n_want].start = t;
			want[n_want].end = 0; // open if the week ends in it: it goes on live
		} else if (!capped && was) {
			want[n_want++].end = t;
		}
		was = capped;
	}
	n_want += was;
	struct throttle_episode *eps = NULL;
	size_t n = 0;
	ok(store_throttle_list(store, from, to, &eps, &n) == 0, "the backfill's episodes read");
	size_t n4 = 0, matched = 0, thermal = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(eps[i].domain, "cpufreq/policy4") != 0) {
			continue;
		}
		thermal += eps[i].cause == THROTTLE_CAUSE_THERMAL &&
			   eps[i].method == THROTTLE_METHOD_POLL && eps[i].min_hz < eps[i].max_hz;
		if (n4 < n_want && eps[i].start == want[n4].start && eps[i].end == want[n4].end) {
			matched++;
		} else if (n4 < n_want) {
			printf("# episode %zu: %lld-%lld, the model %lld-%lld\n", n4,
			       (long long)eps[i].start, (long long)eps[i].end,
			       (long long)want[n4].start, (long long)want[n4].end);
		}
		n4++;
	}
	printf("# %zu policy4 episodes in the week (%zu in the model)\n", n4, n_want);
	ok(n_want >= 80 && n4 == n_want && matched == n_want,
	   "each run of capped minutes is one policy4 episode, its ends on the minute grid");
	ok(thermal == n4, "thermal, polled, capped below the hardware maximum");
	free(eps);
	struct throttle_tracker *tracker = demo_take_tracker(demo);
	ok(tracker && !demo_take_tracker(demo), "the backfill's tracker is handed on, once");
	throttle_tracker_destroy(tracker);

	const struct channel *channels;
	const struct reading *readings;
	size_t nc = sampler_read(sampler, 0, &channels, &readings);
	static const char *const keys[] = {"load/cpu", "load/cpu4", "load/cpu7", "load/rknpu/core0",
					   "load/rknpu/core2"};
	size_t found = 0;
	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
		for (size_t i = 0; i < nc; i++) {
			found += strcmp(channels[i].key, keys[k]) == 0;
		}
	}
	ok(found == sizeof(keys) / sizeof(*keys), "the sampler has the CPUs' and NPU cores' load");
	(void)demo;
}

static void test_backfill_and_live(void) {
	char dir[] = "/tmp/thermlog-test-demo.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(false, "a temporary directory");
		return;
	}
	setenv("TMPDIR", dir, 1);
	char *db = xasprintf("%s/demo.db", dir);
	struct demo demo;
	int64_t now = T0 + 7200;
	ok(demo_init(&demo, SEED, db, now) == 0, "demo_init");
	struct config *cfg = demo_config(&demo, NULL);
	struct store *store = NULL;
	ok(cfg && store_open(&store, db, STORE_MODE_WRITE) == 0, "config and store");
	struct sampler *sampler = cfg ? sampler_create(cfg) : NULL;
	int64_t last_ts = 0;
	ok(sampler && demo_backfill(&demo, store, sampler, NULL, cfg->retention_raw_s, now,
				    &last_ts) == 0,
	   "the week's backfill");

	test_backfill_throttle(&demo, store, sampler, now);

	// The live loop for two hours on the 5 s grid, as thermlogd --demo drives it.
	struct runsock *rs = runsock_create(cfg, store, NULL, now * 1000);
	ok(rs != NULL, "runsock_create");
	// The boot clock: a day before T0.
	demo_replay(&demo, rs, now * 1000, (now - T0 + 86400) * 1000);
	int64_t until = now + 7200;
	for (int64_t t = now; rs && t < until; t += 5) {
		demo_before_read(&demo, t);
		demo_runs(&demo, rs, t * 1000, (t - T0 + 86400) * 1000);
		runsock_work(rs, t * 1000, (t - T0 + 86400) * 1000);
	}
	runsock_destroy(rs);

	size_t want_live = 0, n = sim_runs(SEED, now + 1, until, NULL, 0);
	struct sim_run *runs = xcalloc(n ? n : 1, sizeof(*runs));
	sim_runs(SEED, now + 1, until, runs, n);
	for (size_t i = 0; i < n; i++) {
		want_live += runs[i].end < until;
	}
	free(runs);
	struct seen seen = {.from_ms = now * 1000, .replay_from_ms = (now - 3 * 3600) * 1000};
	struct run_check c = {&seen, store};
	struct store_run_filter ended = {.has_to = true, .to_ms = until * 1000};
	store_runs_scan(store, &ended, check_run, &c);
	printf("# %zu backfilled (%zu replayed), %zu live (%zu expected), %lld fast sample values\n",
	       seen.imported, seen.replayed, seen.live, want_live, (long long)seen.sample_count);
	ok(seen.imported >= 80, "the week's runs are in the history");
	ok(want_live > 0 && seen.live >= want_live, "the live loop starts and stops its runs");
	ok(seen.failed > 0, "some failed");
	ok(seen.with_energy == seen.imported + want_live,
	   "every ended run has energy by power trapezoids");
	ok(seen.energy_ok == seen.with_energy, "energy agrees with the INA226's integral");
	ok(seen.sample_count > 0, "live runs keep fast samples");
	ok(seen.replayed >= 5 && seen.replayed_with_samples == seen.replayed,
	   "the backfill's last 3 hours of runs are replayed with fast samples");
	ok(seen.replayed_with_figures == seen.replayed, "and have their residency figures");

	store_close(store);
	sampler_destroy(sampler);
	config_finish(cfg);
	free(cfg);
	demo_finish(&demo);
	char *rm = xasprintf("rm -rf %s", dir);
	ok(system(rm) == 0, "cleanup");
	free(rm);
	free(db);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	log_init(LOG_LEVEL_WARN);
	test_schedule();
	test_backfill_and_live();
	return test_done();
}
