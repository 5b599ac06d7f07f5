/* The store's throttle episodes: written by the recorder each cycle one is open, read by query. */
#include "store-internal.h"

#include <inttypes.h>

/* The cooling devices as "<N> <state> <type>" lines. */
static char *cooling_text(const struct throttle_episode *ep) {
	struct buf b;
	buf_init(&b);
	for (size_t i = 0; i < ep->n_cooling; i++) {
		buf_printf(&b, "%d %" PRId64 " %s\n", ep->cooling[i].dev, ep->cooling[i].state,
			   ep->cooling[i].type);
	}
	return buf_steal(&b);
}

static void cooling_parse(const char *text, struct throttle_episode *ep) {
	ep->n_cooling = 0;
	for (const char *p = text; p && *p && ep->n_cooling < THROTTLE_MAX_COOLING;) {
		struct throttle_cooling *c = &ep->cooling[ep->n_cooling];
		long long state;
		int dev;
		if (sscanf(p, "%d %lld %63[^\n]", &dev, &state, c->type) == 3) {
			c->dev = dev;
			c->state = state;
			ep->n_cooling++;
		}
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : p + strlen(p);
	}
}

static void bind_or_null(sqlite3_stmt *st, int col, bool known, int64_t v) {
	if (known) {
		sqlite3_bind_int64(st, col, v);
	} else {
		sqlite3_bind_null(st, col);
	}
}

static int episode_put(struct store *store, sqlite3_stmt *ins, sqlite3_stmt *upd,
		       struct throttle_episode *ep) {
	sqlite3_stmt *st = ep->row ? upd : ins;
	char *cooling = cooling_text(ep);
	sqlite3_bind_text(st, 1, ep->domain, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, ep->start);
	bind_or_null(st, 3, ep->end != 0, ep->end);
	sqlite3_bind_int64(st, 4, ep->last_seen);
	sqlite3_bind_int64(st, 5, ep->duration_ms);
	bind_or_null(st, 6, ep->min_hz > 0, ep->min_hz);
	bind_or_null(st, 7, ep->max_hz > 0, ep->max_hz);
	sqlite3_bind_text(st, 8, throttle_cause_name(ep->cause), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, throttle_method_name(ep->method), -1, SQLITE_STATIC);
	if (ep->zone[0]) {
		sqlite3_bind_text(st, 10, ep->zone, -1, SQLITE_STATIC);
	} else {
		sqlite3_bind_null(st, 10);
	}
	bind_or_null(st, 11, ep->trip >= 0, ep->trip);
	bind_or_null(st, 12, ep->trip >= 0, ep->trip_temp_mc);
	bind_or_null(st, 13, ep->trip >= 0, ep->trip_hyst_mc);
	bind_or_null(st, 14, ep->have_temp, ep->temp_start_mc);
	bind_or_null(st, 15, ep->have_temp, ep->temp_peak_mc);
	sqlite3_bind_text(st, 16, cooling, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 17, ep->stuck);
	if (ep->row) {
		sqlite3_bind_int64(st, 18, ep->row);
	}
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	free(cooling);
	if (rc != SQLITE_DONE) {
		return store_fail(store, rc, "could not write a throttle episode");
	}
	if (!ep->row) {
		ep->row = sqlite3_last_insert_rowid(store->db);
	}
	return 0;
}

/* Persistent statements: the recorder writes the open episodes every cycle they are open. */
static int put_all(struct store *store, struct throttle_episode *const *eps, size_t n) {
	sqlite3_stmt *ins = store_stmt(store, ST_EPISODE_INSERT);
	sqlite3_stmt *upd = store_stmt(store, ST_EPISODE_UPDATE);
	if (!ins || !upd) {
		return -EIO; // logged by store_stmt()
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = episode_put(store, ins, upd, eps[i]);
	}
	return rc;
}

int store_throttle_put(struct store *store, struct throttle_episode *const *eps, size_t n) {
	if (!store_writable(store)) {
		return -EROFS;
	}
	if (n == 0) {
		return 0;
	}
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	bool *inserted = xcalloc(n, sizeof(*inserted));
	for (size_t i = 0; i < n; i++) {
		inserted[i] = eps[i]->row == 0;
	}
	rc = store_step_end(store, put_all(store, eps, n));
	for (size_t i = 0; rc < 0 && i < n; i++) {
		if (inserted[i]) {
			eps[i]->row = 0; // rolled back: inserted again next time
		}
	}
	free(inserted);
	return rc;
}

