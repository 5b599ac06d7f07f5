/*
 * The store's compaction: a closed block of the head (its rows of cycles or fast samples) into
 * one map and one chunk per channel (blockcodec.h), each split into parts small enough to stay
 * in their b-tree cell, checked against the rows they replace before those are deleted, all in
 * one transaction; and the way back (decompaction), for the rare write into a compacted block.
 */
#include "store-internal.h"

/*
 * The record of a chunk row beyond its blob, at most: a header of 8 bytes (its size and six
 * serial types, the blob's of 3 bytes) and four integers of 8 bytes. A map row has four more.
 */
#define CHUNK_ROW_OVERHEAD 40
#define MAP_ROW_OVERHEAD   72

/*
 * The longest blob that keeps a row of @overhead bytes more on its leaf page. A WITHOUT ROWID
 * table is an index b-tree: SQLite keeps a cell's payload P on the page while P <= X =
 * (U - 12) * 64 / 255 - 23 (U the usable page size; the file format, section 1.6), and moves
 * the rest to overflow pages otherwise: 487 bytes on 2 KiB pages, 1002 on 4 KiB ones.
 */
static size_t cell_room(struct store *store, size_t overhead) {
	if (store->page_size == 0) {
		int64_t size = 0;
		store_pragma_int(store, ST_PAGE_SIZE, &size);
		store->page_size = size >= 512 ? size : 512;
	}
	size_t x = (size_t)(store->page_size - 12) * 64 / 255 - 23;
	return x - overhead;
}

/* --- the head of one block, gathered ------------------------------------------------------- */

/* A value of the block: channel, cycle index, value; sorted by channel, then cycle. */
struct triple {
	int64_t id;
	uint32_t i;
	int64_t q;
};

struct gathered {
	struct blockcodec_cycle *cycles;
	size_t n, cap;
	struct triple *values;
	size_t n_values, cap_values;
};

static void gathered_finish(struct gathered *g) {
	free(g->cycles);
	free(g->values);
}

static int cmp_triple(const void *a, const void *b) {
	const struct triple *x = a, *y = b;
	if (x->id != y->id) {
		return (x->id > y->id) - (x->id < y->id);
	}
	return (x->i > y->i) - (x->i < y->i);
}

static void add_cycle(struct gathered *g, int64_t ts, int clock, int64_t boot) {
	g->cycles = xgrow(g->cycles, &g->cap, g->n + 1, sizeof(*g->cycles));
	g->cycles[g->n++] = (struct blockcodec_cycle){
		.ts = ts,
		.clock = clock >= 0 && clock <= 2 ? clock : CLOCK_STATE_UNKNOWN,
		.boot = boot > 0 ? boot : 0,
	};
}

static void add_values(struct gathered *g, const struct series_cycle *c) {
	for (size_t k = 0; k < c->n; k++) {
		g->values = xgrow(g->values, &g->cap_values, g->n_values + 1, sizeof(*g->values));
		g->values[g->n_values++] =
			(struct triple){c->pairs[k].id, (uint32_t)(g->n - 1), c->pairs[k].q};
	}
}

/*
 * The head's cycles of [@a, @b) and their values. A converted database keeps the cycles of its
 * head in the table cycles and the values in samples: joined by time (a row of values without
 * its cycle, which no thermlog wrote, counts as an imported cycle).
 */
