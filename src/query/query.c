/*
 * Window statistics over the store. A window [from, to) splits into whole merged days (their
 * cycles summarized, store_scan_cycle_days, and their values as exact histograms,
 * store_scan_rollup_days; not when unsynced cycles are kept), whole rolled-up hours
 * (store_scan_rollups), and the rest (edges, hours past the rollup horizon, hours holding
 * unsynced cycles when those are kept), read raw. All feed the same stats accumulators, so the
 * answer does not depend on how the window was served.
 */
#include "query.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capreplay.h"
#include "lifetime.h"
#include "stats.h"
#include "textdist.h"
#include "timefmt.h"
#include "xalloc.h"

#define HOUR_S 3600
#define DAY_S  (24 * HOUR_S)

static int set_err(char **err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int set_err(char **err, int rc, const char *fmt, ...) {
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		*err = xvasprintf(fmt, ap);
		va_end(ap);
	}
	return rc;
}

const char *query_weight_name(enum query_weight weight) {
	return weight == QUERY_WEIGHT_TIME ? "time" : "samples";
}

bool query_weight_parse(const char *text, enum query_weight *weight) {
	if (strcmp(text, "samples") == 0) {
		*weight = QUERY_WEIGHT_SAMPLES;
	} else if (strcmp(text, "time") == 0) {
		*weight = QUERY_WEIGHT_TIME;
	} else {
		return false;
	}
	return true;
}

/* ---- channels ---- */

void query_selection_finish(struct query_selection *s) {
	store_channels_free(s->all, s->n_all);
	free(s->pick);
	free(s->ids);
	free(s->slot);
	*s = (struct query_selection){0};
}

static bool matches(const char *pattern, const struct channel *ch) {
	return strcmp(pattern, ch->key) == 0 || fnmatch(pattern, ch->key, 0) == 0 ||
	       (ch->label && strcmp(pattern, ch->label) == 0);
}

/*
 * Appends "; did you mean A, B?" naming the (up to three) nearest channels, if any is near: a
 * channel is as near as the nearest of its key, the key's last part and its label.
 */
static void suggest_channels(struct buf *b, const struct store_channel *all, size_t n,
			     const char *pattern) {
	struct textdist_near near;
	textdist_near_init(&near, pattern);
	for (size_t i = 0; i < n; i++) {
		const struct channel *ch = &all[i].ch;
		const char *last = strrchr(ch->key, '/');
		textdist_near_offer(&near, ch->key, ch->key);
		if (last) {
			textdist_near_offer(&near, ch->key, last + 1);
		}
		if (ch->label) {
			textdist_near_offer(&near, ch->key, ch->label);
		}
	}
	textdist_near_write(&near, false, b);
}

int query_select(struct store *store, const char *const *patterns, size_t n_patterns,
		 struct query_selection *s, char **err) {
	*s = (struct query_selection){0};
	if (store_channels(store, &s->all, &s->n_all) < 0) {
		return set_err(err, -EIO, "could not read the channel list");
	}
	for (size_t k = 0; k < n_patterns; k++) {
		bool any = false;
		for (size_t i = 0; i < s->n_all && !any; i++) {
			any = matches(patterns[k], &s->all[i].ch);
		}
		if (!any) {
			struct buf near;
			buf_init(&near);
			suggest_channels(&near, s->all, s->n_all, patterns[k]);
			int rc = set_err(err, -EINVAL, "unknown channel '%s'%s%s", patterns[k],
					 near.len   ? near.data
					 : s->n_all ? " (see thermlog channels)"
						    : ": the database has no channels",
					 near.len ? " (see thermlog channels)" : "");
			buf_finish(&near);
			query_selection_finish(s);
			return rc;
		}
	}
	s->pick = xcalloc(s->n_all ? s->n_all : 1, sizeof(*s->pick));
	s->ids = xcalloc(s->n_all ? s->n_all : 1, sizeof(*s->ids));
	for (size_t i = 0; i < s->n_all; i++) {
		bool want = n_patterns == 0;
		for (size_t k = 0; k < n_patterns && !want; k++) {
			want = matches(patterns[k], &s->all[i].ch);
		}
		if (want) {
			s->pick[s->n] = i;
			s->ids[s->n++] = s->all[i].id;
		}
		if (s->all[i].id > s->max_id) {
			s->max_id = s->all[i].id;
		}
	}
	s->slot = xcalloc((size_t)s->max_id + 1, sizeof(*s->slot));
	for (int64_t id = 0; id <= s->max_id; id++) {
		s->slot[id] = -1;
	}
	for (size_t k = 0; k < s->n; k++) {
		if (s->ids[k] >= 0) {
			s->slot[s->ids[k]] = (int32_t)k;
		}
	}
	return 0;
}

int query_selection_slot(const struct query_selection *s, int64_t id) {
	return id >= 0 && id <= s->max_id ? s->slot[id] : -1;
}

const struct channel *query_selection_channel(const struct query_selection *s, size_t k) {
	return &s->all[s->pick[k]].ch;
}

/* ---- window and cycles ---- */

static int first_cycle(void *ctx, const struct store_cycle *c) {
	*(int64_t *)ctx = c->ts;
	return 1; // the first one is all we need
}

static int last_cycle(void *ctx, const struct store_cycle *c) {
	*(int64_t *)ctx = c->ts;
	return 0;
}

int query_window_check(int64_t from, int64_t to, bool to_is_now, int64_t max_window_s,
		       const char *const names[2], int *bad, char **err) {
	*bad = 0;
	if (from >= to) {
		char a[TIMEFMT_ISO_LEN], b[TIMEFMT_ISO_LEN];
		timefmt_iso(from, a);
		timefmt_iso(to, b);
		*err = to_is_now ? xasprintf("%s (%s) is not before now (%s)", names[0], a, b)
				 : xasprintf("%s (%s) must be before %s (%s)", names[0], a,
					     names[1], b);
		return -EINVAL;
	}
	bool overflows = from < 0 && to > INT64_MAX + from; // to - from does not fit in int64_t
	if (max_window_s > 0 && (overflows || to - from > max_window_s)) {
		*bad = to_is_now ? 0 : 1;
		if (overflows) {
			*err = xasprintf(
				"the window given by %s and %s is longer than the configured limit "
				"of %lld s (http.max_window)",
				names[0], names[1], (long long)max_window_s);
		} else {
			*err = xasprintf(
				"the window given by %s and %s spans %lld s, more than the "
				"configured limit of %lld s (http.max_window)",
				names[0], names[1], (long long)(to - from),
				(long long)max_window_s);
		}
		return -EINVAL;
	}
	return 0;
}

