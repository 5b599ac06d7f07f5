/* The replay of a capacitor's stored history (capreplay.h). */
#include "capreplay.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "timefmt.h"
#include "xalloc.h"

bool capreplay_is_celsius(const char *unit) {
	return unit && strcmp(unit, "celsius") == 0;
}

/* The stored channel a capacitor's sensor names: a key first, else a label. */
const struct store_channel *capreplay_match_channel(const struct store_channel *list, size_t n,
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

static int collect_cycle(void *ctx, const struct store_cycle *c) {
	struct capreplay_cycles *l = ctx;
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
static int64_t median_spacing(const struct capreplay_cycles *l, int64_t fallback) {
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

struct replay {
	const struct capreplay_cycles *cycles;
	size_t next;
	struct capreplay_target *targets;
	size_t n_targets;
};

static void replay_cycle(struct replay *rp, int64_t ts) {
	for (size_t i = 0; i < rp->n_targets; i++) {
		struct capreplay_target *t = &rp->targets[i];
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
bool capreplay_add_sample(struct capreplay_target *t, double temp_c) {
	// A part ages from its in-service date on: a sample stands for the cycle_dt before it,
	// and time before that date was its predecessor's.
	if (t->p && t->p->in_service >= 0 && t->cycle_ts - t->cycle_dt < t->p->in_service) {
		t->cycle_ts = INT64_MIN;
		return false;
	}
	double dt_h = (double)t->cycle_dt / 3600.0;
	if (t->acc) {
		lifetime_acc_add(t->acc, t->p, temp_c, dt_h);
	}
	if (t->collect) {
		t->pts = xgrow(t->pts, &t->cap_pts, t->n_pts + 1, sizeof(*t->pts));
		t->pts[t->n_pts++] = (struct lifetime_point){temp_c, dt_h};
	}
	t->cycle_ts = INT64_MIN; // one sample per cycle
	return true;
}

static void add_secs(struct capreplay_target *t, int64_t q, int64_t dt_s) {
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
		struct capreplay_target *t = &rp->targets[i];
		if (t->channel_id == s->channel_id && t->cycle_ts == s->ts) {
			int64_t dt = t->cycle_dt;
			if (capreplay_add_sample(t, (double)s->q * t->resolution)) {
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

struct rollup_replay {
	struct capreplay_target *targets;
	size_t n_targets;
	int64_t nominal_s;
	int64_t first_hour; // the earliest rollup used, INT64_MAX = none
};

/* An hour of pruned history: each stored value stands for one nominal interval. */
static int replay_rollup(void *ctx, const struct store_rollup *r) {
	struct rollup_replay *rr = ctx;
	for (size_t i = 0; i < rr->n_targets; i++) {
		struct capreplay_target *t = &rr->targets[i];
		if (t->channel_id != r->channel_id || t->sp->prev_ts != INT64_MIN) {
			continue; // a resumed sum already holds this time
		}
		for (size_t b = 0; b < r->n_bins; b++) {
			t->cycle_dt = r->bin_count[b] * rr->nominal_s;
			t->cycle_ts = r->hour + 3600; // the values stand for time within the hour
			int64_t dt = t->cycle_dt;
			if (capreplay_add_sample(t, (double)r->bin_q[b] * t->resolution)) {
				add_secs(t, r->bin_q[b], dt);
			}
		}
		rr->first_hour = r->hour < rr->first_hour ? r->hour : rr->first_hour;
	}
	return 0;
}

/*
 * Replays [from, to): whole hours before the first raw sample (pruned by retention) from the
 * hourly rollups, then the included cycles and the samples of the targets' channels.
 * Rollup values stand for the median spacing of the cycles (@fallback_s with fewer than two).
 * The first raw sample stands for nothing: no interval before it is known, and so the figures
 * never depend on which configuration the reader has.
 */
int capreplay_run(struct store *store, int64_t from, int64_t to, bool include_unsynced,
		  int64_t fallback_s, struct capreplay_target *targets, size_t n,
		  struct capreplay_cycles *cycles, struct capreplay_info *info) {
	*cycles = (struct capreplay_cycles){.include_unsynced = include_unsynced};
	*info = (struct capreplay_info){.raw_from = INT64_MAX, .rollup_from = INT64_MAX};
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
	int64_t from_hour = from == INT64_MIN ? INT64_MIN : timefmt_floor(from, 3600);
	from_hour += from_hour < from ? 3600 : 0;
	int64_t to_hour = timefmt_floor(raw_from, 3600);
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

/*
 * Counts @missing unobserved seconds before a sample that stands for @dt as a gap when at
 * least one interval is missing: less is jitter at the interval's resolution, no missed
 * sample (its seconds stay unobserved in the figures all the same).
 */
static void note_gap(struct capreplay_summary *h, int64_t missing, int64_t dt) {
	if (missing > 0 && missing >= dt) {
		h->gaps++;
		h->gap_s += missing;
		h->longest = missing > h->longest ? missing : h->longest;
	}
}

/* The summary of a replayed cycle list: gaps as struct lifetime_spacing sees them. */
void capreplay_summarize(const struct capreplay_cycles *cycles, struct capreplay_summary *h) {
	*h = (struct capreplay_summary){.n = (int64_t)cycles->n, .unsynced = cycles->unsynced};
	if (cycles->n > 0) {
		h->first = cycles->ts[0];
		h->last = cycles->ts[cycles->n - 1];
	}
	struct lifetime_spacing sp;
	lifetime_spacing_init(&sp);
	for (size_t i = 0; i < cycles->n; i++) {
		int64_t missing;
		int64_t dt = lifetime_spacing_next(&sp, cycles->ts[i], 0, &missing);
		note_gap(h, missing, dt);
	}
}

/* The time-weighted percentile of seconds per stored integer (lifetime_percentile's rule). */
double capreplay_percentile(struct stats_acc *secs, double resolution, double pct) {
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
	struct capreplay_summary *h;
};

static void chain_cycle(struct chain *c, int64_t ts) {
	int64_t missing;
	int64_t dt = lifetime_spacing_next(&c->sp, ts, 0, &missing);
	note_gap(c->h, missing, dt);
	c->h->first = c->h->n == 0 ? ts : c->h->first;
	c->h->last = ts;
	c->h->n++;
}

/* Replays the raw cycles and samples of [a, b), as capreplay_run() does. */
static int replay_piece(struct store *store, int64_t a, int64_t b, struct capreplay_target *targets,
			size_t n, const int64_t *ids, size_t n_ids, struct chain *c) {
	if (a >= b) {
		return 0;
	}
	struct capreplay_cycles l = {.include_unsynced = false};
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
static bool in_service_from(const struct capreplay_target *targets, size_t n, int64_t ts) {
	for (size_t i = 0; i < n; i++) {
		if (targets[i].p && targets[i].p->in_service >= 0 &&
		    targets[i].p->in_service > ts) {
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
 * level: the same figures as capreplay_run() (sums over temperatures, so equal up to the
 * rounding of the sums), reading a steady day's histograms instead of its samples and
 * replaying raw only the edges, the other days and what follows the merged days.
 * Returns 1 (nothing done) when the window holds no merged day.
 */
int capreplay_days(struct store *store, int64_t from, int64_t to, int64_t fallback_s,
		   struct capreplay_target *targets, size_t n, struct capreplay_summary *h,
		   struct capreplay_info *info) {
	*h = (struct capreplay_summary){0};
	*info = (struct capreplay_info){.raw_from = INT64_MAX, .rollup_from = INT64_MAX};
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
	int64_t d0 = timefmt_ceil(from, 86400), d1 = timefmt_floor(to, 86400);
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
	// Whole hours before the first raw sample were pruned: their rollups, as capreplay_run().
	int64_t raw_from = info->raw_from < to ? info->raw_from : to;
	int64_t from_hour = open_from ? INT64_MIN : timefmt_floor(from, 3600);
	from_hour += from_hour < from ? 3600 : 0;
	int64_t to_hour = timefmt_floor(raw_from, 3600), chain_from = from;
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
	int64_t e0 = timefmt_ceil(chain_from, 86400) > d0 ? timefmt_ceil(chain_from, 86400) : d0;
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
			struct capreplay_target *t = &targets[i];
			*t->sp = (struct lifetime_spacing){d->last_ts, s, s};
			for (size_t r = row; r < dr.n && dr.rows[r].day == d->day; r++) {
				if (dr.rows[r].channel_id != t->channel_id) {
					continue;
				}
				for (size_t b = dr.rows[r].at; b < dr.rows[r].at + dr.rows[r].n;
				     b++) {
					int64_t dt = dr.count[b] * s;
					add_secs(t, dr.q[b], dt);
					if (t->acc) {
						lifetime_acc_add_n(t->acc, t->p,
								   (double)dr.q[b] * t->resolution,
								   (double)dt / 3600.0,
								   dr.count[b]);
					}
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
