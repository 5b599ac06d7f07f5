/*
 * The rescale of one channel to a finer resolution: every stored integer of it (raw rows coded
 * against the rescaled rows before them, hourly and daily rollups) times a whole factor, for the
 * writer (a finer live reading) and the import (store_channel_refine()) alike.
 *
 * The writer rescales the rows from the current UTC day on inside the cycle and leaves the
 * older ones to store_rescale_work(), a batch at a time off the cycle, newest hours first: the
 * table rescales says where a channel's rows are still coarse, and every read scales them
 * (store_rescale_value()), so an answer never mixes the two (sql/0009-rescales.sql).
 */
#include "store-internal.h"

/* @q times @factor, held at the int64 limits (a value that large was never plausible). */
static int64_t times(int64_t q, int64_t factor, bool *clamped) {
	int64_t r;
	if (__builtin_mul_overflow(q, factor, &r)) {
		*clamped = true;
		return q < 0 ? INT64_MIN : INT64_MAX;
	}
	return r;
}

/*
 * The statements of a rescale's pass over one table: @sel reads its rows after a key, @upd
 * writes one back. The caller finalizes both, also on failure.
 */
static int prepare_pass(struct store *store, enum stmt read, enum stmt write, sqlite3_stmt **sel,
			sqlite3_stmt **upd) {
	*sel = *upd = NULL;
	int err = store_prepare(store, read, "a rescale", sel);
	return err == 0 ? store_prepare(store, write, "a rescale", upd) : err;
}

/* A slice of raw rows read before any is written back (no row is updated under a scan). */
struct slice {
	int64_t *ts;
	uint8_t **blobs;
	size_t *lens;
	size_t n, cap;
};

static void slice_clear(struct slice *sl) {
	for (size_t i = 0; i < sl->n; i++) {
		free(sl->blobs[i]);
	}
	sl->n = 0;
}

static void slice_finish(struct slice *sl) {
	slice_clear(sl);
	free(sl->ts);
	free(sl->blobs);
	free(sl->lens);
}

static int slice_read(struct store *store, sqlite3_stmt *sel, int64_t after, int64_t to,
		      struct slice *sl) {
	sqlite3_bind_int64(sel, 1, after);
	sqlite3_bind_int64(sel, 2, to);
	int rc;
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		if (sl->n == sl->cap) {
			size_t c = sl->cap;
			sl->ts = xgrow(sl->ts, &c, sl->n + 1, sizeof(*sl->ts));
			sl->blobs = xrealloc(sl->blobs, c * sizeof(*sl->blobs));
			sl->lens = xrealloc(sl->lens, c * sizeof(*sl->lens));
			sl->cap = c;
		}
		sl->ts[sl->n] = sqlite3_column_int64(sel, 0);
		sl->lens[sl->n] = (size_t)sqlite3_column_bytes(sel, 1);
		sl->blobs[sl->n] = xcalloc(sl->lens[sl->n] + 1, 1);
		if (sl->lens[sl->n] > 0) {
			memcpy(sl->blobs[sl->n], sqlite3_column_blob(sel, 1), sl->lens[sl->n]);
		}
		sl->n++;
	}
	sqlite3_reset(sel);
	return rc == SQLITE_DONE ? 0 : store_fail(store, rc, "could not read samples");
}

/* A row's values and the same with the channel scaled: the chain is coded over the scaled. */
struct scaled_chain {
	struct chain chain; // the rows as stored
	struct codec_pair *pairs, *prev;
	size_t cap, cap_prev, n_prev;
};

/*
 * The raw rows of [@from, @to) (@from an hour's start, so the first row read is absolute) with
 * channel @id's values times @factor, each coded again against the row before it scaled; the
 * rows counted into *@rows.
 */
