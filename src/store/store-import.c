/*
 * Changes to the store's history: the repair (rows after a time dropped), imported channels
 * and samples, and a channel refined to a finer resolution (through store-rescale.c).
 */
#include "store-internal.h"

/* --- repair ------------------------------------------------------------------------------ */

/* Runs @which with ?1 = @param; the first column of its first row, if any, goes to *out. */
static int exec_param(struct store *store, enum stmt which, int64_t param, int64_t *out) {
	sqlite3_stmt *st;
	int rc = store_prepare(store, which, "the repair", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, param);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && out) {
		*out = sqlite3_column_int64(st, 0);
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	int err = rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not repair");
	sqlite3_finalize(st);
	return err;
}

/* The cycles stamped after @after: how many, the first and the last. */
static int count_after(struct store *store, int64_t after, struct store_drop *out) {
	struct series_scan scan;
	int rc = store_series_open(store, &scan, SERIES_CYCLES,
				   after == INT64_MAX ? INT64_MAX : after + 1, INT64_MAX, NULL, 0,
				   false);
	struct series_cycle c;
	while (rc == 0 && (rc = store_series_next(&scan, &c)) > 0) {
		out->first = out->cycles == 0 ? c.ts : out->first;
		out->last = c.ts;
		out->cycles++;
		rc = 0;
	}
	store_series_close(&scan);
	return rc;
}

static int count_rollup(void *ctx, const struct store_rollup *r) {
	(void)r;
	(*(int64_t *)ctx)++;
	return 0;
}

static int drop_after(struct store *store, int64_t after, bool dry_run, struct store_drop *out) {
	int rc = count_after(store, after, out);
	// The rollups of the whole hours after the cut that are complete: those of hours whose
	// values were pruned are kept in a table, the others computed from the values.
	int64_t horizon = 0, hour = after >= INT64_MAX - HOUR_S
					    ? INT64_MAX
					    : timefmt_floor(after, HOUR_S) + HOUR_S;
	if (rc == 0) {
		rc = store_state_get_int(store, STATE_HORIZON, &horizon);
	}
	if (rc == 0 && hour < horizon) {
		rc = store_scan_rollups(store, hour, horizon, NULL, 0, count_rollup, &out->rollups);
	}
	if (rc < 0 || dry_run) {
		return rc;
	}
	// The block across the cut back in the head; the blocks after it go whole.
	bool legacy;
	if (after < INT64_MAX && (rc = store_known_load(store)) == 0) {
		rc = store_head_open(store, SERIES_CYCLES, after + 1);
	}
	if (rc == 0) {
		rc = store_legacy(store, &legacy);
	}
	// Rollups of hours that start after the cut hold nothing but the dropped cycles; the
	// hour across the cut is rolled up again from the cycles left.
	static const enum stmt drops[] = {
		ST_DROP_SAMPLES, ST_DROP_BLOCKS,        ST_DROP_CHUNKS,
		ST_DROP_ROLLUPS, ST_DROP_CHANNELS_SEEN,
	};
	for (size_t i = 0; rc == 0 && i < sizeof(drops) / sizeof(drops[0]); i++) {
		rc = exec_param(store, drops[i], after, NULL);
	}
	if (rc == 0 && legacy) {
		rc = exec_param(store, ST_DROP_CYCLES, after, NULL);
	}
	// The rows kept are coded against rows before them, which stay: nothing to re-encode.
	store->hour.loaded = false;
	int64_t raw = 0, cut = timefmt_floor(after, HOUR_S);
	if (rc == 0) {
		rc = store_state_get_int(store, STATE_RAW_HORIZON, &raw);
	}
	if (rc == 0 && raw > cut) {
		rc = store_state_set_int(store, STATE_RAW_HORIZON, cut);
		raw = cut;
	}
	if (rc == 0 && horizon > cut && raw <= cut) {
		rc = store_state_set_int(store, STATE_HORIZON, cut);
	}
	// The daily level is derived: days from the cut's day on are merged again from what is
	// left.
	if (rc == 0) {
		rc = exec_param(store, ST_DROP_ROLLUP_DAYS, timefmt_floor(after, DAY_S), NULL);
	}
	if (rc == 0) {
		rc = exec_param(store, ST_DROP_CYCLE_DAYS, timefmt_floor(after, DAY_S), NULL);
	}
	if (rc == 0) {
		rc = store_days_invalidate(store, cut);
	}
	return rc;
}

