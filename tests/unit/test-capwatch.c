/*
 * The daemon's running damage against the full recomputation over the same store: identical
 * bits across gaps, failed readings, unsynced cycles, a crash and a restart, and against an
 * independent long double Miner sum.
 */
#include "capwatch.h"
#include "lifetime-report.h"
#include "store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "log.h"
#include "test.h"

#define T0       1787000000 // 2026-08-17
#define STEP     60
#define N_CYCLES (3 * 1440)

static struct channel channels[] = {
	{FIXTURE_THERMOCOUPLE, .label = "Bulk cap thermocouple"},
	{FIXTURE_SOC_THERMAL, .label = "SoC"}, // a capacitor names it by label
};

static struct capacitor_config cap(const char *name, const char *sensor) {
	struct capacitor_config c;
	config_capacitor_init(&c);
	c.name = (char *)name;
	c.sensor = (char *)sensor;
	c.rated_life_h = 2000;
	c.rated_temp_c = 105;
	return c;
}

/* The history: 3 days, 1-minute cycles with jitter, a 2-hour outage, failed reads, unsynced. */
static bool cycle_exists(int i) {
	return !(i >= 1000 && i < 1120);
}

static int64_t cycle_ts(int i) {
	return T0 + (int64_t)i * STEP + (i % 7 == 3 ? 1 : 0); // jitter of a second now and then
}

static enum clock_state cycle_clock(int i) {
	return i >= 2000 && i < 2010 ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED;
}

static void cycle_values(int i, struct reading r[2]) {
	double day = 2 * M_PI * i / 1440.0;
	r[0] = (struct reading){.value = 55 + 18 * sin(day) + 3 * sin(7.3 * day)};
	r[1] = (struct reading){.value = 62.3456 + 10 * cos(day)};
	if (i % 97 == 5) {
		r[0].err = -EIO; // a failed read stores nothing
	}
}

struct feeder {
	struct store *store;
	struct capwatch *cw; // NULL while the daemon is down
	int next;
};

static void feed(struct feeder *f, int upto) {
	for (; f->next < upto; f->next++) {
		int i = f->next;
		if (!cycle_exists(i)) {
			continue;
		}
		struct reading r[2];
		cycle_values(i, r);
		struct cycle c = {
			.ts = cycle_ts(i),
			.clock = cycle_clock(i),
			.n = 2,
			.channels = channels,
			.readings = r,
		};
		if (store_write_cycle(f->store, &c) < 0) {
			abort();
		}
		if (f->cw) {
			capwatch_update(f->cw, &c);
			capwatch_persist(f->cw, c.ts);
		}
	}
}

/* The Miner sum written out independently: spacing rule and quantization by hand. */
static long double naive_damage(double resolution, int ch, long double *observed_h) {
	long double d = 0;
	int64_t obs_s = 0, prev = 0, prev_spacing = 0, prev_dt = 0;
	bool have_prev = false;
	for (int i = 0; i < N_CYCLES; i++) {
		if (!cycle_exists(i) || cycle_clock(i) == CLOCK_STATE_UNSYNCED) {
			continue;
		}
		int64_t ts = cycle_ts(i), dt = 0; // the first sample: no interval before it
		if (have_prev) {
			int64_t spacing = ts - prev;
			bool gap = prev_spacing > 0 && 2 * spacing > 3 * prev_spacing;
			dt = gap ? prev_dt : spacing;
			prev_spacing = spacing;
		}
		prev = ts;
		prev_dt = dt;
		have_prev = true;
		struct reading r[2];
		cycle_values(i, r);
		if (r[ch].err) {
			continue;
		}
		long double t = (long double)llround(r[ch].value / resolution) * resolution;
		d += (dt / 3600.0L) / (2000.0L * powl(2, (105 - t) / 10));
		obs_s += dt;
	}
	*observed_h = obs_s / 3600.0L;
	return d;
}

