/*
 * The store's own file (store.c): opening and the schema's migrations, transactions, a failed
 * cycle undone, pages, backup, readers beside the writer, damaged and read-only files.
 */

#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include "buf.h"
#include "store-fixture.h"
#include "test.h"
#include "xalloc.h"

static void test_open_memory(void) {
	struct store *store;
	is_int(store_open(&store, ":memory:", STORE_MODE_WRITE), 0, "open :memory:");
	struct store_info info;
	is_int(store_info(store, &info), 0, "info on an empty store");
	is_int(info.cycles, 0, "no cycles");
	is_int(info.last_cycle, 0, "last_cycle 0 when empty");
	char *v = NULL;
	is_int(store_state_get(store, "nothing", &v), -ENOENT, "missing state is -ENOENT");
	ok(v == NULL, "missing state leaves NULL");
	store_close(store);
	store_close(NULL);
}

/* A transaction open around cycles (the demo's backfill) and an import. */
static void test_transactions(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	double v[] = {40, 1000000000, 1};
	is_int(store_begin(store), 0, "begin");
	for (int i = 0; i < 10; i++) {
		put(store, T0 + 60 * i, CLOCK_STATE_SYNCED, v, NULL);
	}
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v, NULL), -EEXIST,
	       "a refused cycle inside a transaction");
	is_int(store_commit(store), 0, "and the transaction still commits");
	struct store_info info;
	store_info(store, &info);
	is_int(info.cycles, 10, "ten cycles from one transaction");

	store_begin(store);
	put(store, T0 + 6000, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_rollback(store), 0, "rollback");
	store_info(store, &info);
	is_int(info.cycles, 10, "rolled back cycle is gone");
	is_int(put(store, T0 + 6000, CLOCK_STATE_SYNCED, v, NULL), 0,
	       "and its ts can be written again");
	store_close(store);
}

/* A failing cycle leaves nothing: the database refuses to grow past a page limit. */
static void test_atomic_disk_full(void) {
	char *path = tmp_path("full.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open a file");
	double v[] = {40, 1000000000, 1};
	is_int(put(store, T0, CLOCK_STATE_SYNCED, v, NULL), 0, "first cycle");
	struct store_info before;
	store_info(store, &before);
	store_limit_pages(store, 1); // smaller than the database: every new page fails
	struct channel many[40];
	struct reading r[40];
	char keys[40][32];
	for (int i = 0; i < 40; i++) {
		snprintf(keys[i], sizeof(keys[i]), "hwmon/chip/temp%d", i);
		many[i] = (struct channel){
			.key = keys[i],
			.source = "hwmon",
			.label = keys[i],
			.kind = CHANNEL_KIND_TEMPERATURE,
			.unit = "celsius",
			.resolution = 0.001,
			.meta = "{\"padding\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}"};
		r[i] = (struct reading){.value = 30 + i};
	}
	struct cycle big = {.ts = T0 + 60, .n = 40, .channels = many, .readings = r};
	is_int(store_write_cycle(store, &big), -ENOSPC, "disk full is -ENOSPC");
	struct store_info after;
	store_info(store, &after);
	is_int(after.cycles, before.cycles, "no cycle row left behind");
	struct collect c = {0};
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, collect_sample, &c);
	is_int(c.n, 3, "no sample left behind");
	ok(channel_id(store, "hwmon/chip/temp0") == -1, "no channel left behind");

	store_limit_pages(store, 1000000);
	is_int(store_write_cycle(store, &big), 0, "the same cycle stores once space returns");
	ok(channel_id(store, "hwmon/chip/temp39") > 0, "with its channels");
	store_close(store);
	remove_db(path);
	free(path);
}

