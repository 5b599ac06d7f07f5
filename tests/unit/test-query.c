/*
 * Window statistics over a store built here with store_write_cycle/store_maintain: answers
 * from rollups equal answers from raw rows, byte for byte, and match a sorted reference.
 */
#include <errno.h>
#include <getopt.h>
#include <time.h>

#include "csv.h"
#include "fixture.h"
#include "json.h"
#include "query.h"
#include "stats.h"
#include "store.h"
#include "test.h"
#include "timefmt.h"

static char *stats_json(struct store *store, const struct query_params *p, int *rc) {
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	char *err = NULL;
	*rc = query_stats_json(store, p, &j, &err);
	if (*rc < 0) {
		buf_finish(&b);
		return err;
	}
	free(err);
	return buf_steal(&b);
}

/* The number after "field": in the object of channel @key (or the top level if NULL). */
static double number(const char *json, const char *key, const char *field) {
	const char *p = json;
	if (key) {
		char pat[256];
		snprintf(pat, sizeof(pat), "\"key\":\"%s\"", key);
		p = strstr(json, pat);
		if (!p) {
			return NAN;
		}
	}
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", field);
	p = strstr(p, pat);
	if (!p || strncmp(p + strlen(pat), "null", 4) == 0) {
		return NAN;
	}
	return strtod(p + strlen(pat), NULL);
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double ref_pct(const double *v, size_t n, double p) {
	double h = (double)(n - 1) * (p / 100.0);
	size_t lo = (size_t)floor(h), hi = lo + 1 < n ? lo + 1 : n - 1;
	double g = h - floor(h), d = v[hi] - v[lo];
	return g >= 0.5 ? v[hi] - d * (1 - g) : v[lo] + d * g;
}

/* Checks the JSON against a reference computed from the generated history. */
static void check_reference(const char *json, int64_t from, int64_t to, bool unsynced,
			    const char *what) {
	for (int c = 0; c < FIXTURE_CHANNELS; c++) {
		double *v = malloc(FIXTURE_CYCLES * sizeof(*v));
		size_t n = 0;
		long double sum = 0;
		int64_t max_q = INT64_MIN, max_ts = 0;
		for (int i = 0; i < FIXTURE_CYCLES; i++) {
			if (fixture_hist.ts[i] < from || fixture_hist.ts[i] >= to ||
			    !fixture_hist.have[i][c] || (fixture_hist.unsynced[i] && !unsynced)) {
				continue;
			}
			v[n++] = stats_value(fixture_hist.q[i][c], fixture_channels[c].resolution);
			sum += v[n - 1];
			if (fixture_hist.q[i][c] > max_q) {
				max_q = fixture_hist.q[i][c];
				max_ts = fixture_hist.ts[i];
			}
		}
		qsort(v, n, sizeof(*v), cmp_double);
		long double mean = sum / n, ss = 0;
		for (size_t i = 0; i < n; i++) {
			ss += (v[i] - mean) * (v[i] - mean);
		}
		const char *k = fixture_channels[c].key;
		bool same = number(json, k, "count") == (double)n &&
			    fabs(number(json, k, "mean") - (double)mean) <=
				    1e-12 * fabs((double)mean) &&
			    fabs(number(json, k, "stddev") - (double)sqrtl(ss / n)) <=
				    1e-9 * fabs((double)mean) &&
			    number(json, k, "p50") == ref_pct(v, n, 50) &&
			    number(json, k, "p95") == ref_pct(v, n, 95) &&
			    number(json, k, "p99") == ref_pct(v, n, 99) &&
			    number(json, k, "min") == v[0] && number(json, k, "max") == v[n - 1] &&
			    number(json, k, "max_time") == (double)max_ts;
		if (!ok(same, what)) {
			printf("# channel %s: %s\n", k, json);
		}
		free(v);
	}
}

static void test_stats(struct store *store) {
	const double pct[] = {99};
	struct query_params p = {.percentiles = pct, .n_percentiles = 1};
	int rc;
	// Raw only: nothing is rolled up yet.
	char *all_raw = stats_json(store, &p, &rc);
	is_int(rc, 0, "whole history from raw rows");
	check_reference(all_raw, 0, INT64_MAX, false, "whole history matches the reference");
	is_int(number(all_raw, NULL, "from"), fixture_hist.ts[0], "default from = first cycle");
	is_int(number(all_raw, NULL, "to"), fixture_hist.ts[FIXTURE_CYCLES - 1] + 1,
	       "default to = after the last");
	is_int(number(all_raw, NULL, "interval_s"), 60, "interval inferred from spacing");
	is_int(number(all_raw, NULL, "unsynced_excluded"), 30, "unsynced cycles counted");
	// A spacing of 3 h after 60 s ones: the time beyond the sample's own 60 s is the gap.
	is_int(number(all_raw, NULL, "longest_gap_s"), 3 * 3600 - 60, "the three-hour gap");
	is_int(number(all_raw, NULL, "cycles"), FIXTURE_CYCLES - 30, "cycles kept");
	is_int(number(all_raw, "thermal/bigcore0-thermal", "longest_gap_s"), 3 * 3600 - 60,
	       "a channel in every cycle has the cycles' longest gap");
	ok(isnan(number(all_raw, "thermal/soc-thermal", "longest_gap_s")),
	   "a channel that missed cycles has none");
	is_int(number(all_raw, "thermal/bigcore0-thermal", "unsynced_excluded"), 30,
	       "per-channel unsynced count");
	ok(strstr(all_raw, "\"time_in_state\":[{\"value\":300000000,\"share\":") != NULL,
	   "time in state for the NPU clock");
	p.include_unsynced = true;
	char *all_raw_u = stats_json(store, &p, &rc);
	check_reference(all_raw_u, 0, INT64_MAX, true, "include_unsynced keeps them");
	p.include_unsynced = false;

	// A window with ragged edges: 23:59 into the history for 31.5 hours.
	struct query_params w = p;
	w.has_from = w.has_to = true;
	w.from = fixture_hist.ts[0] + 23 * 60 + 59;
	w.to = w.from + 31 * 3600 + 1800;
	char *win_raw = stats_json(store, &w, &rc);
	check_reference(win_raw, w.from, w.to, false, "ragged window matches the reference");
	w.include_unsynced = true;
	char *win_raw_u = stats_json(store, &w, &rc);
	w.include_unsynced = false;

	// Roll up every complete hour, keep raw rows: the answers must not change at all.
	int64_t end = fixture_hist.ts[FIXTURE_CYCLES - 1] + 60;
	is_int(store_maintain(store, end, 400 * 86400), 0, "rollups built");
	int64_t horizon = 0;
	store_rollup_horizon(store, &horizon);
	ok(horizon > fixture_hist.ts[0] + 40 * 3600, "rollup horizon advanced");
	char *s;
	is_str(s = stats_json(store, &p, &rc), all_raw, "whole history: rollups = raw");
	free(s);
	p.include_unsynced = true;
	is_str(s = stats_json(store, &p, &rc), all_raw_u, "with unsynced: rollups = raw");
	free(s);
	p.include_unsynced = false;
	is_str(s = stats_json(store, &w, &rc), win_raw, "ragged window: rollups = raw");
	free(s);
	w.include_unsynced = true;
	is_str(s = stats_json(store, &w, &rc), win_raw_u, "ragged window with unsynced");
	free(s);
	w.include_unsynced = false;

	// Prune raw rows older than a day: old whole hours are answered by rollups alone.
	struct query_params old = p;
	old.has_from = old.has_to = true;
	old.from = (fixture_hist.ts[0] / 3600 + 2) * 3600;
	old.to = old.from + 10 * 3600;
	char *old_raw = stats_json(store, &old, &rc);
	check_reference(old_raw, old.from, old.to, false, "old whole hours match the reference");
	is_int(store_maintain(store, end, 86400), 0, "raw rows pruned");
	is_str(s = stats_json(store, &old, &rc), old_raw, "pruned hours: same answer from rollups");
	free(s);

	// Selection and errors.
	struct query_params g = {.channels = (const char *const[]){"thermal/*"}, .n_channels = 1};
	s = stats_json(store, &g, &rc);
	ok(strstr(s, "soc-thermal") && strstr(s, "bigcore0") && !strstr(s, "npu"),
	   "a glob selects the thermal channels");
	free(s);
	struct query_params bad = {.channels = (const char *const[]){"thermal/nope"},
				   .n_channels = 1};
	s = stats_json(store, &bad, &rc);
	is_int(rc, -EINVAL, "unknown channel refused");
	is_str(s, "unknown channel 'thermal/nope' (see thermlog channels)", "and named");
	free(s);
	struct query_params empty = {.has_from = true, .has_to = true, .from = 10, .to = 10};
	s = stats_json(store, &empty, &rc);
	is_int(rc, -EINVAL, "empty window refused");
	free(s);
	struct query_params nowhere = {.has_from = true, .has_to = true, .from = 10, .to = 20};
	s = stats_json(store, &nowhere, &rc);
	is_int(rc, 0, "a window without data is no error");
	ok(strstr(s, "\"count\":0,\"coverage\":0,\"longest_gap_s\":10,\"mean\":null") != NULL,
	   "statistics are null");
	free(s);

	free(all_raw);
	free(all_raw_u);
	free(win_raw);
	free(win_raw_u);
	free(old_raw);
}

static void test_peak(struct store *store) {
	// The bigcore maximum in the still-raw last day.
	struct query_params p = {.channels = (const char *const[]){"thermal/bigcore0-thermal"},
				 .n_channels = 1,
				 .samples = 5,
				 .has_from = true,
				 .from = fixture_hist.ts[FIXTURE_CYCLES - 1] - 12 * 3600};
	p.has_to = true;
	p.to = fixture_hist.ts[FIXTURE_CYCLES - 1] + 1;
	int64_t max_q = INT64_MIN, max_ts = 0;
	int at = 0;
	for (int i = 0; i < FIXTURE_CYCLES; i++) {
		if (fixture_hist.ts[i] >= p.from && !fixture_hist.unsynced[i] &&
		    fixture_hist.q[i][0] > max_q) {
			max_q = fixture_hist.q[i][0];
			max_ts = fixture_hist.ts[i];
			at = i;
		}
	}
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	char *err = NULL;
	is_int(query_peak_json(store, &p, &j, &err), 0, "peak");
	is_int(number(b.data, NULL, "max_time"), max_ts, "peak time");
	char row[128];
	snprintf(row, sizeof(row), "[%lld,%.3f,", (long long)max_ts, (double)max_q / 1000);
	ok(strstr(b.data, row) != NULL, "the maximum's row");
	// Five rows centred on the maximum, shifted inwards at the window's edges.
	int idx[FIXTURE_CYCLES], n = 0, pos = 0;
	for (int i = 0; i < FIXTURE_CYCLES; i++) {
		if (fixture_hist.ts[i] >= p.from && fixture_hist.ts[i] < p.to &&
		    !fixture_hist.unsynced[i]) {
			pos = i == at ? n : pos;
			idx[n++] = i;
		}
	}
	int first = pos >= 2 ? pos - 2 : 0, last = first + 5 < n ? first + 5 : n;
	if (last - first < 5 && last == n) {
		first = n >= 5 ? n - 5 : 0;
	}
	snprintf(row, sizeof(row), "[%lld,", (long long)fixture_hist.ts[idx[first]]);
	ok(strstr(b.data, row) != NULL, "the first row");
	snprintf(row, sizeof(row), "[%lld,", (long long)fixture_hist.ts[idx[last - 1]]);
	ok(strstr(b.data, row) != NULL, "the last row");
	bool outside = false;
	if (first > 0) {
		snprintf(row, sizeof(row), "[%lld,", (long long)fixture_hist.ts[idx[first - 1]]);
		outside = outside || strstr(b.data, row);
	}
	if (last < n) {
		snprintf(row, sizeof(row), "[%lld,", (long long)fixture_hist.ts[idx[last]]);
		outside = outside || strstr(b.data, row);
	}
	ok(!outside, "five rows only");
	ok(strstr(b.data, "{\"key\":\"devfreq/fdab0000.npu\"") != NULL,
	   "other channels as columns");
	buf_finish(&b);
	free(err);
}

static void test_samples(struct store *store) {
	struct query_params p = {.max_points = 10,
				 .channels = (const char *const[]){"devfreq/fdab0000.npu"},
				 .n_channels = 1};
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	char *err = NULL;
	is_int(query_samples_json(store, &p, &j, &err), 0, "samples");
	int points = 0;
	for (const char *s = b.data; (s = strstr(s, "],[")) || (s = NULL); s++) {
		points++;
	}
	ok(points + 1 <= 10, "at most max_points buckets");
	ok(number(b.data, NULL, "bucket_s") >= 3600, "hour-sized buckets over 53 hours");
	ok(strstr(b.data, ",300000000,1000000000,") != NULL, "a bucket spans the OPP range");
	buf_finish(&b);
	free(err);
}

static void test_channels(struct store *store) {
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	char *err = NULL;
	is_int(query_channels_json(store, NULL, &j, &err), 0, "channels listed");
	free(err);
	const char *s = b.data;
	const char *npu = strstr(s, "\"key\":\"devfreq/fdab0000.npu\"");
	const char *soc = strstr(s, "\"key\":\"thermal/soc-thermal\"");
	ok(npu && strstr(npu, "\"meta\":{\"governor\":\"rknpu_ondemand\",\"min_freq\":300000000,"
			      "\"max_freq\":1000000000}}"),
	   "the NPU's meta is the stored object, raw");
	const char *soc_end = soc ? strchr(soc, '}') : NULL;
	ok(soc_end && soc_end - soc > 11 && strncmp(soc_end - 11, "\"meta\":null", 11) == 0,
	   "a channel without meta has meta null");
	buf_finish(&b);
}

/* ---- the daily level: days merged from hourly rollups answer exactly as raw rows ---- */

#define D_CYC 7500 // five days and a bit of minutes

/* Writes the same five-day history into @store: gaps within and across days, unsynced cycles
 * inside a whole day, missed readings. @q and @have are the generated values. */
static bool build_days(struct store *store, const int64_t *ts, int64_t (*q)[FIXTURE_CHANNELS],
		       bool (*have)[FIXTURE_CHANNELS], const bool *unsynced) {
	store_begin(store);
	for (int i = 0; i < D_CYC; i++) {
		struct reading r[FIXTURE_CHANNELS];
		for (int c = 0; c < FIXTURE_CHANNELS; c++) {
			r[c] = (struct reading){.value = (double)q[i][c] *
							 fixture_channels[c].resolution,
						.err = have[i][c] ? 0 : -ENODEV};
		}
		struct cycle cy = {.ts = ts[i],
				   .boot_id = "b1",
				   .clock = unsynced[i] ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED,
				   .n = FIXTURE_CHANNELS,
				   .channels = fixture_channels,
				   .readings = r};
		if (store_write_cycle(store, &cy) < 0) {
			return false;
		}
	}
	return store_commit(store) == 0;
}

/* The same window from the maintained store and from the raw-only one: byte for byte. */
static void same_window(struct store *days, struct store *raw, int64_t from, int64_t to,
			bool unsynced, const char *what) {
	const double pct[] = {99, 0, 100, 37.5};
	struct query_params p = {.percentiles = pct,
				 .n_percentiles = 4,
				 .include_unsynced = unsynced,
				 .has_from = from != 0,
				 .has_to = to != 0,
				 .from = from,
				 .to = to};
	int rc1, rc2;
	char *a = stats_json(days, &p, &rc1), *b = stats_json(raw, &p, &rc2);
	if (!ok(rc1 == 0 && rc2 == 0 && strcmp(a, b) == 0, what)) {
		printf("# daily: %s\n# raw:   %s\n", a, b);
	}
	free(a);
	free(b);
}

static int count_rollup(void *ctx, const struct store_rollup *r) {
	int64_t *n = ctx;
	n[0] += r->count;
	n[1] += r->unsynced;
	n[2]++;
	return 0;
}

static int count_day(void *ctx, const struct store_cycle_day *d) {
	int64_t *n = ctx;
	n[0] += d->cycles;
	n[1] += d->unsynced;
	n[2]++;
	return 0;
}

static void all_windows(struct store *days, struct store *raw, const int64_t *ts,
			const char *when) {
	char what[160];
	int64_t day0 = (ts[0] / 86400 + 1) * 86400; // the first whole day
	const int64_t win[][2] = {
		{0, 0},                                  // whole history
		{day0, day0 + 3 * 86400},                // whole days only
		{day0 - 1, day0 + 3 * 86400 + 1},        // a second past each end
		{ts[0] + 23 * 60 + 59, ts[D_CYC - 1]},   // ragged: minutes into hours
		{day0 + 86400 + 1800, day0 + 4 * 86400}, // from mid-hour to a day's end
		{day0 + 5 * 3600, day0 + 86400 + 7 * 3600},
		// from inside a day, before its first cycle: that day is read as a merged one
		{ts[0] - 3000, day0 + 2 * 86400},
		{day0 + 86400 + 500, day0 + 3 * 86400 + 7}, // its first cycle late, after a gap
	};
	for (size_t k = 0; k < sizeof(win) / sizeof(win[0]); k++) {
		for (int u = 0; u < 2; u++) {
			snprintf(what, sizeof(what), "%s: window %zu%s equals raw rows", when, k,
				 u ? " with unsynced" : "");
			same_window(days, raw, win[k][0], win[k][1], u, what);
		}
	}
}

static void test_days(void) {
	static int64_t ts[D_CYC], q[D_CYC][FIXTURE_CHANNELS];
	static bool have[D_CYC][FIXTURE_CHANNELS], unsynced[D_CYC];
	const int64_t opp[] = {300000000, 600000000, 800000000, 1000000000};
	int64_t t = FIXTURE_T0;
	int64_t day0 = (FIXTURE_T0 / 86400 + 1) * 86400;
	for (int i = 0; i < D_CYC; i++) {
		t += 60;
		if (i == 1400) {
			t = day0 + 86400 + 1000; // a gap across midnight, into the second day
		} else if (i == 4000) {
			t += 47 * 60; // a gap inside a day
		} else if (i % 211 == 7) {
			t += 1; // a cycle late by a second: spacings are not all alike
		}
		ts[i] = t;
		unsynced[i] = t >= day0 + 2 * 86400 + 3600 && t < day0 + 2 * 86400 + 5400;
		for (int c = 0; c < FIXTURE_CHANNELS; c++) {
			q[i][c] = c == 2 ? opp[rng() % 4]
					 : 40000 + (int64_t)(rng() % 35) * 1000 + (c ? 0 : 769);
			have[i][c] = !(c == 1 && i % 97 == 5);
		}
	}
	struct store *days, *raw;
	if (!ok(store_open(&days, ":memory:", STORE_MODE_WRITE) == 0 &&
			store_open(&raw, ":memory:", STORE_MODE_WRITE) == 0,
		"two stores") ||
	    !ok(build_days(days, ts, q, have, unsynced) && build_days(raw, ts, q, have, unsynced),
		"the same history in both")) {
		return;
	}
	int64_t end = ts[D_CYC - 1] + 60, horizon = 0, day_horizon = 0;
	is_int(store_maintain(days, end, 400 * 86400), 0, "hours rolled up and days merged");
	store_rollup_horizon(days, &horizon);
	store_day_horizon(days, &day_horizon);
	is_int(day_horizon, horizon / 86400 * 86400, "days merged up to the last whole day");
	ok(day_horizon >= day0 + 4 * 86400, "four whole days merged");

	// The merged days hold exactly the hourly rollups and the cycles of those days.
	int64_t by_hour[3] = {0}, by_day[3] = {0}, cyc[3] = {0};
	store_scan_rollups(days, day0, day_horizon, NULL, 0, count_rollup, by_hour);
	store_scan_rollup_days(days, day0, day_horizon, NULL, 0, count_rollup, by_day);
	store_scan_cycle_days(days, day0, day_horizon, count_day, cyc);
	int64_t n_days = (day_horizon - day0) / 86400;
	ok(by_hour[0] == by_day[0] && by_hour[1] == by_day[1] &&
		   by_day[2] == FIXTURE_CHANNELS * n_days,
	   "daily rollups: the hourly counts, one row a day and channel");
	int64_t want_cycles = 0, want_unsynced = 0;
	for (int i = 0; i < D_CYC; i++) {
		if (ts[i] >= day0 && ts[i] < day_horizon) {
			unsynced[i] ? want_unsynced++ : want_cycles++;
		}
	}
	ok(cyc[0] == want_cycles && cyc[1] == want_unsynced && want_unsynced == 30 &&
		   cyc[2] == n_days,
	   "daily cycles: trusted and unsynced counted, a row a day");
	all_windows(days, raw, ts, "merged days");

	// An import into a merged day: the days from there on are left to the hourly level
	// until the next maintenance merges them again.
	int64_t id;
	enum store_import_result res;
	int64_t at = day0 + 86400 + 4 * 3600 + 30;
	ok(store_channel_ensure(days, &fixture_channels[1], &id) == 0 &&
		   store_insert_sample(days, at, id, 99000, &res) == 0 &&
		   store_channel_ensure(raw, &fixture_channels[1], &id) == 0 &&
		   store_insert_sample(raw, at, id, 99000, &res) == 0 && res == STORE_IMPORT_NEW,
	   "a value imported into a merged day");
	store_day_horizon(days, &day_horizon);
	is_int(day_horizon, day0 + 86400, "the day horizon moved back to that day");
	all_windows(days, raw, ts, "after an import");
	is_int(store_maintain(days, end, 400 * 86400), 0, "maintenance after the import");
	store_day_horizon(days, &day_horizon);
	ok(day_horizon >= day0 + 4 * 86400, "the days merged again");
	all_windows(days, raw, ts, "merged again");

	// A finer resolution rescales hourly rollups and merged days alike: the days stay merged.
	double applied = 0;
	int64_t merged = day_horizon;
	ok(store_channel_refine(days, id, 0.0005, &applied) == 0 &&
		   store_channel_refine(raw, id, 0.0005, &applied) == 0 && applied == 0.0005,
	   "a channel refined to 0.0005");
	store_day_horizon(days, &day_horizon);
	is_int(day_horizon, merged, "the merged days stay merged after a refinement, rescaled");
	all_windows(days, raw, ts, "after a refinement");
	is_int(store_maintain(days, end, 400 * 86400), 0, "maintenance after the refinement");
	all_windows(days, raw, ts, "merged at the finer resolution");
	store_close(days);
	store_close(raw);
}

static void test_empty(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	struct query_params p = {0};
	int rc;
	char *s = stats_json(store, &p, &rc);
	is_int(rc, -ENOENT, "empty database");
	is_str(s, "the database holds no samples yet", "says so");
	free(s);
	store_close(store);
}

/* The window limit: a window too long, one whose length overflows, one within the limit. */
static void test_window_check(void) {
	static const char *const names[] = {"--from", "--to"};
	char *err = NULL;
	int bad = -1;
	is_int(query_window_check(0, 86401, false, 86400, names, &bad, &err), -EINVAL,
	       "a window a second over the limit");
	is_str(err,
	       "the window given by --from and --to spans 86401 s, more than the configured limit of 86400 s (http.max_window)",
	       "its message");
	is_int(bad, 1, "blames the end given");
	free(err);
	err = NULL;
	is_int(query_window_check(INT64_MIN, INT64_MAX, true, 86400, names, &bad, &err), -EINVAL,
	       "a window whose length does not fit in 64 bits");
	is_str(err,
	       "the window given by --from and --to is longer than the configured limit of 86400 s (http.max_window)",
	       "its message");
	is_int(bad, 0, "to is now: blames from");
	free(err);
	err = NULL;
	is_int(query_window_check(INT64_MIN, INT64_MAX, false, 0, names, &bad, &err), 0,
	       "no limit: any window");
	is_int(query_window_check(-86400, 0, false, 86400, names, &bad, &err), 0,
	       "a window of exactly the limit");
	ok(err == NULL, "no message when within");
}

/*
 * A cooling state's percentiles are states that occurred (inverted CDF), whatever the
 * weighting: ten minutes at states 0 x8, 4, 5 have p95 5 (linear interpolation said 4.55).
 */
static void test_state_percentiles(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	static struct channel fan[] = {{FIXTURE_PWM_FAN}};
	const int64_t states[] = {0, 0, 0, 4, 0, 0, 0, 5, 0, 0};
	store_begin(store);
	for (int i = 0; i < 10; i++) {
		struct reading r = {.value = (double)states[i]};
		struct cycle cy = {.ts = FIXTURE_T0 + 60 * i,
				   .boot_id = "b1",
				   .clock = CLOCK_STATE_SYNCED,
				   .n = 1,
				   .channels = fan,
				   .readings = &r};
		store_write_cycle(store, &cy);
	}
	store_commit(store);
	const double pct[] = {90, 99};
	for (int w = 0; w < 2; w++) {
		struct query_params p = {.percentiles = pct,
					 .n_percentiles = 2,
					 .weight = w ? QUERY_WEIGHT_TIME : QUERY_WEIGHT_SAMPLES,
					 .has_from = true,
					 .from = FIXTURE_T0,
					 .has_to = true,
					 .to = FIXTURE_T0 + 600};
		int rc;
		char *j = stats_json(store, &p, &rc);
		is_near(number(j, "cooling/pwm-fan", "p95"), 5, 0,
			"p95 of a state: 5, one that occurred");
		is_near(number(j, "cooling/pwm-fan", "p50"), 0, 0, "p50: 0");
		if (w == 0) { // by time the first minute weighs nothing (no spacing before it)
			is_near(number(j, "cooling/pwm-fan", "p90"), 4, 0,
				"p90: 4 (linear said 4.1)");
		}
		free(j);
	}
	store_close(store);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	struct store *store = fixture_store(rng);
	if (!ok(store != NULL, "store built")) {
		return test_done();
	}
	test_stats(store);
	test_peak(store);
	test_samples(store);
	test_channels(store);
	store_close(store);
	test_empty();
	test_days();
	test_window_check();
	test_state_percentiles();
	return test_done();
}
