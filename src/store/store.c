/*
 * The store: thermlog's SQLite database. Migrations from sql/ (embedded at build time), one
 * transaction per cycle with the values of a cycle packed in one row, hourly rollups with exact
 * histograms merged into whole days, incremental retention. The schema comments in the sql/
 * migrations explain the layout.
 */
#include "store.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "codec.h"
#include "log.h"
#include "sql/store-migrations.h"
#include "xalloc.h"

#define SCHEMA_VERSION     ((int)(sizeof(store_migrations) / sizeof(store_migrations[0])))
#define APPLICATION_ID     0x54484c47    // "THLG": tells our databases from other SQLite files
#define FOREIGN_LENGTH_MAX (1024 * 1024) // STORE_MODE_FOREIGN: longest string or blob read
#define FOREIGN_DEADLINE_S 10            // STORE_MODE_FOREIGN: all its reads, from the open
#define HOUR_S             3600
#define PRUNE_BATCH        1024 // sample rows (cycles) deleted per transaction
#define STR_(x)            #x
#define STR(x)             STR_(x)
#define ROLLUP_CHUNK_S     (24 * HOUR_S) // hours rolled up per transaction
#define STATE_HORIZON      "store.rollup_horizon"
#define STATE_RAW_HORIZON  "store.raw_horizon"
#define STATE_DAY_HORIZON  "store.day_horizon" // days before it are merged in the daily tables
#define DAY_S              (24 * HOUR_S)
#define DAY_CHUNK_S        (31 * DAY_S)               // days merged per transaction
#define STATE_HISTORY_GEN  "store.history_generation" // bumped by each import that adds a value
#define STORE_PAGE_SIZE    "2048"                     // bytes, for new databases

enum stmt {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SAVEPOINT,
	ST_RELEASE,
	ST_ROLLBACK_TO,
	ST_LAST_CYCLE,
	ST_LAST_OWN_CYCLE,
	ST_FIRST_CYCLE,
	ST_CYCLE_INSERT,
	ST_CYCLE_INSERT_IMPORT,
	ST_CYCLE_CLOCK,
	ST_SAMPLES_INSERT,
	ST_SAMPLES_UPDATE,
	ST_SAMPLES_HOUR,
	ST_SAMPLES_PUT,
	ST_BOOT_INSERT,
	ST_BOOT_SELECT,
	ST_CHANNEL_INSERT,
	ST_CHANNEL_SEEN,
	ST_CHANNEL_UPDATE,
	ST_CHANNEL_ABSENT,
	ST_CHANNEL_PRESENT,
	ST_CHANNEL_SPAN,
	ST_CHANNELS,
	ST_CHANNEL_COUNTS,
	ST_SCAN_CYCLES,
	ST_SCAN_SAMPLES,
	ST_SCAN_ROLLUPS,
	ST_ROLLUP_PUT,
	ST_SCAN_CYCLE_DAYS,
	ST_SCAN_ROLLUP_DAYS,
	ST_CYCLE_DAY_PUT,
	ST_ROLLUP_DAY_PUT,
	ST_PRUNE_LAST,
	ST_PRUNE,
	ST_STATE_GET,
	ST_STATE_SET,
	ST_INFO,
	ST_DATA_VERSION,
	ST_COUNT,
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SAVEPOINT] = "SAVEPOINT store_step",
	[ST_RELEASE] = "RELEASE store_step",
	[ST_ROLLBACK_TO] = "ROLLBACK TO store_step",
	[ST_LAST_CYCLE] = "SELECT max(ts) FROM cycles",
	// Backwards from ?1 to the first cycle with a boot: imported rows have none.
	[ST_LAST_OWN_CYCLE] = "SELECT ts FROM cycles WHERE ts <= ?1 AND boot IS NOT NULL "
			      "ORDER BY ts DESC LIMIT 1",
	[ST_FIRST_CYCLE] = "SELECT min(ts) FROM cycles",
	[ST_CYCLE_INSERT] = "INSERT INTO cycles (ts, boot, clock) VALUES (?1, ?2, ?3)",
	[ST_CYCLE_INSERT_IMPORT] =
		"INSERT OR IGNORE INTO cycles (ts, boot, clock) VALUES (?1, NULL, 1)",
	[ST_CYCLE_CLOCK] = "SELECT clock FROM cycles WHERE ts = ?1",
	[ST_SAMPLES_INSERT] = "INSERT INTO samples (ts, clock, data) VALUES (?1, ?2, ?3)",
	[ST_SAMPLES_UPDATE] = "UPDATE samples SET data = ?2 WHERE ts = ?1",
	[ST_SAMPLES_HOUR] = "SELECT ts, data FROM samples WHERE ts >= ?1 AND ts < ?2 ORDER BY ts",
	[ST_SAMPLES_PUT] = "INSERT INTO samples (ts, clock, data) VALUES (?1, ?2, ?3) "
			   "ON CONFLICT (ts) DO UPDATE SET data = excluded.data",
	[ST_BOOT_INSERT] = "INSERT OR IGNORE INTO boots (boot_id) VALUES (?1)",
	[ST_BOOT_SELECT] = "SELECT id FROM boots WHERE boot_id = ?1",
	[ST_CHANNEL_INSERT] =
		"INSERT INTO channels (key, source, label, kind, unit, resolution, path, "
		"meta, first_seen, last_seen, present) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10)",
	[ST_CHANNEL_SEEN] = "UPDATE channels SET last_seen = max(last_seen, ?2), present = 1 "
			    "WHERE id = ?1",
	// A channel imported without a unit ('1') takes the live sensor's kind and unit.
	[ST_CHANNEL_UPDATE] = "UPDATE channels SET source = ?2, label = ?3, path = ?4, meta = ?5, "
			      "kind = CASE unit WHEN '1' THEN ?6 ELSE kind END, "
			      "unit = CASE unit WHEN '1' THEN ?7 ELSE unit END WHERE id = ?1",
	[ST_CHANNEL_ABSENT] = "UPDATE channels SET present = 0 WHERE id = ?1 AND present = 1",
	[ST_CHANNEL_PRESENT] = "UPDATE channels SET present = 1 WHERE id = ?1 AND present = 0",
	[ST_CHANNEL_SPAN] =
		"UPDATE channels SET first_seen = CASE WHEN first_seen = 0 OR ?2 < "
		"first_seen THEN ?2 ELSE first_seen END, last_seen = max(last_seen, ?2) "
		"WHERE id = ?1 AND (first_seen = 0 OR ?2 < first_seen OR ?2 > last_seen)",
	[ST_CHANNEL_COUNTS] = "SELECT count(*), coalesce(sum(present), 0) FROM channels",
	[ST_CHANNELS] = "SELECT id, key, source, label, kind, unit, resolution, path, meta, "
			"first_seen, last_seen, present FROM channels ORDER BY key",
	[ST_SCAN_CYCLES] = "SELECT ts, clock FROM cycles WHERE ts >= ?1 AND ts < ?2 ORDER BY ts",
	// Every row, unsynced ones too: a row is decoded against the one before it in its hour.
	[ST_SCAN_SAMPLES] = "SELECT ts, clock, data FROM samples WHERE ts >= ?1 AND ts < ?2 "
			    "ORDER BY ts",
	[ST_SCAN_ROLLUPS] = "SELECT hour, channel_id, count, sum, min, max, max_ts, unsynced, hist "
			    "FROM rollups WHERE hour >= ?1 AND hour < ?2 ORDER BY hour, channel_id",
	[ST_ROLLUP_PUT] = "INSERT OR REPLACE INTO rollups (channel_id, hour, count, sum, min, max, "
			  "max_ts, unsynced, hist) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_SCAN_CYCLE_DAYS] = "SELECT day, cycles, unsynced, first_ts, last_ts, spacing FROM "
			       "cycle_days WHERE day >= ?1 AND day < ?2 ORDER BY day",
	[ST_SCAN_ROLLUP_DAYS] = "SELECT day, channel_id, count, sum, min, max, max_ts, unsynced, "
				"hist FROM rollup_days WHERE day >= ?1 AND day < ?2 "
				"ORDER BY day, channel_id",
	[ST_CYCLE_DAY_PUT] = "INSERT OR REPLACE INTO cycle_days (day, cycles, unsynced, first_ts, "
			     "last_ts, spacing) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_ROLLUP_DAY_PUT] = "INSERT OR REPLACE INTO rollup_days (channel_id, day, count, sum, "
			      "min, max, max_ts, unsynced, hist) "
			      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_PRUNE_LAST] = "SELECT max(ts) FROM (SELECT ts FROM samples WHERE ts < ?1 ORDER BY ts "
			  "LIMIT " STR(PRUNE_BATCH) ")",
	[ST_PRUNE] = "DELETE FROM samples WHERE ts <= ?1",
	[ST_STATE_GET] = "SELECT value FROM state WHERE key = ?1",
	[ST_STATE_SET] = "INSERT INTO state (key, value) VALUES (?1, ?2) "
			 "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
	/*
	 * The days before the day horizon are counted from cycle_days, one row a day, and only
	 * the tail from the cycles; one statement, so one snapshot even beside the writer.
	 * Subqueries keep each part on its fast path: rowid range, rowid ends, partial index.
	 */
	[ST_INFO] = "WITH h (d) AS (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM state "
		    "WHERE key = '" STATE_DAY_HORIZON "'), 0)) "
		    "SELECT (SELECT count(*) FROM cycles WHERE ts >= h.d) + "
		    "(SELECT coalesce(sum(cycles + unsynced), 0) FROM cycle_days WHERE day < h.d), "
		    "(SELECT min(ts) FROM cycles), (SELECT max(ts) FROM cycles), "
		    "(SELECT count(*) FROM cycles WHERE clock = 2 AND ts >= h.d) + "
		    "(SELECT coalesce(sum(unsynced), 0) FROM cycle_days WHERE day < h.d) FROM h",
	[ST_DATA_VERSION] = "PRAGMA data_version",
};

/* What the writer remembers of a channel, so a cycle touches channels only on change. */
struct known_channel {
	int64_t id; // 0: rejected (bad key or resolution), logged once
	char *key;
	char *source, *label, *path, *meta;
	double resolution; // as stored: the finest seen (store_channel_refine)
	int64_t last_seen;
	bool present;
	bool resolution_warned;
};

/* One channel's hour in store_maintain(). */
struct rollup_acc {
	int64_t *q; // synced and unknown-clock values
	size_t n, cap;
	int64_t sum, min, max, max_ts, unsynced;
};

/*
 * A scan's decoding of sample rows in ts order: a delta row is read against the row before it
 * in its hour (codec.h), so a scan keeps that row's values.
 */
struct chain {
	int64_t hour; // of the row in prev, or INT64_MIN before the first
	struct codec_pair *prev, *cur;
	size_t n_prev, n_cur, cap_prev, cap_cur;
};

/* One sample row of the writer's hour: its time and values (absolute, by id ascending). */
struct hour_row {
	int64_t ts;
	struct codec_pair *pairs;
	size_t n, cap;
};

/*
 * The writer's copy of some of one hour's rows, decoded, so that a change to a row codes it
 * and the row after it without reading the hour again. Dropped with the channel cache (a
 * rollback, another connection's commit) and by the changes to samples that do not use it
 * (a drop, a rescale).
 */
struct hour_rows {
	bool loaded;
	bool damaged; // @hour has a damaged row (logged once): not read again for every cycle
	int64_t hour;
	// A run of the hour's rows by ts ascending, the rows around the last change (what the
	// next append or merge needs, so memory stays flat whatever the interval).
	struct hour_row *rows;
	size_t n, cap;    // slots past n keep at most one pairs buffer, for the next row
	bool first, last; // rows[0] is the hour's first row, rows[n - 1] its last
};

#define HOUR_KEEP_BEFORE 1  // rows kept before the one changed
#define HOUR_KEEP_AFTER  62 // and at most after it

struct store {
	sqlite3 *db;
	char *path;
	enum store_mode mode;
	int64_t deadline_ms; // STORE_MODE_FOREIGN: monotonic; statements past it are interrupted
	bool timed_out;      // the progress handler interrupted a statement
	sqlite3_stmt *stmts[ST_COUNT];
	int depth;   // 1 while store_begin() is open
	int aborted; // error that rolled back the enclosing transaction, reported by store_commit()
	bool history_bumped; // this transaction already bumped STATE_HISTORY_GEN

	struct known_channel *known; // sorted by key
	size_t n_known, cap_known;
	bool known_valid;
	// The channels_version of the last cycle written whose channel descriptions were all
	// compared with known (and updated): the same list again needs no comparing. 0 = none.
	uint64_t verified_version;
	int64_t data_version; // PRAGMA data_version when known was loaded
	// PRAGMA data_version as last read (each write of a cycle reads it inside its
	// transaction, where it costs nothing): what other connections committed, as of then.
	int64_t seen_version;
	uint64_t history_bumps; // STATE_HISTORY_GEN bumps through this store
	bool gen_valid;         // gen was read at gen_version, gen_bumps
	int64_t gen, gen_version;
	uint64_t gen_bumps;

	uint64_t runs_changes; // run writes through this store, for store_runs_mark()

	bool quiet_busy; // a short busy timeout: the caller retries, SQLITE_BUSY is no error

	char *boot_id; // of boot_row
	int64_t boot_row;

	uint8_t *blob; // scratch for encoding
	size_t blob_cap;
	// The writer's per-cycle scratch, kept so a steady cycle allocates nothing: the pairs
	// and, by position in the cycle's channel list, where that channel was found in known.
	struct codec_pair *pairs;
	size_t pairs_cap;
	size_t *hint;
	size_t hint_cap;
	int64_t *bin_q, *bin_count; // scratch for decoding histograms
	size_t bins_cap;
	struct hour_rows hour; // the writer's
	struct chain scan;     // store_scan_samples()' buffers, kept: exports scan slice by slice
	bool scanning;         // scan is in use (a callback may scan again: it gets its own)
	bool scan_held;        // a scan stopped at a row, held decoded in scan:
	int64_t scan_from;     // that row's ts
	int scan_clock;        // its clock
	int64_t scan_version;  // PRAGMA data_version then
	uint64_t scan_writes;  // write_steps then
	uint64_t write_steps;  // this connection's write steps, counted
};

/* --- errors ------------------------------------------------------------------------------- */

static int errno_from_sqlite(int rc) {
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
	case SQLITE_FORMAT:
		return -EINVAL;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	default:
		return -EIO;
	}
}

/*
 * The operating system's errno behind an I/O error, if SQLite kept one: a full disk during a
 * WAL write is SQLITE_IOERR_WRITE with ENOSPC, which must not read "Input/output error".
 */
