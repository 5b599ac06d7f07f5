/*
 * Changes to the store's history: the repair (rows after a time dropped), imported channels
 * and samples, and the rescale of a channel to a finer resolution.
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

static int drop_after(struct store *store, int64_t after, bool dry_run, struct store_drop *out) {
	int rc = exec_param(store, ST_DROP_CYCLES_COUNT, after, &out->cycles);
	if (rc == 0) {
		rc = exec_param(store, ST_DROP_CYCLES_FIRST, after, &out->first);
	}
	if (rc == 0) {
		rc = exec_param(store, ST_DROP_CYCLES_LAST, after, &out->last);
	}
	if (rc == 0) {
		rc = exec_param(store, ST_DROP_ROLLUPS_COUNT, after, &out->rollups);
	}
	if (rc < 0 || dry_run) {
		return rc;
	}
	// Rollups of hours that start after the cut hold nothing but the dropped cycles; the
	// hour across the cut is rolled up again from its raw rows, if they are still there.
	static const enum stmt drops[] = {
		ST_DROP_SAMPLES,
		ST_DROP_CYCLES,
		ST_DROP_ROLLUPS,
		ST_DROP_CHANNELS_SEEN,
	};
	for (size_t i = 0; rc == 0 && i < sizeof(drops) / sizeof(drops[0]); i++) {
		rc = exec_param(store, drops[i], after, NULL);
	}
	// The rows kept are coded against rows before them, which stay: nothing to re-encode.
	store->hour.loaded = false;
	int64_t horizon = 0, raw = 0, cut = timefmt_floor(after, HOUR_S);
	if (rc == 0) {
		rc = store_state_get_int(store, STATE_HORIZON, &horizon);
	}
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

static int channel_ensure(struct store *store, const struct channel *ch, int64_t *id) {
	int rc = store_known_load(store);
	if (rc < 0) {
		return rc;
	}
	bool found;
	size_t at = store_known_find(store, ch->key, &found);
	if (found && store->known[at].id > 0) {
		*id = store->known[at].id;
		return 0;
	}
	if (!channel_key_valid(ch->key) || !store_resolution_valid(ch->resolution)) {
		log_error("store: cannot add channel '%s': bad key or resolution %g", ch->key,
			  ch->resolution);
		return -EINVAL;
	}
	rc = store_channel_insert(store, ch, 0, false, id);
	store->known_valid = false; // reloaded with the new row on next use
	return rc;
}

int store_channel_ensure(struct store *store, const struct channel *ch, int64_t *id) {
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, channel_ensure(store, ch, id));
}

static int insert_sample(struct store *store, int64_t ts, int64_t channel_id, int64_t q,
			 enum store_import_result *result) {
	int64_t raw_horizon = 0, horizon = 0, clock;
	bool null;
	int rc = store_state_get_int(store, STATE_RAW_HORIZON, &raw_horizon);
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
	sqlite3_stmt *st = store_stmt(store, ST_CYCLE_INSERT_IMPORT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, ts);
	if ((rc = store_step_done(st)) != SQLITE_OK) {
		return store_fail(store, rc, "could not store a cycle");
	}
	if ((rc = store_query_int(store, ST_CYCLE_CLOCK, ts, &clock, &null)) < 0) {
		return rc;
	}

	// Merge into the cycle's row; an existing (ts, channel) value wins.
	if ((rc = store_known_load(store)) < 0 || (rc = store_hour_load(store, ts)) < 0) {
		return rc;
	}
	struct hour_rows *h = &store->hour;
	bool exists;
	size_t at = store_hour_find(h, ts, &exists);
	const struct hour_row *row = exists ? &h->rows[at] : NULL;
	size_t n_old = row ? row->n : 0, i = 0;
	while (i < n_old && row->pairs[i].id < channel_id) {
		i++;
	}
	if (i < n_old && row->pairs[i].id == channel_id) {
		*result = row->pairs[i].q == q ? STORE_IMPORT_IDENTICAL : STORE_IMPORT_CONFLICT;
		return 0;
	}
	if ((rc = store_history_changed(store)) < 0) {
		return rc;
	}
	struct codec_pair *pairs = xcalloc(n_old + 1, sizeof(*pairs));
	if (i > 0) {
		memcpy(pairs, row->pairs, i * sizeof(*pairs));
	}
	pairs[i] = (struct codec_pair){channel_id, q};
	if (n_old > i) {
		memcpy(&pairs[i + 1], &row->pairs[i], (n_old - i) * sizeof(*pairs));
	}
	rc = store_hour_put(store, ts, (int)clock, pairs, n_old + 1);
	free(pairs);
	if (rc < 0) {
		return rc;
	}
	if ((rc = store_bind_id_exec(store, ST_CHANNEL_SPAN, channel_id, ts,
				     "could not update a channel")) < 0) {
		return rc;
	}
	// A value in an hour already rolled up: roll that hour (and later ones) up again.
	if (horizon > 0 && timefmt_floor(ts, HOUR_S) < horizon) {
		rc = store_state_set_int(store, STATE_HORIZON, timefmt_floor(ts, HOUR_S));
		return rc < 0 ? rc : store_days_invalidate(store, timefmt_floor(ts, HOUR_S));
	}
	return 0;
}

int store_insert_sample(struct store *store, int64_t ts, int64_t channel_id, int64_t q,
			enum store_import_result *result) {
	enum store_import_result ignored;
	result = result ? result : &ignored;
	*result = STORE_IMPORT_NEW;
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, insert_sample(store, ts, channel_id, q, result));
}

/* --- resolution ---------------------------------------------------------------------------- */

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