/* Runs @sql on the file @path; true when it ran. */
static bool exec_file(const char *path, const char *sql) {
	sqlite3 *raw = NULL;
	bool done = sqlite3_open_v2(path, &raw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
		    sqlite3_exec(raw, sql, NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_close(raw);
	return done;
}

/*
 * A reader compares the schema by its text first (the objects as the migrations make them, and
 * a table's text declares its columns): the same columns in other words are still read, a
 * column changed in them or an index missing is still refused.
 */
static void test_table_text(const char *path) {
	struct store *store;
	ok(exec_file(path, "ALTER TABLE state RENAME TO old_state; CREATE TABLE state (key TEXT "
			   "PRIMARY KEY, value TEXT NOT NULL) STRICT, WITHOUT ROWID; INSERT INTO "
			   "state SELECT * FROM old_state; DROP TABLE old_state"),
	   "the table state made again, its columns written on one line");
	is_int(store_open(&store, path, STORE_MODE_READ), 0, "a reader opens it");
	store_close(store);
	ok(exec_file(path, "ALTER TABLE state RENAME TO old_state; CREATE TABLE state (key TEXT "
			   "PRIMARY KEY, value TEXT) STRICT, WITHOUT ROWID; INSERT INTO state "
			   "SELECT * FROM old_state; DROP TABLE old_state"),
	   "made again with its value allowed NULL");
	is_int(store_open(&store, path, STORE_MODE_READ), -EMEDIUMTYPE, "a reader refuses it");
	ok(exec_file(path, "ALTER TABLE state RENAME TO old_state; CREATE TABLE state (\n  key "
			   "TEXT PRIMARY KEY,\n  value TEXT NOT NULL\n) STRICT, WITHOUT ROWID; "
			   "INSERT INTO state SELECT * FROM old_state; DROP TABLE old_state"),
	   "made again as the migrations make it");
	is_int(store_open(&store, path, STORE_MODE_READ), 0, "a reader opens it again");
	store_close(store);
	ok(exec_file(path, "DROP INDEX runs_start"), "an index dropped");
	is_int(store_open(&store, path, STORE_MODE_READ), -EMEDIUMTYPE, "a reader refuses it");
	ok(exec_file(path, "CREATE INDEX runs_start ON runs (start_ms)"), "made again");
	is_int(store_open(&store, path, STORE_MODE_READ), 0, "a reader opens it once more");
	store_close(store);
	// An object after the last built one (by name): the comparison ends at the built list's
	// end.
	ok(exec_file(path, "CREATE VIEW zz AS SELECT 1"), "a view named after every object");
	is_int(store_open(&store, path, STORE_MODE_READ), -EMEDIUMTYPE, "a reader refuses it");
	ok(exec_file(path, "DROP VIEW zz"), "the view dropped");
	is_int(store_open(&store, path, STORE_MODE_READ), 0, "a reader opens it again");
	store_close(store);
}

static void test_files(void) {
	char *path = tmp_path("a.db");
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "create a file database");
	store_close(store);
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "reopen it");
	store_close(store);
	// The header: user_version (offset 60) and application_id (offset 68), big-endian.
	unsigned char header[72] = {0};
	FILE *h = fopen(path, "rb");
	ok(h && fread(header, 1, sizeof(header), h) == sizeof(header), "read the header");
	fclose(h);
	ok(memcmp(header, "SQLite format 3", 16) == 0, "a SQLite file");
	is_int(header[60] << 24 | header[61] << 16 | header[62] << 8 | header[63], 11,
	       "user_version is the number of migrations applied");
	ok(memcmp(header + 68, "THLG", 4) == 0, "application_id marks it as thermlog's");
	is_int(store_open(&store, path, STORE_MODE_READ), 0, "a reader opens it");
	struct store_info info;
	is_int(store_info(store, &info), 0, "and reads the applied schema");
	store_close(store);
	test_table_text(path);

	// The same file with another application's id is a foreign database.
	char *foreign = tmp_path("foreign.db");
	FILE *src = fopen(path, "rb"), *dst = fopen(foreign, "wb");
	int ch;
	for (long i = 0; (ch = fgetc(src)) != EOF; i++) {
		fputc(i >= 68 && i < 72 ? 0x11 : ch, dst);
	}
	fclose(src);
	fclose(dst);
	is_int(store_open(&store, foreign, STORE_MODE_WRITE), -EMEDIUMTYPE,
	       "a SQLite database of another application is refused");
	remove_db(foreign);
	free(foreign);

	// A database of schema 1 gets the later migrations when a writer opens it.
	store_open(&store, path, STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_UNSYNCED, v, NULL);
	store_close(store);
	// Back to schema 1's layout: the later migrations are idempotent but for 0006's and
	// 0011's ADD COLUMN, so those columns go too (a schema-5 file has no runs.error), and the
	// tables of 0007 to 0011; the cycles go back into their own table, as schema 1 kept them.
	sqlite3 *raw = NULL;
	ok(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
		   sqlite3_exec(
			   raw,
			   "ALTER TABLE runs DROP COLUMN error; DROP TABLE throttle_episodes; "
			   "DROP TABLE run_metrics; DROP TABLE rescales; DROP TABLE campaign_runs; "
			   "DROP TABLE campaigns; CREATE TABLE cycles (ts INTEGER PRIMARY KEY, boot "
			   "INTEGER REFERENCES boots (id), clock INTEGER NOT NULL CHECK (clock IN "
			   "(0, 1, 2))) STRICT; INSERT INTO cycles SELECT ts, boot, clock FROM "
			   "samples; ALTER TABLE samples DROP COLUMN boot; DROP TABLE blocks; "
			   "DROP TABLE chunks; PRAGMA user_version = 1",
			   NULL, NULL, NULL) == SQLITE_OK,
	   "set user_version 1 (schema 1's tables: the cycles in their own)");
	sqlite3_close(raw);
	is_int(store_open(&store, path, STORE_MODE_READ), -EPROTO,
	       "a reader does not migrate an older schema");
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "a writer migrates it");
	store_info(store, &info);
	is_int(info.unsynced_cycles, 1, "data kept across the migration");
	store_close(store);
	h = fopen(path, "rb");
	ok(h && fseek(h, 63, SEEK_SET) == 0 && fgetc(h) == 11, "user_version 11 again");
	fclose(h);

	char *text = tmp_path("text.db");
	FILE *f = fopen(text, "w");
	for (int i = 0; i < 200; i++) {
		fputs("time,channel,value\n", f);
	}
	fclose(f);
	is_int(store_open(&store, text, STORE_MODE_WRITE), -EINVAL, "a text file is refused");
	ok(store == NULL, "no store on error");
	is_int(store_open(&store, text, STORE_MODE_READ), -EINVAL, "also for readers");
	remove_db(text);
	free(text);

	char *missing = tmp_path("missing.db");
	ok(store_open(&store, missing, STORE_MODE_READ) < 0, "a reader does not create");
	ok(access(missing, F_OK) != 0, "no file was created");
	free(missing);

	// A file from a newer thermlog: schema version far ahead.
	char *newer = tmp_path("newer.db");
	store_open(&store, newer, STORE_MODE_WRITE);
	store_close(store);
	// user_version is the big-endian integer at offset 60 of the header (no WAL after close).
	FILE *db = fopen(newer, "r+b");
	ok(db && fseek(db, 60, SEEK_SET) == 0 && fwrite("\0\0\0\x63", 1, 4, db) == 4,
	   "set user_version 99 in the file header");
	fclose(db);
	is_int(store_open(&store, newer, STORE_MODE_WRITE), -ENOTSUP, "a newer schema is refused");
	is_int(store_open(&store, newer, STORE_MODE_READ), -ENOTSUP, "also for readers");
	remove_db(newer);
	free(newer);
	remove_db(path);
	free(path);
}