static int gather(struct store *store, int series, bool legacy, int64_t a, int64_t b,
		  struct gathered *g) {
	struct series_scan vals, cyc;
	int rc = store_series_open(store, &vals, series, a, b, NULL, 0, SCAN_VALUES);
	bool two = series == SERIES_CYCLES && legacy;
	if (rc == 0 && two) {
		rc = store_series_open(store, &cyc, series, a, b, NULL, 0, 0);
	}
	struct series_cycle v, c;
	int have_v = rc == 0 ? store_series_next(&vals, &v) : rc;
	int have_c = rc == 0 && two ? store_series_next(&cyc, &c) : 0;
	while (have_v > 0 || have_c > 0) {
		if (g->n >= BLOCK_CYCLES_MAX) {
			log_error("store: more than %d cycles in the block at %lld: %s",
				  BLOCK_CYCLES_MAX, (long long)store_block_of(series, a),
				  store->path);
			rc = -EFBIG;
			break;
		}
		if (have_c > 0 && (have_v <= 0 || c.ts <= v.ts)) {
			add_cycle(g, c.ts, c.clock, c.boot);
			bool same = have_v > 0 && v.ts == c.ts;
			if (same) {
				add_values(g, &v);
				have_v = store_series_next(&vals, &v);
			}
			have_c = store_series_next(&cyc, &c);
		} else {
			add_cycle(g, v.ts, v.clock, two ? 0 : v.boot);
			add_values(g, &v);
			have_v = store_series_next(&vals, &v);
		}
	}
	rc = rc < 0 ? rc : have_v < 0 ? have_v : have_c < 0 ? have_c : 0;
	store_series_close(&vals);
	if (two) {
		store_series_close(&cyc);
	}
	if (rc == 0 && g->n_values > 1) {
		qsort(g->values, g->n_values, sizeof(*g->values), cmp_triple);
	}
	return rc;
}

/* --- writing a block ---------------------------------------------------------------------- */

struct writer {
	struct store *store;
	int series;
	int64_t block;
	sqlite3_stmt *map_st, *chunk_st;
	struct block_buf check; // the blobs written, decoded again
	int64_t *q;             // scratch: a part's values
	uint32_t *idx;
	uint64_t *scratch;
	int part;
};

static int put_map_part(struct writer *w, const struct gathered *g, size_t first, size_t n) {
	uint8_t *blob = store_blob_reserve(w->store, BLOCKCODEC_MAP_MAX(n));
	size_t len = blockcodec_map_encode(blob, first, g->cycles + first, n, w->q, w->scratch);
	if (len == 0) {
		return -EINVAL;
	}
	if (len > cell_room(w->store, MAP_ROW_OVERHEAD) && n > 1) {
		int rc = put_map_part(w, g, first, n / 2);
		return rc < 0 ? rc : put_map_part(w, g, first + n / 2, n - n / 2);
	}
	int64_t unsynced = 0;
	for (size_t i = first; i < first + n; i++) {
		unsynced += g->cycles[i].clock == CLOCK_STATE_UNSYNCED;
	}
	if (!store_block_add_map(&w->check, blob, len)) {
		return -EINVAL; // read back differently: never written
	}
	sqlite3_stmt *st = w->map_st;
	sqlite3_reset(st);
	sqlite3_bind_int(st, 1, w->series);
	sqlite3_bind_int64(st, 2, w->block);
	sqlite3_bind_int(st, 3, w->part++);
	sqlite3_bind_int64(st, 4, (int64_t)n);
	sqlite3_bind_int64(st, 5, unsynced);
	sqlite3_bind_int64(st, 6, g->cycles[first].ts);
	sqlite3_bind_int64(st, 7, g->cycles[first + n - 1].ts);
	sqlite3_bind_blob(st, 8, blob, (int)len, SQLITE_STATIC);
	int rc = store_step_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(w->store, rc, "could not store a block's map");
}

