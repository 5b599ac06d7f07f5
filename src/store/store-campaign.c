/*
 * The store's campaigns (sql/0010-campaigns.sql): a campaign's row, written by its runner
 * (thermlog campaign run) beside the daemon's writes, and the repetitions it started; the runs
 * themselves are the daemon's (store-runs.c).
 */
#include "store-internal.h"

static const char *const status_names[] = {"running", "stopped", "done"};
static const char *const gate_names[] = {"none", "passed", "timeout"};
static const char *const start_names[] = {"cold", "warm", "any"};

/* The index of @text in @names (@n), or @fallback. */
static int name_index(const char *text, const char *const *names, int n, int fallback) {
	for (int i = 0; text && i < n; i++) {
		if (strcmp(text, names[i]) == 0) {
			return i;
		}
	}
	return fallback;
}

static void bind_id_or_null(sqlite3_stmt *st, int col, int64_t id) {
	if (id > 0) {
		sqlite3_bind_int64(st, col, id);
	} else {
		sqlite3_bind_null(st, col);
	}
}

/* Runs one write statement @which with @c's columns bound (its id last, for an update). */
static int campaign_write(struct store *store, enum stmt which, const struct store_campaign *c) {
	sqlite3_stmt *st = NULL;
	int rc = store_prepare(store, which, "a campaign", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_text(st, 1, c->name, -1, SQLITE_TRANSIENT);
	store_bind_text_or_null(st, 2, c->board);
	sqlite3_bind_text(st, 3, c->suite_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, c->suite_hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, c->suite, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, c->suite_text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 7, c->created_ms);
	bind_id_or_null(st, 8, c->ended_ms);
	sqlite3_bind_text(st, 9, status_names[c->status], -1, SQLITE_STATIC);
	bind_id_or_null(st, 10, c->runner_pid);
	if (c->runner_pid > 0) {
		sqlite3_bind_int64(st, 11, (int64_t)c->runner_start);
	} else {
		sqlite3_bind_null(st, 11);
	}
	store_bind_text_or_null(st, 12, c->fingerprint);
	store_bind_text_or_null(st, 13, c->baseline);
	bind_id_or_null(st, 14, c->idle_run);
	bind_id_or_null(st, 15, c->burst_run);
	if (which == ST_CAMPAIGN_UPDATE) {
		sqlite3_bind_int64(st, 16, c->id);
	}
	return store_step_once(store, st, "could not write a campaign");
}

int store_campaign_create(struct store *store, const struct store_campaign *c, int64_t *id) {
	int rc = store_step_begin(store); // -EROFS when read-only
	if (rc < 0) {
		return rc;
	}
	rc = campaign_write(store, ST_CAMPAIGN_INSERT, c);
	if (rc == 0) {
		*id = sqlite3_last_insert_rowid(store->db);
	}
	return store_step_end(store, rc);
}

int store_campaign_update(struct store *store, const struct store_campaign *c) {
	int rc = store_step_begin(store); // -EROFS when read-only
	if (rc < 0) {
		return rc;
	}
	rc = campaign_write(store, ST_CAMPAIGN_UPDATE, c);
	if (rc == 0 && sqlite3_changes64(store->db) == 0) {
		rc = -ENOENT;
	}
	return store_step_end(store, rc);
}

static char *dup_column(sqlite3_stmt *st, int col) {
	return store_dup_or_null(store_column_text(st, col));
}

static void campaign_from_row(sqlite3_stmt *st, struct store_campaign *c) {
	*c = (struct store_campaign){
		.id = sqlite3_column_int64(st, 0),
		.name = dup_column(st, 1),
		.board = dup_column(st, 2),
		.suite_path = dup_column(st, 3),
		.suite_hash = dup_column(st, 4),
		.suite = dup_column(st, 5),
		.suite_text = dup_column(st, 6),
		.created_ms = sqlite3_column_int64(st, 7),
		.ended_ms = sqlite3_column_int64(st, 8),
		.status = (enum campaign_status)name_index(store_column_text(st, 9), status_names,
							   3, CAMPAIGN_STATUS_STOPPED),
		.runner_pid = sqlite3_column_int64(st, 10),
		.runner_start = (uint64_t)sqlite3_column_int64(st, 11),
		.fingerprint = dup_column(st, 12),
		.baseline = dup_column(st, 13),
		.idle_run = sqlite3_column_int64(st, 14),
		.burst_run = sqlite3_column_int64(st, 15),
	};
}

void store_campaign_finish(struct store_campaign *c) {
	free(c->name);
	free(c->board);
	free(c->suite_path);
	free(c->suite_hash);
	free(c->suite);
	free(c->suite_text);
	free(c->fingerprint);
	free(c->baseline);
	*c = (struct store_campaign){0};
}

/* The campaigns statement @which (@param bound as text or an id) gives, in order. */
static int campaigns_read(struct store *store, enum stmt which, const char *text, int64_t id,
			  struct store_campaign **out, size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	int rc = store_prepare(store, which, "campaigns", &st);
	if (rc < 0) {
		return rc;
	}
	if (text) {
		sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
	} else if (sqlite3_bind_parameter_count(st) > 0) {
		sqlite3_bind_int64(st, 1, id);
	}
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		campaign_from_row(st, &(*out)[(*n)++]);
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE) {
		store_campaigns_free(*out, *n);
		*out = NULL;
		*n = 0;
		return store_fail(store, step, "could not read campaigns");
	}
	return 0;
}

