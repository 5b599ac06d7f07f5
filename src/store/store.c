/*
 * The store: thermlog's SQLite database. Migrations from sql/ (embedded at build time), one
 * transaction per cycle with the values of a cycle packed in one row of the head, closed blocks
 * compacted into chunks (store-compact.c), hourly rollups computed from the values and merged
 * into whole UTC days, retention. The schema comments in the sql/ migrations explain the layout.
 */
#include "sql/store-migrations.h"
#include "store-internal.h"

#include <assert.h>

#define SCHEMA_VERSION ((int)(sizeof(store_migrations) / sizeof(store_migrations[0])))

/* The columns run_from_row() (store-runs.c) reads, by position. */
#define RUN_COLUMNS                                                                             \
	"id, label, tags, start_ms, end_ms, status, exit_code, signal, pid, origin, energy_j, " \
	"energy_method, energy_coverage, temp_max_c, rss_max_bytes, figures, fingerprint, "     \
	"error"

/*
 * A runs query's filter: ?1 label, ?2 from, ?3 to, each NULL for any, and ?5 a JSON object of
 * tags every run must carry with their values, NULL for none (bind_run_filter()).
 */
#define RUN_FILTER_WHERE                                                                          \
	"(?1 IS NULL OR label = ?1) AND (?2 IS NULL OR start_ms >= ?2) AND "                      \
	"(?3 IS NULL OR start_ms < ?3) AND (?5 IS NULL OR (json_valid(runs.tags) AND NOT EXISTS " \
	"(SELECT 1 FROM json_each(?5) AS want WHERE NOT EXISTS (SELECT 1 FROM "                   \
	"json_each(runs.tags) AS got WHERE got.key = want.key AND got.value = want.value))))"

/* The columns episode_from_row() (store-throttle.c) reads, by position. */
#define EPISODE_COLUMNS                                                                         \
	"id, domain, start_ts, end_ts, last_seen, duration_ms, min_hz, max_hz, cause, method, " \
	"zone, trip, trip_temp_mc, trip_hyst_mc, temp_start_mc, temp_peak_mc, cooling, stuck"
#define CAMPAIGN_COLUMNS                                                                     \
	"id, name, board, suite_path, suite_hash, suite, suite_text, created_ms, ended_ms, " \
	"status, runner_pid, runner_start, fingerprint, baseline, idle_run, burst_run"