static int io_errno(sqlite3 *db, int rc) {
	int sys = db ? sqlite3_system_errno(db) : 0;
	if (((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN) && sys > 0) {
		return -sys;
	}
	return errno_from_sqlite(rc);
}

/* Logs @what with SQLite's message (or the system's, for an I/O error) and returns the errno. */
static int fail(struct store *store, int rc, const char *what) {
	if (store->timed_out && (rc & 0xff) == SQLITE_INTERRUPT) {
		log_error("store: %s: %s: reading took over %d s: refused (not a database this "
			  "thermlog wrote?)",
			  what, store->path, FOREIGN_DEADLINE_S);
		return -ETIMEDOUT;
	}
	if ((rc & 0xff) == SQLITE_TOOBIG) {
		log_error("store: %s: %s: a value is over %d bytes: refused (not a database this "
			  "thermlog wrote?)",
			  what, store->path, FOREIGN_LENGTH_MAX);
		return -EFBIG;
	}
	int err = io_errno(store->db, rc);
	bool sys = (rc & 0xff) == SQLITE_IOERR && err != -EIO;
	if (err == -EBUSY && store->quiet_busy) {
		log_debug("store: %s: %s: %s", what, store->path, sqlite3_errmsg(store->db));
		return err;
	}
	log_error("store: %s: %s: %s", what, store->path,
		  sys ? strerror(-err) : sqlite3_errmsg(store->db));
	return err;
}

/* --- statements --------------------------------------------------------------------------- */

static sqlite3_stmt *stmt(struct store *store, enum stmt which) {
	sqlite3_stmt *st = store->stmts[which];
	if (!st) {
		// Persistent: these live as long as the connection, reused every cycle.
		int rc = sqlite3_prepare_v3(store->db, stmt_sql[which], -1,
					    SQLITE_PREPARE_PERSISTENT, &st, NULL);
		if (rc != SQLITE_OK) {
			log_error("store: could not prepare \"%s\": %s", stmt_sql[which],
				  sqlite3_errmsg(store->db));
			return NULL;
		}
		store->stmts[which] = st;
	}
	return st;
}

/*
 * Prepares a one-off statement for work too rare for a persistent slot (rescaling, repair,
 * runs); a failure logs "could not prepare @what". 0 or a negative errno.
 */
static int prepare(struct store *store, const char *sql, const char *what, sqlite3_stmt **st) {
	int rc = sqlite3_prepare_v2(store->db, sql, -1, st, NULL);
	if (rc == SQLITE_OK) {
		return 0;
	}
	char msg[64];
	snprintf(msg, sizeof(msg), "could not prepare %s", what);
	return fail(store, rc, msg);
}

static void done(sqlite3_stmt *st) {
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* Runs a statement that returns no rows; returns the SQLite result code. */
static int step_done(sqlite3_stmt *st) {
	int rc = sqlite3_step(st);
	done(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static int exec(struct store *store, enum stmt which, const char *what) {
	sqlite3_stmt *st = stmt(store, which);
	if (!st) {
		return -EIO;
	}
	int rc = step_done(st);
	return rc == SQLITE_OK ? 0 : fail(store, rc, what);
}

/* One integer from a single-row query with an optional integer parameter; *null if NULL. */
static int query_int(struct store *store, enum stmt which, int64_t param, int64_t *out,
		     bool *null) {
	sqlite3_stmt *st = stmt(store, which);
	if (!st) {
		return -EIO;
	}
	if (sqlite3_bind_parameter_count(st) > 0) {
		sqlite3_bind_int64(st, 1, param);
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*null = sqlite3_column_type(st, 0) == SQLITE_NULL;
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		*null = true;
		*out = 0;
		rc = SQLITE_OK;
	}
	done(st);
	return rc == SQLITE_OK ? 0 : fail(store, rc, "could not query");
}

/* --- transactions ------------------------------------------------------------------------ */

static void known_clear(struct store *store);
static int64_t hour_of(int64_t ts);
static int64_t scan_start(int64_t from);
static int pragma_int(struct store *store, const char *sql, int64_t *out);
static int rescale_channel(struct store *store, int64_t id, int64_t factor, double resolution);

static bool writable(struct store *store) {
	if (store->mode != STORE_MODE_WRITE) {
		log_error("store: %s is open read-only", store->path);
		return false;
	}
	return true;
}

/*
 * A step of work is its own BEGIN IMMEDIATE transaction, or a savepoint inside an enclosing
 * store_begin() transaction, so a failed step never leaves half of itself behind either way.
 */
static int step_begin(struct store *store) {
	store->write_steps++; // a scan held across calls is read again after any write
	if (store->depth > 0) {
		if (store->aborted) {
			return store->aborted;
		}
		return exec(store, ST_SAVEPOINT, "could not start a savepoint");
	}
	return exec(store, ST_BEGIN, "could not start a transaction");
}

static int step_end(struct store *store, int err) {
	if (err == 0) {
		int rc = exec(store, store->depth > 0 ? ST_RELEASE : ST_COMMIT, "could not commit");
		if (rc == 0) {
			return 0;
		}
		err = rc;
	}
	if (sqlite3_get_autocommit(store->db)) {
		// SQLite already rolled back everything (disk full or I/O error mid-statement).
		if (store->depth > 0 && !store->aborted) {
			log_error("store: the enclosing transaction was rolled back: %s",
				  store->path);
			store->aborted = err;
		}
	} else if (store->depth > 0) {
		exec(store, ST_ROLLBACK_TO, "could not roll back to the savepoint");
		exec(store, ST_RELEASE, "could not release the savepoint");
	} else {
		exec(store, ST_ROLLBACK, "could not roll back");
	}
	known_clear(store); // ids inserted by the failed step are gone
	return err;
}

int store_begin(struct store *store) {
	if (!writable(store)) {
		return -EROFS;
	}
	if (store->depth > 0) {
		log_error("store: transactions do not nest");
		return -EBUSY;
	}
	store->write_steps++;
	int rc = exec(store, ST_BEGIN, "could not start a transaction");
	if (rc == 0) {
		store->depth = 1;
		store->aborted = 0;
		store->history_bumped = false;
	}
	return rc;
}

int store_commit(struct store *store) {
	if (store->depth == 0) {
		log_error("store: commit without a transaction");
		return -EINVAL;
	}
	store->depth = 0;
	int err = store->aborted;
	store->aborted = 0;
	if (err) {
		return err;
	}
	err = exec(store, ST_COMMIT, "could not commit");
	if (err && !sqlite3_get_autocommit(store->db)) {
		exec(store, ST_ROLLBACK, "could not roll back");
	}
	if (err) {
		known_clear(store);
	}
	return err;
}

int store_rollback(struct store *store) {
	if (store->depth == 0) {
		log_error("store: rollback without a transaction");
		return -EINVAL;
	}
	store->depth = 0;
	store->aborted = 0;
	known_clear(store);
	if (sqlite3_get_autocommit(store->db)) {
		return 0;
	}
	return exec(store, ST_ROLLBACK, "could not roll back");
}

/* --- blobs ------------------------------------------------------------------------------- */

/* The byte formats are codec.c's; the store only owns the growable buffer they are built in. */
static uint8_t *blob_reserve(struct store *store, size_t n) {
	if (n > store->blob_cap) {
		store->blob = xgrow(store->blob, &store->blob_cap, n, 1);
	}
	return store->blob;
}

/* A sample row coded against the row before it in its hour (@base, or NULL for none). */
static size_t encode_row(struct store *store, const struct codec_pair *pairs, size_t n,
			 const struct codec_pair *base, size_t n_base) {
	return codec_row_encode(blob_reserve(store, CODEC_ROW_MAX(n)), pairs, n, base, n_base);
}

/* A base of no pair: a delta row is read against a base, which may be empty. */
static const struct codec_pair no_pair;

static void chain_init(struct chain *c) {
	*c = (struct chain){.hour = INT64_MIN};
}

static void chain_finish(struct chain *c) {
	free(c->prev);
	free(c->cur);
}

/*
 * Decodes the row at @ts, the next one of a scan in ts order that started at the first row
 * of an hour, into c->prev / c->n_prev. False when the row is damaged: cut short, or a delta
 * row that opens its hour (its base is missing).
 */
static bool chain_next(struct chain *c, int64_t ts, const uint8_t *data, size_t len) {
	// Compared, not divided: rows come in ts order, mostly of the same hour.
	bool same_hour = c->hour != INT64_MIN && ts >= c->hour &&
			 (uint64_t)ts - (uint64_t)c->hour < HOUR_S,
	     bad;
	const struct codec_pair *base = !same_hour ? NULL : c->prev ? c->prev : &no_pair;
	c->cur = xgrow(c->cur, &c->cap_cur, len + 1, sizeof(*c->cur));
	c->n_cur = codec_row_decode(c->cur, data, len, base, same_hour ? c->n_prev : 0, &bad);
	// Swapped: prev is the row just read, the base of the next.
	struct codec_pair *t = c->prev;
	size_t tn = c->cap_prev;
	c->prev = c->cur;
	c->cap_prev = c->cap_cur;
	c->n_prev = c->n_cur;
	c->cur = t;
	c->cap_cur = tn;
	c->hour = bad ? INT64_MIN : hour_of(ts);
	return !bad;
}

/* --- channels (writer's cache) ----------------------------------------------------------- */

static void known_free(struct known_channel *k) {
	free(k->key);
	free(k->source);
	free(k->label);
	free(k->path);
	free(k->meta);
}

static void known_clear(struct store *store) {
	store->hour.loaded = false; // read again with what the database holds
	store->hour.damaged = false;
	for (size_t i = 0; i < store->n_known; i++) {
		known_free(&store->known[i]);
	}
	store->n_known = 0;
	store->known_valid = false;
	store->verified_version = 0;
	free(store->boot_id);
	store->boot_id = NULL;
}

static bool str_eq(const char *a, const char *b) {
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static char *dup_or_null(const char *s) {
	return s ? xstrdup(s) : NULL;
}

static const char *column_text(sqlite3_stmt *st, int col) {
	return (const char *)sqlite3_column_text(st, col);
}

/* Finds @key, or where it would go (*found false). */
static size_t known_find(struct store *store, const char *key, bool *found) {
	size_t lo = 0, hi = store->n_known;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(store->known[mid].key, key);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	*found = false;
	return lo;
}

static struct known_channel *known_insert(struct store *store, size_t at, const char *key) {
	store->known =
		xgrow(store->known, &store->cap_known, store->n_known + 1, sizeof(*store->known));
	memmove(&store->known[at + 1], &store->known[at],
		(store->n_known - at) * sizeof(*store->known));
	store->n_known++;
	struct known_channel *k = &store->known[at];
	*k = (struct known_channel){.key = xstrdup(key)};
	return k;
}

static int known_load(struct store *store) {
	// Another connection (an import) may have added or rescaled channels since the load.
	int64_t version = 0;
	bool none;
	if (query_int(store, ST_DATA_VERSION, 0, &version, &none) < 0) {
		return -EIO;
	}
	store->seen_version = version;
	if (store->known_valid && version == store->data_version) {
		return 0;
	}
	known_clear(store);
	store->data_version = version;
	sqlite3_stmt *st = stmt(store, ST_CHANNELS);
	if (!st) {
		return -EIO;
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		// Rows come ordered by key, so appending keeps the array sorted.
		struct known_channel *k = known_insert(store, store->n_known, column_text(st, 1));
		k->id = sqlite3_column_int64(st, 0);
		k->source = dup_or_null(column_text(st, 2));
		k->label = dup_or_null(column_text(st, 3));
		k->resolution = sqlite3_column_double(st, 6);
		k->path = dup_or_null(column_text(st, 7));
		k->meta = dup_or_null(column_text(st, 8));
		k->last_seen = sqlite3_column_int64(st, 10);
		k->present = sqlite3_column_int(st, 11) != 0;
	}
	done(st);
	if (rc != SQLITE_DONE) {
		known_clear(store);
		return fail(store, rc, "could not read channels");
	}
	store->known_valid = true;
	return 0;
}

static bool resolution_valid(double r) {
	return isfinite(r) && r > 0;
}

static int channel_insert(struct store *store, const struct channel *ch, int64_t seen, bool present,
			  int64_t *id) {
	sqlite3_stmt *st = stmt(store, ST_CHANNEL_INSERT);
	if (!st) {
		return -EIO;
	}
	const char *unit = ch->unit ? ch->unit : channel_kind_unit(ch->kind);
	sqlite3_bind_text(st, 1, ch->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ch->source ? ch->source : "import", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, ch->label ? ch->label : ch->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, channel_kind_name(ch->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, unit, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 6, ch->resolution);
	sqlite3_bind_text(st, 7, ch->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, ch->meta, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 9, seen);
	sqlite3_bind_int(st, 10, present);
	int rc = step_done(st);
	if (rc != SQLITE_OK) {
		return fail(store, rc, "could not add a channel");
	}
	*id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

static int bind_id_exec(struct store *store, enum stmt which, int64_t id, int64_t v,
			const char *what) {
	sqlite3_stmt *st = stmt(store, which);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_bind_parameter_count(st) > 1) {
		sqlite3_bind_int64(st, 2, v);
	}
	int rc = step_done(st);
	return rc == SQLITE_OK ? 0 : fail(store, rc, what);
}

/*
 * Registers @ch or brings its row up to date: last_seen only when the hour changes or the
 * channel comes back, so a steady cycle writes no channel rows at all. Sets *k (NULL when the
 * channel is unusable; logged once).
 */
static int channel_seen(struct store *store, const struct channel *ch, int64_t ts, size_t *hint,
			bool verified, struct known_channel **out) {
	// The channel list rarely changes: where this position's key was found last cycle is
	// checked first, so a steady cycle does one comparison per channel, not a search.
	bool found = *hint < store->n_known && strcmp(store->known[*hint].key, ch->key) == 0;
	size_t at = found ? *hint : known_find(store, ch->key, &found);
	*hint = at;
	struct known_channel *k = found ? &store->known[at] : NULL;
	*out = NULL;
	if (!k) {
		k = known_insert(store, at, ch->key);
		if (!channel_key_valid(ch->key) || !resolution_valid(ch->resolution)) {
			log_error(
				"store: channel '%s' has a bad key or resolution (%g); its values "
				"are not stored",
				ch->key, ch->resolution);
			return 0; // id 0 remembers the refusal
		}
		int rc = channel_insert(store, ch, ts, true, &k->id);
		if (rc < 0) {
			return rc;
		}
		k->source = dup_or_null(ch->source);
		k->label = dup_or_null(ch->label);
		k->path = dup_or_null(ch->path);
		k->meta = dup_or_null(ch->meta);
		k->resolution = ch->resolution;
		k->last_seen = ts;
		k->present = true;
		*out = k;
		return 0;
	}
	if (k->id == 0) {
		return 0;
	}
	if (!verified && (!str_eq(k->source, ch->source) || !str_eq(k->label, ch->label) ||
			  !str_eq(k->path, ch->path) || !str_eq(k->meta, ch->meta))) {
		sqlite3_stmt *st = stmt(store, ST_CHANNEL_UPDATE);
		if (!st) {
			return -EIO;
		}
		sqlite3_bind_int64(st, 1, k->id);
		sqlite3_bind_text(st, 2, ch->source ? ch->source : "import", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, ch->label ? ch->label : ch->key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, ch->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, ch->meta, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, channel_kind_name(ch->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, ch->unit ? ch->unit : channel_kind_unit(ch->kind), -1,
				  SQLITE_STATIC);
		int rc = step_done(st);
		if (rc != SQLITE_OK) {
			return fail(store, rc, "could not update a channel");
		}
		free(k->source);
		free(k->label);
		free(k->path);
		free(k->meta);
		k->source = dup_or_null(ch->source);
		k->label = dup_or_null(ch->label);
		k->path = dup_or_null(ch->path);
		k->meta = dup_or_null(ch->meta);
	}
	// resolution_warned: no common step exists; the search is not repeated every cycle
	if (ch->resolution < k->resolution && resolution_valid(ch->resolution) &&
	    !k->resolution_warned) {
		// Never coarsen live readings: rescale the stored integers to a finer common step.
		double res;
		int64_t factor;
		if (channel_common_resolution(k->resolution, ch->resolution, &res, &factor)) {
			int rc = rescale_channel(store, k->id, factor, res);
			if (rc < 0) {
				return rc;
			}
			log_info("store: channel '%s' refined from resolution %g to %g", ch->key,
				 k->resolution, res);
			k->resolution = res;
		} else {
			log_warn(
				"store: channel '%s' now reports resolution %g, which has no common "
				"step with the stored %g; values stay quantized at %g",
				ch->key, ch->resolution, k->resolution, k->resolution);
			k->resolution_warned = true;
		}
	}
	if (!k->present || ts / HOUR_S != k->last_seen / HOUR_S) {
		int rc =
			bind_id_exec(store, ST_CHANNEL_SEEN, k->id, ts, "could not mark a channel");
		if (rc < 0) {
			return rc;
		}
		k->present = true;
		k->last_seen = ts > k->last_seen ? ts : k->last_seen;
	}
	*out = k;
	return 0;
}

static int boot_row(struct store *store, const char *boot_id, int64_t *row) {
	if (store->boot_id && strcmp(store->boot_id, boot_id) == 0) {
		*row = store->boot_row;
		return 0;
	}
	sqlite3_stmt *st = stmt(store, ST_BOOT_INSERT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, boot_id, -1, SQLITE_STATIC);
	int rc = step_done(st);
	if (rc != SQLITE_OK) {
		return fail(store, rc, "could not record the boot");
	}
	st = stmt(store, ST_BOOT_SELECT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, boot_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*row = sqlite3_column_int64(st, 0);
	}
	done(st);
	if (rc != SQLITE_ROW) {
		return fail(store, rc, "could not find the boot");
	}
	free(store->boot_id);
	store->boot_id = xstrdup(boot_id);
	store->boot_row = *row;
	return 0;
}

/* --- cycles ------------------------------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b) {
	const struct codec_pair *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Sorts @pairs by id unless they already ascend, and drops repeated ids: a channel listed
 * twice keeps its first value. Returns how many pairs are left.
 */
static size_t pairs_sort_unique(struct codec_pair *pairs, size_t n) {
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++) {
		sorted = pairs[i - 1].id < pairs[i].id;
	}
	if (sorted) { // ids usually follow the sampler's order: sorting is for a changed list
		return n;
	}
	qsort(pairs, n, sizeof(*pairs), cmp_pair);
	size_t m = 1; // n > 1 here
	for (size_t i = 1; i < n; i++) {
		if (pairs[i].id != pairs[m - 1].id) {
			pairs[m++] = pairs[i];
		}
	}
	return m;
}

/* llround(value / resolution), false if it is not a finite integer in range. */
static bool quantize(double value, double resolution, int64_t *q) {
	double x = round(value / resolution);
	if (!isfinite(x) || fabs(x) >= 9.2e18) {
		return false;
	}
	*q = (int64_t)x;
	return true;
}

/* --- the writer's hour ------------------------------------------------------------------- */

static void hour_reserve(struct hour_rows *h, size_t need) {
	if (need > h->cap) {
		size_t old = h->cap;
		h->rows = xgrow(h->rows, &h->cap, need, sizeof(*h->rows));
		memset(&h->rows[old], 0, (h->cap - old) * sizeof(*h->rows));
	}
}

/* The base a delta row of @h's row @i is read against: never NULL, a row may have no pair. */
static const struct codec_pair *row_base(const struct hour_rows *h, size_t i) {
	return i > 0 && h->rows[i - 1].pairs ? h->rows[i - 1].pairs : &no_pair;
}

/* Whether the rows held are those of @ts's hour around @ts: the rows before and after it. */
static bool hour_covers(const struct hour_rows *h, int64_t ts) {
	return h->loaded && h->hour == hour_of(ts) &&
	       (h->first || (h->n > 0 && ts > h->rows[0].ts)) &&
	       (h->last || (h->n > 0 && ts < h->rows[h->n - 1].ts));
}

/* Drops the held rows before row @k (their buffers move past the rows kept). */
static void hour_drop_front(struct hour_rows *h, size_t k) {
	for (size_t j = 0; j < k; j++) {
		struct hour_row t = h->rows[0];
		memmove(&h->rows[0], &h->rows[1], (h->n - 1) * sizeof(*h->rows));
		h->rows[--h->n] = t;
	}
	h->first = h->first && k == 0;
}

/*
 * Reads the hour's rows from @from on (the rows held are those before it) until the row after
 * @ts and HOUR_KEEP_AFTER more are held, keeping of the rows before @ts only the last.
 */
static int hour_read(struct store *store, int64_t from, int64_t ts) {
	struct hour_rows *h = &store->hour;
	int64_t end = h->hour > INT64_MAX - HOUR_S ? INT64_MAX : h->hour + HOUR_S;
	sqlite3_stmt *st = stmt(store, ST_SAMPLES_HOUR);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, end);
	int rc;
	bool bad = false;
	size_t after = 0; // rows held past @ts
	int64_t at = 0;
	while (after <= HOUR_KEEP_AFTER && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		at = sqlite3_column_int64(st, 0);
		if (h->n >= 2 && h->rows[h->n - 1].ts < ts) {
			hour_drop_front(h, h->n - 1); // only the last row before @ts is a base
		}
		hour_reserve(h, h->n + 1);
		struct hour_row *r = &h->rows[h->n];
		const uint8_t *data = sqlite3_column_blob(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		r->ts = at;
		r->pairs = xgrow(r->pairs, &r->cap, len + 1, sizeof(*r->pairs));
		r->n = codec_row_decode(r->pairs, data, len, h->n > 0 ? row_base(h, h->n) : NULL,
					h->n > 0 ? h->rows[h->n - 1].n : 0, &bad);
		h->n++;
		after += at > ts;
		if (bad) {
			break;
		}
	}
	done(st);
	if (bad) {
		log_error("store: damaged sample row at %lld: %s", (long long)at, store->path);
		h->damaged = true;
		h->loaded = false;
		h->n = 0;
		return -EINVAL;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		h->loaded = false;
		h->n = 0;
		return fail(store, rc, "could not read samples");
	}
	h->last = rc == SQLITE_DONE;
	h->loaded = true;
	return 0;
}

/*
 * Holds the rows of @ts's hour around @ts in store->hour, decoded: the rows after those held
 * are read on from the last one held, anything else from the hour's first row. The caller ran
 * known_load() in this transaction, which drops the rows when another connection wrote.
 */
static int hour_load(struct store *store, int64_t ts) {
	struct hour_rows *h = &store->hour;
	int64_t hour = hour_of(ts);
	if (hour_covers(h, ts)) {
		return 0;
	}
	if (h->damaged && h->hour == hour) {
		return -EINVAL;
	}
	if (h->loaded && h->hour == hour && h->n > 0 && (h->first || ts > h->rows[0].ts)) {
		if (h->rows[h->n - 1].ts == INT64_MAX) {
			h->last = true; // no row can follow it
			return 0;
		}
		return hour_read(store, h->rows[h->n - 1].ts + 1, ts); // on from the last held
	}
	h->loaded = false;
	h->damaged = false;
	h->n = 0;
	h->hour = hour;
	h->first = true;
	return hour_read(store, hour, ts);
}

/*
 * Keeps the rows around row @i (HOUR_KEEP_BEFORE before it, HOUR_KEEP_AFTER after it) and one
 * spare buffer; the rest is freed. Slots past the rows hold the spare at most, at rows[n].
 */
static void hour_keep(struct hour_rows *h, size_t i) {
	size_t lo = i > HOUR_KEEP_BEFORE ? i - HOUR_KEEP_BEFORE : 0;
	size_t hi = i + 1 + HOUR_KEEP_AFTER < h->n ? i + 1 + HOUR_KEEP_AFTER : h->n;
	size_t end = h->n < h->cap ? h->n + 1 : h->n;
	struct hour_row spare = {0};
	for (size_t j = 0; j < end; j++) {
		if (j >= lo && j < hi) {
			continue;
		}
		if (!spare.pairs && h->rows[j].pairs) {
			spare = (struct hour_row){.pairs = h->rows[j].pairs, .cap = h->rows[j].cap};
		} else {
			free(h->rows[j].pairs);
		}
	}
	memmove(&h->rows[0], &h->rows[lo], (hi - lo) * sizeof(*h->rows));
	memset(&h->rows[hi - lo], 0, (end - (hi - lo)) * sizeof(*h->rows));
	h->first = h->first && lo == 0;
	h->last = h->last && hi == h->n;
	h->n = hi - lo;
	size_t cap = HOUR_KEEP_BEFORE + 1 + HOUR_KEEP_AFTER + 1;
	if (h->cap > 2 * cap) { // after a long read from the hour's first row
		h->rows = xrealloc(h->rows, cap * sizeof(*h->rows));
		h->cap = cap;
	}
	if (spare.pairs) {
		h->rows[h->n] = spare;
	}
}

/* The index of the row at @ts in the loaded hour, or where it would go. */
static size_t hour_find(const struct hour_rows *h, int64_t ts, bool *found) {
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->rows[mid].ts < ts) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	*found = lo < h->n && h->rows[lo].ts == ts;
	return lo;
}

/* Writes row @i of the loaded hour coded against row @i - 1: a new row with @clock, or over. */
static int hour_write(struct store *store, size_t i, bool insert, int clock) {
	struct hour_rows *h = &store->hour;
	const struct hour_row *r = &h->rows[i];
	size_t len = encode_row(store, r->pairs, r->n, i > 0 ? row_base(h, i) : NULL,
				i > 0 ? h->rows[i - 1].n : 0);
	sqlite3_stmt *st = stmt(store, insert ? ST_SAMPLES_INSERT : ST_SAMPLES_UPDATE);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, r->ts);
	if (insert) {
		sqlite3_bind_int(st, 2, clock);
		sqlite3_bind_blob(st, 3, store->blob, (int)len, SQLITE_STATIC);
	} else {
		sqlite3_bind_blob(st, 2, store->blob, (int)len, SQLITE_STATIC);
	}
	int rc = step_done(st);
	return rc == SQLITE_OK ? 0 : fail(store, rc, "could not store samples");
}

/* The value of channel @id in @pairs (sorted), from *@at on; false if it has none. */
static bool value_of(const struct codec_pair *pairs, size_t n, size_t *at, int64_t id, int64_t *q) {
	while (*at < n && pairs[*at].id < id) {
		(*at)++;
	}
	if (*at < n && pairs[*at].id == id) {
		*q = pairs[*at].q;
		return true;
	}
	return false;
}

/* Whether @row codes the same against @old as against @pairs: they agree on its channels. */
static bool same_base_for(const struct hour_row *row, const struct hour_row *old,
			  const struct codec_pair *pairs, size_t n) {
	size_t a = 0, b = 0;
	for (size_t k = 0; k < row->n; k++) {
		int64_t qa = 0, qb = 0;
		bool ha = value_of(old->pairs, old->n, &a, row->pairs[k].id, &qa);
		bool hb = value_of(pairs, n, &b, row->pairs[k].id, &qb);
		if (ha != hb || qa != qb) {
			return false;
		}
	}
	return true;
}

/*
 * The one way a row of samples is written: row @ts becomes @pairs (sorted by id, distinct),
 * inserted with @clock if new, coded against the row before it in its hour; the row after it
 * in the hour, whose base this is, is coded again against it. The caller ran known_load().
 */
static int hour_put(struct store *store, int64_t ts, int clock, const struct codec_pair *pairs,
		    size_t n) {
	int rc = hour_load(store, ts);
	if (rc == -EINVAL) {
		// A damaged row earlier in the hour (logged): this one is written so that it reads
		// on its own, and later cycles are not lost to the damage.
		size_t len = encode_row(store, pairs, n, NULL, 0);
		sqlite3_stmt *st = stmt(store, ST_SAMPLES_PUT);
		if (!st) {
			return -EIO;
		}
		sqlite3_bind_int64(st, 1, ts);
		sqlite3_bind_int(st, 2, clock);
		sqlite3_bind_blob(st, 3, store->blob, (int)len, SQLITE_STATIC);
		rc = step_done(st);
		return rc == SQLITE_OK ? 0 : fail(store, rc, "could not store samples");
	}
	if (rc < 0) {
		return rc;
	}
	struct hour_rows *h = &store->hour;
	bool found;
	size_t i = hour_find(h, ts, &found);
	if (!found) {
		hour_reserve(h, h->n + 1);
		struct hour_row spare = h->rows[h->n]; // its buffer moves to the new slot
		memmove(&h->rows[i + 1], &h->rows[i], (h->n - i) * sizeof(*h->rows));
		h->rows[i] = spare;
		h->rows[i].ts = ts;
		h->n++;
	}
	struct hour_row *r = &h->rows[i];
	// A merge often adds a channel the next row lacks: then that row's bytes stay as they are.
	bool rebase = i + 1 < h->n && (!found || !same_base_for(&h->rows[i + 1], r, pairs, n));
	r->pairs = xgrow(r->pairs, &r->cap, n + 1, sizeof(*r->pairs));
	memcpy(r->pairs, pairs, n * sizeof(*pairs));
	r->n = n;
	rc = hour_write(store, i, !found, clock);
	if (rc == 0 && rebase) {
		rc = hour_write(store, i + 1, false, 0);
	}
	if (rc < 0) {
		h->loaded = false;
	} else {
		hour_keep(h, i);
	}
	return rc;
}

/*
 * Rows up to @to were deleted (hour_load(@to) ran before): the first row after @to in its hour
 * lost its base, so it is written again against none.
 */
static int hour_drop_through(struct store *store, int64_t to) {
	struct hour_rows *h = &store->hour;
	size_t k = 0;
	while (k < h->n && h->rows[k].ts <= to) {
		k++;
	}
	if (k == 0) {
		return 0; // held from the hour's first row on: none was deleted
	}
	for (size_t j = 0; j < k; j++) {
		free(h->rows[j].pairs);
	}
	memmove(&h->rows[0], &h->rows[k], (h->n - k) * sizeof(*h->rows));
	memset(&h->rows[h->n - k], 0, k * sizeof(*h->rows));
	h->n -= k;
	h->first = true; // every row before them is gone
	if (h->n == 0) {
		h->loaded = h->last; // no row held to tell where the held run ends
		return 0;
	}
	int rc = hour_write(store, 0, false, 0);
	if (rc < 0) {
		h->loaded = false;
	} else {
		hour_keep(h, 0);
	}
	return rc;
}

static int write_cycle(struct store *store, const struct cycle *cycle) {
	int rc = known_load(store);
	if (rc < 0) {
		return rc;
	}

	int64_t boot = 0;
	if (cycle->boot_id && (rc = boot_row(store, cycle->boot_id, &boot)) < 0) {
		return rc;
	}
	sqlite3_stmt *st = stmt(store, ST_CYCLE_INSERT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, cycle->ts);
	if (cycle->boot_id) {
		sqlite3_bind_int64(st, 2, boot);
	}
	sqlite3_bind_int(st, 3, (int)cycle->clock);
	rc = step_done(st);
	// Only a duplicate is refused: a stored stamp far in the future (an imported row, a clock
	// glitch) must not block every later cycle. The daemon keeps its own stamps increasing.
	// The key says so on the insert itself, so a cycle asks nothing before it.
	if (rc != SQLITE_OK &&
	    sqlite3_extended_errcode(store->db) == SQLITE_CONSTRAINT_PRIMARYKEY) {
		return -EEXIST;
	}
	if (rc != SQLITE_OK) {
		return fail(store, rc, "could not store a cycle");
	}

	// The same channel list as the last cycle committed, against the same known cache: the
	// descriptions were compared then (a steady cycle compares only keys).
	bool verified =
		cycle->channels_version != 0 && cycle->channels_version == store->verified_version;
	struct codec_pair *pairs = store->pairs;
	size_t n = 0;
	for (size_t i = 0; i < cycle->n; i++) {
		struct known_channel *k;
		rc = channel_seen(store, &cycle->channels[i], cycle->ts, &store->hint[i], verified,
				  &k);
		if (rc < 0) {
			return rc;
		}
		if (!k || cycle->readings[i].err != 0) {
			continue;
		}
		if (!quantize(cycle->readings[i].value, k->resolution, &pairs[n].q)) {
			log_debug("store: %s: value %g is out of range", k->key,
				  cycle->readings[i].value);
			continue;
		}
		pairs[n++].id = k->id;
	}
	if (n == 0) {
		return 0;
	}
	n = pairs_sort_unique(pairs, n);
	return hour_put(store, cycle->ts, (int)cycle->clock, pairs, n);
}

int store_write_cycle(struct store *store, const struct cycle *cycle) {
	if (!writable(store)) {
		return -EROFS;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	if (cycle->n > store->pairs_cap) {
		store->pairs =
			xgrow(store->pairs, &store->pairs_cap, cycle->n, sizeof(*store->pairs));
	}
	if (cycle->n > store->hint_cap) {
		size_t old = store->hint_cap;
		store->hint = xgrow(store->hint, &store->hint_cap, cycle->n, sizeof(*store->hint));
		for (size_t i = old; i < store->hint_cap; i++) {
			store->hint[i] = SIZE_MAX; // no hint: search
		}
	}
	rc = write_cycle(store, cycle);
	rc = step_end(store, rc);
	// Only a commit of its own makes the updates last: rolled back, or inside a transaction
	// that may still roll back, they are compared again next time.
	store->verified_version = rc == 0 && store->depth == 0 ? cycle->channels_version : 0;
	return rc;
}

int store_last_own_cycle(struct store *store, int64_t up_to, int64_t *ts) {
	bool none = false;
	int rc = query_int(store, ST_LAST_OWN_CYCLE, up_to, ts, &none);
	if (rc == 0 && none) {
		*ts = 0;
	}
	return rc;
}

/* --- presence ---------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int mark_present(struct store *store, const char *const *keys, size_t n) {
	int rc = known_load(store);
	if (rc < 0) {
		return rc;
	}
	const char **sorted = xcalloc(n ? n : 1, sizeof(*sorted));
	if (n > 0) {
		memcpy(sorted, keys, n * sizeof(*sorted));
	}
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	for (size_t i = 0; i < store->n_known && rc == 0; i++) {
		struct known_channel *k = &store->known[i];
		const char *key = k->key;
		bool listed = bsearch(&key, sorted, n, sizeof(*sorted), cmp_str) != NULL;
		if (k->id == 0 || listed == k->present) {
			continue;
		}
		rc = bind_id_exec(store, listed ? ST_CHANNEL_PRESENT : ST_CHANNEL_ABSENT, k->id, 0,
				  "could not mark a channel");
		k->present = listed;
	}
	free(sorted);
	return rc;
}

int store_mark_present(struct store *store, const char *const *keys, size_t n, int64_t now) {
	(void)now; // last_seen moves with stored cycles, not with scans
	if (!writable(store)) {
		return -EROFS;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, mark_present(store, keys, n));
}

/* --- state -------------------------------------------------------------------------------- */

int store_state_get(struct store *store, const char *key, char **value) {
	*value = NULL;
	sqlite3_stmt *st = stmt(store, ST_STATE_GET);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*value = xstrdup(column_text(st, 0));
	}
	done(st);
	if (rc == SQLITE_DONE) {
		return -ENOENT;
	}
	return rc == SQLITE_ROW ? 0 : fail(store, rc, "could not read state");
}

static int state_set(struct store *store, const char *key, const char *value) {
	sqlite3_stmt *st = stmt(store, ST_STATE_SET);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	int rc = step_done(st);
	return rc == SQLITE_OK ? 0 : fail(store, rc, "could not write state");
}

int store_state_set(struct store *store, const char *key, const char *value) {
	if (!writable(store)) {
		return -EROFS;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, state_set(store, key, value));
}

/* An integer state value; *value unchanged if absent. */
static int state_get_int(struct store *store, const char *key, int64_t *value) {
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

static int state_set_int(struct store *store, const char *key, int64_t value) {
	char text[32];
	snprintf(text, sizeof(text), "%lld", (long long)value);
	return state_set(store, key, text);
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
	int rc = state_get_int(store, STATE_HISTORY_GEN, gen);
	store->gen_valid = rc == 0 && store->seen_version != 0;
	store->gen = *gen;
	store->gen_version = store->seen_version;
	store->gen_bumps = store->history_bumps;
	return rc;
}

/* Stored history changed behind the daemon's running sums: once per transaction, tell them. */
static int history_changed(struct store *store) {
	if (store->history_bumped) {
		return 0;
	}
	int64_t gen = 0;
	int rc = state_get_int(store, STATE_HISTORY_GEN, &gen);
	if (rc == 0) {
		rc = state_set_int(store, STATE_HISTORY_GEN, gen + 1);
	}
	store->history_bumps++;
	store->history_bumped = rc == 0 && store->depth > 0;
	return rc;
}

/* --- opening ------------------------------------------------------------------------------ */

static int pragma(struct store *store, const char *sql) {
	int rc = sqlite3_exec(store->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : fail(store, rc, sql);
}

static int pragma_int(struct store *store, const char *sql, int64_t *out) {
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(store->db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	// Callers explain a foreign or corrupt file themselves.
	if (rc != SQLITE_OK && errno_from_sqlite(rc) != -EINVAL) {
		log_error("store: %s: %s: %s", sql, store->path, sqlite3_errmsg(store->db));
	}
	sqlite3_finalize(st);
	return errno_from_sqlite(rc);
}

static int check_identity(struct store *store, int64_t version) {
	int64_t app_id, tables;
	int rc = pragma_int(store, "PRAGMA application_id", &app_id);
	if (rc == 0) {
		rc = pragma_int(store, "SELECT count(*) FROM sqlite_schema", &tables);
	}
	if (rc == -EINVAL) {
		log_error("store: %s is not a SQLite database or is corrupt", store->path);
	}
	if (rc < 0) {
		return rc;
	}
	if (app_id != APPLICATION_ID && (app_id != 0 || version != 0 || tables != 0)) {
		// Another program's database: never "corrupt", so never moved aside or replaced.
		log_error("store: %s is a SQLite database but not a thermlog database "
			  "(application_id %lld, user_version %lld)",
			  store->path, (long long)app_id, (long long)version);
		return -EMEDIUMTYPE;
	}
	if (version > SCHEMA_VERSION) {
		log_error("store: %s has schema version %lld, newer than this thermlog's %d; "
			  "refusing to touch it",
			  store->path, (long long)version, SCHEMA_VERSION);
		return -ENOTSUP;
	}
	return 0;
}

static int migrate(struct store *store) {
	int rc = pragma(store, "BEGIN IMMEDIATE");
	if (rc < 0) {
		return rc;
	}
	int64_t version;
	rc = pragma_int(store, "PRAGMA user_version", &version);
	if (rc == -EINVAL) {
		log_error("store: %s is not a SQLite database or is corrupt", store->path);
	}
	if (rc == 0) {
		rc = check_identity(store, version);
	}
	for (int64_t v = version; rc == 0 && v < SCHEMA_VERSION; v++) {
		if (sqlite3_exec(store->db, store_migrations[v], NULL, NULL, NULL) != SQLITE_OK) {
			log_error("store: migration to schema %lld failed: %s: %s",
				  (long long)v + 1, store->path, sqlite3_errmsg(store->db));
			rc = errno_from_sqlite(sqlite3_errcode(store->db));
			break;
		}
		char sql[64];
		// user_version cannot be bound; written inside the transaction with the schema.
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld", (long long)v + 1);
		rc = pragma(store, sql);
	}
	if (rc == 0 && version == 0) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", APPLICATION_ID);
		rc = pragma(store, sql);
	}
	if (rc == 0) {
		rc = pragma(store, "COMMIT");
	}
	if (rc == 0 && version < SCHEMA_VERSION) {
		if (version == 0) {
			log_info("store: %s created with schema %d", store->path, SCHEMA_VERSION);
		} else {
			log_info("store: %s migrated from schema %lld to %d", store->path,
				 (long long)version, SCHEMA_VERSION);
		}
	}
	if (rc < 0 && !sqlite3_get_autocommit(store->db)) {
		sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
	}
	return rc;
}

/*
 * The schema of a database to read must be this thermlog's, object for object: the same
 * tables with the same columns (name, declared type, NOT NULL, key, none generated) and the
 * same indexes, and no view or trigger. A file needs only our application_id and user_version
 * to pass check_identity(); a view named runs would otherwise be read as the table (NULL
 * statuses, recursive or huge rows). The expected schema is the migrations run on an empty
 * in-memory database.
 */
static int check_schema(struct store *store) {
	static const char objects[] =
		"SELECT type, name, tbl_name FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' "
		"ESCAPE '\\' ORDER BY name";
	static const char columns[] =
		"SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1) ORDER BY cid";
	sqlite3 *want = NULL;
	sqlite3_stmt *got_st = NULL, *want_st = NULL, *col_got = NULL, *col_want = NULL;
	int err = -ENOMEM;
	if (sqlite3_open_v2(":memory:", &want, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		goto out;
	}
	for (int v = 0; v < SCHEMA_VERSION; v++) {
		if (sqlite3_exec(want, store_migrations[v], NULL, NULL, NULL) != SQLITE_OK) {
			log_error("store: the built-in schema %d does not apply: %s", v + 1,
				  sqlite3_errmsg(want));
			err = -EIO;
			goto out;
		}
	}
	err = -EINVAL;
	if (sqlite3_prepare_v2(store->db, objects, -1, &got_st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(store->db, columns, -1, &col_got, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(want, columns, -1, &col_want, NULL) != SQLITE_OK) {
		log_error("store: %s: could not read its schema: %s", store->path,
			  sqlite3_errmsg(store->db));
		goto out;
	}
	size_t found = 0;
	int rc;
	while ((rc = sqlite3_step(got_st)) == SQLITE_ROW) {
		const char *type = column_text(got_st, 0), *name = column_text(got_st, 1);
		type = type ? type : "?";
		name = name ? name : "?";
		sqlite3_finalize(want_st);
		want_st = NULL;
		if (sqlite3_prepare_v2(want, "SELECT type FROM sqlite_schema WHERE name = ?1", -1,
				       &want_st, NULL) != SQLITE_OK) {
			goto out;
		}
		sqlite3_bind_text(want_st, 1, name, -1, SQLITE_TRANSIENT);
		const char *want_type =
			sqlite3_step(want_st) == SQLITE_ROW ? column_text(want_st, 0) : NULL;
		if (!want_type || strcmp(want_type, type) != 0) {
			log_error("store: %s: the schema is not thermlog's: %s '%s' %s",
				  store->path, type, name,
				  want_type ? "should be a table or index of that name"
					    : "is not part of it");
			err = -EMEDIUMTYPE;
			goto out;
		}
		found++;
		if (strcmp(type, "table") != 0) {
			continue;
		}
		sqlite3_reset(col_got);
		sqlite3_reset(col_want);
		sqlite3_bind_text(col_got, 1, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(col_want, 1, name, -1, SQLITE_TRANSIENT);
		for (;;) {
			int g = sqlite3_step(col_got), w = sqlite3_step(col_want);
			if (g != SQLITE_ROW && w != SQLITE_ROW) {
				break;
			}
			bool same = g == SQLITE_ROW && w == SQLITE_ROW;
			for (int c = 0; same && c < 5; c++) {
				const char *a = column_text(col_got, c),
					   *b = column_text(col_want, c);
				same = a && b && strcmp(a, b) == 0;
			}
			if (!same) {
				const char *col = g == SQLITE_ROW ? column_text(col_got, 0)
								  : column_text(col_want, 0);
				log_error(
					"store: %s: the schema is not thermlog's: table '%s' column "
					"'%s' differs (name, type, NOT NULL, key or generated)",
					store->path, name, col ? col : "?");
				err = -EMEDIUMTYPE;
				goto out;
			}
		}
	}
	if (rc != SQLITE_DONE) {
		err = fail(store, rc, "could not read the schema");
		goto out;
	}
	sqlite3_finalize(want_st);
	want_st = NULL;
	int64_t expected = 0;
	if (sqlite3_prepare_v2(
		    want,
		    "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' "
		    "ESCAPE '\\'",
		    -1, &want_st, NULL) == SQLITE_OK &&
	    sqlite3_step(want_st) == SQLITE_ROW) {
		expected = sqlite3_column_int64(want_st, 0);
	}
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

static int check_reader(struct store *store) {
	int64_t version;
	int rc = pragma_int(store, "PRAGMA user_version", &version);
	if (rc == -EINVAL) {
		log_error("store: %s is not a SQLite database or is corrupt", store->path);
	}
	if (rc == 0) {
		rc = check_identity(store, version);
	}
	if (rc == 0 && version < SCHEMA_VERSION) {
		log_error("store: %s has schema version %lld, older than this thermlog's %d; "
			  "thermlogd migrates it when it starts",
			  store->path, (long long)version, SCHEMA_VERSION);
		rc = version == 0 ? -ENOENT : -EPROTO;
	}
	if (rc == 0) {
		rc = check_schema(store);
	}
	return rc;
}

/* A write-mode database must be checked once: corruption found now can be moved aside. */
static int quick_check(struct store *store) {
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(store->db, "PRAGMA quick_check(1)", -1, &st, NULL);
	const char *result = NULL;
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		result = column_text(st, 0);
		rc = SQLITE_OK;
	}
	int err = errno_from_sqlite(rc);
	if (err == 0 && (!result || strcmp(result, "ok") != 0)) {
		char *text = xstrdup(result ? result : "no result");
		for (char *c = text; *c; c++) {
			*c = *c == '\n' ? ' ' : *c; // one log line
		}
		log_error("store: %s is corrupt: %s", store->path, text);
		free(text);
		err = -EINVAL;
	} else if (err == -EINVAL) {
		log_error("store: %s is not a SQLite database or is corrupt: %s", store->path,
			  sqlite3_errmsg(store->db));
	} else if (err < 0) {
		log_error("store: could not check %s: %s", store->path, sqlite3_errmsg(store->db));
	}
	sqlite3_finalize(st);
	return err;
}

/*
 * Why a database could not be opened. SQLite's last system errno for a file it could not create
 * is its read-only retry's ENOENT; the true cause is then the directory (EACCES, EROFS).
 */
static int open_errno(const char *path, enum store_mode mode, sqlite3 *db, int rc) {
	int sys = db ? sqlite3_system_errno(db) : 0;
	struct stat st;
	if (mode == STORE_MODE_WRITE && (sys == 0 || sys == ENOENT) && stat(path, &st) < 0 &&
	    errno == ENOENT) {
		char *dir = xstrdup(path);
		char *slash = strrchr(dir, '/');
		if (slash) {
			slash[slash == dir ? 1 : 0] = '\0';
		}
		if (access(slash ? dir : ".", W_OK | X_OK) < 0) {
			sys = errno;
		}
		free(dir);
	}
	int err = ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_IOERR) && sys > 0
			  ? -sys
			  : errno_from_sqlite(rc);
	log_error("store: could not open %s: %s", path,
		  sys > 0 ? strerror(sys)
		  : db    ? sqlite3_errmsg(db)
			  : sqlite3_errstr(rc));
	return err;
}

/*
 * A reader of a WAL database needs its -shm, which it cannot create in a directory it may not
 * write (a copy on read-only media, a read-only mount). Nobody can be writing such a copy
 * either, so it is opened as immutable: no locks, no -shm. Returns the URI, or NULL to open
 * @path as it is.
 */
static char *reader_uri(const char *path) {
	if (strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0) {
		return NULL;
	}
	char *shm = xasprintf("%s-shm", path);
	bool has_shm = access(shm, F_OK) == 0;
	free(shm);
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash) {
		slash[slash == dir ? 1 : 0] = '\0';
	}
	bool dir_writable = access(slash ? dir : ".", W_OK) == 0;
	free(dir);
	if (has_shm || dir_writable) {
		return NULL;
	}
	struct buf uri;
	buf_init(&uri);
	buf_puts(&uri, "file:");
	for (const char *p = path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#') {
			buf_printf(&uri, "%%%02X", (unsigned char)*p); // URI escapes
		} else {
			buf_putc(&uri, *p);
		}
	}
	buf_puts(&uri, "?immutable=1");
	log_debug("store: %s: the directory is read-only; reading it as immutable", path);
	return buf_steal(&uri);
}

/*
 * Once per process, before SQLite initializes: no initial bulk of 20 pages per connection's
 * page cache (46 KiB with 2 KiB pages, allocated at the first read however few pages it needs);
 * pages are allocated as the cache fills, up to its cache_size. The daemon holds four
 * connections. After initialization sqlite3_config() refuses; the default then stays.
 */
static void configure_sqlite(void) {
	sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
}

static int64_t mono_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* STORE_MODE_FOREIGN: interrupts the statement running past the deadline. */
static int handle_progress(void *arg) {
	struct store *store = arg;
	if (mono_ms() >= store->deadline_ms) {
		store->timed_out = true;
		return 1;
	}
	return 0;
}

int store_open(struct store **out, const char *path, enum store_mode mode) {
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, configure_sqlite);
	*out = NULL;
	struct store *store = xcalloc(1, sizeof(*store));
	store->path = xstrdup(path);
	store->mode = mode;
	int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
	flags |= mode == STORE_MODE_WRITE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
					  : SQLITE_OPEN_READONLY;
	int err;
	char *uri = mode != STORE_MODE_WRITE ? reader_uri(path) : NULL;
	char *shm = xasprintf("%s-shm", path);
	bool had_shm = access(shm, F_OK) == 0;
	int rc = sqlite3_open_v2(uri ? uri : path, &store->db, flags, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		err = open_errno(path, mode, store->db, rc);
		goto err_db;
	}
	sqlite3_extended_result_codes(store->db, 1);
	// Until the file proves to be ours, closing must not checkpoint (and delete) the WAL
	// another program left beside its database.
	sqlite3_db_config(store->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	if (mode == STORE_MODE_WRITE && sqlite3_db_readonly(store->db, "main") == 1) {
		// SQLite fell back to read-only: say whether the file or its file system refused.
		err = access(path, W_OK) < 0 && errno == EACCES ? -EACCES : -EROFS;
		log_error("store: %s cannot be written: %s", path, strerror(-err));
		goto err_db;
	}
	// The busy timeout lets the CLI read while thermlogd commits (and the other way round).
	sqlite3_busy_timeout(store->db, 5000);
	if (mode == STORE_MODE_FOREIGN) {
		// Another board's file is input: bounded values, bounded time.
		sqlite3_limit(store->db, SQLITE_LIMIT_LENGTH, FOREIGN_LENGTH_MAX);
		store->deadline_ms = mono_ms() + FOREIGN_DEADLINE_S * 1000;
		sqlite3_progress_handler(store->db, 1000, handle_progress, store);
	}
	// Identity first, so a foreign file gets a clear error before any pragma touches it.
	if (mode != STORE_MODE_WRITE) {
		err = check_reader(store);
	} else {
		int64_t version = 0;
		err = pragma_int(store, "PRAGMA user_version", &version);
		if (err == -EINVAL) {
			log_error("store: %s is not a SQLite database or is corrupt", path);
		}
		if (err == 0) {
			err = check_identity(store, version);
		}
		if (err == 0) {
			sqlite3_db_config(store->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
		}
		if (err == 0 && version > 0) {
			err = quick_check(store);
		}
	}
	/*
	 * Bounded cache so RSS stays flat; temp b-trees stay off the flash. 128 KiB: a reader's
	 * cache is dropped at the daemon's next commit, so it mostly serves one query, which reads
	 * each leaf once; 512 KiB answered no CLI query over a year faster, and left the daemon's
	 * API connections 0.26 MiB larger after a burst of requests (bench/daemon-rss.py
	 * --clients).
	 */
	if (err == 0) {
		err = pragma(store, "PRAGMA cache_size = -128; PRAGMA temp_store = MEMORY");
	}
	if (err < 0) {
		goto err_db;
	}
	if (mode != STORE_MODE_WRITE) {
		free(shm);
		*out = store;
		return 0;
	}
	/*
	 * A commit writes whole pages to the WAL, at least the leaves of cycles and samples: 2 KiB
	 * pages halve that. It must precede journal_mode = WAL, which writes the first page of a
	 * new file; a database that has pages keeps its size (SQLite ignores the pragma then).
	 */
	int64_t pages = 0;
	err = pragma_int(store, "PRAGMA page_count", &pages);
	if (err == 0 && pages == 0) {
		err = pragma(store, "PRAGMA page_size = " STORE_PAGE_SIZE);
	}
	if (err < 0) {
		goto err_db;
	}
	/*
	 * Debian builds SQLite with SECURE_DELETE and WAL synchronous=FULL: both cost flash writes
	 * for nothing here. NORMAL in WAL mode syncs only at checkpoints; a crash keeps every
	 * commit, a power cut may lose the last few but never corrupts. The auto-checkpoint at
	 * 1000 pages (about 8 hours of one-minute cycles) coalesces the hot leaf pages so each is
	 * written to the database file once; journal_size_limit truncates a WAL that grew.
	 */
	err = pragma(store, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
			    "PRAGMA secure_delete = OFF; PRAGMA wal_autocheckpoint = 1000; "
			    "PRAGMA journal_size_limit = 4194304");
	if (err == 0) {
		// Keep -wal and -shm after the last close: a reader without write access to the
		// directory (the thermlog group) can then still open the database read-only.
		int persist = 1;
		sqlite3_file_control(store->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
		err = migrate(store);
	}
	if (err < 0) {
		goto err_db;
	}
	free(shm);
	*out = store;
	return 0;
err_db:
	store_close(store);
	if ((err == -EMEDIUMTYPE || err == -ENOTSUP) && !had_shm) {
		unlink(shm); // only the index of the WAL we read: the file is left as we found it
	}
	free(shm);
	return err;
}

void store_set_cache_kib(struct store *store, int kib) {
	char sql[48];
	snprintf(sql, sizeof(sql), "PRAGMA cache_size = %d", -kib);
	pragma(store, sql); // logs its own failure; the cache keeps its size then
}

void store_set_busy_timeout(struct store *store, int ms) {
	sqlite3_busy_timeout(store->db, ms);
	store->quiet_busy = ms < 1000;
}

void store_close(struct store *store) {
	if (!store) {
		return;
	}
	if (store->depth > 0) {
		log_warn("store: %s closed inside a transaction; rolling it back", store->path);
		store_rollback(store);
	}
	for (int i = 0; i < ST_COUNT; i++) {
		sqlite3_finalize(store->stmts[i]);
	}
	sqlite3_close(store->db);
	known_clear(store);
	free(store->known);
	free(store->blob);
	free(store->pairs);
	free(store->hint);
	free(store->bin_q);
	free(store->bin_count);
	for (size_t i = 0; i < store->hour.cap; i++) {
		free(store->hour.rows[i].pairs);
	}
	free(store->hour.rows);
	chain_finish(&store->scan);
	free(store->path);
	free(store);
}

/* --- reading ------------------------------------------------------------------------------ */

/*
 * The writer moves a channel's last_seen only at its first cycle of each hour (so a steady
 * cycle writes no channel rows); the last cycle that had it is in the raw rows of that hour.
 */
static int last_cycles(struct store *store, struct store_channel *list, size_t n) {
	int64_t from = INT64_MAX, to = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (list[i].last_seen > 0 && hour_of(list[i].last_seen) + HOUR_S > to) {
			to = hour_of(list[i].last_seen) + HOUR_S;
		}
	}
	for (size_t i = 0; i < n; i++) {
		// Channels that ended hours before the newest keep the stored, hour-exact value.
		if (list[i].last_seen > 0 && list[i].last_seen >= to - 2 * HOUR_S &&
		    list[i].last_seen < from) {
			from = list[i].last_seen;
		}
	}
	if (from >= to) {
		return 0;
	}
	sqlite3_stmt *st = stmt(store, ST_SCAN_SAMPLES);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, scan_start(from));
	sqlite3_bind_int64(st, 2, to);
	struct chain chain;
	chain_init(&chain);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);
		const uint8_t *data = sqlite3_column_blob(st, 2);
		chain_next(&chain, ts, data, (size_t)sqlite3_column_bytes(st, 2));
		for (size_t k = 0; ts >= from && k < chain.n_prev; k++) {
			for (size_t i = 0; i < n; i++) {
				if (list[i].id == chain.prev[k].id && ts > list[i].last_seen &&
				    hour_of(ts) == hour_of(list[i].last_seen)) {
					list[i].last_seen = ts;
				}
			}
		}
	}
	done(st);
	chain_finish(&chain);
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read samples");
}

int store_channel_counts(struct store *store, size_t *total, size_t *present) {
	*total = *present = 0;
	sqlite3_stmt *st = stmt(store, ST_CHANNEL_COUNTS);
	if (!st) {
		return -EIO;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*total = (size_t)sqlite3_column_int64(st, 0);
		*present = (size_t)sqlite3_column_int64(st, 1);
	}
	done(st);
	return rc == SQLITE_ROW ? 0 : fail(store, rc, "could not count channels");
}

int store_channels(struct store *store, struct store_channel **out, size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = stmt(store, ST_CHANNELS);
	if (!st) {
		return -EIO;
	}
	struct store_channel *list = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		list = xgrow(list, &cap, len + 1, sizeof(*list));
		struct store_channel *c = &list[len++];
		*c = (struct store_channel){.id = sqlite3_column_int64(st, 0)};
		c->ch.key = xstrdup(column_text(st, 1));
		c->ch.source = xstrdup(column_text(st, 2));
		c->ch.label = xstrdup(column_text(st, 3));
		if (!channel_kind_parse(column_text(st, 4), &c->ch.kind)) {
			c->ch.kind = CHANNEL_KIND_OTHER;
		}
		const char *unit = channel_unit_lookup(column_text(st, 5));
		c->ch.unit = unit ? unit : channel_kind_unit(c->ch.kind);
		c->ch.resolution = sqlite3_column_double(st, 6);
		c->ch.path = dup_or_null(column_text(st, 7));
		c->ch.meta = dup_or_null(column_text(st, 8));
		c->first_seen = sqlite3_column_int64(st, 9);
		c->last_seen = sqlite3_column_int64(st, 10);
		c->present = sqlite3_column_int(st, 11) != 0;
	}
	done(st);
	if (rc != SQLITE_DONE) {
		store_channels_free(list, len);
		return fail(store, rc, "could not read channels");
	}
	rc = last_cycles(store, list, len);
	if (rc < 0) {
		store_channels_free(list, len);
		return rc;
	}
	*out = list;
	*n = len;
	return 0;
}

void store_channels_free(struct store_channel *list, size_t n) {
	for (size_t i = 0; i < n; i++) {
		channel_finish(&list[i].ch);
	}
	free(list);
}

static int64_t file_size(const char *path, const char *suffix) {
	char *name = xasprintf("%s%s", path, suffix);
	struct stat sb;
	int64_t size = stat(name, &sb) == 0 ? (int64_t)sb.st_size : 0;
	free(name);
	return size;
}

int store_info(struct store *store, struct store_info *info) {
	*info = (struct store_info){0};
	sqlite3_stmt *st = stmt(store, ST_INFO);
	if (!st) {
		return -EIO;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		info->cycles = sqlite3_column_int64(st, 0);
		info->first_cycle = sqlite3_column_int64(st, 1);
		info->last_cycle = sqlite3_column_int64(st, 2);
		info->unsynced_cycles = sqlite3_column_int64(st, 3);
	}
	done(st);
	if (rc != SQLITE_ROW) {
		return fail(store, rc, "could not summarize");
	}
	int64_t page_size = 0; // stays 0 if the pragma fails
	pragma_int(store, "PRAGMA page_size", &page_size);
	const char *file = sqlite3_db_filename(store->db, "main");
	if (file && *file) {
		info->size_bytes = file_size(file, "") + file_size(file, "-wal");
	} else {
		int64_t pages = 0;
		pragma_int(store, "PRAGMA page_count", &pages);
		info->size_bytes = pages * page_size;
	}
	int cur = 0, hi = 0;
	sqlite3_db_status(store->db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
	info->bytes_written = (int64_t)cur * (page_size > 0 ? (int)page_size : 4096);
	return 0;
}

int store_scan_cycles(struct store *store, int64_t from, int64_t to, store_cycle_fn fn, void *ctx) {
	sqlite3_stmt *st = stmt(store, ST_SCAN_CYCLES);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, to);
	int rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_cycle c = {
			.ts = sqlite3_column_int64(st, 0),
			.clock = (enum clock_state)sqlite3_column_int(st, 1),
		};
		if ((ret = fn(ctx, &c)) != 0) {
			break;
		}
	}
	done(st);
	if (ret != 0) {
		return ret;
	}
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read cycles");
}

static int cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t *sorted_ids(const int64_t *ids, size_t n) {
	int64_t *copy = xcalloc(n ? n : 1, sizeof(*copy));
	if (n > 0) {
		memcpy(copy, ids, n * sizeof(*copy));
	}
	qsort(copy, n, sizeof(*copy), cmp_i64);
	return copy;
}

/* Calls @fn for the values of the row just decoded (c->prev) of the channels in @want. */
static int deliver(const struct chain *c, struct store_sample *s, const int64_t *want, size_t n_ids,
		   store_sample_fn fn, void *ctx) {
	int ret = 0;
	size_t w = 0; // both by id ascending: a merge, not a search per value
	for (size_t k = 0; ret == 0 && k < c->n_prev; k++) {
		const struct codec_pair *p = &c->prev[k];
		if (n_ids) {
			while (w < n_ids && want[w] < p->id) {
				w++;
			}
			if (w == n_ids) {
				break;
			}
			if (want[w] != p->id) {
				continue;
			}
		}
		s->channel_id = p->id;
		s->q = p->q;
		ret = fn(ctx, s);
	}
	return ret;
}

int store_scan_samples(struct store *store, int64_t from, int64_t to, const int64_t *ids,
		       size_t n_ids, bool include_unsynced, store_sample_fn fn, void *ctx) {
	sqlite3_stmt *st = stmt(store, ST_SCAN_SAMPLES);
	if (!st) {
		return -EIO;
	}
	int64_t *want = sorted_ids(ids, n_ids);
	int limit = include_unsynced ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED;
	struct chain local, *chain = &local;
	int64_t version = 0;
	bool none, resume = false;
	if (store->scanning || query_int(store, ST_DATA_VERSION, 0, &version, &none) < 0) {
		chain_init(&local);
	} else {
		chain = &store->scan;
		store->scanning = true;
		/*
		 * An export reads slice after slice, each from the row the last one stopped at:
		 * that row is held decoded, so unless the rows changed since, the scan goes on
		 * from it instead of from the first row of its hour.
		 */
		resume = store->scan_held && store->scan_from == from &&
			 store->scan_version == version &&
			 store->scan_writes == store->write_steps && chain->hour != INT64_MIN &&
			 from != INT64_MAX;
		if (!resume) {
			chain->hour = INT64_MIN;
		}
		store->scan_held = false; // until this scan ends where it can be resumed
	}
	int rc = SQLITE_DONE, ret = 0;
	int64_t last = INT64_MIN;
	if (resume) {
		struct store_sample s = {.ts = from, .clock = store->scan_clock};
		if (from < to && (int)s.clock <= limit) {
			ret = deliver(chain, &s, want, n_ids, fn, ctx);
		}
		last = from;
	}
	sqlite3_bind_int64(st, 1, resume ? from + 1 : scan_start(from));
	sqlite3_bind_int64(st, 2, to);
	int clock = 0;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_sample s = {
			.ts = sqlite3_column_int64(st, 0),
			.clock = (enum clock_state)sqlite3_column_int(st, 1),
		};
		const uint8_t *data = sqlite3_column_blob(st, 2);
		if (!chain_next(chain, s.ts, data, (size_t)sqlite3_column_bytes(st, 2))) {
			log_error("store: damaged sample row at %lld: %s", (long long)s.ts,
				  store->path);
			ret = -EINVAL;
			break;
		}
		last = s.ts;
		clock = (int)s.clock;
		if (s.ts < from || (int)s.clock > limit) {
			continue; // read only as the base of the rows after it
		}
		ret = deliver(chain, &s, want, n_ids, fn, ctx);
	}
	done(st);
	if (chain == &store->scan) {
		store->scanning = false;
		if (ret > 0 && last != INT64_MIN && chain->hour != INT64_MIN) {
			// Stopped by @fn: the row it stopped at is where the next slice starts.
			store->scan_held = true;
			store->scan_from = last;
			store->scan_clock = resume && last == from ? store->scan_clock : clock;
			store->scan_version = version;
			store->scan_writes = store->write_steps;
		}
	} else {
		chain_finish(&local);
	}
	free(want);
	if (ret != 0) {
		return ret;
	}
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read samples");
}

/* --- rollups ------------------------------------------------------------------------------ */

static int64_t hour_of(int64_t ts) {
	int64_t h = ts / HOUR_S;
	return (ts % HOUR_S < 0 ? h - 1 : h) * HOUR_S;
}

/* Where a scan from @from starts reading: its hour's first row, the start of its chain. */
static int64_t scan_start(int64_t from) {
	return from < INT64_MIN + HOUR_S ? INT64_MIN : hour_of(from);
}

static size_t encode_hist(struct store *store, const int64_t *sorted, size_t n) {
	return codec_hist_encode_values(blob_reserve(store, n * 2 * CODEC_VARINT_MAX + 1), sorted,
					n);
}

static bool decode_hist(struct store *store, const uint8_t *p, size_t len, size_t *n_bins) {
	struct codec_hist_iter it = {.p = p, .end = p + len};
	struct codec_bin bin;
	size_t n = 0;
	while (codec_hist_next(&it, &bin)) {
		if (n == store->bins_cap) {
			size_t cap = store->bins_cap;
			store->bin_q = xgrow(store->bin_q, &cap, n + 1, sizeof(int64_t));
			store->bin_count = xrealloc(store->bin_count, cap * sizeof(int64_t));
			store->bins_cap = cap;
		}
		store->bin_q[n] = bin.q;
		store->bin_count[n] = bin.count;
		n++;
	}
	*n_bins = n;
	return !it.bad;
}

/*
 * Writes @r with the histogram blob of @len bytes in store->blob (its bins are not read) through
 * ST_ROLLUP_PUT or ST_ROLLUP_DAY_PUT: hourly and daily rows have the same columns.
 */
static int rollup_put(struct store *store, enum stmt which, const struct store_rollup *r,
		      size_t len, const char *what) {
	sqlite3_stmt *st = stmt(store, which);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, r->channel_id);
	sqlite3_bind_int64(st, 2, r->hour);
	sqlite3_bind_int64(st, 3, r->count);
	sqlite3_bind_int64(st, 4, r->sum_q);
	if (r->count > 0) { // else min, max and max_ts stay NULL
		sqlite3_bind_int64(st, 5, r->min_q);
		sqlite3_bind_int64(st, 6, r->max_q);
		sqlite3_bind_int64(st, 7, r->max_ts);
	}
	sqlite3_bind_int64(st, 8, r->unsynced);
	sqlite3_bind_blob(st, 9, store->blob, (int)len, SQLITE_STATIC);
	int rc = step_done(st);
	return rc == SQLITE_OK ? 0 : fail(store, rc, what);
}

static int rollup_flush(struct store *store, struct rollup_acc *acc, size_t n_acc, int64_t hour) {
	for (size_t id = 0; id < n_acc; id++) {
		struct rollup_acc *a = &acc[id];
		if (a->n == 0 && a->unsynced == 0) {
			continue;
		}
		if (a->n > 1) { // an hour of unsynced values only has no array to sort
			qsort(a->q, a->n, sizeof(*a->q), cmp_i64);
		}
		size_t len = encode_hist(store, a->q, a->n);
		struct store_rollup r = {.hour = hour,
					 .channel_id = (int64_t)id,
					 .count = (int64_t)a->n,
					 .sum_q = a->sum,
					 .min_q = a->min,
					 .max_q = a->max,
					 .max_ts = a->max_ts,
					 .unsynced = a->unsynced};
		int rc = rollup_put(store, ST_ROLLUP_PUT, &r, len, "could not store a rollup");
		if (rc < 0) {
			return rc;
		}
		a->n = 0;
		a->sum = 0;
		a->unsynced = 0;
	}
	return 0;
}

/* Rolls up the hours [from, to) in one step; raw rows are read, never changed. */
static int rollup_range(struct store *store, int64_t from, int64_t to) {
	sqlite3_stmt *st = stmt(store, ST_SCAN_SAMPLES);
	if (!st) {
		return -EIO;
	}
	struct rollup_acc *acc = NULL;
	size_t n_acc = 0, cap_acc = 0;
	int64_t hour = from;
	int ret = 0, rc;
	struct chain chain;
	chain_init(&chain);
	sqlite3_bind_int64(st, 1, from); // @from starts an hour: no row before it is a base
	sqlite3_bind_int64(st, 2, to);
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);
		bool unsynced = sqlite3_column_int(st, 1) == CLOCK_STATE_UNSYNCED;
		if (hour_of(ts) != hour) {
			ret = rollup_flush(store, acc, n_acc, hour);
			hour = hour_of(ts);
		}
		const uint8_t *data = sqlite3_column_blob(st, 2);
		bool bad = !chain_next(&chain, ts, data, (size_t)sqlite3_column_bytes(st, 2));
		for (size_t k = 0; ret == 0 && !bad && k < chain.n_prev; k++) {
			struct codec_pair p = chain.prev[k];
			if (p.id <= 0 || p.id > 100000000) {
				bad = true;
				break;
			}
			if ((size_t)p.id >= n_acc) {
				size_t need = (size_t)p.id + 1;
				acc = xgrow(acc, &cap_acc, need, sizeof(*acc));
				memset(&acc[n_acc], 0, (cap_acc - n_acc) * sizeof(*acc));
				n_acc = cap_acc;
			}
			struct rollup_acc *a = &acc[p.id];
			if (unsynced) {
				a->unsynced++;
				continue;
			}
			if (a->n == 0 || p.q < a->min) {
				a->min = p.q;
			}
			if (a->n == 0 || p.q > a->max) {
				a->max = p.q;
				a->max_ts = ts;
			}
			a->q = xgrow(a->q, &a->cap, a->n + 1, sizeof(*a->q));
			a->q[a->n++] = p.q;
			a->sum += p.q;
		}
		if (bad) {
			log_error("store: damaged sample row at %lld: %s", (long long)ts,
				  store->path);
			ret = -EINVAL;
		}
	}
	done(st);
	chain_finish(&chain);
	if (ret == 0 && rc != SQLITE_DONE) {
		ret = fail(store, rc, "could not read samples");
	}
	if (ret == 0) {
		ret = rollup_flush(store, acc, n_acc, hour);
	}
	if (ret == 0) {
		ret = state_set_int(store, STATE_HORIZON, to);
	}
	for (size_t i = 0; i < n_acc; i++) {
		free(acc[i].q);
	}
	free(acc);
	return ret;
}

