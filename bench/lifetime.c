/*
 * bench-lifetime: `thermlog lifetime --json` over three years of one-minute samples of one
 * temperature with three capacitors. Generates the history through the store API (one
 * transaction, then store_maintain, which merges the days), then times in the same run the
 * report (steady days read as histograms) against its baseline, the sample-by-sample replay
 * that --include-unsynced takes (no cycle is unsynced here, so both count the same samples),
 * checks their figures agree within 1e-9 relative and prints the ratio.
 *
 * usage: bench-lifetime [--days N] [--db PATH] [--page-size BYTES] [--reuse]
 *        (--reuse: keep and measure an existing --db; --page-size: of the generated database,
 *        default the store's own)
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "store.h"
#include "xalloc.h"

#include "bench-db.h"

extern char **environ;

static uint64_t rng_state = 7;

static uint64_t rng(void) {
	uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* The RK3588 SoC zone: a daily load curve plus noise in ~0.92 °C TSADC steps. */
static int generate(const char *path, int days, int64_t end, int page_size) {
	struct store *store;
	if (bench_db_create(path, page_size) < 0 ||
	    store_open(&store, path, STORE_MODE_WRITE) < 0) {
		return -1;
	}
	struct channel ch = {.key = "thermal/soc-thermal",
			     .source = "thermal",
			     .label = "SoC",
			     .kind = CHANNEL_KIND_TEMPERATURE,
			     .unit = "celsius",
			     .resolution = 0.001};
	int64_t n = (int64_t)days * 1440, start = end - n * 60;
	double load = 0.3;
	store_begin(store);
	for (int64_t i = 0; i < n; i++) {
		int64_t ts = start + i * 60;
		double day = sin((double)(ts % 86400) / 86400 * 2 * M_PI);
		load = fmin(1,
			    fmax(0, load + ((double)(rng() % 2001) - 1000) / 20000 + day * 0.002));
		double t = 40 + 35 * load + (double)(rng() % 100) / 100;
		struct reading r = {.value = floor(t * 1000 / 923) * 923 / 1000.0};
		struct cycle c = {.ts = ts,
				  .boot_id = "bench",
				  .clock = CLOCK_STATE_SYNCED,
				  .n = 1,
				  .channels = &ch,
				  .readings = &r};
		if (store_write_cycle(store, &c) < 0) {
			fprintf(stderr, "bench-lifetime: write failed\n");
			return -1;
		}
	}
	store_commit(store);
	int rc = store_maintain(store, end + 3600, 0);
	store_close(store);
	return rc;
}

static double last_cpu; // user + sys seconds of the last run()

/* Runs argv with stdout captured in @out; returns 0 when it exited 0. */
static int run(char *const argv[], struct buf *out) {
	char tmp[] = "/tmp/bench-lifetime-out-XXXXXX";
	int fd = mkstemp(tmp);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	pid_t pid;
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		fprintf(stderr, "bench-lifetime: cannot run %s\n", argv[0]);
		exit(1);
	}
	int status;
	struct rusage ru;
	wait4(pid, &status, 0, &ru);
	posix_spawn_file_actions_destroy(&fa);
	last_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	buf_clear(out);
	char chunk[65536];
	ssize_t n;
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		buf_append(out, chunk, (size_t)n);
	}
	close(fd);
	unlink(tmp);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Every number in @a equals the one at the same place in @b within 1e-9 relative. */
static int compare_numbers(const char *a, const char *b, int *numbers) {
	int differ = 0;
	*numbers = 0;
	while (*a && *b) {
		if ((*a == '-' || (*a >= '0' && *a <= '9')) &&
		    (*b == '-' || (*b >= '0' && *b <= '9'))) {
			char *ea, *eb;
			double x = strtod(a, &ea), y = strtod(b, &eb);
			if (ea == a || eb == b) { // a lone '-' in a message
				differ += *a != *b;
				a++;
				b++;
				continue;
			}
			differ += !(x == y || fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y)));
			(*numbers)++;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b) {
			return differ + 1000;
		}
		a++;
		b++;
	}
	return differ + (*a != *b);
}

