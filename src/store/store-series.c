/*
 * The store's one reader of a series (the one-minute cycles, or the fast samples of runs): its
 * cycles in time order, with the values of the channels asked for, from compacted blocks (their
 * map and chunks, blockcodec.h) and from the head (one row a cycle) alike. A block is either
 * compacted or in the head, so the window splits into segments of each kind, read in turn.
 */
#include "store-internal.h"

/* --- helpers ------------------------------------------------------------------------------- */

/* Where a scan from @from starts reading: its hour's first row, the start of its chain. */
int64_t store_scan_start(int64_t from) {
	return from < INT64_MIN + HOUR_S ? INT64_MIN : timefmt_floor(from, HOUR_S);
}

int store_cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

size_t store_lower_bound(const void *array, size_t size, size_t key_at, size_t lo, size_t hi,
			 int64_t key) {
	const char *base = array;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t k;
		memcpy(&k, base + mid * size + key_at, sizeof(k));
		if (k < key) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

int64_t *store_sorted_ids(const int64_t *ids, size_t n) {
	int64_t *copy = xcalloc(n ? n : 1, sizeof(*copy));
	if (n > 0) {
		memcpy(copy, ids, n * sizeof(*copy));
	}
	qsort(copy, n, sizeof(*copy), store_cmp_i64);
	return copy;
}

/* --- units ----------------------------------------------------------------------------------- */

/* How many of a series' time units make a second: cycles are in s, fast samples in ms. */
int64_t store_series_unit(int series) {
	return series == SERIES_FAST ? 1000 : 1;
}

/* A block's length in s. */
int64_t store_block_len(int series) {
	return series == SERIES_FAST ? FAST_BLOCK_S : BLOCK_S;
}

/* @s seconds in the series' unit, saturated at the ends of int64. */
static int64_t to_unit(int series, int64_t s) {
	int64_t u = store_series_unit(series), out;
	return __builtin_mul_overflow(s, u, &out) ? (s < 0 ? INT64_MIN : INT64_MAX) : out;
}

/* The start (s) of the block holding @t (in the series' unit). */
int64_t store_block_of(int series, int64_t t) {
	int64_t s = timefmt_floor_div(t, store_series_unit(series)), len = store_block_len(series);
	return s < INT64_MIN + len ? INT64_MIN : timefmt_floor(s, len);
}

/* The end of block @block in the series' unit. */
static int64_t block_end(int series, int64_t block) {
	int64_t end;
	return __builtin_add_overflow(block, store_block_len(series), &end) ? INT64_MAX
									    : to_unit(series, end);
}

/* --- read snapshots -------------------------------------------------------------------------- */

/*
 * A read of several statements sees one snapshot: the history moves between the head and the
 * chunks as blocks are compacted, so two statements of one read must not straddle a commit.
 * Inside a transaction (a writer's, or a read already begun) nothing is done. Returns whether
 * this call began it, for store_read_end().
 */
bool store_read_begin(struct store *store) {
	if (!sqlite3_get_autocommit(store->db)) {
		return false;
	}
	sqlite3_stmt *st = store_stmt(store, ST_READ_BEGIN);
	return st && store_step_done(st) == SQLITE_OK;
}

void store_read_end(struct store *store, bool began) {
	if (began && !sqlite3_get_autocommit(store->db)) {
		sqlite3_stmt *st = store_stmt(store, ST_COMMIT);
		if (!st || store_step_done(st) != SQLITE_OK) {
			// A read-only snapshot has nothing to lose: end it however.
			sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
		}
	}
}

int store_legacy_cached(struct store *store, bool *legacy) {
	if (store->legacy_valid && store->legacy_version == store->seen_version) {
		*legacy = store->legacy;
		return 0;
	}
	int rc = store_legacy(store, legacy);
	store->legacy_valid = rc == 0 && store->seen_version != 0;
	store->legacy = *legacy;
	store->legacy_version = store->seen_version;
	return rc;
}

/* --- the rescales under way (store-rescale.c), as every read applies them ------------------- */

int store_rescales(struct store *store, struct store_rescale **out, size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = store_stmt(store, ST_RESCALES_LIST);
	if (!st) {
		return -EIO;
	}
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		(*out)[(*n)++] = (struct store_rescale){.channel_id = sqlite3_column_int64(st, 0),
							.factor = sqlite3_column_int64(st, 1),
							.before = sqlite3_column_int64(st, 2)};
	}
	store_done(st);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return store_fail(store, rc, "could not read the rescales");
	}
	return 0;
}

const struct store_rescale *store_rescale_find(const struct store_rescale *list, size_t n,
					       int64_t id) {
	for (size_t i = 0; i < n; i++) {
		if (list[i].channel_id == id) {
			return &list[i];
		}
	}
	return NULL;
}