/* Every stored integer of channel @id times @factor: raw rows, then rollups, then the row. */
static int rescale_samples(struct store *store, int64_t id, int64_t factor) {
	sqlite3_stmt *sel, *upd;
	int err = prepare_pass(store, ST_RESCALE_SAMPLES, ST_SAMPLES_UPDATE, &sel, &upd);
	int64_t after = INT64_MIN;
	struct codec_pair *pairs = NULL, *scaled = NULL;
	size_t cap = 0, cap_scaled = 0, n_scaled = 0;
	struct chain chain;
	store_chain_init(&chain);
	store->hour.loaded = false; // its values change
	// Rows are collected a slice at a time so no row is updated under a running scan.
	int64_t *tss = NULL;
	uint8_t **blobs = NULL;
	size_t *lens = NULL, slice_cap = 0;
	while (err == 0) {
		sqlite3_bind_int64(sel, 1, after);
		size_t m = 0;
		int rc;
		while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
			if (m == slice_cap) {
				size_t c = slice_cap;
				tss = xgrow(tss, &c, m + 1, sizeof(*tss));
				blobs = xrealloc(blobs, c * sizeof(*blobs));
				lens = xrealloc(lens, c * sizeof(*lens));
				slice_cap = c;
			}
			tss[m] = sqlite3_column_int64(sel, 0);
			lens[m] = (size_t)sqlite3_column_bytes(sel, 1);
			blobs[m] = xcalloc(lens[m] + 1, 1);
			if (lens[m] > 0) {
				memcpy(blobs[m], sqlite3_column_blob(sel, 1), lens[m]);
			}
			m++;
		}
		sqlite3_reset(sel);
		if (rc != SQLITE_DONE) {
			err = store_fail(store, rc, "could not read samples");
		}
		for (size_t i = 0; i < m; i++) {
			// The row's values, then the same with the channel scaled, coded against
			// the row before it scaled too (kept in @scaled), so the chain stays exact.
			bool same_hour = timefmt_floor(tss[i], HOUR_S) == chain.hour;
			bool ok = store_chain_next(&chain, tss[i], blobs[i], lens[i]);
			size_t n = chain.n_prev;
			bool hit = false;
			pairs = xgrow(pairs, &cap, n + 1, sizeof(*pairs));
			for (size_t k = 0; ok && k < n; k++) {
				pairs[k] = chain.prev[k];
				if (pairs[k].id == id) {
					ok = !__builtin_mul_overflow(pairs[k].q, factor,
								     &pairs[k].q);
					hit = true;
				}
			}
			if (err == 0 && !ok) {
				log_error("store: cannot rescale the values at %lld",
					  (long long)tss[i]);
				err = -ERANGE;
			}
			if (err == 0 && hit) {
				size_t len =
					store_encode_row(store, pairs, n, same_hour ? scaled : NULL,
							 same_hour ? n_scaled : 0);
				sqlite3_bind_int64(upd, 1, tss[i]);
				sqlite3_bind_blob(upd, 2, store->blob, (int)len, SQLITE_STATIC);
				int urc = store_step_done(upd);
				if (urc != SQLITE_OK) {
					err = store_fail(store, urc, "could not rescale samples");
				}
			}
			struct codec_pair *t = scaled;
			size_t tc = cap_scaled;
			scaled = pairs;
			cap_scaled = cap;
			n_scaled = n;
			pairs = t;
			cap = tc;
			free(blobs[i]);
		}
		if (m == 0) {
			break;
		}
		after = tss[m - 1];
	}
	free(tss);
	free(blobs);
	free(lens);
	free(pairs);
	free(scaled);
	store_chain_finish(&chain);
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return err;
}