static void compare(struct capwatch *cw, struct store *store, const struct config *cfg,
		    const char *when) {
	struct capstate live[4];
	size_t n = capwatch_states(cw, live, 4);
	struct lifetime_report rep;
	char *err = NULL;
	int rc = lifetime_report_compute(store, cfg, INT64_MIN, INT64_MAX, false, 0, &rep, &err);
	is_int(rc, 0, "full recomputation runs");
	is_int(n, rep.n, "one state per capacitor");
	for (size_t i = 0; i < n && i < rep.n; i++) {
		char what[128];
		snprintf(what, sizeof(what), "%s: %s consumed fraction identical", when,
			 live[i].name);
		ok(live[i].consumed_fraction == rep.entries[i].r.consumed_fraction, what);
		if (live[i].consumed_fraction != rep.entries[i].r.consumed_fraction) {
			printf("#   running %.17g\n#   full    %.17g\n", live[i].consumed_fraction,
			       rep.entries[i].r.consumed_fraction);
		}
		snprintf(what, sizeof(what), "%s: %s total consumed (in service) identical", when,
			 live[i].name);
		ok(live[i].consumed_total == rep.entries[i].r.consumed_total ||
			   (isnan(live[i].consumed_total) &&
			    isnan(rep.entries[i].r.consumed_total)),
		   what);
		snprintf(what, sizeof(what), "%s: %s observed time identical", when, live[i].name);
		ok(live[i].observed_h == rep.entries[i].r.observed_h, what);
		snprintf(what, sizeof(what), "%s: %s remaining life identical", when, live[i].name);
		ok(live[i].remaining_h == rep.entries[i].r.remaining_h, what);
		snprintf(what, sizeof(what), "%s: %s effective life identical", when, live[i].name);
		ok(live[i].effective_life_h == rep.entries[i].r.life_h, what);
	}
	free(err);
	lifetime_report_finish(&rep);
}

/* The demo's shape: a backfilled day at 1-minute spacing, then live cycles every 5 s. */
static void test_cadence_change(void) {
	struct store *store = NULL;
	if (store_open(&store, ":memory:", STORE_MODE_WRITE) < 0) {
		ok(false, "second in-memory store");
		return;
	}
	struct capacitor_config caps[] = {cap("C1", "iio/maxim_thermocouple/temp")};
	struct config cfg = {.interval_ms = 5000, .capacitors = caps, .n_capacitors = 1};
	struct capwatch *cw = NULL;
	int64_t ts = T0;
	for (int i = 0; i < 1440 + 720; i++) {
		if (i == 1440) {
			cw = capwatch_create(&cfg, store);
		}
		struct reading r[2];
		cycle_values(i, r);
		struct cycle c = {.ts = ts,
				  .clock = CLOCK_STATE_SYNCED,
				  .n = 2,
				  .channels = channels,
				  .readings = r};
		store_write_cycle(store, &c);
		if (cw) {
			capwatch_update(cw, &c);
			capwatch_persist(cw, c.ts);
		}
		if (i == 1800) { // a restart in the live part
			capwatch_destroy(cw);
			cw = capwatch_create(&cfg, store);
		}
		ts += i < 1440 ? 60 : 5;
	}
	compare(cw, store, &cfg, "backfill then 5 s cycles");
	struct capstate live;
	capwatch_states(cw, &live, 1);
	// Every sample counts its spacing: the first nothing, the 1440 after it a minute (the last
	// backfilled spacing included), then 5 s; failed reads count nothing.
	int64_t want_s = 0;
	for (int i = 0; i < 1440 + 720; i++) {
		if (i % 97 != 5) {
			want_s += i == 0 ? 0 : i <= 1440 ? 60 : 5;
		}
	}
	is_near(live.observed_h, want_s / 3600.0, 1e-15,
		"each sample counts its own spacing across the cadence change");
	capwatch_destroy(cw);
	store_close(store);
}

/* ---- the report over merged days against the raw replay ---- */

#define DAY_S    86400
#define D_CYCLES 11000

/*
 * Six and a half days: steady minutes, a day with a second of jitter now and then, a gap across
 * midnight, one inside a day, half an hour of unsynced cycles (when @unsynced), a change to
 * 30 s cycles mid-day, failed reads. Returns the cycles written.
 */
