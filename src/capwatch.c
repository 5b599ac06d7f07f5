/*
 * Capacitor damage over the store: a replay of raw samples shared by the full recomputation
 * (CLI, HTTP) and the daemon's catch-up, and the daemon's per-cycle running sums.
 */
#include "capwatch.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "stats.h"
#include "timefmt.h"
#include "xalloc.h"

#define STATE_PREFIX    "lifetime/"
#define PERSIST_EVERY_S 3600

static bool is_celsius(const char *unit) {
	return unit && strcmp(unit, "celsius") == 0;
}

/* The stored channel a capacitor's sensor names: a key first, else a label. */
static const struct store_channel *match_channel(const struct store_channel *list, size_t n,
						 const char *sensor) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].ch.key, sensor) == 0) {
			return &list[i];
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (list[i].ch.label && strcmp(list[i].ch.label, sensor) == 0) {
			return &list[i];
		}
	}
	return NULL;
}

/* ---- replay: included cycles and their samples, in time order ---- */

struct cycle_list {
	int64_t *ts; // included cycles, ascending
	size_t n, cap;
	int64_t unsynced; // unsynced cycles seen (excluded unless included)
	bool include_unsynced;
};

static int collect_cycle(void *ctx, const struct store_cycle *c) {
	struct cycle_list *l = ctx;
	if (c->clock == CLOCK_STATE_UNSYNCED) {
		l->unsynced++;
		if (!l->include_unsynced) {
			return 0;
		}
	}
	l->ts = xgrow(l->ts, &l->cap, l->n + 1, sizeof(*l->ts));
	l->ts[l->n++] = c->ts;
	return 0;
}

static int cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The median spacing of consecutive cycles, or @fallback with fewer than two. */
static int64_t median_spacing(const struct cycle_list *l, int64_t fallback) {
	if (l->n < 2) {
		return fallback;
	}
	int64_t *d = xcalloc(l->n - 1, sizeof(*d));
	for (size_t i = 1; i < l->n; i++) {
		d[i - 1] = l->ts[i] - l->ts[i - 1];
	}
	qsort(d, l->n - 1, sizeof(*d), cmp_i64);
	int64_t m = d[(l->n - 2) / 2]; // the lower median: an actual spacing
	free(d);
	return m > 0 ? m : fallback;
}

struct replay_target {
	const struct lifetime_params *p;
	struct lifetime_acc *acc;
	int64_t channel_id; // -1: no channel, only the time advances
	double resolution;
	struct lifetime_spacing *sp; // advanced by the replay past the cycles it already holds
	int64_t cycle_ts;            // the cycle whose sample is expected next
	int64_t cycle_dt;            // its interval, s
	struct lifetime_point *pts;  // optional: collected for percentiles
	size_t n_pts, cap_pts;
	bool collect;
	struct stats_acc *secs; // optional: seconds per stored integer, for percentiles
};

struct replay {
	const struct cycle_list *cycles;
	size_t next;
	struct replay_target *targets;
	size_t n_targets;
};

static void replay_cycle(struct replay *rp, int64_t ts) {
	for (size_t i = 0; i < rp->n_targets; i++) {
		struct replay_target *t = &rp->targets[i];
		if (t->sp->prev_ts != INT64_MIN && ts <= t->sp->prev_ts) {
			continue; // already in this target's persisted sum
		}
		t->cycle_dt = lifetime_spacing_next(t->sp, ts, 0, NULL);
		t->cycle_ts = ts;
	}
}

/*
 * The one place a stored value becomes damage, for the replay and the live update alike.
 * False when the sample is not this part's (before its in-service date).
 */
static bool add_sample(struct replay_target *t, double temp_c) {
	// A part ages from its in-service date on: a sample stands for the cycle_dt before it,
	// and time before that date was its predecessor's.
	if (t->p->in_service >= 0 && t->cycle_ts - t->cycle_dt < t->p->in_service) {
		t->cycle_ts = INT64_MIN;
		return false;
	}
	double dt_h = (double)t->cycle_dt / 3600.0;
	lifetime_acc_add(t->acc, t->p, temp_c, dt_h);
	if (t->collect) {
		t->pts = xgrow(t->pts, &t->cap_pts, t->n_pts + 1, sizeof(*t->pts));
		t->pts[t->n_pts++] = (struct lifetime_point){temp_c, dt_h};
	}
	t->cycle_ts = INT64_MIN; // one sample per cycle
	return true;
}

static void add_secs(struct replay_target *t, int64_t q, int64_t dt_s) {
	if (t->secs && dt_s > 0) {
		stats_add_hist(t->secs, &q, &dt_s, 1, 0);
	}
}

static int replay_sample(void *ctx, const struct store_sample *s) {
	struct replay *rp = ctx;
	while (rp->next < rp->cycles->n && rp->cycles->ts[rp->next] <= s->ts) {
		replay_cycle(rp, rp->cycles->ts[rp->next++]);
	}
	for (size_t i = 0; i < rp->n_targets; i++) {
		struct replay_target *t = &rp->targets[i];
		if (t->channel_id == s->channel_id && t->cycle_ts == s->ts) {
			int64_t dt = t->cycle_dt;
			if (add_sample(t, (double)s->q * t->resolution)) {
				add_secs(t, s->q, dt);
			}
		}
	}
	return 0;
}

static int first_sample(void *ctx, const struct store_sample *s) {
	*(int64_t *)ctx = s->ts;
	return 1; // stop: only the first one is wanted
}

static int64_t floor_hour(int64_t ts) {
	int64_t h = ts / 3600 * 3600;
	return h > ts ? h - 3600 : h;
}

struct rollup_replay {
	struct replay_target *targets;
	size_t n_targets;
	int64_t nominal_s;
	int64_t first_hour; // the earliest rollup used, INT64_MAX = none
};

