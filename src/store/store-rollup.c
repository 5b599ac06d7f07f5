/*
 * The store's rollups: hourly rollups, their merge into whole UTC days, retention (pruning
 * of raw rows) and the reads of both levels.
 */
#include "store-internal.h"

/* --- rollups ------------------------------------------------------------------------------ */

/*
 * Decodes the histogram blob in column @col of @st into store->bin_q and bin_count, valid until
 * the next decoding: *@q and *@count point at them, *@n_bins counts them. False if damaged.
 */
static bool column_hist(struct store *store, sqlite3_stmt *st, int col, const int64_t **q,
			const int64_t **count, size_t *n_bins) {
	const uint8_t *p = sqlite3_column_blob(st, col);
	struct codec_hist_iter it = {.p = p, .end = p + sqlite3_column_bytes(st, col)};
	struct codec_bin bin;
	size_t n = 0;
	while (codec_hist_next(&it, &bin)) {
		if (n == store->bins_cap) {
			size_t cap = store->bins_cap;
			store->bin_q = xgrow(store->bin_q, &cap, n + 1, sizeof(int64_t));
			store->bin_count = xrealloc(store->bin_count, cap * sizeof(int64_t));
			store->bins_cap = cap;
		}
		store->bin_q[n] = bin.q;
		store->bin_count[n] = bin.count;
		n++;
	}
	*q = store->bin_q;
	*count = store->bin_count;
	*n_bins = n;
	return !it.bad;
}

/*
 * Writes @r with the histogram blob of @len bytes in store->blob (its bins are not read) through
 * ST_ROLLUP_PUT or ST_ROLLUP_DAY_PUT: hourly and daily rows have the same columns.
 */
static int rollup_put(struct store *store, enum stmt which, const struct store_rollup *r,
		      size_t len, const char *what) {
	sqlite3_stmt *st = store_stmt(store, which);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, r->channel_id);
	sqlite3_bind_int64(st, 2, r->hour);
	sqlite3_bind_int64(st, 3, r->count);
	sqlite3_bind_int64(st, 4, r->sum_q);
	if (r->count > 0) { // else min, max and max_ts stay NULL
		sqlite3_bind_int64(st, 5, r->min_q);
		sqlite3_bind_int64(st, 6, r->max_q);
		sqlite3_bind_int64(st, 7, r->max_ts);
	}
	sqlite3_bind_int64(st, 8, r->unsynced);
	sqlite3_bind_blob(st, 9, store->blob, (int)len, SQLITE_STATIC);
	int rc = store_step_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, what);
}

/*
 * Hours are complete once the maintenance passed them (the rollup horizon): their rollups are
 * computed from the values on every read, so nothing is written.
 */
static int rollup_range(struct store *store, int64_t from, int64_t to) {
	(void)from;
	return store_state_set_int(store, STATE_HORIZON, to);
}

int store_rollup_horizon(struct store *store, int64_t *hour) {
	*hour = 0;
	return store_state_get_int(store, STATE_HORIZON, hour);
}

static int scan_rollup_rows(struct store *store, enum stmt which, int64_t from, int64_t to,
			    const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx);
static int scan_hours(struct store *store, int64_t from, int64_t to, const int64_t *ids,
		      size_t n_ids, bool scaled, store_rollup_fn fn, void *ctx);

/* --- the daily level ---------------------------------------------------------------------- */

/* A histogram being merged: (q, count) pairs in any order, duplicates allowed until sorted. */
struct bin_list {
	struct codec_bin *bins;
	size_t n, cap;
};

static void bins_add(struct bin_list *l, int64_t q, int64_t count) {
	l->bins = xgrow(l->bins, &l->cap, l->n + 1, sizeof(*l->bins));
	l->bins[l->n++] = (struct codec_bin){q, count};
}

/* Sorts and merges @l, then encodes it as a rollup histogram blob; returns its length. */
static size_t encode_bins(struct store *store, struct bin_list *l) {
	uint8_t *p = store_blob_reserve(store, l->n * 2 * CODEC_VARINT_MAX + 1);
	size_t len = codec_hist_encode_bins(p, l->bins, l->n);
	l->n = 0;
	return len;
}

/* One channel's day in day_range(). */
struct day_acc {
	int64_t count, sum, min, max, max_ts, unsynced;
	bool any; // a rollup row was seen
	struct bin_list hist;
};

/* The cycles of one day in day_range(). */
struct cycle_day_acc {
	int64_t cycles, unsynced, first_ts, last_ts;
	struct bin_list spacing;
};