static int dump_sample(void *ctx, const struct store_sample *s) {
	buf_printf(ctx, "s %lld %lld %lld %d\n", (long long)s->ts, (long long)s->channel_id,
		   (long long)s->q, s->clock);
	return 0;
}

static int dump_cycle(void *ctx, const struct store_cycle *c) {
	buf_printf(ctx, "c %lld %d\n", (long long)c->ts, c->clock);
	return 0;
}

static int dump_rollup(void *ctx, const struct store_rollup *r) {
	buf_printf(ctx, "r %lld %lld %lld %lld %lld %lld %lld %lld", (long long)r->channel_id,
		   (long long)r->hour, (long long)r->count, (long long)r->sum_q,
		   (long long)r->min_q, (long long)r->max_q, (long long)r->max_ts,
		   (long long)r->unsynced);
	for (size_t i = 0; i < r->n_bins; i++) {
		buf_printf(ctx, " %lld:%lld", (long long)r->bin_q[i], (long long)r->bin_count[i]);
	}
	buf_putc(ctx, '\n');
	return 0;
}

/* Everything a reader can see, as text. */
static char *dump(struct store *store) {
	struct buf b;
	buf_init(&b);
	struct store_channel *list;
	size_t n;
	store_channels(store, &list, &n);
	for (size_t i = 0; i < n; i++) {
		buf_printf(&b, "ch %lld %s %s %s %s %g %lld %lld %d\n", (long long)list[i].id,
			   list[i].ch.key, list[i].ch.label, list[i].ch.unit,
			   list[i].ch.meta ? list[i].ch.meta : "-", list[i].ch.resolution,
			   (long long)list[i].first_seen, (long long)list[i].last_seen,
			   list[i].present);
	}
	store_channels_free(list, n);
	store_scan_cycles(store, 0, INT64_MAX, dump_cycle, &b);
	store_scan_samples(store, 0, INT64_MAX, NULL, 0, true, dump_sample, &b);
	store_scan_rollups(store, 0, INT64_MAX, NULL, 0, dump_rollup, &b);
	int64_t horizon;
	store_rollup_horizon(store, &horizon);
	buf_printf(&b, "horizon %lld\n", (long long)horizon);
	char *v;
	if (store_state_get(store, "capwatch.c1", &v) == 0) {
		buf_printf(&b, "state %s\n", v);
		free(v);
	}
	return buf_steal(&b);
}

