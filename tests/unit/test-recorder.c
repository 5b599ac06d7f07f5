/*
 * The recorder with a fake clock: stamps on the wall clock, small and large steps back, a
 * forward glitch, the queue of unwritten cycles on a page-limited store and its retry, the
 * bounded queue, a deleted database, and the anchor across a restart. The channels are the
 * fixture tree's, read by the real sampler into a real database file.
 */
#include "recorder.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "live.h"
#include "log.h"
#include "sampler.h"
#include "store.h"
#include "test.h"
#include "xalloc.h"

#define FIXTURE "fixtures/rock5c"
#define T0      1787000400 // an hour boundary
#define M0      5000000    // boot clock at T0, ms
#define MIN_MS  60000
#define BOOT_ID "3f1c0f7e-5b0a-4a43-9c1e-2f0d2b1a9e11"

static char tmpdir[] = "/tmp/test-recorder-XXXXXX";
static int64_t fake_mono; // ms; what the recorder reads at the end of a cycle

static int64_t read_fake_mono(void) {
	return fake_mono;
}

struct rig {
	struct config cfg;
	struct sampler *sampler;
	struct live *live;
	struct recorder *rec;
	struct clock_source clock;
	char *db;
};

/* A recorder on @yaml's sources in the sysfs tree @sysfs (and its proc/), in @name. */
static void rig_init_tree(struct rig *g, const char *name, size_t queue_max_bytes, const char *yaml,
			  const char *sysfs) {
	config_init(&g->cfg);
	char *errors = NULL;
	if (!config_load_string(&g->cfg, "t.yaml", yaml, strlen(yaml), &errors)) {
		printf("# %s\n", errors ? errors : "");
		abort();
	}
	free(g->cfg.sysfs_root);
	g->cfg.sysfs_root = xstrdup(sysfs);
	free(g->cfg.procfs_root);
	g->cfg.procfs_root = xasprintf("%s/proc", sysfs);
	// No /run under the temporary root and no adjtimex: the clock state is "unknown".
	g->clock = (struct clock_source){.root = tmpdir, .build_epoch = 0, .adjtimex = NULL};
	g->db = xasprintf("%s/%s", tmpdir, name);
	struct recorder_params p = {.db_path = g->db,
				    .boot_id = BOOT_ID,
				    .clock = &g->clock,
				    .queue_max_bytes = queue_max_bytes,
				    .mono_ms = read_fake_mono};
	g->rec = recorder_create(&g->cfg, &p, T0, M0);
	g->sampler = sampler_create(&g->cfg);
	g->live = live_create();
	if (!g->rec || !g->sampler) {
		printf("# could not create the recorder or the sampler\n");
		abort();
	}
	recorder_start(g->rec, g->sampler, g->live, T0);
}

static void rig_init(struct rig *g, const char *name, size_t queue_max_bytes) {
	// libsensors and /proc would read the host: the fixture's sysfs sources only
	rig_init_tree(
		g, name, queue_max_bytes,
		"interval: 60s\nsources: {hwmon: {enabled: false}, meminfo: {enabled: false}, load: {enabled: false}}\n",
		FIXTURE);
}

static void rig_finish(struct rig *g) {
	recorder_destroy(g->rec);
	sampler_destroy(g->sampler);
	live_destroy(g->live);
	config_finish(&g->cfg);
	const char *suffixes[] = {"", "-wal", "-shm", ".reopen"};
	for (size_t i = 0; i < 4; i++) {
		char *p = xasprintf("%s%s", g->db, suffixes[i]);
		unlink(p);
		free(p);
	}
	free(g->db);
}

/* One cycle at wall second @wall and boot clock @mono (ms). */
static struct recorder_result tick(struct rig *g, int64_t wall, int64_t mono) {
	struct recorder_result res;
	fake_mono = mono + 3; // the cycle takes 3 ms
	recorder_tick(g->rec, wall * 1000, mono, &res);
	return res;
}

