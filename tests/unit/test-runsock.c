/*
 * runsock on the rock5c tree with a stand-in procfs and clocks of its own: the executable is
 * never opened (a FIFO would stall the loop), a start whose caller gave up never happens, a
 * start's request_id answers the same run for 10 minutes, runs.max_active, a watched pid whose
 * start time changed is gone, fast samples reach the database within 10 s, an active run
 * holds the same few KiB however long it lasts, and the samples waiting for their batch share
 * one copy of the channel list.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "cycle.h"
#include "runsock-internal.h"
#include "runsock.h"
#include "sampler.h"
#include "store.h"
#include "test.h"
#include "xalloc.h"

#define T0_MS   1790000000000LL // wall clock
#define MONO_MS 86400000LL      // boot clock at T0_MS

struct env {
	char dir[64];
	char *db, *proc;
	struct config cfg;
	struct store *store;
};

/* A procfs stand-in: @pid's stat with start time @ticks (field 22), a name with ") (" in it. */
static void write_stat(struct env *e, long pid, unsigned long long ticks) {
	char *d = xasprintf("%s/%ld", e->proc, pid);
	mkdir(d, 0755);
	char *path = xasprintf("%s/stat", d);
	FILE *f = fopen(path, "w");
	fprintf(f,
		"%ld (a) (b c) S 1 %ld %ld 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 %llu 1000 "
		"10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
		pid, pid, pid, ticks);
	fclose(f);
	free(path);
	free(d);
}

static bool env_open(struct env *e, const char *extra) {
	memset(e, 0, sizeof(*e));
	snprintf(e->dir, sizeof(e->dir), "/tmp/test-runsock-XXXXXX");
	if (!mkdtemp(e->dir)) {
		return false;
	}
	e->db = xasprintf("%s/t.db", e->dir);
	e->proc = xasprintf("%s/proc", e->dir);
	mkdir(e->proc, 0755);
	char *root = realpath("fixtures/rock5c", NULL);
	char *yaml = xasprintf("sysfs_root: %s\nprocfs_root: %s\ndatabase: %s\n"
			       "runs:\n  interval: 1s\n%s",
			       root, e->proc, e->db, extra ? extra : "");
	free(root);
	config_init(&e->cfg);
	char *errors = NULL;
	bool good = config_load_string(&e->cfg, "t.yaml", yaml, strlen(yaml), &errors);
	if (!good) {
		printf("# %s", errors ? errors : "config\n");
	}
	free(errors);
	free(yaml);
	good = good && store_open(&e->store, e->db, STORE_MODE_WRITE) == 0;
	// One minute cycle registers the channels: the fast samples keep only those.
	struct sampler *s = good ? sampler_create(&e->cfg) : NULL;
	if (s) {
		const struct channel *ch;
		const struct reading *rd;
		size_t n = sampler_read(s, MONO_MS / 1000, &ch, &rd);
		struct cycle cy = {.ts = T0_MS / 1000 - 60, .n = n, .channels = ch, .readings = rd};
		good = store_write_cycle(e->store, &cy) == 0;
		sampler_destroy(s);
	}
	return good && s;
}

static void env_close(struct env *e) {
	store_close(e->store);
	config_finish(&e->cfg);
	char *cmd = xasprintf("rm -rf %s", e->dir);
	if (system(cmd) != 0) {
		printf("# could not remove %s\n", e->dir);
	}
	free(cmd);
	free(e->db);
	free(e->proc);
}

struct got_run {
	char status[16];
	char *fingerprint;
};

static int copy_run(void *ctx, const struct store_run *run) {
	struct got_run *g = ctx;
	snprintf(g->status, sizeof(g->status), "%s", run_status_name(run->status));
	g->fingerprint = run->fingerprint ? xstrdup(run->fingerprint) : NULL;
	return 0;
}

static struct got_run get_run(struct env *e, int64_t id) {
	struct got_run g = {{0}, NULL};
	if (store_run_get(e->store, id, copy_run, &g) < 0) {
		snprintf(g.status, sizeof(g.status), "absent");
	}
	return g;
}

/* The status of run @id into @out (its fingerprint freed). */
static const char *status_of(struct env *e, int64_t id, char out[16]) {
	struct got_run g = get_run(e, id);
	free(g.fingerprint);
	memcpy(out, g.status, sizeof(g.status));
	return out;
}

