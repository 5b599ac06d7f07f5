/*
 * The conversion of a database written by a thermlog of schema 10 or earlier, after its schema
 * moved to 11 (sql/0011-chunks.sql): its head keeps its cycles in the table cycles until every
 * closed block is compacted (store-compact.c reads them there, and checks each block's chunks
 * against the rows they replace before deleting those). Then, a day a transaction, the values
 * are checked against the hourly rollups the old thermlog wrote (count, sum, min and max per
 * channel and day, and the unsynced values) and the cycles against its daily rows; only when
 * every day agrees do those rollups go (but the pruned hours', the only record of their values)
 * and the switch drops the table cycles, its head's cycles becoming rows of their own. Each step
 * is one transaction with its progress in the state table, so a kill -9 anywhere resumes where
 * it stopped; the daemon takes it a slice a cycle (store_maintain_some()).
 */
#include "store-internal.h"

#define STATE_CONVERT_TO      "store.convert_to"      // the old rollups end here (an hour)
#define STATE_CONVERT_DAYS    "store.convert_days"    // the old daily rows end here (a day)
#define STATE_CONVERT_CHECKED "store.convert_checked" // days before it were checked
#define STATE_CONVERT_FAILED  "store.convert_failed"  // why the check failed, if it did
#define CLEAN_S               (31 * DAY_S)            // old rollups deleted per transaction

/* One channel's hours of a day, summed: from the old rollups or from the values. */
struct day_sum {
	int64_t id, count, sum, min, max, unsynced;
};

struct day_sums {
	struct day_sum *ch;
	size_t n, cap;
};

static struct day_sum *day_channel(struct day_sums *d, int64_t id) {
	for (size_t i = 0; i < d->n; i++) {
		if (d->ch[i].id == id) {
			return &d->ch[i];
		}
	}
	d->ch = xgrow(d->ch, &d->cap, d->n + 1, sizeof(*d->ch));
	d->ch[d->n] = (struct day_sum){.id = id};
	return &d->ch[d->n++];
}

static int add_rollup(void *ctx, const struct store_rollup *r) {
	struct day_sum *s = day_channel(ctx, r->channel_id);
	if (r->count > 0) {
		s->min = s->count == 0 || r->min_q < s->min ? r->min_q : s->min;
		s->max = s->count == 0 || r->max_q > s->max ? r->max_q : s->max;
	}
	s->count += r->count;
	s->sum += r->sum_q;
	s->unsynced += r->unsynced;
	return 0;
}

/* The old rollups of [@a, @b) summed per channel into @d. */
static int old_rollups(struct store *store, int64_t a, int64_t b, struct day_sums *d) {
	sqlite3_stmt *st;
	int rc = store_prepare_window(store, ST_CONVERT_OLD_ROLLUPS, a, b, "the conversion", &st);
	int step;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_rollup r = {
			.channel_id = sqlite3_column_int64(st, 0),
			.count = sqlite3_column_int64(st, 1),
			.sum_q = sqlite3_column_int64(st, 2),
			.min_q = sqlite3_column_int64(st, 3),
			.max_q = sqlite3_column_int64(st, 4),
			.unsynced = sqlite3_column_int64(st, 5),
		};
		add_rollup(d, &r);
	}
	if (rc == 0 && step != SQLITE_DONE) {
		rc = store_fail(store, step, "could not read the old rollups");
	}
	sqlite3_finalize(st);
	return rc;
}