/* The values @v[0..@n) of one channel over cycles [first, first + cycles), in parts. */
static int put_chunk_part(struct writer *w, const struct triple *v, size_t n, size_t first,
			  size_t cycles) {
	for (size_t k = 0; k < n; k++) {
		w->idx[k] = v[k].i;
		w->q[k] = v[k].q;
	}
	uint8_t *blob = store_blob_reserve(w->store, BLOCKCODEC_CHUNK_MAX(cycles));
	size_t len = blockcodec_chunk_encode(blob, first, cycles, w->idx, w->q, n, w->scratch);
	if (len == 0) {
		return -EINVAL;
	}
	if (len > cell_room(w->store, CHUNK_ROW_OVERHEAD) && cycles > 1) {
		size_t half = cycles / 2, k = 0;
		while (k < n && v[k].i < first + half) {
			k++;
		}
		int rc = put_chunk_part(w, v, k, first, half);
		return rc < 0 ? rc : put_chunk_part(w, v + k, n - k, first + half, cycles - half);
	}
	if (!store_block_add_chunk(&w->check, v[0].id, blob, len, SIZE_MAX)) {
		return -EINVAL;
	}
	sqlite3_stmt *st = w->chunk_st;
	sqlite3_reset(st);
	sqlite3_bind_int(st, 1, w->series);
	sqlite3_bind_int64(st, 2, w->block);
	sqlite3_bind_int64(st, 3, v[0].id);
	sqlite3_bind_int(st, 4, w->part++);
	sqlite3_bind_blob(st, 5, blob, (int)len, SQLITE_STATIC);
	int rc = store_step_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(w->store, rc, "could not store a chunk");
}

/* Whether the blobs written decode to exactly the cycles and values gathered. */
static bool same_as_written(const struct block_buf *b, const struct gathered *g) {
	if (b->n != g->n) {
		return false;
	}
	for (size_t i = 0; i < g->n; i++) {
		if (b->cycles[i].ts != g->cycles[i].ts ||
		    b->cycles[i].clock != g->cycles[i].clock ||
		    b->cycles[i].boot != g->cycles[i].boot) {
			return false;
		}
	}
	size_t at = 0;
	for (size_t k = 0; k < b->n_chans; k++) {
		const struct block_chan *c = &b->chans[k];
		for (size_t j = 0; j < c->n; j++, at++) {
			if (at >= g->n_values || g->values[at].id != c->id ||
			    g->values[at].i != c->idx[j] || g->values[at].q != c->q[j]) {
				return false;
			}
		}
	}
	return at == g->n_values;
}

/* Writes the map and the chunks of @g as block @block, checked against @g. */
static int write_block(struct store *store, int series, int64_t block, const struct gathered *g) {
	struct writer w = {.store = store, .series = series, .block = block};
	store_block_init(&w.check);
	size_t most = g->n > 0 ? g->n : 1;
	w.q = xcalloc(most, sizeof(*w.q));
	w.idx = xcalloc(most, sizeof(*w.idx));
	w.scratch = xcalloc(BLOCKCODEC_SCRATCH(most), sizeof(*w.scratch));
	int rc = store_prepare(store, ST_MAP_PUT, "a compaction", &w.map_st);
	if (rc == 0) {
		rc = store_prepare(store, ST_CHUNK_PUT, "a compaction", &w.chunk_st);
	}
	if (rc == 0) {
		rc = put_map_part(&w, g, 0, g->n);
	}
	for (size_t k = 0; rc == 0 && k < g->n_values;) {
		size_t j = k + 1;
		while (j < g->n_values && g->values[j].id == g->values[k].id) {
			j++;
		}
		w.part = 0;
		rc = put_chunk_part(&w, g->values + k, j - k, 0, g->n);
		k = j;
	}
	if (rc == 0 && !same_as_written(&w.check, g)) {
		rc = -EINVAL;
	}
	if (rc == -EINVAL) {
		log_error(
			"store: the block at %lld did not read back as written: left in the head: %s",
			(long long)block, store->path);
	}
	sqlite3_finalize(w.map_st);
	sqlite3_finalize(w.chunk_st);
	store_block_finish(&w.check);
	free(w.q);
	free(w.idx);
	free(w.scratch);
	return rc;
}

static int exec_window(struct store *store, enum stmt which, int64_t a, int64_t b,
		       const char *what) {
	sqlite3_stmt *st;
	int rc = store_prepare_window(store, which, a, b, what, &st);
	return rc < 0 ? rc : store_step_once(store, st, what);
}

/* The head's window of block @block: [start, end) in the series' unit. */
static void head_window(int series, int64_t block, int64_t *a, int64_t *b) {
	int64_t unit = store_series_unit(series);
	*a = block * unit;
	*b = (block + store_block_len(series)) * unit;
}