/* An hour of pruned history: each stored value stands for one nominal interval. */
static int replay_rollup(void *ctx, const struct store_rollup *r) {
	struct rollup_replay *rr = ctx;
	for (size_t i = 0; i < rr->n_targets; i++) {
		struct replay_target *t = &rr->targets[i];
		if (t->channel_id != r->channel_id || t->sp->prev_ts != INT64_MIN) {
			continue; // a resumed sum already holds this time
		}
		for (size_t b = 0; b < r->n_bins; b++) {
			t->cycle_dt = r->bin_count[b] * rr->nominal_s;
			t->cycle_ts = r->hour + 3600; // the values stand for time within the hour
			int64_t dt = t->cycle_dt;
			if (add_sample(t, (double)r->bin_q[b] * t->resolution)) {
				add_secs(t, r->bin_q[b], dt);
			}
		}
		rr->first_hour = r->hour < rr->first_hour ? r->hour : rr->first_hour;
	}
	return 0;
}

struct replay_info {
	int64_t nominal_s;   // median spacing: what a rolled-up value stands for
	int64_t raw_from;    // the first raw sample in the window, INT64_MAX = none
	int64_t rollup_from; // the first hour taken from rollups, INT64_MAX = none
	int64_t rollup_to;   // rollup hours end here (= the hour of raw_from)
};

/*
 * Replays [from, to): whole hours before the first raw sample (pruned by retention) from the
 * hourly rollups, then the included cycles and the samples of the targets' channels.
 * Rollup values stand for the median spacing of the cycles (@fallback_s with fewer than two).
 * The first raw sample stands for nothing: no interval before it is known, and so the figures
 * never depend on which configuration the reader has.
 */
static int replay_run(struct store *store, int64_t from, int64_t to, bool include_unsynced,
		      int64_t fallback_s, struct replay_target *targets, size_t n,
		      struct cycle_list *cycles, struct replay_info *info) {
	*cycles = (struct cycle_list){.include_unsynced = include_unsynced};
	*info = (struct replay_info){.raw_from = INT64_MAX, .rollup_from = INT64_MAX};
	int rc = store_scan_cycles(store, from, to, collect_cycle, cycles);
	if (rc < 0) {
		return rc;
	}
	int64_t nominal = median_spacing(cycles, fallback_s);
	info->nominal_s = nominal;
	int64_t *ids = xcalloc(n + 1, sizeof(*ids));
	size_t n_ids = 0;
	for (size_t i = 0; i < n; i++) {
		targets[i].cycle_ts = INT64_MIN;
		bool seen = targets[i].channel_id < 0;
		for (size_t j = 0; j < n_ids && !seen; j++) {
			seen = ids[j] == targets[i].channel_id;
		}
		if (!seen) {
			ids[n_ids++] = targets[i].channel_id;
		}
	}
	struct replay rp = {
		.cycles = cycles,
		.targets = targets,
		.n_targets = n,
	};
	if (n_ids == 0) { // n_ids == 0 would mean every channel
		goto advance;
	}
	rc = store_scan_samples(store, from, to, NULL, 0, true, first_sample, &info->raw_from);
	if (rc < 0) {
		goto out;
	}
	// Whole hours before the first raw sample were pruned by retention: take their rollups.
	int64_t raw_from = info->raw_from < to ? info->raw_from : to;
	int64_t from_hour = from == INT64_MIN ? INT64_MIN : floor_hour(from);
	from_hour += from_hour < from ? 3600 : 0;
	int64_t to_hour = floor_hour(raw_from);
	if (from_hour < to_hour) {
		struct rollup_replay rr = {targets, n, nominal, INT64_MAX};
		rc = store_scan_rollups(store, from_hour, to_hour, ids, n_ids, replay_rollup, &rr);
		if (rc < 0) {
			goto out;
		}
		if (rr.first_hour != INT64_MAX) {
			info->rollup_from = rr.first_hour;
			info->rollup_to = to_hour;
			// Their cycles carry no temperatures any more: the rollups stand for them.
			size_t k = 0;
			while (k < cycles->n && cycles->ts[k] < raw_from) {
				k++;
			}
			memmove(cycles->ts, cycles->ts + k, (cycles->n - k) * sizeof(*cycles->ts));
			cycles->n -= k;
		}
	}
	rc = store_scan_samples(store, from, to, ids, n_ids, include_unsynced, replay_sample, &rp);
	if (rc < 0) {
		goto out;
	}
advance:
	while (rp.next < cycles->n) {
		replay_cycle(&rp, cycles->ts[rp.next++]);
	}
out:
	free(ids);
	return rc < 0 ? rc : 0;
}

/* ---- full recomputation ---- */

/* What the warnings and the report's span need of the replayed cycles. */
struct history_summary {
	int64_t n, first, last; // cycles replayed (after the rolled-up hours)
	int64_t unsynced;       // unsynced cycles in the window
	int64_t gaps, gap_s, longest;
};

/* The summary of a replayed cycle list: gaps as struct lifetime_spacing sees them. */
static void summarize_list(const struct cycle_list *cycles, struct history_summary *h) {
	*h = (struct history_summary){.n = (int64_t)cycles->n, .unsynced = cycles->unsynced};
	if (cycles->n > 0) {
		h->first = cycles->ts[0];
		h->last = cycles->ts[cycles->n - 1];
	}
	struct lifetime_spacing sp;
	lifetime_spacing_init(&sp);
	for (size_t i = 0; i < cycles->n; i++) {
		int64_t missing;
		lifetime_spacing_next(&sp, cycles->ts[i], 0, &missing);
		if (missing > 0) {
			h->gaps++;
			h->gap_s += missing;
			h->longest = missing > h->longest ? missing : h->longest;
		}
	}
}

/* The time-weighted percentile of seconds per stored integer (lifetime_percentile's rule). */
static double percentile_of(struct stats_acc *secs, double resolution, double pct) {
	stats_seal(secs);
	size_t n;
	const struct stats_bin *bins = stats_bins(secs, &n);
	struct lifetime_point *pts = xcalloc(n ? n : 1, sizeof(*pts));
	for (size_t i = 0; i < n; i++) {
		pts[i] = (struct lifetime_point){(double)bins[i].q * resolution,
						 (double)bins[i].count / 3600.0};
	}
	double v = lifetime_percentile(pts, n, pct);
	free(pts);
	return v;
}

/* ---- the report over merged days: a day of one steady spacing is a histogram ---- */