/* The store's SQL, every text of it (enum stmt, store-internal.h). */
static const char *const stmt_sql[ST_COUNT] = {
	/* --- persistent: the cycle, the scans, the rollups and the state --- */
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SAVEPOINT] = "SAVEPOINT store_step",
	[ST_RELEASE] = "RELEASE store_step",
	[ST_ROLLBACK_TO] = "ROLLBACK TO store_step",
	// Backwards from ?1 to the first cycle with a boot: imported rows have none.
	[ST_LAST_OWN_CYCLE] =
		"SELECT ts FROM samples WHERE ts <= ?1 AND boot IS NOT NULL AND " STORE_TS_IN_RANGE(
			"ts") " ORDER BY ts DESC LIMIT 1",
	[ST_LAST_OWN_CYCLE_LEGACY] =
		"SELECT ts FROM cycles WHERE ts <= ?1 AND boot IS NOT NULL AND " STORE_TS_IN_RANGE(
			"ts") " ORDER BY ts DESC LIMIT 1",
	[ST_CYCLE_INSERT] = "INSERT INTO cycles (ts, boot, clock) VALUES (?1, ?2, ?3)",
	[ST_SAMPLES_INSERT] = "INSERT INTO samples (ts, clock, data, boot) VALUES (?1, ?2, ?3, ?4)",
	[ST_SAMPLES_UPDATE] = "UPDATE samples SET data = ?2 WHERE ts = ?1",
	[ST_SAMPLES_HOUR] = "SELECT ts, data FROM samples WHERE ts >= ?1 AND ts < ?2 ORDER BY ts",
	[ST_SAMPLES_PUT] = "INSERT INTO samples (ts, clock, data, boot) VALUES (?1, ?2, ?3, ?4) "
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
	// Every row, unsynced ones too: a row is decoded against the one before it in its hour.
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
	[ST_STATE_GET] = "SELECT value FROM state WHERE key = ?1",
	[ST_STATE_SET] = "INSERT INTO state (key, value) VALUES (?1, ?2) "
			 "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
	[ST_DATA_VERSION] = "PRAGMA data_version",
	[ST_READ_BEGIN] = "BEGIN",
	// A database converted from schema 10 or earlier keeps its head's cycles in cycles until
	// the conversion ends.
	[ST_LEGACY] = "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'cycles'",
	[ST_BLOCK_EXISTS] = "SELECT 1 FROM blocks WHERE series = ?1 AND block = ?2 LIMIT 1",

	/* --- one-off: opening and migrating --- */
	[ST_USER_VERSION] = "PRAGMA user_version",
	[ST_APPLICATION_ID] = "PRAGMA application_id",
	/*
	 * A pragma takes no bound parameter: pragma_set() writes the integer after these texts
	 * (a number it formats, never input).
	 */
	[ST_USER_VERSION_SET] = "PRAGMA user_version = ",
	[ST_APPLICATION_ID_SET] = "PRAGMA application_id = ",
	[ST_CACHE_SIZE_SET] = "PRAGMA cache_size = ",
	[ST_MAX_PAGES_SET] = "PRAGMA max_page_count = ",
	[ST_SCHEMA_SIZE] = "SELECT count(*) FROM sqlite_schema",
	// store_check_schema(): the tables and indexes of a database to read against the built-in
	// ones
	[ST_SCHEMA_OBJECTS] = "SELECT type, name, sql, tbl_name FROM sqlite_schema WHERE name NOT "
			      "LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
	[ST_SCHEMA_OBJECT_TYPE] = "SELECT type, sql FROM sqlite_schema WHERE name = ?1",
	[ST_SCHEMA_OBJECT_COUNT] = "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE "
				   "'sqlite\\_%' ESCAPE '\\'",
	[ST_SCHEMA_COLUMNS] = "SELECT name, type, \"notnull\", pk, hidden FROM "
			      "pragma_table_xinfo(?1) ORDER BY cid",
	[ST_QUICK_CHECK] = "PRAGMA quick_check(1)",
	// Scripts of several statements, run by pragma().
	[ST_OPEN_CACHE] = "PRAGMA cache_size = -128; PRAGMA temp_store = MEMORY",
	[ST_OPEN_WRITER] = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
			   "PRAGMA secure_delete = OFF; PRAGMA wal_autocheckpoint = " STR(
				   WAL_CHECKPOINT_PAGES) "; "
							 "PRAGMA journal_size_limit = 4194304",
	[ST_PAGE_COUNT] = "PRAGMA page_count",
	[ST_PAGE_SIZE] = "PRAGMA page_size",
	[ST_PAGE_SIZE_NEW] = "PRAGMA page_size = " STORE_PAGE_SIZE,
	[ST_BACKUP_JOURNAL] = "PRAGMA journal_mode = DELETE",

	/* --- one-off: the series reader (store-series.c) --- */
	[ST_BLOCKS_SCAN] = "SELECT block, part, cycles, map FROM blocks WHERE series = ?1 AND "
			   "block >= ?2 AND block < ?3 ORDER BY block, part",
	[ST_CHUNKS_BLOCK] = "SELECT channel_id, data FROM chunks WHERE series = ?1 AND block = ?2 "
			    "ORDER BY channel_id, part",
	[ST_CHUNKS_CHANNEL] = "SELECT channel_id, data FROM chunks WHERE series = ?1 AND "
			      "block = ?2 AND channel_id = ?3 ORDER BY part",
	[ST_HEAD_VALUES] = "SELECT ts, clock, data, boot FROM samples WHERE ts >= ?1 AND ts < ?2 "
			   "ORDER BY ts",
	[ST_HEAD_CYCLES] = "SELECT ts, clock, boot FROM samples WHERE ts >= ?1 AND ts < ?2 "
			   "ORDER BY ts",
	[ST_HEAD_CYCLES_LEGACY] = "SELECT ts, clock, boot FROM cycles WHERE ts >= ?1 AND "
				  "ts < ?2 ORDER BY ts",
	[ST_FAST_HEAD] = "SELECT ts_ms, data FROM run_samples WHERE ts_ms >= ?1 AND ts_ms < ?2 "
			 "ORDER BY ts_ms",

	/* --- one-off: compaction (store-compact.c) --- */
	[ST_MAP_PUT] =
		"INSERT INTO blocks (series, block, part, cycles, unsynced, first, last, map) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_CHUNK_PUT] = "INSERT INTO chunks (series, block, channel_id, part, data) "
			 "VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_HEAD_DROP] = "DELETE FROM samples WHERE ts >= ?1 AND ts < ?2",
	[ST_HEAD_DROP_LEGACY] = "DELETE FROM cycles WHERE ts >= ?1 AND ts < ?2",
	[ST_FAST_HEAD_DROP] = "DELETE FROM run_samples WHERE ts_ms >= ?1 AND ts_ms < ?2",
	[ST_HEAD_PUT] = "INSERT INTO samples (ts, data, clock, boot) VALUES (?1, ?2, ?3, ?4)",
	[ST_HEAD_PUT_LEGACY] = "INSERT INTO samples (ts, data, clock) VALUES (?1, ?2, ?3)",
	[ST_CYCLE_PUT_LEGACY] = "INSERT INTO cycles (ts, boot, clock) VALUES (?1, ?2, ?3)",
	[ST_FAST_HEAD_PUT] = "INSERT INTO run_samples (ts_ms, data) VALUES (?1, ?2)",
	[ST_BLOCK_DROP] = "DELETE FROM blocks WHERE series = ?1 AND block = ?2",
	[ST_CHUNKS_DROP] = "DELETE FROM chunks WHERE series = ?1 AND block = ?2",
	// retention: blocks in [?1, ?2] with values; the head's values before ?1
	[ST_PRUNE_BLOCKS] = "SELECT DISTINCT block FROM chunks WHERE series = 0 AND block >= ?1 "
			    "AND block <= ?2 ORDER BY block LIMIT " STR(PRUNE_BLOCKS),
	// The head's rows are the cycles: their values go, the rows stay.
	[ST_PRUNE_HEAD] = "UPDATE samples SET data = x'' WHERE ts < ?1 AND data != x''",
	[ST_PRUNE_HEAD_LEGACY] = "DELETE FROM samples WHERE ts < ?1",
	[ST_CHUNK_DROP] = "DELETE FROM chunks WHERE series = ?1 AND block = ?2 AND channel_id = ?3",
	// the compacted blocks of cycles in [?1, ?2) (a rescale)
	[ST_RESCALE_BLOCKS] = "SELECT DISTINCT block FROM blocks WHERE series = 0 AND block >= ?1 "
			      "AND block < ?2 ORDER BY block",
	// The first head row at or after ?1: where the next block to compact is.
	[ST_HEAD_NEXT] = "SELECT min(ts) FROM samples WHERE ts >= ?1",
	[ST_HEAD_NEXT_LEGACY] = "SELECT min(ts) FROM (SELECT min(ts) AS ts FROM cycles WHERE "
				"ts >= ?1 UNION ALL SELECT min(ts) FROM samples WHERE ts >= ?1)",
	[ST_FAST_HEAD_NEXT] = "SELECT min(ts_ms) FROM run_samples WHERE ts_ms >= ?1",
	// the switch of a converted database (?1 unused)
	[ST_HEAD_DROP_ALL] = "DELETE FROM samples WHERE ?1 = ?1",
	[ST_CONVERT_DROP_UNSYNCED] = "DROP INDEX IF EXISTS cycles_unsynced",
	[ST_CONVERT_DROP_CYCLES] = "DROP TABLE cycles",
	// a database without a cycle: switched when it is created or migrated (a script)
	[ST_LEGACY_CYCLES] = "SELECT count(*) FROM cycles",
	[ST_LEGACY_ROWS] = "SELECT count(*) FROM samples",
	[ST_CONVERT_EMPTY] = "DROP INDEX IF EXISTS cycles_unsynced; DROP TABLE cycles; DELETE FROM "
			     "state WHERE key IN ('store.convert_to', 'store.convert_days')",

	/* --- one-off: the conversion of a database of schema 10 or earlier (store-convert.c) ---
	 */
	[ST_CONVERT_OLD_ROLLUPS] = "SELECT channel_id, count, sum, coalesce(min, 0), "
				   "coalesce(max, 0), unsynced FROM rollups WHERE hour >= ?1 AND "
				   "hour < ?2",
	[ST_CONVERT_OLD_DAY] = "SELECT cycles FROM cycle_days WHERE day = ?1",
	[ST_CONVERT_OLD_DAY_UNSYNCED] = "SELECT unsynced FROM cycle_days WHERE day = ?1",
	[ST_CONVERT_FIRST_ROLLUP] = "SELECT min(hour) FROM rollups WHERE hour >= ?1",
	[ST_CONVERT_CLEAN] = "DELETE FROM rollups WHERE hour >= ?1 AND hour < ?2",
	[ST_STATE_DELETE] = "DELETE FROM state WHERE key = ?1",

	/* --- one-off: the summaries (store-scan.c), in one read snapshot --- */
	// ?1: the day horizon; cycles of days before it from cycle_days, the rest counted
	[ST_INFO_DAYS] = "SELECT coalesce(sum(cycles + unsynced), 0), coalesce(sum(unsynced), 0) "
			 "FROM cycle_days WHERE day < ?1",
	[ST_INFO_BLOCKS] = "SELECT coalesce(sum(cycles), 0), coalesce(sum(unsynced), 0) FROM "
			   "blocks WHERE series = 0 AND block >= ?1",
	[ST_INFO_HEAD] = "SELECT (SELECT count(*) FROM samples WHERE ts >= ?1), (SELECT count(*) "
			 "FROM samples WHERE ts >= ?1 AND clock = 2), (SELECT min(ts) FROM "
			 "samples WHERE " STORE_TS_IN_RANGE(
				 "ts") "), (SELECT max(ts) FROM "
				       "samples WHERE " STORE_TS_IN_RANGE("ts") ")",
	// the partial index cycles_unsynced counts the unsynced ones
	[ST_INFO_HEAD_LEGACY] =
		"SELECT (SELECT count(*) FROM cycles WHERE ts >= ?1), (SELECT "
		"count(*) FROM cycles WHERE clock = 2 AND ts >= ?1), (SELECT "
		"min(ts) FROM cycles WHERE " STORE_TS_IN_RANGE(
			"ts") "), (SELECT "
			      "max(ts) FROM cycles WHERE " STORE_TS_IN_RANGE("ts") ")",
	[ST_FIRST_BLOCK] = "SELECT first FROM blocks WHERE series = ?1 AND " STORE_TS_IN_RANGE(
		"first") " ORDER BY block, part LIMIT 1",
	[ST_LAST_BLOCK] = "SELECT last FROM blocks WHERE series = ?1 AND " STORE_TS_IN_RANGE(
		"last") " ORDER BY block DESC, part DESC LIMIT 1",
	// backwards from ?2: the compacted blocks' maps, newest first
	[ST_BLOCKS_DOWN] = "SELECT block, part, map FROM blocks WHERE series = ?1 AND block <= ?2 "
			   "ORDER BY block DESC, part",

	/* --- one-off: the repair, what it drops after ?1 --- */
	[ST_DROP_SAMPLES] = "DELETE FROM samples WHERE ts > ?1",
	[ST_DROP_CYCLES] = "DELETE FROM cycles WHERE ts > ?1",
	// after the block across the cut went back to the head: every block starts after ?1
	[ST_DROP_BLOCKS] = "DELETE FROM blocks WHERE series = 0 AND block > ?1",
	[ST_DROP_CHUNKS] = "DELETE FROM chunks WHERE series = 0 AND block > ?1",
	[ST_DROP_ROLLUPS] = "DELETE FROM rollups WHERE hour > ?1",
	[ST_DROP_CHANNELS_SEEN] = "UPDATE channels SET last_seen = max(first_seen, ?1) "
				  "WHERE last_seen > ?1",
	// ?1 is the day of the cut: the days from it on are merged again
	[ST_DROP_ROLLUP_DAYS] = "DELETE FROM rollup_days WHERE day >= ?1",
	[ST_DROP_CYCLE_DAYS] = "DELETE FROM cycle_days WHERE day >= ?1",

	/* --- one-off: the rescale of one channel (its samples through ST_SAMPLES_UPDATE) --- */
	[ST_RESCALE_SAMPLES] = "SELECT ts, data FROM samples WHERE ts > ?1 AND ts < ?2 ORDER BY ts "
			       "LIMIT 512",
	[ST_RESCALE_ROLLUPS] = "SELECT hour, sum, min, max, hist FROM rollups WHERE "
			       "channel_id = ?1 AND hour > ?2 AND hour < ?3 ORDER BY hour LIMIT 1",
	[ST_RESCALE_ROLLUP_PUT] = "UPDATE rollups SET sum = ?3, min = ?4, max = ?5, hist = ?6 "
				  "WHERE hour = ?1 AND channel_id = ?2",
	[ST_RESCALE_ROLLUP_DAYS] = "SELECT day, sum, min, max, hist FROM rollup_days WHERE "
				   "channel_id = ?1 AND day > ?2 AND day < ?3 ORDER BY day LIMIT 1",
	[ST_RESCALE_ROLLUP_DAY_PUT] = "UPDATE rollup_days SET sum = ?3, min = ?4, max = ?5, "
				      "hist = ?6 WHERE day = ?1 AND channel_id = ?2",
	[ST_RESCALE_PENDING_PUT] = "INSERT INTO rescales (channel_id, factor, before) VALUES (?1, "
				   "?2, ?3) ON CONFLICT (channel_id) DO UPDATE SET factor = "
				   "excluded.factor, before = excluded.before",
	[ST_RESCALE_PENDING_DROP] = "DELETE FROM rescales WHERE channel_id = ?1",
	// How far back a batch of ?3 rows before ?2 reaches, raw rows (which may hold channel ?1)
	// and its hourly rollups: the older edge of the two (NULL: fewer left than that).
	// a compacted block counts as 240 rows (4 hours of one-minute cycles)
	[ST_RESCALE_EDGE] = "SELECT max(t) FROM (SELECT (SELECT ts FROM samples WHERE ts < ?2 "
			    "ORDER BY ts DESC LIMIT 1 OFFSET ?3) AS t UNION ALL SELECT (SELECT "
			    "hour FROM rollups WHERE channel_id = ?1 AND hour < ?2 ORDER BY hour "
			    "DESC LIMIT 1 OFFSET ?3) UNION ALL SELECT (SELECT block FROM blocks "
			    "WHERE series = 0 AND part = 0 AND block < ?2 ORDER BY block DESC "
			    "LIMIT 1 OFFSET ?3 / 240))",
	[ST_CHANNEL_RESOLUTION] = "UPDATE channels SET resolution = ?2 WHERE id = ?1",

	/* --- one-off: runs, rare next to the cycle's statements --- */
	/*
	 * The newest ?4 (-1: all), listed oldest first: in the order of the runs_start index (its
	 * entries end with the id), past as many as there are beyond ?4. One statement, so the
	 * count and the rows are of one snapshot; no sort, so one row is in memory at a time
	 * whatever the number of runs (a sort of the newest ?4 held them all, figures and all).
	 */
	[ST_RUNS_SCAN] =
		"SELECT " RUN_COLUMNS " FROM runs WHERE " RUN_FILTER_WHERE
		" ORDER BY start_ms, id LIMIT -1 OFFSET (SELECT CASE WHEN ?4 < 0 "
		"THEN 0 ELSE max(0, count(*) - ?4) END FROM runs WHERE " RUN_FILTER_WHERE ")",
	// The same by label (runs_label_start), for what is summed per label in one pass.
	[ST_RUNS_SCAN_BY_LABEL] = "SELECT " RUN_COLUMNS " FROM runs WHERE " RUN_FILTER_WHERE
				  " ORDER BY label, start_ms, id",
	[ST_RUNS_COUNT] = "SELECT count(*) FROM runs WHERE " RUN_FILTER_WHERE,
	// The run ?1.
	[ST_RUN_GET] = "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?1",
	[ST_RUN_STATE] = "SELECT status, start_ms FROM runs WHERE id = ?1",
	[ST_RUN_START_SNAPSHOT] = "SELECT start_snapshot FROM runs WHERE id = ?1",
	[ST_RUNS_OPEN] = "SELECT id, label, tags, start_ms, pid, start_snapshot, fingerprint "
			 "FROM runs WHERE status = 'running' ORDER BY id",
	[ST_RUN_IMPORT] =
		"INSERT INTO runs (label, start_ms, end_ms, status, exit_code, origin, "
		"import_key, energy_j, energy_method, temp_max_c, rss_max_bytes, "
		"figures, error, tags) "
		"VALUES (?1, ?2, ?3, ?4, ?5, 'import', ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
		"ON CONFLICT (import_key) DO NOTHING",
	[ST_RUN_INSERT] = "INSERT INTO runs (label, tags, start_ms, status, pid, boot, origin, "
			  "start_snapshot, fingerprint) VALUES (?1, ?2, ?3, 'running', ?4, ?5, "
			  "'live', ?6, ?7)",
	[ST_RUN_END] = "UPDATE runs SET end_ms = ?2, status = ?3, exit_code = ?4, signal = ?5, "
		       "energy_j = ?6, energy_method = ?7, energy_coverage = ?8, temp_max_c = ?9, "
		       "rss_max_bytes = ?10, figures = ?11, error = ?12 WHERE id = ?1 AND "
		       "status = 'running'",
	[ST_RUN_SAMPLES_PUT] = "INSERT OR IGNORE INTO run_samples (ts_ms, data) VALUES (?1, ?2)",
	// The metrics of the runs a filter selects (its limit left aside), in the runs' order.
	[ST_RUN_METRICS_SCAN] = "SELECT m.run_id, m.name, m.value, m.unit FROM run_metrics m "
				"JOIN runs ON runs.id = m.run_id WHERE " RUN_FILTER_WHERE
				" ORDER BY runs.start_ms, runs.id, m.name",
	[ST_RUN_METRICS_GET] = "SELECT run_id, name, value, unit FROM run_metrics "
			       "WHERE run_id = ?1 ORDER BY name",
	[ST_RUN_METRIC_UNIT] = "SELECT unit FROM run_metrics WHERE name = ?1 AND unit <> '' "
			       "LIMIT 1",
	[ST_RUN_METRIC_PUT] = "INSERT INTO run_metrics (run_id, name, value, unit) VALUES "
			      "(?1, ?2, ?3, ?4) ON CONFLICT (run_id, name) DO UPDATE SET "
			      "value = excluded.value, unit = excluded.unit",

	/* --- one-off: throttle episodes --- */
	[ST_EPISODE_INSERT] = "INSERT INTO throttle_episodes (domain, start_ts, end_ts, last_seen, "
			      "duration_ms, min_hz, max_hz, cause, method, zone, trip, "
			      "trip_temp_mc, trip_hyst_mc, temp_start_mc, temp_peak_mc, cooling, "
			      "stuck) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
			      "?13, ?14, ?15, ?16, ?17)",
	[ST_EPISODE_UPDATE] = "UPDATE throttle_episodes SET domain = ?1, start_ts = ?2, end_ts = "
			      "?3, last_seen = ?4, duration_ms = ?5, min_hz = ?6, max_hz = ?7, "
			      "cause = ?8, method = ?9, zone = ?10, trip = ?11, trip_temp_mc = "
			      "?12, trip_hyst_mc = ?13, temp_start_mc = ?14, temp_peak_mc = ?15, "
			      "cooling = ?16, stuck = ?17 WHERE id = ?18",
	[ST_RESCALES_LIST] = "SELECT channel_id, factor, before FROM rescales ORDER BY channel_id",
	[ST_EPISODES_CLOSE] = "UPDATE throttle_episodes SET end_ts = last_seen, "
			      "duration_ms = (last_seen - start_ts) * 1000 WHERE end_ts IS NULL",
	[ST_EPISODES_PRUNE] = "DELETE FROM throttle_episodes WHERE end_ts < ?1",
	[ST_EPISODES_LIST] = "SELECT " EPISODE_COLUMNS " FROM throttle_episodes WHERE "
			     "start_ts <= ?2 AND coalesce(end_ts, last_seen) >= ?1 "
			     "ORDER BY start_ts, id",

	/* --- one-off: campaigns (store-campaign.c) --- */
	[ST_CAMPAIGN_INSERT] = "INSERT INTO campaigns (name, board, suite_path, suite_hash, suite, "
			       "suite_text, created_ms, ended_ms, status, runner_pid, "
			       "runner_start, fingerprint, baseline, idle_run, burst_run) VALUES "
			       "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
	[ST_CAMPAIGN_UPDATE] = "UPDATE campaigns SET name = ?1, board = ?2, suite_path = ?3, "
			       "suite_hash = ?4, suite = ?5, suite_text = ?6, created_ms = ?7, "
			       "ended_ms = ?8, status = ?9, runner_pid = ?10, runner_start = ?11, "
			       "fingerprint = ?12, baseline = ?13, idle_run = ?14, burst_run = ?15 "
			       "WHERE id = ?16",
	[ST_CAMPAIGN_GET] = "SELECT " CAMPAIGN_COLUMNS " FROM campaigns WHERE id = ?1",
	[ST_CAMPAIGN_LATEST] = "SELECT " CAMPAIGN_COLUMNS " FROM campaigns WHERE name = ?1 "
			       "ORDER BY created_ms DESC, id DESC LIMIT 1",
	[ST_CAMPAIGN_LIST] = "SELECT " CAMPAIGN_COLUMNS " FROM campaigns ORDER BY created_ms, id",
	[ST_CAMPAIGN_RUN_PUT] =
		"INSERT INTO campaign_runs (campaign, seq, step, rep, warmup, run, "
		"start, gate, gate_wait_ms, gate_detail, warm_ms, "
		"missing_metrics) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
		"?11, ?12) ON CONFLICT (campaign, seq) DO UPDATE SET step = "
		"excluded.step, rep = excluded.rep, warmup = excluded.warmup, run = "
		"excluded.run, start = excluded.start, gate = excluded.gate, "
		"gate_wait_ms = excluded.gate_wait_ms, gate_detail = "
		"excluded.gate_detail, warm_ms = excluded.warm_ms, missing_metrics = "
		"excluded.missing_metrics",
	[ST_CAMPAIGN_RUNS] = "SELECT campaign, seq, step, rep, warmup, run, start, gate, "
			     "gate_wait_ms, gate_detail, warm_ms, missing_metrics FROM "
			     "campaign_runs WHERE campaign = ?1 ORDER BY seq",
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

