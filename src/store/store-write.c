/*
 * The store's writer: the channel cache, a cycle's packed row, the writer's hour of decoded
 * rows around a change, and which channels are present.
 */
#include "store-internal.h"

/* --- channels (writer's cache) ----------------------------------------------------------- */

/* Finds @key, or where it would go (*found false). */
size_t store_known_find(struct store *store, const char *key, bool *found) {
	size_t lo = 0, hi = store->n_known;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(store->known[mid].key, key);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	*found = false;
	return lo;
}

static struct known_channel *known_insert(struct store *store, size_t at, const char *key) {
	store->known =
		xgrow(store->known, &store->cap_known, store->n_known + 1, sizeof(*store->known));
	memmove(&store->known[at + 1], &store->known[at],
		(store->n_known - at) * sizeof(*store->known));
	store->n_known++;
	struct known_channel *k = &store->known[at];
	*k = (struct known_channel){.key = xstrdup(key)};
	return k;
}

int store_known_load(struct store *store) {
	// Another connection (an import) may have added or rescaled channels since the load.
	int64_t version = 0;
	bool none;
	if (store_query_int(store, ST_DATA_VERSION, 0, &version, &none) < 0) {
		return -EIO;
	}
	store->seen_version = version;
	if (store->known_valid && version == store->data_version) {
		return 0;
	}
	store_known_clear(store);
	store->data_version = version;
	sqlite3_stmt *st = store_stmt(store, ST_CHANNELS);
	if (!st) {
		return -EIO;
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		// Rows come ordered by key, so appending keeps the array sorted.
		struct known_channel *k =
			known_insert(store, store->n_known, store_column_text(st, 1));
		k->id = sqlite3_column_int64(st, 0);
		k->source = store_dup_or_null(store_column_text(st, 2));
		k->label = store_dup_or_null(store_column_text(st, 3));
		k->resolution = sqlite3_column_double(st, 6);
		k->path = store_dup_or_null(store_column_text(st, 7));
		k->meta = store_dup_or_null(store_column_text(st, 8));
		k->last_seen = sqlite3_column_int64(st, 10);
		k->present = sqlite3_column_int(st, 11) != 0;
	}
	store_done(st);
	if (rc != SQLITE_DONE) {
		store_known_clear(store);
		return store_fail(store, rc, "could not read channels");
	}
	store->known_valid = true;
	return 0;
}

bool store_resolution_valid(double r) {
	return isfinite(r) && r > 0;
}

int store_channel_insert(struct store *store, const struct channel *ch, int64_t seen, bool present,
			 int64_t *id) {
	sqlite3_stmt *st = store_stmt(store, ST_CHANNEL_INSERT);
	if (!st) {
		return -EIO;
	}
	const char *unit = ch->unit ? ch->unit : channel_kind_unit(ch->kind);
	sqlite3_bind_text(st, 1, ch->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ch->source ? ch->source : "import", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, ch->label ? ch->label : ch->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, channel_kind_name(ch->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, unit, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 6, ch->resolution);
	sqlite3_bind_text(st, 7, ch->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, ch->meta, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 9, seen);
	sqlite3_bind_int(st, 10, present);
	int rc = store_step_done(st);
	if (rc != SQLITE_OK) {
		return store_fail(store, rc, "could not add a channel");
	}
	*id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

int store_bind_id_exec(struct store *store, enum stmt which, int64_t id, int64_t v,
		       const char *what) {
	sqlite3_stmt *st = store_stmt(store, which);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_bind_parameter_count(st) > 1) {
		sqlite3_bind_int64(st, 2, v);
	}
	int rc = store_step_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, what);
}

/*
 * Registers @ch or brings its row up to date: last_seen only when the hour changes or the
 * channel comes back, so a steady cycle writes no channel rows at all. Sets *k (NULL when the
 * channel is unusable; logged once).
 */