static int64_t floor_day(int64_t ts) {
	int64_t d = ts / 86400 * 86400;
	return d > ts ? d - 86400 : d;
}

static int64_t ceil_day(int64_t ts) {
	int64_t d = floor_day(ts);
	return d < ts ? d + 86400 : d;
}

struct day_info {
	int64_t day, cycles, first_ts, last_ts;
	int64_t spacing; // the one spacing between its cycles; 0: one cycle; -1: several
};

/* Pass 1: what every included cycle of the window says, raw edges and merged days alike. */
struct cycle_pass {
	struct stats_acc spacing; // between consecutive included cycles
	int64_t n, last, unsynced;
	struct day_info *days;
	size_t n_days, cap_days;
};

static int pass_cycle(void *ctx, const struct store_cycle *c) {
	struct cycle_pass *cp = ctx;
	if (c->clock == CLOCK_STATE_UNSYNCED) {
		cp->unsynced++;
		return 0;
	}
	if (cp->n > 0) {
		int64_t d = c->ts - cp->last;
		stats_add(&cp->spacing, d, c->ts);
	}
	cp->last = c->ts;
	cp->n++;
	return 0;
}

static int pass_day(void *ctx, const struct store_cycle_day *d) {
	struct cycle_pass *cp = ctx;
	cp->unsynced += d->unsynced;
	cp->days = xgrow(cp->days, &cp->cap_days, cp->n_days + 1, sizeof(*cp->days));
	cp->days[cp->n_days++] = (struct day_info){
		.day = d->day,
		.cycles = d->cycles,
		.first_ts = d->first_ts,
		.last_ts = d->last_ts,
		.spacing = d->n_spacings == 0   ? 0
			   : d->n_spacings == 1 ? d->spacing_s[0]
						: -1,
	};
	if (d->cycles == 0) {
		return 0;
	}
	if (cp->n > 0) {
		stats_add(&cp->spacing, d->first_ts - cp->last, d->first_ts);
	}
	stats_add_hist(&cp->spacing, d->spacing_s, d->spacing_count, d->n_spacings, 0);
	cp->last = d->last_ts;
	cp->n += d->cycles;
	return 0;
}

/* The merged rollups of the targets' channels, by day. */
struct day_rows {
	struct day_row {
		int64_t day, channel_id;
		size_t at, n; // bins in q[], count[]
	} * rows;
	size_t n, cap;
	int64_t *q, *count;
	size_t n_bins, cap_q, cap_count;
};

static int keep_day_row(void *ctx, const struct store_rollup *r) {
	struct day_rows *dr = ctx;
	dr->rows = xgrow(dr->rows, &dr->cap, dr->n + 1, sizeof(*dr->rows));
	dr->rows[dr->n++] = (struct day_row){r->hour, r->channel_id, dr->n_bins, r->n_bins};
	if (r->n_bins == 0) { // only unsynced values that day
		return 0;
	}
	dr->q = xgrow(dr->q, &dr->cap_q, dr->n_bins + r->n_bins, sizeof(*dr->q));
	dr->count = xgrow(dr->count, &dr->cap_count, dr->n_bins + r->n_bins, sizeof(*dr->count));
	memcpy(dr->q + dr->n_bins, r->bin_q, r->n_bins * sizeof(*dr->q));
	memcpy(dr->count + dr->n_bins, r->bin_count, r->n_bins * sizeof(*dr->count));
	dr->n_bins += r->n_bins;
	return 0;
}

/* Pass 2 state: the report's cycles as struct lifetime_spacing sees them. */
struct chain {
	struct lifetime_spacing sp; // every target's spacing equals this one in a report
	struct history_summary *h;
};

static void chain_cycle(struct chain *c, int64_t ts) {
	int64_t missing;
	lifetime_spacing_next(&c->sp, ts, 0, &missing);
	if (missing > 0) {
		c->h->gaps++;
		c->h->gap_s += missing;
		c->h->longest = missing > c->h->longest ? missing : c->h->longest;
	}
	c->h->first = c->h->n == 0 ? ts : c->h->first;
	c->h->last = ts;
	c->h->n++;
}

/* Replays the raw cycles and samples of [a, b), as replay_run() does. */
static int replay_piece(struct store *store, int64_t a, int64_t b, struct replay_target *targets,
			size_t n, const int64_t *ids, size_t n_ids, struct chain *c) {
	if (a >= b) {
		return 0;
	}
	struct cycle_list l = {.include_unsynced = false};
	int rc = store_scan_cycles(store, a, b, collect_cycle, &l);
	struct replay rp = {.cycles = &l, .targets = targets, .n_targets = n};
	if (rc == 0) {
		rc = store_scan_samples(store, a, b, ids, n_ids, false, replay_sample, &rp);
	}
	while (rc == 0 && rp.next < l.n) {
		replay_cycle(&rp, l.ts[rp.next++]);
	}
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		chain_cycle(c, l.ts[i]);
	}
	free(l.ts);
	return rc;
}

/* True when every target's part was in service from @ts on (or has no in-service date). */
static bool in_service_from(const struct replay_target *targets, size_t n, int64_t ts) {
	for (size_t i = 0; i < n; i++) {
		if (targets[i].p->in_service >= 0 && targets[i].p->in_service > ts) {
			return false;
		}
	}
	return true;
}

/*
 * A merged day whose included cycles all follow the previous one by the same spacing s, the
 * first one too and not as a gap: struct lifetime_spacing gives each of its samples exactly
 * s seconds, so a value counted k times stands for k * s. False for any other day.
 */
static bool steady_day(const struct chain *c, const struct day_info *d, int64_t *s) {
	if (d->cycles == 0 || d->spacing < 0 || c->sp.prev_ts == INT64_MIN) {
		return false;
	}
	int64_t entry = d->first_ts - c->sp.prev_ts;
	*s = d->spacing == 0 ? entry : d->spacing;
	return entry == *s && *s > 0 &&
	       !(c->sp.prev_spacing > 0 && *s * 2 > c->sp.prev_spacing * 3);
}