static int cycle_day_flush(struct store *store, struct cycle_day_acc *c, int64_t day) {
	sqlite3_stmt *st = store_stmt(store, ST_CYCLE_DAY_PUT);
	if (!st) {
		return -EIO;
	}
	size_t len = encode_bins(store, &c->spacing);
	sqlite3_bind_int64(st, 1, day);
	sqlite3_bind_int64(st, 2, c->cycles);
	sqlite3_bind_int64(st, 3, c->unsynced);
	if (c->cycles > 0) {
		sqlite3_bind_int64(st, 4, c->first_ts);
		sqlite3_bind_int64(st, 5, c->last_ts);
	}
	sqlite3_bind_blob(st, 6, store->blob, (int)len, SQLITE_STATIC);
	int rc = store_step_done(st);
	c->cycles = c->unsynced = 0;
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not store a daily cycle summary");
}

static int day_flush(struct store *store, struct day_acc *acc, size_t n_acc, int64_t day) {
	for (size_t id = 0; id < n_acc; id++) {
		struct day_acc *a = &acc[id];
		if (!a->any) {
			continue;
		}
		size_t len = encode_bins(store, &a->hist);
		struct store_rollup r = {.hour = day,
					 .channel_id = (int64_t)id,
					 .count = a->count,
					 .sum_q = a->sum,
					 .min_q = a->min,
					 .max_q = a->max,
					 .max_ts = a->max_ts,
					 .unsynced = a->unsynced};
		int rc = rollup_put(store, ST_ROLLUP_DAY_PUT, &r, len,
				    "could not store a daily rollup");
		if (rc < 0) {
			return rc;
		}
		a->count = a->sum = a->unsynced = 0;
		a->any = false;
	}
	return 0;
}

struct day_build {
	struct store *store;
	struct day_acc *acc;
	size_t n_acc;
	int64_t day;
};

static int day_add_rollup(void *ctx, const struct store_rollup *r) {
	struct day_build *b = ctx;
	if (timefmt_floor(r->hour, DAY_S) != b->day) {
		int rc = day_flush(b->store, b->acc, b->n_acc, b->day);
		if (rc < 0) {
			return rc;
		}
		b->day = timefmt_floor(r->hour, DAY_S);
	}
	if (r->channel_id <= 0 || r->channel_id > 100000000) {
		return -EINVAL;
	}
	if ((size_t)r->channel_id >= b->n_acc) {
		size_t n = (size_t)r->channel_id + 1;
		b->acc = xrealloc(b->acc, n * sizeof(*b->acc));
		memset(&b->acc[b->n_acc], 0, (n - b->n_acc) * sizeof(*b->acc));
		b->n_acc = n;
	}
	struct day_acc *a = &b->acc[r->channel_id];
	a->any = true;
	a->unsynced += r->unsynced;
	if (r->count > 0) {
		// Hours come in order: a tie keeps the earlier hour's first time at the maximum.
		if (a->count == 0 || r->min_q < a->min) {
			a->min = r->min_q;
		}
		if (a->count == 0 || r->max_q > a->max) {
			a->max = r->max_q;
			a->max_ts = r->max_ts;
		}
		a->count += r->count;
		a->sum += r->sum_q;
		for (size_t i = 0; i < r->n_bins; i++) {
			bins_add(&a->hist, r->bin_q[i], r->bin_count[i]);
		}
	}
	return 0;
}

/*
 * Merges the days [from, to) (whole days of rolled-up hours) into cycle_days and rollup_days:
 * every day gets a cycle row, every channel with an hourly rollup that day a daily one.
 */