int query_window(struct store *store, const struct query_params *p, int64_t *from, int64_t *to,
		 char **err) {
	*from = p->from;
	*to = p->to;
	if (!p->has_from || !p->has_to) {
		/*
		 * The stored history's edges without a count over every cycle: the first cycle by
		 * an index walk that stops at once, the last by scanning on from the channels'
		 * last_seen (which the store may update lazily, so it is only a lower bound).
		 */
		struct store_channel *chs;
		size_t n;
		if (store_channels(store, &chs, &n) < 0) {
			return set_err(err, -EIO, "could not read the channel list");
		}
		int64_t first = INT64_MIN, last = INT64_MIN;
		for (size_t i = 0; i < n; i++) {
			last = chs[i].last_seen > last ? chs[i].last_seen : last;
		}
		store_channels_free(chs, n);
		if (n == 0) {
			return set_err(err, -ENOENT, "the database holds no samples yet");
		}
		int rc = store_scan_cycles(store, INT64_MIN, INT64_MAX, first_cycle, &first);
		if (rc >= 0) {
			rc = store_scan_cycles(store, last, INT64_MAX, last_cycle, &last);
		}
		if (rc < 0) {
			return set_err(err, -EIO, "could not read the stored cycles");
		}
		*from = p->has_from ? p->from : first;
		*to = p->has_to ? p->to : last + 1;
		if (*from >= *to) {
			// An end left out is the history's: say where it lies.
			char a[TIMEFMT_ISO_LEN], b[TIMEFMT_ISO_LEN], h0[TIMEFMT_ISO_LEN],
				h1[TIMEFMT_ISO_LEN];
			timefmt_iso(*from, a);
			timefmt_iso(*to, b);
			timefmt_iso(first, h0);
			timefmt_iso(last, h1);
			return set_err(err, -EINVAL,
				       "empty window: from %s is not before to %s; the stored "
				       "history runs from %s to %s: %s",
				       a, b, h0, h1,
				       p->has_from ? "give a start before its end, or an end"
						   : "give an end after its start, or a start");
		}
	}
	if (*from >= *to) {
		char a[TIMEFMT_ISO_LEN], b[TIMEFMT_ISO_LEN];
		timefmt_iso(*from, a);
		timefmt_iso(*to, b);
		return set_err(err, -EINVAL, "empty window: from %s is not before to %s", a, b);
	}
	return 0;
}

/* What the cycles of a window say about coverage. */
struct cycle_summary {
	int64_t from, to;
	int64_t cycles;   // counted (unsynced ones only with include_unsynced)
	int64_t unsynced; // unsynced cycles in the window
	int64_t interval_s;
	int64_t expected;
	int64_t missing; // cycles the gaps would have held, each at the spacing around it
	int64_t gap_s, longest_gap_s; // unobserved time (struct query_stats)
	int64_t min_dt, max_dt;       // the spacings the samples stand for (0: none yet)
	int64_t *unsynced_hours;      // hours holding unsynced cycles, ascending
	size_t n_unsynced_hours, cap_unsynced_hours;
	// scan state
	bool include_unsynced;
	int64_t given_s; // the expected spacing given (0: each sample's own, lifetime's rule)
	int64_t first_ts, last_ts;
	struct lifetime_spacing sp;
	struct stats_acc spacing;
};

/* @count gaps of @gap s unobserved, among cycles @own s apart. */
static void note_gap(struct cycle_summary *cs, int64_t gap, int64_t count, int64_t own) {
	if (gap > 0) {
		cs->gap_s += gap * count;
		cs->longest_gap_s = gap > cs->longest_gap_s ? gap : cs->longest_gap_s;
		cs->missing += own > 0 ? gap / own * count : 0;
	}
}

static void note_dt(struct cycle_summary *cs, int64_t dt) {
	if (dt > 0) {
		cs->min_dt = cs->min_dt == 0 || dt < cs->min_dt ? dt : cs->min_dt;
		cs->max_dt = dt > cs->max_dt ? dt : cs->max_dt;
	}
}

/*
 * A cycle at @ts after the last one counted (or the window's first, whose time is kept): its
 * spacing into the spacings' statistics, and the unobserved part of that spacing: beyond 1.5
 * times the expected one when given, else what struct lifetime_spacing leaves unobserved
 * (beyond 1.5 times the sample's own spacing). The caller then counts the cycle.
 */
static void step_cycle(struct cycle_summary *cs, int64_t ts) {
	if (cs->cycles > 0) {
		stats_add(&cs->spacing, ts - cs->last_ts, ts);
	} else {
		cs->first_ts = ts;
	}
	int64_t gap;
	int64_t dt = lifetime_spacing_next(&cs->sp, ts, 0, &gap);
	if (cs->given_s > 0 && cs->cycles > 0) {
		int64_t spacing = ts - cs->last_ts;
		gap = spacing * 2 > cs->given_s * 3 ? spacing - cs->given_s : 0;
		dt = spacing - gap;
	}
	note_gap(cs, gap, 1, dt);
	note_dt(cs, dt);
}

static int on_cycle(void *ctx, const struct store_cycle *c) {
	struct cycle_summary *cs = ctx;
	if (c->clock == CLOCK_STATE_UNSYNCED) {
		cs->unsynced++;
		int64_t hour = timefmt_floor(c->ts, HOUR_S);
		if (cs->n_unsynced_hours == 0 ||
		    cs->unsynced_hours[cs->n_unsynced_hours - 1] != hour) {
			cs->unsynced_hours = xgrow(cs->unsynced_hours, &cs->cap_unsynced_hours,
						   cs->n_unsynced_hours + 1, sizeof(int64_t));
			cs->unsynced_hours[cs->n_unsynced_hours++] = hour;
		}
		if (!cs->include_unsynced) {
			return 0;
		}
	}
	step_cycle(cs, c->ts);
	cs->last_ts = c->ts;
	cs->cycles++;
	return 0;
}

/* A merged day of cycles: the same sums on_cycle() builds from each of its trusted cycles. */
static int on_cycle_day(void *ctx, const struct store_cycle_day *d) {
	struct cycle_summary *cs = ctx;
	cs->unsynced += d->unsynced;
	if (d->cycles == 0) {
		return 0;
	}
	step_cycle(cs, d->first_ts);
	if (d->n_spacings > 0) {
		stats_add_hist(&cs->spacing, d->spacing_s, d->spacing_count, d->n_spacings,
			       d->last_ts);
		/*
		 * A merged day keeps its spacings, not their order: each is measured against the
		 * day's median spacing (the given one if any), which a steady day (one spacing,
		 * the common case) makes exactly lifetime's rule.
		 */
		int64_t total = 0, seen = 0, own = cs->given_s;
		for (size_t i = 0; i < d->n_spacings; i++) {
			total += d->spacing_count[i];
		}
		for (size_t i = 0; i < d->n_spacings && own == 0; i++) {
			seen += d->spacing_count[i];
			own = seen > (total - 1) / 2 ? d->spacing_s[i] : 0;
		}
		for (size_t i = 0; i < d->n_spacings; i++) {
			int64_t v = d->spacing_s[i];
			bool gap = v * 2 > own * 3;
			note_gap(cs, gap ? v - own : 0, d->spacing_count[i], own);
			note_dt(cs, gap ? own : v);
		}
		cs->sp = (struct lifetime_spacing){d->last_ts, own, own};
	}
	cs->last_ts = d->last_ts;
	cs->cycles += d->cycles;
	return 0;
}

