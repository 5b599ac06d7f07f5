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

/*
 * Cycles are read a bounded chunk at a time beside their samples, so a replay over years holds
 * O(targets) state: at most REPLAY_CHUNK cycle times, never the window's cycles.
 */
#define REPLAY_CHUNK 4096

/* A chunk of included cycles: the next ones of a scan that stops after REPLAY_CHUNK rows. */
struct chunk {
	int64_t ts[REPLAY_CHUNK];
	size_t n, rows;   // included cycles; rows read (with the unsynced ones left out)
	int64_t last_row; // ts of the last row read
	bool include_unsynced;
};

static int chunk_cycle(void *ctx, const struct store_cycle *c) {
	struct chunk *ch = ctx;
	ch->rows++;
	ch->last_row = c->ts;
	if (c->clock != CLOCK_STATE_UNSYNCED || ch->include_unsynced) {
		ch->ts[ch->n++] = c->ts;
	}
	return ch->rows == REPLAY_CHUNK;
}

struct replay {
	const struct chunk *cycles;
	size_t next;
	int64_t end;     // the chunk's end: a sample at or after it stops the scan
	int64_t stopped; // the ts of the sample that stopped it
	struct capreplay_target *targets;
	size_t n_targets;
};

static void add_secs(struct capreplay_target *t, int64_t q, int64_t dt_s) {
	if (t->secs && dt_s > 0) {
		stats_add_hist(t->secs, &q, &dt_s, 1, 0);
	}
}

/* A joint target's gathered cycle is complete: add it. */
static void flush_joint(struct capreplay_target *t) {
	if (t->joint && t->cycle_ts != INT64_MIN) {
		capreplay_add_cycle(t);
	}
}

static void replay_cycle(struct replay *rp, int64_t ts) {
	for (size_t i = 0; i < rp->n_targets; i++) {
		struct capreplay_target *t = &rp->targets[i];
		if (t->sp->prev_ts != INT64_MIN && ts <= t->sp->prev_ts) {
			continue; // already in this target's persisted sum
		}
		flush_joint(t);
		int64_t gap;
		t->cycle_dt = lifetime_spacing_next(t->sp, ts, 0, &gap);
		t->cycle_gap = gap > 0;
		t->cycle_ts = ts;
	}
}

void capreplay_joint_clear(struct capreplay_joint *j) {
	for (int r = 0; r < CAPREPLAY_N_ROLES; r++) {
		j->have[r] = false;
	}
}

/* The self-heating check and the histogram of the measured rise for one cycle. */
static void check_cycle(struct capreplay_joint *j, double amb, double cas, double load,
			double modelled_k, int64_t dt) {
	double dt_h = (double)dt / 3600.0;
	bool pair = j->have[CAPREPLAY_AMBIENT] && j->have[CAPREPLAY_CASE];
	if (j->check && pair) {
		capcheck_rise_add(j->check, amb, cas, modelled_k, dt_h);
	}
	if (j->check && j->have[CAPREPLAY_AMBIENT] && j->have[CAPREPLAY_LOAD]) {
		capcheck_rise_add_load(j->check, amb, cas, load, j->have[CAPREPLAY_CASE], dt_h);
	}
	if (j->rise_secs && pair && dt > 0) {
		int64_t q = llround((cas - amb) / CAPREPLAY_RISE_RES);
		stats_add_hist(j->rise_secs, &q, &dt, 1, 0);
	}
}