static int exec_count(struct store *store, enum stmt which, int64_t param, int64_t *changed) {
	sqlite3_stmt *st = NULL;
	int rc = store_prepare_param(store, which, param, "throttle episodes", &st);
	if (rc < 0) {
		return rc;
	}
	rc = store_step_once(store, st, "could not update throttle episodes");
	if (rc < 0) {
		return rc;
	}
	if (changed) {
		*changed = sqlite3_changes64(store->db);
	}
	return 0;
}

int store_throttle_close_open(struct store *store, int64_t *closed) {
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, exec_count(store, ST_EPISODES_CLOSE, 0, closed));
}

int store_throttle_prune(struct store *store, int64_t cutoff) {
	return exec_count(store, ST_EPISODES_PRUNE, cutoff, NULL);
}

static int64_t column_int_or(sqlite3_stmt *st, int col, int64_t none) {
	return sqlite3_column_type(st, col) == SQLITE_NULL ? none : sqlite3_column_int64(st, col);
}

static void copy_text(char dst[static THROTTLE_NAME_LEN], const char *src) {
	snprintf(dst, THROTTLE_NAME_LEN, "%s", src ? src : "");
}

static void episode_from_row(sqlite3_stmt *st, struct throttle_episode *ep) {
	*ep = (struct throttle_episode){
		.row = sqlite3_column_int64(st, 0),
		.start = sqlite3_column_int64(st, 2),
		.end = column_int_or(st, 3, 0),
		.last_seen = sqlite3_column_int64(st, 4),
		.duration_ms = sqlite3_column_int64(st, 5),
		.min_hz = column_int_or(st, 6, 0),
		.max_hz = column_int_or(st, 7, 0),
		.trip = (int)column_int_or(st, 11, -1),
		.trip_temp_mc = column_int_or(st, 12, 0),
		.trip_hyst_mc = column_int_or(st, 13, 0),
		.have_temp = sqlite3_column_type(st, 14) != SQLITE_NULL,
		.temp_start_mc = column_int_or(st, 14, 0),
		.temp_peak_mc = column_int_or(st, 15, 0),
		.stuck = sqlite3_column_int(st, 17) != 0,
	};
	copy_text(ep->domain, store_column_text(st, 1));
	const char *cause = store_column_text(st, 8), *method = store_column_text(st, 9);
	ep->cause = cause && strcmp(cause, "thermal") == 0 ? THROTTLE_CAUSE_THERMAL
							   : THROTTLE_CAUSE_CAP;
	ep->method = method && strcmp(method, "counters") == 0 ? THROTTLE_METHOD_COUNTERS
							       : THROTTLE_METHOD_POLL;
	copy_text(ep->zone, store_column_text(st, 10));
	cooling_parse(store_column_text(st, 16), ep);
}

/*
 * What is wrong with an episode read back, or NULL: a crafted file may hold times at the 64-bit
 * limits, on which every sum and product of a report would overflow.
 */
static const char *episode_problem(const struct throttle_episode *ep) {
	if (ep->start < -STORE_TS_LIMIT || ep->start > STORE_TS_LIMIT ||
	    ep->end < -STORE_TS_LIMIT || ep->end > STORE_TS_LIMIT || ep->last_seen < ep->start ||
	    ep->last_seen > STORE_TS_LIMIT || (ep->end != 0 && ep->end < ep->start)) {
		return "start_ts, end_ts or last_seen is beyond 34,800 years of 1970 or out of order";
	}
	if (ep->duration_ms < 0 || ep->duration_ms > 2 * STORE_TS_LIMIT * 1000) {
		return "duration_ms is out of range";
	}
	return NULL;
}

int store_throttle_list(struct store *store, int64_t from, int64_t to,
			struct throttle_episode **out, size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	int rc = store_prepare_window(store, ST_EPISODES_LIST, from, to, "throttle episodes", &st);
	if (rc < 0) {
		return rc;
	}
	size_t cap = 0;
	int step;
	const char *problem = NULL;
	while (!problem && (step = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		struct throttle_episode *ep = &(*out)[(*n)++];
		episode_from_row(st, ep);
		problem = episode_problem(ep);
	}
	if (problem) {
		log_error("store: %s: throttle episode %lld: %s: refused (not a database this "
			  "thermlog wrote?)",
			  store->path, (long long)(*out)[*n - 1].row, problem);
		step = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	if (problem) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -EINVAL;
	}
	if (step != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return store_fail(store, step, "could not read throttle episodes");
	}
	return 0;
}