/* A merged day kept for the second pass of summarize_cycles(). */
struct kept_day {
	struct store_cycle_day d;
	int64_t *spacing; // n_spacings spacings, then their counts
};

struct kept_days {
	struct kept_day *days;
	size_t n, cap;
};

static int keep_day(void *ctx, const struct store_cycle_day *d) {
	struct kept_days *k = ctx;
	k->days = xgrow(k->days, &k->cap, k->n + 1, sizeof(*k->days));
	struct kept_day *kd = &k->days[k->n++];
	kd->d = *d;
	kd->spacing = xcalloc(2 * d->n_spacings + 1, sizeof(*kd->spacing));
	if (d->n_spacings > 0) { // a day of one cycle has no spacing, and NULL arrays
		memcpy(kd->spacing, d->spacing_s, d->n_spacings * sizeof(*kd->spacing));
		memcpy(kd->spacing + d->n_spacings, d->spacing_count,
		       d->n_spacings * sizeof(*kd->spacing));
	}
	kd->d.spacing_s = kd->spacing;
	kd->d.spacing_count = kd->spacing + d->n_spacings;
	return 0;
}

static int count_trusted(void *ctx, const struct store_cycle *c) {
	*(int64_t *)ctx += c->clock != CLOCK_STATE_UNSYNCED;
	return 0;
}

/*
 * A merged day in the walk: from its summary when that gives exactly what the cycles would
 * (one spacing, which the walk entering the day does not take for a gap: lifetime's rule
 * measures each spacing against the one before), else from its raw cycles while they are
 * kept, else from the summary against the day's median spacing.
 */
static int walk_day(struct store *store, struct cycle_summary *cs,
		    const struct store_cycle_day *d) {
	bool steady = d->n_spacings == 0 || cs->given_s > 0;
	if (!steady && d->n_spacings == 1) {
		struct lifetime_spacing after = cs->sp;
		lifetime_spacing_next(&after, d->first_ts, 0, NULL);
		steady = after.prev_spacing == 0 || d->spacing_s[0] * 2 <= after.prev_spacing * 3;
	}
	if (!steady && d->cycles > 0) {
		int64_t raw = 0;
		int rc = store_scan_cycles(store, d->day, d->day + DAY_S, count_trusted, &raw);
		if (rc < 0) {
			return rc;
		}
		if (raw == d->cycles) {
			return store_scan_cycles(store, d->day, d->day + DAY_S, on_cycle, cs);
		}
	}
	return on_cycle_day(cs, d);
}

static void cycles_finish(struct cycle_summary *cs) {
	free(cs->unsynced_hours);
	stats_finish(&cs->spacing);
}

/*
 * Summarizes the cycles of [from, to); the merged days [d0, d1) (d0 == d1: none) are read from
 * the daily level, which holds no unsynced hours: only without include_unsynced.
 */
static int summarize_cycles(struct store *store, const struct query_params *p, int64_t from,
			    int64_t to, int64_t d0, int64_t d1, struct cycle_summary *cs,
			    char **err) {
	*cs = (struct cycle_summary){.from = from,
				     .to = to,
				     .include_unsynced = p->include_unsynced,
				     .given_s = p->interval_s > 0 ? p->interval_s : 0,
				     .last_ts = from};
	lifetime_spacing_init(&cs->sp);
	stats_init(&cs->spacing);
	int rc = 0;
	int64_t rest = from;
	if (d0 < d1) {
		struct kept_days kept = {0};
		rc = from < d0 ? store_scan_cycles(store, from, d0, on_cycle, cs) : 0;
		rc = rc < 0 ? rc : store_scan_cycle_days(store, d0, d1, keep_day, &kept);
		for (size_t i = 0; i < kept.n; i++) {
			rc = rc < 0 ? rc : walk_day(store, cs, &kept.days[i].d);
			free(kept.days[i].spacing);
		}
		free(kept.days);
		rest = d1;
	}
	if (rc < 0 || store_scan_cycles(store, rest, to, on_cycle, cs) < 0) {
		cycles_finish(cs);
		return set_err(err, -EIO, "could not read the stored cycles");
	}
	stats_seal(&cs->spacing);
	if (p->interval_s > 0) {
		cs->interval_s = p->interval_s;
	} else if (cs->spacing.count > 0) {
		// The median spacing: robust against reboots and gaps.
		size_t n;
		const struct stats_bin *b = stats_bins(&cs->spacing, &n);
		int64_t half = (cs->spacing.count - 1) / 2, seen = 0;
		for (size_t i = 0; i < n; i++) {
			seen += b[i].count;
			if (seen > half) {
				cs->interval_s = b[i].q;
				break;
			}
		}
	}
	if (cs->interval_s <= 0) {
		cs->interval_s = 60; // a single cycle: assume the default cadence
	}
	cs->expected = (to - from + cs->interval_s - 1) / cs->interval_s;
	// The window's ends: unobserved beyond 1.5 times the first and the last sample's spacing.
	if (cs->cycles == 0) {
		note_gap(cs, to - from, 1, cs->interval_s);
	} else {
		int64_t lead = cs->first_ts - from, tail = to - cs->last_ts;
		int64_t last_own = cs->given_s ? cs->given_s : cs->sp.prev_dt;
		last_own = last_own > 0 ? last_own : cs->interval_s;
		note_gap(cs, lead * 2 > cs->interval_s * 3 ? lead - cs->interval_s : 0, 1,
			 cs->interval_s);
		note_gap(cs, tail * 2 > last_own * 3 ? tail - last_own : 0, 1, last_own);
	}
	return 0;
}

/* Observed time over the window's length, 0..1. */
static double cycles_coverage(const struct cycle_summary *cs) {
	int64_t len = cs->to - cs->from;
	if (len <= 0 || cs->gap_s >= len) {
		return 0;
	}
	return (double)(len - cs->gap_s) / (double)len;
}

static bool hour_unsynced(const struct cycle_summary *cs, int64_t hour) {
	size_t lo = 0, hi = cs->n_unsynced_hours;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cs->unsynced_hours[mid] < hour) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo < cs->n_unsynced_hours && cs->unsynced_hours[lo] == hour;
}

/* ---- the window scan: rollups where they are exact, raw samples elsewhere ---- */