int store_rollup_horizon(struct store *store, int64_t *hour) {
	*hour = 0;
	return state_get_int(store, STATE_HORIZON, hour);
}

static int scan_rollup_rows(struct store *store, enum stmt which, int64_t from, int64_t to,
			    const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx);

/* --- the daily level ---------------------------------------------------------------------- */

static int64_t day_of(int64_t ts) {
	int64_t d = ts / DAY_S;
	return (ts % DAY_S < 0 ? d - 1 : d) * DAY_S;
}

/* A histogram being merged: (q, count) pairs in any order, duplicates allowed until sorted. */
struct bin_list {
	struct codec_bin *bins;
	size_t n, cap;
};

static void bins_add(struct bin_list *l, int64_t q, int64_t count) {
	l->bins = xgrow(l->bins, &l->cap, l->n + 1, sizeof(*l->bins));
	l->bins[l->n++] = (struct codec_bin){q, count};
}

/* Sorts and merges @l, then encodes it as a rollup histogram blob; returns its length. */
static size_t encode_bins(struct store *store, struct bin_list *l) {
	uint8_t *p = blob_reserve(store, l->n * 2 * CODEC_VARINT_MAX + 1);
	size_t len = codec_hist_encode_bins(p, l->bins, l->n);
	l->n = 0;
	return len;
}