int64_t store_rescale_value(const struct store_rescale *r, int64_t q) {
	int64_t v; // held at the int64 limits (a value that large was never plausible)
	return __builtin_mul_overflow(q, r->factor, &v) ? (q < 0 ? INT64_MIN : INT64_MAX) : v;
}

/* --- compacted blocks -------------------------------------------------------------------- */

/* Room for @n cycles of the block's map. */
static void block_reserve(struct block_buf *b, size_t n) {
	if (n > b->cap) {
		size_t cap = b->cap;
		b->cycles = xgrow(b->cycles, &cap, n, sizeof(*b->cycles));
		b->ts = xrealloc(b->ts, cap * sizeof(*b->ts));
		b->cap = cap;
	}
}

/*
 * Appends a map part (@len bytes at @p) to @b's cycles: parts come in order, each beginning
 * where the last ended. False when it is damaged.
 */
bool store_block_add_map(struct block_buf *b, const uint8_t *p, size_t len) {
	struct blockcodec_map h;
	if (!blockcodec_map_header(p, len, &h) || h.first != b->n || h.n > BLOCK_CYCLES_MAX ||
	    b->n + h.n > BLOCK_CYCLES_MAX) {
		return false;
	}
	block_reserve(b, b->n + h.n);
	struct blockcodec_map m;
	if (!blockcodec_map_decode(p, len, h.n, b->cycles + b->n, b->ts, &m) ||
	    (b->n > 0 && m.n > 0 && b->cycles[b->n].ts <= b->cycles[b->n - 1].ts)) {
		return false;
	}
	b->n += m.n;
	return true;
}

/* The slot of channel @id's values in @b: the last one, as chunks come by channel. */
static struct block_chan *block_chan(struct block_buf *b, int64_t id) {
	if (b->n_chans > 0 && b->chans[b->n_chans - 1].id == id) {
		return &b->chans[b->n_chans - 1];
	}
	if (b->n_chans == b->cap_chans) {
		size_t old = b->cap_chans;
		b->chans = xgrow(b->chans, &b->cap_chans, b->n_chans + 1, sizeof(*b->chans));
		memset(&b->chans[old], 0, (b->cap_chans - old) * sizeof(*b->chans));
	}
	struct block_chan *c = &b->chans[b->n_chans++];
	c->id = id;
	c->n = c->at = 0;
	return c;
}

/*
 * Adds a chunk part (@len bytes at @p) of channel @id to @b, whose map is complete: its values
 * follow the part before, within the block's cycles; those of the cycles before @until alone
 * (SIZE_MAX: all), the bytes of the rest neither read nor checked. False when it is damaged.
 */
bool store_block_add_chunk(struct block_buf *b, int64_t id, const uint8_t *p, size_t len,
			   size_t until) {
	struct blockcodec_chunk h;
	if (!blockcodec_chunk_header(p, len, &h) || h.first > b->n || h.cycles > b->n - h.first) {
		return false;
	}
	if (h.first >= until) {
		return true;
	}
	struct block_chan *c = block_chan(b, id);
	if (c->n + h.cycles > c->cap) {
		size_t cap = c->cap;
		c->idx = xgrow(c->idx, &cap, c->n + h.cycles, sizeof(*c->idx));
		c->q = xrealloc(c->q, cap * sizeof(*c->q));
		c->cap = cap;
	}
	if (h.cycles > b->cap_palette) {
		b->palette = xgrow(b->palette, &b->cap_palette, h.cycles, sizeof(*b->palette));
	}
	struct blockcodec_chunk got;
	if (!blockcodec_chunk_decode_until(p, len, h.cycles, until, c->idx + c->n, c->q + c->n,
					   b->palette, &got) ||
	    (c->n > 0 && got.n > 0 && c->idx[c->n] <= c->idx[c->n - 1])) {
		return false;
	}
	c->n += got.n;
	return true;
}

/* --- the scan ------------------------------------------------------------------------------- */

/*
 * Whether the store's cached block is @block as scan @s would read it. Only a scan that read in
 * a snapshot of its own uses the cache, or keeps its block there: inside a transaction a
 * write may follow it.
 */
static bool cache_fits(const struct series_scan *s, int64_t block) {
	const struct store *st = s->store;
	return s->began && st->cache.block == block && st->cache.n > 0 &&
	       st->cache_series == s->series && st->cache_values == s->values &&
	       st->cache_version == s->version && s->version != 0 &&
	       st->cache_writes == st->write_steps && st->cache_n_ids == s->n_ids &&
	       (s->n_ids == 0 || memcmp(st->cache_ids, s->ids, s->n_ids * sizeof(*s->ids)) == 0);
}