static int rescale_rows(struct store *store, int64_t id, int64_t factor, int64_t from, int64_t to,
			int64_t *rows, bool *clamped) {
	sqlite3_stmt *sel, *upd;
	int err = prepare_pass(store, ST_RESCALE_SAMPLES, ST_SAMPLES_UPDATE, &sel, &upd);
	struct scaled_chain sc = {0};
	store_chain_init(&sc.chain);
	struct slice sl = {0};
	store->hour.loaded = false; // its values change
	int64_t after = from == INT64_MIN ? INT64_MIN : from - 1;
	while (err == 0) {
		slice_clear(&sl);
		if ((err = slice_read(store, sel, after, to, &sl)) < 0 || sl.n == 0) {
			break;
		}
		for (size_t i = 0; i < sl.n && err == 0; i++) {
			bool same_hour = timefmt_floor(sl.ts[i], HOUR_S) == sc.chain.hour;
			if (!store_chain_next(&sc.chain, sl.ts[i], sl.blobs[i], sl.lens[i])) {
				log_error("store: damaged sample row at %lld: %s: not rescaled",
					  (long long)sl.ts[i], store->path);
				continue; // the rows after it in its hour read as errors either way
			}
			size_t n = sc.chain.n_prev;
			bool hit = false;
			sc.pairs = xgrow(sc.pairs, &sc.cap, n + 1, sizeof(*sc.pairs));
			for (size_t k = 0; k < n; k++) {
				sc.pairs[k] = sc.chain.prev[k];
				if (sc.pairs[k].id == id) {
					sc.pairs[k].q = times(sc.pairs[k].q, factor, clamped);
					hit = true;
				}
			}
			if (hit) {
				size_t len = store_encode_row(store, sc.pairs, n,
							      same_hour ? sc.prev : NULL,
							      same_hour ? sc.n_prev : 0);
				sqlite3_bind_int64(upd, 1, sl.ts[i]);
				sqlite3_bind_blob(upd, 2, store->blob, (int)len, SQLITE_STATIC);
				int rc = store_step_done(upd);
				err = rc == SQLITE_OK
					      ? 0
					      : store_fail(store, rc, "could not rescale samples");
			}
			struct codec_pair *t = sc.prev;
			size_t tc = sc.cap_prev;
			sc.prev = sc.pairs;
			sc.cap_prev = sc.cap;
			sc.n_prev = n;
			sc.pairs = t;
			sc.cap = tc;
			*rows += 1;
		}
		after = sl.ts[sl.n - 1];
	}
	slice_finish(&sl);
	free(sc.pairs);
	free(sc.prev);
	store_chain_finish(&sc.chain);
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return err;
}

/*
 * Channel @id's values in the compacted blocks of [@from, @to) times @factor, those of cycles in
 * the window: a block's chunk is decoded with its map and written anew (split as compaction
 * splits). The cycles' times decide, as a read decides which values a rescale under way scales.
 */
static int rescale_chunks(struct store *store, int64_t id, int64_t factor, int64_t from, int64_t to,
			  int64_t *rows, bool *clamped) {
	sqlite3_stmt *st;
	int err = store_prepare_window(store, ST_RESCALE_BLOCKS,
				       store_block_of(SERIES_CYCLES, from), to, "a rescale", &st);
	int64_t *blocks = NULL;
	size_t n = 0, cap = 0;
	int step;
	while (err == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		blocks = xgrow(blocks, &cap, n + 1, sizeof(*blocks));
		blocks[n++] = sqlite3_column_int64(st, 0);
	}
	if (err == 0 && step != SQLITE_DONE) {
		err = store_fail(store, step, "could not read blocks");
	}
	sqlite3_finalize(st);
	struct block_buf b;
	store_block_init(&b);
	for (size_t i = 0; err == 0 && i < n; i++) {
		err = store_block_read(store, SERIES_CYCLES, blocks[i], &id, 1, &b);
		if (err < 0 || b.n_chans == 0) {
			continue;
		}
		struct block_chan *c = &b.chans[0];
		bool hit = false;
		for (size_t k = 0; k < c->n; k++) {
			int64_t ts = b.cycles[c->idx[k]].ts;
			if (ts >= from && ts < to) {
				c->q[k] = times(c->q[k], factor, clamped);
				hit = true;
			}
		}
		if (hit) {
			err = store_chunk_rewrite(store, SERIES_CYCLES, blocks[i], id, c->idx, c->q,
						  c->n, b.n);
			*rows += (int64_t)c->n;
		}
	}
	store_block_finish(&b);
	free(blocks);
	return err;
}

/*
 * A rollup's histogram blob of @len bytes at @p with every value @factor times larger, encoded
 * again into store->blob (*@out_len bytes); false when it is damaged.
 */
static bool rescale_hist(struct store *store, const uint8_t *p, size_t len, int64_t factor,
			 size_t *out_len, bool *clamped) {
	struct codec_hist_iter it = {.p = p, .end = p + len};
	struct codec_bin bin, *bins = NULL;
	size_t n = 0, cap = 0;
	while (codec_hist_next(&it, &bin)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			bins = xrealloc(bins, cap * sizeof(*bins));
		}
		bins[n].q = times(bin.q, factor, clamped);
		bins[n++].count = bin.count;
	}
	if (!it.bad) {
		uint8_t *out = store_blob_reserve(store, n * 2 * CODEC_VARINT_MAX + 1);
		*out_len = codec_hist_encode_bins(out, bins, n);
	}
	free(bins);
	return !it.bad;
}