int store_compact_block(struct store *store, int series, int64_t block) {
	bool legacy = false;
	int rc = series == SERIES_CYCLES ? store_legacy(store, &legacy) : 0;
	int64_t a, b;
	head_window(series, block, &a, &b);
	struct gathered g = {0};
	if (rc == 0) {
		rc = gather(store, series, legacy, a, b, &g);
	}
	if (rc == 0 && g.n > 0) {
		rc = write_block(store, series, block, &g);
	}
	if (rc == 0 && g.n > 0) {
		enum stmt drop = series == SERIES_FAST ? ST_FAST_HEAD_DROP : ST_HEAD_DROP;
		rc = exec_window(store, drop, a, b, "could not delete compacted rows");
		if (rc == 0 && legacy) {
			rc = exec_window(store, ST_HEAD_DROP_LEGACY, a, b,
					 "could not delete compacted cycles");
		}
	}
	store->hour.loaded = false; // the writer's rows may have moved
	gathered_finish(&g);
	return rc;
}

/* --- back to the head ------------------------------------------------------------------------ */

int store_compacted(struct store *store, int series, int64_t block, bool *yes) {
	sqlite3_stmt *st = store_stmt(store, ST_BLOCK_EXISTS);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int(st, 1, series);
	sqlite3_bind_int64(st, 2, block);
	int rc = sqlite3_step(st);
	*yes = rc == SQLITE_ROW;
	store_done(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE
		       ? 0
		       : store_fail(store, rc, "could not read blocks");
}

/* Writes the cycles of @b (decoded with every channel) back as head rows. */
static int write_head(struct store *store, int series, bool legacy, const struct block_buf *b) {
	enum stmt which = series == SERIES_FAST ? ST_FAST_HEAD_PUT
			  : legacy              ? ST_HEAD_PUT_LEGACY
						: ST_HEAD_PUT;
	sqlite3_stmt *st = NULL, *cyc = NULL;
	int rc = store_prepare(store, which, "a decompaction", &st);
	if (rc == 0 && legacy && series == SERIES_CYCLES) {
		rc = store_prepare(store, ST_CYCLE_PUT_LEGACY, "a decompaction", &cyc);
	}
	struct codec_pair *pairs = xcalloc(b->n_chans + 1, sizeof(*pairs)), *prev = NULL;
	size_t n_prev = 0;
	int64_t hour = INT64_MIN;
	for (size_t k = 0; k < b->n_chans; k++) {
		b->chans[k].at = 0;
	}
	for (size_t i = 0; rc == 0 && i < b->n; i++) {
		const struct blockcodec_cycle *c = &b->cycles[i];
		size_t n = 0;
		for (size_t k = 0; k < b->n_chans; k++) {
			struct block_chan *ch = &b->chans[k];
			if (ch->at < ch->n && ch->idx[ch->at] == i) {
				pairs[n++] = (struct codec_pair){ch->id, ch->q[ch->at++]};
			}
		}
		// Cycles: coded against the row before in its hour, as the writer does.
		bool chained = series == SERIES_CYCLES && timefmt_floor(c->ts, HOUR_S) == hour;
		size_t len = store_encode_row(store, pairs, n, chained ? prev : NULL,
					      chained ? n_prev : 0);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, c->ts);
		sqlite3_bind_blob(st, 2, store->blob, (int)len, SQLITE_STATIC);
		if (series == SERIES_CYCLES) {
			sqlite3_bind_int(st, 3, c->clock);
			if (!legacy && c->boot > 0) {
				sqlite3_bind_int64(st, 4, c->boot);
			}
		}
		int step = sqlite3_step(st);
		if (step == SQLITE_DONE && cyc) {
			sqlite3_reset(cyc);
			sqlite3_bind_int64(cyc, 1, c->ts);
			if (c->boot > 0) {
				sqlite3_bind_int64(cyc, 2, c->boot);
			}
			sqlite3_bind_int(cyc, 3, c->clock);
			step = sqlite3_step(cyc);
		}
		if (step != SQLITE_DONE) {
			rc = store_fail(store, step, "could not write a block back to the head");
		}
		free(prev);
		prev = xcalloc(n + 1, sizeof(*prev));
		memcpy(prev, pairs, n * sizeof(*prev));
		n_prev = n;
		hour = timefmt_floor(c->ts, HOUR_S);
	}
	free(prev);
	free(pairs);
	sqlite3_finalize(st);
	sqlite3_finalize(cyc);
	return rc;
}