static int day_range(struct store *store, int64_t from, int64_t to) {
	struct series_scan scan;
	int ret = store_series_open(store, &scan, SERIES_CYCLES, from, to, NULL, 0, 0);
	struct cycle_day_acc c = {0};
	int64_t day = from;
	struct series_cycle cy;
	int rc = 0;
	while (ret == 0 && (rc = store_series_next(&scan, &cy)) > 0) {
		int64_t ts = cy.ts;
		while (ret == 0 && timefmt_floor(ts, DAY_S) > day) {
			ret = cycle_day_flush(store, &c, day);
			day += DAY_S;
		}
		if (ret != 0) {
			break;
		}
		if (cy.clock == CLOCK_STATE_UNSYNCED) {
			c.unsynced++;
			continue;
		}
		if (c.cycles == 0) {
			c.first_ts = ts;
		} else {
			bins_add(&c.spacing, ts - c.last_ts, 1);
		}
		c.last_ts = ts;
		c.cycles++;
	}
	store_series_close(&scan);
	ret = ret < 0 ? ret : rc;
	for (; ret == 0 && day < to; day += DAY_S) {
		ret = cycle_day_flush(store, &c, day);
	}
	free(c.spacing.bins);
	struct day_build b = {.store = store, .day = from};
	if (ret == 0) {
		ret = scan_hours(store, from, to, NULL, 0, false, day_add_rollup, &b);
	}
	if (ret == 0) {
		ret = day_flush(store, b.acc, b.n_acc, b.day);
	}
	for (size_t i = 0; i < b.n_acc; i++) {
		free(b.acc[i].hist.bins);
	}
	free(b.acc);
	if (ret == 0) {
		ret = store_state_set_int(store, STATE_DAY_HORIZON, to);
	}
	return ret;
}

/*
 * Runs @range over [*at, end) a piece of at most @chunk_s at a time, each piece its own write
 * step (a writer waiting for the database waits for one piece); *at moves past each piece done.
 * Past @deadline_ms (monotonic, 0: none) it stops between pieces and sets *more.
 */
static int in_steps(struct store *store, int64_t *at, int64_t end, int64_t chunk_s,
		    int (*range)(struct store *store, int64_t from, int64_t to),
		    int64_t deadline_ms, bool *more) {
	while (*at < end) {
		if (deadline_ms > 0 && store_mono_ms() >= deadline_ms) {
			*more = true;
			return 0;
		}
		int64_t to = *at + chunk_s < end ? *at + chunk_s : end;
		int rc = store_step_begin(store);
		if (rc < 0 || (rc = store_step_end(store, range(store, *at, to))) < 0) {
			return rc;
		}
		*at = to;
	}
	return 0;
}

/* Merges every whole day before the hourly @horizon not merged yet, a month per transaction. */
static int maintain_days(struct store *store, int64_t horizon, int64_t first, int64_t deadline_ms,
			 bool *more) {
	int64_t day = 0;
	int rc = store_state_get_int(store, STATE_DAY_HORIZON, &day);
	if (rc < 0) {
		return rc;
	}
	day = day == 0 ? timefmt_floor(first, DAY_S) : day;
	// A day a rescale is in the middle of holds hours of both resolutions: merged once done.
	int64_t end = timefmt_floor(horizon, DAY_S);
	struct store_rescale *res;
	size_t n;
	if ((rc = store_rescales(store, &res, &n)) < 0) {
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t mid = timefmt_floor(res[i].before, DAY_S);
		end = mid != res[i].before && mid >= day && mid < end ? mid : end;
	}
	free(res);
	return in_steps(store, &day, end, DAY_CHUNK_S, day_range, deadline_ms, more);
}

/* Hourly rollups from @hour on will be rebuilt: days from its day on must be merged again. */
int store_days_invalidate(struct store *store, int64_t hour) {
	int64_t day = 0;
	int rc = store_state_get_int(store, STATE_DAY_HORIZON, &day);
	if (rc == 0 && day > timefmt_floor(hour, DAY_S)) {
		rc = store_state_set_int(store, STATE_DAY_HORIZON, timefmt_floor(hour, DAY_S));
	}
	return rc;
}

int store_raw_horizon(struct store *store, int64_t *ts) {
	*ts = 0;
	return store_state_get_int(store, STATE_RAW_HORIZON, ts);
}

/* Keeps a computed rollup in the table, where the hours whose values are pruned are read. */
static int keep_rollup(void *ctx, const struct store_rollup *r) {
	struct store *store = ctx;
	uint8_t *p = store_blob_reserve(store, r->n_bins * 2 * CODEC_VARINT_MAX + 1);
	size_t len = 0;
	uint64_t prev = 0;
	for (size_t i = 0; i < r->n_bins; i++) { // codec.h's histogram blob, bins ascending
		uint64_t q = (uint64_t)r->bin_q[i];
		len += codec_put_varint(p + len, i == 0 ? codec_zigzag(r->bin_q[0]) : q - prev);
		len += codec_put_varint(p + len, (uint64_t)r->bin_count[i]);
		prev = q;
	}
	return rollup_put(store, ST_ROLLUP_PUT, r, len, "could not keep a rollup");
}

