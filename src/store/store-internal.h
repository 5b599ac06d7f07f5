/*
 * The store's private header, for src/store/ alone (the contract is store.h): struct
 * store, its prepared statements and the helpers the store's files share.
 */
#ifndef STORE_INTERNAL_H
#define STORE_INTERNAL_H

#include "store.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blockcodec.h"
#include "buf.h"
#include "codec.h"
#include "log.h"
#include "timefmt.h"
#include "xalloc.h"

#define APPLICATION_ID        0x54484c47    // "THLG": tells our databases from other SQLite files
#define FOREIGN_LENGTH_MAX    (1024 * 1024) // STORE_MODE_FOREIGN: longest string or blob read
#define FOREIGN_DEADLINE_S    10            // STORE_MODE_FOREIGN: all its reads, from the open
#define HOUR_S                3600
#define WAL_CHECKPOINT_PAGES  1000 // the WAL size at which the writer checkpoints (either way)
#define PRUNE_BLOCKS          64 // compacted blocks whose values retention deletes per transaction
#define STR_(x)               #x
#define STR(x)                STR_(x)
#define ROLLUP_CHUNK_S        (24 * HOUR_S) // hours rolled up per transaction
#define STATE_HORIZON         "store.rollup_horizon"
#define STATE_RAW_HORIZON     "store.raw_horizon"
#define STATE_DAY_HORIZON     "store.day_horizon" // days before it are merged in the daily tables
#define DAY_S                 (24 * HOUR_S)
#define DAY_CHUNK_S           (31 * DAY_S)               // days merged per transaction
#define STATE_HISTORY_GEN     "store.history_generation" // bumped by each import that adds a value
#define STORE_PAGE_SIZE       "2048"                     // bytes, for new databases
#define BLOCK_S               (4 * HOUR_S) // a block of cycles, compacted as one (UTC-aligned)
#define FAST_BLOCK_S          (15 * 60)    // a block of fast samples
#define BLOCK_CYCLES_MAX      (1 << 22)    // the most cycles a block may hold (any interval)
#define STATE_COMPACT_HORIZON "store.compact_horizon" // blocks of cycles before it: compacted
#define STATE_FAST_HORIZON    "store.fast_horizon"    // blocks of fast samples before it: too
#define FULL_SAY_MS           60000 // a full disk's refused writes are said once a minute
/*
 * The times a stored row may have, s since epoch: 2^40 s, 34,800 years either side of 1970.
 * Rows beyond (a crafted database's, at the 64-bit limits) are never read, so no difference or
 * product of times (in ms too) can overflow downstream. Both as a number and for SQL texts.
 */
#define STORE_TS_LIMIT        INT64_C(1099511627776)
#define STORE_TS_LIMIT_SQL    "1099511627776"
#define STORE_TS_LIMIT_MS_SQL "1099511627776000"
/*
 * A stored integer's magnitude stays below 2^53 (channel_plausible()'s representable: exact in
 * a double); a value beyond is a crafted database's, never read, so no sum of squares overflows.
 */
#define STORE_Q_LIMIT       INT64_C(9007199254740992)
#define STORE_Q_IN_RANGE(q) ((q) > -STORE_Q_LIMIT && (q) < STORE_Q_LIMIT)
#define STORE_TS_IN_RANGE(col) \
	"(" col " BETWEEN -" STORE_TS_LIMIT_SQL " AND " STORE_TS_LIMIT_SQL ")"

/*
 * Every SQL text of the store, by name; the texts are stmt_sql[] in store.c. The first group is
 * persistent (store_stmt(): prepared once per connection, kept for the cycle and the scans);
 * the rest is rare work, prepared from its text each time and finalized (store_prepare(),
 * store_pragma_int(), and store.c's pragma() for the scripts of several statements), so it
 * holds no memory on the connections that never run it. Any text may be run one-off. The
 * schema itself is the migrations of sql/.
 */