/*
 * The report's replay (unsynced cycles left out) over the merged days of the store's daily
 * level: the same figures as replay_run() (sums over temperatures, so equal up to the
 * rounding of the sums), reading a steady day's histograms instead of its samples and
 * replaying raw only the edges, the other days and what follows the merged days.
 * Returns 1 (nothing done) when the window holds no merged day.
 */
static int replay_days(struct store *store, int64_t from, int64_t to, int64_t fallback_s,
		       struct replay_target *targets, size_t n, struct history_summary *h,
		       struct replay_info *info) {
	*h = (struct history_summary){0};
	*info = (struct replay_info){.raw_from = INT64_MAX, .rollup_from = INT64_MAX};
	int64_t day_horizon = 0;
	bool open_from = from == INT64_MIN;
	if (n == 0 || from == INT64_MIN || to == INT64_MAX) {
		// open ends: the stored span decides
		int64_t first = INT64_MIN, last = INT64_MAX;
		struct store_info si;
		if (store_info(store, &si) < 0 || si.cycles == 0) {
			return 1;
		}
		first = si.first_cycle;
		last = si.last_cycle + 1;
		from = from < first ? first : from;
		to = to > last ? last : to;
	}
	if (store_day_horizon(store, &day_horizon) < 0) {
		return 1;
	}
	int64_t d0 = ceil_day(from), d1 = floor_day(to);
	d1 = d1 < day_horizon ? d1 : day_horizon;
	if (n == 0 || d0 >= d1) {
		return 1;
	}
	int64_t *ids = xcalloc(n, sizeof(*ids));
	size_t n_ids = 0;
	for (size_t i = 0; i < n; i++) {
		targets[i].cycle_ts = INT64_MIN;
		bool seen = false;
		for (size_t j = 0; j < n_ids && !seen; j++) {
			seen = ids[j] == targets[i].channel_id;
		}
		if (!seen) {
			ids[n_ids++] = targets[i].channel_id;
		}
	}
	struct cycle_pass cp = {0};
	struct day_rows dr = {0};
	stats_init(&cp.spacing);
	int rc = store_scan_cycles(store, from, d0, pass_cycle, &cp);
	rc = rc < 0 ? rc : store_scan_cycle_days(store, d0, d1, pass_day, &cp);
	rc = rc < 0 ? rc : store_scan_cycles(store, d1, to, pass_cycle, &cp);
	if (rc < 0) {
		goto out;
	}
	h->unsynced = cp.unsynced;
	// The lower median spacing, as median_spacing() picks it.
	info->nominal_s = fallback_s;
	stats_seal(&cp.spacing);
	if (cp.n >= 2) {
		size_t nb;
		const struct stats_bin *b = stats_bins(&cp.spacing, &nb);
		int64_t want = (cp.n - 2) / 2, seen = 0;
		for (size_t i = 0; i < nb; i++) {
			seen += b[i].count;
			if (seen > want) {
				info->nominal_s = b[i].q > 0 ? b[i].q : fallback_s;
				break;
			}
		}
	}
	rc = store_scan_samples(store, from, to, NULL, 0, true, first_sample, &info->raw_from);
	if (rc < 0) {
		goto out;
	}
	// Whole hours before the first raw sample were pruned: their rollups, as replay_run().
	int64_t raw_from = info->raw_from < to ? info->raw_from : to;
	int64_t from_hour = open_from ? INT64_MIN : floor_hour(from);
	from_hour += from_hour < from ? 3600 : 0;
	int64_t to_hour = floor_hour(raw_from), chain_from = from;
	if (from_hour < to_hour) {
		struct rollup_replay rr = {targets, n, info->nominal_s, INT64_MAX};
		if ((rc = store_scan_rollups(store, from_hour, to_hour, ids, n_ids, replay_rollup,
					     &rr)) < 0) {
			goto out;
		}
		if (rr.first_hour != INT64_MAX) {
			info->rollup_from = rr.first_hour;
			info->rollup_to = to_hour;
			chain_from = raw_from; // the rollups stand for the cycles before
		}
	}
	int64_t e0 = ceil_day(chain_from) > d0 ? ceil_day(chain_from) : d0;
	struct chain c = {.h = h};
	lifetime_spacing_init(&c.sp);
	if (e0 >= d1) {
		rc = replay_piece(store, chain_from, to, targets, n, ids, n_ids, &c);
		goto out;
	}
	if ((rc = store_scan_rollup_days(store, e0, d1, ids, n_ids, keep_day_row, &dr)) < 0 ||
	    (rc = replay_piece(store, chain_from, e0, targets, n, ids, n_ids, &c)) < 0) {
		goto out;
	}
	size_t row = 0;
	for (size_t k = 0; k < cp.n_days && rc == 0; k++) {
		const struct day_info *d = &cp.days[k];
		if (d->day < e0) {
			continue;
		}
		while (row < dr.n && dr.rows[row].day < d->day) {
			row++;
		}
		int64_t s;
		// A day whose samples all stand for time in service; otherwise sample by sample.
		if (!steady_day(&c, d, &s) || !in_service_from(targets, n, d->first_ts - s)) {
			rc = replay_piece(store, d->day, d->day + 86400, targets, n, ids, n_ids,
					  &c);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			struct replay_target *t = &targets[i];
			*t->sp = (struct lifetime_spacing){d->last_ts, s, s};
			for (size_t r = row; r < dr.n && dr.rows[r].day == d->day; r++) {
				if (dr.rows[r].channel_id != t->channel_id) {
					continue;
				}
				for (size_t b = dr.rows[r].at; b < dr.rows[r].at + dr.rows[r].n;
				     b++) {
					int64_t dt = dr.count[b] * s;
					add_secs(t, dr.q[b], dt);
					lifetime_acc_add_n(t->acc, t->p,
							   (double)dr.q[b] * t->resolution,
							   (double)dt / 3600.0, dr.count[b]);
				}
			}
		}
		c.sp = (struct lifetime_spacing){d->last_ts, s, s};
		h->first = h->n == 0 ? d->first_ts : h->first;
		h->last = d->last_ts;
		h->n += d->cycles;
	}
	if (rc == 0) {
		rc = replay_piece(store, d1, to, targets, n, ids, n_ids, &c);
	}
out:
	stats_finish(&cp.spacing);
	free(cp.days);
	free(dr.rows);
	free(dr.q);
	free(dr.count);
	free(ids);
	return rc < 0 ? rc : 0;
}

