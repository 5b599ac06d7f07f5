/*
 * bench-stats: exact window statistics over a year of one-minute samples of 20 channels.
 * Generates the history through the store API (one transaction, then store_maintain, which also
 * merges the days), then times in the same run: `thermlog stats --json` over the whole history
 * (merged days) and the same answer from hourly rollups and every cycle (--include-unsynced
 * reads no merged day; no cycle is unsynced here, so the answer is the same) and the last 24 h,
 * a naive baseline (every raw value of each channel read and sorted in C), numpy on the same
 * values in memory, and `thermlog export` against `sqlite3 -csv` over the same rows; checks
 * the answers agree and prints ratios.
 *
 * usage: bench-stats [--days N] [--channels K] [--db PATH] [--page-size BYTES] [--generate-only]
 *        [--keep] [--reuse]   (--page-size: of the generated database, default the store's own)
 *        (--reuse: measure an existing --db instead of generating it; implies --keep)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "log.h"
#include "query.h"
#include "stats.h"
#include "store.h"
#include "xalloc.h"

#include "bench-db.h"

extern char **environ;

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of this process: the machine is shared, so wall time alone is noisy. */
static double cpu_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double last_child_cpu; // user + sys seconds of the last run()

static uint64_t rng_state = 42;

static uint64_t rng(void) {
	uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* The RK3588's channels: TSADC zones, clocks from OPP tables, a fan, rails, a thermocouple. */
static const int64_t cpu_opp[] = {408000000,  600000000,  816000000,  1008000000,
				  1200000000, 1416000000, 1608000000, 1800000000,
				  2016000000, 2208000000, 2400000000};
static const int64_t npu_opp[] = {300000000, 400000000, 500000000, 600000000,
				  700000000, 800000000, 900000000, 1000000000};

static void make_channels(struct channel *ch, size_t n) {
	static const char *zones[] = {"soc-thermal",        "bigcore0-thermal", "bigcore1-thermal",
				      "littlecore-thermal", "center-thermal",   "gpu-thermal",
				      "npu-thermal"};
	static const char *clocks[] = {"cpufreq/policy0",      "cpufreq/policy4",
				       "cpufreq/policy6",      "devfreq/fdab0000.npu",
				       "devfreq/fb000000.gpu", "devfreq/dmc"};
	for (size_t i = 0; i < n; i++) {
		char key[64];
		size_t k = i % 20;
		struct channel c = {.source = "bench", .label = NULL};
		if (k < 7) {
			snprintf(key, sizeof(key), "thermal/%s", zones[k]);
			c.kind = CHANNEL_KIND_TEMPERATURE, c.unit = "celsius", c.resolution = 0.001;
		} else if (k < 13) {
			snprintf(key, sizeof(key), "%s", clocks[k - 7]);
			c.kind = CHANNEL_KIND_FREQUENCY, c.unit = "hertz", c.resolution = 1;
		} else if (k == 13) {
			snprintf(key, sizeof(key), "cooling/pwm-fan");
			c.kind = CHANNEL_KIND_STATE, c.unit = "state", c.resolution = 1;
		} else if (k < 18) {
			snprintf(key, sizeof(key), "iio/fec10000.saradc/voltage%zu", k - 14);
			c.kind = CHANNEL_KIND_VOLTAGE, c.unit = "volts", c.resolution = 0.001;
		} else if (k == 18) {
			snprintf(key, sizeof(key), "iio/maxim_thermocouple/temp");
			c.kind = CHANNEL_KIND_TEMPERATURE, c.unit = "celsius", c.resolution = 0.25;
		} else {
			snprintf(key, sizeof(key), "iio/maxim_thermocouple/temp_ambient");
			c.kind = CHANNEL_KIND_TEMPERATURE, c.unit = "celsius",
			c.resolution = 0.0625;
		}
		if (i >= 20) {
			size_t len = strlen(key);
			snprintf(key + len, sizeof(key) - len, "#%zu", i / 20 + 1);
		}
		c.key = key;
		c.label = key;
		channel_copy(&ch[i], &c);
	}
}

/* One cycle's values: a slow daily load curve plus noise, quantized like the hardware. */
static void make_readings(const struct channel *ch, struct reading *r, size_t n, int64_t ts,
			  double *load) {
	double day = sin((double)(ts % 86400) / 86400 * 2 * M_PI);
	*load = fmin(1, fmax(0, *load + ((double)(rng() % 2001) - 1000) / 20000 + day * 0.002));
	for (size_t i = 0; i < n; i++) {
		size_t k = i % 20;
		double v;
		if (k < 7) {
			double t = 40 + 35 * *load + (double)(k % 3) + (double)(rng() % 100) / 100;
			v = floor(t * 1000 / 923) * 923 / 1000.0; // TSADC: ~0.92 °C code steps
		} else if (k < 13) {
			bool npu = k >= 10;
			size_t levels = npu ? 8 : 11;
			size_t at = (size_t)(*load * (double)(levels - 1) + (double)(rng() % 3) -
					     1 + 0.5);
			at = at >= levels ? levels - 1 : at;
			v = (double)(npu ? npu_opp[at] : cpu_opp[at]);
		} else if (k == 13) {
			v = floor(*load * 4.99);
		} else if (k < 18) {
			v = 1.8 + (double)((int)(rng() % 41) - 20) / 1000;
		} else if (k == 18) {
			v = floor((30 + 30 * *load + (double)(rng() % 8) / 8) * 4) / 4;
		} else {
			v = floor((25 + 5 * *load) * 16) / 16;
		}
		r[i] = (struct reading){.value = v};
	}
}

static int generate(const char *path, int days, size_t n_ch, int64_t end, int page_size) {
	struct store *store;
	if (bench_db_create(path, page_size) < 0 ||
	    store_open(&store, path, STORE_MODE_WRITE) < 0) {
		return -1;
	}
	struct channel *ch = xcalloc(n_ch, sizeof(*ch));
	struct reading *r = xcalloc(n_ch, sizeof(*r));
	make_channels(ch, n_ch);
	int64_t n = (int64_t)days * 1440, start = end - n * 60;
	double load = 0.3, t = now_s();
	store_begin(store);
	for (int64_t i = 0; i < n; i++) {
		int64_t ts = start + i * 60;
		make_readings(ch, r, n_ch, ts, &load);
		struct cycle c = {.ts = ts,
				  .boot_id = "bench",
				  .clock = CLOCK_STATE_SYNCED,
				  .n = n_ch,
				  .channels = ch,
				  .readings = r};
		if (store_write_cycle(store, &c) < 0) {
			fprintf(stderr, "bench-stats: write failed\n");
			return -1;
		}
	}
	store_commit(store);
	double t_write = now_s() - t;
	t = now_s();
	store_maintain(store, end + 3600, 0);
	printf("generated %d days x %zu channels = %lld values: write %.1f s, rollups %.1f s\n",
	       days, n_ch, (long long)(n * (int64_t)n_ch), t_write, now_s() - t);
	store_close(store);
	for (size_t i = 0; i < n_ch; i++) {
		channel_finish(&ch[i]);
	}
	free(ch);
	free(r);
	return 0;
}

/* Runs argv with stdout to @out (NULL = /dev/null); returns wall seconds, max RSS in KiB. */
static double run(char *const argv[], const char *out, long *rss_kib, struct buf *capture) {
	char tmp[] = "/tmp/bench-stats-out-XXXXXX";
	int fd = -1;
	if (capture) {
		fd = mkstemp(tmp);
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (capture) {
		posix_spawn_file_actions_adddup2(&fa, fd, 1);
	} else {
		posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null",
						 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	}
	pid_t pid;
	double t = now_s();
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		fprintf(stderr, "bench-stats: cannot run %s\n", argv[0]);
		exit(1);
	}
	int status;
	struct rusage ru;
	if (rss_kib) {
		/*
		 * ru_maxrss is no use here: a (v)forked child starts with this process's high-water
		 * mark. Poll the child's own VmHWM until it exits instead.
		 */
		*rss_kib = 0;
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/%d/status", (int)pid);
		while (wait4(pid, &status, WNOHANG, &ru) == 0) {
			FILE *f = fopen(proc, "r");
			char line[256];
			long kib;
			while (f && fgets(line, sizeof(line), f)) {
				if (sscanf(line, "VmHWM: %ld", &kib) == 1 && kib > *rss_kib) {
					*rss_kib = kib;
				}
			}
			if (f) {
				fclose(f);
			}
			usleep(2000);
		}
	} else {
		wait4(pid, &status, 0, &ru);
	}
	double dt = now_s() - t;
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-stats: %s failed\n", argv[0]);
		exit(1);
	}
	last_child_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (capture) {
		FILE *f = fopen(tmp, "r");
		char chunk[65536];
		size_t n;
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			buf_append(capture, chunk, n);
		}
		fclose(f);
		close(fd);
		unlink(tmp);
	}
	return dt;
}