int store_drop_after(struct store *store, int64_t after, bool dry_run, struct store_drop *out) {
	*out = (struct store_drop){0};
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	rc = drop_after(store, after, dry_run, out);
	if (rc == 0 && dry_run) {
		rc = store_step_end(store, -ECANCELED); // a dry run writes nothing
		return rc == -ECANCELED ? 0 : rc;
	}
	return store_step_end(store, rc);
}

/* --- imports ------------------------------------------------------------------------------ */

/* A channel of a store_channels_ensure() call by key, then by its place in the call. */
struct ensure_key {
	const char *key;
	size_t i;
};

static int cmp_ensure_key(const void *a, const void *b) {
	const struct ensure_key *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int channels_ensure(struct store *store, const struct channel *chs, size_t n, int64_t *ids) {
	int rc = store_known_load(store);
	if (rc < 0) {
		return rc;
	}
	struct ensure_key *order = xcalloc(n ? n : 1, sizeof(*order));
	for (size_t i = 0; i < n; i++) {
		order[i] = (struct ensure_key){chs[i].key, i};
	}
	qsort(order, n, sizeof(*order), cmp_ensure_key);
	// Known keys get their ids; the others are checked, all before the first is added.
	size_t n_new = 0, *first = xcalloc(n ? n : 1, sizeof(*first)); // a key's first place
	for (size_t k = 0; k < n; k++) {
		const struct channel *ch = &chs[order[k].i];
		ids[order[k].i] = 0;
		bool again = k > 0 && strcmp(order[k - 1].key, ch->key) == 0;
		first[order[k].i] = again ? first[order[k - 1].i] : order[k].i;
		if (again) {
			continue; // a key given twice: the first's id, below
		}
		bool found;
		size_t at = store_known_find(store, ch->key, &found);
		if (found && store->known[at].id > 0) {
			ids[order[k].i] = store->known[at].id;
		} else if (!channel_key_valid(ch->key) || !store_resolution_valid(ch->resolution)) {
			log_error("store: cannot add channel '%s': bad key or resolution %g",
				  ch->key, ch->resolution);
			rc = -EINVAL;
		} else {
			n_new++;
		}
	}
	// added in the order given, so ids follow it (an import's: the file's)
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (first[i] != i) {
			ids[i] = ids[first[i]];
		} else if (ids[i] == 0) {
			rc = store_channel_insert(store, &chs[i], 0, false, &ids[i]);
		}
	}
	free(first);
	free(order);
	if (n_new > 0) {
		store->known_valid = false; // reloaded with the new rows on next use
	}
	return rc;
}

int store_channel_ensure(struct store *store, const struct channel *ch, int64_t *id) {
	return store_channels_ensure(store, ch, 1, id);
}

int store_channels_ensure(struct store *store, const struct channel *chs, size_t n, int64_t *ids) {
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, channels_ensure(store, chs, n, ids));
}

/* A value of a store_insert_samples() call by channel, then by its place in the call. */
struct value_order {
	int64_t id;
	size_t i;
};

static int cmp_value_order(const void *a, const void *b) {
	const struct value_order *x = a, *y = b;
	if (x->id != y->id) {
		return x->id < y->id ? -1 : 1;
	}
	return (x->i > y->i) - (x->i < y->i);
}