static void history_warnings(struct lifetime_report_entry *e, const struct history_summary *h,
			     const struct replay_info *info, bool include_unsynced) {
	int64_t nominal_s = info->nominal_s;
	if (info->rollup_from != INT64_MAX) {
		char iso[TIMEFMT_ISO_LEN];
		timefmt_iso(info->rollup_to, iso);
		lifetime_warn(
			&e->r, LIFETIME_WARN_HISTORY_TRIMMED,
			"raw samples before %s were pruned by the raw retention: the %.0f h "
			"before come from hourly rollups, where each value counts one %" PRId64
			" s interval and gaps inside an hour are not visible",
			iso, (info->rollup_to - info->rollup_from) / 3600.0, nominal_s);
	}
	int64_t gaps = h->gaps, gap_s = h->gap_s, longest = h->longest;
	if (gaps > 0) {
		lifetime_warn(&e->r, LIFETIME_WARN_DATA_GAPS,
			      "%" PRId64
			      " gap%s in the data totalling %.1f h (longest %.1f h): gap "
			      "time is not counted as observed; the part aged meanwhile at an "
			      "unknown temperature",
			      gaps, gaps == 1 ? "" : "s", gap_s / 3600.0, longest / 3600.0);
	}
	if (h->unsynced > 0) {
		if (include_unsynced) {
			lifetime_warn(&e->r, LIFETIME_WARN_UNSYNCED,
				      "%" PRId64
				      " cycles with an unsynchronized clock are included; "
				      "their time stamps may be wrong",
				      h->unsynced);
		} else {
			lifetime_warn(&e->r, LIFETIME_WARN_UNSYNCED,
				      "%" PRId64
				      " cycles with an unsynchronized clock were left out "
				      "(--include-unsynced keeps them)",
				      h->unsynced);
		}
	}
	double obs = e->r.observed_h;
	if (obs > 0 && obs < LIFETIME_HOURS_PER_YEAR) {
		lifetime_warn(&e->r, LIFETIME_WARN_SHORT_HISTORY,
			      "projected from %.1f days of data, assuming they repeat: seasons and "
			      "load changes outside them are not captured",
			      obs / 24);
	}
}

void lifetime_report_finish(struct lifetime_report *rep) {
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->entries[i].sensor_key);
	}
	free(rep->entries);
	*rep = (struct lifetime_report){0};
}