/*
 * One step of retention: the values of [raw horizon, hi) go, hi being the end of the
 * PRUNE_BLOCKS-th compacted block with values there, or @cutoff when fewer are left (the block
 * across it reopened, the head's values before it emptied: its rows are the cycles). Their
 * hours' rollups are kept in the table first; the maps stay, so the cycles are still counted.
 * The raw horizon moves to hi; *more when another step is needed.
 */
static int prune_step(struct store *store, int64_t cutoff, bool *more) {
	int64_t lo = 0;
	int rc = store_state_get_int(store, STATE_RAW_HORIZON, &lo);
	*more = false;
	if (rc < 0 || lo >= cutoff) {
		return rc;
	}
	sqlite3_stmt *st;
	if ((rc = store_prepare_window(store, ST_PRUNE_BLOCKS, store_block_of(SERIES_CYCLES, lo),
				       cutoff - BLOCK_S, "retention", &st)) < 0) {
		return rc;
	}
	int64_t blocks[PRUNE_BLOCKS];
	size_t n = 0;
	int step;
	while (n < PRUNE_BLOCKS && (step = sqlite3_step(st)) == SQLITE_ROW) {
		blocks[n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (n < PRUNE_BLOCKS && step != SQLITE_DONE) {
		return store_fail(store, step, "could not read blocks");
	}
	*more = n == PRUNE_BLOCKS;
	int64_t hi = *more ? blocks[n - 1] + BLOCK_S : cutoff;
	rc = scan_hours(store, timefmt_floor(lo, HOUR_S), hi, NULL, 0, false, keep_rollup, store);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = store_bind_block_exec(store, ST_CHUNKS_DROP, SERIES_CYCLES, blocks[i]);
	}
	bool legacy;
	if (rc == 0 && !*more &&
	    ((rc = store_known_load(store)) < 0 ||
	     (timefmt_floor(cutoff, BLOCK_S) != cutoff &&
	      (rc = store_head_open(store, SERIES_CYCLES, cutoff - 1)) < 0) ||
	     (rc = store_legacy(store, &legacy)) < 0 ||
	     (rc = store_exec_param(store, legacy ? ST_PRUNE_HEAD_LEGACY : ST_PRUNE_HEAD, cutoff)) <
		     0 ||
	     (rc = store_throttle_prune(store, cutoff)) < 0)) {
		return rc;
	}
	store->hour.loaded = false;
	return rc < 0 ? rc : store_state_set_int(store, STATE_RAW_HORIZON, hi);
}

/*
 * Retention: the values before @cutoff (a whole hour, never one not rolled up) go, their hours'
 * rollups stay, a few blocks a transaction. 1 when stopped at @deadline_ms with work left.
 */
static int prune(struct store *store, int64_t cutoff, int64_t deadline_ms, bool *more_out) {
	for (bool more = true; more;) {
		if (deadline_ms > 0 && store_mono_ms() >= deadline_ms) {
			*more_out = true;
			return 0;
		}
		int rc = store_step_begin(store);
		if (rc < 0 || (rc = store_step_end(store, prune_step(store, cutoff, &more))) < 0) {
			return rc;
		}
	}
	return 0;
}

/*
 * Whether a rollup read back could have come from stored values: its bins and extremes within
 * STORE_Q_LIMIT, counts positive and summing to count, max_ts in its hour or day.
 */
static bool rollup_plausible(const struct store_rollup *r) {
	int64_t total = 0;
	for (size_t b = 0; b < r->n_bins; b++) {
		if (!STORE_Q_IN_RANGE(r->bin_q[b]) || r->bin_count[b] <= 0 ||
		    __builtin_add_overflow(total, r->bin_count[b], &total)) {
			return false;
		}
	}
	return total == r->count && STORE_Q_IN_RANGE(r->min_q) && STORE_Q_IN_RANGE(r->max_q) &&
	       r->count >= 0 && r->count <= DAY_S * 1000 && r->unsynced >= 0 &&
	       r->unsynced <= DAY_S * 1000 && (r->count == 0 || r->max_ts >= r->hour);
}

int store_maintain_some(struct store *store, int64_t now, int64_t raw_keep_s, int64_t budget_ms) {
	if (!store_writable(store)) {
		return -EROFS;
	}
	int64_t horizon = 0, first, last,
		deadline = budget_ms > 0 ? store_mono_ms() + budget_ms : 0;
	bool empty, more = false;
	int rc = store_state_get_int(store, STATE_HORIZON, &horizon);
	if (rc == 0) {
		rc = store_cycle_span(store, &first, &last, &empty);
	}
	if (rc < 0 || empty) {
		return rc;
	}
	horizon = horizon == 0 ? timefmt_floor(first, HOUR_S) : horizon;
	/*
	 * An hour (a block) is complete once @now is past it and a later cycle exists: cycles only
	 * move forward, so none can land in it any more (a wrong @now cannot close one early).
	 */
	int64_t end = timefmt_floor(now, HOUR_S) < timefmt_floor(last, HOUR_S)
			      ? timefmt_floor(now, HOUR_S)
			      : timefmt_floor(last, HOUR_S);
	if ((rc = in_steps(store, &horizon, end, ROLLUP_CHUNK_S, rollup_range, deadline, &more)) <
		    0 ||
	    (rc = maintain_days(store, horizon, first, deadline, &more)) < 0) {
		return rc;
	}
	int64_t blocks = store_block_of(SERIES_CYCLES, now) < store_block_of(SERIES_CYCLES, last)
				 ? store_block_of(SERIES_CYCLES, now)
				 : store_block_of(SERIES_CYCLES, last);
	// Fast samples come in batches a while after they were taken: their blocks lag by one.
	int64_t fast = (now < last ? now : last) - FAST_BLOCK_S;
	bool more_cycles = false, more_fast = false;
	if (!more &&
	    (rc = store_compact(store, SERIES_CYCLES, blocks, deadline, &more_cycles)) < 0) {
		return rc;
	}
	if (!more && !more_cycles &&
	    (rc = store_compact(store, SERIES_FAST, timefmt_floor(fast, FAST_BLOCK_S), deadline,
				&more_fast)) < 0) {
		return rc;
	}
	// A database of an older thermlog: checked and switched once every closed block is.
	if (!more && !more_cycles && (rc = store_convert(store, deadline, &more)) < 0) {
		return rc;
	}
	more = more || more_cycles || more_fast;
	if (!more && raw_keep_s > 0) {
		// Whole hours only, and never values not rolled up yet.
		int64_t cutoff = timefmt_floor(now - raw_keep_s, HOUR_S);
		if ((rc = prune(store, cutoff < horizon ? cutoff : horizon, deadline, &more)) < 0) {
			return rc;
		}
	}
	return more ? 1 : 0;
}

int store_maintain(struct store *store, int64_t now, int64_t raw_keep_s) {
	int rc = store_maintain_some(store, now, raw_keep_s, 0);
	return rc < 0 ? rc : 0;
}

static int scan_rollup_rows(struct store *store, enum stmt which, int64_t from, int64_t to,
			    const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx) {
	sqlite3_stmt *st = store_stmt_window(store, which, from, to);
	if (!st) {
		return -EIO;
	}
	int64_t *want = store_sorted_ids(ids, n_ids);
	int ret = 0, rc;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_rollup r = {
			.hour = sqlite3_column_int64(st, 0),
			.channel_id = sqlite3_column_int64(st, 1),
		};
		// The key is (hour, channel_id): other channels are skipped before decoding.
		if (n_ids && !bsearch(&r.channel_id, want, n_ids, sizeof(*want), store_cmp_i64)) {
			continue;
		}
		r.count = sqlite3_column_int64(st, 2);
		r.sum_q = sqlite3_column_int64(st, 3);
		r.min_q = sqlite3_column_int64(st, 4);
		r.max_q = sqlite3_column_int64(st, 5);
		r.max_ts = sqlite3_column_int64(st, 6);
		r.unsynced = sqlite3_column_int64(st, 7);
		if (!column_hist(store, st, 8, &r.bin_q, &r.bin_count, &r.n_bins) ||
		    !rollup_plausible(&r)) {
			log_error("store: damaged rollup of channel %lld at %lld: %s",
				  (long long)r.channel_id, (long long)r.hour, store->path);
			ret = -EINVAL;
			break;
		}
		ret = fn(ctx, &r);
	}
	store_done(st);
	free(want);
	return store_scan_result(store, rc, ret, "could not read rollups");
}