int store_block_read(struct store *store, int series, int64_t block, const int64_t *ids,
		     size_t n_ids, struct block_buf *b) {
	struct series_scan s;
	int64_t a, end;
	head_window(series, block, &a, &end);
	int rc = store_series_open(store, &s, series, a, end, ids, n_ids, SCAN_VALUES);
	struct series_cycle c;
	// The scan loads the block; its buffers are taken over before the scan is closed.
	if (rc == 0) {
		rc = store_series_next(&s, &c);
		rc = rc < 0 ? rc : 0;
	}
	if (rc == 0 && s.seg == SEG_BLOCK) {
		struct block_buf t = *b;
		*b = s.blk;
		s.blk = t;
	} else if (rc == 0) {
		b->n = b->n_chans = 0; // no compacted block there
	}
	store_series_close(&s);
	return rc;
}

static const char *horizon_key(int series);

int store_decompact_block(struct store *store, int series, int64_t block) {
	bool legacy = false, compacted;
	int rc = series == SERIES_CYCLES ? store_legacy(store, &legacy) : 0;
	if (rc == 0) {
		rc = store_compacted(store, series, block, &compacted);
	}
	if (rc < 0 || !compacted) {
		return rc;
	}
	struct block_buf b;
	store_block_init(&b);
	rc = store_block_read(store, series, block, NULL, 0, &b);
	if (rc == 0) {
		rc = write_head(store, series, legacy, &b);
	}
	if (rc == 0) {
		rc = store_bind_block_exec(store, ST_BLOCK_DROP, series, block);
	}
	if (rc == 0) {
		rc = store_bind_block_exec(store, ST_CHUNKS_DROP, series, block);
	}
	// The block is compacted again from the head by store_maintain().
	int64_t horizon = 0;
	if (rc == 0) {
		rc = store_state_get_int(store, horizon_key(series), &horizon);
	}
	if (rc == 0 && horizon > block) {
		rc = store_state_set_int(store, horizon_key(series), block);
	}
	store->hour.loaded = false;
	store_block_finish(&b);
	return rc;
}

static const char *horizon_key(int series) {
	return series == SERIES_FAST ? STATE_FAST_HORIZON : STATE_COMPACT_HORIZON;
}

/*
 * Before a write at @t: its block back in the head if it was compacted, and compacted again by
 * the next maintenance (the horizon moves back to it).
 */
int store_head_open(struct store *store, int series, int64_t t) {
	int64_t block = store_block_of(series, t), horizon = INT64_MIN;
	bool compacted;
	int rc = store_compacted(store, series, block, &compacted);
	if (rc < 0 || compacted) {
		return rc < 0 ? rc : store_decompact_block(store, series, block);
	}
	rc = store_state_get_int(store, horizon_key(series), &horizon);
	return rc < 0 || block >= horizon ? rc
					  : store_state_set_int(store, horizon_key(series), block);
}

/* --- the closed blocks, one transaction each ------------------------------------------------ */

int store_bind_block_exec(struct store *store, enum stmt which, int series, int64_t block) {
	sqlite3_stmt *st;
	int rc = store_prepare(store, which, "a compaction", &st);
	if (rc == 0) {
		sqlite3_bind_int(st, 1, series);
		sqlite3_bind_int64(st, 2, block);
		rc = store_step_once(store, st, "could not change blocks");
	}
	return rc;
}