int64_t store_mono_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Logs @what with SQLite's message (or the system's, for an I/O error) and returns the errno. */
int store_fail(struct store *store, int rc, const char *what) {
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
	uint64_t held = 0;
	if (err == -ENOSPC &&
	    !log_limit_pass(&store->full_said, store_mono_ms(), FULL_SAY_MS, &held)) {
		log_debug("store: %s: %s: %s", what, store->path, sqlite3_errmsg(store->db));
		return err; // said lately: every refused request would say it again
	}
	char more[64] = "";
	if (held) {
		snprintf(more, sizeof(more), " (and %llu more writes since)",
			 (unsigned long long)held);
	}
	log_error("store: %s: %s: %s%s", what, store->path,
		  sys ? strerror(-err) : sqlite3_errmsg(store->db), more);
	return err;
}

/* --- statements --------------------------------------------------------------------------- */

sqlite3_stmt *store_stmt(struct store *store, enum stmt which) {
	assert(which < ST_PERSISTENT_COUNT); // rare work is one-off: store_prepare()
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

/* store_stmt() with the window bound: ?1 = @from, ?2 = @to, as the scans' texts take it. */
void store_window_clamp(int64_t *from, int64_t *to) {
	*from = *from < -STORE_TS_LIMIT ? -STORE_TS_LIMIT : *from;
	*to = *to > STORE_TS_LIMIT + 1 ? STORE_TS_LIMIT + 1 : *to;
}

sqlite3_stmt *store_stmt_window(struct store *store, enum stmt which, int64_t from, int64_t to) {
	sqlite3_stmt *st = store_stmt(store, which);
	store_window_clamp(&from, &to);
	if (st) {
		sqlite3_bind_int64(st, 1, from);
		sqlite3_bind_int64(st, 2, to);
	}
	return st;
}

int store_prepare_on(sqlite3 *db, enum stmt which, sqlite3_stmt **st) {
	return sqlite3_prepare_v2(db, stmt_sql[which], -1, st, NULL);
}

/*
 * Prepares a one-off statement for work too rare for a persistent slot (rescaling, repair,
 * runs); the caller finalizes it. A failure logs "could not prepare @what". 0 or a negative
 * errno.
 */
int store_prepare(struct store *store, enum stmt which, const char *what, sqlite3_stmt **st) {
	int rc = store_prepare_on(store->db, which, st);
	if (rc == SQLITE_OK) {
		return 0;
	}
	char msg[64];
	snprintf(msg, sizeof(msg), "could not prepare %s", what);
	return store_fail(store, rc, msg);
}

/* store_prepare() with the window bound: ?1 = @from, ?2 = @to. */
int store_prepare_window(struct store *store, enum stmt which, int64_t from, int64_t to,
			 const char *what, sqlite3_stmt **st) {
	int rc = store_prepare(store, which, what, st);
	if (rc == 0) {
		sqlite3_bind_int64(*st, 1, from);
		sqlite3_bind_int64(*st, 2, to);
	}
	return rc;
}

int store_prepare_param(struct store *store, enum stmt which, int64_t param, const char *what,
			sqlite3_stmt **st) {
	int rc = store_prepare(store, which, what, st);
	if (rc == 0 && sqlite3_bind_parameter_count(*st) > 0) {
		sqlite3_bind_int64(*st, 1, param);
	}
	return rc;
}

int store_scan_result(struct store *store, int rc, int ret, const char *what) {
	if (ret != 0) {
		return ret;
	}
	return rc == SQLITE_DONE ? 0 : store_fail(store, rc, what);
}

void store_done(sqlite3_stmt *st) {
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* Runs a statement that returns no rows; returns the SQLite result code. */
int store_step_done(sqlite3_stmt *st) {
	int rc = sqlite3_step(st);
	store_done(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static int exec(struct store *store, enum stmt which, const char *what) {
	sqlite3_stmt *st = store_stmt(store, which);
	if (!st) {
		return -EIO;
	}
	int rc = store_step_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, what);
}

int store_step_once(struct store *store, sqlite3_stmt *st, const char *what) {
	int step = sqlite3_step(st);
	int rc = step == SQLITE_DONE || step == SQLITE_ROW ? 0 : store_fail(store, step, what);
	sqlite3_finalize(st);
	return rc;
}

int store_exec_param(struct store *store, enum stmt which, int64_t param) {
	sqlite3_stmt *st;
	int rc = store_prepare(store, which, "a change", &st);
	if (rc == 0) {
		sqlite3_bind_int64(st, 1, param);
		rc = store_step_once(store, st, "could not write");
	}
	return rc;
}

int store_query_one(struct store *store, enum stmt which, int64_t param, int64_t *out, bool *null) {
	sqlite3_stmt *st;
	int rc = store_prepare_param(store, which, param, "a query", &st);
	if (rc < 0) {
		return rc;
	}
	int step = sqlite3_step(st);
	*null = step != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL;
	*out = *null ? 0 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return step == SQLITE_ROW || step == SQLITE_DONE
		       ? 0
		       : store_fail(store, step, "could not query");
}

int store_schema_version(void) {
	return SCHEMA_VERSION;
}

const char *store_migration(int v) {
	return v >= 0 && v < SCHEMA_VERSION ? store_migrations[v] : NULL;
}

/* One integer from a single-row query with an optional integer parameter; *null if NULL. */
int store_query_int(struct store *store, enum stmt which, int64_t param, int64_t *out, bool *null) {
	sqlite3_stmt *st = store_stmt(store, which);
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
	store_done(st);
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, "could not query");
}

/* --- transactions ------------------------------------------------------------------------ */

bool store_writable(struct store *store) {
	if (store->mode != STORE_MODE_WRITE) {
		log_error("store: %s is open read-only", store->path);
		return false;
	}
	return true;
}

/*
 * A step of work is its own BEGIN IMMEDIATE transaction, or a savepoint inside an enclosing
 * store_begin() transaction, so a failed step never leaves half of itself behind either way.
 * A store opened read-only takes none: -EROFS, logged.
 */
int store_step_begin(struct store *store) {
	if (!store_writable(store)) {
		return -EROFS;
	}
	store->write_steps++; // a scan held across calls is read again after any write
	if (store->depth > 0) {
		if (store->aborted) {
			return store->aborted;
		}
		return exec(store, ST_SAVEPOINT, "could not start a savepoint");
	}
	return exec(store, ST_BEGIN, "could not start a transaction");
}

int store_step_end(struct store *store, int err) {
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
	store_known_clear(store); // ids inserted by the failed step are gone
	return err;
}

int store_begin(struct store *store) {
	if (!store_writable(store)) {
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
		store_known_clear(store);
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
	store_known_clear(store);
	if (sqlite3_get_autocommit(store->db)) {
		return 0;
	}
	return exec(store, ST_ROLLBACK, "could not roll back");
}

/* --- the connection's caches and column helpers ---------------------------------------- */

static void known_free(struct known_channel *k) {
	free(k->key);
	free(k->source);
	free(k->label);
	free(k->path);
	free(k->meta);
}

void store_known_clear(struct store *store) {
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

char *store_dup_or_null(const char *s) {
	return s ? xstrdup(s) : NULL;
}

bool store_text_eq(const char *a, const char *b) {
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

const char *store_column_text(sqlite3_stmt *st, int col) {
	return (const char *)sqlite3_column_text(st, col);
}

void store_bind_text_or_null(sqlite3_stmt *st, int col, const char *text) {
	if (text) {
		sqlite3_bind_text(st, col, text, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(st, col);
	}
}

/* --- compacted blocks and the head's table (store-series.c reads them) ----------------- */

/*
 * Whether the database still holds the head's cycles in the table cycles (one converted from
 * an earlier schema, until the conversion ends). Read inside the caller's snapshot.
 */
int store_legacy(struct store *store, bool *legacy) {
	int64_t n = 0;
	bool none;
	int rc = store_query_int(store, ST_LEGACY, 0, &n, &none);
	*legacy = rc == 0 && n > 0;
	return rc;
}

void store_block_init(struct block_buf *b) {
	*b = (struct block_buf){.block = INT64_MIN};
}

void store_block_finish(struct block_buf *b) {
	for (size_t i = 0; i < b->cap_chans; i++) {
		free(b->chans[i].idx);
		free(b->chans[i].q);
	}
	free(b->chans);
	free(b->cycles);
	free(b->ts);
	free(b->palette);
	store_block_init(b);
}

void store_series_cache_finish(struct store *store) {
	store_block_finish(&store->cache);
	free(store->cache_ids);
	store->cache_ids = NULL;
}

/* --- blobs ------------------------------------------------------------------------------- */

/* The byte formats are codec.c's; the store only owns the growable buffer they are built in. */
uint8_t *store_blob_reserve(struct store *store, size_t n) {
	if (n > store->blob_cap) {
		store->blob = xgrow(store->blob, &store->blob_cap, n, 1);
	}
	return store->blob;
}

/* A sample row coded against the row before it in its hour (@base, or NULL for none). */
size_t store_encode_row(struct store *store, const struct codec_pair *pairs, size_t n,
			const struct codec_pair *base, size_t n_base) {
	return codec_row_encode(store_blob_reserve(store, CODEC_ROW_MAX(n)), pairs, n, base,
				n_base);
}

/* A base of no pair: a delta row is read against a base, which may be empty. */
const struct codec_pair store_no_pair = {0};

void store_chain_init(struct chain *c) {
	*c = (struct chain){.hour = INT64_MIN};
}

void store_chain_finish(struct chain *c) {
	free(c->prev);
	free(c->cur);
}

/*
 * Decodes the row at @ts, the next one of a scan in ts order that started at the first row
 * of an hour, into c->prev / c->n_prev. False when the row is damaged: cut short, or a delta
 * row that opens its hour (its base is missing).
 */
bool store_chain_next(struct chain *c, int64_t ts, const uint8_t *data, size_t len) {
	// Compared, not divided: rows come in ts order, mostly of the same hour.
	bool same_hour = c->hour != INT64_MIN && ts >= c->hour &&
			 (uint64_t)ts - (uint64_t)c->hour < HOUR_S,
	     bad;
	const struct codec_pair *base = !same_hour ? NULL : c->prev ? c->prev : &store_no_pair;
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
	c->hour = bad ? INT64_MIN : timefmt_floor(ts, HOUR_S);
	return !bad;
}

/* --- opening ------------------------------------------------------------------------------ */

static int exec_text(struct store *store, const char *sql) {
	int rc = sqlite3_exec(store->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : store_fail(store, rc, sql);
}

/* Runs the text of @which, one statement or several, one-off; a failure logs the text. */
static int pragma(struct store *store, enum stmt which) {
	return exec_text(store, stmt_sql[which]);
}

/* Runs the pragma @which (a ..._SET text) with the value @value. */
static int pragma_set(struct store *store, enum stmt which, long long value) {
	char sql[64];
	snprintf(sql, sizeof(sql), "%s%lld", stmt_sql[which], value);
	return exec_text(store, sql);
}

int store_pragma_int(struct store *store, enum stmt which, int64_t *out) {
	const char *sql = stmt_sql[which];
	sqlite3_stmt *st;
	int rc = store_prepare_on(store->db, which, &st);
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
	int rc = store_pragma_int(store, ST_APPLICATION_ID, &app_id);
	if (rc == 0) {
		rc = store_pragma_int(store, ST_SCHEMA_SIZE, &tables);
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
	int rc = pragma(store, ST_BEGIN);
	if (rc < 0) {
		return rc;
	}
	int64_t version;
	rc = store_pragma_int(store, ST_USER_VERSION, &version);
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
		// Written inside the transaction with the schema.
		rc = pragma_set(store, ST_USER_VERSION_SET, (long long)v + 1);
	}
	if (rc == 0 && version == 0) {
		rc = pragma_set(store, ST_APPLICATION_ID_SET, APPLICATION_ID);
	}
	// A database without a cycle has nothing to convert: its head is the new one at once.
	bool legacy = false, none;
	int64_t cycles = 0, rows = 0;
	if (rc == 0 && (rc = store_legacy(store, &legacy)) == 0 && legacy &&
	    (rc = store_query_one(store, ST_LEGACY_CYCLES, 0, &cycles, &none)) == 0 &&
	    (rc = store_query_one(store, ST_LEGACY_ROWS, 0, &rows, &none)) == 0 && cycles == 0 &&
	    rows == 0) {
		rc = pragma(store, ST_CONVERT_EMPTY);
	}
	if (rc == 0) {
		rc = pragma(store, ST_COMMIT);
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
		sqlite3_exec(store->db, stmt_sql[ST_ROLLBACK], NULL, NULL, NULL);
	}
	return rc;
}

static int check_reader(struct store *store) {
	int64_t version;
	int rc = store_pragma_int(store, ST_USER_VERSION, &version);
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
		rc = store_check_schema(store);
	}
	return rc;
}

/* A write-mode database must be checked once: corruption found now can be moved aside. */
static int quick_check(struct store *store) {
	sqlite3_stmt *st;
	int rc = store_prepare_on(store->db, ST_QUICK_CHECK, &st);
	const char *result = NULL;
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		result = store_column_text(st, 0);
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

/* STORE_MODE_FOREIGN: interrupts the statement running past the deadline. */
static int handle_progress(void *arg) {
	struct store *store = arg;
	if (store_mono_ms() >= store->deadline_ms) {
		store->timed_out = true;
		return 1;
	}
	return 0;
}

/*
 * A path that names something other than a regular file (a FIFO, a device, a directory) is no
 * database: refused before SQLite opens it, which would wait for ever for a FIFO's writer.
 */
static int refuse_special(const char *path) {
	struct stat st;
	if (strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0 ||
	    stat(path, &st) < 0 || S_ISREG(st.st_mode)) {
		return 0; // absent (a writer creates it), or a file: SQLite says the rest
	}
	const char *what = S_ISFIFO(st.st_mode)   ? "a FIFO"
			   : S_ISDIR(st.st_mode)  ? "a directory"
			   : S_ISSOCK(st.st_mode) ? "a socket"
						  : "a device";
	log_error("store: %s is not a regular file (%s): not a database", path, what);
	return -EINVAL;
}

int store_open(struct store **out, const char *path, enum store_mode mode) {
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, configure_sqlite);
	*out = NULL;
	int special = refuse_special(path);
	if (special < 0) {
		return special;
	}
	struct store *store = xcalloc(1, sizeof(*store));
	store->path = xstrdup(path);
	store->mode = mode;
	store_block_init(&store->cache);
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
		store->deadline_ms = store_mono_ms() + FOREIGN_DEADLINE_S * 1000;
		sqlite3_progress_handler(store->db, 1000, handle_progress, store);
	}
	// Identity first, so a foreign file gets a clear error before any pragma touches it.
	if (mode != STORE_MODE_WRITE) {
		err = check_reader(store);
	} else {
		int64_t version = 0;
		err = store_pragma_int(store, ST_USER_VERSION, &version);
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
		err = pragma(store, ST_OPEN_CACHE);
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
	err = store_pragma_int(store, ST_PAGE_COUNT, &pages);
	if (err == 0 && pages == 0) {
		err = pragma(store, ST_PAGE_SIZE_NEW);
	}
	if (err < 0) {
		goto err_db;
	}
	/*
	 * Debian builds SQLite with SECURE_DELETE and WAL synchronous=FULL: both cost flash writes
	 * for nothing here. NORMAL in WAL mode syncs only at checkpoints; a crash keeps every
	 * commit, a power cut may lose the last few but never corrupts. The auto-checkpoint at
	 * 1000 pages (about 8 hours of one-minute cycles) coalesces the hot leaf pages so each is
	 * written to the database file once (the daemon moves it off its loop:
	 * store_checkpoint_aside()); journal_size_limit truncates a WAL that grew.
	 */
	err = pragma(store, ST_OPEN_WRITER);
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
	// A failure is logged; the cache keeps its size then.
	pragma_set(store, ST_CACHE_SIZE_SET, -(long long)kib);
}

void store_release_memory(struct store *store) {
	if (store) {
		sqlite3_db_release_memory(store->db);
	}
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
	store_checkpointer_stop(store); // closed before the writer, whose close is the last
	for (int i = 0; i < ST_PERSISTENT_COUNT; i++) {
		sqlite3_finalize(store->stmts[i]);
	}
	for (size_t i = 0; i < sizeof(store->scan_spare) / sizeof(store->scan_spare[0]); i++) {
		sqlite3_finalize(store->scan_spare[i]);
	}
	sqlite3_close(store->db);
	store_series_cache_finish(store);
	store_known_clear(store);
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
	free(store->path);
	free(store);
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
	    sqlite3_exec(dest, stmt_sql[ST_BACKUP_JOURNAL], NULL, NULL, NULL) != SQLITE_OK) {
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
	return pragma_set(store, ST_MAX_PAGES_SET, (long long)max_pages);
}