enum stmt {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SAVEPOINT,
	ST_RELEASE,
	ST_ROLLBACK_TO,
	ST_LAST_OWN_CYCLE,
	ST_LAST_OWN_CYCLE_LEGACY,
	ST_CYCLE_INSERT,
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
	ST_SCAN_ROLLUPS,
	ST_ROLLUP_PUT,
	ST_SCAN_CYCLE_DAYS,
	ST_SCAN_ROLLUP_DAYS,
	ST_CYCLE_DAY_PUT,
	ST_ROLLUP_DAY_PUT,
	ST_STATE_GET,
	ST_STATE_SET,
	ST_DATA_VERSION,
	ST_EPISODE_INSERT, // each cycle while a domain is throttled (store-throttle.c)
	ST_EPISODE_UPDATE,
	ST_RESCALES_LIST, // every scan reads what is still being rescaled (store-rescale.c)
	ST_READ_BEGIN,    // a read of several statements: one snapshot (store-series.c)
	ST_LEGACY,
	ST_BLOCK_EXISTS,     // each write of a cycle: is its block compacted? (store-compact.c)
	ST_PERSISTENT_COUNT, // the persistent ones end here

	// opening and migrating (store.c)
	ST_USER_VERSION = ST_PERSISTENT_COUNT,
	ST_APPLICATION_ID,
	ST_USER_VERSION_SET, // ..._SET: a prefix, pragma_set() appends the value
	ST_APPLICATION_ID_SET,
	ST_CACHE_SIZE_SET,
	ST_MAX_PAGES_SET,
	ST_SCHEMA_SIZE,
	ST_SCHEMA_OBJECTS,
	ST_SCHEMA_OBJECT_TYPE,
	ST_SCHEMA_OBJECT_COUNT,
	ST_SCHEMA_COLUMNS,
	ST_QUICK_CHECK,
	ST_OPEN_CACHE, // scripts of several statements, for pragma()
	ST_OPEN_WRITER,
	ST_PAGE_COUNT,
	ST_PAGE_SIZE,
	ST_PAGE_SIZE_NEW,
	ST_BACKUP_JOURNAL,
	// the series reader (store-series.c), one-off per scan
	ST_BLOCKS_SCAN,
	ST_CHUNKS_BLOCK,
	ST_CHUNKS_CHANNEL,
	ST_HEAD_VALUES,
	ST_HEAD_CYCLES,
	ST_HEAD_CYCLES_LEGACY,
	ST_FAST_HEAD,
	// compaction (store-compact.c)
	ST_MAP_PUT,
	ST_CHUNK_PUT,
	ST_HEAD_DROP,
	ST_HEAD_DROP_LEGACY,
	ST_FAST_HEAD_DROP,
	ST_HEAD_PUT,
	ST_HEAD_PUT_LEGACY,
	ST_CYCLE_PUT_LEGACY,
	ST_FAST_HEAD_PUT,
	ST_BLOCK_DROP,
	ST_CHUNKS_DROP,
	ST_CHUNK_DROP,
	ST_RESCALE_BLOCKS,
	ST_PRUNE_BLOCKS,
	ST_PRUNE_HEAD,
	ST_PRUNE_HEAD_LEGACY,
	ST_HEAD_NEXT,
	ST_HEAD_NEXT_LEGACY,
	ST_FAST_HEAD_NEXT,
	ST_HEAD_DROP_ALL,
	ST_CONVERT_DROP_UNSYNCED,
	ST_CONVERT_DROP_CYCLES,
	ST_LEGACY_CYCLES,
	ST_LEGACY_ROWS,
	ST_CONVERT_EMPTY,
	// the conversion (store-convert.c)
	ST_CONVERT_OLD_ROLLUPS,
	ST_CONVERT_OLD_DAY,
	ST_CONVERT_OLD_DAY_UNSYNCED,
	ST_CONVERT_FIRST_ROLLUP,
	ST_CONVERT_CLEAN,
	ST_STATE_DELETE,
	// the summaries (store-scan.c)
	ST_INFO_DAYS,
	ST_INFO_BLOCKS,
	ST_INFO_HEAD,
	ST_INFO_HEAD_LEGACY,
	ST_FIRST_BLOCK,
	ST_LAST_BLOCK,
	ST_BLOCKS_DOWN,
	// the repair (store-import.c)
	ST_DROP_SAMPLES,
	ST_DROP_CYCLES,
	ST_DROP_BLOCKS,
	ST_DROP_CHUNKS,
	ST_DROP_ROLLUPS,
	ST_DROP_CHANNELS_SEEN,
	ST_DROP_ROLLUP_DAYS,
	ST_DROP_CYCLE_DAYS,
	// the rescale (store-rescale.c)
	ST_RESCALE_SAMPLES,
	ST_RESCALE_ROLLUPS,
	ST_RESCALE_ROLLUP_PUT,
	ST_RESCALE_ROLLUP_DAYS,
	ST_RESCALE_ROLLUP_DAY_PUT,
	ST_RESCALE_PENDING_PUT,
	ST_RESCALE_PENDING_DROP,
	ST_RESCALE_EDGE,
	ST_CHANNEL_RESOLUTION,
	// runs (store-runs.c)
	ST_RUNS_SCAN,
	ST_RUNS_SCAN_BY_LABEL,
	ST_RUNS_COUNT,
	ST_RUN_GET,
	ST_RUN_STATE,
	ST_RUN_START_SNAPSHOT,
	ST_RUNS_OPEN,
	ST_RUN_IMPORT,
	ST_RUN_INSERT,
	ST_RUN_END,
	ST_RUN_SAMPLES_PUT,
	ST_RUN_METRICS_SCAN,
	ST_RUN_METRICS_GET,
	ST_RUN_METRIC_UNIT,
	ST_RUN_METRIC_PUT,
	// throttle episodes (store-throttle.c)
	ST_EPISODES_CLOSE,
	ST_EPISODES_PRUNE,
	ST_EPISODES_LIST,
	ST_CAMPAIGN_INSERT,
	ST_CAMPAIGN_UPDATE,
	ST_CAMPAIGN_GET,
	ST_CAMPAIGN_LATEST,
	ST_CAMPAIGN_LIST,
	ST_CAMPAIGN_RUN_PUT,
	ST_CAMPAIGN_RUNS,
	ST_COUNT,
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

/* One channel's values in a decoded block: the cycles holding one (ascending) and the values. */
struct block_chan {
	int64_t id;
	uint32_t *idx;
	int64_t *q;
	size_t n, cap, at; // at: a reader's cursor
};

/* A compacted block decoded: its cycles (the map's parts joined) and its channels' values. */
struct block_buf {
	int64_t block; // start, s
	struct blockcodec_cycle *cycles;
	int64_t *ts; // scratch for the map's decoder
	size_t n, cap;
	size_t upto; // the channels' values are those of the cycles before this one (n: all)
	struct block_chan *chans; // by id ascending
	size_t n_chans, cap_chans;
	int64_t *palette; // scratch for a chunk's decoder
	size_t cap_palette;
};

struct store_checkpointer;

struct store {
	sqlite3 *db;
	struct store_checkpointer *checkpointer; // store_checkpoint_aside(), or NULL
	char *path;
	enum store_mode mode;
	int64_t deadline_ms; // STORE_MODE_FOREIGN: monotonic; statements past it are interrupted
	bool timed_out;      // the progress handler interrupted a statement
	sqlite3_stmt *stmts[ST_PERSISTENT_COUNT];
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
	bool rescales_none;    // store_rescale_work() found none, and this writer made none since