static int cmp_day_sum(const void *a, const void *b) {
	const struct day_sum *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* The cycles of [@day, @day + DAY_S): trusted and unsynced, as cycle_days counts them. */
static int count_day(struct store *store, int64_t day, int64_t *trusted, int64_t *unsynced) {
	struct series_scan scan;
	int rc = store_series_open(store, &scan, SERIES_CYCLES, day, day + DAY_S, NULL, 0, 0);
	struct series_cycle c;
	*trusted = *unsynced = 0;
	while (rc == 0 && (rc = store_series_next(&scan, &c)) > 0) {
		*(c.clock == CLOCK_STATE_UNSYNCED ? unsynced : trusted) += 1;
		rc = 0;
	}
	store_series_close(&scan);
	return rc;
}

/* Records why the check failed (logged once) and stops the conversion there. */
static int check_failed(struct store *store, int64_t day, int64_t channel, const char *what) {
	char when[TIMEFMT_ISO_LEN], detail[160];
	timefmt_iso(day, when);
	snprintf(detail, sizeof(detail), "day %.10s%s%lld: %s", when, channel ? ", channel " : "",
		 channel ? (long long)channel : 0LL, what);
	log_error("store: %s: the converted history differs from the old one (%s); the old tables "
		  "are kept",
		  store->path, detail);
	return store_state_put(store, STATE_CONVERT_FAILED, detail);
}

/*
 * Checks day @day: the values of its hours before @to (not pruned: from @raw on) summed per
 * channel against the old rollups, and its cycles against the old daily row when the old
 * thermlog had merged the day (before @days). 1 when they agree, 0 when not (recorded).
 */
static int check_day(struct store *store, int64_t day, int64_t raw, int64_t to, int64_t days) {
	int64_t a = day > raw ? day : raw, b = day + DAY_S < to ? day + DAY_S : to;
	struct day_sums old = {0}, now = {0};
	int rc = a < b ? old_rollups(store, a, b, &old) : 0;
	if (rc == 0 && a < b) {
		rc = store_compute_rollups(store, a, b, NULL, 0, false, add_rollup, &now);
	}
	int same = 1;
	if (rc == 0) {
		qsort(old.ch, old.n, sizeof(*old.ch), cmp_day_sum);
		qsort(now.ch, now.n, sizeof(*now.ch), cmp_day_sum);
		size_t i = 0;
		for (; same && i < old.n && i < now.n; i++) {
			const struct day_sum *x = &old.ch[i], *y = &now.ch[i];
			if (x->id != y->id) {
				rc = check_failed(store, day, x->id < y->id ? x->id : y->id,
						  "the channel has values on one side only");
				same = 0;
			} else if (x->count != y->count || x->sum != y->sum ||
				   x->unsynced != y->unsynced ||
				   (x->count > 0 && (x->min != y->min || x->max != y->max))) {
				rc = check_failed(store, day, x->id,
						  "count, sum, min or max differs");
				same = 0;
			}
		}
		if (same && old.n != now.n) {
			rc = check_failed(store, day, i < old.n ? old.ch[i].id : now.ch[i].id,
					  "the channel has values on one side only");
			same = 0;
		}
	}
	if (rc == 0 && same && day < days) {
		int64_t trusted, unsynced, old_trusted, old_unsynced;
		bool none;
		rc = count_day(store, day, &trusted, &unsynced);
		if (rc == 0) {
			rc = store_query_one(store, ST_CONVERT_OLD_DAY, day, &old_trusted, &none);
		}
		if (rc == 0) {
			rc = store_query_one(store, ST_CONVERT_OLD_DAY_UNSYNCED, day, &old_unsynced,
					     &none);
		}
		if (rc == 0 && !none && (trusted != old_trusted || unsynced != old_unsynced)) {
			rc = check_failed(store, day, 0, "the number of cycles differs");
			same = 0;
		}
	}
	free(old.ch);
	free(now.ch);
	return rc < 0 ? rc : same;
}

/* The day the check goes on at: where it stopped, else the first day of the old rollups. */
static int check_from(struct store *store, int64_t raw, int64_t to, int64_t *day) {
	*day = INT64_MIN;
	int rc = store_state_get_int(store, STATE_CONVERT_CHECKED, day);
	if (rc < 0 || *day != INT64_MIN) {
		return rc;
	}
	int64_t first;
	bool none;
	rc = store_query_one(store, ST_CONVERT_FIRST_ROLLUP, raw, &first, &none);
	*day = timefmt_floor(none ? to : first, DAY_S);
	return rc;
}

/*
 * One step of the conversion, in the caller's transaction: a day checked, a month of the old
 * rollups deleted, or the switch. *more when another step is needed.
 */
static int convert_step(struct store *store, bool *more) {
	*more = false;
	bool legacy;
	char *failed = NULL;
	int rc = store_legacy(store, &legacy);
	if (rc < 0 || !legacy) {
		return rc;
	}
	if ((rc = store_state_get(store, STATE_CONVERT_FAILED, &failed)) != -ENOENT) {
		free(failed);
		return rc < 0 ? rc : 0; // stopped: the old tables stay (logged when it failed)
	}
	int64_t to = 0, days = 0, raw = 0, day;
	if ((rc = store_state_get_int(store, STATE_CONVERT_TO, &to)) < 0 ||
	    (rc = store_state_get_int(store, STATE_CONVERT_DAYS, &days)) < 0 ||
	    (rc = store_state_get_int(store, STATE_RAW_HORIZON, &raw)) < 0 ||
	    (rc = check_from(store, raw, to, &day)) < 0) {
		return rc;
	}
	if (day < to) {
		if ((rc = check_day(store, day, raw, to, days)) <= 0) {
			return rc;
		}
		*more = true;
		return store_state_set_int(store, STATE_CONVERT_CHECKED, day + DAY_S);
	}
	// Checked: the old rollups of hours whose values are kept go, a month at a time.
	int64_t first;
	bool none;
	if ((rc = store_query_one(store, ST_CONVERT_FIRST_ROLLUP, raw, &first, &none)) < 0) {
		return rc;
	}
	if (!none) {
		sqlite3_stmt *st;
		rc = store_prepare_window(store, ST_CONVERT_CLEAN, first, first + CLEAN_S,
					  "the conversion", &st);
		if (rc == 0) {
			int step = sqlite3_step(st);
			rc = step == SQLITE_DONE
				     ? 0
				     : store_fail(store, step, "could not delete rollups");
		}
		sqlite3_finalize(st);
		*more = rc == 0;
		return rc;
	}
	static const char *const keys[] = {STATE_CONVERT_TO, STATE_CONVERT_DAYS,
					   STATE_CONVERT_CHECKED};
	for (size_t i = 0; rc == 0 && i < sizeof(keys) / sizeof(keys[0]); i++) {
		rc = store_state_delete(store, keys[i]);
	}
	if (rc == 0) {
		rc = store_head_convert(store);
	}
	if (rc == 0) {
		log_info("store: %s: converted to schema %d, every value checked", store->path,
			 store_schema_version());
	}
	return rc;
}

int store_convert(struct store *store, int64_t deadline_ms, bool *more_out) {
	for (bool more = true; more;) {
		if (deadline_ms > 0 && store_mono_ms() >= deadline_ms) {
			*more_out = true;
			return 0;
		}
		int rc = store_step_begin(store);
		if (rc < 0 || (rc = store_step_end(store, convert_step(store, &more))) < 0) {
			return rc;
		}
	}
	return 0;
}

int store_convert_state(struct store *store, struct store_convert *out) {
	*out = (struct store_convert){0};
	bool began = store_read_begin(store);
	char *failed = NULL;
	int rc = store_legacy(store, &out->converting);
	if (rc == 0 && out->converting) {
		rc = store_state_get(store, STATE_CONVERT_FAILED, &failed);
		rc = rc == -ENOENT ? 0 : rc;
	}
	if (rc == 0 && failed) {
		snprintf(out->failed, sizeof(out->failed), "%s", failed);
	}
	free(failed);
	store_read_end(store, began);
	return rc;
}

int store_convert_retry(struct store *store) {
	int rc = store_step_begin(store);
	if (rc == 0) {
		rc = store_state_delete(store, STATE_CONVERT_FAILED);
		rc = rc == 0 ? store_state_delete(store, STATE_CONVERT_CHECKED) : rc;
	}
	return store_step_end(store, rc);
}
