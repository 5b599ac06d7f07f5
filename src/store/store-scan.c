/* The store's reads: channels, the info, cycles and sample rows scanned in time order. */
#include "store-internal.h"

/*
 * The writer moves a channel's last_seen only at its first cycle of each hour (so a steady
 * cycle writes no channel rows); the last cycle that had it is in the raw rows of that hour.
 */
static int last_cycles(struct store *store, struct store_channel *list, size_t n) {
	int64_t from = INT64_MAX, to = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (list[i].last_seen > 0 &&
		    timefmt_floor(list[i].last_seen, HOUR_S) + HOUR_S > to) {
			to = timefmt_floor(list[i].last_seen, HOUR_S) + HOUR_S;
		}
	}
	for (size_t i = 0; i < n; i++) {
		// Channels that ended hours before the newest keep the stored, hour-exact value.
		if (list[i].last_seen > 0 && list[i].last_seen >= to - 2 * HOUR_S &&
		    list[i].last_seen < from) {
			from = list[i].last_seen;
		}
	}
	if (from >= to) {
		return 0;
	}
	struct series_scan scan;
	int rc = store_series_open(store, &scan, SERIES_CYCLES, from, to, NULL, 0, SCAN_VALUES);
	struct series_cycle c;
	while (rc == 0 && (rc = store_series_next(&scan, &c)) > 0) {
		for (size_t k = 0; k < c.n; k++) {
			for (size_t i = 0; i < n; i++) {
				if (list[i].id == c.pairs[k].id && c.ts > list[i].last_seen &&
				    timefmt_floor(c.ts, HOUR_S) ==
					    timefmt_floor(list[i].last_seen, HOUR_S)) {
					list[i].last_seen = c.ts;
				}
			}
		}
		rc = 0;
	}
	store_series_close(&scan);
	return rc;
}

int store_channel_counts(struct store *store, size_t *total, size_t *present) {
	*total = *present = 0;
	sqlite3_stmt *st = store_stmt(store, ST_CHANNEL_COUNTS);
	if (!st) {
		return -EIO;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*total = (size_t)sqlite3_column_int64(st, 0);
		*present = (size_t)sqlite3_column_int64(st, 1);
	}
	store_done(st);
	return rc == SQLITE_ROW ? 0 : store_fail(store, rc, "could not count channels");
}

int store_channels(struct store *store, struct store_channel **out, size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = store_stmt(store, ST_CHANNELS);
	if (!st) {
		return -EIO;
	}
	struct store_channel *list = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		list = xgrow(list, &cap, len + 1, sizeof(*list));
		struct store_channel *c = &list[len++];
		*c = (struct store_channel){.id = sqlite3_column_int64(st, 0)};
		c->ch.key = xstrdup(store_column_text(st, 1));
		c->ch.source = xstrdup(store_column_text(st, 2));
		c->ch.label = xstrdup(store_column_text(st, 3));
		if (!channel_kind_parse(store_column_text(st, 4), &c->ch.kind)) {
			c->ch.kind = CHANNEL_KIND_OTHER;
		}
		const char *unit = channel_unit_lookup(store_column_text(st, 5));
		c->ch.unit = unit ? unit : channel_kind_unit(c->ch.kind);
		c->ch.resolution = sqlite3_column_double(st, 6);
		c->ch.path = store_dup_or_null(store_column_text(st, 7));
		c->ch.meta = store_dup_or_null(store_column_text(st, 8));
		c->first_seen = sqlite3_column_int64(st, 9);
		c->last_seen = sqlite3_column_int64(st, 10);
		c->present = sqlite3_column_int(st, 11) != 0;
	}
	store_done(st);
	if (rc != SQLITE_DONE) {
		store_channels_free(list, len);
		return store_fail(store, rc, "could not read channels");
	}
	rc = last_cycles(store, list, len);
	if (rc < 0) {
		store_channels_free(list, len);
		return rc;
	}
	*out = list;
	*n = len;
	return 0;
}

void store_channels_free(struct store_channel *list, size_t n) {
	for (size_t i = 0; i < n; i++) {
		channel_finish(&list[i].ch);
	}
	free(list);
}

static int64_t file_size(const char *path, const char *suffix) {
	char *name = xasprintf("%s%s", path, suffix);
	struct stat sb;
	int64_t size = stat(name, &sb) == 0 ? (int64_t)sb.st_size : 0;
	free(name);
	return size;
}

/* Runs the one-row query @which with ?1 = @param into @out[0..n) (NULL reads as 0, *null). */
static int query_row(struct store *store, enum stmt which, int64_t param, int64_t *out, size_t n,
		     bool *null) {
	sqlite3_stmt *st;
	int rc = store_prepare(store, which, "a summary", &st);
	if (rc < 0) {
		return rc;
	}
	if (sqlite3_bind_parameter_count(st) > 0) {
		sqlite3_bind_int64(st, 1, param);
	}
	int step = sqlite3_step(st);
	for (size_t i = 0; i < n; i++) {
		bool none = step != SQLITE_ROW || sqlite3_column_type(st, (int)i) == SQLITE_NULL;
		out[i] = none ? 0 : sqlite3_column_int64(st, (int)i);
		if (null) {
			null[i] = none;
		}
	}
	sqlite3_finalize(st);
	return step == SQLITE_ROW || step == SQLITE_DONE
		       ? 0
		       : store_fail(store, step, "could not summarize");
}