	bool quiet_busy; // a short busy timeout: the caller retries, SQLITE_BUSY is no error
	struct log_limit full_said; // a full disk is said once a minute, not for every write

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
	bool legacy_valid;     // legacy (the head's cycles in the table cycles) as of
	bool legacy;           // data_version legacy_version (store_legacy_cached())
	int64_t legacy_version;
	uint64_t write_steps; // this connection's write steps, counted
	int64_t page_size;    // of the database, read once (the chunks' size rule)
	/*
	 * The block a scan decoded last, kept for the next scan of the same channels (an export
	 * reads slice after slice, a replay chunk after chunk): valid while neither this
	 * connection wrote (write_steps) nor another committed (data_version) since.
	 */
	struct block_buf cache;
	int cache_series;
	int64_t *cache_ids;
	size_t cache_n_ids;
	bool cache_values;
	int64_t cache_version;
	uint64_t cache_writes;
	// A scan's statements once it is closed, reset, for the next scan (one of each kind)
	sqlite3_stmt *scan_spare[ST_FAST_HEAD - ST_BLOCKS_SCAN + 1];
};

/* The series of the history: the cycles (ts in s) and the fast samples of runs (ts in ms). */
enum series { SERIES_CYCLES = 0, SERIES_FAST = 1 };

/* A cycle read by store_series_next(): borrowed until the next call. */
struct series_cycle {
	int64_t ts;   // s, or ms for the fast samples
	int clock;    // enum clock_state
	int64_t boot; // boots.id; 0: none (imported); -1: not read (a head row read for values)
	const struct codec_pair *pairs; // the values of the channels asked for, by id
	size_t n;
};

/* The reader of one series over [from, to) (in its unit), segment by segment. */
struct series_scan {
	struct store *store;
	int series;
	int64_t from, to;
	int64_t *ids; // sorted copy of the channels asked for (n_ids 0: all)
	size_t n_ids;
	bool values; // read the values, else the cycles only
	bool legacy; // the head's cycles are in the table cycles (a converted database)
	bool began;  // this scan began the read snapshot
	sqlite3_stmt *blocks_st, *head_st, *chunks_st;
	enum stmt head_which, chunks_which; // which statements head_st and chunks_st are
	bool block_held, blocks_done;       // blocks_st stands on the next block's first row
	int64_t pos;                        // where the next segment starts
	enum { SEG_NONE, SEG_HEAD, SEG_BLOCK } seg;
	int64_t seg_end;
	struct block_buf blk;
	size_t blk_i;
	struct chain chain; // the head's rows of cycles, decoded
	struct codec_pair *out, *row;
	size_t cap_out, cap_row;
	int64_t version; // PRAGMA data_version at the open: which cached block is current
	struct store_rescale *rescales; // with SCAN_SCALED: the rescales under way
	size_t n_rescales;
};

/*
 * The files of the store reach each other one way, each only files below it (no circle):
 * store-checkpoint; store.c; store-state; store-series (the one reader of a series);
 * store-scan (series, state); store-throttle; store-compact (series, state); store-rescale
 * (compact, series, state); store-write (compact, rescale, series); store-convert (compact,
 * series, state); store-rollup (compact, convert, scan, series, state, throttle, write);
 * store-runs (compact, series, write); store-import (compact, rescale, rollup, series, state,
 * write).
 */

/* store.c */
extern const struct codec_pair store_no_pair; // a delta row's empty base
uint8_t *store_blob_reserve(struct store *store, size_t n);
void store_chain_finish(struct chain *c);
void store_chain_init(struct chain *c);
bool store_chain_next(struct chain *c, int64_t ts, const uint8_t *data, size_t len);
const char *store_column_text(sqlite3_stmt *st, int col);
/* Binds a copy of @text to parameter @col of @st, or NULL when @text is NULL. */
void store_bind_text_or_null(sqlite3_stmt *st, int col, const char *text);
void store_done(sqlite3_stmt *st);
char *store_dup_or_null(const char *s);
/* Whether two texts are equal, NULL equal only to NULL. */
bool store_text_eq(const char *a, const char *b);
size_t store_encode_row(struct store *store, const struct codec_pair *pairs, size_t n,
			const struct codec_pair *base, size_t n_base);
int store_fail(struct store *store, int rc, const char *what);
int64_t store_mono_ms(void);
void store_known_clear(struct store *store); // the writer's caches: read again when needed
int store_pragma_int(struct store *store, enum stmt which, int64_t *out);
int store_prepare(struct store *store, enum stmt which, const char *what, sqlite3_stmt **st);
/* Prepares the text of @which on @db, one-off; the SQLite result code (nothing logged). */
int store_prepare_on(sqlite3 *db, enum stmt which, sqlite3_stmt **st);
/* store_prepare() with @param bound to ?1 when the statement has parameters. */
int store_prepare_param(struct store *store, enum stmt which, int64_t param, const char *what,
			sqlite3_stmt **st);
int store_prepare_window(struct store *store, enum stmt which, int64_t from, int64_t to,
			 const char *what, sqlite3_stmt **st);
int store_query_int(struct store *store, enum stmt which, int64_t param, int64_t *out, bool *null);
/* store_query_int() for a one-off statement. */
int store_query_one(struct store *store, enum stmt which, int64_t param, int64_t *out, bool *null);
int store_schema_version(void);
/* The text of migration @v (from user_version @v to @v + 1), NULL beyond the last. */
const char *store_migration(int v);
/*
 * 0 when the schema of the database to read is thermlog's, object for object (store-schema.c);
 * -EMEDIUMTYPE (logged, naming what differs) when it is not, another negative errno when it
 * could not be read.
 */
int store_check_schema(struct store *store);
/* Runs the one-off statement @which with ?1 = @param, rows ignored; 0 or -errno (logged). */
int store_exec_param(struct store *store, enum stmt which, int64_t param);
/*
 * Steps the one-off statement @st (prepared and bound) once, for its effect (a row it answers is
 * ignored), and finalizes it: 0, or the failure logged as @what ("could not write").
 */
int store_step_once(struct store *store, sqlite3_stmt *st, const char *what);
/*
 * How a scan ended: @ret when its callback stopped it, 0 when the last step (@rc) ran out of
 * rows, else the failure, logged as @what ("could not read cycles").
 */
int store_scan_result(struct store *store, int rc, int ret, const char *what);
int store_step_begin(struct store *store);
int store_step_done(sqlite3_stmt *st);
int store_step_end(struct store *store, int err);
sqlite3_stmt *store_stmt(struct store *store, enum stmt which);
sqlite3_stmt *store_stmt_window(struct store *store, enum stmt which, int64_t from, int64_t to);
/* Narrows [*from, *to) to the stored times' range (STORE_TS_LIMIT): what a window reads. */
void store_window_clamp(int64_t *from, int64_t *to);
bool store_writable(struct store *store);

/* store-write.c */
int store_bind_id_exec(struct store *store, enum stmt which, int64_t id, int64_t v,
		       const char *what);
int store_boot_row(struct store *store, const char *boot_id, int64_t *row);
int store_channel_insert(struct store *store, const struct channel *ch, int64_t seen, bool present,
			 int64_t *id);
size_t store_hour_find(const struct hour_rows *h, int64_t ts, bool *found);
int store_hour_load(struct store *store, int64_t ts);
int store_hour_put(struct store *store, int64_t ts, int clock, int64_t boot,
		   const struct codec_pair *pairs, size_t n);
size_t store_known_find(struct store *store, const char *key, bool *found);
int store_known_load(struct store *store);
size_t store_pairs_sort_unique(struct codec_pair *pairs, size_t n);
bool store_quantize(double value, double resolution, int64_t *q);
bool store_resolution_valid(double r);

/* store-series.c */
int store_cmp_i64(const void *a, const void *b);
int64_t
store_scan_start(int64_t from); // where a scan from @from starts reading: its hour's first row
/**
 * The first index in [@lo, @hi) of @array, elements of @size bytes each holding an int64_t key at
 * byte @key_at and sorted by it ascending, whose key is not below @key; @hi when none is.
 */
size_t store_lower_bound(const void *array, size_t size, size_t key_at, size_t lo, size_t hi,
			 int64_t key);
int64_t *store_sorted_ids(const int64_t *ids, size_t n);
int64_t store_block_len(int series);
int64_t store_block_of(int series, int64_t t);
bool store_block_add_chunk(struct block_buf *b, int64_t id, const uint8_t *p, size_t len,
			   size_t until);
bool store_block_add_map(struct block_buf *b, const uint8_t *p, size_t len);
void store_block_finish(struct block_buf *b);
void store_block_init(struct block_buf *b);
int store_legacy(struct store *store, bool *legacy);
/* store_legacy() for the writer, read again only when another connection committed. */
int store_legacy_cached(struct store *store, bool *legacy);
bool store_read_begin(struct store *store);
void store_read_end(struct store *store, bool began);
void store_series_cache_finish(struct store *store);
/*
 * The hourly rollups of [@from, @to) (whole hours) of @ids, computed from the stored values (as
 * read with SCAN_SCALED when @scaled), in (hour, channel_id) order.
 */
int store_compute_rollups(struct store *store, int64_t from, int64_t to, const int64_t *ids,
			  size_t n_ids, bool scaled, store_rollup_fn fn, void *ctx);
void store_series_close(struct series_scan *s);
/*
 * Opens a scan of @series over [from, to) of @ids (all when n_ids 0): with SCAN_VALUES the values
 * too, with SCAN_SCALED those a rescale under way has not reached yet in their channel's
 * resolution (as every answer reads them; the store's own work reads the integers as stored).
 */
enum { SCAN_VALUES = 1, SCAN_SCALED = 2 };
int store_series_open(struct store *store, struct series_scan *s, int series, int64_t from,
		      int64_t to, const int64_t *ids, size_t n_ids, unsigned flags);
/* The next cycle into *c: 1, 0 at the end, or -errno (logged). */
int store_series_next(struct series_scan *s, struct series_cycle *c);
/*
 * Moves scan @s (opened) to [@from, @to) from its start, keeping its statements and the block it
 * decoded last: a window in that block that ends where its values were decoded reads it without
 * decoding it again (one that goes further decodes it again, whole).
 */
void store_series_seek(struct series_scan *s, int64_t from, int64_t to);
/*
 * Hands value @k of cycle @c to @fn (the scan's value k of the cycle), for every value of
 * @series over [from, to) of @ids read with @flags, in time then id order, passing over the
 * cycles whose clock is above @max_clock; stops at the first nonzero answer of @fn and returns
 * it, else 0 or -errno (logged).
 */
typedef int (*series_value_fn)(void *ctx, const struct series_cycle *c, size_t k);
int store_series_values(struct store *store, int series, int64_t from, int64_t to,
			const int64_t *ids, size_t n_ids, unsigned flags, int max_clock,
			series_value_fn fn, void *ctx);
/*
 * store_series_values() over each of the windows @w[0..n) in turn (in the series' unit), with
 * one scan in one read snapshot (store_series_seek()); @fn is told the window's index.
 */
typedef int (*series_window_fn)(void *ctx, size_t window, const struct series_cycle *c, size_t k);
int store_series_windows(struct store *store, int series, const struct store_window *w, size_t n,
			 const int64_t *ids, size_t n_ids, unsigned flags, int max_clock,
			 series_window_fn fn, void *ctx);
int64_t store_series_unit(int series);

/* store-compact.c */
int store_bind_block_exec(struct store *store, enum stmt which, int series, int64_t block);
/* Compacted block @block whole, or of @ids only (n_ids 0: every channel), into @b (n 0: none). */
int store_block_read(struct store *store, int series, int64_t block, const int64_t *ids,
		     size_t n_ids, struct block_buf *b);
int store_chunk_rewrite(struct store *store, int series, int64_t block, int64_t id,
			const uint32_t *idx, const int64_t *q, size_t n, size_t cycles);
int store_compact_block(struct store *store, int series, int64_t block);
int store_compacted(struct store *store, int series, int64_t block, bool *yes);
int store_decompact_block(struct store *store, int series, int64_t block);
int store_head_convert(struct store *store);
/* Before a write at @t: its block back in the head if it was compacted. */
int store_head_open(struct store *store, int series, int64_t t);
/* Compacts the closed blocks of @series before @end, each its own step, within @deadline_ms. */
int store_compact(struct store *store, int series, int64_t end, int64_t deadline_ms, bool *more);

/* store-state.c */
int store_history_changed(struct store *store);
int store_state_delete(struct store *store, const char *key); // inside the caller's step
int store_state_get_int(struct store *store, const char *key, int64_t *value);
int store_state_put(struct store *store, const char *key, const char *value); // likewise
int store_state_set_int(struct store *store, const char *key, int64_t value);

/* store-scan.c */
/* The first and the last stored cycle (s); *empty when there is none. */
int store_cycle_span(struct store *store, int64_t *first, int64_t *last, bool *empty);

/* store-convert.c */
/* Steps of the conversion of a database from schema 10 or earlier, within @deadline_ms. */
int store_convert(struct store *store, int64_t deadline_ms, bool *more);

/* store-rollup.c */
int store_days_invalidate(struct store *store, int64_t hour);

/* store-throttle.c */
int store_throttle_prune(struct store *store, int64_t cutoff); // inside the caller's transaction

/* store-rescale.c */
/* A channel whose rows before @before still hold integers @factor times coarser (rescales). */
struct store_rescale {
	int64_t channel_id, factor, before;
};
/* The rescales under way (sorted by channel, newly allocated; usually none). */
int store_rescales(struct store *store, struct store_rescale **out, size_t *n);
const struct store_rescale *store_rescale_find(const struct store_rescale *list, size_t n,
					       int64_t id);
/* A value of @r's coarse rows in the channel's resolution (held at the int64 limits). */
int64_t store_rescale_value(const struct store_rescale *r, int64_t q);
/*
 * Channel @id refined by @factor to @resolution (inside the caller's transaction): its rows
 * from @now's UTC day on at once, the older ones recorded for store_rescale_work()
 * (@now INT64_MIN: every row at once, as an import's refinement does).
 */
int store_rescale_channel(struct store *store, int64_t id, int64_t factor, double resolution,
			  int64_t now);
/* Finishes every rescale under way, inside the caller's transaction (an import's first step). */
int store_rescale_settle(struct store *store);

/* Stops the thread of store_checkpoint_aside() (after its checkpoint under way) and gives the
 * writer its auto-checkpoint back; nothing without one. store_close() calls it first. */
void store_checkpointer_stop(struct store *store);

#endif