/*
 * The next block of @series from *@horizon on that has head rows, if it starts before @end: one
 * step of store_compact(). *@horizon moves past what is done.
 */
static int compact_next(struct store *store, int series, int64_t end, int64_t *horizon,
			bool *done) {
	const char *key = horizon_key(series);
	bool legacy = false, none;
	int64_t next = 0;
	*horizon = INT64_MIN; // none yet: from the first head row
	int rc = store_state_get_int(store, key, horizon);
	if (rc == 0 && series == SERIES_CYCLES) {
		rc = store_legacy(store, &legacy);
	}
	enum stmt which = series == SERIES_FAST ? ST_FAST_HEAD_NEXT
			  : legacy              ? ST_HEAD_NEXT_LEGACY
						: ST_HEAD_NEXT;
	sqlite3_stmt *st = NULL;
	if (rc == 0) {
		rc = store_prepare(store, which, "a compaction", &st);
	}
	if (rc == 0) {
		int64_t unit = store_series_unit(series), from;
		if (__builtin_mul_overflow(*horizon, unit, &from)) {
			from = *horizon < 0 ? INT64_MIN : INT64_MAX;
		}
		sqlite3_bind_int64(st, 1, from);
		int step = sqlite3_step(st);
		none = step != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL;
		next = none ? 0 : sqlite3_column_int64(st, 0);
		rc = step == SQLITE_ROW || step == SQLITE_DONE
			     ? 0
			     : store_fail(store, step, "could not read the head");
	}
	sqlite3_finalize(st);
	if (rc < 0) {
		return rc;
	}
	int64_t block = none ? INT64_MAX : store_block_of(series, next);
	*done = block >= end;
	if (!*done) {
		rc = store_compact_block(store, series, block);
		block += store_block_len(series);
	}
	int64_t to = *done ? end : block;
	if (rc == 0 && to > *horizon) {
		rc = store_state_set_int(store, key, to);
		*horizon = to;
	}
	return rc;
}

int store_compact(struct store *store, int series, int64_t end, int64_t deadline_ms, bool *more) {
	*more = false;
	for (bool done = false; !done;) {
		if (deadline_ms > 0 && store_mono_ms() >= deadline_ms) {
			*more = true;
			return 0;
		}
		int64_t horizon = 0;
		int rc = store_step_begin(store);
		if (rc < 0 || (rc = store_step_end(store, compact_next(store, series, end, &horizon,
								       &done))) < 0) {
			return rc;
		}
	}
	return 0;
}

/*
 * Channel @id's chunk of block @block written anew (a rescale): its rows replaced by the values
 * @q at the cycles @idx (ascending) of the block's @cycles, split as compaction splits them.
 */
int store_chunk_rewrite(struct store *store, int series, int64_t block, int64_t id,
			const uint32_t *idx, const int64_t *q, size_t n, size_t cycles) {
	struct writer w = {.store = store, .series = series, .block = block};
	store_block_init(&w.check);
	size_t most = cycles > 0 ? cycles : 1;
	w.q = xcalloc(most, sizeof(*w.q));
	w.idx = xcalloc(most, sizeof(*w.idx));
	w.scratch = xcalloc(BLOCKCODEC_SCRATCH(most), sizeof(*w.scratch));
	struct triple *v = xcalloc(n + 1, sizeof(*v));
	for (size_t k = 0; k < n; k++) {
		v[k] = (struct triple){id, idx[k], q[k]};
	}
	sqlite3_stmt *del = NULL;
	int rc = store_prepare(store, ST_CHUNK_DROP, "a rescale", &del);
	if (rc == 0) {
		sqlite3_bind_int(del, 1, series);
		sqlite3_bind_int64(del, 2, block);
		sqlite3_bind_int64(del, 3, id);
		rc = store_step_once(store, del, "could not rescale chunks");
	}
	if (rc == 0) {
		rc = store_prepare(store, ST_CHUNK_PUT, "a rescale", &w.chunk_st);
	}
	// The check decodes the parts against a map of as many cycles.
	w.check.n = cycles;
	if (rc == 0 && n > 0) {
		rc = put_chunk_part(&w, v, n, 0, cycles);
	}
	bool same = w.check.n_chans == (n > 0) && (n == 0 || w.check.chans[0].n == n);
	for (size_t k = 0; same && k < n; k++) {
		same = w.check.chans[0].idx[k] == idx[k] && w.check.chans[0].q[k] == q[k];
	}
	if (rc == 0 && !same) {
		log_error("store: a rescaled chunk did not read back as written: %s", store->path);
		rc = -EINVAL;
	}
	sqlite3_finalize(w.chunk_st);
	w.check.n = 0;
	store_block_finish(&w.check);
	free(v);
	free(w.q);
	free(w.idx);
	free(w.scratch);
	return rc;
}

