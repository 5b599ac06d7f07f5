/*
 * The rescale of one channel to a finer resolution: every stored integer of it (raw rows coded
 * against the rescaled rows before them, hourly and daily rollups) times a whole factor, for the
 * writer (a finer live reading) and the import (store_channel_refine()) alike.
 */
#include "store-internal.h"

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