struct feed {
	const struct query_selection *sel;
	const struct cycle_summary *cs; // for unsynced hours; NULL = none
	bool include_unsynced;
	int (*raw)(void *ctx, int slot, const struct store_sample *sample);
	int (*rollup)(void *ctx, int slot, const struct store_rollup *rollup);
	void *ctx;
	int64_t *unsynced_excluded; // per slot, may be NULL
};

static int feed_raw(void *ctx, const struct store_sample *sample) {
	struct feed *f = ctx;
	int slot = query_selection_slot(f->sel, sample->channel_id);
	if (slot < 0) {
		return 0;
	}
	if (sample->clock == CLOCK_STATE_UNSYNCED && !f->include_unsynced) {
		if (f->unsynced_excluded) {
			f->unsynced_excluded[slot]++;
		}
		return 0;
	}
	return f->raw(f->ctx, slot, sample);
}

static int feed_rollup(void *ctx, const struct store_rollup *r) {
	struct feed *f = ctx;
	int slot = query_selection_slot(f->sel, r->channel_id);
	if (slot < 0) {
		return 0;
	}
	if (f->include_unsynced && f->cs && hour_unsynced(f->cs, r->hour)) {
		return 0; // read raw instead, unsynced samples included
	}
	if (f->unsynced_excluded && !f->include_unsynced) {
		f->unsynced_excluded[slot] += r->unsynced;
	}
	return r->count > 0 ? f->rollup(f->ctx, slot, r) : 0;
}

static int scan_raw(struct store *store, struct feed *f, int64_t from, int64_t to) {
	if (from >= to) {
		return 0;
	}
	// Always read unsynced rows so the excluded ones can be counted per channel.
	return store_scan_samples(store, from, to, f->sel->ids, f->sel->n, true, feed_raw, f);
}

/*
 * Feeds [from, to) to @f: rollups for whole hours before the horizon (when @f->rollup is set),
 * raw samples for the rest and for hours with unsynced cycles when those are included.
 */
static int feed_window(struct store *store, struct feed *f, int64_t from, int64_t to) {
	if (f->sel->n == 0) {
		return 0;
	}
	int64_t h0 = timefmt_ceil(from, HOUR_S), h1 = timefmt_floor(to, HOUR_S),
		horizon = INT64_MIN;
	if (f->rollup && h0 < h1 && store_rollup_horizon(store, &horizon) < 0) {
		return -EIO;
	}
	int64_t r1 = h1 < horizon ? h1 : horizon;
	if (!f->rollup || h0 >= r1) {
		return scan_raw(store, f, from, to);
	}
	int rc = scan_raw(store, f, from, h0);
	if (rc == 0) {
		rc = store_scan_rollups(store, h0, r1, f->sel->ids, f->sel->n, feed_rollup, f);
	}
	if (rc == 0 && f->include_unsynced && f->cs) {
		for (size_t i = 0; i < f->cs->n_unsynced_hours && rc == 0; i++) {
			int64_t hour = f->cs->unsynced_hours[i];
			if (hour >= h0 && hour < r1) {
				rc = scan_raw(store, f, hour, hour + HOUR_S);
			}
		}
	}
	if (rc == 0) {
		rc = scan_raw(store, f, r1, to);
	}
	return rc;
}

/* ---- statistics ---- */

static int stats_raw(void *ctx, int slot, const struct store_sample *s) {
	struct stats_acc *acc = ctx;
	stats_add(&acc[slot], s->q, s->ts);
	return 0;
}

static int stats_rollup(void *ctx, int slot, const struct store_rollup *r) {
	struct stats_acc *acc = ctx;
	stats_add_hist(&acc[slot], r->bin_q, r->bin_count, r->n_bins, r->max_ts);
	return 0;
}

static void percentile_key(char *out, size_t len, double p) {
	snprintf(out, len, "p%.10g", p);
}

static void json_value(struct json *j, int64_t q, double resolution) {
	json_double(j, stats_value(q, resolution));
}

#define TIME_IN_STATE_MAX 256

static void write_channel_stats(struct json *out, const struct query_stats *s, size_t k) {
	const struct channel *ch = query_selection_channel(&s->sel, k);
	const struct stats_acc *acc = &s->acc[k];
	double res = ch->resolution;
	json_object_begin(out);
	channel_json_identity(out, ch);
	json_field_double(out, "resolution", res);
	json_field_int(out, "count", acc->count);
	// The window's observed time, in the share of its cycles that hold this channel.
	double coverage = s->cycles > 0 && acc->count < s->cycles
				  ? s->coverage * (double)acc->count / (double)s->cycles
			  : acc->count > 0 ? s->coverage
					   : 0;
	json_field_double(out, "coverage", coverage);
	/*
	 * A channel with a value in every counted cycle has exactly the cycles' gaps. Otherwise
	 * where its missing values fall is not recorded in hourly rollups: null.
	 */
	json_field_int_or_null(out, "longest_gap_s", acc->count == s->cycles, s->longest_gap_s);
	bool any = acc->count > 0;
	json_field_double(out, "mean", query_stats_mean(s, k)); // json_double writes NAN as null
	json_field_double(out, "stddev", query_stats_stddev(s, k));
	json_field_double_or_null(out, "min", any, stats_value(acc->min_q, res));
	json_field_double(out, "p50", query_stats_percentile(s, k, 50));
	json_field_double(out, "p95", query_stats_percentile(s, k, 95));
	json_field_double_or_null(out, "max", any, stats_value(acc->max_q, res));
	json_field_int_or_null(out, "max_time", any, acc->max_ts);
	for (size_t e = 0; e < s->n_percentiles; e++) {
		char key[32];
		percentile_key(key, sizeof(key), s->percentiles[e]);
		json_field_double(out, key, query_stats_percentile(s, k, s->percentiles[e]));
	}
	json_field_int(out, "unsynced_excluded", s->unsynced_excluded[k]);
	// By samples each sample stands for one cycle; by time, for the seconds it weighs.
	const struct stats_acc *tis = s->weight == QUERY_WEIGHT_TIME ? &s->time_acc[k] : acc;
	size_t n_bins;
	const struct stats_bin *bins = stats_bins(tis, &n_bins);
	if (ch->kind == CHANNEL_KIND_FREQUENCY && n_bins <= TIME_IN_STATE_MAX) {
		json_key(out, "time_in_state");
		json_array_begin(out);
		for (size_t i = 0; i < n_bins; i++) {
			json_object_begin(out);
			json_field_double(out, "value", stats_value(bins[i].q, res));
			json_field_double(out, "share", (double)bins[i].count / (double)tis->count);
			json_object_end(out);
		}
		json_array_end(out);
	}
	json_object_end(out);
}