/* One channel's day in day_range(). */
struct day_acc {
	int64_t count, sum, min, max, max_ts, unsynced;
	bool any; // a rollup row was seen
	struct bin_list hist;
};

/* The cycles of one day in day_range(). */
struct cycle_day_acc {
	int64_t cycles, unsynced, first_ts, last_ts;
	struct bin_list spacing;
};

static int cycle_day_flush(struct store *store, struct cycle_day_acc *c, int64_t day) {
	sqlite3_stmt *st = stmt(store, ST_CYCLE_DAY_PUT);
	if (!st) {
		return -EIO;
	}
	size_t len = encode_bins(store, &c->spacing);
	sqlite3_bind_int64(st, 1, day);
	sqlite3_bind_int64(st, 2, c->cycles);
	sqlite3_bind_int64(st, 3, c->unsynced);
	if (c->cycles > 0) {
		sqlite3_bind_int64(st, 4, c->first_ts);
		sqlite3_bind_int64(st, 5, c->last_ts);
	}
	sqlite3_bind_blob(st, 6, store->blob, (int)len, SQLITE_STATIC);
	int rc = step_done(st);
	c->cycles = c->unsynced = 0;
	return rc == SQLITE_OK ? 0 : fail(store, rc, "could not store a daily cycle summary");
}

