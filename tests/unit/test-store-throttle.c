/*
 * The store's throttle episodes (store-throttle.c): written open and updated, closed, pruned.
 */

#include "store-fixture.h"
#include "test.h"

static struct throttle_episode episode(const char *domain, int64_t start, int64_t end,
				       int64_t last_seen) {
	struct throttle_episode ep = {
		.start = start,
		.end = end,
		.last_seen = last_seen,
		.duration_ms = ((end ? end : last_seen) - start) * 1000,
		.max_hz = 2256000000,
		.trip = -1,
	};
	snprintf(ep.domain, sizeof(ep.domain), "%s", domain);
	return ep;
}

/* Throttle episodes: written open and updated, closed after a restart, pruned with raw rows. */
static void test_throttle(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	fill_hours(store, 11);
	struct throttle_episode a = episode("cpufreq/policy6", T0 + 60, 0, T0 + 120);
	a.min_hz = 1416000000;
	a.cause = THROTTLE_CAUSE_THERMAL;
	snprintf(a.zone, sizeof(a.zone), "soc-thermal");
	a.trip = 0;
	a.trip_temp_mc = 60000;
	a.trip_hyst_mc = 2000;
	a.have_temp = true;
	a.temp_start_mc = 58000;
	a.temp_peak_mc = 62000;
	a.n_cooling = 2;
	a.cooling[0] = (struct throttle_cooling){.type = "cpufreq-cpu6", .dev = 2, .state = 3};
	a.cooling[1] =
		(struct throttle_cooling){.type = "devfreq-fb000000.gpu", .dev = 3, .state = 1};
	struct throttle_episode b = episode("devfreq/fb000000.gpu", T0 + 100, T0 + 101, T0 + 101);
	b.duration_ms = 400;
	b.method = THROTTLE_METHOD_COUNTERS;
	b.cause = THROTTLE_CAUSE_THERMAL;
	struct throttle_episode c = episode("cpufreq/policy0", T0 + 7000, T0 + 7300, T0 + 7290);
	c.stuck = true;
	struct throttle_episode *eps[] = {&a, &b, &c};
	is_int(store_throttle_put(store, eps, 3), 0, "three episodes written");
	ok(a.row > 0 && b.row > a.row && c.row > b.row, "each gets its row");
	int64_t row = a.row;
	a.last_seen = T0 + 180;
	a.min_hz = 1200000000;
	a.duration_ms = 120000;
	is_int(store_throttle_put(store, eps, 1), 0, "the open one updated");
	is_int(a.row, row, "in place");

	struct throttle_episode *got;
	size_t n;
	is_int(store_throttle_list(store, T0, T0 + 3600, &got, &n), 0, "list the first hour");
	is_int(n, 2, "two episodes overlap it");
	if (n == 2) {
		is_str(got[0].domain, "cpufreq/policy6", "oldest first");
		is_int(got[0].end, 0, "open");
		is_int(got[0].last_seen, T0 + 180, "last seen as updated");
		is_int(got[0].min_hz, 1200000000, "depth as updated");
		ok(got[0].cause == THROTTLE_CAUSE_THERMAL && got[0].method == THROTTLE_METHOD_POLL,
		   "cause and method");
		is_str(got[0].zone, "soc-thermal", "zone");
		ok(got[0].trip == 0 && got[0].trip_temp_mc == 60000 && got[0].trip_hyst_mc == 2000,
		   "trip");
		ok(got[0].have_temp && got[0].temp_start_mc == 58000 &&
			   got[0].temp_peak_mc == 62000,
		   "temperatures");
		is_int(got[0].n_cooling, 2, "two cooling devices");
		ok(got[0].cooling[1].dev == 3 && got[0].cooling[1].state == 1 &&
			   strcmp(got[0].cooling[1].type, "devfreq-fb000000.gpu") == 0,
		   "cooling device read back");
		ok(got[1].method == THROTTLE_METHOD_COUNTERS && got[1].duration_ms == 400 &&
			   got[1].min_hz == 0 && got[1].trip == -1 && !got[1].have_temp,
		   "a counters episode: unknown depth, no zone");
	}
	free(got);
	store_throttle_list(store, T0 + 150, T0 + 3600, &got, &n);
	is_int(n, 1, "an episode ended before the window is not in it");
	free(got);

	int64_t closed;
	is_int(store_throttle_close_open(store, &closed), 0, "close the open ones");
	is_int(closed, 1, "one was open");
	store_throttle_list(store, T0, T0 + 3600, &got, &n);
	ok(n == 2 && got[0].end == T0 + 180 && got[0].duration_ms == 120000,
	   "closed at the last cycle that saw it");
	free(got);

	double v[] = {40, 1e9, 1};
	put(store, T0 + 3 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_maintain(store, T0 + 3 * 3600 + 1800, 7200), 0, "maintain with retention");
	store_throttle_list(store, 0, INT64_MAX, &got, &n);
	ok(n == 1 && got[0].stuck && got[0].start == T0 + 7000,
	   "episodes ended before the raw horizon pruned with the raw rows");
	free(got);
	store_close(store);
}

int main(void) {
	store_fixture_begin();
	test_throttle();
	store_fixture_end();
	return test_done();
}