static int check_params(const struct query_params *p, char **err) {
	if (p->n_percentiles > QUERY_MAX_PERCENTILES) {
		return set_err(err, -EINVAL, "at most %d extra percentiles", QUERY_MAX_PERCENTILES);
	}
	for (size_t k = 0; k < p->n_percentiles; k++) {
		if (!(p->percentiles[k] >= 0 && p->percentiles[k] <= 100)) {
			return set_err(err, -EINVAL, "percentile %g is outside 0..100",
				       p->percentiles[k]);
		}
	}
	return 0;
}

void query_stats_finish(struct query_stats *s) {
	for (size_t k = 0; s->acc && k < s->sel.n; k++) {
		stats_finish(&s->acc[k]);
	}
	free(s->acc);
	for (size_t k = 0; s->time_acc && k < s->sel.n; k++) {
		stats_finish(&s->time_acc[k]);
	}
	free(s->time_acc);
	free(s->unsynced_excluded);
	query_selection_finish(&s->sel);
	*s = (struct query_stats){0};
}

/*
 * The seconds each sample of the window stands for, per value: lifetime's own replay
 * (capreplay_days, else capreplay_run, as lifetime-report.c calls them) with targets that keep
 * only the time, so `stats --weight time` and `lifetime` weigh the same samples alike.
 */
static int time_weights(struct store *store, const struct query_params *p, struct query_stats *s) {
	size_t n = s->sel.n;
	s->time_acc = xcalloc(n ? n : 1, sizeof(*s->time_acc));
	struct capreplay_target *targets = xcalloc(n ? n : 1, sizeof(*targets));
	struct lifetime_spacing *spacing = xcalloc(n ? n : 1, sizeof(*spacing));
	for (size_t k = 0; k < n; k++) {
		stats_init(&s->time_acc[k]);
		lifetime_spacing_init(&spacing[k]);
		targets[k] = (struct capreplay_target){
			.channel_id = s->sel.ids[k],
			.resolution = query_selection_channel(&s->sel, k)->resolution,
			.sp = &spacing[k],
			.secs = &s->time_acc[k],
		};
	}
	struct capreplay_info info;
	struct capreplay_summary hist;
	int rc = p->include_unsynced ? 1
				     : capreplay_days(store, s->from, s->to, s->interval_s, targets,
						      n, &hist, &info);
	if (rc == 1) {
		rc = capreplay_run(store, s->from, s->to, p->include_unsynced, s->interval_s,
				   targets, n, &hist, &info);
	}
	if (rc >= 0 && info.rollup_from != INT64_MAX) {
		s->time_rollup_to = info.rollup_to;
	}
	for (size_t k = 0; k < n; k++) {
		stats_seal(&s->time_acc[k]);
	}
	free(spacing);
	free(targets);
	return rc < 0 ? rc : 0;
}

static int count_cycle(void *ctx, const struct store_cycle *c) {
	(void)c;
	++*(int64_t *)ctx;
	return 0;
}

/*
 * Whole merged days [*d0, d1) of a window from @from: the day @from falls in counts as whole
 * too when it holds no cycle before @from, its merged rows being then exactly the window's part
 * of it (the history's first day, in a window from its first cycle).
 */
static int first_day_whole(struct store *store, int64_t from, int64_t *d0, int64_t d1) {
	int64_t before = 0;
	int rc = *d0 < d1 && from < *d0
			 ? store_scan_cycles(store, *d0 - DAY_S, from, count_cycle, &before)
			 : 1;
	*d0 -= rc == 0 && before == 0 ? DAY_S : 0;
	return rc < 0 ? rc : 0;
}

int query_stats_compute(struct store *store, const struct query_params *p, struct query_stats *s,
			char **err) {
	*s = (struct query_stats){0};
	int rc = check_params(p, err);
	if (rc < 0 || (rc = query_window(store, p, &s->from, &s->to, err)) < 0) {
		return rc;
	}
	s->include_unsynced = p->include_unsynced;
	// p50 and p95 are always there: an extra one repeats neither them nor another extra.
	for (size_t e = 0; e < p->n_percentiles; e++) {
		bool repeat = p->percentiles[e] == 50 || p->percentiles[e] == 95;
		for (size_t o = 0; o < s->n_percentiles && !repeat; o++) {
			repeat = s->percentiles[o] == p->percentiles[e];
		}
		if (!repeat) {
			s->percentiles[s->n_percentiles++] = p->percentiles[e];
		}
	}
	if ((rc = query_select(store, p->channels, p->n_channels, &s->sel, err)) < 0) {
		return rc;
	}
	// Whole merged days come from the daily level: one row a day instead of 24 per channel
	// and one per cycle. Unsynced hours are read raw when included, so then none are used.
	int64_t d0 = timefmt_ceil(s->from, DAY_S), d1 = timefmt_floor(s->to, DAY_S),
		day_horizon = 0;
	if (p->include_unsynced || d0 >= d1 || store_day_horizon(store, &day_horizon) < 0) {
		day_horizon = d0;
	}
	d1 = d1 < day_horizon ? d1 : day_horizon;
	d1 = d1 > d0 ? d1 : d0;
	if (first_day_whole(store, s->from, &d0, d1) < 0) {
		query_selection_finish(&s->sel);
		return set_err(err, -EIO, "could not read the stored cycles");
	}
	struct cycle_summary cs;
	if ((rc = summarize_cycles(store, p, s->from, s->to, d0, d1, &cs, err)) < 0) {
		query_selection_finish(&s->sel);
		return rc;
	}
	s->interval_s = cs.interval_s;
	s->cycles = cs.cycles;
	s->coverage = cycles_coverage(&cs);
	s->gap_s = cs.gap_s;
	s->longest_gap_s = cs.longest_gap_s;
	s->min_interval_s = cs.min_dt;
	s->max_interval_s = cs.max_dt;
	s->mixed_intervals = cs.max_dt * 2 > cs.min_dt * 3;
	// Mixed intervals: each stretch at its own (the cycles, and those its gaps would have
	// held), not the whole window at the median interval.
	s->expected_cycles = s->mixed_intervals ? cs.cycles + cs.missing : cs.expected;
	s->unsynced = cs.unsynced;
	s->weight = p->weight;
	s->time_rollup_to = INT64_MIN;
	size_t n = s->sel.n ? s->sel.n : 1;
	s->acc = xcalloc(n, sizeof(*s->acc));
	s->unsynced_excluded = xcalloc(n, sizeof(*s->unsynced_excluded));
	for (size_t k = 0; k < s->sel.n; k++) {
		stats_init(&s->acc[k]);
	}
	struct feed f = {.sel = &s->sel,
			 .cs = &cs,
			 .include_unsynced = p->include_unsynced,
			 .raw = stats_raw,
			 .rollup = stats_rollup,
			 .ctx = s->acc,
			 .unsynced_excluded = s->unsynced_excluded};
	if (d0 < d1) {
		rc = feed_window(store, &f, s->from, d0);
		rc = rc < 0 ? rc
			    : store_scan_rollup_days(store, d0, d1, s->sel.ids, s->sel.n,
						     feed_rollup, &f);
		rc = rc < 0 ? rc : feed_window(store, &f, d1, s->to);
	} else {
		rc = feed_window(store, &f, s->from, s->to);
	}
	cycles_finish(&cs);
	if (rc < 0) {
		query_stats_finish(s);
		return set_err(err, -EIO, "could not read the stored samples");
	}
	for (size_t k = 0; k < s->sel.n; k++) {
		stats_seal(&s->acc[k]);
	}
	if (p->weight == QUERY_WEIGHT_TIME && (rc = time_weights(store, p, s)) < 0) {
		query_stats_finish(s);
		return set_err(err, -EIO, "could not read the stored samples");
	}
	return 0;
}