static int day_flush(struct store *store, struct day_acc *acc, size_t n_acc, int64_t day) {
	for (size_t id = 0; id < n_acc; id++) {
		struct day_acc *a = &acc[id];
		if (!a->any) {
			continue;
		}
		size_t len = encode_bins(store, &a->hist);
		struct store_rollup r = {.hour = day,
					 .channel_id = (int64_t)id,
					 .count = a->count,
					 .sum_q = a->sum,
					 .min_q = a->min,
					 .max_q = a->max,
					 .max_ts = a->max_ts,
					 .unsynced = a->unsynced};
		int rc = rollup_put(store, ST_ROLLUP_DAY_PUT, &r, len,
				    "could not store a daily rollup");
		if (rc < 0) {
			return rc;
		}
		a->count = a->sum = a->unsynced = 0;
		a->any = false;
	}
	return 0;
}

struct day_build {
	struct store *store;
	struct day_acc *acc;
	size_t n_acc;
	int64_t day;
};

static int day_add_rollup(void *ctx, const struct store_rollup *r) {
	struct day_build *b = ctx;
	if (day_of(r->hour) != b->day) {
		int rc = day_flush(b->store, b->acc, b->n_acc, b->day);
		if (rc < 0) {
			return rc;
		}
		b->day = day_of(r->hour);
	}
	if (r->channel_id <= 0 || r->channel_id > 100000000) {
		return -EINVAL;
	}
	if ((size_t)r->channel_id >= b->n_acc) {
		size_t n = (size_t)r->channel_id + 1;
		b->acc = xrealloc(b->acc, n * sizeof(*b->acc));
		memset(&b->acc[b->n_acc], 0, (n - b->n_acc) * sizeof(*b->acc));
		b->n_acc = n;
	}
	struct day_acc *a = &b->acc[r->channel_id];
	a->any = true;
	a->unsynced += r->unsynced;
	if (r->count > 0) {
		// Hours come in order: a tie keeps the earlier hour's first time at the maximum.
		if (a->count == 0 || r->min_q < a->min) {
			a->min = r->min_q;
		}
		if (a->count == 0 || r->max_q > a->max) {
			a->max = r->max_q;
			a->max_ts = r->max_ts;
		}
		a->count += r->count;
		a->sum += r->sum_q;
		for (size_t i = 0; i < r->n_bins; i++) {
			bins_add(&a->hist, r->bin_q[i], r->bin_count[i]);
		}
	}
	return 0;
}

