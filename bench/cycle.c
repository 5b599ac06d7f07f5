/*
 * CPU per sampling cycle, by stage, on the ROCK 5C fixture and on it with 400 thermal zones.
 *
 * A copy of the ROCK 5C fixture (its zones, clusters, devfreq devices, cooling devices, /proc
 * and debugfs), with generated thermal zones up to N, is sampled once a minute on a fake clock,
 * with three capacitors watched. Between cycles every zone's temperature moves, /proc/stat and
 * the NPU's load advance (so the load source computes busy shares), and every 20 cycles the big
 * cluster is capped for 5 cycles with its cooling device raised (a throttle episode):
 *  - total: recorder_tick() itself, the daemon's whole cycle (stamp, clock, read, store, running
 *    damage, hourly maintenance, live snapshot);
 *  - the stages, driven one by one on a second database: read (sampler_read), quantize/pack
 *    (the store's integer values and codec_pairs_encode), SQLite (store_write_cycle less the
 *    quantize/pack), rollup (store_maintain at each hour, spread over the cycles), capacitor
 *    tracker (capwatch_update and capwatch_persist), throttle detection (what the recorder does
 *    each cycle: the readings and the tracker, the topology found once as the channels stay
 *    the same), and load
 *    (the cycle with the load source less the same cycle without it, both by recorder_tick());
 *  - the cycle without load and throttle detection (the recorder's total without the load
 *    source, less the throttle stage), and the ratio of the whole cycle to it. The recorders
 *    with and without the load source tick in turn on the same tree, so what a busy machine
 *    adds falls on both alike; the least of REPEATS passes counts, for them and each stage.
 * CPU time is CLOCK_THREAD_CPUTIME_ID around each stage; the tree is rewritten between cycles,
 * outside the timed regions, in place with pwrite() as the kernel updates sysfs. Baseline in the
 * same run: the read-only pass (what the cycle costs at least). The tree lives in /dev/shm when
 * it can (sysfs is memory), the database in a temporary directory on disk (-d DIR to choose).
 *
 * Usage: bench-cycle [-d DIR] [-n CYCLES] [-c ZONES]... (default: the fixture's 7 zones and 400)
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capwatch.h"
#include "codec.h"
#include "config.h"
#include "live.h"
#include "log.h"
#include "recorder.h"
#include "sampler.h"
#include "store.h"
#include "throttle.h"
#include "throttlescan.h"
#include "xalloc.h"

#define T0            1787000400 // an hour boundary
#define M0            5000000    // boot clock at T0, ms
#define WARMUP        30 // cycles before the measurement: channels registered, caches filled
#define BOOT_ID       "3f1c0f7e-5b0a-4a43-9c1e-2f0d2b1a9e11"
#define REPEATS       3 // passes of each kind (the stages, the recorders); the least counts
#define FIXTURE_ZONES 7 // thermal_zone0..6 of the ROCK 5C fixture

static int64_t fake_mono;

static int64_t read_fake_mono(void) {
	return fake_mono;
}

static double thread_cpu_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
	fprintf(stderr, "bench-cycle: %s\n", what);
	exit(1);
}

static void write_file(const char *path, const char *text) {
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static void mkdir_p(const char *path) {
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
}

/* The ROCK 5C fixture copied to @root, with generated zones after its own up to @n in all. */
static void tree_create(const char *root, int n) {
	char path[512];
	mkdir_p(root);
	char *cmd =
		xasprintf("cp -a '%s/tests/fixtures/rock5c/.' '%s'", THERMLOG_SOURCE_ROOT, root);
	if (system(cmd) != 0) {
		die("could not copy the ROCK 5C fixture");
	}
	free(cmd);
	for (int k = FIXTURE_ZONES; k < n; k++) {
		char text[64];
		snprintf(path, sizeof(path), "%s/class/thermal/thermal_zone%d", root, k);
		mkdir_p(path);
		snprintf(path, sizeof(path), "%s/class/thermal/thermal_zone%d/type", root, k);
		snprintf(text, sizeof(text), "zone%d-thermal\n", k);
		write_file(path, text);
		snprintf(path, sizeof(path), "%s/class/thermal/thermal_zone%d/mode", root, k);
		write_file(path, "enabled\n");
	}
}

/*
 * What moves between cycles besides the temperatures: /proc/stat's CPU lines advance by 6000
 * ticks (a minute at USER_HZ 100) with busy shares that vary by CPU and minute, the NPU's three
 * cores report a load, and in minutes 10-14 of every 20 the big cluster (policy6) is capped to
 * 1.8 GHz with its cooling device (cooling_device2) at state 3.
 */
