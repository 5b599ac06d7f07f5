/*
 * Flash wear and size of the store with 25 channels of the simulated ROCK 5C.
 *
 * Bytes written per cycle at steady state: a database preloaded with a week, then a day of
 * one-minute cycles, each its own transaction as thermlogd does (with store_maintain() every
 * cycle), then the connection is closed, which checkpoints the WAL into the database file. The
 * figure is the wchar delta of /proc/self/io over that stretch divided by the cycles: every
 * byte handed to write() for the database and its WAL, checkpoints included. (The -shm
 * wal-index is a 32 KiB memory map, not written with write(); it is not counted.)
 * The same run measures two baselines with one row per value, keyed (ts, channel_id) and
 * (channel_id, ts), written through SQLite directly with the same pragmas.
 *
 * Size per value: a simulated year of one-minute cycles written through the store in one
 * transaction per day, rolled up daily, then the database size divided by the values stored.
 *
 * After the year's line, a recorded baseline: the same program run on the layout before
 * the chunks (a row per cycle and hourly rollups with histograms, commit 73bc76c).
 *
 * Usage: store-wear [-d DIR] [-y DAYS] [-k] (DAYS of the "year", default 365; -k keeps the
 * year's database and prints its path, e.g. for timing `thermlog stats` on it)
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h> // the baselines only: they are the layouts the store does not use
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sim.h"
#include "store.h"
#include "xalloc.h"

#include "bench-db.h"

#define N_CH      25
#define T_START   1767225600 // 2026-01-01T00:00:00Z
#define DAY       86400
#define PRELOAD_D 7
#define MEASURE_N 1440 // one day of cycles
#define SEED      42

static struct channel chans[N_CH];
static char keys[N_CH][64];

static void define(int i, const char *key, enum channel_kind kind, double resolution) {
	snprintf(keys[i], sizeof(keys[i]), "%s", key);
	chans[i] = (struct channel){.key = keys[i],
				    .source = "sim",
				    .label = keys[i],
				    .kind = kind,
				    .unit = channel_kind_unit(kind),
				    .resolution = resolution};
}

static void define_channels(void) {
	static const char *const zones[] = {"soc",    "bigcore0", "bigcore1", "littlecore",
					    "center", "gpu",      "npu"};
	int n = 0;
	char key[64];
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		snprintf(key, sizeof(key), "thermal/%s-thermal", zones[z]);
		define(n++, key, CHANNEL_KIND_TEMPERATURE, 0.001);
	}
	define(n++, "iio/maxim_thermocouple/temp", CHANNEL_KIND_TEMPERATURE, 0.25);
	define(n++, "iio/maxim_thermocouple/temp_ambient", CHANNEL_KIND_TEMPERATURE, 0.0625);
	define(n++, "cooling/pwm-fan", CHANNEL_KIND_STATE, 1);
	define(n++, "cpufreq/policy0", CHANNEL_KIND_FREQUENCY, 1000);
	define(n++, "cpufreq/policy4", CHANNEL_KIND_FREQUENCY, 1000);
	define(n++, "cpufreq/policy6", CHANNEL_KIND_FREQUENCY, 1000);
	define(n++, "devfreq/fdab0000.npu", CHANNEL_KIND_FREQUENCY, 1);
	define(n++, "devfreq/fb000000.gpu", CHANNEL_KIND_FREQUENCY, 1);
	define(n++, "devfreq/dmc", CHANNEL_KIND_FREQUENCY, 1);
	for (int c = 0; c < SIM_SARADC_CHANNELS; c++) {
		snprintf(key, sizeof(key), "iio/fec10000.saradc/voltage%d", c);
		define(n++, key, CHANNEL_KIND_VOLTAGE, 0.000439453125);
	}
	define(n++, "hwmon/nvme-pci-0100/temp1", CHANNEL_KIND_TEMPERATURE, 0.001);
}

/* The 25 readings of the board at @t, in the channels' units. */
static void readings_at(int64_t t, struct reading *r) {
	struct sim_state s;
	sim_model(SEED, t, &s);
	int n = 0;
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		r[n++].value = s.zone_mc[z] / 1000.0;
	}
	r[n++].value = s.tc_raw * 0.25;
	r[n++].value = s.tc_ambient_raw * 0.0625;
	r[n++].value = s.fan_state;
	for (int p = 0; p < SIM_POLICY_COUNT; p++) {
		r[n++].value = (double)s.cpu_khz[p] * 1000;
	}
	r[n++].value = (double)s.npu_hz;
	r[n++].value = (double)s.gpu_hz;
	r[n++].value = (double)s.dmc_hz;
	for (int c = 0; c < SIM_SARADC_CHANNELS; c++) {
		r[n++].value = s.saradc_raw[c] * 0.000439453125;
	}
	r[n++].value = round(s.zone_c[SIM_ZONE_SOC] - 4); // an NVMe drive reports whole degrees
	for (int i = 0; i < N_CH; i++) {
		r[i].err = 0;
	}
}

