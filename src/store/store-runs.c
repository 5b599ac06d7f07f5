/* The store's runs: reading and writing runs, their boundaries and their fast samples. */
#include "store-internal.h"

/* --- runs: read side ---------------------------------------------------------------------- */

/*
 * One-off statements (store_prepare()): run queries are rare next to the cycle's, so they take no
 * persistent slot.
 */

static double column_double_or_nan(sqlite3_stmt *st, int col) {
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

static void run_from_row(sqlite3_stmt *st, struct store_run *run) {
	*run = (struct store_run){
		.id = sqlite3_column_int64(st, 0),
		.label = store_column_text(st, 1),
		.tags = store_column_text(st, 2),
		.start_ms = sqlite3_column_int64(st, 3),
		.end_ms = sqlite3_column_int64(st, 4),
		.ended = sqlite3_column_type(st, 4) != SQLITE_NULL,
		.exit_code =
			sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 6),
		.signal = sqlite3_column_int(st, 7),
		.pid = sqlite3_column_int64(st, 8),
		.origin = store_column_text(st, 9),
		.energy_j = column_double_or_nan(st, 10),
		.energy_method = store_column_text(st, 11),
		.energy_coverage = column_double_or_nan(st, 12),
		.temp_max_c = column_double_or_nan(st, 13),
		.rss_max_bytes = column_double_or_nan(st, 14),
		.figures = store_column_text(st, 15),
		.fingerprint = store_column_text(st, 16),
		.error = store_column_text(st, 17),
	};
	if (!run->tags) {
		run->tags = "{}";
	}
	// run_row_problem() has checked the name
	(void)run_status_parse(store_column_text(st, 5), &run->status);
}

/*
 * What is wrong with a runs row, or NULL: a crafted or damaged file may hold any value in any
 * column (the schema's constraints hold only for rows SQLite wrote through them).
 */
static const char *run_row_problem(sqlite3_stmt *st) {
	static const int text[] = {1, 5, 9}; // label, status, origin
	static const char *const names[] = {"label", "status", "origin"};
	if (sqlite3_column_type(st, 0) != SQLITE_INTEGER) {
		return "id is not an integer";
	}
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		if (sqlite3_column_type(st, text[i]) != SQLITE_TEXT) {
			return names[i];
		}
	}
	if (sqlite3_column_type(st, 3) != SQLITE_INTEGER) {
		return "start_ms";
	}
	static const int ints[] = {4, 6, 7, 8}; // end_ms, exit_code, signal, pid
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		int t = sqlite3_column_type(st, ints[i]);
		if (t != SQLITE_INTEGER && t != SQLITE_NULL) {
			return "an integer column holds another type";
		}
	}
	int64_t exit_code = sqlite3_column_int64(st, 6), sig = sqlite3_column_int64(st, 7);
	if (exit_code < -1 || exit_code > 255 || sig < 0 || sig > 255) {
		return "exit_code or signal is out of range";
	}
	if (sqlite3_column_type(st, 4) == SQLITE_INTEGER &&
	    sqlite3_column_int64(st, 4) < sqlite3_column_int64(st, 3)) {
		return "end_ms is before start_ms";
	}
	const int64_t limit_ms = STORE_TS_LIMIT * 1000;
	if (sqlite3_column_int64(st, 3) < -limit_ms || sqlite3_column_int64(st, 4) > limit_ms) {
		return "start_ms or end_ms is beyond 34,800 years of 1970";
	}
	static const int reals[] = {10, 12, 13, 14};
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		int t = sqlite3_column_type(st, reals[i]);
		if (t != SQLITE_FLOAT && t != SQLITE_INTEGER && t != SQLITE_NULL) {
			return "a figure is not a number";
		}
	}
	// tags, energy_method, figures, fingerprint, error
	static const int texts[] = {2, 11, 15, 16, 17};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		int t = sqlite3_column_type(st, texts[i]);
		if (t != SQLITE_TEXT && t != SQLITE_NULL) {
			return "a text column holds another type";
		}
	}
	enum run_status status;
	if (run_status_parse(store_column_text(st, 5), &status)) {
		return NULL;
	}
	return "status is not one of running, ok, failed, signaled, timeout, lost";
}

/* Steps @st, handing each row to @fn as a run; finalizes @st. */
static int runs_step(struct store *store, sqlite3_stmt *st, store_run_fn fn, void *ctx, bool *any) {
	int rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *problem = run_row_problem(st);
		if (problem) {
			log_error(
				"store: %s: run %lld: %s%s: refused (not a database this thermlog "
				"wrote?)",
				store->path, (long long)sqlite3_column_int64(st, 0), problem,
				strchr(problem, ' ') ? "" : " is missing or not text");
			sqlite3_finalize(st);
			return -EINVAL;
		}
		struct store_run run;
		run_from_row(st, &run);
		*any = true;
		if ((ret = fn(ctx, &run)) != 0) {
			break;
		}
	}
	sqlite3_finalize(st);
	return store_scan_result(store, rc, ret, "could not read runs");
}