static int channel_seen(struct store *store, const struct channel *ch, int64_t ts, size_t *hint,
			bool verified, struct known_channel **out) {
	// The channel list rarely changes: where this position's key was found last cycle is
	// checked first, so a steady cycle does one comparison per channel, not a search.
	bool found = *hint < store->n_known && strcmp(store->known[*hint].key, ch->key) == 0;
	size_t at = found ? *hint : store_known_find(store, ch->key, &found);
	*hint = at;
	struct known_channel *k = found ? &store->known[at] : NULL;
	*out = NULL;
	if (!k) {
		k = known_insert(store, at, ch->key);
		if (!channel_key_valid(ch->key) || !store_resolution_valid(ch->resolution)) {
			log_error(
				"store: channel '%s' has a bad key or resolution (%g); its values "
				"are not stored",
				ch->key, ch->resolution);
			return 0; // id 0 remembers the refusal
		}
		int rc = store_channel_insert(store, ch, ts, true, &k->id);
		if (rc < 0) {
			return rc;
		}
		k->source = store_dup_or_null(ch->source);
		k->label = store_dup_or_null(ch->label);
		k->path = store_dup_or_null(ch->path);
		k->meta = store_dup_or_null(ch->meta);
		k->resolution = ch->resolution;
		k->last_seen = ts;
		k->present = true;
		*out = k;
		return 0;
	}
	if (k->id == 0) {
		return 0;
	}
	if (!verified &&
	    (!store_text_eq(k->source, ch->source) || !store_text_eq(k->label, ch->label) ||
	     !store_text_eq(k->path, ch->path) || !store_text_eq(k->meta, ch->meta))) {
		sqlite3_stmt *st = store_stmt(store, ST_CHANNEL_UPDATE);
		if (!st) {
			return -EIO;
		}
		sqlite3_bind_int64(st, 1, k->id);
		sqlite3_bind_text(st, 2, ch->source ? ch->source : "import", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, ch->label ? ch->label : ch->key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, ch->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, ch->meta, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, channel_kind_name(ch->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, ch->unit ? ch->unit : channel_kind_unit(ch->kind), -1,
				  SQLITE_STATIC);
		int rc = store_step_done(st);
		if (rc != SQLITE_OK) {
			return store_fail(store, rc, "could not update a channel");
		}
		free(k->source);
		free(k->label);
		free(k->path);
		free(k->meta);
		k->source = store_dup_or_null(ch->source);
		k->label = store_dup_or_null(ch->label);
		k->path = store_dup_or_null(ch->path);
		k->meta = store_dup_or_null(ch->meta);
	}
	// resolution_warned: no common step exists; the search is not repeated every cycle
	if (ch->resolution < k->resolution && store_resolution_valid(ch->resolution) &&
	    !k->resolution_warned) {
		// Never coarsen live readings: rescale the stored integers to a finer common step.
		double res;
		int64_t factor;
		if (channel_common_resolution(k->resolution, ch->resolution, &res, &factor)) {
			int rc = store_rescale_channel(store, k->id, factor, res, ts);
			if (rc < 0) {
				return rc;
			}
			log_info("store: channel '%s' refined from resolution %g to %g", ch->key,
				 k->resolution, res);
			k->resolution = res;
		} else {
			log_warn(
				"store: channel '%s' now reports resolution %g, which has no common "
				"step with the stored %g; values stay quantized at %g",
				ch->key, ch->resolution, k->resolution, k->resolution);
			k->resolution_warned = true;
		}
	}
	if (!k->present || ts / HOUR_S != k->last_seen / HOUR_S) {
		int rc = store_bind_id_exec(store, ST_CHANNEL_SEEN, k->id, ts,
					    "could not mark a channel");
		if (rc < 0) {
			return rc;
		}
		k->present = true;
		k->last_seen = ts > k->last_seen ? ts : k->last_seen;
	}
	*out = k;
	return 0;
}

int store_boot_row(struct store *store, const char *boot_id, int64_t *row) {
	if (store->boot_id && strcmp(store->boot_id, boot_id) == 0) {
		*row = store->boot_row;
		return 0;
	}
	sqlite3_stmt *st = store_stmt(store, ST_BOOT_INSERT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, boot_id, -1, SQLITE_STATIC);
	int rc = store_step_done(st);
	if (rc != SQLITE_OK) {
		return store_fail(store, rc, "could not record the boot");
	}
	st = store_stmt(store, ST_BOOT_SELECT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, boot_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*row = sqlite3_column_int64(st, 0);
	}
	store_done(st);
	if (rc != SQLITE_ROW) {
		return store_fail(store, rc, "could not find the boot");
	}
	free(store->boot_id);
	store->boot_id = xstrdup(boot_id);
	store->boot_row = *row;
	return 0;
}

/* --- cycles ------------------------------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b) {
	const struct codec_pair *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Sorts @pairs by id unless they already ascend, and drops repeated ids: a channel listed
 * twice keeps its first value. Returns how many pairs are left.
 */
size_t store_pairs_sort_unique(struct codec_pair *pairs, size_t n) {
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++) {
		sorted = pairs[i - 1].id < pairs[i].id;
	}
	if (sorted) { // ids usually follow the sampler's order: sorting is for a changed list
		return n;
	}
	qsort(pairs, n, sizeof(*pairs), cmp_pair);
	size_t m = 1; // n > 1 here
	for (size_t i = 1; i < n; i++) {
		if (pairs[i].id != pairs[m - 1].id) {
			pairs[m++] = pairs[i];
		}
	}
	return m;
}