/* Channel @id's rollup rows of [@from, @to) (hourly: ST_RESCALE_ROLLUPS; daily: ..._DAYS). */
static int rescale_rollups(struct store *store, enum stmt read, enum stmt write, int64_t id,
			   int64_t factor, int64_t from, int64_t to, int64_t *rows, bool *clamped) {
	sqlite3_stmt *sel, *upd;
	int err = prepare_pass(store, read, write, &sel, &upd);
	int64_t after = from == INT64_MIN ? INT64_MIN : from - 1;
	while (err == 0) {
		sqlite3_bind_int64(sel, 1, id);
		sqlite3_bind_int64(sel, 2, after);
		sqlite3_bind_int64(sel, 3, to);
		int rc = sqlite3_step(sel);
		if (rc != SQLITE_ROW) {
			sqlite3_reset(sel);
			err = rc == SQLITE_DONE ? 0
						: store_fail(store, rc, "could not read rollups");
			break;
		}
		after = sqlite3_column_int64(sel, 0);
		int64_t sum = times(sqlite3_column_int64(sel, 1), factor, clamped),
			min = times(sqlite3_column_int64(sel, 2), factor, clamped),
			max = times(sqlite3_column_int64(sel, 3), factor, clamped);
		bool null_min = sqlite3_column_type(sel, 2) == SQLITE_NULL;
		size_t len = 0;
		bool good =
			rescale_hist(store, sqlite3_column_blob(sel, 4),
				     (size_t)sqlite3_column_bytes(sel, 4), factor, &len, clamped);
		sqlite3_reset(sel);
		if (!good) {
			log_error("store: damaged rollup of channel %lld at %lld: %s: not rescaled",
				  (long long)id, (long long)after, store->path);
			continue;
		}
		sqlite3_bind_int64(upd, 1, after);
		sqlite3_bind_int64(upd, 2, id);
		sqlite3_bind_int64(upd, 3, sum);
		if (!null_min) {
			sqlite3_bind_int64(upd, 4, min);
			sqlite3_bind_int64(upd, 5, max);
		}
		sqlite3_bind_blob(upd, 6, store->blob, (int)len, SQLITE_STATIC);
		rc = store_step_done(upd);
		err = rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not rescale rollups");
		*rows += 1;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return err;
}

/*
 * Every value of channel @id in [@from, @to): raw rows, compacted blocks, the hourly rollups
 * kept (of pruned hours) and the days in it.
 */
static int rescale_span(struct store *store, int64_t id, int64_t factor, int64_t from, int64_t to,
			int64_t *rows, bool *clamped) {
	int64_t day_from = from == INT64_MIN ? INT64_MIN : timefmt_ceil(from, DAY_S);
	int64_t day_to = to == INT64_MAX ? INT64_MAX : timefmt_ceil(to, DAY_S);
	int err = rescale_rows(store, id, factor, from, to, rows, clamped);
	if (err == 0) {
		err = rescale_chunks(store, id, factor, from, to, rows, clamped);
	}
	if (err == 0) {
		err = rescale_rollups(store, ST_RESCALE_ROLLUPS, ST_RESCALE_ROLLUP_PUT, id, factor,
				      from, to, rows, clamped);
	}
	if (err == 0) {
		err = rescale_rollups(store, ST_RESCALE_ROLLUP_DAYS, ST_RESCALE_ROLLUP_DAY_PUT, id,
				      factor, day_from, day_to, rows, clamped);
	}
	return err;
}

/* Records @before for channel @id (pending), or drops its row (done: @factor 0). */
static int pending_set(struct store *store, int64_t id, int64_t factor, int64_t before) {
	sqlite3_stmt *st;
	int err = store_prepare(store, factor ? ST_RESCALE_PENDING_PUT : ST_RESCALE_PENDING_DROP,
				"a rescale", &st);
	if (err < 0) {
		return err;
	}
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, factor);
	sqlite3_bind_int64(st, 3, before);
	return store_step_once(store, st, "could not record a rescale");
}

/*
 * The hour a batch of about @rows rows before @before reaches back to (raw rows, and channel
 * @id's hourly rollups: the nearer of the two edges); *none when fewer rows than that are left.
 */