/*
 * Merges the days [from, to) (whole days of rolled-up hours) into cycle_days and rollup_days:
 * every day gets a cycle row, every channel with an hourly rollup that day a daily one.
 */
static int day_range(struct store *store, int64_t from, int64_t to) {
	sqlite3_stmt *st = stmt(store, ST_SCAN_CYCLES);
	if (!st) {
		return -EIO;
	}
	struct cycle_day_acc c = {0};
	int64_t day = from;
	int ret = 0, rc;
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, to);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);
		while (ret == 0 && day_of(ts) > day) {
			ret = cycle_day_flush(store, &c, day);
			day += DAY_S;
		}
		if (ret != 0) {
			break;
		}
		if (sqlite3_column_int(st, 1) == CLOCK_STATE_UNSYNCED) {
			c.unsynced++;
			continue;
		}
		if (c.cycles == 0) {
			c.first_ts = ts;
		} else {
			bins_add(&c.spacing, ts - c.last_ts, 1);
		}
		c.last_ts = ts;
		c.cycles++;
	}
	done(st);
	if (ret == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		ret = fail(store, rc, "could not read cycles");
	}
	for (; ret == 0 && day < to; day += DAY_S) {
		ret = cycle_day_flush(store, &c, day);
	}
	free(c.spacing.bins);
	struct day_build b = {.store = store, .day = from};
	if (ret == 0) {
		ret = scan_rollup_rows(store, ST_SCAN_ROLLUPS, from, to, NULL, 0, day_add_rollup,
				       &b);
	}
	if (ret == 0) {
		ret = day_flush(store, b.acc, b.n_acc, b.day);
	}
	for (size_t i = 0; i < b.n_acc; i++) {
		free(b.acc[i].hist.bins);
	}
	free(b.acc);
	if (ret == 0) {
		ret = state_set_int(store, STATE_DAY_HORIZON, to);
	}
	return ret;
}

/* Merges every whole day before the hourly @horizon not merged yet, a month per transaction. */
static int maintain_days(struct store *store, int64_t horizon) {
	int64_t day = 0, first;
	bool empty;
	int rc = state_get_int(store, STATE_DAY_HORIZON, &day);
	if (rc < 0) {
		return rc;
	}
	if (day == 0) {
		if ((rc = query_int(store, ST_FIRST_CYCLE, 0, &first, &empty)) < 0 || empty) {
			return rc;
		}
		day = day_of(first);
	}
	int64_t end = day_of(horizon);
	while (day < end) {
		int64_t to = day + DAY_CHUNK_S < end ? day + DAY_CHUNK_S : end;
		if ((rc = step_begin(store)) < 0) {
			return rc;
		}
		if ((rc = step_end(store, day_range(store, day, to))) < 0) {
			return rc;
		}
		day = to;
	}
	return 0;
}

/* Hourly rollups from @hour on will be rebuilt: days from its day on must be merged again. */
static int days_invalidate(struct store *store, int64_t hour) {
	int64_t day = 0;
	int rc = state_get_int(store, STATE_DAY_HORIZON, &day);
	if (rc == 0 && day > day_of(hour)) {
		rc = state_set_int(store, STATE_DAY_HORIZON, day_of(hour));
	}
	return rc;
}

int store_raw_horizon(struct store *store, int64_t *ts) {
	*ts = 0;
	return state_get_int(store, STATE_RAW_HORIZON, ts);
}

/*
 * Deletes one batch of sample rows older than @cutoff; *more when a full batch went. A batch
 * may end inside an hour: the row after it there is written again without its deleted base.
 */
static int prune_batch(struct store *store, int64_t cutoff, bool *more) {
	int64_t last;
	bool none;
	int rc = query_int(store, ST_PRUNE_LAST, cutoff, &last, &none);
	if (rc < 0 || none) {
		*more = false;
		return rc;
	}
	if ((rc = known_load(store)) < 0) {
		return rc;
	}
	rc = hour_load(store, last);
	if (rc < 0 && rc != -EINVAL) { // a damaged hour (logged) is pruned as it is
		return rc;
	}
	bool fix = rc == 0;
	sqlite3_stmt *st = stmt(store, ST_PRUNE);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, last);
	rc = step_done(st);
	if (rc != SQLITE_OK) {
		return fail(store, rc, "could not prune samples");
	}
	*more = sqlite3_changes(store->db) == PRUNE_BATCH;
	store->hour.damaged = false; // the damage may have gone with the rows
	return fix ? hour_drop_through(store, last) : 0;
}

int store_maintain(struct store *store, int64_t now, int64_t raw_keep_s) {
	if (!writable(store)) {
		return -EROFS;
	}
	int64_t horizon = 0, first, last;
	bool empty;
	int rc = state_get_int(store, STATE_HORIZON, &horizon);
	if (rc == 0) {
		rc = query_int(store, ST_LAST_CYCLE, 0, &last, &empty);
	}
	if (rc < 0 || empty) {
		return rc;
	}
	if (horizon == 0) {
		if ((rc = query_int(store, ST_FIRST_CYCLE, 0, &first, &empty)) < 0) {
			return rc;
		}
		horizon = hour_of(first);
	}
	/*
	 * An hour is complete once @now is past it and a later cycle exists: cycles only move
	 * forward, so none can land in it any more (a wrong @now cannot close an hour early).
	 */
	int64_t end = hour_of(now) < hour_of(last) ? hour_of(now) : hour_of(last);
	while (horizon < end) {
		int64_t to = horizon + ROLLUP_CHUNK_S < end ? horizon + ROLLUP_CHUNK_S : end;
		if ((rc = step_begin(store)) < 0) {
			return rc;
		}
		if ((rc = step_end(store, rollup_range(store, horizon, to))) < 0) {
			return rc;
		}
		horizon = to;
	}
	if ((rc = maintain_days(store, horizon)) < 0) {
		return rc;
	}
	if (raw_keep_s <= 0) {
		return 0;
	}
	// Whole hours only, and never rows not rolled up yet.
	int64_t cutoff = hour_of(now - raw_keep_s);
	cutoff = cutoff < horizon ? cutoff : horizon;
	int64_t pruned = 0;
	if ((rc = state_get_int(store, STATE_RAW_HORIZON, &pruned)) < 0) {
		return rc;
	}
	for (bool more = cutoff > pruned; more;) {
		if ((rc = step_begin(store)) < 0) {
			return rc;
		}
		rc = prune_batch(store, cutoff, &more);
		if (rc == 0 && !more) {
			rc = state_set_int(store, STATE_RAW_HORIZON, cutoff);
		}
		if ((rc = step_end(store, rc)) < 0) {
			return rc;
		}
	}
	return 0;
}

/* --- repair ------------------------------------------------------------------------------ */

/* Runs @sql with ?1 = @param; the first column of its first row, if any, goes to *out. */
static int exec_param(struct store *store, const char *sql, int64_t param, int64_t *out) {
	sqlite3_stmt *st;
	int rc = prepare(store, sql, "the repair", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, param);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && out) {
		*out = sqlite3_column_int64(st, 0);
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	int err = rc == SQLITE_OK ? 0 : fail(store, rc, "could not repair");
	sqlite3_finalize(st);
	return err;
}