static int64_t stored_cycles(struct rig *g) {
	struct store_info info = {0};
	store_info(recorder_store(g->rec), &info);
	return info.cycles;
}

static struct live_health health(struct rig *g) {
	struct live_snapshot snap;
	live_snapshot(g->live, &snap);
	struct live_health h = snap.health;
	live_snapshot_finish(&snap);
	return h;
}

static void test_stamps(void) {
	struct rig g;
	rig_init(&g, "stamps.db", 0);
	is_int(recorder_last_ts(g.rec), 0, "a new database: no anchor");

	struct recorder_result res = tick(&g, T0, M0);
	ok(res.stored && !res.skipped, "first cycle stored");
	is_int(res.ts, T0, "stamped with the wall clock");
	ok(res.n >= 10, "the fixture's channels read");
	is_int(res.clock, CLOCK_STATE_UNKNOWN, "no sync information: unknown (trusted)");
	is_int(stored_cycles(&g), 1, "one cycle in the database");
	struct live_health h = health(&g);
	is_int(h.cycles_total, 1, "health: cycles_total");
	is_int(h.interval_ms, 60000, "health: interval");
	is_near(h.cycle_seconds, 0.003, 1e-9, "health: the cycle's duration from the boot clock");

	res = tick(&g, T0 + 60, M0 + MIN_MS);
	is_int(res.ts, T0 + 60, "next slot stamped with the wall clock");

	// 30 s back: a small step, the slot is skipped until the clock passes T0 + 60.
	res = tick(&g, T0 + 30, M0 + 2 * MIN_MS);
	ok(res.skipped && !res.stored, "small step back: slot skipped");
	is_int(stored_cycles(&g), 2, "nothing stored for it");

	// An hour back: the continued timeline, last stamp plus the boot time since it.
	res = tick(&g, T0 - 3600, M0 + 3 * MIN_MS);
	ok(res.stored, "large step back: stored");
	is_int(res.ts, T0 + 60 + 120, "on the continued timeline (two intervals later)");
	is_int(res.clock, CLOCK_STATE_UNSYNCED, "continued timeline: unsynced");

	res = tick(&g, T0 + 240, M0 + 4 * MIN_MS);
	is_int(res.ts, T0 + 240, "the wall clock passed the timeline: its stamps again");
	is_int(res.clock, CLOCK_STATE_UNKNOWN, "and its clock state");

	// A year ahead with one minute of boot time: a glitch, stored unsynced, not followed.
	int64_t year = 365 * 86400;
	res = tick(&g, T0 + year, M0 + 5 * MIN_MS);
	ok(res.stored, "forward glitch: stored");
	is_int(res.ts, T0 + year, "with the glitch's stamp");
	is_int(res.clock, CLOCK_STATE_UNSYNCED, "marked unsynced");
	is_int(recorder_last_ts(g.rec), T0 + 240, "the anchor does not follow the glitch");

	res = tick(&g, T0 + 360, M0 + 6 * MIN_MS);
	is_int(res.ts, T0 + 360, "back on the timeline");
	is_int(res.clock, CLOCK_STATE_UNKNOWN, "trusted again");
	is_int(recorder_last_ts(g.rec), T0 + 360, "the anchor follows");
	is_int(health(&g).cycles_total, 6, "six cycles stored");
	rig_finish(&g);
}

/*
 * Caps the database at its current pages and samples a minute apart until a cycle needs a new
 * page: that cycle meets a full disk. *@t is the last minute ticked (after T0); returns it.
 */
static struct recorder_result tick_until_full(struct rig *g, int64_t *t) {
	store_limit_pages(recorder_store(g->rec), 1); // never below the current size
	struct recorder_result res;
	do {
		++*t;
		res = tick(g, T0 + 60 * *t, M0 + *t * MIN_MS);
	} while (res.stored && *t < 1000);
	return res;
}

