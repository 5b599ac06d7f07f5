/*
 * The floor under thermlogd's cycle: what any daemon that samples the same channels into SQLite
 * must spend, measured beside thermlogd by bench/daemon-cpu.py in the same run.
 *
 * Once a second, on the wall-clock second as thermlogd wakes, it reads every channel through
 * the sampler (pread on held file descriptors, the reads thermlogd does) and commits one row to
 * SQLite in its own transaction: the cycle's values packed as thermlogd packs them, keyed by
 * the stamp, in a WAL database with thermlogd's pragmas (2 KiB pages, synchronous=NORMAL).
 * Nothing else: no channel bookkeeping, clock state, rollups, capacitors or live snapshot.
 * It runs until SIGTERM, then prints the cycles it did; CPU time is taken by the caller from
 * wait4().
 *
 * Usage: bench-floor SYSFS_ROOT DATABASE
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h> // a bare SQLite writer is the point of the floor
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "config.h"
#include "log.h"
#include "sampler.h"
#include "xalloc.h"

static volatile sig_atomic_t stopping;

static void on_term(int sig) {
	(void)sig;
	stopping = 1;
}

static int exec(sqlite3 *db, const char *sql) {
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "bench-floor: %s: %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

/* Steps a prepared statement once, as the store does: no SQL is parsed in a cycle. */
static int step(sqlite3_stmt *st) {
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc;
}

/* Sleeps until the next whole wall-clock second; false when a signal ended the wait. */
static bool sleep_to_next_second(void) {
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct timespec at = {.tv_sec = now.tv_sec + 1, .tv_nsec = 0};
	return clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == 0;
}

int main(int argc, char **argv) {
	log_init(LOG_LEVEL_ERROR);
	if (argc != 3) {
		fprintf(stderr, "usage: bench-floor SYSFS_ROOT DATABASE\n");
		return 2;
	}
	struct config cfg;
	config_init(&cfg);
	free(cfg.sysfs_root);
	cfg.sysfs_root = xstrdup(argv[1]);
	cfg.sources[SOURCE_HWMON].enabled = false; // as bench/daemon-cpu.py configures thermlogd
	cfg.sources[SOURCE_MEMINFO].enabled = false;
	struct sampler *s = sampler_create(&cfg);
	sqlite3 *db = NULL;
	sqlite3_stmt *insert = NULL, *begin = NULL, *commit = NULL;
	if (!s || sqlite3_open(argv[2], &db) != SQLITE_OK ||
	    exec(db,
		 "PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; "
		 "PRAGMA synchronous = NORMAL; "
		 "CREATE TABLE IF NOT EXISTS samples (ts INTEGER PRIMARY KEY, data BLOB)") < 0 ||
	    sqlite3_prepare_v2(db, "INSERT INTO samples (ts, data) VALUES (?1, ?2)", -1, &insert,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL) != SQLITE_OK) {
		fprintf(stderr, "bench-floor: cannot start (%s)\n", db ? sqlite3_errmsg(db) : "?");
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_term};
	sigaction(SIGTERM, &sa, NULL);
	struct codec_pair *pairs = NULL;
	uint8_t *blob = NULL;
	size_t cap = 0;
	long cycles = 0;
	while (!stopping && sleep_to_next_second()) {
		const struct channel *ch;
		const struct reading *rd;
		size_t n = sampler_read(s, 0, &ch, &rd);
		if (n + 1 > cap) {
			cap = n + 1;
			pairs = xrealloc(pairs, cap * sizeof(*pairs));
			blob = xrealloc(blob, 1 + cap * 2 * 10);
		}
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (rd[i].err == 0) {
				pairs[m++] = (struct codec_pair){
					(int64_t)i + 1, llround(rd[i].value / ch[i].resolution)};
			}
		}
		size_t len = codec_pairs_encode(blob, pairs, m);
		time_t now = time(NULL);
		if (step(begin) != SQLITE_DONE) {
			break;
		}
		sqlite3_bind_int64(insert, 1, (sqlite3_int64)now);
		sqlite3_bind_blob(insert, 2, blob, (int)len, SQLITE_STATIC);
		int rc = step(insert);
		if ((rc != SQLITE_DONE && rc != SQLITE_CONSTRAINT) || step(commit) != SQLITE_DONE) {
			break;
		}
		cycles++;
	}
	printf("%ld cycles\n", cycles);
	sqlite3_finalize(insert);
	sqlite3_finalize(begin);
	sqlite3_finalize(commit);
	sqlite3_close(db);
	sampler_destroy(s);
	config_finish(&cfg);
	free(pairs);
	free(blob);
	return 0;
}
