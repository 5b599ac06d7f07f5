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

#include "stats.h"
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

static int64_t floor_hour(int64_t ts) {
	int64_t r = ts % HOUR_S;
	return ts - (r < 0 ? r + HOUR_S : r);
}

static int64_t ceil_hour(int64_t ts) {
	int64_t f = floor_hour(ts);
	return f == ts ? ts : f + HOUR_S;
}

static int64_t floor_day(int64_t ts) {
	int64_t d = ts / DAY_S * DAY_S;
	return d > ts ? d - DAY_S : d;
}

static int64_t ceil_day(int64_t ts) {
	int64_t d = floor_day(ts);
	return d < ts ? d + DAY_S : d;
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

/* Levenshtein distance, case-insensitive, of two short names (longer ones count as far). */
static size_t name_distance(const char *a, const char *b) {
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64) {
		return SIZE_MAX;
	}
	size_t row[65];
	for (size_t j = 0; j <= lb; j++) {
		row[j] = j;
	}
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			bool same = tolower((unsigned char)a[i - 1]) ==
				    tolower((unsigned char)b[j - 1]);
			size_t best = diag + !same;
			best = up + 1 < best ? up + 1 : best;
			best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* How far @name is from @pattern: 0 when it contains it (case aside), else the edit distance. */
static size_t name_score(const char *pattern, const char *name) {
	if (strlen(pattern) >= 3 && strcasestr(name, pattern)) {
		return 0;
	}
	return name_distance(pattern, name);
}

/* The nearest of a channel's key, the key's last part and its label to @pattern. */
static size_t channel_score(const char *pattern, const struct channel *ch) {
	size_t best = name_score(pattern, ch->key);
	const char *last = strrchr(ch->key, '/');
	size_t s = last ? name_score(pattern, last + 1) : SIZE_MAX;
	best = s < best ? s : best;
	s = ch->label ? name_score(pattern, ch->label) : SIZE_MAX;
	return s < best ? s : best;
}

/* Appends "; did you mean A, B?" naming the (up to three) nearest channels, if any is near. */
static void suggest_channels(struct buf *b, const struct store_channel *all, size_t n,
			     const char *pattern) {
	size_t len = strlen(pattern), limit = len / 4 > 2 ? len / 4 : 2, best = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t s = channel_score(pattern, &all[i].ch);
		best = s < best ? s : best;
	}
	size_t shown = 0;
	for (size_t i = 0; i < n && shown < 3 && best <= limit; i++) {
		if (channel_score(pattern, &all[i].ch) == best) {
			buf_printf(b, "%s%s", shown ? ", " : "; did you mean ", all[i].ch.key);
			shown++;
		}
	}
	if (shown) {
		buf_putc(b, '?');
	}
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

/*
 * Stored cycles over expected ones, at most 1: cycles closer than the interval (the cadence
 * was changed for a while) do not make a window more than fully covered.
 */
static double coverage(int64_t have, int64_t expected) {
	if (expected <= 0) {
		return 0;
	}
	return have >= expected ? 1 : (double)have / (double)expected;
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
		*err = to_is_now ? xasprintf("%s is not before now", names[0])
				 : xasprintf("%s must be before %s", names[0], names[1]);
		return -EINVAL;
	}
	// to - from may not fit in int64_t: compare without subtracting first
	if (max_window_s > 0 &&
	    (from < 0 && to > INT64_MAX + from ? true : to - from > max_window_s)) {
		*bad = to_is_now ? 0 : 1;
		if (from < 0 && to > INT64_MAX + from) {
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
	}
	if (*from >= *to) {
		return set_err(err, -EINVAL, "empty window: from (%lld) is not before to (%lld)",
			       (long long)*from, (long long)*to);
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
	int64_t longest_gap_s;
	int64_t *unsynced_hours; // hours holding unsynced cycles, ascending
	size_t n_unsynced_hours, cap_unsynced_hours;
	// scan state
	bool include_unsynced;
	int64_t last_ts;
	struct stats_acc spacing;
};

static int on_cycle(void *ctx, const struct store_cycle *c) {
	struct cycle_summary *cs = ctx;
	if (c->clock == CLOCK_STATE_UNSYNCED) {
		cs->unsynced++;
		int64_t hour = floor_hour(c->ts);
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
	int64_t gap = c->ts - cs->last_ts;
	if (cs->cycles > 0) {
		stats_add(&cs->spacing, gap, c->ts);
	}
	if (gap > cs->longest_gap_s) {
		cs->longest_gap_s = gap;
	}
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
	int64_t gap = d->first_ts - cs->last_ts;
	if (cs->cycles > 0) {
		stats_add(&cs->spacing, gap, d->first_ts);
	}
	if (gap > cs->longest_gap_s) {
		cs->longest_gap_s = gap;
	}
	if (d->n_spacings > 0) {
		stats_add_hist(&cs->spacing, d->spacing_s, d->spacing_count, d->n_spacings,
			       d->last_ts);
		if (d->spacing_s[d->n_spacings - 1] > cs->longest_gap_s) {
			cs->longest_gap_s = d->spacing_s[d->n_spacings - 1];
		}
	}
	cs->last_ts = d->last_ts;
	cs->cycles += d->cycles;
	return 0;
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
	*cs = (struct cycle_summary){
		.from = from, .to = to, .include_unsynced = p->include_unsynced, .last_ts = from};
	stats_init(&cs->spacing);
	int rc = 0;
	int64_t rest = from;
	if (d0 < d1) {
		rc = store_scan_cycles(store, from, d0, on_cycle, cs);
		rc = rc < 0 ? rc : store_scan_cycle_days(store, d0, d1, on_cycle_day, cs);
		rest = d1;
	}
	if (rc < 0 || store_scan_cycles(store, rest, to, on_cycle, cs) < 0) {
		cycles_finish(cs);
		return set_err(err, -EIO, "could not read the stored cycles");
	}
	if (to - cs->last_ts > cs->longest_gap_s) { // the window's end counts as a cycle
		cs->longest_gap_s = to - cs->last_ts;
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
	return 0;
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
	int64_t h0 = ceil_hour(from), h1 = floor_hour(to), horizon = INT64_MIN;
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

/* The identity every per-channel object starts with: key, label and unit. */
static void write_channel_ident(struct json *out, const struct channel *ch) {
	json_key(out, "key");
	json_string(out, ch->key);
	json_key(out, "label");
	json_string(out, ch->label);
	json_key(out, "unit");
	json_string(out, ch->unit);
}

static void write_channel_stats(struct json *out, const struct channel *ch,
				const struct stats_acc *acc, const struct query_params *p,
				const struct cycle_summary *cs, int64_t unsynced_excluded) {
	int64_t expected = cs->expected;
	double res = ch->resolution;
	json_object_begin(out);
	write_channel_ident(out, ch);
	json_key(out, "kind");
	json_string(out, channel_kind_name(ch->kind));
	json_key(out, "resolution");
	json_double(out, res);
	json_key(out, "count");
	json_int(out, acc->count);
	json_key(out, "coverage");
	json_double(out, coverage(acc->count, expected));
	/*
	 * A channel with a value in every counted cycle has exactly the cycles' gaps. Otherwise
	 * where its missing values fall is not recorded in hourly rollups: null.
	 */
	json_key(out, "longest_gap_s");
	acc->count == cs->cycles ? json_int(out, cs->longest_gap_s) : json_null(out);
	bool any = acc->count > 0;
	json_key(out, "mean");
	any ? json_double(out, stats_mean(acc, res)) : json_null(out);
	json_key(out, "stddev");
	any ? json_double(out, stats_stddev(acc, res, 0)) : json_null(out);
	json_key(out, "min");
	any ? json_value(out, acc->min_q, res) : json_null(out);
	json_key(out, "p50");
	any ? json_double(out, stats_percentile(acc, 50, res)) : json_null(out);
	json_key(out, "p95");
	any ? json_double(out, stats_percentile(acc, 95, res)) : json_null(out);
	json_key(out, "max");
	any ? json_value(out, acc->max_q, res) : json_null(out);
	json_key(out, "max_time");
	any ? json_int(out, acc->max_ts) : json_null(out);
	for (size_t k = 0; k < p->n_percentiles; k++) {
		char key[32];
		percentile_key(key, sizeof(key), p->percentiles[k]);
		json_key(out, key);
		any ? json_double(out, stats_percentile(acc, p->percentiles[k], res))
		    : json_null(out);
	}
	json_key(out, "unsynced_excluded");
	json_int(out, unsynced_excluded);
	size_t n_bins;
	const struct stats_bin *bins = stats_bins(acc, &n_bins);
	if (ch->kind == CHANNEL_KIND_FREQUENCY && n_bins <= TIME_IN_STATE_MAX) {
		// Each sample stands for one cycle, so a value's share of samples is its share of
		// time.
		json_key(out, "time_in_state");
		json_array_begin(out);
		for (size_t i = 0; i < n_bins; i++) {
			json_object_begin(out);
			json_key(out, "value");
			json_value(out, bins[i].q, res);
			json_key(out, "share");
			json_double(out, (double)bins[i].count / (double)acc->count);
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

/* A computed window: what both the JSON and the table writers print. */
struct window_stats {
	int64_t from, to;
	struct query_selection sel;
	struct cycle_summary cs;
	struct stats_acc *acc; // per selected channel, sealed
	int64_t *unsynced;     // per selected channel: samples excluded as unsynced
};

static void window_finish(struct window_stats *w) {
	for (size_t k = 0; k < w->sel.n; k++) {
		stats_finish(&w->acc[k]);
	}
	free(w->acc);
	free(w->unsynced);
	cycles_finish(&w->cs);
	query_selection_finish(&w->sel);
}

static int compute_stats(struct store *store, const struct query_params *p, struct window_stats *w,
			 char **err) {
	*w = (struct window_stats){0};
	int rc = check_params(p, err);
	if (rc < 0 || (rc = query_window(store, p, &w->from, &w->to, err)) < 0) {
		return rc;
	}
	if ((rc = query_select(store, p->channels, p->n_channels, &w->sel, err)) < 0) {
		return rc;
	}
	// Whole merged days come from the daily level: one row a day instead of 24 per channel
	// and one per cycle. Unsynced hours are read raw when included, so then none are used.
	int64_t d0 = ceil_day(w->from), d1 = floor_day(w->to), day_horizon = 0;
	if (p->include_unsynced || d0 >= d1 || store_day_horizon(store, &day_horizon) < 0) {
		day_horizon = d0;
	}
	d1 = d1 < day_horizon ? d1 : day_horizon;
	d1 = d1 > d0 ? d1 : d0;
	if ((rc = summarize_cycles(store, p, w->from, w->to, d0, d1, &w->cs, err)) < 0) {
		query_selection_finish(&w->sel);
		return rc;
	}
	size_t n = w->sel.n ? w->sel.n : 1;
	w->acc = xcalloc(n, sizeof(*w->acc));
	w->unsynced = xcalloc(n, sizeof(*w->unsynced));
	for (size_t k = 0; k < w->sel.n; k++) {
		stats_init(&w->acc[k]);
	}
	struct feed f = {.sel = &w->sel,
			 .cs = &w->cs,
			 .include_unsynced = p->include_unsynced,
			 .raw = stats_raw,
			 .rollup = stats_rollup,
			 .ctx = w->acc,
			 .unsynced_excluded = w->unsynced};
	if (d0 < d1) {
		rc = feed_window(store, &f, w->from, d0);
		rc = rc < 0 ? rc
			    : store_scan_rollup_days(store, d0, d1, w->sel.ids, w->sel.n,
						     feed_rollup, &f);
		rc = rc < 0 ? rc : feed_window(store, &f, d1, w->to);
	} else {
		rc = feed_window(store, &f, w->from, w->to);
	}
	if (rc < 0) {
		window_finish(w);
		return set_err(err, -EIO, "could not read the stored samples");
	}
	for (size_t k = 0; k < w->sel.n; k++) {
		stats_seal(&w->acc[k]);
	}
	return 0;
}

int query_stats_json(struct store *store, const struct query_params *p, struct json *out,
		     char **err) {
	struct window_stats w;
	int rc = compute_stats(store, p, &w, err);
	if (rc < 0) {
		return rc;
	}
	json_object_begin(out);
	json_key(out, "from");
	json_int(out, w.from);
	json_key(out, "to");
	json_int(out, w.to);
	json_key(out, "interval_s");
	json_int(out, w.cs.interval_s);
	json_key(out, "cycles");
	json_int(out, w.cs.cycles);
	json_key(out, "expected_cycles");
	json_int(out, w.cs.expected);
	json_key(out, "coverage");
	json_double(out, coverage(w.cs.cycles, w.cs.expected));
	json_key(out, "longest_gap_s");
	json_int(out, w.cs.longest_gap_s);
	json_key(out, "unsynced_excluded");
	json_int(out, p->include_unsynced ? 0 : w.cs.unsynced);
	json_key(out, "channels");
	json_array_begin(out);
	for (size_t k = 0; k < w.sel.n; k++) {
		write_channel_stats(out, query_selection_channel(&w.sel, k), &w.acc[k], p, &w.cs,
				    w.unsynced[k]);
	}
	json_array_end(out);
	json_object_end(out);
	window_finish(&w);
	return 0;
}

/* ---- human-readable tables ---- */

/* How a unit reads in a table, and the factor from the stored unit (hertz print as MHz). */
static const char *display_unit(const char *unit, double *factor) {
	static const struct {
		const char *unit, *symbol;
		double factor;
	} units[] = {
		{"celsius", "°C", 1},    {"hertz", "MHz", 1e-6}, {"volts", "V", 1},
		{"millivolts", "mV", 1}, {"amperes", "A", 1},    {"watts", "W", 1},
		{"joules", "J", 1},      {"rpm", "rpm", 1},      {"percent", "%", 1},
		{"ohms", "ohm", 1},
	};
	*factor = 1;
	for (size_t i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].unit) == 0) {
			*factor = units[i].factor;
			return units[i].symbol;
		}
	}
	return unit ? unit : "";
}

static int display_digits(const struct channel *ch, double factor) {
	if (ch->unit && strcmp(ch->unit, "hertz") == 0) {
		return 0; // operating points are whole MHz
	}
	int d = stats_resolution_digits(ch->resolution * factor);
	return d < 0 ? 3 : d > 3 ? 3 : d;
}

void query_format_duration(char *out, size_t len, int64_t s) {
	if (s >= 2 * 86400) {
		snprintf(out, len, "%.3g days", (double)s / 86400);
	} else if (s >= 2 * 3600) {
		snprintf(out, len, "%.3g hours", (double)s / 3600);
	} else if (s >= 120) {
		snprintf(out, len, "%.3g minutes", (double)s / 60);
	} else {
		snprintf(out, len, "%lld s", (long long)s);
	}
}

/* A table whose columns are sized to their widest cell; cells are copied. */
struct table {
	size_t cols, rows;
	char **cells; // rows x cols
	bool *right;  // per column: right-aligned (numbers)
};

static void table_init(struct table *t, size_t cols) {
	*t = (struct table){.cols = cols};
	t->right = xcalloc(cols, sizeof(*t->right));
}

static void table_row(struct table *t) {
	t->rows++;
	t->cells = xrealloc(t->cells, t->rows * t->cols * sizeof(*t->cells));
	memset(t->cells + (t->rows - 1) * t->cols, 0, t->cols * sizeof(*t->cells));
}

static void table_set(struct table *t, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void table_set(struct table *t, size_t col, const char *fmt, ...) {
	char **cell = &t->cells[(t->rows - 1) * t->cols + col];
	free(*cell);
	va_list ap;
	va_start(ap, fmt);
	*cell = xvasprintf(fmt, ap);
	va_end(ap);
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t text_width(const char *s) {
	size_t w = 0;
	for (; *s; s++) {
		w += ((unsigned char)*s & 0xC0) != 0x80;
	}
	return w;
}

static void table_print(struct table *t, struct buf *out) {
	size_t *width = xcalloc(t->cols, sizeof(*width));
	for (size_t r = 0; r < t->rows; r++) {
		for (size_t c = 0; c < t->cols; c++) {
			const char *cell = t->cells[r * t->cols + c];
			size_t w = cell ? text_width(cell) : 0;
			width[c] = w > width[c] ? w : width[c];
		}
	}
	for (size_t r = 0; r < t->rows; r++) {
		for (size_t c = 0; c < t->cols; c++) {
			const char *cell = t->cells[r * t->cols + c];
			cell = cell ? cell : "";
			size_t pad = width[c] - text_width(cell);
			if (t->right[c] && r > 0) {
				buf_printf(out, "%*s%s", (int)pad, "", cell);
			} else if (c + 1 < t->cols) {
				buf_printf(out, "%s%*s", cell, (int)pad, "");
			} else {
				buf_puts(out, cell);
			}
			buf_puts(out, c + 1 < t->cols ? "  " : "\n");
		}
	}
	for (size_t i = 0; i < t->rows * t->cols; i++) {
		free(t->cells[i]);
	}
	free(t->cells);
	free(t->right);
	free(width);
}

static void format_shown(char *out, size_t len, double v, double factor, int digits) {
	if (isnan(v)) {
		snprintf(out, len, "-");
	} else {
		snprintf(out, len, "%.*f", digits, v * factor);
	}
}

int query_stats_text(struct store *store, const struct query_params *p, struct buf *out,
		     char **err) {
	struct window_stats w;
	int rc = compute_stats(store, p, &w, err);
	if (rc < 0) {
		return rc;
	}
	char span[32], gap[32], from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
	query_format_duration(span, sizeof(span), w.to - w.from);
	query_format_duration(gap, sizeof(gap), w.cs.longest_gap_s);
	timefmt_iso(w.from, from);
	timefmt_iso(w.to, to);
	buf_printf(out, "%lld samples over %s (%s .. %s), coverage %.1f %%, longest gap %s",
		   (long long)w.cs.cycles, span, from, to,
		   100.0 * coverage(w.cs.cycles, w.cs.expected), gap);
	if (!p->include_unsynced && w.cs.unsynced > 0) {
		buf_printf(out, ", %lld unsynced cycles excluded", (long long)w.cs.unsynced);
	}
	buf_puts(out, "\n\n");
	size_t fixed = 10, cols = fixed + p->n_percentiles;
	struct table t;
	table_init(&t, cols);
	table_row(&t);
	const char *head[] = {"channel", "unit", "count", "mean", "stddev", "min", "median", "p95"};
	for (size_t c = 0; c < 8; c++) {
		table_set(&t, c, "%s", head[c]);
	}
	for (size_t k = 0; k < p->n_percentiles; k++) {
		table_set(&t, 8 + k, "p%.10g", p->percentiles[k]);
	}
	table_set(&t, cols - 2, "max");
	table_set(&t, cols - 1, "max at");
	for (size_t c = 2; c < cols - 1; c++) {
		t.right[c] = true;
	}
	struct buf states;
	buf_init(&states);
	for (size_t k = 0; k < w.sel.n; k++) {
		const struct channel *ch = query_selection_channel(&w.sel, k);
		struct stats_acc *acc = &w.acc[k];
		double factor;
		const char *unit = display_unit(ch->unit, &factor);
		int digits = display_digits(ch, factor);
		double res = ch->resolution;
		bool any = acc->count > 0;
		char v[64];
		table_row(&t);
		table_set(&t, 0, "%s", ch->key);
		table_set(&t, 1, "%s", unit);
		table_set(&t, 2, "%lld", (long long)acc->count);
		double vals[5 + QUERY_MAX_PERCENTILES] = {0};
		size_t nv = 0;
		vals[nv++] = any ? stats_mean(acc, res) : NAN;
		vals[nv++] = any ? stats_stddev(acc, res, 0) : NAN;
		vals[nv++] = any ? stats_value(acc->min_q, res) : NAN;
		vals[nv++] = any ? stats_percentile(acc, 50, res) : NAN;
		vals[nv++] = any ? stats_percentile(acc, 95, res) : NAN;
		for (size_t e = 0; e < p->n_percentiles && e < QUERY_MAX_PERCENTILES; e++) {
			vals[nv++] = any ? stats_percentile(acc, p->percentiles[e], res) : NAN;
		}
		for (size_t i = 0; i < nv; i++) {
			// the mean and stddev get one more place than the sensor has
			format_shown(v, sizeof(v), vals[i], factor, digits + (i < 2 && digits < 3));
			table_set(&t, 3 + i, "%s", v);
		}
		format_shown(v, sizeof(v), any ? stats_value(acc->max_q, res) : NAN, factor,
			     digits);
		table_set(&t, cols - 2, "%s", v);
		if (any) {
			char at[TIMEFMT_ISO_LEN];
			timefmt_iso(acc->max_ts, at);
			table_set(&t, cols - 1, "%s", at);
		}
		size_t n_bins;
		const struct stats_bin *bins = stats_bins(acc, &n_bins);
		if (ch->kind == CHANNEL_KIND_FREQUENCY && any && n_bins <= 16) {
			buf_printf(&states, "%s:", ch->key);
			for (size_t i = n_bins; i-- > 0;) {
				format_shown(v, sizeof(v), stats_value(bins[i].q, res), factor,
					     digits);
				buf_printf(&states, " %s %s %.1f %%%s", v, unit,
					   100.0 * (double)bins[i].count / (double)acc->count,
					   i ? "," : "");
			}
			buf_putc(&states, '\n');
		}
	}
	table_print(&t, out);
	if (states.len) {
		buf_puts(out, "\ntime in state:\n");
		buf_puts(out, states.data);
	}
	buf_finish(&states);
	window_finish(&w);
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

/* The last part of a key ("soc-thermal"), or the whole key when another column shares it. */
static const char *short_name(const struct query_selection *all, const size_t *cols, size_t n_cols,
			      size_t c) {
	const char *key = query_selection_channel(all, cols[c])->key;
	const char *last = strrchr(key, '/') ? strrchr(key, '/') + 1 : key;
	for (size_t o = 0; o < n_cols; o++) {
		const char *other = query_selection_channel(all, cols[o])->key;
		const char *olast = strrchr(other, '/') ? strrchr(other, '/') + 1 : other;
		if (o != c && strcmp(last, olast) == 0) {
			return key;
		}
	}
	return last;
}

#define PEAK_TEXT_COLUMNS 100 // a terminal's width, give or take

/*
 * The peak as a table: by default short names with the unit below them and only as many
 * companions as fit PEAK_TEXT_COLUMNS, the rest named in one line; p->wide: every column with
 * its full key and unit, however wide.
 */
static void peak_text(struct buf *text, const struct peak_ctx *pc,
		      const struct query_selection *all, const struct channel *pch,
		      const struct stats_acc *acc, const size_t *cols, size_t n_cols,
		      const struct query_params *p) {
	char at[TIMEFMT_ISO_LEN], v[64];
	double factor;
	const char *unit = display_unit(pch->unit, &factor);
	timefmt_iso(acc->max_ts, at);
	format_shown(v, sizeof(v), stats_value(acc->max_q, pch->resolution), factor,
		     display_digits(pch, factor));
	buf_printf(text, "maximum of %s: %s %s at %s; %zu cycles around it\n\n", pch->key, v, unit,
		   at, pc->n_rows);
	// One day: times without the date (given above); else "MM-DD HH:MM:SS".
	int64_t d0 = pc->row_ts[0], d1 = pc->row_ts[pc->n_rows - 1];
	bool one_day = d0 - (d0 % 86400 + 86400) % 86400 == d1 - (d1 % 86400 + 86400) % 86400;
	size_t time_from = one_day ? 11 : 5, time_len = one_day ? 8 : 14;
	size_t shown = n_cols, used = time_len + 2;
	if (!p->wide) {
		// Columns in order while they fit: the widest of the name, the unit and the values.
		for (shown = 0; shown < n_cols; shown++) {
			const struct channel *ch = query_selection_channel(all, cols[shown]);
			size_t w = text_width(short_name(all, cols, n_cols, shown));
			size_t uw = text_width(display_unit(ch->unit, &factor));
			w = uw > w ? uw : w;
			for (size_t r = 0; r < pc->n_rows; r++) {
				size_t cell = r * all->n + cols[shown];
				format_shown(v, sizeof(v),
					     pc->have[cell]
						     ? stats_value(pc->cells[cell], ch->resolution)
						     : NAN,
					     factor, display_digits(ch, factor));
				w = strlen(v) > w ? strlen(v) : w;
			}
			if (shown > 0 && used + 2 + w > PEAK_TEXT_COLUMNS) {
				break;
			}
			used += 2 + w;
		}
	}
	struct table t;
	table_init(&t, shown + 1);
	table_row(&t);
	table_set(&t, 0, "time");
	for (size_t c = 0; c < shown; c++) {
		const struct channel *ch = query_selection_channel(all, cols[c]);
		if (p->wide) {
			table_set(&t, c + 1, "%s (%s)", ch->key, display_unit(ch->unit, &factor));
		} else {
			table_set(&t, c + 1, "%s", short_name(all, cols, n_cols, c));
		}
		t.right[c + 1] = true;
	}
	if (!p->wide) {
		table_row(&t);
		table_set(&t, 0, "(UTC)");
		for (size_t c = 0; c < shown; c++) {
			table_set(
				&t, c + 1, "%s",
				display_unit(query_selection_channel(all, cols[c])->unit, &factor));
		}
	}
	for (size_t r = 0; r < pc->n_rows; r++) {
		table_row(&t);
		timefmt_iso(pc->row_ts[r], at);
		if (p->wide) {
			table_set(&t, 0, "%s%s", at, pc->row_ts[r] == acc->max_ts ? " *" : "");
		} else {
			table_set(&t, 0, "%.*s%s", (int)time_len, at + time_from,
				  pc->row_ts[r] == acc->max_ts ? " *" : "");
		}
		for (size_t c = 0; c < shown; c++) {
			const struct channel *ch = query_selection_channel(all, cols[c]);
			size_t cell = r * all->n + cols[c];
			display_unit(ch->unit, &factor);
			format_shown(v, sizeof(v),
				     pc->have[cell] ? stats_value(pc->cells[cell], ch->resolution)
						    : NAN,
				     factor, display_digits(ch, factor));
			table_set(&t, c + 1, "%s", v);
		}
	}
	table_print(&t, text);
	if (shown < n_cols) {
		buf_printf(
			text,
			"\n%zu more channels not shown: choose companions with --with KEY|GLOB|LABEL, "
			"or --wide for all\n",
			n_cols - shown);
	}
}

/* The peak as JSON into @out, or as a table into @text when @out is NULL. */
static int peak_run(struct store *store, const struct query_params *p, struct json *out,
		    struct buf *text, char **err) {
	if (p->n_channels != 1) {
		return set_err(err, -EINVAL, "peak needs exactly one channel");
	}
	int64_t from, to;
	int rc = query_window(store, p, &from, &to, err);
	if (rc < 0) {
		return rc;
	}
	struct query_selection one, all;
	if ((rc = query_select(store, p->channels, 1, &one, err)) < 0) {
		return rc;
	}
	if (one.n != 1) {
		rc = set_err(err, -EINVAL, "'%s' matches %zu channels; peak needs one",
			     p->channels[0], one.n);
		query_selection_finish(&one);
		return rc;
	}
	// The companions: those asked for (the peak channel always first), else every channel.
	const char **with = xcalloc(p->n_with + 1, sizeof(*with));
	with[0] = query_selection_channel(&one, 0)->key;
	for (size_t k = 0; k < p->n_with; k++) {
		with[k + 1] = p->with[k];
	}
	rc = p->n_with ? query_select(store, with, p->n_with + 1, &all, err)
		       : query_select(store, NULL, 0, &all, err);
	free(with);
	if (rc < 0) {
		query_selection_finish(&one);
		return rc;
	}
	struct cycle_summary cs;
	if ((rc = summarize_cycles(store, p, from, to, 0, 0, &cs, err)) < 0) {
		query_selection_finish(&one);
		query_selection_finish(&all);
		return rc;
	}
	const struct channel *pch = query_selection_channel(&one, 0);
	struct stats_acc acc;
	stats_init(&acc);
	struct peak_ctx pc = {
		.sel = &all, .include_unsynced = p->include_unsynced, .peak_id = one.ids[0]};
	struct feed f = {.sel = &one,
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
	// The peak channel's samples around the maximum, generously wide, then N centred on it.
	unsigned want = p->samples ? p->samples : 30;
	int64_t reach = p->around_s > 0 ? p->around_s : (int64_t)want * cs.interval_s * 2 + HOUR_S;
	int64_t a = acc.max_ts - reach < from ? from : acc.max_ts - reach;
	int64_t b = acc.max_ts + reach + 1 > to ? to : acc.max_ts + reach + 1;
	if (store_scan_samples(store, a, b, one.ids, 1, true, peak_collect, &pc) < 0) {
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
	pc.cells = xcalloc(pc.n_rows * (all.n ? all.n : 1), sizeof(*pc.cells));
	pc.have = xcalloc(pc.n_rows * (all.n ? all.n : 1), sizeof(*pc.have));
	if (store_scan_samples(store, pc.row_ts[0], pc.row_ts[pc.n_rows - 1] + 1, NULL, 0, true,
			       peak_fill, &pc) < 0) {
		rc = set_err(err, -EIO, "could not read the stored samples");
		goto out;
	}
	// Columns: the peak channel, then every other channel with a value in these rows.
	size_t *cols = xcalloc(all.n + 1, sizeof(*cols));
	size_t n_cols = 0;
	int peak_slot = query_selection_slot(&all, pc.peak_id);
	cols[n_cols++] = (size_t)peak_slot;
	// Unasked, the peak channel's siblings (same source and unit) come first, then the
	// rest of its unit: they are what a narrow table shows.
	size_t prefix = strcspn(pch->key, "/");
	for (int pass = p->n_with ? 2 : 0; pass < 3; pass++) {
		for (size_t k = 0; k < all.n; k++) {
			bool any = p->n_with > 0;
			for (size_t r = 0; r < pc.n_rows && !any; r++) {
				any = pc.have[r * all.n + k];
			}
			const struct channel *ch = query_selection_channel(&all, k);
			bool unit = ch->unit && pch->unit && strcmp(ch->unit, pch->unit) == 0;
			bool source = unit && strncmp(ch->key, pch->key, prefix + 1) == 0;
			int rank = p->n_with ? 2 : source ? 0 : unit ? 1 : 2;
			if (any && (int)k != peak_slot && rank == pass) {
				cols[n_cols++] = k;
			}
		}
	}
	if (out) {
		json_object_begin(out);
		json_key(out, "key");
		json_string(out, pch->key);
		json_key(out, "from");
		json_int(out, from);
		json_key(out, "to");
		json_int(out, to);
		json_key(out, "max");
		json_value(out, acc.max_q, pch->resolution);
		json_key(out, "max_time");
		json_int(out, acc.max_ts);
		json_key(out, "columns");
		json_array_begin(out);
		for (size_t c = 0; c < n_cols; c++) {
			const struct channel *ch = query_selection_channel(&all, cols[c]);
			json_object_begin(out);
			write_channel_ident(out, ch);
			json_object_end(out);
		}
		json_array_end(out);
		json_key(out, "rows");
		json_array_begin(out);
		for (size_t r = 0; r < pc.n_rows; r++) {
			json_array_begin(out);
			json_int(out, pc.row_ts[r]);
			for (size_t c = 0; c < n_cols; c++) {
				size_t cell = r * all.n + cols[c];
				if (pc.have[cell]) {
					json_value(
						out, pc.cells[cell],
						query_selection_channel(&all, cols[c])->resolution);
				} else {
					json_null(out);
				}
			}
			json_array_end(out);
		}
		json_array_end(out);
		json_object_end(out);
	} else {
		peak_text(text, &pc, &all, pch, &acc, cols, n_cols, p);
	}
	free(cols);
out:
	free(pc.ts);
	free(pc.q);
	free(pc.cells);
	free(pc.have);
	stats_finish(&acc);
	cycles_finish(&cs);
	query_selection_finish(&one);
	query_selection_finish(&all);
	return rc;
}

int query_peak_json(struct store *store, const struct query_params *p, struct json *out,
		    char **err) {
	return peak_run(store, p, out, NULL, err);
}

int query_peak_text(struct store *store, const struct query_params *p, struct buf *out,
		    char **err) {
	return peak_run(store, p, NULL, out, err);
}

/* ---- channel list ---- */

int query_channels_text(struct store *store, const struct query_params *p, struct buf *out,
			char **err) {
	struct query_selection sel;
	int rc = query_select(store, p ? p->channels : NULL, p ? p->n_channels : 0, &sel, err);
	if (rc < 0) {
		return rc;
	}
	struct table t;
	table_init(&t, 7);
	table_row(&t);
	const char *head[] = {"channel",    "label",     "kind", "unit",
			      "first seen", "last seen", "state"};
	for (size_t c = 0; c < 7; c++) {
		table_set(&t, c, "%s", head[c]);
	}
	for (size_t k = 0; k < sel.n; k++) {
		const struct store_channel *sc = &sel.all[sel.pick[k]];
		char first[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
		double factor;
		timefmt_iso(sc->first_seen, first);
		timefmt_iso(sc->last_seen, last);
		table_row(&t);
		table_set(&t, 0, "%s", sc->ch.key);
		table_set(&t, 1, "%s", sc->ch.label ? sc->ch.label : "");
		table_set(&t, 2, "%s", channel_kind_name(sc->ch.kind));
		table_set(&t, 3, "%s", display_unit(sc->ch.unit, &factor));
		table_set(&t, 4, "%s", first);
		table_set(&t, 5, "%s", last);
		table_set(&t, 6, "%s", sc->present ? "present" : "absent");
	}
	table_print(&t, out);
	query_selection_finish(&sel);
	return 0;
}

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
		json_key(out, "key");
		json_string(out, sc->ch.key);
		json_key(out, "label");
		json_string(out, sc->ch.label);
		json_key(out, "source");
		json_string(out, sc->ch.source);
		json_key(out, "kind");
		json_string(out, channel_kind_name(sc->ch.kind));
		json_key(out, "unit");
		json_string(out, sc->ch.unit);
		json_key(out, "resolution");
		json_double(out, sc->ch.resolution);
		json_key(out, "first_seen");
		json_int(out, sc->first_seen);
		json_key(out, "last_seen");
		json_int(out, sc->last_seen);
		json_key(out, "present");
		json_bool(out, sc->present);
		// The store keeps the meta the source wrote: a JSON object text, emitted as is.
		json_key(out, "meta");
		if (sc->ch.meta && sc->ch.meta[0] == '{') {
			json_raw(out, sc->ch.meta);
		} else {
			json_null(out);
		}
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
		sc.base = floor_hour(from);
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
	json_key(out, "from");
	json_int(out, from);
	json_key(out, "to");
	json_int(out, to);
	json_key(out, "bucket_s");
	json_int(out, sc.width);
	json_key(out, "channels");
	json_array_begin(out);
	for (size_t k = 0; k < sel.n; k++) {
		const struct channel *ch = query_selection_channel(&sel, k);
		json_object_begin(out);
		write_channel_ident(out, ch);
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
