/* The store's state table: keys and values, and the history generation. */
#include "store-internal.h"

/* --- state -------------------------------------------------------------------------------- */

int store_state_get(struct store *store, const char *key, char **value) {
	*value = NULL;
	sqlite3_stmt *st = store_stmt(store, ST_STATE_GET);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*value = xstrdup(store_column_text(st, 0));
	}
	store_done(st);
	if (rc == SQLITE_DONE) {
		return -ENOENT;
	}
	return rc == SQLITE_ROW ? 0 : store_fail(store, rc, "could not read state");
}

int store_state_delete(struct store *store, const char *key) {
	sqlite3_stmt *st;
	int rc = store_prepare(store, ST_STATE_DELETE, "state", &st);
	if (rc == 0) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		rc = store_step_once(store, st, "could not write state");
	}
	return rc;
}

int store_state_put(struct store *store, const char *key, const char *value) {
	sqlite3_stmt *st = store_stmt(store, ST_STATE_SET);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	int rc = store_step_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not write state");
}

int store_state_set(struct store *store, const char *key, const char *value) {
	int rc = store_step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return store_step_end(store, store_state_put(store, key, value));
}

/* An integer state value; *value unchanged if absent. */
int store_state_get_int(struct store *store, const char *key, int64_t *value) {
	char *text;
	int rc = store_state_get(store, key, &text);
	if (rc == -ENOENT) {
		return 0;
	}
	if (rc < 0) {
		return rc;
	}
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	bool ok = errno == 0 && end != text && *end == '\0';
	if (ok) {
		*value = v;
	} else {
		log_error("store: state %s is not an integer: '%s'", key, text);
	}
	free(text);
	return ok ? 0 : -EINVAL;
}

int store_state_set_int(struct store *store, const char *key, int64_t value) {
	char text[32];
	snprintf(text, sizeof(text), "%lld", (long long)value);
	return store_state_put(store, key, text);
}

int store_history_generation(struct store *store, int64_t *gen) {
	// Only a commit of another connection (a new data_version) or a bump through this store
	// changes it: until then the value read last stands, and the daemon's cycle reads nothing.
	if (store->gen_valid && store->gen_version == store->seen_version &&
	    store->gen_bumps == store->history_bumps) {
		*gen = store->gen;
		return 0;
	}
	*gen = 0;
	int rc = store_state_get_int(store, STATE_HISTORY_GEN, gen);
	store->gen_valid = rc == 0 && store->seen_version != 0;
	store->gen = *gen;
	store->gen_version = store->seen_version;
	store->gen_bumps = store->history_bumps;
	return rc;
}

/* Stored history changed behind the daemon's running sums: once per transaction, tell them. */
int store_history_changed(struct store *store) {
	if (store->history_bumped) {
		return 0;
	}
	int64_t gen = 0;
	int rc = store_state_get_int(store, STATE_HISTORY_GEN, &gen);
	if (rc == 0) {
		rc = store_state_set_int(store, STATE_HISTORY_GEN, gen + 1);
	}
	store->history_bumps++;
	store->history_bumped = rc == 0 && store->depth > 0;
	return rc;
}