/* The one campaign statement @which finds into @out; -ENOENT when none. */
static int campaign_one(struct store *store, enum stmt which, const char *text, int64_t id,
			struct store_campaign *out) {
	struct store_campaign *list;
	size_t n;
	int rc = campaigns_read(store, which, text, id, &list, &n);
	if (rc < 0) {
		return rc;
	}
	if (n == 0) {
		free(list);
		return -ENOENT;
	}
	*out = list[0];
	for (size_t i = 1; i < n; i++) {
		store_campaign_finish(&list[i]);
	}
	free(list);
	return 0;
}

int store_campaign_get(struct store *store, int64_t id, struct store_campaign *out) {
	return campaign_one(store, ST_CAMPAIGN_GET, NULL, id, out);
}

int store_campaign_latest(struct store *store, const char *name, struct store_campaign *out) {
	return campaign_one(store, ST_CAMPAIGN_LATEST, name, 0, out);
}

int store_campaign_list(struct store *store, struct store_campaign **out, size_t *n) {
	return campaigns_read(store, ST_CAMPAIGN_LIST, NULL, 0, out, n);
}

void store_campaigns_free(struct store_campaign *list, size_t n) {
	for (size_t i = 0; list && i < n; i++) {
		store_campaign_finish(&list[i]);
	}
	free(list);
}

/* --- the repetitions ------------------------------------------------------------------------ */

int store_campaign_run_put(struct store *store, const struct store_campaign_run *r) {
	int rc = store_step_begin(store); // -EROFS when read-only
	if (rc < 0) {
		return rc;
	}
	sqlite3_stmt *st = NULL;
	rc = store_prepare(store, ST_CAMPAIGN_RUN_PUT, "a campaign's repetition", &st);
	if (rc == 0) {
		sqlite3_bind_int64(st, 1, r->campaign);
		sqlite3_bind_int64(st, 2, r->seq);
		sqlite3_bind_text(st, 3, r->step, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, r->rep);
		sqlite3_bind_int(st, 5, r->warmup);
		sqlite3_bind_int64(st, 6, r->run);
		sqlite3_bind_text(st, 7, start_names[r->start], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 8, gate_names[r->gate], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 9, r->gate_wait_ms);
		store_bind_text_or_null(st, 10, r->gate_detail);
		if (r->warm_ms >= 0) {
			sqlite3_bind_int64(st, 11, r->warm_ms);
		} else {
			sqlite3_bind_null(st, 11);
		}
		store_bind_text_or_null(st, 12, r->missing_metrics);
		rc = store_step_once(store, st, "could not write a repetition");
	}
	return store_step_end(store, rc);
}

int store_campaign_runs(struct store *store, int64_t campaign, struct store_campaign_run **out,
			size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	int rc = store_prepare(store, ST_CAMPAIGN_RUNS, "a campaign's repetitions", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, campaign);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		struct store_campaign_run *r = &(*out)[(*n)++];
		*r = (struct store_campaign_run){
			.campaign = sqlite3_column_int64(st, 0),
			.seq = sqlite3_column_int64(st, 1),
			.step = dup_column(st, 2),
			.rep = (unsigned)sqlite3_column_int64(st, 3),
			.warmup = sqlite3_column_int(st, 4) != 0,
			.run = sqlite3_column_int64(st, 5),
			.start = (enum campaign_start)name_index(store_column_text(st, 6),
								 start_names, 3, 2),
			.gate = (enum campaigngate_outcome)name_index(store_column_text(st, 7),
								      gate_names, 3, 0),
			.gate_wait_ms = sqlite3_column_int64(st, 8),
			.gate_detail = dup_column(st, 9),
			.warm_ms = sqlite3_column_type(st, 10) == SQLITE_NULL
					   ? -1
					   : sqlite3_column_int64(st, 10),
			.missing_metrics = dup_column(st, 11),
		};
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE) {
		store_campaign_runs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return store_fail(store, step, "could not read a campaign's repetitions");
	}
	return 0;
}

void store_campaign_runs_free(struct store_campaign_run *list, size_t n) {
	for (size_t i = 0; list && i < n; i++) {
		free(list[i].step);
		free(list[i].gate_detail);
		free(list[i].missing_metrics);
	}
	free(list);
}