double query_stats_mean(const struct query_stats *s, size_t k) {
	const struct stats_acc *acc = s->weight == QUERY_WEIGHT_TIME ? &s->time_acc[k] : &s->acc[k];
	return acc->count > 0 ? stats_mean(acc, query_selection_channel(&s->sel, k)->resolution)
			      : NAN;
}

double query_stats_stddev(const struct query_stats *s, size_t k) {
	const struct stats_acc *acc = s->weight == QUERY_WEIGHT_TIME ? &s->time_acc[k] : &s->acc[k];
	return acc->count > 0
		       ? stats_stddev(acc, query_selection_channel(&s->sel, k)->resolution, 0)
		       : NAN;
}

double query_stats_percentile(const struct query_stats *s, size_t k, double pct) {
	const struct channel *ch = query_selection_channel(&s->sel, k);
	const struct stats_acc *acc = s->weight == QUERY_WEIGHT_TIME ? &s->time_acc[k] : &s->acc[k];
	if (acc->count == 0) {
		return NAN;
	}
	// A cooling state's percentile is a state that occurred, in every answer (CLI, JSON, the
	// dashboard): the inverted CDF, never an interpolation between two states.
	if (s->weight == QUERY_WEIGHT_TIME || ch->kind == CHANNEL_KIND_STATE) {
		return stats_percentile_inverted_cdf(acc, pct, ch->resolution);
	}
	return stats_percentile(acc, pct, ch->resolution);
}

void query_stats_write_json(const struct query_stats *s, struct json *out) {
	json_object_begin(out);
	json_field_int(out, "from", s->from);
	json_field_int(out, "to", s->to);
	json_field_string(out, "weight", query_weight_name(s->weight));
	json_field_int(out, "interval_s", s->interval_s);
	json_field_int(out, "cycles", s->cycles);
	json_field_int(out, "expected_cycles", s->expected_cycles);
	json_field_double(out, "coverage", s->coverage);
	json_field_int(out, "longest_gap_s", s->longest_gap_s);
	json_field_bool(out, "mixed_intervals", s->mixed_intervals);
	json_field_int(out, "unsynced_excluded", s->include_unsynced ? 0 : s->unsynced);
	json_key(out, "channels");
	json_array_begin(out);
	for (size_t k = 0; k < s->sel.n; k++) {
		write_channel_stats(out, s, k);
	}
	json_array_end(out);
	json_object_end(out);
}

int query_stats_json(struct store *store, const struct query_params *p, struct json *out,
		     char **err) {
	struct query_stats s;
	int rc = query_stats_compute(store, p, &s, err);
	if (rc < 0) {
		return rc;
	}
	query_stats_write_json(&s, out);
	query_stats_finish(&s);
	return 0;
}

/* ---- peak ---- */

struct peak_ctx {
	const struct query_selection *sel;
	bool include_unsynced;
	int64_t *ts; // the peak channel's sample times around the maximum
	int64_t *q;
	size_t n, cap;
	// rows: every channel's value at the chosen cycles
	size_t n_rows;
	const int64_t *row_ts;
	int64_t *cells; // n_rows x sel->n
	bool *have;
	int64_t peak_id;
};

static int peak_collect(void *ctx, const struct store_sample *s) {
	struct peak_ctx *pc = ctx;
	if (s->clock == CLOCK_STATE_UNSYNCED && !pc->include_unsynced) {
		return 0;
	}
	pc->ts = xgrow(pc->ts, &pc->cap, pc->n + 1, sizeof(*pc->ts));
	pc->q = xrealloc(pc->q, pc->cap * sizeof(*pc->q));
	pc->ts[pc->n] = s->ts;
	pc->q[pc->n++] = s->q;
	return 0;
}

static int peak_fill(void *ctx, const struct store_sample *s) {
	struct peak_ctx *pc = ctx;
	int slot = query_selection_slot(pc->sel, s->channel_id);
	if (slot < 0 || (s->clock == CLOCK_STATE_UNSYNCED && !pc->include_unsynced)) {
		return 0;
	}
	size_t lo = 0, hi = pc->n_rows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc->row_ts[mid] < s->ts) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo < pc->n_rows && pc->row_ts[lo] == s->ts) {
		pc->cells[lo * pc->sel->n + (size_t)slot] = s->q;
		pc->have[lo * pc->sel->n + (size_t)slot] = true;
	}
	return 0;
}

void query_peak_finish(struct query_peak *pk) {
	free(pk->columns);
	free(pk->row_ts);
	free(pk->cells);
	free(pk->have);
	query_selection_finish(&pk->one);
	query_selection_finish(&pk->all);
	*pk = (struct query_peak){0};
}

/*
 * The peak's table from the rows read around the maximum (@pc): the peak channel's column,
 * then every other channel with a value in those rows (asked for, in their order, or its
 * siblings, then its unit, then the rest), rows x columns into @pk.
 */
