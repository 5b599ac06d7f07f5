/*
 * What the store's unit tests share: a scratch directory, three channels like the sampler's, a
 * cycle writer, collectors for scans, a database file copied or run SQL on, three hours of
 * cycles, and the seeded history of the delta-row tests. No assertion here: each test file
 * holds its own.
 */
#ifndef STORE_FIXTURE_H
#define STORE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "fixture.h"
#include "store.h"

/* The scratch directory (mkdtemp's) of a test executable, made by store_fixture_begin(). */
extern char tmpdir[];

/* Logs errors only and makes tmpdir (exits when it cannot). */
void store_fixture_begin(void);
/* Removes tmpdir (empty by then). */
void store_fixture_end(void);

#define T0 1787000400 // 2026-08-17T21:00:00Z, an hour boundary (T0 % 3600 == 0)

/* A path in tmpdir (the caller frees it); remove_db() removes a database with its -wal, -shm. */
char *tmp_path(const char *name);
void remove_db(const char *path);

/* Three channels like the sampler's: a zone (m°C), a cpufreq policy (kHz) and a fan state. */
#define N_CHANS 3
extern struct channel chans[N_CHANS];

/* Writes a cycle of chans[] at @ts: @values, and a reading's error from @errs (or none). */
int put(struct store *store, int64_t ts, enum clock_state clock, const double *values,
	const int *errs);

/* The first 256 samples of a scan (and the count of all), stopping after @stop_after. */
struct collect {
	struct store_sample s[256];
	size_t n;
	int stop_after;
};

int collect_sample(void *ctx, const struct store_sample *s);

/* The stored id of channel @key, or -1. */
int64_t channel_id(struct store *store, const char *key);

/* Copies file @from to @to: 0 or a negative errno. */
int copy_file(const char *from, const char *to);

/* The result code of @sql on @path, run by a plain connection. */
int exec_raw(const char *path, const char *sql);
/* The integer of the first column of @sql's first row on @path (read-only), or -1. */
int64_t query_raw(const char *path, const char *sql);
/* query_raw() of a query formatted from @fmt. */
int64_t query_fmt(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether SQLite's integrity check of @path finds nothing. */
bool integrity(const char *path);

/* The first 64 rollups of a scan with their bins (and the count of all). */
#define ROLLUP_BINS_MAX 256 // bins kept of each rollup collected

struct rollups {
	struct store_rollup r[64];
	int64_t bins_q[64][ROLLUP_BINS_MAX], bins_n[64][ROLLUP_BINS_MAX];
	size_t n;
};

int collect_rollup(void *ctx, const struct store_rollup *r);

/* Three hours of 20-second cycles with repeated values; every fifth cycle unsynced. */
void fill_hours(struct store *store, unsigned seed);

#define DELTA_ROWS 150 // two and a half hours of one-minute cycles, from T0 + 30 s

/* The history every delta test writes: a random walk like a board's, seeded. */
struct delta_history {
	int64_t ts[DELTA_ROWS];
	double v[DELTA_ROWS][N_CHANS];
};

void delta_history_init(struct delta_history *h, unsigned seed);

/* Every stored value, in ts then channel order (a growing array the caller frees). */
struct all_samples {
	struct store_sample *s;
	size_t n, cap;
};

int all_sample(void *ctx, const struct store_sample *s);
/* Every value of [@from, @to), unsynced too; the scan's result in *@rc. */
struct all_samples scan_all(struct store *store, int64_t from, int64_t to, int *rc);
bool same_samples(const struct all_samples *a, const struct all_samples *b);

/* Whether every stored value is the history's, quantized at the channels' resolutions. */
bool matches_history(const struct all_samples *a, const struct delta_history *h,
		     const bool *present);

/* The raw rows of a database file, through SQLite directly: ts and blob. */
struct raw_rows {
	int64_t ts[4 * DELTA_ROWS];
	uint8_t *data[4 * DELTA_ROWS];
	size_t len[4 * DELTA_ROWS];
	size_t n;
};

void raw_rows_read(const char *path, struct raw_rows *r);
void raw_rows_free(struct raw_rows *r);
/* Runs @sql on @path through a plain connection, printing its error as a TAP comment. */
void raw_exec(const char *path, const char *sql);

/* Writes the history's rows in @order (indices) into a new database at @path. */
struct store *delta_db(const char *path, const struct delta_history *h, const int *order);

#endif