int lifetime_report_compute(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			    bool include_unsynced, int64_t now, struct lifetime_report *rep,
			    char **err) {
	*rep = (struct lifetime_report){0};
	if (from == 0) {
		from = INT64_MIN;
	}
	if (to == 0) {
		to = INT64_MAX;
	}
	if (from >= to) {
		*err = xstrdup("the window is empty: --from must be before --to");
		return -EINVAL;
	}
	struct store_channel *chans = NULL;
	size_t n_chans = 0;
	int rc = store_channels(store, &chans, &n_chans);
	if (rc < 0) {
		*err = xasprintf("could not read the channel list: %s", strerror(-rc));
		return rc;
	}
	size_t n = cfg->n_capacitors;
	rep->n = n;
	rep->entries = xcalloc(n ? n : 1, sizeof(*rep->entries));
	struct lifetime_params *params = xcalloc(n ? n : 1, sizeof(*params));
	struct lifetime_acc *accs = xcalloc(n ? n : 1, sizeof(*accs));
	struct lifetime_spacing *spacing = xcalloc(n ? n : 1, sizeof(*spacing));
	struct replay_target *targets = xcalloc(n ? n : 1, sizeof(*targets));
	struct stats_acc *secs = xcalloc(n ? n : 1, sizeof(*secs));
	size_t n_targets = 0;
	size_t *target_of = xcalloc(n ? n : 1, sizeof(*target_of));
	char **problems = xcalloc(n ? n : 1, sizeof(*problems));
	enum lifetime_warning_code *problem_code = xcalloc(n ? n : 1, sizeof(*problem_code));

	for (size_t i = 0; i < n; i++) {
		const struct capacitor_config *cc = &cfg->capacitors[i];
		struct lifetime_report_entry *e = &rep->entries[i];
		e->cc = cc;
		target_of[i] = SIZE_MAX;
		lifetime_acc_init(&accs[i]);
		lifetime_spacing_init(&spacing[i]);
		char *perr = NULL;
		if (!lifetime_params_init(&params[i], cc, &perr)) {
			problems[i] = perr;
			problem_code[i] = LIFETIME_WARN_INVALID;
			e->sensor_key = xstrdup(cc->sensor);
			continue;
		}
		const struct store_channel *ch = match_channel(chans, n_chans, cc->sensor);
		e->sensor_key = xstrdup(ch ? ch->ch.key : cc->sensor);
		if (!ch) {
			problems[i] = xasprintf(
				"sensor '%s' matches no stored channel key or label", cc->sensor);
			problem_code[i] = LIFETIME_WARN_SENSOR;
			continue;
		}
		if (!is_celsius(ch->ch.unit)) {
			problems[i] = xasprintf("sensor '%s' is not a temperature (unit %s)",
						ch->ch.key, ch->ch.unit ? ch->ch.unit : "none");
			problem_code[i] = LIFETIME_WARN_NOT_TEMPERATURE;
			continue;
		}
		target_of[i] = n_targets;
		targets[n_targets++] = (struct replay_target){
			.p = &params[i],
			.acc = &accs[i],
			.channel_id = ch->id,
			.resolution = ch->ch.resolution,
			.sp = &spacing[i],
			.collect = true,
		};
	}

	struct replay_info info;
	struct history_summary hist;
	int64_t fallback_s = cfg->interval_ms >= 1000 ? cfg->interval_ms / 1000 : 60;
	// Seconds per stored integer: the p95 over histograms as over single samples.
	for (size_t i = 0; i < n_targets; i++) {
		targets[i].collect = false;
		targets[i].secs = &secs[i];
		stats_init(&secs[i]);
	}
	rc = include_unsynced
		     ? 1
		     : replay_days(store, from, to, fallback_s, targets, n_targets, &hist, &info);
	if (rc == 1) { // no merged days in the window: every cycle and sample
		struct cycle_list cycles;
		rc = replay_run(store, from, to, include_unsynced, fallback_s, targets, n_targets,
				&cycles, &info);
		summarize_list(&cycles, &hist);
		free(cycles.ts);
	}
	rep->interval_s = info.nominal_s;
	if (rc < 0) {
		*err = xasprintf("could not read the stored history: %s", strerror(-rc));
		goto out;
	}
	if (hist.n > 0) {
		rep->from = hist.first;
		rep->to = hist.last;
	}
	if (info.rollup_from != INT64_MAX) {
		rep->from = info.rollup_from;
		rep->to = hist.n > 0 ? rep->to : info.rollup_to;
	}
	double span_h = (double)(rep->to - rep->from) / 3600.0;

	for (size_t i = 0; i < n; i++) {
		struct lifetime_report_entry *e = &rep->entries[i];
		if (problems[i]) {
			e->r = (struct lifetime_result){0};
			e->r.consumed_fraction = e->r.life_h = e->r.remaining_h = NAN;
			e->r.equivalent_temp_c = e->r.life_at_mean_temp_h = NAN;
			e->r.life_uncapped_h = e->r.mean_temp_c = NAN;
			e->r.self_heating_k = e->r.consumed_total = NAN;
			e->r.service_h = e->r.unobserved_service_h = NAN;
			for (int k = 0; k < LIFETIME_N_RELATIVE; k++) {
				e->r.relative[k] = (struct lifetime_relative){10.0 * k, NAN, NAN};
			}
		} else {
			lifetime_summarize(&params[i], &accs[i], now, &e->r);
		}
		if (problems[i]) {
			lifetime_warn(&e->r, problem_code[i], "%s", problems[i]);
		}
		e->coverage = span_h > 0 && !problems[i] ? e->r.observed_h / span_h : NAN;
		e->p95_temp_c = e->life_at_p95_temp_h = NAN;
		// A lone sample stands for no time: no p95 life beside a no_data warning.
		if (target_of[i] != SIZE_MAX && e->r.observed_h > 0) {
			struct replay_target *t = &targets[target_of[i]];
			e->p95_temp_c = percentile_of(t->secs, t->resolution, 95);
			e->life_at_p95_temp_h = lifetime_life_at(&params[i], e->p95_temp_c);
		}
		if (!problems[i]) {
			history_warnings(e, &hist, &info, include_unsynced);
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < n_targets; i++) {
		free(targets[i].pts);
		stats_finish(&secs[i]);
	}
	free(secs);
	for (size_t i = 0; i < n; i++) {
		free(problems[i]);
	}
	free(problems);
	free(problem_code);
	free(target_of);
	free(targets);
	free(spacing);
	free(accs);
	free(params);
	store_channels_free(chans, n_chans);
	if (rc < 0) {
		lifetime_report_finish(rep);
	}
	return rc;
}

void lifetime_report_write_json(const struct lifetime_report *rep, struct json *out) {
	json_object_begin(out);
	json_key(out, "capacitors");
	json_array_begin(out);
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_report_entry *e = &rep->entries[i];
		const struct lifetime_result *r = &e->r;
		json_object_begin(out);
		json_key(out, "name");
		json_string(out, e->cc->name);
		json_key(out, "sensor");
		json_string(out, e->sensor_key);
		json_key(out, "basis");
		json_string(out, temp_basis_name(e->cc->basis));
		json_key(out, "observed_h");
		json_double(out, r->observed_h);
		json_key(out, "coverage");
		json_double(out, e->coverage);
		json_key(out, "consumed_fraction");
		json_double(out, r->consumed_fraction);
		json_key(out, "effective_life_h");
		json_double(out, r->life_h);
		json_key(out, "life_uncapped_h");
		json_double(out, r->life_uncapped_h);
		json_key(out, "equivalent_temp_c");
		json_double(out, r->equivalent_temp_c);
		json_key(out, "mean_temp_c");
		json_double(out, r->mean_temp_c);
		json_key(out, "life_at_mean_temp_h");
		json_double(out, r->life_at_mean_temp_h);
		json_key(out, "p95_temp_c");
		json_double(out, e->p95_temp_c);
		json_key(out, "life_at_p95_temp_h");
		json_double(out, e->life_at_p95_temp_h);
		json_key(out, "remaining_h");
		json_double(out, r->remaining_h);
		json_key(out, "capped");
		json_bool(out, r->capped);
		// The cap itself, so a reader can bound the relative lives (which are uncapped).
		double cap_y = isnan(e->cc->life_cap_years) ? LIFETIME_DEFAULT_CAP_Y
							    : e->cc->life_cap_years;
		json_key(out, "life_cap_h");
		json_double(out, cap_y * LIFETIME_HOURS_PER_YEAR);
		json_key(out, "warnings");
		json_array_begin(out);
		for (size_t k = 0; k < r->n_warnings; k++) {
			json_object_begin(out);
			json_key(out, "code");
			json_string(out, lifetime_warning_name(r->warnings[k].code));
			json_key(out, "message");
			json_string(out, r->warnings[k].message);
			json_object_end(out);
		}
		json_array_end(out);
		json_key(out, "relative_lifetime");
		json_array_begin(out);
		for (int k = 0; k < LIFETIME_N_RELATIVE; k++) {
			json_object_begin(out);
			json_key(out, "reduction_k");
			json_double(out, r->relative[k].reduction_k);
			json_key(out, "factor");
			json_double(out, r->relative[k].factor);
			json_key(out, "life_h");
			json_double(out, r->relative[k].life_h);
			json_object_end(out);
		}
		json_array_end(out);
		// The temperatures the model used: measured + self-heating (the core estimate).
		json_key(out, "self_heating_k");
		json_double(out, r->self_heating_k);
		json_key(out, "equivalent_effective_temp_c");
		json_double(out, r->equivalent_temp_c + r->self_heating_k);
		json_key(out, "mean_effective_temp_c");
		json_double(out, r->mean_temp_c + r->self_heating_k);
		json_key(out, "p95_effective_temp_c");
		json_double(out, e->p95_temp_c + r->self_heating_k);
		json_key(out, "in_service");
		if (e->cc->in_service >= 0) {
			char iso[TIMEFMT_ISO_LEN];
			timefmt_iso(e->cc->in_service, iso);
			json_string(out, iso);
		} else {
			json_null(out);
		}
		json_key(out, "unobserved_service_h");
		json_double(out, r->unobserved_service_h);
		json_key(out, "consumed_fraction_extrapolated");
		json_double(out, r->consumed_extrapolated);
		json_key(out, "consumed_fraction_total");
		json_double(out, r->consumed_total);
		json_key(out, "past_estimated_life");
		json_bool(out, r->past_life);
		json_object_end(out);
	}
	json_array_end(out);
	json_object_end(out);
}