/* Keeps the scan's decoded block for the next scan (its buffers trade places with the cache). */
static void cache_keep(struct series_scan *s) {
	struct store *st = s->store;
	if (s->blk.n == 0 || s->version == 0 || !s->began) {
		return;
	}
	struct block_buf t = st->cache;
	st->cache = s->blk;
	s->blk = t;
	st->cache_series = s->series;
	st->cache_values = s->values;
	st->cache_version = s->version;
	st->cache_writes = st->write_steps;
	free(st->cache_ids);
	st->cache_ids = store_sorted_ids(s->ids, s->n_ids);
	st->cache_n_ids = s->n_ids;
}

/*
 * A scan's statement @which into *st: the one it has, else the store's spare (a closed scan's),
 * else one prepared. A report scans hundreds of runs' windows, two or three statements each.
 */
static int prepare(struct store *store, enum stmt which, sqlite3_stmt **st) {
	sqlite3_stmt **spare = &store->scan_spare[which - ST_BLOCKS_SCAN];
	if (*st || !*spare) {
		return *st ? 0 : store_prepare(store, which, "a scan", st);
	}
	*st = *spare;
	*spare = NULL;
	return 0;
}

/* A closed scan's statement @st (@which): kept reset as the store's spare, or finalized. */
static void release(struct store *store, enum stmt which, sqlite3_stmt *st) {
	if (!st) {
		return;
	}
	sqlite3_stmt **spare = &store->scan_spare[which - ST_BLOCKS_SCAN];
	if (*spare) {
		sqlite3_finalize(st);
		return;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	*spare = st;
}

/* [*@from, *@to) held to the times a scan reads: those within STORE_TS_LIMIT (a crafted
 * database's beyond never are). */
static void clamp_window(int series, int64_t *from, int64_t *to) {
	int64_t unit = store_series_unit(series);
	*from = *from < -STORE_TS_LIMIT * unit ? -STORE_TS_LIMIT * unit : *from;
	*to = *to > (STORE_TS_LIMIT + 1) * unit ? (STORE_TS_LIMIT + 1) * unit : *to;
}

/* Binds the compacted blocks of [s->from, s->to) to s->blocks_st, from its first row. */
static void bind_blocks(struct series_scan *s) {
	sqlite3_reset(s->blocks_st);
	sqlite3_bind_int(s->blocks_st, 1, s->series);
	sqlite3_bind_int64(s->blocks_st, 2, store_block_of(s->series, s->from));
	// blocks starting before @to: in s, the last second @to's unit reaches, plus one
	int64_t last = s->to == INT64_MIN
			       ? INT64_MIN
			       : timefmt_floor_div(s->to - 1, store_series_unit(s->series));
	sqlite3_bind_int64(s->blocks_st, 3, last == INT64_MAX ? INT64_MAX : last + 1);
	s->block_held = s->blocks_done = false;
}

int store_series_open(struct store *store, struct series_scan *s, int series, int64_t from,
		      int64_t to, const int64_t *ids, size_t n_ids, unsigned flags) {
	clamp_window(series, &from, &to);
	*s = (struct series_scan){.store = store,
				  .series = series,
				  .from = from,
				  .to = to,
				  .values = flags & SCAN_VALUES,
				  .pos = from};
	s->ids = store_sorted_ids(ids, n_ids);
	s->n_ids = n_ids;
	store_block_init(&s->blk);
	store_chain_init(&s->chain);
	s->began = store_read_begin(store);
	bool none;
	int rc = series == SERIES_CYCLES ? store_legacy(store, &s->legacy) : 0;
	if (rc == 0 && store_query_int(store, ST_DATA_VERSION, 0, &s->version, &none) < 0) {
		s->version = 0; // no cache then
	}
	// A channel's cycles before its rescale's edge still hold the coarser integers.
	if (rc == 0 && s->values && (flags & SCAN_SCALED) && series == SERIES_CYCLES) {
		rc = store_rescales(store, &s->rescales, &s->n_rescales);
	}
	if (rc == 0) {
		rc = prepare(store, ST_BLOCKS_SCAN, &s->blocks_st);
	}
	if (rc == 0) {
		bind_blocks(s);
	}
	return rc;
}

void store_series_seek(struct series_scan *s, int64_t from, int64_t to) {
	clamp_window(s->series, &from, &to);
	s->from = from;
	s->to = to;
	s->pos = from;
	s->seg = SEG_NONE;
	if (s->blocks_st) {
		bind_blocks(s);
	}
}

void store_series_close(struct series_scan *s) {
	cache_keep(s);
	release(s->store, ST_BLOCKS_SCAN, s->blocks_st);
	release(s->store, s->head_which, s->head_st);
	release(s->store, s->chunks_which, s->chunks_st);
	store_block_finish(&s->blk);
	store_chain_finish(&s->chain);
	free(s->ids);
	free(s->out);
	free(s->row);
	free(s->rescales);
	store_read_end(s->store, s->began);
	*s = (struct series_scan){0};
}

/* The first row of the next compacted block, stepped to and held: its block, or INT64_MAX. */
static int peek_block(struct series_scan *s, int64_t *block) {
	if (!s->block_held) {
		int rc = sqlite3_step(s->blocks_st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			return store_fail(s->store, rc, "could not read the compacted blocks");
		}
		s->block_held = true;
		s->blocks_done = rc == SQLITE_DONE;
	}
	*block = s->blocks_done ? INT64_MAX : sqlite3_column_int64(s->blocks_st, 0);
	return 0;
}

static int damaged(struct series_scan *s, const char *what, int64_t block, int64_t channel) {
	if (channel) {
		log_error("store: damaged %s of channel %lld in the block at %lld: %s", what,
			  (long long)channel, (long long)block, s->store->path);
	} else {
		log_error("store: damaged %s of the block at %lld: %s", what, (long long)block,
			  s->store->path);
	}
	return -EINVAL;
}

/* Reads the chunks of block @block of the channels asked for into s->blk. */
static int load_chunks(struct series_scan *s, int64_t block) {
	// A few channels: a seek each; many or all: one pass over the block's chunks.
	bool seek = s->n_ids > 0 && s->n_ids <= 4;
	s->chunks_which = seek ? ST_CHUNKS_CHANNEL : ST_CHUNKS_BLOCK;
	int rc = prepare(s->store, s->chunks_which, &s->chunks_st);
	for (size_t k = 0; rc == 0 && k < (seek ? s->n_ids : 1); k++) {
		sqlite3_reset(s->chunks_st);
		sqlite3_bind_int(s->chunks_st, 1, s->series);
		sqlite3_bind_int64(s->chunks_st, 2, block);
		if (seek) {
			sqlite3_bind_int64(s->chunks_st, 3, s->ids[k]);
		}
		int step;
		while (rc == 0 && (step = sqlite3_step(s->chunks_st)) == SQLITE_ROW) {
			int64_t id = seek ? s->ids[k] : sqlite3_column_int64(s->chunks_st, 0);
			if (!seek && s->n_ids > 0 &&
			    !bsearch(&id, s->ids, s->n_ids, sizeof(*s->ids), store_cmp_i64)) {
				continue;
			}
			const uint8_t *p = sqlite3_column_blob(s->chunks_st, 1);
			size_t len = (size_t)sqlite3_column_bytes(s->chunks_st, 1);
			if (!store_block_add_chunk(&s->blk, id, p, len, s->blk.upto)) {
				rc = damaged(s, "chunk", block, id);
			}
		}
		if (rc == 0 && step != SQLITE_DONE) {
			rc = store_fail(s->store, step, "could not read chunks");
		}
	}
	if (s->chunks_st) {
		sqlite3_reset(s->chunks_st);
	}
	return rc;
}

/* Reads block @block, already decoded in s->blk, again: its rows are stepped over. */
static int block_again(struct series_scan *s, int64_t block) {
	int64_t at = INT64_MAX;
	int rc;
	for (size_t k = 0; k < s->blk.n_chans; k++) {
		s->blk.chans[k].at = 0;
	}
	while ((rc = peek_block(s, &at)) == 0 && at == block) {
		s->block_held = false;
	}
	return rc;
}

/* The first cycle of @b at or after @to (b->n when none is). */
static size_t block_until(const struct block_buf *b, int64_t to) {
	return store_lower_bound(b->cycles, sizeof(*b->cycles),
				 offsetof(struct blockcodec_cycle, ts), 0, b->n, to);
}

/* Whether @b holds block @block with the values of its cycles before @to. */
static bool block_holds(const struct block_buf *b, int64_t block, int64_t to) {
	return b->n > 0 && b->block == block && block_until(b, to) <= b->upto;
}

/*
 * Reads the held block's map parts (and with values its chunks, up to the scan's end: a window
 * that ends inside the block decodes no value after it) into s->blk. A block read again because
 * a later window goes further into it is decoded whole, so ascending windows in one block
 * decode it at most twice. A block that could not be read whole is not kept (s->blk.n = 0):
 * neither the next window nor the cache may serve it without its damage.
 */
static int load_block(struct series_scan *s, int64_t block) {
	struct block_buf *b = &s->blk;
	int64_t at;
	int rc = 0;
	s->blk_i = 0;
	if (block_holds(b, block, s->to)) { // read last, by the window before
		return block_again(s, block);
	}
	if (cache_fits(s, block) && block_holds(&s->store->cache, block, s->to)) { // the cache's
		struct block_buf t = *b;
		*b = s->store->cache;
		s->store->cache = t;
		s->store->cache.n = 0;
		return block_again(s, block);
	}
	bool again = (b->n > 0 && b->block == block) ||
		     (cache_fits(s, block) && s->store->cache.block == block);
	b->block = block;
	b->n = b->n_chans = 0;
	while (rc == 0 && (rc = peek_block(s, &at)) == 0 && at == block) {
		const uint8_t *p = sqlite3_column_blob(s->blocks_st, 3);
		size_t len = (size_t)sqlite3_column_bytes(s->blocks_st, 3);
		if (!store_block_add_map(b, p, len)) {
			rc = damaged(s, "map", block, 0);
		}
		s->block_held = false;
	}
	b->upto = again ? b->n : block_until(b, s->to);
	if (rc == 0 && s->values) {
		rc = load_chunks(s, block);
	}
	if (rc != 0) {
		b->n = b->n_chans = 0;
	}
	s->blk_i = 0;
	return rc;
}

/* Binds the head's rows of [@a, @b) for the next steps. */
static int open_head(struct series_scan *s, int64_t a, int64_t b) {
	enum stmt which = s->series == SERIES_FAST ? ST_FAST_HEAD
			  : s->values              ? ST_HEAD_VALUES
			  : s->legacy              ? ST_HEAD_CYCLES_LEGACY
						   : ST_HEAD_CYCLES;
	s->head_which = which;
	int rc = prepare(s->store, which, &s->head_st);
	if (rc == 0) {
		sqlite3_reset(s->head_st);
		// A row of cycles may be coded against the one before it in its hour: read from
		// the hour's first row on, the rows before @a only as bases.
		bool chained = s->series == SERIES_CYCLES && s->values;
		sqlite3_bind_int64(s->head_st, 1, chained ? store_scan_start(a) : a);
		sqlite3_bind_int64(s->head_st, 2, b);
		s->chain.hour = INT64_MIN;
	}
	return rc;
}

static struct codec_pair *out_reserve(struct series_scan *s, size_t n) {
	if (n + 1 > s->cap_out) {
		s->out = xgrow(s->out, &s->cap_out, n + 1, sizeof(*s->out));
	}
	return s->out;
}

/*
 * A value as read: none beyond STORE_Q_LIMIT (a crafted row's: no reading is that large), and
 * the channel's rescale applied before its edge. False when it is left out.
 */
static bool value_read(const struct series_scan *s, int64_t ts, struct codec_pair *p) {
	if (!STORE_Q_IN_RANGE(p->q)) {
		return false;
	}
	const struct store_rescale *r =
		s->n_rescales ? store_rescale_find(s->rescales, s->n_rescales, p->id) : NULL;
	if (r && ts < r->before) {
		p->q = store_rescale_value(r, p->q);
	}
	return true;
}

/* The values of the channels asked for among @pairs (of the cycle at @ts), into s->out. */
static size_t filter_pairs(struct series_scan *s, int64_t ts, const struct codec_pair *pairs,
			   size_t n) {
	struct codec_pair *out = out_reserve(s, n);
	size_t m = 0, w = 0;
	for (size_t k = 0; k < n; k++) {
		if (s->n_ids) {
			while (w < s->n_ids && s->ids[w] < pairs[k].id) {
				w++;
			}
			if (w == s->n_ids) {
				break;
			}
			if (s->ids[w] != pairs[k].id) {
				continue;
			}
		}
		out[m] = pairs[k];
		m += value_read(s, ts, &out[m]);
	}
	return m;
}

/* The next head row of the segment into *c: 1, 0 at its end, or -errno. */
static int head_next(struct series_scan *s, struct series_cycle *c) {
	sqlite3_stmt *st = s->head_st;
	for (;;) {
		int rc = sqlite3_step(st);
		if (rc == SQLITE_DONE) {
			return 0;
		}
		if (rc != SQLITE_ROW) {
			return store_fail(s->store, rc, "could not read the cycles");
		}
		*c = (struct series_cycle){.ts = sqlite3_column_int64(st, 0), .boot = -1};
		if (s->series == SERIES_FAST) {
			const uint8_t *p = sqlite3_column_blob(st, 1);
			size_t len = (size_t)sqlite3_column_bytes(st, 1);
			s->row = xgrow(s->row, &s->cap_row, len + 1, sizeof(*s->row));
			bool bad;
			size_t n = codec_row_decode(s->row, p, len, NULL, 0, &bad);
			if (bad) {
				log_error("store: corrupt fast sample at %lld ms: %s",
					  (long long)c->ts, s->store->path);
				return -EINVAL;
			}
			c->clock = CLOCK_STATE_SYNCED;
			c->n = filter_pairs(s, c->ts, s->row, n);
			c->pairs = s->out;
			return 1;
		}
		c->clock = sqlite3_column_int(st, 1);
		if (!s->values) {
			c->boot = sqlite3_column_type(st, 2) == SQLITE_NULL
					  ? 0
					  : sqlite3_column_int64(st, 2);
			return 1;
		}
		const uint8_t *p = sqlite3_column_blob(st, 2);
		if (!store_chain_next(&s->chain, c->ts, p, (size_t)sqlite3_column_bytes(st, 2))) {
			log_error("store: damaged sample row at %lld: %s", (long long)c->ts,
				  s->store->path);
			return -EINVAL;
		}
		if (c->ts < s->pos) {
			continue; // read only as the base of the rows after it
		}
		if (!s->legacy) {
			c->boot = sqlite3_column_type(st, 3) == SQLITE_NULL
					  ? 0
					  : sqlite3_column_int64(st, 3);
		}
		c->n = filter_pairs(s, c->ts, s->chain.prev, s->chain.n_prev);
		c->pairs = s->out;
		return 1;
	}
}

/* The next cycle of the loaded block within the window into *c: 1, or 0 at its end. */
static int block_next(struct series_scan *s, struct series_cycle *c) {
	struct block_buf *b = &s->blk;
	while (s->blk_i < b->n) {
		size_t i = s->blk_i++;
		const struct blockcodec_cycle *bc = &b->cycles[i];
		if (bc->ts < s->pos) {
			continue;
		}
		if (bc->ts >= s->to) {
			s->blk_i = b->n;
			return 0;
		}
		*c = (struct series_cycle){.ts = bc->ts, .clock = bc->clock, .boot = bc->boot};
		struct codec_pair *out = out_reserve(s, b->n_chans);
		for (size_t k = 0; k < b->n_chans; k++) {
			struct block_chan *ch = &b->chans[k];
			while (ch->at < ch->n && ch->idx[ch->at] < i) {
				ch->at++;
			}
			if (ch->at < ch->n && ch->idx[ch->at] == i) {
				out[c->n] = (struct codec_pair){ch->id, ch->q[ch->at]};
				c->n += value_read(s, c->ts, &out[c->n]);
			}
		}
		c->pairs = out;
		return 1;
	}
	return 0;
}

int store_series_next(struct series_scan *s, struct series_cycle *c) {
	for (;;) {
		int rc = 0;
		if (s->seg == SEG_HEAD && (rc = head_next(s, c)) != 0) {
			return rc;
		}
		if (s->seg == SEG_BLOCK && (rc = block_next(s, c)) != 0) {
			return rc;
		}
		if (s->seg != SEG_NONE) {
			s->pos = s->seg_end;
			s->seg = SEG_NONE;
		}
		if (s->pos >= s->to) {
			return 0;
		}
		int64_t block;
		if ((rc = peek_block(s, &block)) < 0) {
			return rc;
		}
		int64_t start = block == INT64_MAX ? INT64_MAX : to_unit(s->series, block);
		if (start > s->pos) { // the head up to the next compacted block
			s->seg_end = start < s->to ? start : s->to;
			s->seg = SEG_HEAD;
			rc = open_head(s, s->pos, s->seg_end);
		} else {
			s->seg_end = block_end(s->series, block);
			s->seg = SEG_BLOCK;
			rc = load_block(s, block);
		}
		if (rc < 0) {
			return rc;
		}
	}
}

int store_series_windows(struct store *store, int series, const struct store_window *w, size_t n,
			 const int64_t *ids, size_t n_ids, unsigned flags, int max_clock,
			 series_window_fn fn, void *ctx) {
	if (n == 0) {
		return 0;
	}
	struct series_scan scan;
	int rc = store_series_open(store, &scan, series, w[0].from, w[0].to, ids, n_ids, flags),
	    ret = 0;
	for (size_t i = 0; rc == 0 && ret == 0 && i < n; i++) {
		if (i > 0) {
			store_series_seek(&scan, w[i].from, w[i].to);
		}
		struct series_cycle c;
		while (ret == 0 && (rc = store_series_next(&scan, &c)) > 0) {
			rc = 0;
			if (c.clock > max_clock) {
				continue;
			}
			for (size_t k = 0; ret == 0 && k < c.n; k++) {
				ret = fn(ctx, i, &c, k);
			}
		}
	}
	store_series_close(&scan);
	return ret != 0 ? ret : rc < 0 ? rc : 0;
}

struct one_window {
	series_value_fn fn;
	void *ctx;
};

static int one_window_value(void *ctx, size_t window, const struct series_cycle *c, size_t k) {
	(void)window;
	const struct one_window *o = ctx;
	return o->fn(o->ctx, c, k);
}

int store_series_values(struct store *store, int series, int64_t from, int64_t to,
			const int64_t *ids, size_t n_ids, unsigned flags, int max_clock,
			series_value_fn fn, void *ctx) {
	struct store_window w = {from, to};
	struct one_window o = {fn, ctx};
	return store_series_windows(store, series, &w, 1, ids, n_ids, flags, max_clock,
				    one_window_value, &o);
}

/* --- hourly rollups, from the values -------------------------------------------------------- */

/* One hour's values being summarized, per channel (ascending ids). */
struct hour_acc {
	int64_t id;
	struct rollup_acc a;
};

struct hour_build {
	struct store *store;
	int64_t hour;
	struct hour_acc *ch;
	size_t n, cap;
	store_rollup_fn fn;
	void *ctx;
};

/* Channel @id's sums in @b, added in id order if new (a cycle's values come by id). */
static struct rollup_acc *hour_channel(struct hour_build *b, int64_t id, size_t *hint) {
	if (*hint < b->n && b->ch[*hint].id == id) { // the same channels come every cycle
		return &b->ch[(*hint)++].a;
	}
	size_t lo = store_lower_bound(b->ch, sizeof(*b->ch), offsetof(struct hour_acc, id),
				      *hint < b->n && b->ch[*hint].id <= id ? *hint : 0, b->n, id);
	if (lo == b->n || b->ch[lo].id != id) {
		if (b->n == b->cap) {
			size_t old = b->cap;
			b->ch = xgrow(b->ch, &b->cap, b->n + 1, sizeof(*b->ch));
			memset(&b->ch[old], 0, (b->cap - old) * sizeof(*b->ch));
		}
		struct hour_acc spare = b->ch[b->n]; // keeps its buffer
		memmove(&b->ch[lo + 1], &b->ch[lo], (b->n - lo) * sizeof(*b->ch));
		b->ch[lo] = spare;
		b->ch[lo].id = id;
		b->n++;
	}
	*hint = lo + 1;
	return &b->ch[lo].a;
}

static void hour_add(struct hour_build *b, const struct series_cycle *c) {
	size_t hint = 0;
	for (size_t k = 0; k < c->n; k++) {
		struct rollup_acc *a = hour_channel(b, c->pairs[k].id, &hint);
		int64_t q = c->pairs[k].q;
		if (c->clock == CLOCK_STATE_UNSYNCED) {
			a->unsynced++;
			continue;
		}
		if (a->n == 0 || q < a->min) {
			a->min = q;
		}
		if (a->n == 0 || q > a->max) {
			a->max = q;
			a->max_ts = c->ts;
		}
		if (a->n == a->cap) {
			a->q = xgrow(a->q, &a->cap, a->n + 1, sizeof(*a->q));
		}
		a->q[a->n++] = q;
		a->sum += q;
	}
}

/* Room for @n bins in store->bin_q and bin_count. */
static void bins_reserve(struct store *store, size_t n) {
	if (n > store->bins_cap) {
		size_t cap = store->bins_cap;
		store->bin_q = xgrow(store->bin_q, &cap, n, sizeof(int64_t));
		store->bin_count = xrealloc(store->bin_count, cap * sizeof(int64_t));
		store->bins_cap = cap;
	}
}

/* The bins of @q[0..n) once sorted: its distinct values ascending with their counts. */
static size_t bins_of_sorted(struct store *store, int64_t *q, size_t n) {
	qsort(q, n, sizeof(*q), store_cmp_i64);
	size_t n_bins = 0;
	for (size_t k = 0; k < n; k++) {
		if (k == 0 || q[k] != q[k - 1]) {
			store->bin_q[n_bins] = q[k];
			store->bin_count[n_bins++] = 0;
		}
		store->bin_count[n_bins - 1]++;
	}
	return n_bins;
}

#define HOUR_BINS_SEARCHED 64

/* The index of the first of the @n ascending @bq not below @v (a search without branches). */
static size_t bins_lower(const int64_t *bq, size_t n, int64_t v) {
	if (n == 0) {
		return 0;
	}
	const int64_t *b = bq;
	while (n > 1) {
		size_t half = n / 2;
		b = b[half] < v ? b + half : b;
		n -= half;
	}
	return (size_t)(b - bq) + (*b < v);
}

/*
 * The bins of @n values @q between @min and @max, counted in an array indexed by value: a
 * sensor's hour spans few of its steps. The array is store->bin_count itself, its counts
 * moved down to their bins as they are read (a bin's index is never above its value's).
 */
static size_t bins_counted(struct store *store, const int64_t *q, size_t n, int64_t min,
			   size_t span) {
	bins_reserve(store, span > n ? span : n);
	int64_t *bq = store->bin_q, *bc = store->bin_count;
	memset(bc, 0, span * sizeof(*bc));
	for (size_t k = 0; k < n; k++) {
		bc[q[k] - min]++;
	}
	size_t n_bins = 0;
	for (size_t v = 0; v < span; v++) {
		int64_t count = bc[v];
		if (count > 0) {
			bq[n_bins] = min + (int64_t)v;
			bc[n_bins++] = count;
		}
	}
	return n_bins;
}

/* An hour whose values span at most this many steps per value (and a few) is counted. */
#define HOUR_SPAN_PER_VALUE 4
#define HOUR_SPAN_EXTRA     64

/*
 * The histogram of an hour's @n values @q, all within [@min, @max], into store->bin_q and
 * bin_count (distinct values ascending, their counts); returns the number of bins. Values
 * within a narrow range are counted by value (bins_counted()). Otherwise, as a sensor's values
 * repeat, each is looked up in the bins found so far and inserted if new, no sort; an hour of
 * more than HOUR_BINS_SEARCHED distinct values is sorted instead. The same bins every way.
 */
static size_t hour_bins(struct store *store, int64_t *q, size_t n, int64_t min, int64_t max) {
	int64_t steps;
	if (n > 0 && !__builtin_sub_overflow(max, min, &steps) &&
	    (uint64_t)steps < (uint64_t)n * HOUR_SPAN_PER_VALUE + HOUR_SPAN_EXTRA) {
		return bins_counted(store, q, n, min, (size_t)steps + 1);
	}
	bins_reserve(store, n);
	int64_t *bq = store->bin_q, *bc = store->bin_count;
	size_t n_bins = 0, last = 0;
	for (size_t k = 0; k < n; k++) {
		if (n_bins > 0 && bq[last] == q[k]) { // a value often repeats the one before
			bc[last]++;
			continue;
		}
		size_t lo = bins_lower(bq, n_bins, q[k]);
		last = lo;
		if (lo < n_bins && bq[lo] == q[k]) {
			bc[lo]++;
			continue;
		}
		if (n_bins == HOUR_BINS_SEARCHED) {
			return bins_of_sorted(store, q, n);
		}
		memmove(&bq[lo + 1], &bq[lo], (n_bins - lo) * sizeof(*bq));
		memmove(&bc[lo + 1], &bc[lo], (n_bins - lo) * sizeof(*bc));
		bq[lo] = q[k];
		bc[lo] = 1;
		n_bins++;
	}
	return n_bins;
}

/* The hour's rollups, channel by channel, to b->fn; the sums start again. */
static int hour_flush(struct hour_build *b) {
	struct store *store = b->store;
	int ret = 0;
	for (size_t i = 0; i < b->n; i++) {
		struct rollup_acc *a = &b->ch[i].a;
		if (ret == 0 && (a->n > 0 || a->unsynced > 0)) {
			size_t n_bins = hour_bins(store, a->q, a->n, a->min, a->max);
			struct store_rollup r = {.hour = b->hour,
						 .channel_id = b->ch[i].id,
						 .count = (int64_t)a->n,
						 .sum_q = a->sum,
						 .min_q = a->n ? a->min : 0,
						 .max_q = a->n ? a->max : 0,
						 .max_ts = a->n ? a->max_ts : 0,
						 .unsynced = a->unsynced,
						 .n_bins = n_bins,
						 .bin_q = store->bin_q,
						 .bin_count = store->bin_count};
			ret = b->fn(b->ctx, &r);
		}
		a->n = 0;
		a->sum = 0;
		a->unsynced = 0;
	}
	b->n = 0;
	return ret;
}

/*
 * The hourly rollups of [@from, @to) (whole hours) of @ids, computed from the stored values,
 * in (hour, channel_id) order: the values of the history kept (chunks and head alike).
 */
int store_compute_rollups(struct store *store, int64_t from, int64_t to, const int64_t *ids,
			  size_t n_ids, bool scaled, store_rollup_fn fn, void *ctx) {
	struct series_scan scan;
	int ret = store_series_open(store, &scan, SERIES_CYCLES, from, to, ids, n_ids,
				    SCAN_VALUES | (scaled ? SCAN_SCALED : 0));
	struct hour_build b = {.store = store, .hour = INT64_MIN, .fn = fn, .ctx = ctx};
	struct series_cycle c;
	int rc = 0;
	while (ret == 0 && (rc = store_series_next(&scan, &c)) > 0) {
		int64_t hour = timefmt_floor(c.ts, HOUR_S);
		if (hour != b.hour) {
			ret = hour_flush(&b);
			b.hour = hour;
		}
		hour_add(&b, &c);
	}
	store_series_close(&scan);
	ret = ret != 0 ? ret : rc < 0 ? rc : hour_flush(&b);
	for (size_t i = 0; i < b.cap; i++) {
		free(b.ch[i].a.q);
	}
	free(b.ch);
	return ret;
}