static void test_disk_full(void) {
	struct rig g;
	rig_init(&g, "full.db", 0);
	tick(&g, T0, M0);
	int64_t t = 0;
	struct recorder_result res = tick_until_full(&g, &t);
	ok(!res.stored && !res.skipped, "full: the cycle that needs a page is not stored");
	is_int(res.queued, 1, "full: queued in memory");
	int64_t before = stored_cycles(&g);
	is_int(before, t, "every cycle before it was stored");
	t++;
	res = tick(&g, T0 + 60 * t, M0 + t * MIN_MS);
	is_int(res.queued, 2, "still full: two queued");
	struct live_health h = health(&g);
	is_int(h.queued_cycles, 2, "health: queued_cycles");
	is_int(h.cycles_failed, 0, "health: cycles_failed, none lost yet");
	is_int(stored_cycles(&g), before, "nothing written while full");

	store_limit_pages(recorder_store(g.rec), 1000000); // space again
	t += 10;                                           // past any backoff
	res = tick(&g, T0 + 60 * t, M0 + t * MIN_MS);
	ok(res.stored, "space again: the new cycle is stored");
	is_int(res.queued, 0, "and the queue is empty");
	is_int(stored_cycles(&g), before + 3, "the queued cycles were written first");
	is_int(health(&g).cycles_total, before + 3, "health: every cycle counted as stored");
	is_int(health(&g).cycles_failed, 0, "health: none failed, the queued ones were stored");
	rig_finish(&g);
}

static void test_queue_bound(void) {
	struct rig g;
	rig_init(&g, "bound.db", 1); // room for one cycle: older ones are dropped
	tick(&g, T0, M0);
	int64_t t = 0;
	tick_until_full(&g, &t);
	int64_t before = stored_cycles(&g);
	for (int i = 0; i < 2; i++) {
		t++;
		tick(&g, T0 + 60 * t, M0 + t * MIN_MS);
	}
	struct live_health h = health(&g);
	is_int(h.queued_cycles, 1, "bounded queue: only the newest kept");
	// A cycle queued is not failed; one dropped from the queue is lost.
	is_int(h.cycles_failed, 2, "three not stored, two of them dropped: two failed");
	store_limit_pages(recorder_store(g.rec), 1000000);
	t += 10;
	struct recorder_result res = tick(&g, T0 + 60 * t, M0 + t * MIN_MS);
	ok(res.stored, "space again: stored");
	is_int(stored_cycles(&g), before + 2, "the newest queued one and this one");
	rig_finish(&g);
}

static void test_deleted_database(void) {
	struct rig g;
	rig_init(&g, "gone.db", 0);
	tick(&g, T0, M0);
	tick(&g, T0 + 60, M0 + MIN_MS);
	unlink(g.db);
	struct recorder_result res = tick(&g, T0 + 120, M0 + 2 * MIN_MS);
	ok(res.reopened, "deleted database: reopened");
	ok(res.stored, "and the cycle stored");
	struct stat st;
	ok(stat(g.db, &st) == 0, "the file is back at its path");
	is_int(stored_cycles(&g), 3, "with the history that was still open");
	is_int(health(&g).database_reopens, 1, "health: database_reopens");
	rig_finish(&g);
}

static void test_restart_anchor(void) {
	struct rig g;
	rig_init(&g, "anchor.db", 0);
	tick(&g, T0, M0);
	tick(&g, T0 + 60, M0 + MIN_MS);
	recorder_destroy(g.rec);
	struct recorder_params p = {
		.db_path = g.db, .boot_id = BOOT_ID, .clock = &g.clock, .mono_ms = read_fake_mono};
	g.rec = recorder_create(&g.cfg, &p, T0 + 90, M0 + MIN_MS + 30000);
	ok(g.rec != NULL, "reopened");
	is_int(recorder_last_ts(g.rec), T0 + 60, "restart: the anchor is the last own cycle");
	recorder_start(g.rec, g.sampler, g.live, T0 + 90);
	// A day ahead in the same boot half a minute later: a glitch against the saved anchor.
	struct recorder_result res = tick(&g, T0 + 86400, M0 + 2 * MIN_MS);
	is_int(res.clock, CLOCK_STATE_UNSYNCED, "restart: a glitch is caught by the anchor");
	rig_finish(&g);
}