/* llround(value / resolution), false if it is not a finite integer in range. */
bool store_quantize(double value, double resolution, int64_t *q) {
	double x = round(value / resolution);
	if (!isfinite(x) || fabs(x) >= 9.2e18) {
		return false;
	}
	*q = (int64_t)x;
	return true;
}

/* --- the writer's hour ------------------------------------------------------------------- */

static void hour_reserve(struct hour_rows *h, size_t need) {
	if (need > h->cap) {
		size_t old = h->cap;
		h->rows = xgrow(h->rows, &h->cap, need, sizeof(*h->rows));
		memset(&h->rows[old], 0, (h->cap - old) * sizeof(*h->rows));
	}
}

/* The base a delta row of @h's row @i is read against: never NULL, a row may have no pair. */
static const struct codec_pair *row_base(const struct hour_rows *h, size_t i) {
	return i > 0 && h->rows[i - 1].pairs ? h->rows[i - 1].pairs : &store_no_pair;
}

/* Whether the rows held are those of @ts's hour around @ts: the rows before and after it. */
static bool hour_covers(const struct hour_rows *h, int64_t ts) {
	return h->loaded && h->hour == timefmt_floor(ts, HOUR_S) &&
	       (h->first || (h->n > 0 && ts > h->rows[0].ts)) &&
	       (h->last || (h->n > 0 && ts < h->rows[h->n - 1].ts));
}

/* Drops the held rows before row @k (their buffers move past the rows kept). */
static void hour_drop_front(struct hour_rows *h, size_t k) {
	for (size_t j = 0; j < k; j++) {
		struct hour_row t = h->rows[0];
		memmove(&h->rows[0], &h->rows[1], (h->n - 1) * sizeof(*h->rows));
		h->rows[--h->n] = t;
	}
	h->first = h->first && k == 0;
}

/*
 * Reads the hour's rows from @from on (the rows held are those before it) until the row after
 * @ts and HOUR_KEEP_AFTER more are held, keeping of the rows before @ts only the last.
 */
