/* The store's reads: channels, the info, cycles and sample rows scanned in time order. */
#include "store-internal.h"

/* --- reading ------------------------------------------------------------------------------ */

/* Where a scan from @from starts reading: its hour's first row, the start of its chain. */
int64_t store_scan_start(int64_t from) {
	return from < INT64_MIN + HOUR_S ? INT64_MIN : timefmt_floor(from, HOUR_S);
}

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
	sqlite3_stmt *st = store_stmt_window(store, ST_SCAN_SAMPLES, store_scan_start(from), to);
	if (!st) {
		return -EIO;
	}
	struct chain chain;
	store_chain_init(&chain);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);
		const uint8_t *data = sqlite3_column_blob(st, 2);
		store_chain_next(&chain, ts, data, (size_t)sqlite3_column_bytes(st, 2));
		for (size_t k = 0; ts >= from && k < chain.n_prev; k++) {
			for (size_t i = 0; i < n; i++) {
				if (list[i].id == chain.prev[k].id && ts > list[i].last_seen &&
				    timefmt_floor(ts, HOUR_S) ==
					    timefmt_floor(list[i].last_seen, HOUR_S)) {
					list[i].last_seen = ts;
				}
			}
		}
	}
	store_done(st);
	store_chain_finish(&chain);
	return rc == SQLITE_DONE ? 0 : store_fail(store, rc, "could not read samples");
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

int store_info(struct store *store, struct store_info *info) {
	*info = (struct store_info){0};
	sqlite3_stmt *st = store_stmt(store, ST_INFO);
	if (!st) {
		return -EIO;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		info->cycles = sqlite3_column_int64(st, 0);
		info->first_cycle = sqlite3_column_int64(st, 1);
		info->last_cycle = sqlite3_column_int64(st, 2);
		info->unsynced_cycles = sqlite3_column_int64(st, 3);
	}
	store_done(st);
	if (rc != SQLITE_ROW) {
		return store_fail(store, rc, "could not summarize");
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
	sqlite3_stmt *st = store_stmt_window(store, ST_SCAN_CYCLES, from, to);
	if (!st) {
		return -EIO;
	}
	int rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_cycle c = {
			.ts = sqlite3_column_int64(st, 0),
			.clock = (enum clock_state)sqlite3_column_int(st, 1),
		};
		if ((ret = fn(ctx, &c)) != 0) {
			break;
		}
	}
	store_done(st);
	return store_scan_result(store, rc, ret, "could not read cycles");
}

int store_cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t *store_sorted_ids(const int64_t *ids, size_t n) {
	int64_t *copy = xcalloc(n ? n : 1, sizeof(*copy));
	if (n > 0) {
		memcpy(copy, ids, n * sizeof(*copy));
	}
	qsort(copy, n, sizeof(*copy), store_cmp_i64);
	return copy;
}

/* What a scan delivers: the channels wanted and the rescales under way (both usually none). */
struct scan_want {
	const int64_t *ids;
	size_t n_ids;
	const struct store_rescale *res;
	size_t n_res;
};

/*
 * Calls @fn for the values of the row just decoded (c->prev) of the channels wanted, a value a
 * rescale has not reached yet in the channel's resolution.
 */
static int deliver(const struct chain *c, struct store_sample *s, const struct scan_want *sw,
		   store_sample_fn fn, void *ctx) {
	const int64_t *want = sw->ids;
	size_t n_ids = sw->n_ids;
	int ret = 0;
	size_t w = 0; // both by id ascending: a merge, not a search per value
	for (size_t k = 0; ret == 0 && k < c->n_prev; k++) {
		const struct codec_pair *p = &c->prev[k];
		if (n_ids) {
			while (w < n_ids && want[w] < p->id) {
				w++;
			}
			if (w == n_ids) {
				break;
			}
			if (want[w] != p->id) {
				continue;
			}
		}
		if (!STORE_Q_IN_RANGE(p->q)) {
			continue; // no reading is that large: a crafted row's value, left out
		}
		s->channel_id = p->id;
		s->q = p->q;
		const struct store_rescale *r =
			sw->n_res ? store_rescale_find(sw->res, sw->n_res, p->id) : NULL;
		if (r && s->ts < r->before) {
			s->q = store_rescale_value(r, p->q);
		}
		ret = fn(ctx, s);
	}
	return ret;
}

int store_scan_samples(struct store *store, int64_t from, int64_t to, const int64_t *ids,
		       size_t n_ids, bool include_unsynced, store_sample_fn fn, void *ctx) {
	sqlite3_stmt *st = store_stmt(store, ST_SCAN_SAMPLES);
	if (!st) {
		return -EIO;
	}
	int64_t *want = store_sorted_ids(ids, n_ids);
	struct store_rescale *res = NULL;
	struct scan_want w = {.ids = want, .n_ids = n_ids};
	if (store_rescales(store, &res, &w.n_res) < 0) {
		free(want);
		return -EIO;
	}
	w.res = res;
	int limit = include_unsynced ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED;
	struct chain local, *chain = &local;
	int64_t version = 0;
	bool none, resume = false;
	if (store->scanning || store_query_int(store, ST_DATA_VERSION, 0, &version, &none) < 0) {
		store_chain_init(&local);
	} else {
		chain = &store->scan;
		store->scanning = true;
		/*
		 * An export reads slice after slice, each from the row the last one stopped at:
		 * that row is held decoded, so unless the rows changed since, the scan goes on
		 * from it instead of from the first row of its hour.
		 */
		resume = store->scan_held && store->scan_from == from &&
			 store->scan_version == version &&
			 store->scan_writes == store->write_steps && chain->hour != INT64_MIN &&
			 from != INT64_MAX;
		if (!resume) {
			chain->hour = INT64_MIN;
		}
		store->scan_held = false; // until this scan ends where it can be resumed
	}
	int rc = SQLITE_DONE, ret = 0;
	int64_t last = INT64_MIN;
	if (resume) {
		struct store_sample s = {.ts = from, .clock = store->scan_clock};
		if (from < to && (int)s.clock <= limit) {
			ret = deliver(chain, &s, &w, fn, ctx);
		}
		last = from;
	}
	int64_t lo = resume ? from + 1 : store_scan_start(from), hi = to;
	store_window_clamp(&lo, &hi);
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, hi);
	int clock = 0;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_sample s = {
			.ts = sqlite3_column_int64(st, 0),
			.clock = (enum clock_state)sqlite3_column_int(st, 1),
		};
		const uint8_t *data = sqlite3_column_blob(st, 2);
		if (!store_chain_next(chain, s.ts, data, (size_t)sqlite3_column_bytes(st, 2))) {
			log_error("store: damaged sample row at %lld: %s", (long long)s.ts,
				  store->path);
			ret = -EINVAL;
			break;
		}
		last = s.ts;
		clock = (int)s.clock;
		if (s.ts < from || (int)s.clock > limit) {
			continue; // read only as the base of the rows after it
		}
		ret = deliver(chain, &s, &w, fn, ctx);
	}
	store_done(st);
	if (chain == &store->scan) {
		store->scanning = false;
		if (ret > 0 && last != INT64_MIN && chain->hour != INT64_MIN) {
			// Stopped by @fn: the row it stopped at is where the next slice starts.
			store->scan_held = true;
			store->scan_from = last;
			store->scan_clock = resume && last == from ? store->scan_clock : clock;
			store->scan_version = version;
			store->scan_writes = store->write_steps;
		}
	} else {
		store_chain_finish(&local);
	}
	free(want);
	free(res);
	return store_scan_result(store, rc, ret, "could not read samples");
}