/* A reader's rollups with the rows a rescale has not reached yet in the channels' resolution. */
struct scaled_rollups {
	store_rollup_fn fn;
	void *ctx;
	const struct store_rescale *res;
	size_t n_res;
	bool days;  // daily rows: coarse before the day that ends after the rescale's edge
	int64_t *q; // the scaled bins
	size_t cap;
};

static int scaled_rollup(void *ctx, const struct store_rollup *r) {
	struct scaled_rollups *sr = ctx;
	const struct store_rescale *x = store_rescale_find(sr->res, sr->n_res, r->channel_id);
	if (!x || r->hour >= (sr->days ? timefmt_ceil(x->before, DAY_S) : x->before)) {
		return sr->fn(sr->ctx, r);
	}
	struct store_rollup s = *r;
	s.sum_q = store_rescale_value(x, r->sum_q);
	s.min_q = store_rescale_value(x, r->min_q);
	s.max_q = store_rescale_value(x, r->max_q);
	sr->q = xgrow(sr->q, &sr->cap, r->n_bins + 1, sizeof(*sr->q));
	for (size_t b = 0; b < r->n_bins; b++) {
		sr->q[b] = store_rescale_value(x, r->bin_q[b]);
	}
	s.bin_q = sr->q;
	return sr->fn(sr->ctx, &s);
}