static int hour_read(struct store *store, int64_t from, int64_t ts) {
	struct hour_rows *h = &store->hour;
	int64_t end = h->hour > INT64_MAX - HOUR_S ? INT64_MAX : h->hour + HOUR_S;
	sqlite3_stmt *st = store_stmt_window(store, ST_SAMPLES_HOUR, from, end);
	if (!st) {
		return -EIO;
	}
	int rc;
	bool bad = false;
	size_t after = 0; // rows held past @ts
	int64_t at = 0;
	while (after <= HOUR_KEEP_AFTER && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		at = sqlite3_column_int64(st, 0);
		if (h->n >= 2 && h->rows[h->n - 1].ts < ts) {
			hour_drop_front(h, h->n - 1); // only the last row before @ts is a base
		}
		hour_reserve(h, h->n + 1);
		struct hour_row *r = &h->rows[h->n];
		const uint8_t *data = sqlite3_column_blob(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		r->ts = at;
		r->pairs = xgrow(r->pairs, &r->cap, len + 1, sizeof(*r->pairs));
		r->n = codec_row_decode(r->pairs, data, len, h->n > 0 ? row_base(h, h->n) : NULL,
					h->n > 0 ? h->rows[h->n - 1].n : 0, &bad);
		h->n++;
		after += at > ts;
		if (bad) {
			break;
		}
	}
	store_done(st);
	if (bad) {
		log_error("store: damaged sample row at %lld: %s", (long long)at, store->path);
		h->damaged = true;
		h->loaded = false;
		h->n = 0;
		return -EINVAL;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		h->loaded = false;
		h->n = 0;
		return store_fail(store, rc, "could not read samples");
	}
	h->last = rc == SQLITE_DONE;
	h->loaded = true;
	return 0;
}

/*
 * Holds the rows of @ts's hour around @ts in store->hour, decoded: the rows after those held
 * are read on from the last one held, anything else from the hour's first row. The caller ran
 * store_known_load() in this transaction, which drops the rows when another connection wrote.
 */
int store_hour_load(struct store *store, int64_t ts) {
	struct hour_rows *h = &store->hour;
	int64_t hour = timefmt_floor(ts, HOUR_S);
	if (hour_covers(h, ts)) {
		return 0;
	}
	if (h->damaged && h->hour == hour) {
		return -EINVAL;
	}
	if (h->loaded && h->hour == hour && h->n > 0 && (h->first || ts > h->rows[0].ts)) {
		if (h->rows[h->n - 1].ts == INT64_MAX) {
			h->last = true; // no row can follow it
			return 0;
		}
		return hour_read(store, h->rows[h->n - 1].ts + 1, ts); // on from the last held
	}
	h->loaded = false;
	h->damaged = false;
	h->n = 0;
	h->hour = hour;
	h->first = true;
	return hour_read(store, hour, ts);
}

/*
 * Keeps the rows around row @i (HOUR_KEEP_BEFORE before it, HOUR_KEEP_AFTER after it) and one
 * spare buffer; the rest is freed. Slots past the rows hold the spare at most, at rows[n].
 */
static void hour_keep(struct hour_rows *h, size_t i) {
	size_t lo = i > HOUR_KEEP_BEFORE ? i - HOUR_KEEP_BEFORE : 0;
	size_t hi = i + 1 + HOUR_KEEP_AFTER < h->n ? i + 1 + HOUR_KEEP_AFTER : h->n;
	size_t end = h->n < h->cap ? h->n + 1 : h->n;
	struct hour_row spare = {0};
	for (size_t j = 0; j < end; j++) {
		if (j >= lo && j < hi) {
			continue;
		}
		if (!spare.pairs && h->rows[j].pairs) {
			spare = (struct hour_row){.pairs = h->rows[j].pairs, .cap = h->rows[j].cap};
		} else {
			free(h->rows[j].pairs);
		}
	}
	memmove(&h->rows[0], &h->rows[lo], (hi - lo) * sizeof(*h->rows));
	memset(&h->rows[hi - lo], 0, (end - (hi - lo)) * sizeof(*h->rows));
	h->first = h->first && lo == 0;
	h->last = h->last && hi == h->n;
	h->n = hi - lo;
	size_t cap = HOUR_KEEP_BEFORE + 1 + HOUR_KEEP_AFTER + 1;
	if (h->cap > 2 * cap) { // after a long read from the hour's first row
		h->rows = xrealloc(h->rows, cap * sizeof(*h->rows));
		h->cap = cap;
	}
	if (spare.pairs) {
		h->rows[h->n] = spare;
	}
}

/* The index of the row at @ts in the loaded hour, or where it would go. */
size_t store_hour_find(const struct hour_rows *h, int64_t ts, bool *found) {
	size_t lo = store_lower_bound(h->rows, sizeof(*h->rows), offsetof(struct hour_row, ts), 0,
				      h->n, ts);
	*found = lo < h->n && h->rows[lo].ts == ts;
	return lo;
}

/*
 * Writes row @i of the loaded hour coded against row @i - 1: a new row with @clock and @boot (0:
 * none), or over.
 */
static int hour_write(struct store *store, size_t i, bool insert, int clock, int64_t boot) {
	struct hour_rows *h = &store->hour;
	const struct hour_row *r = &h->rows[i];
	size_t len = store_encode_row(store, r->pairs, r->n, i > 0 ? row_base(h, i) : NULL,
				      i > 0 ? h->rows[i - 1].n : 0);
	sqlite3_stmt *st = store_stmt(store, insert ? ST_SAMPLES_INSERT : ST_SAMPLES_UPDATE);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, r->ts);
	if (insert) {
		sqlite3_bind_int(st, 2, clock);
		sqlite3_bind_blob(st, 3, store->blob, (int)len, SQLITE_STATIC);
		if (boot > 0) {
			sqlite3_bind_int64(st, 4, boot);
		}
	} else {
		sqlite3_bind_blob(st, 2, store->blob, (int)len, SQLITE_STATIC);
	}
	int rc = store_step_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not store samples");
}