/*
 * The switch of a converted database (store-convert.c), in the caller's transaction: the head's
 * cycles, kept until now in the table cycles beside their values' rows, become the head's rows
 * themselves (each with its clock and boot, a cycle without a value an empty row, every row
 * coded against the one before it in its hour again), and the table cycles goes.
 */
int store_head_convert(struct store *store) {
	struct gathered g = {0};
	int rc = 0;
	// Block by block: the head's blocks are not compacted, so a scan of one reads the head.
	for (int64_t from = INT64_MIN; rc == 0;) {
		int64_t next = 0;
		bool none = true;
		sqlite3_stmt *st = NULL;
		rc = store_prepare(store, ST_HEAD_NEXT_LEGACY, "the conversion", &st);
		if (rc == 0) {
			sqlite3_bind_int64(st, 1, from);
			int step = sqlite3_step(st);
			none = step != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL;
			next = none ? 0 : sqlite3_column_int64(st, 0);
			rc = step == SQLITE_ROW
				     ? 0
				     : store_fail(store, step, "could not read the head");
		}
		sqlite3_finalize(st);
		if (rc < 0 || none) {
			break;
		}
		int64_t block = store_block_of(SERIES_CYCLES, next), a, end;
		head_window(SERIES_CYCLES, block, &a, &end);
		rc = gather(store, SERIES_CYCLES, true, a, end, &g);
		from = end;
	}
	struct block_buf b;
	store_block_init(&b);
	if (rc == 0) {
		// The gathered cycles as a block's: the values by channel, in cycle order.
		b.cycles = g.cycles;
		b.n = g.n;
		for (size_t k = 0; k < g.n_values; k++) {
			struct block_chan *c =
				b.n_chans > 0 && b.chans[b.n_chans - 1].id == g.values[k].id
					? &b.chans[b.n_chans - 1]
					: NULL;
			if (!c) {
				size_t old = b.cap_chans;
				b.chans = xgrow(b.chans, &b.cap_chans, b.n_chans + 1,
						sizeof(*b.chans));
				memset(&b.chans[old], 0, (b.cap_chans - old) * sizeof(*b.chans));
				c = &b.chans[b.n_chans++];
				c->id = g.values[k].id;
			}
			c->idx = xgrow(c->idx, &c->cap, c->n + 1, sizeof(*c->idx));
			c->q = xrealloc(c->q, c->cap * sizeof(*c->q));
			c->idx[c->n] = g.values[k].i;
			c->q[c->n++] = g.values[k].q;
		}
		rc = store_exec_param(store, ST_HEAD_DROP_ALL, 0);
	}
	if (rc == 0) {
		rc = store_exec_param(store, ST_CONVERT_DROP_UNSYNCED, 0);
	}
	if (rc == 0) {
		rc = store_exec_param(store, ST_CONVERT_DROP_CYCLES, 0);
	}
	if (rc == 0) {
		rc = write_head(store, SERIES_CYCLES, false, &b);
	}
	b.cycles = NULL; // g's
	store_block_finish(&b);
	gathered_finish(&g);
	store->hour.loaded = false;
	store->legacy_valid = false;
	return rc;
}