static void test_backup(void) {
	char *path = tmp_path("live.db"), *copy = tmp_path("copy.db");
	struct store *store, *reader, *backup;
	store_open(&store, path, STORE_MODE_WRITE);
	fill_hours(store, 3);
	double v[] = {40, 1e9, 1};
	put(store, T0 + 3 * 3600, CLOCK_STATE_SYNCED, v, NULL);
	store_maintain(store, T0 + 4 * 3600, 0);
	store_state_set(store, "capwatch.c1", "{\"damage\":0.125}");
	is_int(store_open(&reader, path, STORE_MODE_READ), 0, "reader beside the writer");
	store_begin(store); // a write in progress must not leak into the copy
	put(store, T0 + 3 * 3600 + 60, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_backup(reader, copy), 0, "backup while a write is in progress");
	store_rollback(store);
	is_int(store_open(&backup, copy, STORE_MODE_READ), 0, "the copy opens");
	char *a = dump(store), *b = dump(backup);
	ok(strlen(a) > 10000, "a realistic database to compare");
	is_str(b, a, "the copy has identical logical content");
	free(a);
	free(b);
	store_close(backup);
	store_close(reader);
	store_close(store);
	remove_db(copy);
	remove_db(path);
	free(copy);
	free(path);
}

static int count_per_cycle(void *ctx, const struct store_sample *s) {
	int64_t *last = ctx; // [last ts, values in it, cycles with a wrong count]
	if (s->ts != last[0]) {
		last[2] += last[0] != 0 && last[1] != N_CHANS;
		last[0] = s->ts;
		last[1] = 0;
	}
	last[1]++;
	return 0;
}

static int64_t file_page_size(const char *path) {
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t size = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			size = sqlite3_column_int64(st, 0);
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return size;
}