/* The value of channel @id in @pairs (sorted), from *@at on; false if it has none. */
static bool value_of(const struct codec_pair *pairs, size_t n, size_t *at, int64_t id, int64_t *q) {
	while (*at < n && pairs[*at].id < id) {
		(*at)++;
	}
	if (*at < n && pairs[*at].id == id) {
		*q = pairs[*at].q;
		return true;
	}
	return false;
}

/* Whether @row codes the same against @old as against @pairs: they agree on its channels. */
static bool same_base_for(const struct hour_row *row, const struct hour_row *old,
			  const struct codec_pair *pairs, size_t n) {
	size_t a = 0, b = 0;
	for (size_t k = 0; k < row->n; k++) {
		int64_t qa = 0, qb = 0;
		bool ha = value_of(old->pairs, old->n, &a, row->pairs[k].id, &qa);
		bool hb = value_of(pairs, n, &b, row->pairs[k].id, &qb);
		if (ha != hb || qa != qb) {
			return false;
		}
	}
	return true;
}

/*
 * The one way a row of samples is written: row @ts becomes @pairs (sorted by id, distinct),
 * inserted with @clock and @boot (0: none) if new, coded against the row before it in its hour;
 * the row after it in the hour, whose base this is, is coded again against it. The caller ran
 * store_known_load().
 */
int store_hour_put(struct store *store, int64_t ts, int clock, int64_t boot,
		   const struct codec_pair *pairs, size_t n) {
	int rc = store_hour_load(store, ts);
	if (rc == -EINVAL) {
		// A damaged row earlier in the hour (logged): this one is written so that it reads
		// on its own, and later cycles are not lost to the damage.
		size_t len = store_encode_row(store, pairs, n, NULL, 0);
		sqlite3_stmt *st = store_stmt(store, ST_SAMPLES_PUT);
		if (!st) {
			return -EIO;
		}
		sqlite3_bind_int64(st, 1, ts);
		sqlite3_bind_int(st, 2, clock);
		sqlite3_bind_blob(st, 3, store->blob, (int)len, SQLITE_STATIC);
		if (boot > 0) {
			sqlite3_bind_int64(st, 4, boot);
		}
		rc = store_step_done(st);
		return rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not store samples");
	}
	if (rc < 0) {
		return rc;
	}
	struct hour_rows *h = &store->hour;
	bool found;
	size_t i = store_hour_find(h, ts, &found);
	if (!found) {
		hour_reserve(h, h->n + 1);
		struct hour_row spare = h->rows[h->n]; // its buffer moves to the new slot
		memmove(&h->rows[i + 1], &h->rows[i], (h->n - i) * sizeof(*h->rows));
		h->rows[i] = spare;
		h->rows[i].ts = ts;
		h->n++;
	}
	struct hour_row *r = &h->rows[i];
	// A merge often adds a channel the next row lacks: then that row's bytes stay as they are.
	bool rebase = i + 1 < h->n && (!found || !same_base_for(&h->rows[i + 1], r, pairs, n));
	r->pairs = xgrow(r->pairs, &r->cap, n + 1, sizeof(*r->pairs));
	memcpy(r->pairs, pairs, n * sizeof(*pairs));
	r->n = n;
	rc = hour_write(store, i, !found, clock, boot);
	if (rc == 0 && rebase) {
		rc = hour_write(store, i + 1, false, 0, 0);
	}
	if (rc < 0) {
		h->loaded = false;
	} else {
		hour_keep(h, i);
	}
	return rc;
}