/*
 * Binds @filter to ?1 (label), ?2 (from), ?3 (to) and ?5 (tags) of a runs query
 * (RUN_FILTER_WHERE).
 */
static void bind_run_filter(sqlite3_stmt *st, const struct store_run_filter *filter) {
	if (filter->label) {
		sqlite3_bind_text(st, 1, filter->label, -1, SQLITE_STATIC);
	}
	if (filter->has_from) {
		sqlite3_bind_int64(st, 2, filter->from_ms);
	}
	if (filter->has_to) {
		sqlite3_bind_int64(st, 3, filter->to_ms);
	}
	if (filter->tags) {
		sqlite3_bind_text(st, 5, filter->tags, -1, SQLITE_STATIC);
	}
}

/*
 * Prepares @which, a runs query over @filter (NULL: every run), with the filter bound; 0 or a
 * negative errno, logged.
 */
static int prepare_runs(struct store *store, enum stmt which, const struct store_run_filter *filter,
			const char *what, sqlite3_stmt **st) {
	static const struct store_run_filter all = {0};
	int rc = store_prepare(store, which, what, st);
	if (rc == 0) {
		bind_run_filter(*st, filter ? filter : &all);
	}
	return rc;
}

int store_runs_scan(struct store *store, const struct store_run_filter *filter, store_run_fn fn,
		    void *ctx) {
	sqlite3_stmt *st;
	bool by_label = filter && filter->by_label;
	int rc = prepare_runs(store, by_label ? ST_RUNS_SCAN_BY_LABEL : ST_RUNS_SCAN, filter,
			      "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	int64_t limit = filter && filter->limit > 0 ? filter->limit : -1;
	if (!by_label) {
		sqlite3_bind_int64(st, 4, limit);
	}
	bool any = false;
	return runs_step(store, st, fn, ctx, &any);
}

int store_runs_count(struct store *store, const struct store_run_filter *filter, int64_t *count) {
	sqlite3_stmt *st;
	int rc = prepare_runs(store, ST_RUNS_COUNT, filter, "a runs count", &st);
	if (rc < 0) {
		return rc;
	}
	rc = sqlite3_step(st);
	*count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	rc = rc == SQLITE_ROW ? 0 : store_fail(store, rc, "could not count runs");
	sqlite3_finalize(st);
	return rc;
}

/* Prepares @which, a runs query about the run @id (its ?1); 0 or a negative errno, logged. */
static int prepare_run(struct store *store, enum stmt which, int64_t id, sqlite3_stmt **st) {
	int rc = store_prepare(store, which, "a runs query", st);
	if (rc == 0) {
		sqlite3_bind_int64(*st, 1, id);
	}
	return rc;
}

int store_run_get(struct store *store, int64_t id, store_run_fn fn, void *ctx) {
	sqlite3_stmt *st;
	int rc = prepare_run(store, ST_RUN_GET, id, &st);
	if (rc < 0) {
		return rc;
	}
	bool any = false;
	rc = runs_step(store, st, fn, ctx, &any);
	return rc == 0 && !any ? -ENOENT : rc;
}

struct run_sample_fwd {
	store_run_sample_fn fn;
	void *ctx;
};

static int forward_run_sample(void *ctx, const struct series_cycle *c, size_t k) {
	const struct run_sample_fwd *f = ctx;
	struct store_run_sample s = {
		.ts_ms = c->ts, .channel_id = c->pairs[k].id, .q = c->pairs[k].q};
	return f->fn(f->ctx, &s);
}

int store_run_samples_scan(struct store *store, int64_t from_ms, int64_t to_ms,
			   store_run_sample_fn fn, void *ctx) {
	struct run_sample_fwd f = {fn, ctx};
	return store_series_values(store, SERIES_FAST, from_ms, to_ms, NULL, 0, SCAN_VALUES,
				   INT_MAX, forward_run_sample, &f); // fast samples: every clock
}

/* Steps @st (run_id, name, value, unit), handing each row to @fn; finalizes @st. */
static int metrics_step(struct store *store, sqlite3_stmt *st, store_run_metric_fn fn, void *ctx) {
	int rc, ret = 0;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_run_metric m = {
			.run_id = sqlite3_column_int64(st, 0),
			.name = store_column_text(st, 1),
			.value = sqlite3_column_double(st, 2),
			.unit = store_column_text(st, 3),
		};
		// A crafted file may hold anything: a metric is a named finite number.
		if (!m.name || !m.unit || sqlite3_column_type(st, 2) == SQLITE_TEXT ||
		    sqlite3_column_type(st, 2) == SQLITE_BLOB || !isfinite(m.value)) {
			log_error("store: %s: run %lld: a metric is not a named number: refused "
				  "(not a database this thermlog wrote?)",
				  store->path, (long long)m.run_id);
			ret = -EINVAL;
			break;
		}
		ret = fn(ctx, &m);
	}
	sqlite3_finalize(st);
	return store_scan_result(store, rc, ret, "could not read run metrics");
}