int main(int argc, char **argv) {
	static const struct option options[] = {
		{"days", required_argument, NULL, 'd'},
		{"db", required_argument, NULL, 'b'},
		{"reuse", no_argument, NULL, 'r'},
		{"page-size", required_argument, NULL, 'p'},
		{0},
	};
	int page_size = 0; // of a generated database; 0: the store's default
	int days = 1095, opt;
	const char *db = "/tmp/bench-lifetime.db";
	bool reuse = false;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			days = atoi(optarg);
			break;
		case 'b':
			db = optarg;
			break;
		case 'p':
			page_size = atoi(optarg);
			break;
		case 'r':
			reuse = true;
			break;
		default:
			return 2;
		}
	}
	log_init(LOG_LEVEL_WARN);
	int64_t end = (int64_t)time(NULL) / 3600 * 3600 - 7 * 60; // a ragged, recent end
	if (days < 1 ||
	    (!(reuse && access(db, F_OK) == 0) && generate(db, days, end, page_size) < 0)) {
		return 1;
	}
	char cfg[] = "/tmp/bench-lifetime-cfg-XXXXXX";
	int fd = mkstemp(cfg);
	FILE *f = fdopen(fd, "w");
	fprintf(f,
		"database: %s\n"
		"capacitors:\n"
		"  - {name: C1, sensor: thermal/soc-thermal, rated_life_h: 2000, "
		"rated_temp_c: 105}\n"
		"  - {name: C2, sensor: SoC, basis: case, rated_life_h: 5000, rated_temp_c: 105, "
		"model: arrhenius, ea_ev: 0.83, type: polymer}\n"
		"  - {name: C3, sensor: thermal/soc-thermal, rated_life_h: 10000, "
		"rated_temp_c: 85, self_heating: {rise_k: 3}}\n",
		db);
	fclose(f);
	char *fast[] = {THERMLOG_EXE, "-c", cfg, "lifetime", "--json", NULL};
	char *replay[] = {THERMLOG_EXE,         "-c", cfg, "lifetime", "--json",
			  "--include-unsynced", NULL};
	struct buf a, b;
	buf_init(&a);
	buf_init(&b);
	double c_fast = 1e9, c_replay = 1e9;
	for (int i = 0; i < 5; i++) {
		if (run(fast, &a) < 0 || (i < 3 && run(replay, &b) < 0)) {
			fprintf(stderr, "bench-lifetime: thermlog lifetime failed\n");
			return 1;
		}
		c_fast = fmin(c_fast, last_cpu);
		if (i < 3) {
			c_replay = fmin(c_replay, last_cpu);
		}
	}
	// Rerun the replay for its answer (the loop's last one ran the fast path last).
	run(replay, &b);
	int numbers, differ = compare_numbers(a.data, b.data, &numbers);
	unlink(cfg);
	printf("history: %d days of one-minute samples, 1 channel, 3 capacitors (%s)\n", days, db);
	printf("(CPU = user + sys of the whole thermlog process, best of 5 / 3)\n");
	printf("%-52s %9.1f ms\n", "thermlog lifetime --json (merged days)", c_fast * 1e3);
	printf("%-52s %9.1f ms\n", "baseline: sample-by-sample replay (--include-unsynced)",
	       c_replay * 1e3);
	printf("ratio: lifetime / replay = %.3f (%.0fx faster)\n", c_fast / c_replay,
	       c_replay / c_fast);
	printf("answers: %d numbers, %s (1e-9 relative)\n", numbers, differ ? "DIFFER" : "equal");
	printf("target on CPU time (<= 50 ms, same answers): %s\n",
	       c_fast <= 0.050 && !differ ? "met" : "NOT met");
	buf_finish(&a);
	buf_finish(&b);
	if (!reuse) {
		unlink(db);
		char wal[600];
		snprintf(wal, sizeof(wal), "%s-wal", db);
		unlink(wal);
		snprintf(wal, sizeof(wal), "%s-shm", db);
		unlink(wal);
	}
	return differ ? 1 : 0;
}
