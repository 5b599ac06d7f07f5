/*
 * The schema check of a database to read (store_check_schema()): its tables, columns and
 * indexes against the ones the migrations of sql/ make, so that no view, trigger or table of
 * another shape is read as thermlog's.
 */
#include "sql/store-schema.h"
#include "store-internal.h"

/*
 * Whether table @name has the same columns in both databases, @col_got's and @col_want's
 * (ST_SCHEMA_COLUMNS): name, declared type, NOT NULL, key, generated. The first that differs
 * is logged.
 */
static bool same_columns(struct store *store, sqlite3_stmt *col_got, sqlite3_stmt *col_want,
			 const char *name) {
	sqlite3_reset(col_got);
	sqlite3_reset(col_want);
	sqlite3_bind_text(col_got, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(col_want, 1, name, -1, SQLITE_TRANSIENT);
	for (;;) {
		int g = sqlite3_step(col_got), w = sqlite3_step(col_want);
		if (g != SQLITE_ROW && w != SQLITE_ROW) {
			return true;
		}
		bool same = g == SQLITE_ROW && w == SQLITE_ROW;
		for (int c = 0; same && c < 5; c++) {
			const char *a = store_column_text(col_got, c),
				   *b = store_column_text(col_want, c);
			same = a && b && strcmp(a, b) == 0;
		}
		if (!same) {
			const char *col = g == SQLITE_ROW ? store_column_text(col_got, 0)
							  : store_column_text(col_want, 0);
			log_error("store: %s: the schema is not thermlog's: table '%s' column '%s' "
				  "differs (name, type, NOT NULL, key or generated)",
				  store->path, name, col ? col : "?");
			return false;
		}
	}
}

/* The next object of store_schema[] a current database has: not the table cycles nor its index. */
static size_t schema_next(size_t i) {
	while (store_schema[i].name && strcmp(store_schema[i].tbl_name, "cycles") == 0) {
		i++;
	}
	return i;
}

/*
 * Whether the database's objects are, text for text, those the migrations make (store_schema[],
 * as SQLite stored them at build time), without the table cycles a conversion drops. SQLite
 * reads every column from that text, so nothing more needs comparing: the migrations need not
 * be run again. Any other schema (a database still converting, one of another SQLite's text, a
 * foreign one) gets store_check_schema()'s full comparison, and so does every database when
 * the build had no text to compare with (its Python without sqlite3: store_schema[] empty).
 */
static bool schema_as_built(struct store *store) {
	sqlite3_stmt *st = NULL;
	if (store_prepare_on(store->db, ST_SCHEMA_OBJECTS, &st) != SQLITE_OK) {
		sqlite3_finalize(st);
		return false;
	}
	size_t i = schema_next(0);
	bool same = store_schema[0].name != NULL; // a build without the text: the full check
	int rc = SQLITE_DONE;
	while (same && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = store_column_text(st, 0), *name = store_column_text(st, 1),
			   *sql = store_column_text(st, 2), *table = store_column_text(st, 3);
		same = store_schema[i].name && store_text_eq(type, store_schema[i].type) &&
		       store_text_eq(name, store_schema[i].name) &&
		       store_text_eq(table, store_schema[i].tbl_name) &&
		       store_text_eq(sql, store_schema[i].sql);
		if (same) { // never past the list's end: an object after it is one too many
			i = schema_next(i + 1);
		}
	}
	same = same && rc == SQLITE_DONE && !store_schema[i].name;
	sqlite3_finalize(st);
	return same;
}

/*
 * The schema of a database to read must be this thermlog's, object for object: the same
 * tables with the same columns (name, declared type, NOT NULL, key, none generated) and the
 * same indexes, and no view or trigger. A file needs only our application_id and user_version
 * to pass check_identity(); a view named runs would otherwise be read as the table (NULL
 * statuses, recursive or huge rows). A schema whose text is the built one passes at once
 * (schema_as_built()); otherwise the expected schema is the migrations run on an empty
 * in-memory database, without the table cycles and its index once a conversion dropped them.
 */
int store_check_schema(struct store *store) {
	sqlite3 *want = NULL;
	sqlite3_stmt *got_st = NULL, *want_st = NULL, *col_got = NULL, *col_want = NULL;
	int err = -ENOMEM;
	if (schema_as_built(store)) {
		return 0;
	}
	if (sqlite3_open_v2(":memory:", &want, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		goto out;
	}
	for (int v = 0; v < store_schema_version(); v++) {
		if (sqlite3_exec(want, store_migration(v), NULL, NULL, NULL) != SQLITE_OK) {
			log_error("store: the built-in schema %d does not apply: %s", v + 1,
				  sqlite3_errmsg(want));
			err = -EIO;
			goto out;
		}
	}
	err = -EINVAL;
	if (store_prepare_on(store->db, ST_SCHEMA_OBJECTS, &got_st) != SQLITE_OK ||
	    store_prepare_on(store->db, ST_SCHEMA_COLUMNS, &col_got) != SQLITE_OK ||
	    store_prepare_on(want, ST_SCHEMA_COLUMNS, &col_want) != SQLITE_OK ||
	    store_prepare_on(want, ST_SCHEMA_OBJECT_TYPE, &want_st) != SQLITE_OK) {
		log_error("store: %s: could not read its schema: %s", store->path,
			  sqlite3_errmsg(store->db));
		goto out;
	}
	size_t found = 0;
	bool legacy = false; // the table cycles of a database being converted is still there
	int rc;
	while ((rc = sqlite3_step(got_st)) == SQLITE_ROW) {
		const char *type = store_column_text(got_st, 0),
			   *name = store_column_text(got_st, 1);
		type = type ? type : "?";
		name = name ? name : "?";
		sqlite3_reset(want_st);
		sqlite3_bind_text(want_st, 1, name, -1, SQLITE_TRANSIENT);
		const char *want_type =
			sqlite3_step(want_st) == SQLITE_ROW ? store_column_text(want_st, 0) : NULL;
		if (!want_type || strcmp(want_type, type) != 0) {
			log_error("store: %s: the schema is not thermlog's: %s '%s' %s",
				  store->path, type, name,
				  want_type ? "should be a table or index of that name"
					    : "is not part of it");
			err = -EMEDIUMTYPE;
			goto out;
		}
		found++;
		legacy = legacy || strcmp(name, "cycles") == 0;
		// The text of the built-in table declares the same columns: SQLite reads them
		// from it. Any other text (an older SQLite's, a crafted one) is compared by column.
		const char *sql = store_column_text(got_st, 2),
			   *want_sql = store_column_text(want_st, 1);
		if (strcmp(type, "table") != 0 || store_text_eq(sql, want_sql)) {
			continue;
		}
		if (!same_columns(store, col_got, col_want, name)) {
			err = -EMEDIUMTYPE;
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		err = store_fail(store, rc, "could not read the schema");
		goto out;
	}
	sqlite3_finalize(want_st);
	want_st = NULL;
	int64_t expected = 0;
	if (store_prepare_on(want, ST_SCHEMA_OBJECT_COUNT, &want_st) == SQLITE_OK &&
	    sqlite3_step(want_st) == SQLITE_ROW) {
		expected = sqlite3_column_int64(want_st, 0);
	}
	expected -= legacy ? 0 : 2; // cycles and cycles_unsynced, dropped by the conversion
	if ((int64_t)found != expected) {
		log_error("store: %s: the schema is not thermlog's: %lld of its %lld tables and "
			  "indexes are missing",
			  store->path, (long long)(expected - (int64_t)found), (long long)expected);
		err = -EMEDIUMTYPE;
		goto out;
	}
	err = 0;
out:
	sqlite3_finalize(got_st);
	sqlite3_finalize(want_st);
	sqlite3_finalize(col_got);
	sqlite3_finalize(col_want);
	sqlite3_close(want);
	return err;
}