static int count_run(void *ctx, const struct store_run *run) {
	(void)run;
	(*(int *)ctx)++;
	return 0;
}

static int n_runs(struct env *e) {
	int n = 0;
	store_runs_scan(e->store, NULL, count_run, &n);
	return n;
}

static const struct runwire_stop STOP_OK = {.has_exit_code = true, .rss_max_bytes = -1};

static void test_exe_never_opened(void) {
	struct env e;
	if (!ok(env_open(&e, NULL), "environment")) {
		return;
	}
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	// A regular file the daemon could read: its digest is the caller's to give, never read.
	char *file = xasprintf("%s/key.pem", e.dir);
	FILE *f = fopen(file, "w");
	fputs("secret\n", f);
	fclose(f);
	struct runwire_start start = {.label = "file", .tags = "{}", .exe = file};
	int64_t id = 0;
	ok(runsock_start(rs, &start, T0_MS, MONO_MS, &id) == 0, "a start naming a file");
	struct got_run g = get_run(&e, id);
	ok(g.fingerprint && strstr(g.fingerprint, "\"exe_sha256\":null") &&
		   strstr(g.fingerprint, "key.pem"),
	   "no digest unless the caller sends one: the file is not read");
	printf("# %s\n", g.fingerprint ? g.fingerprint : "(none)");
	free(g.fingerprint);
	const char *sha = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
	start = (struct runwire_start){
		.label = "sha", .tags = "{}", .exe = file, .exe_sha256 = sha};
	ok(runsock_start(rs, &start, T0_MS + 10, MONO_MS + 10, &id) == 0, "a start with a digest");
	g = get_run(&e, id);
	ok(g.fingerprint && strstr(g.fingerprint, sha), "the caller's digest is the fingerprint's");
	free(g.fingerprint);
	// A FIFO nobody writes: opening it would block the loop for good (the alarm ends a hang).
	char *fifo = xasprintf("%s/fifo", e.dir);
	ok(mkfifo(fifo, 0600) == 0, "a FIFO");
	alarm(60);
	start = (struct runwire_start){.label = "fifo", .tags = "{}", .exe = fifo};
	ok(runsock_start(rs, &start, T0_MS + 20, MONO_MS + 20, &id) == 0,
	   "a start naming a FIFO returns");
	alarm(0);
	runsock_destroy(rs);
	free(fifo);
	free(file);
	env_close(&e);
}

struct caller {
	struct runsock *rs;
	int rc;
	char *err;
};

static void *call_start(void *arg) {
	struct caller *c = arg;
	const struct api_runs *api = runsock_api(c->rs);
	struct runwire_start start = {.label = "ghost", .tags = "{}"};
	int64_t id = 0;
	c->rc = api->start(api->ctx, &start, &id, &c->err);
	return NULL;
}

static void test_given_up_start_never_happens(void) {
	struct env e;
	if (!ok(env_open(&e, NULL), "environment")) {
		return;
	}
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	// The loop is stalled (never called) while the request waits: it gets 503 after 10 s.
	struct caller c = {.rs = rs};
	pthread_t t;
	pthread_create(&t, NULL, call_start, &c);
	pthread_join(t, NULL);
	is_int(c.rc, -EAGAIN, "the waiting start is answered busy");
	printf("# %s\n", c.err ? c.err : "(no message)");
	free(c.err);
	// Then the loop comes back: the start its caller gave up on is not carried out.
	runsock_work(rs, T0_MS, MONO_MS);
	is_int(n_runs(&e), 0, "no run stored for the start answered 503");
	runsock_destroy(rs);
	env_close(&e);
}

static void test_request_id(void) {
	struct env e;
	if (!ok(env_open(&e, NULL), "environment")) {
		return;
	}
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	struct runwire_start start = {.label = "retry", .tags = "{}", .request_id = "k-1.a_b"};
	int64_t a = 0, b = 0, c = 0, d = 0;
	ok(runsock_start(rs, &start, T0_MS, MONO_MS, &a) == 0, "a start with a request_id");
	ok(runsock_start(rs, &start, T0_MS + 5000, MONO_MS + 5000, &b) == 0 && b == a,
	   "the same request_id again: the same run");
	ok(runsock_stop(rs, a, &STOP_OK, T0_MS + 6000, MONO_MS + 6000) == 0, "stopped");
	ok(runsock_start(rs, &start, T0_MS + 7000, MONO_MS + 7000, &c) == 0 && c == a,
	   "after its stop, still the same run");
	is_int(n_runs(&e), 1, "one run stored");
	int64_t later = 10 * 60 * 1000 + 1;
	ok(runsock_start(rs, &start, T0_MS + later, MONO_MS + later, &d) == 0 && d != a,
	   "10 minutes after the start the key is a new run's");
	runsock_destroy(rs);
	env_close(&e);
}