/*
 * The cycle's own row: in a database converted from schema 10 or earlier until its conversion
 * ends, a row of the table cycles (whose key refuses a stamp stored already); else the head row,
 * which must be new.
 */
static int cycle_row(struct store *store, const struct cycle *cycle, int64_t boot) {
	bool legacy;
	int rc = store_legacy_cached(store, &legacy);
	if (rc < 0) {
		return rc;
	}
	if (!legacy) {
		if ((rc = store_hour_load(store, cycle->ts)) < 0 && rc != -EINVAL) {
			return rc;
		}
		bool found = false;
		if (rc == 0) {
			store_hour_find(&store->hour, cycle->ts, &found);
		}
		return found ? -EEXIST : 0; // a damaged hour: the insert's key decides
	}
	sqlite3_stmt *st = store_stmt(store, ST_CYCLE_INSERT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, cycle->ts);
	if (boot > 0) {
		sqlite3_bind_int64(st, 2, boot);
	}
	sqlite3_bind_int(st, 3, (int)cycle->clock);
	rc = store_step_done(st);
	// Only a duplicate is refused: a stored stamp far in the future (an imported row, a clock
	// glitch) must not block every later cycle. The daemon keeps its own stamps increasing.
	// The key says so on the insert itself, so a cycle asks nothing before it.
	if (rc != SQLITE_OK &&
	    sqlite3_extended_errcode(store->db) == SQLITE_CONSTRAINT_PRIMARYKEY) {
		return -EEXIST;
	}
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not store a cycle");
}

static int write_cycle(struct store *store, const struct cycle *cycle) {
	int rc = store_known_load(store);
	if (rc < 0) {
		return rc;
	}
	int64_t boot = 0;
	if (cycle->boot_id && (rc = store_boot_row(store, cycle->boot_id, &boot)) < 0) {
		return rc;
	}
	// A cycle stamped into a compacted block (a clock set back by hours) reopens it.
	if ((rc = store_head_open(store, SERIES_CYCLES, cycle->ts)) < 0 ||
	    (rc = cycle_row(store, cycle, boot)) < 0) {
		return rc;
	}

	// The same channel list as the last cycle committed, against the same known cache: the
	// descriptions were compared then (a steady cycle compares only keys).
	bool verified =
		cycle->channels_version != 0 && cycle->channels_version == store->verified_version;
	struct codec_pair *pairs = store->pairs;
	size_t n = 0;
	for (size_t i = 0; i < cycle->n; i++) {
		struct known_channel *k;
		rc = channel_seen(store, &cycle->channels[i], cycle->ts, &store->hint[i], verified,
				  &k);
		if (rc < 0) {
			return rc;
		}
		if (!k || cycle->readings[i].err != 0) {
			continue;
		}
		if (!store_quantize(cycle->readings[i].value, k->resolution, &pairs[n].q)) {
			log_debug("store: %s: value %g is out of range", k->key,
				  cycle->readings[i].value);
			continue;
		}
		pairs[n++].id = k->id;
	}
	n = n > 1 ? store_pairs_sort_unique(pairs, n) : n;
	// A cycle without a value has its row too: the head's rows are the cycles.
	rc = store_hour_put(store, cycle->ts, (int)cycle->clock, boot, pairs, n);
	if (rc < 0 && sqlite3_extended_errcode(store->db) == SQLITE_CONSTRAINT_PRIMARYKEY) {
		return -EEXIST;
	}
	return rc;
}