static int batch_edge(struct store *store, int64_t id, int64_t before, int64_t rows, int64_t *hour,
		      bool *none) {
	sqlite3_stmt *st;
	int err = store_prepare(store, ST_RESCALE_EDGE, "a rescale", &st);
	if (err < 0) {
		return err;
	}
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, before);
	sqlite3_bind_int64(st, 3, rows);
	int rc = sqlite3_step(st);
	*none = rc != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL;
	*hour = *none ? 0 : timefmt_floor(sqlite3_column_int64(st, 0), HOUR_S);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store_fail(store, rc, "could not read samples");
}

/*
 * One batch of @r: the whole hours before r->before that about @budget rows reach back over (the
 * rest when fewer are left, then *done); r->before moves down to them, or the row goes.
 */
static int rescale_batch(struct store *store, struct store_rescale *r, int64_t budget, bool *done) {
	int64_t rows = 0, hour = INT64_MIN;
	bool none = true, clamped = false;
	int err = budget < INT64_MAX
			  ? batch_edge(store, r->channel_id, r->before, budget, &hour, &none)
			  : 0;
	hour = none ? INT64_MIN : hour;
	if (err == 0) {
		err = rescale_span(store, r->channel_id, r->factor, hour, r->before, &rows,
				   &clamped);
	}
	r->before = hour;
	*done = none;
	if (clamped) {
		log_error("store: channel %lld: values past the 64-bit range when rescaled by %lld "
			  "before %lld: held at the limits",
			  (long long)r->channel_id, (long long)r->factor, (long long)r->before);
	}
	return err == 0 ? pending_set(store, r->channel_id, *done ? 0 : r->factor, r->before) : err;
}

/* Finishes channel @id's rescale under way, if any, inside the caller's transaction. */
static int rescale_settle(struct store *store, int64_t id) {
	struct store_rescale *list;
	size_t n;
	int err = store_rescales(store, &list, &n);
	for (size_t i = 0; err == 0 && i < n; i++) {
		bool done = false;
		while (err == 0 && !done && (id < 0 || list[i].channel_id == id)) {
			err = rescale_batch(store, &list[i], INT64_MAX, &done);
		}
	}
	free(list);
	return err;
}

int store_rescale_settle(struct store *store) {
	return rescale_settle(store, -1);
}

int store_rescale_channel(struct store *store, int64_t id, int64_t factor, double resolution,
			  int64_t now) {
	// A second refinement while one is under way: the first is finished before.
	int err = factor > 1 ? rescale_settle(store, id) : 0;
	int64_t day = now == INT64_MIN ? INT64_MIN : timefmt_floor(now, DAY_S), rows = 0, hour;
	bool clamped = false, none = true;
	if (err == 0 && factor > 1) {
		err = rescale_span(store, id, factor, day, INT64_MAX, &rows, &clamped);
	}
	if (err == 0 && factor > 1 && day != INT64_MIN) { // any row left before the day?
		err = batch_edge(store, id, day, 0, &hour, &none);
	}
	if (err == 0 && !none) { // older rows: batches off the cycle (store_rescale_work)
		err = pending_set(store, id, factor, day);
		store->rescales_none = false;
	}
	if (clamped) {
		log_error(
			"store: channel %lld: values past the 64-bit range when rescaled by %lld: "
			"held at the limits",
			(long long)id, (long long)factor);
	}
	sqlite3_stmt *st = NULL;
	if (err == 0) {
		err = store_prepare(store, ST_CHANNEL_RESOLUTION, "a rescale", &st);
	}
	if (err == 0) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_double(st, 2, resolution);
		err = store_step_once(store, st, "could not set a resolution");
	}
	return err;
}

int store_rescale_work(struct store *store, int64_t budget_rows, bool *more) {
	*more = false;
	if (!store_writable(store)) {
		return -EROFS;
	}
	if (store->rescales_none) { // a steady cycle reads nothing
		return 0;
	}
	struct store_rescale *list;
	size_t n;
	int err = store_rescales(store, &list, &n);
	store->rescales_none = err == 0 && n == 0;
	if (err < 0 || n == 0) {
		free(list);
		return err;
	}
	bool done = false;
	err = store_step_begin(store);
	if (err == 0) {
		err = store_step_end(store, rescale_batch(store, &list[0], budget_rows, &done));
	}
	*more = err == 0 && (n > 1 || !done);
	free(list);
	return err;
}