static void test_foreign_file(void) {
	char *path = xasprintf("%s/foreign.db", tmpdir);
	FILE *f = fopen(path, "we");
	fputs("not a database at all, but somebody's notes\n", f);
	fclose(f);
	struct config cfg;
	config_init(&cfg);
	struct recorder_params p = {.db_path = path};
	ok(recorder_create(&cfg, &p, T0, M0) == NULL, "a foreign file is refused");
	f = fopen(path, "re");
	char line[64] = "";
	ok(f && fgets(line, sizeof(line), f) && strncmp(line, "not a database", 14) == 0,
	   "and left untouched");
	if (f) {
		fclose(f);
	}
	unlink(path);
	free(path);
	config_finish(&cfg);
}

/*
 * The errors of the last hour count failed reads only, and name their channels: the first
 * reading of a rate (meminfo's swap_in/swap_out, -EAGAIN) needs a second one and is no error.
 */
static void test_read_errors(void) {
	struct rig g;
	rig_init_tree(
		&g, "rates.db", 0,
		"interval: 60s\nsources: {hwmon: {enabled: false}, thermal: {enabled: false}, "
		"cpufreq: {enabled: false}, devfreq: {enabled: false}, iio: {enabled: false}, "
		"load: {enabled: false}}\n",
		FIXTURE);
	struct recorder_result res = tick(&g, T0, M0);
	ok(res.stored && res.n >= 2, "the fixture's meminfo channels read");
	struct live_snapshot snap;
	live_snapshot(g.live, &snap);
	size_t pending = 0;
	for (size_t i = 0; i < snap.n; i++) {
		pending += snap.readings[i].err == -EAGAIN;
	}
	live_snapshot_finish(&snap);
	ok(pending == 2, "the first cycle: swap_in and swap_out wait for a second reading");
	struct live_health h = health(&g);
	is_int(h.errors_last_hour, 0, "a rate's first reading is no error in the last hour");
	is_int(h.read_errors_total, 0, "nor since start");
	is_str(h.error_channels, "", "and names no channel");
	rig_finish(&g);

	// The broken board: its thermal zones fail, each named once however many cycles fail.
	rig_init_tree(
		&g, "broken.db", 0,
		"interval: 60s\nsources: {hwmon: {enabled: false}, meminfo: {enabled: false}, load: {enabled: false}}\n",
		"fixtures/broken");
	tick(&g, T0, M0);
	int64_t first = health(&g).errors_last_hour;
	tick(&g, T0 + 60, M0 + MIN_MS);
	h = health(&g);
	printf("# %lld failed reads a cycle: %s\n", (long long)first, h.error_channels);
	ok(first > 0 && h.errors_last_hour == 2 * first, "the broken board's failed reads counted");
	const char *soc = strstr(h.error_channels, "thermal/soc-thermal");
	ok(soc && strstr(h.error_channels, "thermal/bigcore0-thermal"),
	   "the errors name their channels");
	ok(soc && !strstr(soc + 1, "thermal/soc-thermal"), "each channel once");
	ok(!strstr(h.error_channels, "littlecore"), "a valid negative reading is none");
	rig_finish(&g);
}

int main(void) {
	log_init(LOG_LEVEL_ERROR);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_stamps();
	test_disk_full();
	test_queue_bound();
	test_deleted_database();
	test_restart_anchor();
	test_foreign_file();
	test_read_errors();
	rmdir(tmpdir);
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