static void test_max_active(void) {
	struct env e;
	if (!ok(env_open(&e, "  max_active: 2\n"), "environment with runs.max_active 2")) {
		return;
	}
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	struct runwire_start start = {.label = "cap", .tags = "{}"};
	int64_t a = 0, b = 0, c = 0;
	ok(runsock_start(rs, &start, T0_MS, MONO_MS, &a) == 0, "run 1 of 2");
	ok(runsock_start(rs, &start, T0_MS + 1, MONO_MS + 1, &b) == 0, "run 2 of 2");
	is_int(runsock_start(rs, &start, T0_MS + 2, MONO_MS + 2, &c), -EBUSY,
	       "run 3: too many active");
	is_int(n_runs(&e), 2, "the refused start stored nothing");
	ok(runsock_stop(rs, a, &STOP_OK, T0_MS + 3, MONO_MS + 3) == 0, "one stops");
	ok(runsock_start(rs, &start, T0_MS + 4, MONO_MS + 4, &c) == 0, "then a start is accepted");
	runsock_destroy(rs);
	env_close(&e);
}

static void test_pid_start_time(void) {
	struct env e;
	if (!ok(env_open(&e, NULL), "environment")) {
		return;
	}
	long pid = (long)getpid(); // alive all along: only its start time says it is another
	write_stat(&e, pid, 4242);
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	struct runwire_start start = {
		.label = "watched", .tags = "{}", .has_pid = true, .pid = pid};
	int64_t id = 0;
	ok(runsock_start(rs, &start, T0_MS, MONO_MS, &id) == 0, "a run watching a pid");
	runsock_work(rs, T0_MS + 1000, MONO_MS + 1000);
	is_str(status_of(&e, id, (char[16]){0}), "running", "the same process: running");
	// A restart reads the start time back with the run.
	runsock_destroy(rs);
	rs = runsock_create(&e.cfg, e.store, NULL, T0_MS + 2000);
	runsock_work(rs, T0_MS + 2000, MONO_MS + 2000);
	is_str(status_of(&e, id, (char[16]){0}), "running", "after a restart: running");
	write_stat(&e, pid, 4243); // the pid went to a process started later
	runsock_work(rs, T0_MS + 3000, MONO_MS + 3000);
	is_str(status_of(&e, id, (char[16]){0}), "lost", "another process with the pid: lost");
	// Without a stat file at the start (no procfs to tell), the pid alone is watched.
	start.pid = pid + 1000000;
	int64_t id2 = 0;
	start.pid = pid;
	char *path = xasprintf("%s/%ld/stat", e.proc, pid);
	unlink(path);
	free(path);
	ok(runsock_start(rs, &start, T0_MS + 4000, MONO_MS + 4000, &id2) == 0, "a run, no stat");
	runsock_work(rs, T0_MS + 5000, MONO_MS + 5000);
	is_str(status_of(&e, id2, (char[16]){0}), "running",
	       "no start time known: the live pid runs");
	runsock_destroy(rs);
	env_close(&e);
}

static int count_instant(void *ctx, const struct store_run_sample *s) {
	int64_t *last = ctx;
	if (s->ts_ms != last[0]) {
		last[0] = s->ts_ms;
		last[1]++;
	}
	return 0;
}

static int64_t stored_samples(struct env *e) {
	int64_t c[2] = {0, 0};
	store_run_samples_scan(e->store, 0, INT64_MAX, count_instant, c);
	return c[1];
}