static void tree_move(const char *root, int64_t i) {
	static int64_t busy[9], idle[9];
	char path[512], text[2048];
	size_t len = 0;
	for (int k = 0; k < 9; k++) {
		int64_t b = 600 + (i * 37 + k * 211) % 4800;
		busy[k] += k == 0 ? 8 * b : b;
		idle[k] += k == 0 ? 8 * (6000 - b) : 6000 - b;
		char name[8] = "cpu ";
		if (k > 0) {
			snprintf(name, sizeof(name), "cpu%d", k - 1);
		}
		len += (size_t)snprintf(
			text + len, sizeof(text) - len, "%s %lld 0 0 %lld 0 0 0 0 0 0\n", name,
			(long long)(2716485 + busy[k]), (long long)(70112394 + idle[k]));
	}
	snprintf(path, sizeof(path), "%s/proc/stat", root);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/kernel/debug/rknpu/load", root);
	snprintf(text, sizeof(text), "NPU load:  Core0: %3d%%, Core1: %3d%%, Core2: %3d%%,\n",
		 (int)(i * 7 % 100), (int)(i * 3 % 60), 0);
	write_file(path, text);
	bool capped = i % 20 >= 10 && i % 20 < 15;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpufreq/policy6/scaling_max_freq",
		 root);
	write_file(path, capped ? "1800000\n" : "2256000\n");
	snprintf(path, sizeof(path), "%s/class/thermal/cooling_device2/cur_state", root);
	write_file(path, capped ? "3\n" : "0\n");
}

/*
 * Each zone's temperature at minute @i: a slow daily swing plus noise, in m°C steps of 50,
 * always five digits, so a pwrite() in place replaces it as the kernel would (no truncation).
 */
static void tree_set(const int *fds, int n, int64_t i) {
	for (int k = 0; k < n; k++) {
		double c = 45 + 10 * sin((double)i * 2 * M_PI / 1440 + k) +
			   (double)((i * 7919 + k * 104729) % 13) * 0.3;
		char text[32];
		int len = snprintf(text, sizeof(text), "%ld\n", lround(c * 20) * 50);
		if (pwrite(fds[k], text, (size_t)len, 0) != len) {
			die("could not write a temperature");
		}
	}
}

static int *tree_open(const char *root, int n) {
	int *fds = xcalloc((size_t)n, sizeof(*fds));
	for (int k = 0; k < n; k++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/class/thermal/thermal_zone%d/temp", root, k);
		fds[k] = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fds[k] < 0) {
			perror(path);
			exit(1);
		}
	}
	tree_set(fds, n, 0);
	return fds;
}

static void tree_close(int *fds, int n) {
	for (int k = 0; k < n; k++) {
		close(fds[k]);
	}
	free(fds);
}

static void config_for(struct config *cfg, const char *root, bool load) {
	config_init(cfg);
	const char *yaml =
		"interval: 60s\n"
		"sources: {hwmon: {enabled: false}, meminfo: {enabled: false}}\n"
		"capacitors:\n"
		"  - {name: C1, sensor: thermal/zone0-thermal, rated_life_h: 2000, rated_temp_c: 105}\n"
		"  - {name: C2, sensor: thermal/zone1-thermal, rated_life_h: 5000, rated_temp_c: 105}\n"
		"  - {name: C3, sensor: thermal/zone2-thermal, rated_life_h: 8000, rated_temp_c: 125,"
		" model: arrhenius, ea_ev: 0.94}\n";
	char *errors = NULL;
	if (!config_load_string(cfg, "bench.yaml", yaml, strlen(yaml), &errors)) {
		fprintf(stderr, "bench-cycle: %s\n", errors ? errors : "bad configuration");
		exit(1);
	}
	free(cfg->sysfs_root);
	cfg->sysfs_root = xstrdup(root);
	free(cfg->procfs_root);
	cfg->procfs_root = xasprintf("%s/proc", root);
	free(cfg->debugfs_root);
	cfg->debugfs_root = xasprintf("%s/kernel/debug", root);
	cfg->sources[SOURCE_LOAD].enabled = load;
}

static void remove_db(const char *path) {
	const char *suffixes[] = {"", "-wal", "-shm", ".reopen"};
	for (size_t i = 0; i < 4; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		unlink(p);
		free(p);
	}
}