/* The first and the last time of the cycles in the head and in the blocks, in one snapshot. */
static int span(struct store *store, bool legacy, int64_t *first, int64_t *last, bool *empty) {
	int64_t head[4], f, l;
	bool null[4], nf, nl;
	int rc = query_row(store, legacy ? ST_INFO_HEAD_LEGACY : ST_INFO_HEAD, INT64_MAX, head, 4,
			   null);
	if (rc == 0) {
		rc = query_row(store, ST_FIRST_BLOCK, SERIES_CYCLES, &f, 1, &nf);
	}
	if (rc == 0) {
		rc = query_row(store, ST_LAST_BLOCK, SERIES_CYCLES, &l, 1, &nl);
	}
	*empty = null[2] && nf;
	*first = null[2] ? f : nf ? head[2] : head[2] < f ? head[2] : f;
	*last = null[3] ? l : nl ? head[3] : head[3] > l ? head[3] : l;
	return rc;
}

int store_cycle_span(struct store *store, int64_t *first, int64_t *last, bool *empty) {
	bool began = store_read_begin(store), legacy;
	int rc = store_legacy(store, &legacy);
	if (rc == 0) {
		rc = span(store, legacy, first, last, empty);
	}
	store_read_end(store, began);
	return rc;
}

/*
 * The days before the day horizon are counted from cycle_days, one row a day; after it, the
 * compacted blocks' counts and the head's rows: all in one read snapshot.
 */
static int count_cycles(struct store *store, struct store_info *info) {
	bool legacy, empty;
	int64_t horizon = 0, days[2], blocks[2], head[4];
	int rc = store_legacy(store, &legacy);
	if (rc == 0) {
		rc = store_state_get_int(store, STATE_DAY_HORIZON, &horizon);
	}
	if (rc == 0) {
		rc = query_row(store, ST_INFO_DAYS, horizon, days, 2, NULL);
	}
	if (rc == 0) {
		rc = query_row(store, ST_INFO_BLOCKS, horizon, blocks, 2, NULL);
	}
	if (rc == 0) {
		rc = query_row(store, legacy ? ST_INFO_HEAD_LEGACY : ST_INFO_HEAD, horizon, head, 4,
			       NULL);
	}
	if (rc == 0) {
		rc = span(store, legacy, &info->first_cycle, &info->last_cycle, &empty);
	}
	info->cycles = days[0] + blocks[0] + head[0];
	info->unsynced_cycles = days[1] + blocks[1] + head[1];
	return rc;
}

int store_info(struct store *store, struct store_info *info) {
	*info = (struct store_info){0};
	bool began = store_read_begin(store);
	int rc = count_cycles(store, info);
	store_read_end(store, began);
	if (rc < 0) {
		return rc;
	}
	int64_t page_size = 0; // stays 0 if the pragma fails
	store_pragma_int(store, ST_PAGE_SIZE, &page_size);
	const char *file = sqlite3_db_filename(store->db, "main");
	if (file && *file) {
		info->size_bytes = file_size(file, "") + file_size(file, "-wal");
	} else {
		int64_t pages = 0;
		store_pragma_int(store, ST_PAGE_COUNT, &pages);
		info->size_bytes = pages * page_size;
	}
	int cur = 0, hi = 0;
	sqlite3_db_status(store->db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
	info->bytes_written = (int64_t)cur * (page_size > 0 ? (int)page_size : 4096);
	return 0;
}

int store_scan_cycles(struct store *store, int64_t from, int64_t to, store_cycle_fn fn, void *ctx) {
	struct series_scan scan;
	int rc = store_series_open(store, &scan, SERIES_CYCLES, from, to, NULL, 0, 0), ret = 0;
	struct series_cycle c;
	while (rc == 0 && ret == 0 && (rc = store_series_next(&scan, &c)) > 0) {
		rc = 0;
		struct store_cycle cycle = {.ts = c.ts, .clock = (enum clock_state)c.clock};
		ret = fn(ctx, &cycle);
	}
	store_series_close(&scan);
	return ret != 0 ? ret : rc < 0 ? rc : 0;
}

/* A value handed on as a store_sample, to a window's function or a plain one. */
struct sample_fwd {
	store_sample_fn fn;
	store_window_sample_fn window_fn;
	void *ctx;
};

static int forward_sample(void *ctx, size_t window, const struct series_cycle *c, size_t k) {
	const struct sample_fwd *f = ctx;
	struct store_sample s = {.ts = c->ts,
				 .channel_id = c->pairs[k].id,
				 .q = c->pairs[k].q,
				 .clock = (enum clock_state)c->clock};
	return f->window_fn ? f->window_fn(f->ctx, window, &s) : f->fn(f->ctx, &s);
}

static int scan_windows(struct store *store, const struct store_window *w, size_t n,
			const int64_t *ids, size_t n_ids, bool include_unsynced,
			const struct sample_fwd *f) {
	return store_series_windows(store, SERIES_CYCLES, w, n, ids, n_ids,
				    SCAN_VALUES | SCAN_SCALED,
				    include_unsynced ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED,
				    forward_sample, (void *)f);
}

int store_scan_samples(struct store *store, int64_t from, int64_t to, const int64_t *ids,
		       size_t n_ids, bool include_unsynced, store_sample_fn fn, void *ctx) {
	struct store_window w = {from, to};
	struct sample_fwd f = {.fn = fn, .ctx = ctx};
	return scan_windows(store, &w, 1, ids, n_ids, include_unsynced, &f);
}

int store_scan_sample_windows(struct store *store, const struct store_window *w, size_t n,
			      const int64_t *ids, size_t n_ids, bool include_unsynced,
			      store_window_sample_fn fn, void *ctx) {
	struct sample_fwd f = {.window_fn = fn, .ctx = ctx};
	return scan_windows(store, w, n, ids, n_ids, include_unsynced, &f);
}