int store_run_metrics_scan(struct store *store, const struct store_run_filter *filter,
			   store_run_metric_fn fn, void *ctx) {
	sqlite3_stmt *st;
	int rc = prepare_runs(store, ST_RUN_METRICS_SCAN, filter, "a run metrics query", &st);
	return rc < 0 ? rc : metrics_step(store, st, fn, ctx);
}

int store_run_metrics_get(struct store *store, int64_t id, store_run_metric_fn fn, void *ctx) {
	sqlite3_stmt *st;
	int rc = prepare_run(store, ST_RUN_METRICS_GET, id, &st);
	return rc < 0 ? rc : metrics_step(store, st, fn, ctx);
}

int store_run_metric_unit(struct store *store, const char *name, char **unit) {
	*unit = NULL;
	sqlite3_stmt *st;
	int rc = store_prepare(store, ST_RUN_METRIC_UNIT, "a run metrics query", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
		const char *u = rc == SQLITE_ROW ? store_column_text(st, 0) : NULL;
		*unit = xstrdup(u ? u : "");
		rc = 0;
	} else {
		rc = store_fail(store, rc, "could not read a metric's unit");
	}
	sqlite3_finalize(st);
	return rc;
}

static void bind_double_or_null(sqlite3_stmt *st, int col, double v) {
	if (isfinite(v)) {
		sqlite3_bind_double(st, col, v);
	} else {
		sqlite3_bind_null(st, col);
	}
}