static void peak_columns(const struct query_params *p, const struct peak_ctx *pc,
			 const struct channel *pch, struct query_peak *pk) {
	const struct query_selection *all = pc->sel;
	// Columns: the peak channel, then every other channel with a value in these rows.
	size_t *cols = xcalloc(all->n + 1, sizeof(*cols));
	size_t n_cols = 0;
	int peak_slot = query_selection_slot(all, pc->peak_id);
	cols[n_cols++] = (size_t)peak_slot;
	// Unasked, the peak channel's siblings (same source and unit) come first, then the
	// rest of its unit: they are what a narrow table shows.
	size_t prefix = strcspn(pch->key, "/");
	for (int pass = p->n_with ? 2 : 0; pass < 3; pass++) {
		for (size_t k = 0; k < all->n; k++) {
			bool any = p->n_with > 0;
			for (size_t r = 0; r < pc->n_rows && !any; r++) {
				any = pc->have[r * all->n + k];
			}
			const struct channel *ch = query_selection_channel(all, k);
			bool unit = ch->unit && pch->unit && strcmp(ch->unit, pch->unit) == 0;
			bool source = unit && strncmp(ch->key, pch->key, prefix + 1) == 0;
			int rank = p->n_with ? 2 : source ? 0 : unit ? 1 : 2;
			if (any && (int)k != peak_slot && rank == pass) {
				cols[n_cols++] = k;
			}
		}
	}
	// The result in column order: rows x columns.
	pk->n_columns = n_cols;
	pk->columns = xcalloc(n_cols, sizeof(*pk->columns));
	for (size_t c = 0; c < n_cols; c++) {
		pk->columns[c] = query_selection_channel(all, cols[c]);
	}
	pk->n_rows = pc->n_rows;
	pk->row_ts = xcalloc(pc->n_rows, sizeof(*pk->row_ts));
	memcpy(pk->row_ts, pc->row_ts, pc->n_rows * sizeof(*pk->row_ts));
	pk->cells = xcalloc(pc->n_rows * n_cols, sizeof(*pk->cells));
	pk->have = xcalloc(pc->n_rows * n_cols, sizeof(*pk->have));
	for (size_t r = 0; r < pc->n_rows; r++) {
		for (size_t c = 0; c < n_cols; c++) {
			pk->cells[r * n_cols + c] = pc->cells[r * all->n + cols[c]];
			pk->have[r * n_cols + c] = pc->have[r * all->n + cols[c]];
		}
	}
	free(cols);
}

int query_peak_compute(struct store *store, const struct query_params *p, struct query_peak *pk,
		       char **err) {
	*pk = (struct query_peak){0};
	if (p->n_channels != 1) {
		return set_err(err, -EINVAL, "peak needs exactly one channel");
	}
	int rc = query_window(store, p, &pk->from, &pk->to, err);
	if (rc < 0) {
		return rc;
	}
	int64_t from = pk->from, to = pk->to;
	struct query_selection *one = &pk->one, *all = &pk->all;
	if ((rc = query_select(store, p->channels, 1, one, err)) < 0) {
		return rc;
	}
	if (one->n != 1) {
		rc = set_err(err, -EINVAL, "'%s' matches %zu channels; peak needs one",
			     p->channels[0], one->n);
		query_peak_finish(pk);
		return rc;
	}
	// The companions: those asked for (the peak channel always first), else every channel.
	const char **with = xcalloc(p->n_with + 1, sizeof(*with));
	with[0] = query_selection_channel(one, 0)->key;
	for (size_t k = 0; k < p->n_with; k++) {
		with[k + 1] = p->with[k];
	}
	rc = p->n_with ? query_select(store, with, p->n_with + 1, all, err)
		       : query_select(store, NULL, 0, all, err);
	free(with);
	if (rc < 0) {
		query_peak_finish(pk);
		return rc;
	}
	struct cycle_summary cs;
	if ((rc = summarize_cycles(store, p, from, to, 0, 0, &cs, err)) < 0) {
		query_peak_finish(pk);
		return rc;
	}
	const struct channel *pch = query_selection_channel(one, 0);
	pk->channel = pch;
	struct stats_acc acc;
	stats_init(&acc);
	struct peak_ctx pc = {
		.sel = all, .include_unsynced = p->include_unsynced, .peak_id = one->ids[0]};
	struct feed f = {.sel = one,
			 .cs = &cs,
			 .include_unsynced = p->include_unsynced,
			 .raw = stats_raw,
			 .rollup = stats_rollup,
			 .ctx = &acc};
	if (feed_window(store, &f, from, to) < 0) {
		rc = set_err(err, -EIO, "could not read the stored samples");
		goto out;
	}
	if (acc.count == 0) {
		rc = set_err(err, -ENOENT, "%s has no samples in the window", pch->key);
		goto out;
	}
	pk->max_q = acc.max_q;
	pk->max_ts = acc.max_ts;
	// The peak channel's samples around the maximum, generously wide, then N centred on it.
	unsigned want = p->samples ? p->samples : 30;
	int64_t reach = p->around_s > 0 ? p->around_s : (int64_t)want * cs.interval_s * 2 + HOUR_S;
	int64_t a = acc.max_ts - reach < from ? from : acc.max_ts - reach;
	int64_t b = acc.max_ts + reach + 1 > to ? to : acc.max_ts + reach + 1;
	if (store_scan_samples(store, a, b, one->ids, 1, true, peak_collect, &pc) < 0) {
		rc = set_err(err, -EIO, "could not read the stored samples");
		goto out;
	}
	size_t peak_at = pc.n;
	for (size_t i = 0; i < pc.n; i++) {
		if (pc.ts[i] == acc.max_ts) {
			peak_at = i;
			break;
		}
	}
	if (peak_at == pc.n) {
		char iso[TIMEFMT_ISO_LEN];
		timefmt_iso(acc.max_ts, iso);
		rc = set_err(err, -ENOENT,
			     "the raw samples around the maximum of %s (%s) were pruned; only "
			     "hourly rollups remain",
			     pch->key, iso);
		goto out;
	}
	size_t first = peak_at >= want / 2 ? peak_at - want / 2 : 0;
	size_t last = first + want < pc.n ? first + want : pc.n;
	if (last - first < want && last == pc.n) {
		first = pc.n >= want ? pc.n - want : 0;
	}
	if (p->around_s > 0) { // every cycle within the span, however many
		for (first = peak_at; first > 0 && acc.max_ts - pc.ts[first - 1] <= p->around_s;) {
			first--;
		}
		for (last = peak_at + 1; last < pc.n && pc.ts[last] - acc.max_ts <= p->around_s;) {
			last++;
		}
	}
	pc.n_rows = last - first;
	pc.row_ts = pc.ts + first;
	pc.cells = xcalloc(pc.n_rows * (all->n ? all->n : 1), sizeof(*pc.cells));
	pc.have = xcalloc(pc.n_rows * (all->n ? all->n : 1), sizeof(*pc.have));
	if (store_scan_samples(store, pc.row_ts[0], pc.row_ts[pc.n_rows - 1] + 1, NULL, 0, true,
			       peak_fill, &pc) < 0) {
		rc = set_err(err, -EIO, "could not read the stored samples");
		goto out;
	}
	peak_columns(p, &pc, pch, pk);
out:
	free(pc.ts);
	free(pc.q);
	free(pc.cells);
	free(pc.have);
	stats_finish(&acc);
	cycles_finish(&cs);
	if (rc < 0) {
		query_peak_finish(pk);
	}
	return rc;
}