int lifetime_report_json(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			 bool include_unsynced, int64_t now, struct json *out, char **err) {
	struct lifetime_report rep;
	int rc = lifetime_report_compute(store, cfg, from, to, include_unsynced, now, &rep, err);
	if (rc < 0) {
		return rc;
	}
	lifetime_report_write_json(&rep, out);
	lifetime_report_finish(&rep);
	return 0;
}

/* ---- the daemon's running sums ---- */

struct watched {
	const struct capacitor_config *cc; // borrowed
	struct lifetime_params p;
	char *state_key;
	char *fingerprint;
	struct lifetime_acc acc;
	struct lifetime_spacing sp; // the cycles added so far
	size_t hint;                // index of the sensor in the last cycle's channels
};

struct capwatch {
	const struct config *cfg;
	struct store *store;
	int64_t fallback_s; // the configured interval, for rollups when no spacing is known
	struct watched *caps;
	size_t n;
	int64_t last_persist; // s since epoch, 0 = never
	bool dirty;
	int64_t generation; // store_history_generation() the sums were built on
};

static char *state_text(const struct watched *w, int64_t generation) {
	struct buf b;
	buf_init(&b);
	buf_printf(&b, "%s\nlast=%" PRId64 " spacing=%" PRId64 " dt=%" PRId64 " gen=%" PRId64 "\n",
		   w->fingerprint, w->sp.prev_ts, w->sp.prev_spacing, w->sp.prev_dt, generation);
	lifetime_acc_format(&w->acc, &b);
	return buf_steal(&b);
}

/*
 * Restores a persisted state written for the same rating over the same stored history (no import
 * since: @generation); false leaves @w fresh.
 */
static bool state_restore(struct watched *w, const char *text, int64_t generation) {
	size_t fp_len = strlen(w->fingerprint);
	if (strncmp(text, w->fingerprint, fp_len) != 0 || strncmp(text + fp_len, "\nlast=", 6)) {
		return false;
	}
	long long last, spacing, dt, gen;
	int used = 0;
	if (sscanf(text + fp_len + 6, "%lld spacing=%lld dt=%lld gen=%lld\n%n", &last, &spacing,
		   &dt, &gen, &used) != 4 ||
	    used == 0 || gen != generation) {
		return false;
	}
	struct lifetime_acc acc;
	if (!lifetime_acc_parse(&acc, text + fp_len + 6 + used)) {
		return false;
	}
	w->acc = acc;
	w->sp = (struct lifetime_spacing){last, spacing, dt};
	return true;
}

/* Adds the stored cycles after each capacitor's last counted one (all of them when fresh). */
static int catch_up(struct capwatch *cw) {
	struct store *store = cw->store;
	struct store_channel *chans = NULL;
	size_t n_chans = 0;
	int rc = store_channels(store, &chans, &n_chans);
	if (rc < 0) {
		log_error("lifetime: could not read the channel list: %s", strerror(-rc));
		return rc;
	}
	struct replay_target *targets = xcalloc(cw->n ? cw->n : 1, sizeof(*targets));
	int64_t from = INT64_MAX;
	for (size_t i = 0; i < cw->n; i++) {
		struct watched *w = &cw->caps[i];
		const struct store_channel *ch = match_channel(chans, n_chans, w->cc->sensor);
		if (ch && !is_celsius(ch->ch.unit)) {
			log_warn("capacitor %s: sensor %s is not a temperature (unit %s)",
				 w->cc->name, ch->ch.key, ch->ch.unit ? ch->ch.unit : "none");
			ch = NULL;
		}
		targets[i] = (struct replay_target){
			.p = &w->p,
			.acc = &w->acc,
			.channel_id = ch ? ch->id : -1,
			.resolution = ch ? ch->ch.resolution : 0,
			.sp = &w->sp,
		};
		int64_t start = w->sp.prev_ts == INT64_MIN ? INT64_MIN : w->sp.prev_ts + 1;
		from = start < from ? start : from;
	}
	store_channels_free(chans, n_chans);
	if (cw->n > 0 && from != INT64_MAX) {
		struct cycle_list cycles;
		struct replay_info info;
		rc = replay_run(store, from, INT64_MAX, false, cw->fallback_s, targets, cw->n,
				&cycles, &info);
		free(cycles.ts);
		if (rc < 0) {
			log_error("lifetime: could not catch up from the stored history: %s",
				  strerror(-rc));
			free(targets);
			return rc;
		}
		if (cycles.n > 0) {
			cw->dirty = true;
			log_info("lifetime: caught up %zu stored cycles", cycles.n);
		}
	}
	free(targets);
	return 0;
}