static void test_timer_flush(void) {
	struct env e;
	if (!ok(env_open(&e, NULL), "environment")) {
		return;
	}
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	struct runwire_start start = {.label = "flush", .tags = "{}"};
	int64_t id = 0;
	ok(runsock_start(rs, &start, T0_MS, MONO_MS, &id) == 0, "a run at 1 s");
	int64_t t = 0;
	for (; t <= 10000; t += 1000) {
		int wait = runsock_timeout_ms(rs, MONO_MS + t);
		ok(wait >= 0 && wait <= 1000, "the loop is woken within the interval");
		runsock_work(rs, T0_MS + t, MONO_MS + t);
	}
	// 11 samples, fewer than a batch: the oldest waited 10 s, so they are in the database
	// (a crash now loses none of them).
	int64_t n = stored_samples(&e);
	ok(n >= 10, "the fast samples are stored 10 s after the first, not at 24");
	printf("# %lld stored\n", (long long)n);
	runsock_destroy(rs);
	env_close(&e);
}

/* Heap bytes in use by everything but SQLite (whose page cache grows with the database). */
static long long heap_used(void) {
	struct mallinfo2 mi = mallinfo2();
	return (long long)mi.uordblks - (long long)sqlite3_memory_used();
}

static void test_memory_bounded(void) {
	struct env e;
	if (!ok(env_open(&e, NULL), "environment")) {
		return;
	}
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	struct runwire_start start = {.label = "long", .tags = "{}"};
	int64_t id = 0, t = 0;
	ok(runsock_start(rs, &start, T0_MS, MONO_MS, &id) == 0, "a long run");
	for (t = 1000; t <= 200 * 1000; t += 1000) {
		runsock_work(rs, T0_MS + t, MONO_MS + t);
	}
	// The check compares the highest use over two equal spans (the store's batches come and
	// go): a run that kept anything per sample (100 B before) would be 150 KB higher.
	long long high[2] = {0, 0};
	for (int span = 0; span < 2; span++) {
		for (int i = 0; i < 1500; i++, t += 1000) {
			runsock_work(rs, T0_MS + t, MONO_MS + t);
			long long used = heap_used();
			high[span] = used > high[span] ? used : high[span];
		}
	}
	printf("# one run: at most %lld bytes in use over fast samples 200-1700, %lld over "
	       "1700-3200\n",
	       high[0], high[1]);
	ok(high[1] - high[0] < 4096, "3000 more fast samples: the run holds no more memory");
	ok(runsock_stop(rs, id, &STOP_OK, T0_MS + t, MONO_MS + t) == 0, "the long run stops");
	// Many runs at once: each costs a few KiB, and all of it is back after they stop (a first
	// round fills the caches that stay: the sampler's, the store's).
	for (int round = 0; round < 2; round++) {
		long long before = heap_used();
		int64_t ids[64];
		for (int i = 0; i < 64; i++) {
			t += 10;
			runsock_start(rs, &start, T0_MS + t, MONO_MS + t, &ids[i]);
		}
		t += 1000;
		runsock_work(rs, T0_MS + t, MONO_MS + t);
		long long active = heap_used();
		for (int i = 0; i < 64; i++) {
			t += 10;
			runsock_stop(rs, ids[i], &STOP_OK, T0_MS + t, MONO_MS + t);
		}
		long long after = heap_used();
		printf("# 64 active runs: %lld bytes each; %lld bytes more after they stopped\n",
		       (active - before) / 64, after - before);
		ok((active - before) / 64 < 8192, "an active run costs under 8 KiB");
		// What stays is SQLite's and the store's, growing with the database: under 1 KiB a
		// run.
		ok(after - before < 64 * 1024, "the runs' memory is back after the stops");
	}
	runsock_destroy(rs);
	env_close(&e);
}

/*
 * The fast samples waiting for their batch (up to 10 s of them) share one copy of the channel
 * list: each costs its readings only (368 bytes on this tree). A copy a sample (7008 bytes, in
 * many small blocks) made a run at 1 s hold 70 KiB more just before its batch was written than
 * just after, and pinned the heap's pages among those of the requests served meanwhile.
 */