struct figures {
	size_t channels;
	double total, read, pack, sql, rollup, caps; // s of CPU per cycle
	double throttle;                             // throttle detection, as the recorder does it
	double total_noload;                         // recorder_tick() without the load source
	size_t domains, zones, cdevs;                // what throttle detection reads each cycle
};

/* A recorder as the daemon runs one, with or without the load source, on its own database. */
struct rec_run {
	struct config cfg;
	char *db;
	struct recorder *rec;
	struct sampler *sampler;
	struct live *live;
	double *cpu; // s of CPU per measured cycle
};

static void rec_run_init(struct rec_run *r, const char *dir, const char *root, bool load,
			 int cycles) {
	config_for(&r->cfg, root, load);
	r->db = xasprintf("%s/recorder-%s.db", dir, load ? "load" : "noload");
	remove_db(r->db);
	struct clock_source clock = {.root = dir, .build_epoch = 0, .adjtimex = NULL};
	struct recorder_params p = {
		.db_path = r->db, .boot_id = BOOT_ID, .clock = &clock, .mono_ms = read_fake_mono};
	r->rec = recorder_create(&r->cfg, &p, T0, M0);
	r->sampler = sampler_create(&r->cfg);
	r->live = live_create();
	if (!r->rec || !r->sampler || !r->live) {
		die("could not create the recorder");
	}
	recorder_start(r->rec, r->sampler, r->live, T0);
	r->cpu = xcalloc((size_t)cycles, sizeof(*r->cpu));
}

static void rec_run_finish(struct rec_run *r) {
	recorder_destroy(r->rec);
	sampler_destroy(r->sampler);
	live_destroy(r->live);
	config_finish(&r->cfg);
	remove_db(r->db);
	free(r->db);
	free(r->cpu);
}

/* One recorder_tick() of cycle @i, its CPU time kept when @i is past the warm-up. */
static size_t rec_run_tick(struct rec_run *r, int i) {
	int64_t mono = M0 + (int64_t)i * 60000;
	fake_mono = mono + 1;
	struct recorder_result res;
	double t0 = thread_cpu_s();
	recorder_tick(r->rec, ((int64_t)T0 + i * 60) * 1000, mono, &res);
	double t1 = thread_cpu_s();
	if (!res.stored) {
		die("a cycle was not stored");
	}
	if (i >= WARMUP) {
		r->cpu[i - WARMUP] = t1 - t0;
	}
	return res.n;
}

static double mean(const double *v, int n) {
	double sum = 0;
	for (int i = 0; i < n; i++) {
		sum += v[i];
	}
	return sum / n;
}

/*
 * The daemon's cycle as it runs: recorder_tick() on the fake clock, with and without the load
 * source, the two recorders ticking in turn on the same tree (the first of them alternating),
 * so what a busy machine adds falls on both alike; the mean cycle of each, the least of
 * REPEATS passes.
 */
static void run_recorders(const char *dir, const char *root, const int *fds, int n_zones,
			  int cycles, struct figures *f) {
	struct rec_run with, without;
	rec_run_init(&with, dir, root, true, cycles);
	rec_run_init(&without, dir, root, false, cycles);
	for (int i = 0; i < WARMUP + cycles; i++) {
		tree_set(fds, n_zones, i);
		tree_move(root, i);
		struct rec_run *first = i % 2 ? &with : &without;
		struct rec_run *second = i % 2 ? &without : &with;
		size_t n = rec_run_tick(first, i);
		size_t m = rec_run_tick(second, i);
		f->channels = first == &with ? n : m;
	}
	f->total = fmin(f->total, mean(with.cpu, cycles));
	f->total_noload = fmin(f->total_noload, mean(without.cpu, cycles));
	rec_run_finish(&with);
	rec_run_finish(&without);
}