/* Temporary tables that @sql's plan builds on every execution on @path, or -1. */
static int ephemeral_tables(const char *path, const char *sql) {
	sqlite3 *db;
	sqlite3_stmt *st;
	int n = -1;
	char *explain = xasprintf("EXPLAIN %s", sql);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, explain, -1, &st, NULL) == SQLITE_OK) {
		n = 0;
		while (sqlite3_step(st) == SQLITE_ROW) {
			n += strcmp((const char *)sqlite3_column_text(st, 1), "OpenEphemeral") == 0;
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	free(explain);
	return n;
}

/*
 * A cycle's insert (its head row's, and a converted database's row in cycles) and the channel
 * update build no temporary table (a CHECK written as an IN list did, on every insert), in a new
 * database and in one migrated from schema 2; the constraints still refuse what they refused.
 */
static void test_insert_plans(void) {
	char *fresh = tmp_path("plans.db"), *old = tmp_path("plans-old.db");
	remove_db(old);
	is_int(copy_file("fixtures/db/amd64.db", old), 0, "copy a schema 2 database");
	const char *paths[] = {fresh, old};
	const char *names[] = {"new", "migrated"};
	char what[128];
#define WHAT(text) (snprintf(what, sizeof(what), "%s: %s", names[i], text), what)
	for (int i = 0; i < 2; i++) {
		struct store *store;
		is_int(store_open(&store, paths[i], STORE_MODE_WRITE), 0, WHAT("opened"));
		store_close(store);
		// The migrated database is being converted: its head's cycles are in cycles.
		if (i == 1) {
			is_int(ephemeral_tables(paths[i], "INSERT INTO cycles (ts, boot, clock) "
							  "VALUES (1, NULL, 1)"),
			       0, WHAT("a cycle insert builds no temporary table"));
			is_int(exec_raw(paths[i], "INSERT INTO cycles (ts, clock) VALUES (5, 3)"),
			       SQLITE_CONSTRAINT, WHAT("clock 3 is still refused"));
		}
		is_int(ephemeral_tables(paths[i], "INSERT INTO samples (ts, clock, data, boot) "
						  "VALUES (1, 1, x'00', NULL)"),
		       0, WHAT("a head row's insert builds no temporary table"));
		is_int(ephemeral_tables(paths[i], "UPDATE channels SET present = 1 WHERE id = 1"),
		       0, WHAT("a channel update builds no temporary table"));
		is_int(exec_raw(paths[i],
				"INSERT INTO samples (ts, clock, data) VALUES (5, 3, x'')"),
		       SQLITE_CONSTRAINT, WHAT("clock 3 is still refused in the head"));
		is_int(exec_raw(paths[i],
				"INSERT INTO samples (ts, clock, data) VALUES (5, -1, x'')"),
		       SQLITE_CONSTRAINT, WHAT("clock -1 is still refused"));
		is_int(exec_raw(paths[i], "INSERT INTO channels (key, source, label, kind, unit, "
					  "resolution, first_seen, last_seen, present) VALUES "
					  "('x', 's', 'l', 'k', 'u', 1, 0, 0, 2)"),
		       SQLITE_CONSTRAINT, WHAT("present 2 is still refused"));
		is_int(exec_raw(paths[i], "PRAGMA integrity_check"), SQLITE_OK, WHAT("integrity"));
	}
#undef WHAT
	remove_db(fresh);
	remove_db(old);
	free(fresh);
	free(old);
}

/* A reader in another process while the writer commits: it sees whole cycles only. */
static void test_reader_while_writing(void) {
	char *path = tmp_path("rw.db");
	struct store *store, *reader;
	store_open(&store, path, STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_open(&reader, path, STORE_MODE_READ), 0, "open a reader");
	store_begin(store);
	put(store, T0 + 60, CLOCK_STATE_SYNCED, v, NULL);
	struct store_info info;
	is_int(store_info(reader, &info), 0, "the reader reads during a write transaction");
	is_int(info.cycles, 1, "and does not see uncommitted cycles");
	store_commit(store);
	store_info(reader, &info);
	is_int(info.cycles, 2, "it sees them once committed");
	ok(info.size_bytes > 4096, "size counts the database and its WAL");
	struct store_info w1, w2;
	store_info(store, &w1);
	put(store, T0 + 90, CLOCK_STATE_SYNCED, v, NULL);
	store_info(store, &w2);
	ok(w1.bytes_written > 0, "the writer counts the bytes it wrote");
	int64_t page = file_page_size(path);
	ok(w2.bytes_written == w1.bytes_written + page, "a cycle writes one page: its head row's");
	is_int(put(reader, T0 + 120, CLOCK_STATE_SYNCED, v, NULL), -EROFS, "a reader cannot write");
	is_int(store_maintain(reader, T0, 0), -EROFS, "nor maintain");
	// Every write step refuses a reader the same way, before any SQL.
	struct store_drop drop;
	is_int(store_drop_after(reader, T0, true, &drop), -EROFS, "nor drop cycles");
	struct channel ch = {.key = "ro/x",
			     .source = "import",
			     .label = "x",
			     .unit = "celsius",
			     .resolution = 0.1};
	int64_t id = 0, closed = 0;
	double applied;
	is_int(store_channel_ensure(reader, &ch, &id), -EROFS, "nor add a channel");
	is_int(store_insert_sample(reader, T0, 1, 400, NULL), -EROFS, "nor import a value");
	is_int(store_channel_refine(reader, 1, 0.01, &applied), -EROFS, "nor refine a channel");
	is_int(store_state_set(reader, "ro", "x"), -EROFS, "nor set state");
	is_int(store_throttle_close_open(reader, &closed), -EROFS, "nor close episodes");
	const char *keys[] = {"ro/x"};
	is_int(store_mark_present(reader, keys, 1, T0), -EROFS, "nor mark channels present");
	store_close(store);

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct store *w;
		if (store_open(&w, path, STORE_MODE_WRITE) < 0) {
			free(path);
			_exit(1);
		}
		int bad = 0;
		for (int i = 0; i < 400; i++) {
			bad |= put(w, T0 + 180 + 60 * i, CLOCK_STATE_SYNCED, v, NULL) != 0;
		}
		store_close(w);
		free(path);
		_exit(bad);
	}
	int64_t torn = 0, reads = 0, errors = 0;
	int status = -1;
	for (;;) {
		int64_t last[3] = {0};
		errors += store_scan_samples(reader, 0, INT64_MAX, NULL, 0, false, count_per_cycle,
					     last) != 0;
		torn += last[2] + (last[1] != N_CHANS);
		reads++;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			break;
		}
	}
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer process stored 400 cycles");
	is_int(errors, 0, "no read failed while the other process wrote");
	is_int(torn, 0, "every read saw whole cycles");
	ok(reads > 0, "reads happened");
	store_info(reader, &info);
	is_int(info.cycles, 403, "the reader sees the final state");
	store_close(reader);
	remove_db(path);
	free(path);
}