static int64_t wchar(void) {
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	long long v = -1;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "wchar: %lld", &v) == 1) {
			break;
		}
	}
	if (f) {
		fclose(f);
	}
	return v;
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this process: unlike wall time, not inflated when the machine is busy. */
static double cpu_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int64_t file_size(const char *path) {
	struct stat sb;
	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

static void remove_db(const char *path) {
	const char *suffixes[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		unlink(p);
		free(p);
	}
}

static void die(const char *what, int rc) {
	fprintf(stderr, "store-wear: %s: %s\n", what, strerror(-rc));
	exit(1);
}

static int write_cycle(struct store *store, int64_t t) {
	struct reading r[N_CH];
	readings_at(t, r);
	struct cycle c = {.ts = t,
			  .boot_id = "0b5e7a52-1f6c-4d0e-9a43-1c2d3e4f5a6b",
			  .clock = CLOCK_STATE_SYNCED,
			  .n = N_CH,
			  .channels = chans,
			  .readings = r};
	return store_write_cycle(store, &c);
}

/* Writes [from, to) in one-minute cycles, one transaction per day, rolling up each day. */
static void fill(struct store *store, int64_t from, int64_t to) {
	for (int64_t day = from; day < to; day += DAY) {
		int rc = store_begin(store);
		for (int64_t t = day; rc == 0 && t < day + DAY && t < to; t += 60) {
			rc = write_cycle(store, t);
		}
		if (rc == 0) {
			rc = store_commit(store);
		}
		if (rc == 0) {
			rc = store_maintain(store, day + DAY, 400LL * DAY);
		}
		if (rc < 0) {
			die("fill", rc);
		}
	}
}

struct wear {
	double bytes_per_cycle;
	double bytes_per_value; // file size after the preload and the measured day
};

/* @page_size 0: the store's default for a new database. */
static struct wear measure_store(const char *path, int page_size) {
	if (bench_db_create(path, page_size) < 0) {
		exit(1);
	}
	struct store *store;
	int rc = store_open(&store, path, STORE_MODE_WRITE);
	if (rc < 0) {
		die(path, rc);
	}
	int64_t start = T_START + PRELOAD_D * DAY;
	fill(store, T_START, start);
	int64_t before = wchar();
	for (int i = 0; i < MEASURE_N; i++) {
		int64_t t = start + 60 * i;
		if ((rc = write_cycle(store, t)) < 0 ||
		    (rc = store_maintain(store, t, 400LL * DAY)) < 0) {
			die("cycle", rc);
		}
	}
	store_close(store); // the last connection checkpoints the WAL into the database
	int64_t after = wchar();
	struct wear w = {.bytes_per_cycle = (double)(after - before) / MEASURE_N};
	w.bytes_per_value = (double)file_size(path) / ((PRELOAD_D * DAY / 60 + MEASURE_N) * N_CH);
	remove_db(path);
	return w;
}

/*
 * Runs' fast samples: after a day of minute cycles (which register the channels), an hour of
 * samples every 5 s (runs.interval's default) written in batches of @batch as thermlogd does
 * while a run is active; write() bytes to db + WAL per fast sample, checkpoints included.
 */
#define FAST_N 720
static double measure_fast(const char *path, size_t batch) {
	remove_db(path);
	struct store *store;
	int rc = store_open(&store, path, STORE_MODE_WRITE);
	if (rc < 0) {
		die(path, rc);
	}
	int64_t start = T_START + DAY;
	fill(store, T_START, start);
	struct reading r[FAST_N][N_CH];
	struct store_run_instant samples[FAST_N];
	for (int i = 0; i < FAST_N; i++) {
		int64_t ms = (start + 5 * (int64_t)i) * 1000;
		readings_at(ms / 1000, r[i]);
		samples[i] = (struct store_run_instant){
			.ts_ms = ms, .n = N_CH, .channels = chans, .readings = r[i]};
	}
	int64_t before = wchar();
	for (size_t i = 0; i < FAST_N; i += batch) {
		size_t n = FAST_N - i < batch ? FAST_N - i : batch;
		if ((rc = store_run_samples_put(store, &samples[i], n)) < 0) {
			die("fast samples", rc);
		}
	}
	store_close(store);
	int64_t after = wchar();
	remove_db(path);
	return (double)(after - before) / FAST_N;
}

/* The per-value layouts, written the way a simple daemon would. */
static void sql(sqlite3 *db, const char *text) {
	char *err = NULL;
	if (sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "store-wear: %s: %s\n", text, err);
		exit(1);
	}
}