static int drop_after(struct store *store, int64_t after, bool dry_run, struct store_drop *out) {
	int rc =
		exec_param(store, "SELECT count(*) FROM cycles WHERE ts > ?1", after, &out->cycles);
	if (rc == 0) {
		rc = exec_param(store, "SELECT coalesce(min(ts), 0) FROM cycles WHERE ts > ?1",
				after, &out->first);
	}
	if (rc == 0) {
		rc = exec_param(store, "SELECT coalesce(max(ts), 0) FROM cycles WHERE ts > ?1",
				after, &out->last);
	}
	if (rc == 0) {
		rc = exec_param(store, "SELECT count(*) FROM rollups WHERE hour > ?1", after,
				&out->rollups);
	}
	if (rc < 0 || dry_run) {
		return rc;
	}
	// Rollups of hours that start after the cut hold nothing but the dropped cycles; the
	// hour across the cut is rolled up again from its raw rows, if they are still there.
	static const char *const sql[] = {
		"DELETE FROM samples WHERE ts > ?1",
		"DELETE FROM cycles WHERE ts > ?1",
		"DELETE FROM rollups WHERE hour > ?1",
		"UPDATE channels SET last_seen = max(first_seen, ?1) WHERE last_seen > ?1",
	};
	for (size_t i = 0; rc == 0 && i < sizeof(sql) / sizeof(sql[0]); i++) {
		rc = exec_param(store, sql[i], after, NULL);
	}
	// The rows kept are coded against rows before them, which stay: nothing to re-encode.
	store->hour.loaded = false;
	int64_t horizon = 0, raw = 0, cut = hour_of(after);
	if (rc == 0) {
		rc = state_get_int(store, STATE_HORIZON, &horizon);
	}
	if (rc == 0) {
		rc = state_get_int(store, STATE_RAW_HORIZON, &raw);
	}
	if (rc == 0 && raw > cut) {
		rc = state_set_int(store, STATE_RAW_HORIZON, cut);
		raw = cut;
	}
	if (rc == 0 && horizon > cut && raw <= cut) {
		rc = state_set_int(store, STATE_HORIZON, cut);
	}
	// The daily level is derived: days from the cut's day on are merged again from what is
	// left.
	if (rc == 0) {
		rc = exec_param(store, "DELETE FROM rollup_days WHERE day >= ?1", day_of(after),
				NULL);
	}
	if (rc == 0) {
		rc = exec_param(store, "DELETE FROM cycle_days WHERE day >= ?1", day_of(after),
				NULL);
	}
	if (rc == 0) {
		rc = days_invalidate(store, cut);
	}
	return rc;
}

int store_drop_after(struct store *store, int64_t after, bool dry_run, struct store_drop *out) {
	*out = (struct store_drop){0};
	if (!writable(store)) {
		return -EROFS;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	rc = drop_after(store, after, dry_run, out);
	if (rc == 0 && dry_run) {
		rc = step_end(store, -ECANCELED); // a dry run writes nothing
		return rc == -ECANCELED ? 0 : rc;
	}
	return step_end(store, rc);
}

/* Scans hourly (ST_SCAN_ROLLUPS) or daily (ST_SCAN_ROLLUP_DAYS) rows: the same columns. */
static int scan_rollup_rows(struct store *store, enum stmt which, int64_t from, int64_t to,
			    const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx) {
	sqlite3_stmt *st = stmt(store, which);
	if (!st) {
		return -EIO;
	}
	int64_t *want = sorted_ids(ids, n_ids);
	sqlite3_bind_int64(st, 1, from);
	sqlite3_bind_int64(st, 2, to);
	int ret = 0, rc;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_rollup r = {
			.hour = sqlite3_column_int64(st, 0),
			.channel_id = sqlite3_column_int64(st, 1),
		};
		// The key is (hour, channel_id): other channels are skipped before decoding.
		if (n_ids && !bsearch(&r.channel_id, want, n_ids, sizeof(*want), cmp_i64)) {
			continue;
		}
		r.count = sqlite3_column_int64(st, 2);
		r.sum_q = sqlite3_column_int64(st, 3);
		r.min_q = sqlite3_column_int64(st, 4);
		r.max_q = sqlite3_column_int64(st, 5);
		r.max_ts = sqlite3_column_int64(st, 6);
		r.unsynced = sqlite3_column_int64(st, 7);
		const uint8_t *hist = sqlite3_column_blob(st, 8);
		if (!decode_hist(store, hist, (size_t)sqlite3_column_bytes(st, 8), &r.n_bins)) {
			log_error("store: damaged rollup of channel %lld at %lld: %s",
				  (long long)r.channel_id, (long long)r.hour, store->path);
			ret = -EINVAL;
			break;
		}
		r.bin_q = store->bin_q;
		r.bin_count = store->bin_count;
		ret = fn(ctx, &r);
	}
	done(st);
	free(want);
	if (ret != 0) {
		return ret;
	}
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read rollups");
}

int store_scan_rollups(struct store *store, int64_t from_hour, int64_t to_hour, const int64_t *ids,
		       size_t n_ids, store_rollup_fn fn, void *ctx) {
	return scan_rollup_rows(store, ST_SCAN_ROLLUPS, from_hour, to_hour, ids, n_ids, fn, ctx);
}

int store_scan_rollup_days(struct store *store, int64_t from_day, int64_t to_day,
			   const int64_t *ids, size_t n_ids, store_rollup_fn fn, void *ctx) {
	return scan_rollup_rows(store, ST_SCAN_ROLLUP_DAYS, from_day, to_day, ids, n_ids, fn, ctx);
}

int store_day_horizon(struct store *store, int64_t *day) {
	*day = 0;
	return state_get_int(store, STATE_DAY_HORIZON, day);
}

int store_scan_cycle_days(struct store *store, int64_t from_day, int64_t to_day,
			  store_cycle_day_fn fn, void *ctx) {
	sqlite3_stmt *st = stmt(store, ST_SCAN_CYCLE_DAYS);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, from_day);
	sqlite3_bind_int64(st, 2, to_day);
	int ret = 0, rc;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_cycle_day d = {
			.day = sqlite3_column_int64(st, 0),
			.cycles = sqlite3_column_int64(st, 1),
			.unsynced = sqlite3_column_int64(st, 2),
			.first_ts = sqlite3_column_int64(st, 3),
			.last_ts = sqlite3_column_int64(st, 4),
		};
		const uint8_t *hist = sqlite3_column_blob(st, 5);
		if (!decode_hist(store, hist, (size_t)sqlite3_column_bytes(st, 5), &d.n_spacings)) {
			log_error("store: damaged cycle summary of the day at %lld: %s",
				  (long long)d.day, store->path);
			ret = -EINVAL;
			break;
		}
		d.spacing_s = store->bin_q;
		d.spacing_count = store->bin_count;
		ret = fn(ctx, &d);
	}
	done(st);
	if (ret != 0) {
		return ret;
	}
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read the daily cycles");
}

/* --- imports ------------------------------------------------------------------------------ */

static int channel_ensure(struct store *store, const struct channel *ch, int64_t *id) {
	int rc = known_load(store);
	if (rc < 0) {
		return rc;
	}
	bool found;
	size_t at = known_find(store, ch->key, &found);
	if (found && store->known[at].id > 0) {
		*id = store->known[at].id;
		return 0;
	}
	if (!channel_key_valid(ch->key) || !resolution_valid(ch->resolution)) {
		log_error("store: cannot add channel '%s': bad key or resolution %g", ch->key,
			  ch->resolution);
		return -EINVAL;
	}
	rc = channel_insert(store, ch, 0, false, id);
	store->known_valid = false; // reloaded with the new row on next use
	return rc;
}

int store_channel_ensure(struct store *store, const struct channel *ch, int64_t *id) {
	if (!writable(store)) {
		return -EROFS;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, channel_ensure(store, ch, id));
}