bool capreplay_add_cycle(struct capreplay_target *t) {
	struct capreplay_joint *j = t->joint;
	const struct lifetime_params *p = t->p;
	int64_t ts = t->cycle_ts, dt = t->cycle_dt;
	t->cycle_ts = INT64_MIN;
	// A part ages from its in-service date on (as capreplay_add_sample()).
	if (p && p->has_in_service && ts - dt < p->in_service) {
		capreplay_joint_clear(j);
		return false;
	}
	double v[CAPREPLAY_N_ROLES];
	for (int r = 0; r < CAPREPLAY_N_ROLES; r++) {
		v[r] = j->have[r] ? (double)j->q[r] * j->res[r] : NAN;
	}
	int drive = p ? (int)p->basis : CAPREPLAY_AMBIENT;
	bool ages = j->have[drive];
	double rise = p ? p->rise_k : 0, modelled = p ? p->modelled_rise_k : NAN;
	if (p && j->load_ripple) {
		// The rise is this sample's, from the measured current: without it an ambient
		// reading says nothing of the part's temperature.
		double age = NAN;
		if (j->have[CAPREPLAY_LOAD]) {
			double i = lifetime_ripple_current(p, v[CAPREPLAY_LOAD], j->load_watts);
			lifetime_rise_for_current(p, i, &age, &modelled);
		} else {
			modelled = NAN;
		}
		if (drive == CAPREPLAY_AMBIENT) {
			rise = age;
			ages = ages && isfinite(age);
		}
	}
	double damage = 0, dt_h = (double)dt / 3600.0;
	if (ages && t->acc) {
		damage = lifetime_acc_add_rise(t->acc, p, v[drive], rise, dt_h, 1);
	}
	if (ages) {
		add_secs(t, j->q[drive], dt);
		if (j->model_secs && dt > 0) {
			int64_t q = llround((v[drive] + rise) / CAPREPLAY_MODEL_RES);
			stats_add_hist(j->model_secs, &q, &dt, 1, 0);
		}
	}
	check_cycle(j, v[CAPREPLAY_AMBIENT], v[CAPREPLAY_CASE], v[CAPREPLAY_LOAD], modelled, dt);
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		if (j->steady[b] && j->have[b]) {
			capcheck_steady_add(j->steady[b], ts, v[b], dt_h, b == drive ? damage : 0,
					    t->cycle_gap);
		}
	}
	capreplay_joint_clear(j);
	return ages;
}

/*
 * The one place a stored value becomes damage, for the replay and the live update alike.
 * False when the sample is not this part's (before its in-service date).
 */