static void baseline_cycle(sqlite3 *db, sqlite3_stmt *cyc, sqlite3_stmt *ins, int64_t t,
			   double *res) {
	struct reading r[N_CH];
	readings_at(t, r);
	sqlite3_bind_int64(cyc, 1, t);
	if (sqlite3_step(cyc) != SQLITE_DONE) {
		fprintf(stderr, "store-wear: baseline: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	sqlite3_reset(cyc);
	for (int i = 0; i < N_CH; i++) {
		sqlite3_bind_int64(ins, 1, t);
		sqlite3_bind_int64(ins, 2, i + 1);
		sqlite3_bind_int64(ins, 3, llround(r[i].value / res[i]));
		if (sqlite3_step(ins) != SQLITE_DONE) {
			fprintf(stderr, "store-wear: baseline: %s\n", sqlite3_errmsg(db));
			exit(1);
		}
		sqlite3_reset(ins);
	}
}

static struct wear measure_baseline(const char *path, const char *key) {
	remove_db(path);
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK) {
		fprintf(stderr, "store-wear: %s: %s\n", path, sqlite3_errmsg(db));
		exit(1);
	}
	sql(db,
	    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = OFF;"
	    "PRAGMA cache_size = -512; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 1000;"
	    "PRAGMA journal_size_limit = 4194304;"
	    "CREATE TABLE cycles (ts INTEGER PRIMARY KEY, boot INTEGER, clock INTEGER NOT NULL)"
	    " STRICT;");
	char *create =
		xasprintf("CREATE TABLE samples (ts INTEGER NOT NULL, channel_id INTEGER NOT "
			  "NULL, q INTEGER NOT NULL, PRIMARY KEY (%s)) STRICT, WITHOUT ROWID",
			  key);
	sql(db, create);
	free(create);
	sqlite3_stmt *cyc, *ins;
	sqlite3_prepare_v3(db, "INSERT INTO cycles (ts, boot, clock) VALUES (?1, 1, 1)", -1,
			   SQLITE_PREPARE_PERSISTENT, &cyc, NULL);
	sqlite3_prepare_v3(db, "INSERT INTO samples (ts, channel_id, q) VALUES (?1, ?2, ?3)", -1,
			   SQLITE_PREPARE_PERSISTENT, &ins, NULL);
	double res[N_CH];
	for (int i = 0; i < N_CH; i++) {
		res[i] = chans[i].resolution;
	}
	int64_t start = T_START + PRELOAD_D * DAY;
	for (int64_t day = T_START; day < start; day += DAY) {
		sql(db, "BEGIN IMMEDIATE");
		for (int64_t t = day; t < day + DAY; t += 60) {
			baseline_cycle(db, cyc, ins, t, res);
		}
		sql(db, "COMMIT");
	}
	int64_t before = wchar();
	for (int i = 0; i < MEASURE_N; i++) {
		sql(db, "BEGIN IMMEDIATE");
		baseline_cycle(db, cyc, ins, start + 60 * i, res);
		sql(db, "COMMIT");
	}
	sqlite3_finalize(cyc);
	sqlite3_finalize(ins);
	sqlite3_close(db);
	int64_t after = wchar();
	struct wear w = {.bytes_per_cycle = (double)(after - before) / MEASURE_N};
	w.bytes_per_value = (double)file_size(path) / ((PRELOAD_D * DAY / 60 + MEASURE_N) * N_CH);
	remove_db(path);
	return w;
}

static int count_rollup(void *ctx, const struct store_rollup *r) {
	int64_t *n = ctx;
	*n += r->count;
	return 0;
}

static int count_cycle(void *ctx, const struct store_cycle *c) {
	(*(int64_t *)ctx)++;
	return 0;
}

static int count_sample(void *ctx, const struct store_sample *s) {
	(*(int64_t *)ctx)++;
	return 0;
}

/* What the statistics read from that year, through a reader as `thermlog stats` opens it. */
static void read_back(const char *path, int64_t end) {
	struct store *store;
	int rc = store_open(&store, path, STORE_MODE_READ);
	if (rc < 0) {
		die(path, rc);
	}
	int64_t horizon = 0, values = 0, cycles = 0, raw = 0, one = 0, id = 1;
	store_rollup_horizon(store, &horizon);
	double t[6];
	t[0] = cpu_s();
	store_scan_rollups(store, 0, horizon, NULL, 0, count_rollup, &values);
	t[1] = cpu_s();
	store_scan_rollups(store, 0, horizon, &id, 1, count_rollup, &one);
	t[2] = cpu_s();
	store_scan_cycles(store, 0, end, count_cycle, &cycles);
	t[3] = cpu_s();
	store_scan_samples(store, end - DAY, end, NULL, 0, false, count_sample, &raw);
	t[4] = cpu_s();
	struct store_info info;
	store_info(store, &info);
	t[5] = cpu_s();
	printf("reading it back (CPU time): rollups of all channels %.0f ms (%lld values), of one "
	       "channel %.0f ms; %lld cycles %.0f ms; raw values of the last day %.1f ms (%lld); "
	       "store_info %.1f ms\n",
	       (t[1] - t[0]) * 1e3, (long long)values, (t[2] - t[1]) * 1e3, (long long)cycles,
	       (t[3] - t[2]) * 1e3, (t[4] - t[3]) * 1e3, (long long)raw, (t[5] - t[4]) * 1e3);
	store_close(store);
}

int main(int argc, char **argv) {
	const char *dir = NULL;
	long days = 365;
	bool keep = false;
	int opt;
	while ((opt = getopt(argc, argv, "d:y:k")) != -1) {
		if (opt == 'k') {
			keep = true;
		} else if (opt == 'd') {
			dir = optarg;
		} else if (opt == 'y' && atol(optarg) > 0) {
			days = atol(optarg);
		} else {
			fprintf(stderr, "usage: store-wear [-d DIR] [-y DAYS] [-k]\n");
			return 2;
		}
	}
	log_init(LOG_LEVEL_WARN);
	define_channels();
	char tmpl[] = "/var/tmp/store-wear-XXXXXX";
	if (!dir) {
		dir = mkdtemp(tmpl);
		if (!dir) {
			perror("store-wear: mkdtemp");
			return 1;
		}
	}
	char *path = xasprintf("%s/wear.db", dir);

	printf("steady state: %d channels, %d days preloaded, %d one-minute cycles measured, one "
	       "transaction each, checkpoints included (write() bytes to db + WAL)\n",
	       N_CH, PRELOAD_D, MEASURE_N);
	struct wear base = measure_baseline(path, "channel_id, ts");
	struct wear tsk = measure_baseline(path, "ts, channel_id");
	struct wear st4 = measure_store(path, 4096), st = measure_store(path, 0);
	printf("%-44s %12s %10s %12s\n", "layout", "bytes/cycle", "ratio", "bytes/value");
	printf("%-44s %12.0f %10.2f %12.2f\n", "baseline: row per value, key (channel_id, ts)",
	       base.bytes_per_cycle, 1.0, base.bytes_per_value);
	printf("%-44s %12.0f %10.2f %12.2f\n", "row per value, key (ts, channel_id)",
	       tsk.bytes_per_cycle, base.bytes_per_cycle / tsk.bytes_per_cycle,
	       tsk.bytes_per_value);
	printf("%-44s %12.0f %10.2f %12.2f\n", "thermlog store, 4 KiB pages", st4.bytes_per_cycle,
	       base.bytes_per_cycle / st4.bytes_per_cycle, st4.bytes_per_value);
	printf("%-44s %12.0f %10.2f %12.2f\n", "thermlog store: row per cycle, key ts",
	       st.bytes_per_cycle, base.bytes_per_cycle / st.bytes_per_cycle, st.bytes_per_value);
	printf("store: %.1f KiB per cycle (target <= 4 KiB), %.1fx less than the baseline; "
	       "%.1f KiB with 4 KiB pages\n",
	       st.bytes_per_cycle / 1024, base.bytes_per_cycle / st.bytes_per_cycle,
	       st4.bytes_per_cycle / 1024);

	double fast1 = measure_fast(path, 1), fast6 = measure_fast(path, 6);
	double fast12 = measure_fast(path, 12), fast24 = measure_fast(path, 24);
	printf("runs' fast samples (%d channels, every 5 s), bytes written per sample: %.0f one by "
	       "one, %.0f in batches of 6, %.0f of 12, %.0f of 24 as thermlogd writes them (target "
	       "<= 1024)\n",
	       N_CH, fast1, fast6, fast12, fast24);

	// The year, as fast as the store allows.
	remove_db(path);
	struct store *store;
	int rc = store_open(&store, path, STORE_MODE_WRITE);
	if (rc < 0) {
		die(path, rc);
	}
	double t0 = now_s(), c0 = cpu_s();
	fill(store, T_START, T_START + days * DAY);
	struct store_info info;
	store_info(store, &info);
	store_close(store);
	double elapsed = now_s() - t0, cpu = cpu_s() - c0;
	int64_t values = info.cycles * N_CH, size = file_size(path);
	printf("year: %lld cycles x %d channels = %lld values in %.1f s (%.1f s CPU, %.0f values/s of CPU); "
	       "database %.1f MiB (chunks, the head and the daily rollups): %.2f bytes per value "
	       "(target <= 1.0)\n",
	       (long long)info.cycles, N_CH, (long long)values, elapsed, cpu, values / cpu,
	       size / 1048576.0, (double)size / (double)values);
	printf("recorded baseline: the layout before the chunks (73bc76c), measured by this "
	       "program: 3.59 bytes per value for the 365 days (45.0 MiB), 5.3 KiB per cycle (9.5 "
	       "KiB with 4 KiB pages)\n");
	read_back(path, T_START + days * DAY);
	if (keep) {
		printf("kept: %s\n", path);
	} else {
		remove_db(path);
		if (dir == tmpl) {
			rmdir(tmpl);
		}
	}
	free(path);
	return 0;
}