static void test_corrupt(void) {
	char *path = tmp_path("corrupt.db");
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	fill_hours(store, 5);
	store_close(store);
	// Keep page 1 (header and schema), overwrite pages 2 to 4 with noise.
	FILE *f = fopen(path, "r+b");
	fseek(f, 4096, SEEK_SET);
	for (int i = 0; i < 3 * 4096; i++) {
		fputc((i * 7919) & 0xff, f);
	}
	fclose(f);
	is_int(store_open(&store, path, STORE_MODE_WRITE), -EINVAL,
	       "a corrupt database is -EINVAL (moved aside by the daemon)");
	remove_db(path);
	free(path);
}

/* A database the user may read but not write (root is dropped to nobody to check this). */
static void test_read_only_file(void) {
	char *path = tmp_path("ro.db");
	struct store *store;
	store_open(&store, path, STORE_MODE_WRITE);
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	store_close(store);
	const char *suffixes[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		chmod(p, 0444);
		free(p);
	}
	chmod(tmpdir, 0755);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (getuid() == 0 && setuid(65534) < 0) {
			_exit(100);
		}
		struct store *w = NULL, *r = NULL;
		int rc_w = store_open(&w, path, STORE_MODE_WRITE);
		int rc_r = store_open(&r, path, STORE_MODE_READ);
		struct store_info info = {0};
		int rc_i = r ? store_info(r, &info) : -1;
		store_close(w);
		store_close(r);
		free(path);
		_exit(rc_w == -EACCES ? (rc_r == 0 && rc_i == 0 && info.cycles == 1 ? 0 : 2) : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	chmod(tmpdir, 0700);
	is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	       "a read-only file: -EACCES for the writer, the reader still reads it");
	remove_db(path);
	free(path);
}

/* New databases get 2 KiB pages (half the WAL bytes per commit); existing ones keep theirs. */
static void test_page_size(void) {
	char *path = tmp_path("pages.db");
	remove_db(path);
	struct store *store;
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "create a database");
	double v[] = {40, 1e9, 1};
	put(store, T0, CLOCK_STATE_SYNCED, v, NULL);
	store_close(store);
	is_int(file_page_size(path), 2048, "a new database has 2 KiB pages");
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open it again");
	store_close(store);
	is_int(file_page_size(path), 2048, "and keeps them");
	remove_db(path);
	is_int(copy_file("fixtures/db/amd64.db", path), 0, "copy a database of 4 KiB pages");
	is_int(store_open(&store, path, STORE_MODE_WRITE), 0, "open it as the writer");
	is_int(put(store, T0 + 600 * 86400, CLOCK_STATE_SYNCED, v, NULL), 0, "write a cycle");
	store_close(store);
	is_int(file_page_size(path), 4096, "an existing database keeps its page size");
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_open_memory();
	test_transactions();
	test_insert_plans();
	test_atomic_disk_full();
	test_files();
	test_page_size();
	test_backup();
	test_reader_while_writing();
	test_corrupt();
	test_read_only_file();
	store_fixture_end();
	return test_done();
}