static int scan_rollups_read(struct store *store, enum stmt which, int64_t from, int64_t to,
			     const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx) {
	struct store_rescale *res;
	struct scaled_rollups sr = {fn, ctx, NULL, 0, which == ST_SCAN_ROLLUP_DAYS, NULL, 0};
	int rc = store_rescales(store, &res, &sr.n_res);
	if (rc < 0) {
		return rc;
	}
	sr.res = res;
	rc = sr.n_res == 0
		     ? scan_rollup_rows(store, which, from, to, ids, n_ids, fn, ctx)
		     : scan_rollup_rows(store, which, from, to, ids, n_ids, scaled_rollup, &sr);
	free(sr.q);
	free(res);
	return rc;
}

/*
 * The hourly rollups of [@from, @to): those of hours whose values were pruned from the table that
 * keeps them, the others computed from the values, in one read snapshot.
 */
static int scan_hours(struct store *store, int64_t from, int64_t to, const int64_t *ids,
		      size_t n_ids, bool scaled, store_rollup_fn fn, void *ctx) {
	bool began = store_read_begin(store);
	int64_t raw = 0;
	int rc = store_state_get_int(store, STATE_RAW_HORIZON, &raw);
	int64_t mid = raw < from ? from : raw > to ? to : raw;
	if (rc == 0 && from < mid) {
		rc = scaled ? scan_rollups_read(store, ST_SCAN_ROLLUPS, from, mid, ids, n_ids, fn,
						ctx)
			    : scan_rollup_rows(store, ST_SCAN_ROLLUPS, from, mid, ids, n_ids, fn,
					       ctx);
	}
	if (rc == 0 && mid < to) {
		rc = store_compute_rollups(store, mid, to, ids, n_ids, scaled, fn, ctx);
	}
	store_read_end(store, began);
	return rc;
}

int store_scan_rollups(struct store *store, int64_t from_hour, int64_t to_hour, const int64_t *ids,
		       size_t n_ids, store_rollup_fn fn, void *ctx) {
	return scan_hours(store, from_hour, to_hour, ids, n_ids, true, fn, ctx);
}

int store_scan_rollup_days(struct store *store, int64_t from_day, int64_t to_day,
			   const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx) {
	return scan_rollups_read(store, ST_SCAN_ROLLUP_DAYS, from_day, to_day, ids, n_ids, fn, ctx);
}

int store_day_horizon(struct store *store, int64_t *day) {
	*day = 0;
	return store_state_get_int(store, STATE_DAY_HORIZON, day);
}

int store_scan_cycle_days(struct store *store, int64_t from_day, int64_t to_day,
			  store_cycle_day_fn fn, void *ctx) {
	sqlite3_stmt *st = store_stmt_window(store, ST_SCAN_CYCLE_DAYS, from_day, to_day);
	if (!st) {
		return -EIO;
	}
	int ret = 0, rc;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_cycle_day d = {
			.day = sqlite3_column_int64(st, 0),
			.cycles = sqlite3_column_int64(st, 1),
			.unsynced = sqlite3_column_int64(st, 2),
			.first_ts = sqlite3_column_int64(st, 3),
			.last_ts = sqlite3_column_int64(st, 4),
		};
		if (!column_hist(store, st, 5, &d.spacing_s, &d.spacing_count, &d.n_spacings)) {
			log_error("store: damaged cycle summary of the day at %lld: %s",
				  (long long)d.day, store->path);
			ret = -EINVAL;
			break;
		}
		ret = fn(ctx, &d);
	}
	store_done(st);
	return store_scan_result(store, rc, ret, "could not read the daily cycles");
}