static void test_batch_shares_channels(void) {
	struct env e;
	if (!ok(env_open(&e, NULL), "environment")) {
		return;
	}
	struct runsock *rs = runsock_create(&e.cfg, e.store, NULL, T0_MS);
	struct runwire_start start = {.label = "batch", .tags = "{}"};
	int64_t id = 0;
	ok(runsock_start(rs, &start, T0_MS, MONO_MS, &id) == 0, "a run at 1 s");
	runsock_work(rs, T0_MS + 1000, MONO_MS + 1000); // the sampler's own caches are filled
	long long first = heap_used();
	int64_t before = stored_samples(&e);
	for (int64_t t = 2000; t <= 9000; t += 1000) {
		runsock_work(rs, T0_MS + t, MONO_MS + t);
	}
	long long each = (heap_used() - first) / 8;
	ok(stored_samples(&e) == before, "eight more samples wait for their batch");
	printf("# a waiting fast sample holds %lld bytes\n", each);
	ok(each < 1024, "a waiting fast sample holds its readings only, under 1 KiB");
	ok(runsock_stop(rs, id, &STOP_OK, T0_MS + 9500, MONO_MS + 9500) == 0, "the run stops");
	ok(stored_samples(&e) >= before + 9, "the batch is written at the stop");
	runsock_destroy(rs);
	env_close(&e);
}

/*
 * A run's power is integrated a chunk at a time; a sample taken at a wall time before the last
 * one (the loop's late sample after one taken on time, or a wall clock stepped back) is not
 * integrated again: 5 W over 40 s of samples a second covers 40 s, 200 J, whatever the order
 * the samples arrived in around a chunk's end.
 */
static void test_power_never_counted_twice(void) {
	struct run run = {.start_ms = 1000000};
	for (int t = 1000; t <= 1031; t++) { // a chunk's 32 samples
		runsock_power_add(&run, 1000, t, 5);
	}
	runsock_power_add(&run, 1000, 1030.5, 5); // before the last: folded already
	for (int t = 1032; t <= 1040; t++) {
		runsock_power_add(&run, 1000, t, 5);
	}
	runsock_power_fold(&run, 1000, 1040);
	is_near(run.power_covered_s, 40, 1e-9, "power: 40 s covered, a late sample counted once");
	is_near(run.power_j, 200, 1e-9, "power: 200 J");
}

/*
 * A clock's time at each frequency, like the power: a sample taken before the last one is not
 * counted again. 1.8 GHz sampled each second over 0-10 s, a late 0.4 GHz sample at 9.5 s, then
 * 1.8 GHz over 11-20 s: 20 s, all at 1.8 GHz (20.5 s, 1.5 of them at 0.4 GHz, before).
 */
static void test_freq_never_counted_twice(void) {
	struct run run = {.start_ms = 0};
	const char *key = "cpufreq/policy6";
	for (int64_t t = 0; t <= 10; t++) {
		runsock_freq_add(&run, key, 1800000000, t * 1000);
	}
	runsock_freq_add(&run, key, 400000000, 9500); // before the last: counted already
	for (int64_t t = 11; t <= 20; t++) {
		runsock_freq_add(&run, key, 1800000000, t * 1000);
	}
	int64_t total = 0, at_top = 0;
	for (size_t i = 0; run.n_freq == 1 && i < run.freq[0].n; i++) {
		total += run.freq[0].ms[i];
		at_top += run.freq[0].hz[i] == 1800000000 ? run.freq[0].ms[i] : 0;
	}
	printf("# %zu frequencies, %" PRId64 " ms in all, %" PRId64 " ms at 1.8 GHz\n",
	       run.n_freq == 1 ? run.freq[0].n : 0, total, at_top);
	ok(run.n_freq == 1, "freq: one clock");
	ok(total == 20000, "freq: 20 s over 20 s of samples, a late sample counted once");
	ok(at_top == 20000, "freq: all of it at 1.8 GHz");
	for (size_t i = 0; i < run.n_freq; i++) {
		free(run.freq[i].key);
		free(run.freq[i].hz);
		free(run.freq[i].ms);
	}
	free(run.freq);
}

int main(int argc, char **argv) {
	// glibc's per-thread cache holds freed chunks that mallinfo2() counts as in use, filling
	// over thousands of samples: the memory checks measure with it off (set before start).
	// (meson sets it for the unit suite, so valgrind's run is not replaced by a native one.)
	const char *tunables = getenv("GLIBC_TUNABLES");
	if (!tunables || !strstr(tunables, "tcache_count=0")) {
		setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
		execv("/proc/self/exe", argv);
		perror("test-runsock: execv /proc/self/exe");
		return 99;
	}
	test_seed(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	test_exe_never_opened();
	test_request_id();
	test_max_active();
	test_pid_start_time();
	test_timer_flush();
	test_memory_bounded();
	test_batch_shares_channels();
	test_given_up_start_never_happens();
	test_power_never_counted_twice();
	test_freq_never_counted_twice();
	return test_done();
}