static int build_days(struct store *store, bool unsynced) {
	int64_t day0 = (T0 / DAY_S + 1) * DAY_S, ts = T0, step = 60;
	int n = 0;
	store_begin(store);
	for (int i = 0; i < D_CYCLES; i++) {
		ts += step;
		if (ts >= day0 + DAY_S && ts < day0 + 2 * DAY_S && i % 13 == 4) {
			ts += 1; // jitter in the second day
		}
		if (i == 1500) {
			ts = day0 + DAY_S - 1200 + 3 * 3600; // gap across midnight
		} else if (i == 4500) {
			ts += 47 * 60; // a gap inside a day
		} else if (i == 6000) {
			step = 30; // the cadence changes mid-day
		}
		struct reading r[2];
		double day = 2 * M_PI * i / 1440.0;
		r[0] = (struct reading){.value = 55 + 18 * sin(day) + 3 * sin(7.3 * day)};
		r[1] = (struct reading){.value = 62.3456 + 10 * cos(day)};
		if (i % 97 == 5) {
			r[0].err = -EIO;
		}
		bool bad_clock =
			unsynced && ts >= day0 + 3 * DAY_S + 3600 && ts < day0 + 3 * DAY_S + 5400;
		struct cycle c = {
			.ts = ts,
			.clock = bad_clock ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED,
			.n = 2,
			.channels = channels,
			.readings = r,
		};
		if (store_write_cycle(store, &c) < 0) {
			abort();
		}
		n++;
	}
	store_commit(store);
	return n;
}