/* The same cycle in its stages, each timed on its own. */
static void run_stages(const char *dir, const char *root, const int *fds, int n_zones, int cycles,
		       struct figures *f) {
	struct config cfg;
	config_for(&cfg, root, true);
	char *db = xasprintf("%s/stages.db", dir);
	remove_db(db);
	struct store *store;
	if (store_open(&store, db, STORE_MODE_WRITE) < 0) {
		die("could not open the database");
	}
	struct sampler *sampler = sampler_create(&cfg);
	struct capwatch *cw = capwatch_create(&cfg, store);
	if (!sampler || !cw) {
		die("could not create the sampler or the capacitors");
	}
	struct codec_pair *pairs = NULL;
	uint8_t *blob = NULL;
	size_t cap = 0;
	int64_t last_hour = 0;
	struct throttle_tracker *tracker = throttle_tracker_create();
	struct throttle_input *tin = xcalloc(1, sizeof(*tin));
	struct throttlescan *scan = NULL;
	uint64_t scan_version = 0;
	size_t scan_n = 0;
	double t[7];
	for (int i = 0; i < WARMUP + cycles; i++) {
		tree_set(fds, n_zones, i);
		tree_move(root, i);
		int64_t ts = (int64_t)T0 + i * 60;
		const struct channel *ch;
		const struct reading *rd;
		t[0] = thread_cpu_s();
		size_t n = sampler_read(sampler, (M0 / 1000) + i * 60, &ch, &rd);
		t[1] = thread_cpu_s();
		if (n > cap) {
			cap = n;
			pairs = xrealloc(pairs, cap * sizeof(*pairs));
			blob = xrealloc(blob, cap * 2 * CODEC_VARINT_MAX + 1);
		}
		// What the store does to the readings before SQLite sees them.
		size_t m = 0;
		for (size_t k = 0; k < n; k++) {
			if (rd[k].err == 0) {
				pairs[m].id = (int64_t)k + 1;
				pairs[m++].q = llround(rd[k].value / ch[k].resolution);
			}
		}
		volatile size_t len = codec_pairs_encode(blob, pairs, m);
		(void)len;
		t[2] = thread_cpu_s();
		struct cycle c = {.ts = ts,
				  .boot_id = BOOT_ID,
				  .clock = CLOCK_STATE_SYNCED,
				  .n = n,
				  .channels = ch,
				  .readings = rd};
		if (store_write_cycle(store, &c) < 0) {
			die("a cycle was not stored");
		}
		t[3] = thread_cpu_s();
		if (ts / 3600 != last_hour) {
			last_hour = ts / 3600;
			if (store_maintain(store, ts, cfg.retention_raw_s) < 0) {
				die("maintenance failed");
			}
		}
		t[4] = thread_cpu_s();
		capwatch_update(cw, &c);
		capwatch_persist(cw, ts);
		t[5] = thread_cpu_s();
		// throttle detection as recorder.c's track_throttle(): the topology found again
		// when a rescan changes the channels (here: never after the first)
		if (!scan || (sampler_channels_version(sampler) != scan_version && n != scan_n)) {
			throttlescan_destroy(scan);
			scan = throttlescan_create(sampler_root_fd(sampler));
			scan_n = n;
		}
		scan_version = sampler_channels_version(sampler);
		throttlescan_read(scan, tin, sampler);
		tin->ts = ts;
		throttle_tracker_update(tracker, tin);
		size_t n_eps;
		(void)throttle_tracker_episodes(tracker, &n_eps);
		t[6] = thread_cpu_s();
		if (i >= WARMUP) {
			f->throttle += t[6] - t[5];
			f->read += t[1] - t[0];
			f->pack += t[2] - t[1];
			f->sql += (t[3] - t[2]) - (t[2] - t[1]);
			f->rollup += t[4] - t[3];
			f->caps += t[5] - t[4];
		}
	}
	f->read /= cycles;
	f->pack /= cycles;
	f->sql /= cycles;
	f->rollup /= cycles;
	f->caps /= cycles;
	f->throttle /= cycles;
	throttlescan_counts(scan, &f->domains, &f->zones, &f->cdevs);
	throttlescan_destroy(scan);
	throttle_tracker_destroy(tracker);
	free(tin);
	free(pairs);
	free(blob);
	capwatch_destroy(cw);
	sampler_destroy(sampler);
	store_close(store);
	config_finish(&cfg);
	remove_db(db);
	free(db);
}

/* Keeps in @f the least of each stage of @f and @s (@first: @s's as they are). */
static void least_stages(struct figures *f, const struct figures *s, bool first) {
	double *dst[] = {&f->read, &f->pack, &f->sql, &f->rollup, &f->caps, &f->throttle};
	const double src[] = {s->read, s->pack, s->sql, s->rollup, s->caps, s->throttle};
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		*dst[i] = first ? src[i] : fmin(*dst[i], src[i]);
	}
	f->domains = s->domains;
	f->zones = s->zones;
	f->cdevs = s->cdevs;
}