static int insert_sample(struct store *store, int64_t ts, int64_t channel_id, int64_t q,
			 enum store_import_result *result) {
	int64_t raw_horizon = 0, horizon = 0, clock;
	bool null;
	int rc = state_get_int(store, STATE_RAW_HORIZON, &raw_horizon);
	if (rc == 0) {
		rc = state_get_int(store, STATE_HORIZON, &horizon);
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
	sqlite3_stmt *st = stmt(store, ST_CYCLE_INSERT_IMPORT);
	if (!st) {
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, ts);
	if ((rc = step_done(st)) != SQLITE_OK) {
		return fail(store, rc, "could not store a cycle");
	}
	if ((rc = query_int(store, ST_CYCLE_CLOCK, ts, &clock, &null)) < 0) {
		return rc;
	}

	// Merge into the cycle's row; an existing (ts, channel) value wins.
	if ((rc = known_load(store)) < 0 || (rc = hour_load(store, ts)) < 0) {
		return rc;
	}
	struct hour_rows *h = &store->hour;
	bool exists;
	size_t at = hour_find(h, ts, &exists);
	const struct hour_row *row = exists ? &h->rows[at] : NULL;
	size_t n_old = row ? row->n : 0, i = 0;
	while (i < n_old && row->pairs[i].id < channel_id) {
		i++;
	}
	if (i < n_old && row->pairs[i].id == channel_id) {
		*result = row->pairs[i].q == q ? STORE_IMPORT_IDENTICAL : STORE_IMPORT_CONFLICT;
		return 0;
	}
	if ((rc = history_changed(store)) < 0) {
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
	rc = hour_put(store, ts, (int)clock, pairs, n_old + 1);
	free(pairs);
	if (rc < 0) {
		return rc;
	}
	if ((rc = bind_id_exec(store, ST_CHANNEL_SPAN, channel_id, ts,
			       "could not update a channel")) < 0) {
		return rc;
	}
	// A value in an hour already rolled up: roll that hour (and later ones) up again.
	if (horizon > 0 && hour_of(ts) < horizon) {
		rc = state_set_int(store, STATE_HORIZON, hour_of(ts));
		return rc < 0 ? rc : days_invalidate(store, hour_of(ts));
	}
	return 0;
}

int store_insert_sample(struct store *store, int64_t ts, int64_t channel_id, int64_t q,
			enum store_import_result *result) {
	enum store_import_result ignored;
	result = result ? result : &ignored;
	*result = STORE_IMPORT_NEW;
	if (!writable(store)) {
		return -EROFS;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, insert_sample(store, ts, channel_id, q, result));
}

/* --- resolution ---------------------------------------------------------------------------- */

/* Every stored integer of channel @id times @factor: raw rows, then rollups, then the row. */
static int rescale_samples(struct store *store, int64_t id, int64_t factor) {
	sqlite3_stmt *sel = NULL, *upd = NULL;
	int err = prepare(store, "SELECT ts, data FROM samples WHERE ts > ?1 ORDER BY ts LIMIT 512",
			  "a rescale", &sel);
	if (err == 0) {
		err = prepare(store, "UPDATE samples SET data = ?2 WHERE ts = ?1", "a rescale",
			      &upd);
	}
	int64_t after = INT64_MIN;
	struct codec_pair *pairs = NULL, *scaled = NULL;
	size_t cap = 0, cap_scaled = 0, n_scaled = 0;
	struct chain chain;
	chain_init(&chain);
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
			err = fail(store, rc, "could not read samples");
		}
		for (size_t i = 0; i < m; i++) {
			// The row's values, then the same with the channel scaled, coded against
			// the row before it scaled too (kept in @scaled), so the chain stays exact.
			bool same_hour = hour_of(tss[i]) == chain.hour;
			bool ok = chain_next(&chain, tss[i], blobs[i], lens[i]);
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
				size_t len = encode_row(store, pairs, n, same_hour ? scaled : NULL,
							same_hour ? n_scaled : 0);
				sqlite3_bind_int64(upd, 1, tss[i]);
				sqlite3_bind_blob(upd, 2, store->blob, (int)len, SQLITE_STATIC);
				int urc = step_done(upd);
				if (urc != SQLITE_OK) {
					err = fail(store, urc, "could not rescale samples");
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
	chain_finish(&chain);
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return err;
}

static int rescale_rollups(struct store *store, int64_t id, int64_t factor) {
	sqlite3_stmt *sel = NULL, *upd = NULL;
	int err = prepare(store,
			  "SELECT hour, sum, min, max, hist FROM rollups WHERE channel_id = ?1 AND "
			  "hour > ?2 ORDER BY hour LIMIT 1",
			  "a rescale", &sel);
	if (err == 0) {
		err = prepare(store,
			      "UPDATE rollups SET sum = ?3, min = ?4, max = ?5, hist = ?6 WHERE "
			      "hour = ?1 AND channel_id = ?2",
			      "a rescale", &upd);
	}
	int64_t after = INT64_MIN;
	while (err == 0) {
		sqlite3_bind_int64(sel, 1, id);
		sqlite3_bind_int64(sel, 2, after);
		int rc = sqlite3_step(sel);
		if (rc != SQLITE_ROW) {
			sqlite3_reset(sel);
			err = rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read rollups");
			break;
		}
		after = sqlite3_column_int64(sel, 0);
		int64_t sum = sqlite3_column_int64(sel, 1), min = sqlite3_column_int64(sel, 2),
			max = sqlite3_column_int64(sel, 3);
		bool null_min = sqlite3_column_type(sel, 2) == SQLITE_NULL;
		const uint8_t *p = sqlite3_column_blob(sel, 4);
		const uint8_t *end = p + sqlite3_column_bytes(sel, 4);
		uint8_t *out = blob_reserve(store, (size_t)(end - p) * 2 + 2 * CODEC_VARINT_MAX);
		size_t len = 0;
		bool first = true, bad = false;
		// Bins are (q delta, count): every delta, and the first q, scale by the factor.
		while (p < end && !bad) {
			uint64_t dq, count;
			int64_t q;
			if (!codec_get_varint(&p, end, &dq) || !codec_get_varint(&p, end, &count)) {
				bad = true;
				break;
			}
			if (first) {
				bad = __builtin_mul_overflow(codec_unzigzag(dq), factor, &q);
				dq = codec_zigzag(q);
			} else {
				bad = __builtin_mul_overflow(dq, (uint64_t)factor, &dq);
			}
			first = false;
			if (len + 2 * CODEC_VARINT_MAX > store->blob_cap) {
				out = blob_reserve(store, store->blob_cap * 2);
			}
			len += codec_put_varint(out + len, dq);
			len += codec_put_varint(out + len, count);
		}
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
		sqlite3_bind_blob(upd, 6, out, (int)len, SQLITE_STATIC);
		rc = step_done(upd);
		if (rc != SQLITE_OK) {
			err = fail(store, rc, "could not rescale rollups");
		}
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return err;
}

static int rescale_channel(struct store *store, int64_t id, int64_t factor, double resolution) {
	int err = factor > 1 ? rescale_samples(store, id, factor) : 0;
	if (err == 0 && factor > 1) {
		err = rescale_rollups(store, id, factor);
	}
	if (err == 0 && factor > 1) {
		// The daily rows hold the old integers: merge every day again from the hourly ones.
		err = state_set_int(store, STATE_DAY_HORIZON, 0);
	}
	sqlite3_stmt *st = NULL;
	if (err == 0) {
		err = prepare(store, "UPDATE channels SET resolution = ?2 WHERE id = ?1",
			      "a rescale", &st);
	}
	if (err == 0) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_double(st, 2, resolution);
		int rc = sqlite3_step(st);
		err = rc == SQLITE_DONE ? 0 : fail(store, rc, "could not set a resolution");
	}
	sqlite3_finalize(st);
	return err;
}

static int channel_refine(struct store *store, int64_t id, double resolution, double *applied) {
	int rc = known_load(store);
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
	rc = rescale_channel(store, id, factor, res);
	if (rc == 0) {
		k->resolution = res;
	}
	return rc;
}

int store_channel_refine(struct store *store, int64_t id, double resolution, double *applied) {
	if (!writable(store)) {
		return -EROFS;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, channel_refine(store, id, resolution, applied));
}

/* --- backup ------------------------------------------------------------------------------- */

int store_backup(struct store *store, const char *path) {
	sqlite3 *dest = NULL;
	int rc = sqlite3_open_v2(path, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		int err = open_errno(path, STORE_MODE_WRITE, dest, rc);
		sqlite3_close(dest);
		return err;
	}
	sqlite3_busy_timeout(dest, 5000);
	sqlite3_backup *b = sqlite3_backup_init(dest, "main", store->db, "main");
	if (!b) {
		log_error("store: could not back up %s to %s: %s", store->path, path,
			  sqlite3_errmsg(dest));
		rc = sqlite3_errcode(dest);
		sqlite3_close(dest);
		return errno_from_sqlite(rc);
	}
	// One step copies everything under one read snapshot, so writers cannot restart it.
	for (int tries = 0; tries < 50; tries++) {
		rc = sqlite3_backup_step(b, -1);
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
			break;
		}
		sqlite3_sleep(100);
	}
	sqlite3_backup_finish(b);
	int err = rc == SQLITE_DONE ? 0 : errno_from_sqlite(rc);
	// A rollback-journal copy is one self-contained file that opens anywhere, even read-only
	// in a read-only directory; thermlogd switches it back to WAL when it opens it.
	if (err == 0 &&
	    sqlite3_exec(dest, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		log_warn("store: the copy %s stays in WAL mode: %s", path, sqlite3_errmsg(dest));
	}
	if (err < 0) {
		log_error("store: could not back up %s to %s: %s", store->path, path,
			  sqlite3_errstr(rc));
	}
	if (sqlite3_close(dest) != SQLITE_OK && err == 0) {
		log_error("store: could not close the backup %s", path);
		err = -EIO;
	}
	return err;
}

int store_limit_pages(struct store *store, int64_t max_pages) {
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld", (long long)max_pages);
	return pragma(store, sql);
}

/* --- runs: read side ---------------------------------------------------------------------- */

/*
 * One-off statements (prepare()): run queries are rare next to the cycle's, so they take no
 * persistent slot.
 */
#define RUN_COLUMNS                                                                             \
	"id, label, tags, start_ms, end_ms, status, exit_code, signal, pid, origin, energy_j, " \
	"energy_method, energy_coverage, temp_max_c, rss_max_bytes, figures, fingerprint, "     \
	"error"

static double column_double_or_nan(sqlite3_stmt *st, int col) {
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

static void run_from_row(sqlite3_stmt *st, struct store_run *run) {
	*run = (struct store_run){
		.id = sqlite3_column_int64(st, 0),
		.label = column_text(st, 1),
		.tags = column_text(st, 2),
		.start_ms = sqlite3_column_int64(st, 3),
		.end_ms = sqlite3_column_int64(st, 4),
		.ended = sqlite3_column_type(st, 4) != SQLITE_NULL,
		.status = column_text(st, 5),
		.exit_code =
			sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 6),
		.signal = sqlite3_column_int(st, 7),
		.pid = sqlite3_column_int64(st, 8),
		.origin = column_text(st, 9),
		.energy_j = column_double_or_nan(st, 10),
		.energy_method = column_text(st, 11),
		.energy_coverage = column_double_or_nan(st, 12),
		.temp_max_c = column_double_or_nan(st, 13),
		.rss_max_bytes = column_double_or_nan(st, 14),
		.figures = column_text(st, 15),
		.fingerprint = column_text(st, 16),
		.error = column_text(st, 17),
	};
	if (!run->tags) {
		run->tags = "{}";
	}
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
	// The schema's CHECK list; the statuses' meaning is runstats' (the store knows no stats).
	static const char *const statuses[] = {"running",  "ok",      "failed",
					       "signaled", "timeout", "lost"};
	const char *status = column_text(st, 5);
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		if (strcmp(status, statuses[i]) == 0) {
			return NULL;
		}
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
	if (ret != 0) {
		return ret;
	}
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read runs");
}

/* Binds @filter to ?1 (label), ?2 (from) and ?3 (to) of a runs query. */
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
}

#define RUN_FILTER_WHERE                                                     \
	"(?1 IS NULL OR label = ?1) AND (?2 IS NULL OR start_ms >= ?2) AND " \
	"(?3 IS NULL OR start_ms < ?3)"

int store_runs_scan(struct store *store, const struct store_run_filter *filter, store_run_fn fn,
		    void *ctx) {
	static const struct store_run_filter all = {0};
	filter = filter ? filter : &all;
	sqlite3_stmt *st;
	// The newest ?4 (-1: all, SQLite's "no limit"), listed oldest first.
	int rc = prepare(store,
			 "SELECT * FROM (SELECT " RUN_COLUMNS " FROM runs WHERE " RUN_FILTER_WHERE
			 " ORDER BY start_ms DESC, id DESC LIMIT ?4) ORDER BY start_ms, id",
			 "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	bind_run_filter(st, filter);
	sqlite3_bind_int64(st, 4, filter->limit > 0 ? filter->limit : -1);
	bool any = false;
	return runs_step(store, st, fn, ctx, &any);
}

int store_runs_count(struct store *store, const struct store_run_filter *filter, int64_t *count) {
	static const struct store_run_filter all = {0};
	filter = filter ? filter : &all;
	sqlite3_stmt *st;
	int rc = prepare(store, "SELECT count(*) FROM runs WHERE " RUN_FILTER_WHERE, "a runs count",
			 &st);
	if (rc < 0) {
		return rc;
	}
	bind_run_filter(st, filter);
	rc = sqlite3_step(st);
	*count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	rc = rc == SQLITE_ROW ? 0 : fail(store, rc, "could not count runs");
	sqlite3_finalize(st);
	return rc;
}

int store_run_get(struct store *store, int64_t id, store_run_fn fn, void *ctx) {
	sqlite3_stmt *st;
	int rc = prepare(store, "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?1", "a runs query",
			 &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, id);
	bool any = false;
	rc = runs_step(store, st, fn, ctx, &any);
	return rc == 0 && !any ? -ENOENT : rc;
}

int store_run_samples_scan(struct store *store, int64_t from_ms, int64_t to_ms,
			   store_run_sample_fn fn, void *ctx) {
	sqlite3_stmt *st;
	int rc = prepare(store,
			 "SELECT ts_ms, data FROM run_samples WHERE ts_ms >= ?1 AND ts_ms < ?2 "
			 "ORDER BY ts_ms",
			 "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, from_ms);
	sqlite3_bind_int64(st, 2, to_ms);
	int ret = 0;
	while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_run_sample s = {.ts_ms = sqlite3_column_int64(st, 0)};
		const uint8_t *data = sqlite3_column_blob(st, 1);
		struct codec_pair_iter it = {.p = data, .end = data + sqlite3_column_bytes(st, 1)};
		struct codec_pair p;
		while (ret == 0 && codec_pair_next(&it, &p)) {
			s.channel_id = p.id;
			s.q = p.q;
			ret = fn(ctx, &s);
		}
		if (ret == 0 && it.bad) {
			log_error("store: corrupt fast sample at %lld ms: %s", (long long)s.ts_ms,
				  store->path);
			ret = -EINVAL;
		}
	}
	sqlite3_finalize(st);
	if (ret != 0) {
		return ret;
	}
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not read fast samples");
}

static void bind_text_or_null(sqlite3_stmt *st, int col, const char *text) {
	if (text) {
		sqlite3_bind_text(st, col, text, -1, SQLITE_STATIC);
	} else {
		sqlite3_bind_null(st, col);
	}
}

static void bind_double_or_null(sqlite3_stmt *st, int col, double v) {
	if (isfinite(v)) {
		sqlite3_bind_double(st, col, v);
	} else {
		sqlite3_bind_null(st, col);
	}
}

static int run_import(struct store *store, const struct store_run_import *run, bool *added) {
	sqlite3_stmt *st;
	int rc = prepare(store,
			 "INSERT INTO runs (label, start_ms, end_ms, status, exit_code, origin, "
			 "import_key, energy_j, energy_method, temp_max_c, rss_max_bytes, figures, "
			 "error) "
			 "VALUES (?1, ?2, ?3, ?4, ?5, 'import', ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
			 "ON CONFLICT (import_key) DO NOTHING",
			 "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_text(st, 1, run->label, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, run->start_ms);
	sqlite3_bind_int64(st, 3, run->end_ms);
	sqlite3_bind_text(st, 4, run->status, -1, SQLITE_STATIC);
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
	bind_text_or_null(st, 11, run->figures);
	bind_text_or_null(st, 12, run->error);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		int err = fail(store, rc, "could not store a run");
		return err == -EEXIST ? -EINVAL
				      : err; // a CHECK, since import_key conflicts are ignored
	}
	*added = sqlite3_changes(store->db) > 0;
	return 0;
}

int store_run_import(struct store *store, const struct store_run_import *run, bool *added) {
	store->runs_changes++;

	bool ignored;
	added = added ? added : &ignored;
	*added = false;
	if (!writable(store)) {
		return -EROFS;
	}
	if (!run->label || !run->status || !run->import_key) {
		return -EINVAL;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, run_import(store, run, added));
}

/* --- runs: write side -------------------------------------------------------------------- */

/* Statements are one-off (prepare()), as on the read side above. */

static int run_begin(struct store *store, const struct store_run_new *run, int64_t *id) {
	int64_t boot = 0;
	int rc;
	if (run->boot_id && *run->boot_id && (rc = boot_row(store, run->boot_id, &boot)) < 0) {
		return rc;
	}
	sqlite3_stmt *st = NULL;
	rc = prepare(store,
		     "INSERT INTO runs (label, tags, start_ms, status, pid, boot, origin, "
		     "start_snapshot, fingerprint) VALUES (?1, ?2, ?3, 'running', ?4, ?5, "
		     "'live', ?6, ?7)",
		     "a runs query", &st);
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
	bind_text_or_null(st, 6, run->start_snapshot);
	bind_text_or_null(st, 7, run->fingerprint);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		return fail(store, rc, "could not open a run");
	}
	*id = sqlite3_last_insert_rowid(store->db);
	return 0;
}

int store_run_begin(struct store *store, const struct store_run_new *run, int64_t *id) {
	store->runs_changes++;

	if (!writable(store)) {
		return -EROFS;
	}
	if (!run->label || !*run->label) {
		log_error("store: a run needs a label");
		return -EINVAL;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, run_begin(store, run, id));
}

int store_runs_mark(struct store *store, struct store_runs_mark *mark) {
	*mark = (struct store_runs_mark){.others = store->seen_version, .own = store->runs_changes};
	return 0;
}

static bool run_status_final(const char *status) {
	static const char *const final[] = {"ok", "failed", "signaled", "timeout", "lost"};
	for (size_t i = 0; status && i < sizeof(final) / sizeof(final[0]); i++) {
		if (strcmp(status, final[i]) == 0) {
			return true;
		}
	}
	return false;
}

static int run_end(struct store *store, int64_t id, const struct store_run_end *end) {
	sqlite3_stmt *st = NULL;
	int rc = prepare(store, "SELECT status, start_ms FROM runs WHERE id = ?1", "a runs query",
			 &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	bool running = rc == SQLITE_ROW && strcmp(column_text(st, 0), "running") == 0;
	int64_t start_ms = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		return fail(store, rc, "could not read a run");
	}
	if (!running) {
		return -EALREADY;
	}
	if (end->end_ms < start_ms) {
		log_error("store: run %lld cannot end before it started", (long long)id);
		return -EINVAL;
	}
	rc = prepare(store,
		     "UPDATE runs SET end_ms = ?2, status = ?3, exit_code = ?4, signal = ?5, "
		     "energy_j = ?6, energy_method = ?7, energy_coverage = ?8, temp_max_c = ?9, "
		     "rss_max_bytes = ?10, figures = ?11, error = ?12 WHERE id = ?1 AND "
		     "status = 'running'",
		     "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, end->end_ms);
	sqlite3_bind_text(st, 3, end->status, -1, SQLITE_STATIC);
	if (end->has_exit_code) {
		sqlite3_bind_int(st, 4, end->exit_code);
	}
	if (end->has_signal) {
		sqlite3_bind_int(st, 5, end->signal);
	}
	bind_double_or_null(st, 6, end->energy_j);
	bind_text_or_null(st, 7, end->energy_method);
	bind_double_or_null(st, 8, end->energy_coverage);
	bind_double_or_null(st, 9, end->temp_max_c);
	if (end->rss_max_bytes >= 0) {
		sqlite3_bind_int64(st, 10, end->rss_max_bytes);
	}
	bind_text_or_null(st, 11, end->figures);
	bind_text_or_null(st, 12, end->error);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : fail(store, rc, "could not close a run");
}

int store_run_end(struct store *store, int64_t id, const struct store_run_end *end) {
	store->runs_changes++;

	if (!writable(store)) {
		return -EROFS;
	}
	if (!run_status_final(end->status)) {
		log_error("store: '%s' is not a status a run ends with",
			  end->status ? end->status : "");
		return -EINVAL;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	return step_end(store, run_end(store, id, end));
}

static int run_samples_put(struct store *store, const struct store_run_instant *samples, size_t n,
			   struct codec_pair *pairs) {
	int rc = known_load(store);
	if (rc < 0) {
		return rc;
	}
	sqlite3_stmt *st = NULL;
	rc = prepare(store, "INSERT OR IGNORE INTO run_samples (ts_ms, data) VALUES (?1, ?2)",
		     "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	for (size_t s = 0; s < n && rc == 0; s++) {
		const struct store_run_instant *sample = &samples[s];
		size_t m = 0;
		for (size_t i = 0; i < sample->n; i++) {
			bool found;
			size_t at = known_find(store, sample->channels[i].key, &found);
			// Unregistered channels wait for the minute cycle to register them.
			if (!found || store->known[at].id == 0 || sample->readings[i].err != 0) {
				continue;
			}
			const struct known_channel *k = &store->known[at];
			if (quantize(sample->readings[i].value, k->resolution, &pairs[m].q)) {
				pairs[m++].id = k->id;
			}
		}
		m = pairs_sort_unique(pairs, m);
		size_t len =
			encode_row(store, pairs, m, NULL, 0); // absolute: fast samples stand alone
		sqlite3_bind_int64(st, 1, sample->ts_ms);
		sqlite3_bind_blob(st, 2, store->blob, (int)len, SQLITE_STATIC);
		int step = sqlite3_step(st);
		sqlite3_reset(st);
		if (step != SQLITE_DONE) {
			rc = fail(store, step, "could not store fast samples");
		}
	}
	sqlite3_finalize(st);
	return rc;
}

int store_run_samples_put(struct store *store, const struct store_run_instant *samples, size_t n) {
	if (!writable(store)) {
		return -EROFS;
	}
	if (n == 0) {
		return 0;
	}
	size_t most = 1;
	for (size_t i = 0; i < n; i++) {
		most = samples[i].n > most ? samples[i].n : most;
	}
	int rc = step_begin(store);
	if (rc < 0) {
		return rc;
	}
	struct codec_pair *pairs = xcalloc(most, sizeof(*pairs));
	rc = run_samples_put(store, samples, n, pairs);
	free(pairs);
	return step_end(store, rc);
}

int store_runs_open_list(struct store *store, struct store_run_open **out, size_t *n) {
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = NULL;
	int rc = prepare(store,
			 "SELECT id, label, tags, start_ms, pid, start_snapshot, fingerprint "
			 "FROM runs WHERE status = 'running' ORDER BY id",
			 "a runs query", &st);
	if (rc < 0) {
		return rc;
	}
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		(*out)[(*n)++] = (struct store_run_open){
			.id = sqlite3_column_int64(st, 0),
			.label = xstrdup(column_text(st, 1)),
			.tags = xstrdup(column_text(st, 2)),
			.start_ms = sqlite3_column_int64(st, 3),
			.pid = sqlite3_column_int64(st, 4),
			.start_snapshot = dup_or_null(column_text(st, 5)),
			.fingerprint = dup_or_null(column_text(st, 6)),
		};
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_runs_open_free(*out, *n);
		*out = NULL;
		*n = 0;
		return fail(store, rc, "could not read the running runs");
	}
	return 0;
}

int store_run_start_snapshot(struct store *store, int64_t id, char **snapshot) {
	*snapshot = NULL;
	sqlite3_stmt *st = NULL;
	int rc = prepare(store, "SELECT start_snapshot FROM runs WHERE id = ?1", "a runs query",
			 &st);
	if (rc < 0) {
		return rc;
	}
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*snapshot = dup_or_null(column_text(st, 0));
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		return -ENOENT;
	}
	return rc == SQLITE_ROW ? 0 : fail(store, rc, "could not read a run's start counters");
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