/* The number after "field": in the object of channel @key. */
static double number(const char *json, const char *key, const char *field) {
	char pat[256];
	snprintf(pat, sizeof(pat), "\"key\":\"%s\"", key);
	const char *p = strstr(json, pat);
	snprintf(pat, sizeof(pat), "\"%s\":", field);
	p = p ? strstr(p, pat) : NULL;
	return p ? strtod(p + strlen(pat), NULL) : NAN;
}

struct collect {
	int64_t *q;
	size_t n, cap;
};

static int collect_q(void *ctx, const struct store_sample *s) {
	struct collect *c = ctx;
	c->q = xgrow(c->q, &c->cap, c->n + 1, sizeof(*c->q));
	c->q[c->n++] = s->q;
	return 0;
}

static int cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double pct_sorted(const int64_t *q, size_t n, double p, double res) {
	double h = (double)(n - 1) * (p / 100.0);
	size_t lo = (size_t)floor(h), hi = lo + 1 < n ? lo + 1 : n - 1;
	double g = h - floor(h), a = stats_value(q[lo], res), b = stats_value(q[hi], res);
	return g >= 0.5 ? b - (b - a) * (1 - g) : a + (b - a) * g;
}

static bool near(double got, double want, double scale) {
	return fabs(got - want) <= 1e-9 * fmax(fabs(scale), 1e-300);
}