/*
 * A rollup's histogram blob of @len bytes at @p with every value @factor times larger, encoded
 * again into store->blob (*@out_len bytes); false when it is damaged or a value overflows.
 */
static bool rescale_hist(struct store *store, const uint8_t *p, size_t len, int64_t factor,
			 size_t *out_len) {
	struct codec_hist_iter it = {.p = p, .end = p + len};
	struct codec_bin bin, *bins = NULL;
	size_t n = 0, cap = 0;
	bool bad = false;
	while (!bad && codec_hist_next(&it, &bin)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			bins = xrealloc(bins, cap * sizeof(*bins));
		}
		bad = __builtin_mul_overflow(bin.q, factor, &bins[n].q);
		bins[n++].count = bin.count;
	}
	bad = bad || it.bad;
	if (!bad) {
		uint8_t *out = store_blob_reserve(store, n * 2 * CODEC_VARINT_MAX + 1);
		*out_len = codec_hist_encode_bins(out, bins, n);
	}
	free(bins);
	return !bad;
}

static int rescale_rollups(struct store *store, int64_t id, int64_t factor) {
	sqlite3_stmt *sel, *upd;
	int err = prepare_pass(store, ST_RESCALE_ROLLUPS, ST_RESCALE_ROLLUP_PUT, &sel, &upd);
	int64_t after = INT64_MIN;
	while (err == 0) {
		sqlite3_bind_int64(sel, 1, id);
		sqlite3_bind_int64(sel, 2, after);
		int rc = sqlite3_step(sel);
		if (rc != SQLITE_ROW) {
			sqlite3_reset(sel);
			err = rc == SQLITE_DONE ? 0
						: store_fail(store, rc, "could not read rollups");
			break;
		}
		after = sqlite3_column_int64(sel, 0);
		int64_t sum = sqlite3_column_int64(sel, 1), min = sqlite3_column_int64(sel, 2),
			max = sqlite3_column_int64(sel, 3);
		bool null_min = sqlite3_column_type(sel, 2) == SQLITE_NULL;
		size_t len = 0;
		bool bad = !rescale_hist(store, sqlite3_column_blob(sel, 4),
					 (size_t)sqlite3_column_bytes(sel, 4), factor, &len);
		bad = bad || __builtin_mul_overflow(sum, factor, &sum) ||
		      __builtin_mul_overflow(min, factor, &min) ||
		      __builtin_mul_overflow(max, factor, &max);
		sqlite3_reset(sel);
		if (bad) {
			log_error("store: cannot rescale the rollup of %lld", (long long)after);
			err = -ERANGE;
			break;
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
		if (rc != SQLITE_OK) {
			err = store_fail(store, rc, "could not rescale rollups");
		}
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return err;
}

int store_rescale_channel(struct store *store, int64_t id, int64_t factor, double resolution) {
	int err = factor > 1 ? rescale_samples(store, id, factor) : 0;
	if (err == 0 && factor > 1) {
		err = rescale_rollups(store, id, factor);
	}
	if (err == 0 && factor > 1) {
		// The daily rows hold the old integers: merge every day again from the hourly ones.
		err = store_state_set_int(store, STATE_DAY_HORIZON, 0);
	}
	sqlite3_stmt *st = NULL;
	if (err == 0) {
		err = store_prepare(store, ST_CHANNEL_RESOLUTION, "a rescale", &st);
	}
	if (err == 0) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_double(st, 2, resolution);
		int rc = sqlite3_step(st);
		err = rc == SQLITE_DONE ? 0 : store_fail(store, rc, "could not set a resolution");
	}
	sqlite3_finalize(st);
	return err;
}

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
	rc = store_rescale_channel(store, id, factor, res);
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