static bool near(double a, double b) {
	return (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* Every figure of @got equals @want within 1e-9 relative; warnings word for word. */
static void same_report(const struct lifetime_report *got, const struct lifetime_report *want,
			const char *what) {
	bool same = got->n == want->n && got->from == want->from && got->to == want->to &&
		    got->interval_s == want->interval_s;
	char why[256] = "span";
	for (size_t i = 0; same && i < got->n; i++) {
		const struct lifetime_report_entry *a = &got->entries[i], *b = &want->entries[i];
		const struct lifetime_result *x = &a->r, *y = &b->r;
		const double pairs[][2] = {
			{x->observed_h, y->observed_h},
			{x->consumed_fraction, y->consumed_fraction},
			{x->life_h, y->life_h},
			{x->life_uncapped_h, y->life_uncapped_h},
			{x->remaining_h, y->remaining_h},
			{x->equivalent_temp_c, y->equivalent_temp_c},
			{x->mean_temp_c, y->mean_temp_c},
			{x->life_at_mean_temp_h, y->life_at_mean_temp_h},
			{x->min_temp_c, y->min_temp_c},
			{x->max_temp_c, y->max_temp_c},
			{x->above_rated_h, y->above_rated_h},
			{x->below_validity_h, y->below_validity_h},
			{a->coverage, b->coverage},
			{a->p95_temp_c, b->p95_temp_c},
			{a->life_at_p95_temp_h, b->life_at_p95_temp_h},
			{x->relative[3].life_h, y->relative[3].life_h},
		};
		for (size_t k = 0; same && k < sizeof(pairs) / sizeof(pairs[0]); k++) {
			same = near(pairs[k][0], pairs[k][1]);
			snprintf(why, sizeof(why), "%s figure %zu: %.17g vs %.17g", a->cc->name, k,
				 pairs[k][0], pairs[k][1]);
		}
		same = same && x->n_warnings == y->n_warnings;
		for (size_t k = 0; same && k < x->n_warnings; k++) {
			same = x->warnings[k].code == y->warnings[k].code &&
			       strcmp(x->warnings[k].message, y->warnings[k].message) == 0;
			snprintf(why, sizeof(why), "%s warning %zu: %.100s | %.100s", a->cc->name,
				 k, x->warnings[k].message, y->warnings[k].message);
		}
	}
	if (!ok(same, what)) {
		printf("#   %s\n", why);
	}
}

static void report(struct store *store, const struct config *cfg, int64_t from, int64_t to,
		   bool unsynced, struct lifetime_report *rep) {
	char *err = NULL;
	if (lifetime_report_compute(store, cfg, from, to, unsynced, 0, rep, &err) < 0) {
		printf("# %s\n", err);
		free(err);
		*rep = (struct lifetime_report){0};
	}
}

static void test_days(void) {
	struct capacitor_config caps[] = {
		cap("C1 bulk", "iio/maxim_thermocouple/temp"),
		cap("C2 polymer", "SoC"),
		cap("C3 rise", "iio/maxim_thermocouple/temp"),
	};
	caps[1].type = CAPACITOR_TYPE_POLYMER;
	caps[1].model = LIFETIME_MODEL_ARRHENIUS;
	caps[1].ea_ev = 0.83;
	caps[2].self_heating = SELF_HEATING_RISE;
	caps[2].rise_k = 4;
	struct config cfg = {.interval_ms = 60000, .capacitors = caps, .n_capacitors = 3};
	struct store *days = NULL, *raw = NULL;
	if (store_open(&days, ":memory:", STORE_MODE_WRITE) < 0 ||
	    store_open(&raw, ":memory:", STORE_MODE_WRITE) < 0) {
		printf("Bail out! cannot open an in-memory store\n");
		exit(1);
	}
	build_days(days, true);
	build_days(raw, true);
	int64_t day0 = (T0 / DAY_S + 1) * DAY_S, end = T0 + 8 * DAY_S, horizon = 0;
	is_int(store_maintain(days, end, 400 * DAY_S), 0, "hours and days merged");
	store_day_horizon(days, &horizon);
	ok(horizon >= day0 + 6 * DAY_S, "six whole days merged");

	// The raw-only store replays every sample: the reference.
	const int64_t win[][2] = {
		{INT64_MIN, INT64_MAX},                          // whole history
		{day0, day0 + 5 * DAY_S},                        // whole days
		{T0 + 3 * 3600 + 17 * 60 + 5, end - 7 * 3600},   // ragged
		{day0 + 2 * DAY_S + 12 * 3600 + 1, INT64_MAX},   // from mid-day, after the jitter
		{day0 + 4 * DAY_S + 600, day0 + 6 * DAY_S - 60}, // across the cadence change
	};
	for (size_t k = 0; k < sizeof(win) / sizeof(win[0]); k++) {
		for (int u = 0; u < 2; u++) {
			struct lifetime_report a, b;
			report(days, &cfg, win[k][0], win[k][1], u, &a);
			report(raw, &cfg, win[k][0], win[k][1], u, &b);
			char what[128];
			snprintf(what, sizeof(what), "merged days = raw replay, window %zu%s", k,
				 u ? " with unsynced" : "");
			same_report(&a, &b, what);
			if (k == 0 && u == 0) {
				ok(a.n == 3 && a.entries[0].r.n_warnings > 0 &&
					   a.entries[0].r.consumed_fraction > 0,
				   "the whole history has damage and warnings (gaps, unsynced)");
			}
			lifetime_report_finish(&a);
			lifetime_report_finish(&b);
		}
	}
	store_close(days);
	store_close(raw);

	// Raw rows pruned: whole hours from rollups at the median spacing, then merged days,
	// the same as the replay of the rollups and raw rows that --include-unsynced takes
	// (no unsynced cycle here, so both leave out the same nothing).
	struct store *pruned = NULL;
	store_open(&pruned, ":memory:", STORE_MODE_WRITE);
	build_days(pruned, false);
	is_int(store_maintain(pruned, end, end - (day0 + 2 * DAY_S + 5 * 3600)), 0,
	       "raw rows of the first days pruned");
	const int64_t mixed[][2] = {
		{INT64_MIN, INT64_MAX},
		{T0 + 1800, day0 + 5 * DAY_S + 3 * 3600 + 1},
		{day0 + DAY_S, INT64_MAX},
	};
	for (size_t k = 0; k < sizeof(mixed) / sizeof(mixed[0]); k++) {
		struct lifetime_report a, b;
		report(pruned, &cfg, mixed[k][0], mixed[k][1], false, &a);
		report(pruned, &cfg, mixed[k][0], mixed[k][1], true, &b);
		char what[128];
		snprintf(what, sizeof(what),
			 "pruned and merged = rollups and raw replay, window %zu", k);
		same_report(&a, &b, what);
		if (k == 0) {
			bool named = false;
			for (size_t w = 0; a.n == 3 && w < a.entries[0].r.n_warnings; w++) {
				named |= a.entries[0].r.warnings[w].code ==
					 LIFETIME_WARN_HISTORY_TRIMMED;
			}
			ok(named, "the pruned hours are named");
		}
		lifetime_report_finish(&a);
		lifetime_report_finish(&b);
	}
	store_close(pruned);
}

/*
 * A measured ripple on an ambient sensor (ripple_from): the daemon pairs each cycle's ambient
 * with its current as the report's replay does, across a failed current read, a crash and a
 * restart, so /metrics equals the report to the bit.
 */
static void test_measured_ripple(void) {
	struct store *store = NULL;
	if (store_open(&store, ":memory:", STORE_MODE_WRITE) < 0) {
		ok(false, "an in-memory store for the measured ripple");
		return;
	}
	struct channel chans[] = {
		{FIXTURE_THERMOCOUPLE, .label = "Bulk cap thermocouple"},
		{.key = "hwmon/ina226/curr1",
		 .source = "hwmon",
		 .kind = CHANNEL_KIND_CURRENT,
		 .unit = "amperes",
		 .resolution = 0.001},
	};
	struct capacitor_config c = cap("C21 buck input", "iio/maxim_thermocouple/temp");
	c.sensors[TEMP_BASIS_AMBIENT] = c.sensor;
	c.sensors_map = true;
	c.self_heating = SELF_HEATING_RIPPLE;
	c.rated_ripple_a = 1.5;
	c.rated_rise_k = 6;
	c.current_a = 0.9;
	c.ripple_from = (struct capacitor_ripple_from){.channel = "hwmon/ina226/curr1",
						       .formula = RIPPLE_FORMULA_BUCK_INPUT,
						       .v_in = 24,
						       .v_out = 5,
						       .k = NAN,
						       .multiplier = NAN};
	struct config cfg = {.interval_ms = 60000, .capacitors = &c, .n_capacitors = 1};
	struct capwatch *cw = NULL;
	for (int i = 0; i < 1500; i++) {
		if (i == 700) { // a crash: the sums so far are caught up again from the store
			capwatch_destroy(cw);
			cw = NULL;
		}
		if (i == 300 || i == 800) {
			cw = capwatch_create(&cfg, store);
		}
		struct reading r[2] = {
			{.value = 45 + 8 * sin(2 * M_PI * i / 1440.0)},
			{.value = (i / 37) % 2 ? 3.2 : 0.4},
		};
		if (i % 53 == 7) {
			r[1].err = -EIO; // no current: the sample does not age the part
		}
		struct cycle cy = {.ts = T0 + (int64_t)i * STEP,
				   .clock = CLOCK_STATE_SYNCED,
				   .n = 2,
				   .channels = chans,
				   .readings = r};
		if (store_write_cycle(store, &cy) < 0) {
			abort();
		}
		capwatch_update(cw, &cy);
	}
	struct capstate live[1];
	size_t n = capwatch_states(cw, live, 1);
	struct lifetime_report rep;
	char *err = NULL;
	int rc = lifetime_report_compute(store, &cfg, INT64_MIN, INT64_MAX, false, 0, &rep, &err);
	ok(rc == 0 && n == 1 && rep.n == 1, "measured ripple: the running sum and the report");
	if (rc == 0 && n == 1) {
		ok(live[0].consumed_fraction == rep.entries[0].r.consumed_fraction &&
			   live[0].observed_h == rep.entries[0].r.observed_h,
		   "measured ripple: the running sum equals the report to the bit");
		ok(rep.entries[0].r.observed_h < 1499 / 60.0 - 20 / 60.0,
		   "a cycle without its current is not observed time");
		ok(isfinite(rep.entries[0].r.consumed_constant_ripple) &&
			   rep.entries[0].r.consumed_constant_ripple !=
				   rep.entries[0].r.consumed_fraction,
		   "the constant current_a's consumed life beside it");
		lifetime_report_finish(&rep);
	}
	free(err);
	capwatch_destroy(cw);
	store_close(store);
}

int main(void) {
	log_init(LOG_LEVEL_ERROR);
	struct store *store = NULL;
	if (store_open(&store, ":memory:", STORE_MODE_WRITE) < 0) {
		printf("Bail out! cannot open an in-memory store\n");
		return 1;
	}
	struct capacitor_config caps[] = {
		cap("C12 bulk", "iio/maxim_thermocouple/temp"),
		cap("C7 near SoC", "SoC"), // matched by label
	};
	caps[1].type = CAPACITOR_TYPE_POLYMER;
	struct config cfg = {.interval_ms = 60000, .capacitors = caps, .n_capacitors = 2};

	// A day of history before the daemon first runs: the first create catches it all up.
	struct feeder f = {.store = store};
	feed(&f, 1440);
	f.cw = capwatch_create(&cfg, store);
	ok(f.cw != NULL, "capwatch created over an existing history");
	compare(f.cw, store, &cfg, "after the first catch-up");

	char *saved = NULL;
	int src = store_state_get(store, "lifetime/C12 bulk", &saved);
	ok((src == 0 || src == -ENOENT) && saved == NULL,
	   "nothing persisted before the first persist call");
	free(saved);
	feed(&f, 1441); // persists at once (first call), then at most hourly
	saved = NULL;
	store_state_get(store, "lifetime/C12 bulk", &saved);
	ok(saved && strstr(saved, "v2 n="), "state persisted");
	feed(&f, 1441 + 30);
	char *later = NULL;
	store_state_get(store, "lifetime/C12 bulk", &later);
	ok(saved && later && strcmp(saved, later) == 0, "not rewritten within the hour");
	free(later);
	feed(&f, 1441 + 61);
	later = NULL;
	store_state_get(store, "lifetime/C12 bulk", &later);
	ok(saved && later && strcmp(saved, later) != 0, "rewritten after an hour");
	free(later);
	free(saved);

	feed(&f, 2500); // through the outage and the unsynced cycles
	compare(f.cw, store, &cfg, "running");

	// A crash: the in-memory sums are lost, the store keeps the cycles written since.
	capwatch_destroy(f.cw);
	f.cw = NULL;
	feed(&f, 2800);
	f.cw = capwatch_create(&cfg, store);
	ok(f.cw != NULL, "restarted after a crash");
	compare(f.cw, store, &cfg, "after the crash catch-up");
	feed(&f, N_CYCLES);
	compare(f.cw, store, &cfg, "at the end");

	long double obs;
	long double d = naive_damage(0.25, 0, &obs);
	struct capstate live[2];
	capwatch_states(f.cw, live, 2);
	is_near(live[0].consumed_fraction, (double)d, 1e-13, "agrees with a plain long double sum");
	is_near(live[0].observed_h, (double)obs, 1e-15, "observed hours by the spacing rule");
	ok(live[0].observed_h < N_CYCLES / 60.0 - 2, "the outage is not observed time");
	ok(strcmp(live[1].sensor, "SoC") == 0, "states name the configured sensor");

	// A changed rating discards the saved sums and recomputes from the whole history.
	capwatch_persist(f.cw, T0 + 10 * 86400);
	capwatch_destroy(f.cw);
	caps[0].rated_life_h = 5000;
	f.cw = capwatch_create(&cfg, store);
	compare(f.cw, store, &cfg, "after a rating change");
	capwatch_states(f.cw, live, 2);
	is_near(live[0].consumed_fraction, (double)d * 2000 / 5000, 1e-13,
		"recomputed for the new rating");
	capwatch_destroy(f.cw);

	// Retention prunes the first day's raw samples; hourly rollups stand for them.
	struct capwatch *kept = capwatch_create(&cfg, store); // from the raw history
	int64_t now = cycle_ts(N_CYCLES - 1) + STEP;
	int64_t cutoff = (T0 + 86400) / 3600 * 3600;
	ok(store_maintain(store, now, now - cutoff) == 0, "roll up and prune the first day");
	struct capstate before[2], after[2];
	capwatch_states(kept, before, 2);
	capwatch_destroy(kept);
	caps[0].rated_life_h = 2500; // no saved state for these ratings: recomputed after pruning
	caps[1].rated_life_h = 4000;
	f.cw = capwatch_create(&cfg, store);
	compare(f.cw, store, &cfg, "after pruning");
	capwatch_states(f.cw, after, 2);
	capwatch_destroy(f.cw);
	is_near(after[0].consumed_fraction, (double)d * 2000 / 2500, 1e-4,
		"rollups keep the pruned damage");
	is_near(after[0].observed_h, (double)obs, 1e-4, "rollups keep the pruned time");
	is_near(after[1].consumed_fraction, before[1].consumed_fraction / 2, 1e-4,
		"polymer part: rollups agree with the raw history");

	// The report over a window and its JSON
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	char *err = NULL;
	int rc = lifetime_report_json(store, &cfg, T0, T0 + 86400, false, T0 + 86400, &j, &err);
	is_int(rc, 0, "report JSON over one day");
	ok(b.data && strstr(b.data, "\"name\":\"C12 bulk\"") &&
		   strstr(b.data, "\"sensor\":\"thermal/soc-thermal\"") &&
		   strstr(b.data, "\"relative_lifetime\":[{\"reduction_k\":0,\"factor\":1,"),
	   "JSON names, resolved sensor and relative table");
	ok(b.data && strstr(b.data, "\"code\":\"history_trimmed\""), "pruned history reported");
	buf_clear(&b);
	json_init(&j, &b, false);
	rc = lifetime_report_json(store, &cfg, cutoff, INT64_MAX, false, 0, &j, &err);
	ok(rc == 0 && strstr(b.data, "\"code\":\"data_gaps\""), "the outage is reported as a gap");
	buf_clear(&b);
	buf_clear(&b);
	json_init(&j, &b, false);
	rc = lifetime_report_json(store, &cfg, cutoff, INT64_MAX, false, 0, &j, &err);
	ok(rc == 0 && strstr(b.data, "10 cycles with an unsynchronized clock were left out"),
	   "unsynced cycles counted and left out");
	struct lifetime_report with, without;
	lifetime_report_compute(store, &cfg, cutoff, INT64_MAX, false, 0, &without, &err);
	lifetime_report_compute(store, &cfg, cutoff, INT64_MAX, true, 0, &with, &err);
	is_near(with.entries[0].r.observed_h - without.entries[0].r.observed_h, 10.0 / 60,
		1e-3, // ± one second of jitter
		"--include-unsynced adds their ten minutes");
	bool included = false;
	for (size_t k = 0; k < with.entries[0].r.n_warnings; k++) {
		included |= strstr(with.entries[0].r.warnings[k].message, "are included") != NULL;
	}
	ok(included, "included unsynced cycles are warned about");
	lifetime_report_finish(&with);
	lifetime_report_finish(&without);
	buf_clear(&b);
	struct capacitor_config missing = cap("C99", "hwmon/nothing/temp1");
	struct config cfg2 = {.interval_ms = 60000, .capacitors = &missing, .n_capacitors = 1};
	json_init(&j, &b, false);
	rc = lifetime_report_json(store, &cfg2, INT64_MIN, INT64_MAX, false, 0, &j, &err);
	ok(rc == 0 && strstr(b.data, "\"code\":\"sensor_not_found\"") &&
		   strstr(b.data, "\"effective_life_h\":null") &&
		   strstr(b.data, "\"life_uncapped_h\":null") &&
		   strstr(b.data, "\"mean_temp_c\":null") && strstr(b.data, "\"p95_temp_c\":null"),
	   "an unknown sensor is a warning with null figures");
	buf_finish(&b);
	store_close(store);
	test_cadence_change();
	test_days();
	test_measured_ripple();
	return test_done();
}