int main(int argc, char **argv) {
	static const struct option options[] = {
		{"days", required_argument, NULL, 'd'},
		{"channels", required_argument, NULL, 'c'},
		{"db", required_argument, NULL, 'b'},
		{"generate-only", no_argument, NULL, 'g'},
		{"keep", no_argument, NULL, 'k'},
		{"reuse", no_argument, NULL, 'r'},
		{"page-size", required_argument, NULL, 'p'},
		{0},
	};
	int page_size = 0; // of a generated database; 0: the store's default
	int days = 365, opt;
	size_t n_ch = 20;
	const char *db = "/tmp/bench-stats.db";
	bool generate_only = false, keep = false, reuse = false;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			days = atoi(optarg);
			break;
		case 'c':
			n_ch = (size_t)atoi(optarg);
			break;
		case 'b':
			db = optarg;
			break;
		case 'g':
			generate_only = true;
			break;
		case 'k':
			keep = true;
			break;
		case 'p':
			page_size = atoi(optarg);
			break;
		case 'r':
			reuse = keep = true;
			break;
		default:
			return 2;
		}
	}
	log_init(LOG_LEVEL_WARN);
	int64_t end = (int64_t)time(NULL) / 3600 * 3600 - 7 * 60; // a ragged, recent end
	if (days < 1 || n_ch < 1 ||
	    (!(reuse && access(db, F_OK) == 0) && generate(db, days, n_ch, end, page_size) < 0)) {
		return 1;
	}
	if (generate_only) {
		return 0;
	}
	struct store_info info;
	struct store *is;
	if (store_open(&is, db, STORE_MODE_READ) < 0 || store_info(is, &info) < 0) {
		return 1;
	}
	store_close(is);
	int64_t last = info.last_cycle, first = info.first_cycle;
	days = (int)((last - first + 60) / 86400);
	char from24[32], dbarg[512];
	snprintf(from24, sizeof(from24), "%lld", (long long)(last + 1 - 86400));
	snprintf(dbarg, sizeof(dbarg), "%s", db);

	// thermlog stats over the whole history (best of 3) and the last 24 h (best of 5).
	char *full[] = {THERMLOG_EXE, "--db", dbarg, "stats", "--json", "--percentile", "99", NULL};
	char *day[] = {THERMLOG_EXE, "--db", dbarg, "stats", "--json", "--from", from24, NULL};
	char *noop[] = {THERMLOG_EXE, "--db", dbarg, "channels", "--json", NULL};
	char *hourly[] = {THERMLOG_EXE, "--db",         dbarg, "stats",
			  "--json",     "--percentile", "99",  "--include-unsynced",
			  NULL};
	struct buf answer, hourly_answer;
	buf_init(&answer);
	buf_init(&hourly_answer);
	double t_full = 1e9, t_day = 1e9, t_noop = 1e9, c_full = 1e9, c_day = 1e9, c_noop = 1e9;
	double t_hourly = 1e9, c_hourly = 1e9;
	for (int i = 0; i < 5; i++) {
		if (i < 3) {
			buf_clear(&hourly_answer);
			t_hourly = fmin(t_hourly, run(hourly, NULL, NULL, &hourly_answer));
			c_hourly = fmin(c_hourly, last_child_cpu);
		}
		buf_clear(&answer);
		t_full = fmin(t_full, run(full, NULL, NULL, &answer));
		c_full = fmin(c_full, last_child_cpu);
		t_day = fmin(t_day, run(day, NULL, NULL, NULL));
		c_day = fmin(c_day, last_child_cpu);
		t_noop = fmin(t_noop, run(noop, NULL, NULL, NULL));
		c_noop = fmin(c_noop, last_child_cpu);
	}

	// The naive baseline: every raw value of each channel, sorted in C.
	struct store *store;
	store_open(&store, db, STORE_MODE_READ);
	struct store_channel *chs;
	size_t n;
	store_channels(store, &chs, &n);
	char dir[] = "/tmp/bench-stats-np-XXXXXX";
	mkdtemp(dir);
	char path[600];
	snprintf(path, sizeof(path), "%s/channels.txt", dir);
	FILE *list = fopen(path, "w");
	double t_naive = now_s(), c_naive = cpu_s();
	int mismatches = 0;
	for (size_t i = 0; i < n; i++) {
		struct collect c = {0};
		store_scan_samples(store, first, last + 1, &chs[i].id, 1, false, collect_q, &c);
		qsort(c.q, c.n, sizeof(*c.q), cmp_i64);
		double res = chs[i].ch.resolution;
		long double sum = 0;
		for (size_t k = 0; k < c.n; k++) {
			sum += stats_value(c.q[k], res);
		}
		double mean = (double)(sum / c.n);
		double got_p[3] = {number(answer.data, chs[i].ch.key, "p50"),
				   number(answer.data, chs[i].ch.key, "p95"),
				   number(answer.data, chs[i].ch.key, "p99")};
		double want_p[3] = {pct_sorted(c.q, c.n, 50, res), pct_sorted(c.q, c.n, 95, res),
				    pct_sorted(c.q, c.n, 99, res)};
		double got_mean = number(answer.data, chs[i].ch.key, "mean");
		double got_n = number(answer.data, chs[i].ch.key, "count");
		bool differ = !near(got_mean, mean, mean) || got_n != (double)c.n;
		for (int k = 0; k < 3; k++) {
			differ = differ || got_p[k] != want_p[k];
		}
		if (differ) {
			mismatches++;
			printf("differs: %s count %.0f/%zu mean %.17g/%.17g p50 %.17g/%.17g p95 "
			       "%.17g/%.17g p99 %.17g/%.17g\n",
			       chs[i].ch.key, got_n, c.n, got_mean, mean, got_p[0], want_p[0],
			       got_p[1], want_p[1], got_p[2], want_p[2]);
		}
		// numpy's input: the same q values
		fprintf(list, "%s %.17g\n", chs[i].ch.key, res);
		snprintf(path, sizeof(path), "%s/%zu.q", dir, i);
		FILE *f = fopen(path, "wb");
		fwrite(c.q, sizeof(*c.q), c.n, f);
		fclose(f);
		free(c.q);
	}
	t_naive = now_s() - t_naive; // includes writing numpy's files: a few % of the total
	c_naive = cpu_s() - c_naive;
	fclose(list);
	store_close(store);

	// numpy on the same values in memory.
	char *np[] = {"/usr/bin/python3", BENCH_DIR "/stats-numpy.py", dir, NULL};
	struct buf npout;
	buf_init(&npout);
	run(np, NULL, NULL, &npout);
	double t_numpy = NAN, c_numpy = NAN;
	int np_mismatch = 0;
	for (char *line = strtok(npout.data, "\n"); line; line = strtok(NULL, "\n")) {
		char key[256];
		double cnt, mean, sd, mn, mx, p50, p95, p99;
		if (sscanf(line, "seconds %lf %lf", &t_numpy, &c_numpy) == 2) {
			continue;
		}
		if (sscanf(line, "%255s %lf %lf %lf %lf %lf %lf %lf %lf", key, &cnt, &mean, &sd,
			   &mn, &mx, &p50, &p95, &p99) != 9) {
			continue;
		}
		double scale = fmax(fabs(mean), fabs(mx));
		np_mismatch += !near(number(answer.data, key, "mean"), mean, scale) ||
			       !near(number(answer.data, key, "stddev"), sd, scale) ||
			       !near(number(answer.data, key, "min"), mn, scale) ||
			       !near(number(answer.data, key, "max"), mx, scale) ||
			       !near(number(answer.data, key, "p50"), p50, scale) ||
			       !near(number(answer.data, key, "p95"), p95, scale) ||
			       !near(number(answer.data, key, "p99"), p99, scale) ||
			       number(answer.data, key, "count") != cnt;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%zu.q", dir, i);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/channels.txt", dir);
	unlink(path);
	rmdir(dir);

	// Export of the last 30 days (or all) against sqlite3 -csv over the same stored rows.
	int64_t exp_from = days > 30 ? last + 1 - 30 * 86400 : first;
	char expfrom[32], sql[256];
	snprintf(expfrom, sizeof(expfrom), "%lld", (long long)exp_from);
	snprintf(sql, sizeof(sql), "SELECT ts, clock, hex(data) FROM samples WHERE ts >= %lld",
		 (long long)exp_from);
	char *exp_long[] = {THERMLOG_EXE, "--db", dbarg, "export", "--from", expfrom, NULL};
	char *exp_wide[] = {THERMLOG_EXE, "--db",   dbarg,   "export", "--format",
			    "wide",       "--from", expfrom, NULL};
	char *sq[] = {"/usr/bin/sqlite3", "-csv", dbarg, sql, NULL};
	char *exp_all[] = {THERMLOG_EXE, "--db", dbarg, "export", NULL};
	long rss_month = 0, rss_all = 0;
	double t_long = 1e9, t_wide = 1e9, t_sql = 1e9;
	for (int i = 0; i < 2; i++) {
		t_long = fmin(t_long, run(exp_long, NULL, &rss_month, NULL));
		t_wide = fmin(t_wide, run(exp_wide, NULL, NULL, NULL));
		if (access(sq[0], X_OK) == 0) {
			t_sql = fmin(t_sql, run(sq, NULL, NULL, NULL));
		}
	}
	double t_all = run(exp_all, NULL, &rss_all, NULL);
	int64_t exp_cycles = (last + 1 - exp_from) / 60, exp_values = exp_cycles * (int64_t)n;

	printf("\nhistory: %d days, %zu channels, %lld values (%s)\n", days, n,
	       (long long)((int64_t)days * 1440 * (int64_t)n), db);
	printf("(best of 5; CPU = user + sys of the process, wall = elapsed on a shared machine)\n");
	printf("%-34s %9s %9s\n", "", "CPU ms", "wall ms");
	printf("%-34s %9.1f %9.1f\n", "thermlog stats, whole history", c_full * 1e3, t_full * 1e3);
	printf("%-34s %9.1f %9.1f\n", "  hourly rollups + every cycle", c_hourly * 1e3,
	       t_hourly * 1e3);
	printf("%-34s %9.1f %9.1f\n", "thermlog stats, last 24 h", c_day * 1e3, t_day * 1e3);
	printf("%-34s %9.1f %9.1f\n", "  (thermlog channels: start+open)", c_noop * 1e3,
	       t_noop * 1e3);
	printf("%-34s %9.1f %9.1f\n", "naive raw scan + sort in C", c_naive * 1e3, t_naive * 1e3);
	printf("%-34s %9.1f %9.1f\n", "numpy on the values in memory", c_numpy * 1e3,
	       t_numpy * 1e3);
	printf("ratios (CPU): naive / thermlog = %.1fx, thermlog / numpy = %.2f, thermlog / hourly "
	       "= %.3f\n",
	       c_naive / c_full, c_full / c_numpy, c_full / c_hourly);
	// The JSON differs only in "unsynced_excluded" being counted or not: both 0 here.
	bool same_hourly = answer.len == hourly_answer.len &&
			   memcmp(answer.data, hourly_answer.data, answer.len) == 0;
	printf("answers: merged days vs hourly rollups %s\n", same_hourly ? "identical" : "DIFFER");
	printf("answers: thermlog vs naive %s (%d differ), vs numpy %s (%d differ, 1e-9 rel)\n",
	       mismatches ? "DIFFER" : "identical", mismatches, np_mismatch ? "DIFFER" : "equal",
	       np_mismatch);
	printf("export %lld cycles (%lld values): long %.2f s = %.0f rows/s, wide %.2f s = %.0f "
	       "rows/s\n",
	       (long long)exp_cycles, (long long)exp_values, t_long, (double)exp_values / t_long,
	       t_wide, (double)exp_cycles / t_wide);
	if (t_sql < 1e9) {
		printf("sqlite3 -csv of the same stored rows: %.2f s -> export long / sqlite3 = %.2f "
		       "(time), %.1f vs %.1f values/s (M)\n",
		       t_sql, t_long / t_sql, (double)exp_values / t_long / 1e6,
		       (double)exp_values / t_sql / 1e6);
	}
	printf("export peak RSS (VmHWM): 30 days %ld KiB, whole history %ld KiB (%.1f s)\n",
	       rss_month, rss_all, t_all);
	bool pass = c_full <= 0.050 && c_naive / c_full >= 10 && c_full / c_numpy <= 2 &&
		    c_day < 0.020 && !mismatches && !np_mismatch && same_hourly;
	printf("targets on CPU time (full <= 50 ms, >= 10x naive, <= 2x numpy, 24 h < 20 ms, same answers): %s\n",
	       pass ? "met" : "NOT met");
	buf_finish(&answer);
	buf_finish(&hourly_answer);
	buf_finish(&npout);
	store_channels_free(chs, n);
	if (!keep) {
		unlink(db);
		char wal[600];
		snprintf(wal, sizeof(wal), "%s-wal", db);
		unlink(wal);
		snprintf(wal, sizeof(wal), "%s-shm", db);
		unlink(wal);
	}
	return 0;
}