static int insert_samples(struct store *store, int64_t ts, struct store_import_value *values,
			  size_t n) {
	int64_t raw_horizon = 0, horizon = 0, clock;
	// A daemon's rescale under way is finished first: an imported value lands in its rows.
	int rc = store_rescale_settle(store);
	if (rc == 0) {
		rc = store_state_get_int(store, STATE_RAW_HORIZON, &raw_horizon);
	}
	if (rc == 0) {
		rc = store_state_get_int(store, STATE_HORIZON, &horizon);
	}
	if (rc < 0) {
		return rc;
	}
	if (ts < raw_horizon) {
		log_error(
			"store: cannot import a value at %lld: raw values before %lld were pruned",
			(long long)ts, (long long)raw_horizon);
		return -ERANGE;
	}
	if (ts < -STORE_TS_LIMIT || ts > STORE_TS_LIMIT) {
		log_error("store: cannot import a value at %lld: beyond 34,800 years of 1970",
			  (long long)ts);
		return -ERANGE;
	}
	bool legacy;
	if ((rc = store_known_load(store)) < 0 || (rc = store_legacy_cached(store, &legacy)) < 0) {
		return rc;
	}
	if (legacy) {
		// Checked against the old rollups until then, the history must not change.
		log_error(
			"store: %s is being converted from an older thermlog's format: values are "
			"imported once that is done (thermlogd does it a slice a cycle; thermlog "
			"repair --migrate at once)",
			store->path);
		return -EBUSY;
	}
	// An imported value in a compacted block reopens it.
	if ((rc = store_head_open(store, SERIES_CYCLES, ts)) < 0) {
		return rc;
	}
	clock = CLOCK_STATE_SYNCED; // a new cycle: an imported one is taken as synced

	// Merge into the cycle's row, once for all @values; an existing (ts, channel) value wins.
	if ((rc = store_hour_load(store, ts)) < 0) {
		return rc;
	}
	struct hour_rows *h = &store->hour;
	bool exists;
	size_t at = store_hour_find(h, ts, &exists);
	const struct hour_row *row = exists ? &h->rows[at] : NULL;
	size_t n_old = row ? row->n : 0;
	struct value_order *order = xcalloc(n ? n : 1, sizeof(*order));
	for (size_t i = 0; i < n; i++) {
		order[i] = (struct value_order){values[i].channel_id, i};
	}
	qsort(order, n, sizeof(*order), cmp_value_order);
	struct codec_pair *pairs = xcalloc(n_old + n + 1, sizeof(*pairs));
	size_t m = 0, i = 0, added = 0;
	for (size_t k = 0; k < n; k++) {
		struct store_import_value *v = &values[order[k].i];
		while (i < n_old && row->pairs[i].id < v->channel_id) {
			pairs[m++] = row->pairs[i++];
		}
		const struct codec_pair *stored =
			i < n_old && row->pairs[i].id == v->channel_id ? &row->pairs[i]
			: m > 0 && pairs[m - 1].id == v->channel_id    ? &pairs[m - 1]
								       : NULL;
		if (stored) {
			v->result =
				stored->q == v->q ? STORE_IMPORT_IDENTICAL : STORE_IMPORT_CONFLICT;
			continue;
		}
		v->result = STORE_IMPORT_NEW;
		pairs[m++] = (struct codec_pair){v->channel_id, v->q};
		added++;
	}
	while (i < n_old) {
		pairs[m++] = row->pairs[i++];
	}
	if (added > 0) {
		rc = store_history_changed(store);
		rc = rc < 0 ? rc : store_hour_put(store, ts, (int)clock, 0, pairs, m);
	}
	for (size_t k = 0; rc == 0 && k < n; k++) {
		const struct store_import_value *v = &values[order[k].i];
		bool first = k == 0 || order[k - 1].id != v->channel_id;
		if (first && v->result == STORE_IMPORT_NEW) {
			rc = store_bind_id_exec(store, ST_CHANNEL_SPAN, v->channel_id, ts,
						"could not update a channel");
		}
	}
	free(pairs);
	free(order);
	if (rc < 0 || added == 0) {
		return rc;
	}
	// A value in an hour already rolled up: roll that hour (and later ones) up again.
	if (horizon > 0 && timefmt_floor(ts, HOUR_S) < horizon) {
		rc = store_state_set_int(store, STATE_HORIZON, timefmt_floor(ts, HOUR_S));
		return rc < 0 ? rc : store_days_invalidate(store, timefmt_floor(ts, HOUR_S));
	}
	return 0;
}

int store_insert_samples(struct store *store, int64_t ts, struct store_import_value *values,
			 size_t n) {
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, insert_samples(store, ts, values, n));
}

int store_insert_sample(struct store *store, int64_t ts, int64_t channel_id, int64_t q,
			enum store_import_result *result) {
	struct store_import_value v = {.channel_id = channel_id, .q = q};
	int rc = store_insert_samples(store, ts, &v, 1);
	if (result) {
		*result = rc == 0 ? v.result : STORE_IMPORT_NEW;
	}
	return rc;
}

/* --- resolution ---------------------------------------------------------------------------- */

static int channel_refine(struct store *store, int64_t id, double resolution, double *applied) {
	int rc = store_known_load(store);
	if (rc < 0) {
		return rc;
	}
	struct known_channel *k = NULL;
	for (size_t i = 0; i < store->n_known; i++) {
		if (store->known[i].id == id) {
			k = &store->known[i];
		}
	}
	if (!k) {
		return -ENOENT;
	}
	double res;
	int64_t factor;
	if (!channel_common_resolution(k->resolution, resolution, &res, &factor)) {
		return -ERANGE;
	}
	*applied = res;
	if (factor == 1) {
		return 0;
	}
	rc = store_rescale_settle(store);
	rc = rc < 0 ? rc : store_rescale_channel(store, id, factor, res, INT64_MIN);
	if (rc == 0) {
		k->resolution = res;
	}
	return rc;
}

int store_channel_refine(struct store *store, int64_t id, double resolution, double *applied) {
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, channel_refine(store, id, resolution, applied));
}