/* Stores @n metrics of run @id inside the caller's step (store_run_metrics_put()'s rules). */
static int metrics_put(struct store *store, int64_t id, const struct store_run_metric *m, size_t n,
		       int *results) {
	sqlite3_stmt *st = NULL;
	int rc = n > 0 ? store_prepare(store, ST_RUN_METRIC_PUT, "a run metrics query", &st) : 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *recorded = NULL;
		if ((rc = store_run_metric_unit(store, m[i].name, &recorded)) < 0) {
			break;
		}
		const char *unit = m[i].unit && *m[i].unit ? m[i].unit : recorded;
		int result = *recorded && strcmp(unit, recorded) != 0 ? -EDOM : 0;
		if (result == 0) {
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_text(st, 2, m[i].name, -1, SQLITE_STATIC);
			sqlite3_bind_double(st, 3, m[i].value);
			sqlite3_bind_text(st, 4, unit, -1, SQLITE_STATIC);
			int step = sqlite3_step(st);
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			if (step != SQLITE_DONE) {
				rc = store_fail(store, step, "could not store a run's metric");
			}
		}
		free(recorded);
		if (results) {
			results[i] = result;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

static int run_import(struct store *store, const struct store_run_import *run, bool *added) {
	sqlite3_stmt *st;
	int rc = store_prepare(store, ST_RUN_IMPORT, "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_text(st, 1, run->label, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, run->start_ms);
	sqlite3_bind_int64(st, 3, run->end_ms);
	sqlite3_bind_text(st, 4, run_status_name(run->status), -1, SQLITE_STATIC);
	if (run->exit_code >= 0) {
		sqlite3_bind_int(st, 5, run->exit_code);
	}
	sqlite3_bind_text(st, 6, run->import_key, -1, SQLITE_STATIC);
	if (isfinite(run->energy_j)) {
		sqlite3_bind_double(st, 7, run->energy_j);
		sqlite3_bind_text(st, 8, run->energy_method, -1, SQLITE_STATIC);
	}
	bind_double_or_null(st, 9, run->temp_max_c);
	if (isfinite(run->rss_max_bytes)) {
		sqlite3_bind_int64(st, 10, llround(run->rss_max_bytes));
	}
	store_bind_text_or_null(st, 11, run->figures);
	store_bind_text_or_null(st, 12, run->error);
	sqlite3_bind_text(st, 13, run->tags ? run->tags : "{}", -1, SQLITE_STATIC);
	rc = store_step_once(store, st, "could not store a run");
	if (rc < 0) { // -EEXIST: a CHECK, since import_key conflicts are ignored
		return rc == -EEXIST ? -EINVAL : rc;
	}
	*added = sqlite3_changes(store->db) > 0;
	if (*added) { // a run imported before keeps what it has
		return metrics_put(store, sqlite3_last_insert_rowid(store->db), run->metrics,
				   run->n_metrics, run->metric_rc);
	}
	return 0;
}

int store_run_import(struct store *store, const struct store_run_import *run, bool *added) {
	store->runs_changes++;

	bool ignored;
	added = added ? added : &ignored;
	*added = false;
	if (!store_writable(store)) {
		return -EROFS;
	}
	if (!run->label || !run_status_final(run->status) || !run->import_key) {
		return -EINVAL;
	}
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, run_import(store, run, added));
}

/* --- runs: write side -------------------------------------------------------------------- */

/* Statements are one-off (store_prepare()), as on the read side above. */

static int run_begin(struct store *store, const struct store_run_new *run, int64_t *id) {
	int64_t boot = 0;
	int rc;
	if (run->boot_id && *run->boot_id &&
	    (rc = store_boot_row(store, run->boot_id, &boot)) < 0) {
		return rc;
	}
	sqlite3_stmt *st = NULL;
	rc = store_prepare(store, ST_RUN_INSERT, "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_text(st, 1, run->label, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, run->tags ? run->tags : "{}", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, run->start_ms);
	if (run->pid > 0) {
		sqlite3_bind_int64(st, 4, run->pid);
	}
	if (boot > 0) {
		sqlite3_bind_int64(st, 5, boot);
	}
	store_bind_text_or_null(st, 6, run->start_snapshot);
	store_bind_text_or_null(st, 7, run->fingerprint);
	rc = store_step_once(store, st, "could not open a run");
	if (rc < 0) {
		return rc;
	}
	*id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

int store_run_begin(struct store *store, const struct store_run_new *run, int64_t *id) {
	store->runs_changes++;

	if (!store_writable(store)) {
		return -EROFS;
	}
	if (!run->label || !*run->label) {
		log_error("store: a run needs a label");
		return -EINVAL;
	}
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, run_begin(store, run, id));
}

int store_runs_mark(struct store *store, struct store_runs_mark *mark) {
	*mark = (struct store_runs_mark){.others = store->seen_version, .own = store->runs_changes};
	return 0;
}

static int run_end(struct store *store, int64_t id, const struct store_run_end *end) {
	sqlite3_stmt *st = NULL;
	int rc = prepare_run(store, ST_RUN_STATE, id, &st);
	if (rc < 0) {
		return rc;
	}
	rc = sqlite3_step(st);
	bool running = rc == SQLITE_ROW && strcmp(store_column_text(st, 0), "running") == 0;
	int64_t start_ms = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		return store_fail(store, rc, "could not read a run");
	}
	if (!running) {
		return -EALREADY;
	}
	if (end->end_ms < start_ms) {
		log_error("store: run %lld cannot end before it started", (long long)id);
		return -EINVAL;
	}
	rc = prepare_run(store, ST_RUN_END, id, &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 2, end->end_ms);
	sqlite3_bind_text(st, 3, run_status_name(end->status), -1, SQLITE_STATIC);
	if (end->has_exit_code) {
		sqlite3_bind_int(st, 4, end->exit_code);
	}
	if (end->has_signal) {
		sqlite3_bind_int(st, 5, end->signal);
	}
	bind_double_or_null(st, 6, end->energy_j);
	store_bind_text_or_null(st, 7, end->energy_method);
	bind_double_or_null(st, 8, end->energy_coverage);
	bind_double_or_null(st, 9, end->temp_max_c);
	if (end->rss_max_bytes >= 0) {
		sqlite3_bind_int64(st, 10, end->rss_max_bytes);
	}
	store_bind_text_or_null(st, 11, end->figures);
	store_bind_text_or_null(st, 12, end->error);
	rc = store_step_once(store, st, "could not close a run");
	if (rc < 0) {
		return rc;
	}
	return metrics_put(store, id, end->metrics, end->n_metrics, end->metric_rc);
}

int store_run_end(struct store *store, int64_t id, const struct store_run_end *end) {
	store->runs_changes++;

	if (!store_writable(store)) {
		return -EROFS;
	}
	if (!run_status_final(end->status)) {
		log_error("store: '%s' is not a status a run ends with",
			  run_status_name(end->status));
		return -EINVAL;
	}
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, run_end(store, id, end));
}

int store_run_metrics_put(struct store *store, int64_t id, const struct store_run_metric *m,
			  size_t n, int *rc) {
	store->runs_changes++;

	int err = store_step_begin(store); // -EROFS when read-only
	if (err < 0) {
		return err;
	}
	sqlite3_stmt *st = NULL;
	err = prepare_run(store, ST_RUN_STATE, id, &st);
	if (err == 0) {
		int step = sqlite3_step(st);
		err = step == SQLITE_ROW    ? 0
		      : step == SQLITE_DONE ? -ENOENT
					    : store_fail(store, step, "could not read a run");
		sqlite3_finalize(st);
	}
	if (err == 0) {
		err = metrics_put(store, id, m, n, rc);
	}
	return store_step_end(store, err);
}

static int run_samples_put(struct store *store, const struct store_run_instant *samples, size_t n,
			   struct codec_pair *pairs) {
	int rc = store_known_load(store);
	if (rc < 0) {
		return rc;
	}
	sqlite3_stmt *st = NULL;
	rc = store_prepare(store, ST_RUN_SAMPLES_PUT, "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	for (size_t s = 0; s < n && rc == 0; s++) {
		const struct store_run_instant *sample = &samples[s];
		size_t m = 0;
		for (size_t i = 0; i < sample->n; i++) {
			bool found;
			size_t at = store_known_find(store, sample->channels[i].key, &found);
			// Unregistered channels wait for the minute cycle to register them.
			if (!found || store->known[at].id == 0 || sample->readings[i].err != 0) {
				continue;
			}
			const struct known_channel *k = &store->known[at];
			if (store_quantize(sample->readings[i].value, k->resolution, &pairs[m].q)) {
				pairs[m++].id = k->id;
			}
		}
		m = m > 1 ? store_pairs_sort_unique(pairs, m) : m;
		// A sample stamped into a compacted block reopens it.
		if ((rc = store_head_open(store, SERIES_FAST, sample->ts_ms)) < 0) {
			break;
		}
		size_t len = store_encode_row(store, pairs, m, NULL,
					      0); // absolute: fast samples stand alone
		sqlite3_bind_int64(st, 1, sample->ts_ms);
		sqlite3_bind_blob(st, 2, store->blob, (int)len, SQLITE_STATIC);
		int step = sqlite3_step(st);
		sqlite3_reset(st);
		if (step != SQLITE_DONE) {
			rc = store_fail(store, step, "could not store fast samples");
		}
	}
	sqlite3_finalize(st);
	return rc;
}

int store_run_samples_put(struct store *store, const struct store_run_instant *samples, size_t n) {
	if (!store_writable(store)) {
		return -EROFS;
	}
	if (n == 0) {
		return 0;
	}
	size_t most = 1;
	for (size_t i = 0; i < n; i++) {
		most = samples[i].n > most ? samples[i].n : most;
	}
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	struct codec_pair *pairs = xcalloc(most, sizeof(*pairs));
	rc = run_samples_put(store, samples, n, pairs);
	free(pairs);
	return store_step_end(store, rc);
}

int store_runs_open_list(struct store *store, struct store_run_open **out, size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	int rc = store_prepare(store, ST_RUNS_OPEN, "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		(*out)[(*n)++] = (struct store_run_open){
			.id = sqlite3_column_int64(st, 0),
			.label = xstrdup(store_column_text(st, 1)),
			.tags = xstrdup(store_column_text(st, 2)),
			.start_ms = sqlite3_column_int64(st, 3),
			.pid = sqlite3_column_int64(st, 4),
			.start_snapshot = store_dup_or_null(store_column_text(st, 5)),
			.fingerprint = store_dup_or_null(store_column_text(st, 6)),
		};
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_runs_open_free(*out, *n);
		*out = NULL;
		*n = 0;
		return store_fail(store, rc, "could not read the running runs");
	}
	return 0;
}

int store_run_start_snapshot(struct store *store, int64_t id, char **snapshot) {
	*snapshot = NULL;
	sqlite3_stmt *st = NULL;
	int rc = prepare_run(store, ST_RUN_START_SNAPSHOT, id, &st);
	if (rc < 0) {
		return rc;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*snapshot = store_dup_or_null(store_column_text(st, 0));
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		return -ENOENT;
	}
	return rc == SQLITE_ROW ? 0
				: store_fail(store, rc, "could not read a run's start counters");
}

void store_runs_open_free(struct store_run_open *list, size_t n) {
	for (size_t i = 0; list && i < n; i++) {
		free(list[i].label);
		free(list[i].tags);
		free(list[i].start_snapshot);
		free(list[i].fingerprint);
	}
	free(list);
}