static void measure(const char *dir, const char *tree_dir, int n_zones, int cycles,
		    struct figures *f) {
	char *root = xasprintf("%s/sysfs-%d", tree_dir, n_zones);
	tree_create(root, n_zones);
	int *fds = tree_open(root, n_zones);
	*f = (struct figures){0};
	// the stages, the least of REPEATS passes each: what a busy machine adds to one pass is
	// not the cycle's cost
	for (int k = 0; k < REPEATS; k++) {
		struct figures s = {0};
		run_stages(dir, root, fds, n_zones, cycles, &s);
		least_stages(f, &s, k == 0);
	}
	f->total = f->total_noload = INFINITY;
	for (int k = 0; k < REPEATS; k++) {
		run_recorders(dir, root, fds, n_zones, cycles, f);
	}
	tree_close(fds, n_zones);
	char *cmd = xasprintf("rm -rf '%s'", root);
	if (system(cmd) != 0) {
		fprintf(stderr, "bench-cycle: could not remove %s\n", root);
	}
	free(cmd);
	free(root);
}

static void print(const struct figures *f) {
	double us = 1e6;
	double parts = f->read + f->pack + f->sql + f->rollup + f->caps + f->throttle;
	double load = f->total - f->total_noload;
	double without = f->total_noload - f->throttle;
	printf("%4zu channels: %8.1f us CPU per cycle (recorder_tick), %.1fx the read-only pass\n",
	       f->channels, f->total * us, f->total / f->read);
	printf("      read %.1f | quantize/pack %.1f | SQLite %.1f | rollup %.1f | capacitor "
	       "tracker %.1f | throttle detection %.1f | recorder's own work %.1f (us)\n",
	       f->read * us, f->pack * us, f->sql * us, f->rollup * us, f->caps * us,
	       f->throttle * us, (f->total - parts) * us);
	printf("      load source %.1f us (the cycle with it less the cycle without); throttle "
	       "detection reads %zu domains, %zu zones, %zu cooling devices\n",
	       load * us, f->domains, f->zones, f->cdevs);
	printf("      without load and throttle detection %.1f us: the cycle with them costs %.2fx "
	       "(target <= 1.25x)\n",
	       without * us, f->total / without);
}

int main(int argc, char **argv) {
	const char *dir = NULL;
	int cycles = 600, sizes[8], n_sizes = 0, opt;
	while ((opt = getopt(argc, argv, "d:n:c:")) != -1) {
		if (opt == 'd') {
			dir = optarg;
		} else if (opt == 'n' && atoi(optarg) > 0) {
			cycles = atoi(optarg);
		} else if (opt == 'c' && atoi(optarg) >= FIXTURE_ZONES && n_sizes < 8) {
			sizes[n_sizes++] = atoi(optarg);
		} else {
			fprintf(stderr,
				"usage: bench-cycle [-d DIR] [-n CYCLES] [-c CHANNELS]...\n");
			return 2;
		}
	}
	if (n_sizes == 0) {
		sizes[n_sizes++] = FIXTURE_ZONES;
		sizes[n_sizes++] = 400;
	}
	log_init(LOG_LEVEL_WARN);
	char tmpl[] = "/var/tmp/bench-cycle-XXXXXX";
	if (!dir && !(dir = mkdtemp(tmpl))) {
		perror("bench-cycle: mkdtemp");
		return 1;
	}
	// sysfs lives in memory: the tree goes to a RAM file system when there is one.
	char shm_tmpl[] = "/dev/shm/bench-cycle-XXXXXX";
	const char *tree_dir = access("/dev/shm", W_OK) == 0 ? mkdtemp(shm_tmpl) : NULL;
	printf("one-minute cycles on a fake clock: %d warm-up, %d measured (%.1f hours, hourly "
	       "rollups included), 3 capacitors; CPU time of this thread\n",
	       WARMUP, cycles, cycles / 60.0);
	struct figures f[8];
	for (int i = 0; i < n_sizes; i++) {
		measure(dir, tree_dir ? tree_dir : dir, sizes[i], cycles, &f[i]);
		print(&f[i]);
	}
	if (n_sizes >= 2) {
		double ratio = f[n_sizes - 1].total / f[0].total;
		double channels = (double)f[n_sizes - 1].channels / (double)f[0].channels;
		printf("growth: %zu channels cost %.1fx %zu channels (%.0fx the channels; target <= "
		       "%.0fx)\n",
		       f[n_sizes - 1].channels, ratio, f[0].channels, channels, channels);
	}
	if (dir == tmpl) {
		rmdir(tmpl);
	}
	if (tree_dir) {
		rmdir(tree_dir);
	}
	return 0;
}