void query_peak_write_json(const struct query_peak *pk, struct json *out) {
	json_object_begin(out);
	json_field_string(out, "key", pk->channel->key);
	json_field_int(out, "from", pk->from);
	json_field_int(out, "to", pk->to);
	json_field_double(out, "max", stats_value(pk->max_q, pk->channel->resolution));
	json_field_int(out, "max_time", pk->max_ts);
	json_key(out, "columns");
	json_array_begin(out);
	for (size_t c = 0; c < pk->n_columns; c++) {
		json_object_begin(out);
		channel_json_identity(out, pk->columns[c]);
		json_object_end(out);
	}
	json_array_end(out);
	json_key(out, "rows");
	json_array_begin(out);
	for (size_t r = 0; r < pk->n_rows; r++) {
		json_array_begin(out);
		json_int(out, pk->row_ts[r]);
		for (size_t c = 0; c < pk->n_columns; c++) {
			size_t cell = r * pk->n_columns + c;
			if (pk->have[cell]) {
				json_value(out, pk->cells[cell], pk->columns[c]->resolution);
			} else {
				json_null(out);
			}
		}
		json_array_end(out);
	}
	json_array_end(out);
	json_object_end(out);
}

int query_peak_json(struct store *store, const struct query_params *p, struct json *out,
		    char **err) {
	struct query_peak pk;
	int rc = query_peak_compute(store, p, &pk, err);
	if (rc < 0) {
		return rc;
	}
	query_peak_write_json(&pk, out);
	query_peak_finish(&pk);
	return 0;
}

/* ---- channel list ---- */

int query_channels_json(struct store *store, const struct query_params *p, struct json *out,
			char **err) {
	struct query_selection sel;
	int rc = query_select(store, p ? p->channels : NULL, p ? p->n_channels : 0, &sel, err);
	if (rc < 0) {
		return rc;
	}
	json_object_begin(out);
	json_key(out, "channels");
	json_array_begin(out);
	for (size_t k = 0; k < sel.n; k++) {
		const struct store_channel *sc = &sel.all[sel.pick[k]];
		json_object_begin(out);
		channel_json_identity(out, &sc->ch);
		json_field_double(out, "resolution", sc->ch.resolution);
		json_field_int(out, "first_seen", sc->first_seen);
		json_field_int(out, "last_seen", sc->last_seen);
		json_field_bool(out, "present", sc->present);
		// The store keeps the meta the source wrote: a JSON object text, emitted as is.
		bool meta = sc->ch.meta && sc->ch.meta[0] == '{';
		json_field_raw(out, "meta", meta ? sc->ch.meta : NULL);
		json_object_end(out);
	}
	json_array_end(out);
	json_object_end(out);
	query_selection_finish(&sel);
	return 0;
}

/* ---- downsampled series ---- */

struct bucket {
	int64_t count, sum_q, min_q, max_q;
};

struct series_ctx {
	struct bucket *b; // n_buckets x channels
	size_t n_buckets, n_channels;
	int64_t base, width;
};

static void bucket_add(struct bucket *b, int64_t count, int64_t sum, int64_t min, int64_t max) {
	if (b->count == 0 || min < b->min_q) {
		b->min_q = min;
	}
	if (b->count == 0 || max > b->max_q) {
		b->max_q = max;
	}
	b->count += count;
	b->sum_q += sum;
}

static struct bucket *bucket_at(struct series_ctx *sc, int slot, int64_t ts) {
	int64_t i = (ts - sc->base) / sc->width;
	if (i < 0 || (size_t)i >= sc->n_buckets) {
		return NULL;
	}
	return &sc->b[(size_t)i * sc->n_channels + (size_t)slot];
}

static int series_raw(void *ctx, int slot, const struct store_sample *s) {
	struct bucket *b = bucket_at(ctx, slot, s->ts);
	if (b) {
		bucket_add(b, 1, s->q, s->q, s->q);
	}
	return 0;
}

static int series_rollup(void *ctx, int slot, const struct store_rollup *r) {
	struct bucket *b = bucket_at(ctx, slot, r->hour);
	if (b) {
		bucket_add(b, r->count, r->sum_q, r->min_q, r->max_q);
	}
	return 0;
}

int query_samples_json(struct store *store, const struct query_params *p, struct json *out,
		       char **err) {
	int64_t from, to;
	int rc = query_window(store, p, &from, &to, err);
	if (rc < 0) {
		return rc;
	}
	unsigned max_points = p->max_points ? p->max_points : 1000;
	struct series_ctx sc = {.base = from};
	sc.width = (to - from + max_points - 1) / max_points;
	if (sc.width >= HOUR_S) {
		// Hour-aligned buckets of whole hours can be served from rollups.
		sc.base = timefmt_floor(from, HOUR_S);
		sc.width = (to - sc.base + max_points - 1) / max_points;
		sc.width = (sc.width + HOUR_S - 1) / HOUR_S * HOUR_S;
	}
	if (sc.width < 1) {
		sc.width = 1;
	}
	sc.n_buckets = (size_t)((to - sc.base + sc.width - 1) / sc.width);
	struct query_selection sel;
	if ((rc = query_select(store, p->channels, p->n_channels, &sel, err)) < 0) {
		return rc;
	}
	struct cycle_summary cs = {0};
	bool rollups = sc.width % HOUR_S == 0;
	if (rollups && p->include_unsynced &&
	    (rc = summarize_cycles(store, p, from, to, 0, 0, &cs, err)) < 0) {
		query_selection_finish(&sel);
		return rc;
	}
	sc.n_channels = sel.n;
	sc.b = xcalloc(sc.n_buckets * (sel.n ? sel.n : 1), sizeof(*sc.b));
	struct feed f = {.sel = &sel,
			 .cs = rollups && p->include_unsynced ? &cs : NULL,
			 .include_unsynced = p->include_unsynced,
			 .raw = series_raw,
			 .rollup = rollups ? series_rollup : NULL,
			 .ctx = &sc};
	if (feed_window(store, &f, from, to) < 0) {
		rc = set_err(err, -EIO, "could not read the stored samples");
		goto out;
	}
	json_object_begin(out);
	json_field_int(out, "from", from);
	json_field_int(out, "to", to);
	json_field_int(out, "bucket_s", sc.width);
	json_key(out, "channels");
	json_array_begin(out);
	for (size_t k = 0; k < sel.n; k++) {
		const struct channel *ch = query_selection_channel(&sel, k);
		json_object_begin(out);
		channel_json_identity(out, ch);
		json_key(out, "points");
		json_array_begin(out);
		for (size_t i = 0; i < sc.n_buckets; i++) {
			const struct bucket *b = &sc.b[i * sel.n + k];
			if (b->count == 0) {
				continue;
			}
			json_array_begin(out);
			json_int(out, sc.base + (int64_t)i * sc.width);
			json_value(out, b->min_q, ch->resolution);
			json_value(out, b->max_q, ch->resolution);
			json_double(out, (double)b->sum_q / (double)b->count * ch->resolution);
			json_int(out, b->count);
			json_array_end(out);
		}
		json_array_end(out);
		json_object_end(out);
	}
	json_array_end(out);
	json_object_end(out);
out:
	free(sc.b);
	cycles_finish(&cs);
	query_selection_finish(&sel);
	return rc;
}