int store_write_cycle(struct store *store, const struct cycle *cycle) {
	if (cycle->ts < -STORE_TS_LIMIT || cycle->ts > STORE_TS_LIMIT) {
		log_error("store: a cycle at %lld is beyond 34,800 years of 1970: not stored",
			  (long long)cycle->ts);
		return -ERANGE;
	}
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	if (cycle->n > store->pairs_cap) {
		store->pairs =
			xgrow(store->pairs, &store->pairs_cap, cycle->n, sizeof(*store->pairs));
	}
	if (cycle->n > store->hint_cap) {
		size_t old = store->hint_cap;
		store->hint = xgrow(store->hint, &store->hint_cap, cycle->n, sizeof(*store->hint));
		for (size_t i = old; i < store->hint_cap; i++) {
			store->hint[i] = SIZE_MAX; // no hint: search
		}
	}
	rc = write_cycle(store, cycle);
	rc = store_step_end(store, rc);
	// Only a commit of its own makes the updates last: rolled back, or inside a transaction
	// that may still roll back, they are compared again next time.
	store->verified_version = rc == 0 && store->depth == 0 ? cycle->channels_version : 0;
	return rc;
}

/* The latest cycle with a boot at or before @up_to among the compacted blocks, after @after. */
static int last_own_block(struct store *store, int64_t up_to, int64_t after, int64_t *ts) {
	sqlite3_stmt *st;
	int rc = store_prepare(store, ST_BLOCKS_DOWN, "a read of the blocks", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int(st, 1, SERIES_CYCLES);
	sqlite3_bind_int64(st, 2, store_block_of(SERIES_CYCLES, up_to));
	struct block_buf b;
	store_block_init(&b);
	int step = sqlite3_step(st);
	while (rc == 0 && step == SQLITE_ROW && *ts == 0) {
		int64_t block = sqlite3_column_int64(st, 0);
		if (block + BLOCK_S <= after) {
			break; // older than the head's candidate
		}
		b.n = 0;
		while (rc == 0 && step == SQLITE_ROW && sqlite3_column_int64(st, 0) == block) {
			if (!store_block_add_map(&b, sqlite3_column_blob(st, 2),
						 (size_t)sqlite3_column_bytes(st, 2))) {
				log_error("store: damaged map of the block at %lld: %s",
					  (long long)block, store->path);
				rc = -EINVAL;
			}
			step = sqlite3_step(st);
		}
		for (size_t i = b.n; rc == 0 && i-- > 0;) {
			if (b.cycles[i].boot > 0 && b.cycles[i].ts <= up_to &&
			    b.cycles[i].ts > after) {
				*ts = b.cycles[i].ts;
				break;
			}
		}
	}
	if (rc == 0 && step != SQLITE_ROW && step != SQLITE_DONE) {
		rc = store_fail(store, step, "could not read the blocks");
	}
	sqlite3_finalize(st);
	store_block_finish(&b);
	return rc;
}

int store_last_own_cycle(struct store *store, int64_t up_to, int64_t *ts) {
	bool began = store_read_begin(store), legacy, none = true;
	int rc = store_legacy(store, &legacy);
	if (rc == 0) {
		rc = store_query_int(store, legacy ? ST_LAST_OWN_CYCLE_LEGACY : ST_LAST_OWN_CYCLE,
				     up_to, ts, &none);
	}
	int64_t head = rc == 0 && !none ? *ts : 0, block = 0;
	if (rc == 0) {
		rc = last_own_block(store, up_to, head, &block);
	}
	*ts = block > head ? block : head;
	store_read_end(store, began);
	return rc;
}

/* --- presence ---------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int mark_present(struct store *store, const char *const *keys, size_t n) {
	int rc = store_known_load(store);
	if (rc < 0) {
		return rc;
	}
	const char **sorted = xcalloc(n ? n : 1, sizeof(*sorted));
	if (n > 0) {
		memcpy(sorted, keys, n * sizeof(*sorted));
	}
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	for (size_t i = 0; i < store->n_known && rc == 0; i++) {
		struct known_channel *k = &store->known[i];
		const char *key = k->key;
		bool listed = bsearch(&key, sorted, n, sizeof(*sorted), cmp_str) != NULL;
		if (k->id == 0 || listed == k->present) {
			continue;
		}
		rc = store_bind_id_exec(store, listed ? ST_CHANNEL_PRESENT : ST_CHANNEL_ABSENT,
					k->id, 0, "could not mark a channel");
		k->present = listed;
	}
	free(sorted);
	return rc;
}

int store_mark_present(struct store *store, const char *const *keys, size_t n, int64_t now) {
	(void)now; // last_seen moves with stored cycles, not with scans
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, mark_present(store, keys, n));
}