struct capwatch *capwatch_create(const struct config *cfg, struct store *store) {
	struct capwatch *cw = xcalloc(1, sizeof(*cw));
	cw->cfg = cfg;
	cw->store = store;
	cw->fallback_s = cfg->interval_ms >= 1000 ? cfg->interval_ms / 1000 : 60;
	cw->caps = xcalloc(cfg->n_capacitors ? cfg->n_capacitors : 1, sizeof(*cw->caps));
	if (store_history_generation(store, &cw->generation) < 0) {
		log_error("lifetime: could not read the stored history's generation");
		capwatch_destroy(cw);
		return NULL;
	}
	for (size_t i = 0; i < cfg->n_capacitors; i++) {
		const struct capacitor_config *cc = &cfg->capacitors[i];
		struct watched *w = &cw->caps[cw->n];
		char *err = NULL;
		if (!lifetime_params_init(&w->p, cc, &err)) {
			log_error("capacitor %s: %s; not tracked", cc->name, err);
			free(err);
			continue;
		}
		w->cc = cc;
		w->state_key = xasprintf(STATE_PREFIX "%s", cc->name);
		struct buf fp;
		buf_init(&fp);
		buf_printf(&fp, "sensor=%s ", cc->sensor);
		lifetime_params_fingerprint(&w->p, &fp);
		w->fingerprint = buf_steal(&fp);
		lifetime_acc_init(&w->acc);
		lifetime_spacing_init(&w->sp);
		cw->n++;
		char *saved = NULL;
		int rc = store_state_get(store, w->state_key, &saved);
		if (rc == 0 && saved && !state_restore(w, saved, cw->generation)) {
			log_info(
				"capacitor %s: saved damage was for another rating, sensor or stored "
				"history (an import since); recomputing from the stored history",
				cc->name);
		}
		free(saved);
	}

	if (catch_up(cw) < 0) {
		capwatch_destroy(cw);
		return NULL;
	}
	return cw;
}

/* The reading of @sensor (key, else label) in @cycle, by the hinted index first. */
static const struct reading *find_reading(const struct cycle *cycle, const char *sensor,
					  size_t *hint, const struct channel **ch) {
	if (*hint < cycle->n && strcmp(cycle->channels[*hint].key, sensor) == 0) {
		*ch = &cycle->channels[*hint];
		return &cycle->readings[*hint];
	}
	for (int by_label = 0; by_label < 2; by_label++) {
		for (size_t i = 0; i < cycle->n; i++) {
			const char *name =
				by_label ? cycle->channels[i].label : cycle->channels[i].key;
			if (name && strcmp(name, sensor) == 0) {
				*hint = i;
				*ch = &cycle->channels[i];
				return &cycle->readings[i];
			}
		}
	}
	return NULL;
}

/* An import changed older history: start the sums again from the whole stored history. */
static void recompute_if_changed(struct capwatch *cw) {
	int64_t gen;
	if (store_history_generation(cw->store, &gen) < 0 || gen == cw->generation) {
		return;
	}
	for (size_t i = 0; i < cw->n; i++) {
		lifetime_acc_init(&cw->caps[i].acc);
		lifetime_spacing_init(&cw->caps[i].sp);
	}
	cw->generation = gen;
	cw->dirty = true;
	cw->last_persist = 0; // save the new sums at once
	log_info("lifetime: the stored history changed (an import); recomputing the damage");
	if (catch_up(cw) < 0) {
		cw->generation = gen - 1; // try again with the next cycle
	}
}

void capwatch_update(struct capwatch *cw, const struct cycle *cycle) {
	if (!cw) {
		return;
	}
	recompute_if_changed(cw);
	if (cycle->clock == CLOCK_STATE_UNSYNCED) {
		return; // left out of the history by default, so out of the running sum too
	}
	for (size_t i = 0; i < cw->n; i++) {
		struct watched *w = &cw->caps[i];
		if (w->sp.prev_ts != INT64_MIN && cycle->ts <= w->sp.prev_ts) {
			continue; // counted by the catch-up already
		}
		struct replay_target t = {
			.p = &w->p, .acc = &w->acc, .sp = &w->sp, .cycle_ts = cycle->ts};
		t.cycle_dt = lifetime_spacing_next(&w->sp, cycle->ts, 0, NULL);
		cw->dirty = true;
		const struct channel *ch = NULL;
		const struct reading *rd = find_reading(cycle, w->cc->sensor, &w->hint, &ch);
		if (!rd || rd->err != 0 || !is_celsius(ch->unit) || !(ch->resolution > 0)) {
			continue;
		}
		// Quantized exactly as the store keeps it, so the replay sees the same value.
		double temp_c = (double)llround(rd->value / ch->resolution) * ch->resolution;
		add_sample(&t, temp_c);
	}
}

int capwatch_persist(struct capwatch *cw, int64_t now) {
	if (!cw || !cw->dirty ||
	    (cw->last_persist != 0 && now - cw->last_persist < PERSIST_EVERY_S)) {
		return 0;
	}
	int rc = store_begin(cw->store);
	if (rc < 0) {
		return rc;
	}
	for (size_t i = 0; i < cw->n; i++) {
		char *text = state_text(&cw->caps[i], cw->generation);
		rc = store_state_set(cw->store, cw->caps[i].state_key, text);
		free(text);
		if (rc < 0) {
			store_rollback(cw->store);
			log_warn("lifetime: could not save the running damage: %s", strerror(-rc));
			return rc;
		}
	}
	rc = store_commit(cw->store);
	if (rc < 0) {
		store_rollback(cw->store);
		return rc;
	}
	cw->last_persist = now;
	cw->dirty = false;
	return 0;
}

size_t capwatch_states(struct capwatch *cw, struct capstate *out, size_t max) {
	size_t n = 0;
	for (size_t i = 0; cw && i < cw->n && n < max; i++) {
		const struct watched *w = &cw->caps[i];
		struct lifetime_result r;
		lifetime_summarize(&w->p, &w->acc, w->sp.prev_ts == INT64_MIN ? 0 : w->sp.prev_ts,
				   &r);
		out[n++] = (struct capstate){
			.name = w->cc->name,
			.sensor = w->cc->sensor,
			.consumed_fraction = r.consumed_fraction,
			.remaining_h = r.remaining_h,
			.effective_life_h = r.life_h,
			.observed_h = r.observed_h,
		};
	}
	return n;
}

void capwatch_destroy(struct capwatch *cw) {
	if (!cw) {
		return;
	}
	for (size_t i = 0; i < cw->n; i++) {
		free(cw->caps[i].state_key);
		free(cw->caps[i].fingerprint);
	}
	free(cw->caps);
	free(cw);
}