bool capreplay_add_sample(struct capreplay_target *t, double temp_c) {
	// A part ages from its in-service date on: a sample stands for the cycle_dt before it,
	// and time before that date was its predecessor's.
	if (t->p && t->p->has_in_service && t->cycle_ts - t->cycle_dt < t->p->in_service) {
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

static int replay_sample(void *ctx, const struct store_sample *s) {
	struct replay *rp = ctx;
	if (s->ts >= rp->end) {
		rp->stopped = s->ts; // the next chunk's: the store holds its row for the next scan
		return 1;
	}
	while (rp->next < rp->cycles->n && rp->cycles->ts[rp->next] <= s->ts) {
		replay_cycle(rp, rp->cycles->ts[rp->next++]);
	}
	for (size_t i = 0; i < rp->n_targets; i++) {
		struct capreplay_target *t = &rp->targets[i];
		if (t->joint) {
			for (int r = 0; r < CAPREPLAY_N_ROLES && t->cycle_ts == s->ts; r++) {
				if (t->joint->ids[r] == s->channel_id) {
					t->joint->q[r] = s->q;
					t->joint->have[r] = true;
				}
			}
			continue;
		}
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
		if (t->joint && t->joint->load_ripple && t->p &&
		    t->p->basis == TEMP_BASIS_AMBIENT) {
			continue; // an hour's histogram cannot pair a temperature with its current
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

/* The replayed cycles as struct lifetime_spacing sees them: the summary's n, span and gaps. */
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

/* What a replay of raw cycles and samples reads: the targets' channels (n_ids 0: none). */
struct span {
	struct capreplay_target *targets;
	size_t n;
	const int64_t *ids;
	size_t n_ids;
	bool include_unsynced;
	struct chain *chain;
	struct chunk *chunk; // scratch
};

/*
 * Replays the raw cycles of [a, b) and the samples of the targets' channels among them, a chunk
 * of cycles at a time: the samples before the chunk's end, then the chunk's cycles left.
 */
static int replay_span(struct store *store, const struct span *sp, int64_t a, int64_t b) {
	struct chunk *ch = sp->chunk;
	int64_t samples_from = a;
	bool samples_left = sp->n_ids > 0;
	int rc = 0;
	while (rc == 0 && a < b) {
		ch->n = ch->rows = 0;
		ch->include_unsynced = sp->include_unsynced;
		rc = store_scan_cycles(store, a, b, chunk_cycle, ch);
		if (rc < 0) {
			break;
		}
		bool more = rc == 1;
		struct replay rp = {.cycles = ch,
				    .end = more ? ch->last_row + 1 : b,
				    .targets = sp->targets,
				    .n_targets = sp->n};
		rc = 0;
		if (samples_left) {
			rc = store_scan_samples(store, samples_from, b, sp->ids, sp->n_ids,
						sp->include_unsynced, replay_sample, &rp);
			samples_left = rc == 1;
			samples_from = rp.stopped;
			rc = rc < 0 ? rc : 0;
		}
		while (rp.next < ch->n) {
			replay_cycle(&rp, ch->ts[rp.next++]);
		}
		for (size_t i = 0; sp->chain && i < ch->n; i++) {
			chain_cycle(sp->chain, ch->ts[i]);
		}
		a = more ? rp.end : b;
	}
	return rc;
}

/* Appends @id to the channel list unless it is there already or none (-1). */
static void add_id(int64_t *ids, size_t *n, int64_t id) {
	if (id < 0) {
		return;
	}
	for (size_t j = 0; j < *n; j++) {
		if (ids[j] == id) {
			return;
		}
	}
	ids[(*n)++] = id;
}

/*
 * The distinct channels of the targets (none for time-only targets), a joint target's others
 * too, into @ids (room for n * CAPREPLAY_N_ROLES).
 */
static size_t target_ids(struct capreplay_target *targets, size_t n, int64_t *ids) {
	size_t n_ids = 0;
	for (size_t i = 0; i < n; i++) {
		targets[i].cycle_ts = INT64_MIN;
		add_id(ids, &n_ids, targets[i].channel_id);
		for (int r = 0; targets[i].joint && r < CAPREPLAY_N_ROLES; r++) {
			add_id(ids, &n_ids, targets[i].joint->ids[r]);
		}
	}
	return n_ids;
}

/* Pass 1: what every included cycle of the window says, raw edges and merged days alike. */
struct cycle_pass {
	struct stats_acc spacing; // between consecutive included cycles
	int64_t n, last, unsynced;
	bool include_unsynced;
};

static int pass_cycle(void *ctx, const struct store_cycle *c) {
	struct cycle_pass *cp = ctx;
	if (c->clock == CLOCK_STATE_UNSYNCED) {
		cp->unsynced++;
		if (!cp->include_unsynced) {
			return 0;
		}
	}
	if (cp->n > 0) {
		int64_t d = c->ts - cp->last;
		stats_add(&cp->spacing, d, c->ts);
	}
	cp->last = c->ts;
	cp->n++;
	return 0;
}

/* The lower median of the spacings (an actual one), or @fallback with fewer than two cycles. */
static int64_t median_spacing(struct cycle_pass *cp, int64_t fallback) {
	stats_seal(&cp->spacing);
	if (cp->n < 2) {
		return fallback;
	}
	size_t nb;
	const struct stats_bin *b = stats_bins(&cp->spacing, &nb);
	int64_t want = (cp->n - 2) / 2, seen = 0;
	for (size_t i = 0; i < nb; i++) {
		seen += b[i].count;
		if (seen > want) {
			return b[i].q > 0 ? b[i].q : fallback;
		}
	}
	return fallback;
}

/*
 * Whole hours before the first raw sample at *@raw_from (pruned by retention): their rollups,
 * each value standing for info->nominal_s. Sets info's rollup span when any was used.
 */
static int replay_pruned(struct store *store, int64_t from, int64_t to, bool open_from,
			 struct capreplay_target *targets, size_t n, const int64_t *ids,
			 size_t n_ids, struct capreplay_info *info, int64_t *raw_from) {
	int rc = store_scan_samples(store, from, to, NULL, 0, true, first_sample, &info->raw_from);
	if (rc < 0) {
		return rc;
	}
	*raw_from = info->raw_from < to ? info->raw_from : to;
	int64_t from_hour = open_from ? INT64_MIN : timefmt_floor(from, 3600);
	from_hour += from_hour < from ? 3600 : 0;
	int64_t to_hour = timefmt_floor(*raw_from, 3600);
	if (from_hour >= to_hour) {
		return 0;
	}
	struct rollup_replay rr = {targets, n, info->nominal_s, INT64_MAX};
	rc = store_scan_rollups(store, from_hour, to_hour, ids, n_ids, replay_rollup, &rr);
	if (rc == 0 && rr.first_hour != INT64_MAX) {
		info->rollup_from = rr.first_hour;
		info->rollup_to = to_hour;
	}
	return rc;
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
		  struct capreplay_summary *h, struct capreplay_info *info) {
	*h = (struct capreplay_summary){0};
	*info = (struct capreplay_info){.raw_from = INT64_MAX, .rollup_from = INT64_MAX};
	struct cycle_pass cp = {.include_unsynced = include_unsynced};
	stats_init(&cp.spacing);
	int rc = store_scan_cycles(store, from, to, pass_cycle, &cp);
	info->nominal_s = median_spacing(&cp, fallback_s);
	h->unsynced = cp.unsynced;
	stats_finish(&cp.spacing);
	if (rc < 0) {
		return rc;
	}
	int64_t *ids = xcalloc(n * CAPREPLAY_N_ROLES + 1, sizeof(*ids));
	size_t n_ids = target_ids(targets, n, ids);
	struct chain c = {.h = h};
	lifetime_spacing_init(&c.sp);
	struct span sp = {
		targets, n, ids, n_ids, include_unsynced, &c, xcalloc(1, sizeof(*sp.chunk))};
	int64_t raw_from = from;
	if (n_ids > 0) { // n_ids == 0 would mean every channel
		rc = replay_pruned(store, from, to, from == INT64_MIN, targets, n, ids, n_ids, info,
				   &raw_from);
		// Their cycles carry no temperatures any more: the rollups stand for them.
		raw_from = info->rollup_from != INT64_MAX ? raw_from : from;
	}
	if (rc == 0) {
		rc = replay_span(store, &sp, raw_from, to);
	}
	for (size_t i = 0; i < n; i++) {
		flush_joint(&targets[i]); // the last cycle's values
	}
	free(sp.chunk);
	free(ids);
	return rc < 0 ? rc : 0;
}

/* ---- full recomputation ---- */

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

/* Merged days are read a week at a time: their rows, never the window's, are held at once. */
#define DAYS_CHUNK 7

struct day_info {
	int64_t day, cycles, first_ts, last_ts;
	int64_t spacing; // the one spacing between its cycles; 0: one cycle; -1: several
};

/* Pass 1 over the merged days: their spacings and cycles, as pass_cycle() for raw cycles. */
static int pass_day(void *ctx, const struct store_cycle_day *d) {
	struct cycle_pass *cp = ctx;
	cp->unsynced += d->unsynced;
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

/* A chunk of merged days (at most DAYS_CHUNK) and their rollups of the targets' channels. */
struct day_rows {
	struct day_info days[DAYS_CHUNK];
	size_t n_days;
	struct day_row {
		int64_t day, channel_id;
		size_t at, n; // bins in q[], count[]
	} * rows;
	size_t n, cap;
	int64_t *q, *count;
	size_t n_bins, cap_q, cap_count;
};

static int keep_day(void *ctx, const struct store_cycle_day *d) {
	struct day_rows *dr = ctx;
	if (dr->n_days == DAYS_CHUNK) {
		return -EOVERFLOW; // the store gave more days than the chunk asked for
	}
	dr->days[dr->n_days++] = (struct day_info){
		.day = d->day,
		.cycles = d->cycles,
		.first_ts = d->first_ts,
		.last_ts = d->last_ts,
		.spacing = d->n_spacings == 0   ? 0
			   : d->n_spacings == 1 ? d->spacing_s[0]
						: -1,
	};
	return 0;
}

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

/* True when every target's part was in service from @ts on (or has no in-service date). */
static bool in_service_from(const struct capreplay_target *targets, size_t n, int64_t ts) {
	for (size_t i = 0; i < n; i++) {
		if (targets[i].p && targets[i].p->has_in_service && targets[i].p->in_service > ts) {
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

/* A steady day @d of spacing @s from its histograms (rows from *@row of @dr on). */
static void replay_steady_day(const struct span *sp, const struct day_rows *dr, size_t row,
			      const struct day_info *d, int64_t s) {
	for (size_t i = 0; i < sp->n; i++) {
		struct capreplay_target *t = &sp->targets[i];
		*t->sp = (struct lifetime_spacing){d->last_ts, s, s};
		for (size_t r = row; r < dr->n && dr->rows[r].day == d->day; r++) {
			if (dr->rows[r].channel_id != t->channel_id) {
				continue;
			}
			for (size_t b = dr->rows[r].at; b < dr->rows[r].at + dr->rows[r].n; b++) {
				int64_t dt = dr->count[b] * s;
				add_secs(t, dr->q[b], dt);
				if (t->acc) {
					lifetime_acc_add_n(t->acc, t->p,
							   (double)dr->q[b] * t->resolution,
							   (double)dt / 3600.0, dr->count[b]);
				}
			}
		}
	}
	struct capreplay_summary *h = sp->chain->h;
	sp->chain->sp = (struct lifetime_spacing){d->last_ts, s, s};
	h->first = h->n == 0 ? d->first_ts : h->first;
	h->last = d->last_ts;
	h->n += d->cycles;
}

/* The merged days of [e0, d1), a chunk of days at a time: steady ones from their histograms. */
static int replay_days(struct store *store, const struct span *sp, int64_t e0, int64_t d1) {
	struct day_rows dr = {0};
	int rc = 0;
	for (int64_t a = e0; rc == 0 && a < d1; a += DAYS_CHUNK * 86400) {
		int64_t b = d1 - a > DAYS_CHUNK * 86400 ? a + DAYS_CHUNK * 86400 : d1;
		dr.n_days = dr.n = dr.n_bins = 0;
		rc = store_scan_cycle_days(store, a, b, keep_day, &dr);
		if (rc == 0) {
			rc = store_scan_rollup_days(store, a, b, sp->ids, sp->n_ids, keep_day_row,
						    &dr);
		}
		size_t row = 0;
		for (size_t k = 0; k < dr.n_days && rc == 0; k++) {
			const struct day_info *d = &dr.days[k];
			while (row < dr.n && dr.rows[row].day < d->day) {
				row++;
			}
			int64_t s;
			// A day whose samples all stand for time in service; else sample by sample.
			if (steady_day(sp->chain, d, &s) &&
			    in_service_from(sp->targets, sp->n, d->first_ts - s)) {
				replay_steady_day(sp, &dr, row, d, s);
			} else {
				rc = replay_span(store, sp, d->day, d->day + 86400);
			}
		}
	}
	free(dr.rows);
	free(dr.q);
	free(dr.count);
	return rc;
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
		struct store_info si;
		if (store_info(store, &si) < 0 || si.cycles == 0) {
			return 1;
		}
		from = from < si.first_cycle ? si.first_cycle : from;
		to = to > si.last_cycle + 1 ? si.last_cycle + 1 : to;
	}
	if (store_day_horizon(store, &day_horizon) < 0) {
		return 1;
	}
	int64_t d0 = timefmt_ceil(from, 86400), d1 = timefmt_floor(to, 86400);
	d1 = d1 < day_horizon ? d1 : day_horizon;
	if (n == 0 || d0 >= d1) {
		return 1;
	}
	int64_t *ids = xcalloc(n * CAPREPLAY_N_ROLES, sizeof(*ids));
	size_t n_ids = target_ids(targets, n, ids);
	struct cycle_pass cp = {.include_unsynced = false};
	stats_init(&cp.spacing);
	int rc = store_scan_cycles(store, from, d0, pass_cycle, &cp);
	rc = rc < 0 ? rc : store_scan_cycle_days(store, d0, d1, pass_day, &cp);
	rc = rc < 0 ? rc : store_scan_cycles(store, d1, to, pass_cycle, &cp);
	h->unsynced = cp.unsynced;
	info->nominal_s = median_spacing(&cp, fallback_s); // the lower median, an actual spacing
	stats_finish(&cp.spacing);
	struct chain c = {.h = h};
	lifetime_spacing_init(&c.sp);
	struct span sp = {targets, n, ids, n_ids, false, &c, xcalloc(1, sizeof(*sp.chunk))};
	int64_t raw_from = to;
	if (rc == 0) {
		rc = replay_pruned(store, from, to, open_from, targets, n, ids, n_ids, info,
				   &raw_from);
	}
	// The rollups of pruned hours stand for the cycles before the first raw sample.
	int64_t chain_from = info->rollup_from != INT64_MAX ? raw_from : from;
	int64_t e0 = timefmt_ceil(chain_from, 86400) > d0 ? timefmt_ceil(chain_from, 86400) : d0;
	if (rc == 0 && e0 >= d1) {
		rc = replay_span(store, &sp, chain_from, to);
	} else if (rc == 0) {
		rc = replay_span(store, &sp, chain_from, e0);
		rc = rc < 0 ? rc : replay_days(store, &sp, e0, d1);
		rc = rc < 0 ? rc : replay_span(store, &sp, d1, to);
	}
	free(sp.chunk);
	free(ids);
	return rc < 0 ? rc : 0;
}
