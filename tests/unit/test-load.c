/*
 * The load source through the real sampler over the ROCK 5C fixture: /proc/stat rewritten
 * between reads gives exact busy shares (the first read has none: pending, never 0), an offline
 * CPU is absent (no rescan) and starts over when it is back, rknpu/load in both forms, devfreq
 * load, and a malformed or unreadable debugfs file costs only its own channels.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sampler.h"
#include "source.h"
#include "test.h"
#include "xalloc.h"

#define FIXTURE "fixtures/rock5c"

static void write_file(const char *path, const char *text) {
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! could not write %s\n", path);
		exit(1);
	}
}

static ptrdiff_t find(const struct channel *ch, size_t n, const char *key) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ch[i].key, key) == 0) {
			return (ptrdiff_t)i;
		}
	}
	return -1;
}

struct rig {
	char dir[64], proc[96], debug[96], stat[128], npu[160];
	struct config cfg;
	struct sampler *s;
	size_t n;
	const struct channel *ch;
	const struct reading *rd;
};

/* One CPU line per entry of @busy/@idle (ticks of user and idle), cpu -1 skipped (offline). */
static void write_stat(struct rig *g, const long long busy[8], const long long idle[8]) {
	char text[2048] = "";
	long long tb = 0, ti = 0;
	for (int i = 0; i < 8; i++) {
		if (busy[i] >= 0) {
			tb += busy[i];
			ti += idle[i];
		}
	}
	size_t len =
		(size_t)snprintf(text, sizeof(text), "cpu  %lld 0 0 %lld 0 0 0 0 0 0\n", tb, ti);
	for (int i = 0; i < 8; i++) {
		if (busy[i] >= 0) {
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"cpu%d %lld 0 0 %lld 0 0 0 0 0 0\n", i, busy[i],
						idle[i]);
		}
	}
	snprintf(text + len, sizeof(text) - len, "intr 1 2 3\nctxt 4\n");
	write_file(g->stat, text);
}

static void rig_init(struct rig *g) {
	snprintf(g->dir, sizeof(g->dir), "/tmp/thermlog-load-XXXXXX");
	if (!mkdtemp(g->dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	snprintf(g->proc, sizeof(g->proc), "%s/proc", g->dir);
	snprintf(g->debug, sizeof(g->debug), "%s/debug", g->dir);
	snprintf(g->stat, sizeof(g->stat), "%s/stat", g->proc);
	char rknpu[144];
	snprintf(rknpu, sizeof(rknpu), "%s/rknpu", g->debug);
	snprintf(g->npu, sizeof(g->npu), "%s/load", rknpu);
	if (mkdir(g->proc, 0755) != 0 || mkdir(g->debug, 0755) != 0 || mkdir(rknpu, 0755) != 0) {
		printf("Bail out! mkdir\n");
		exit(1);
	}
	config_init(&g->cfg);
	static const char yaml[] =
		"sources: {thermal: {enabled: false}, hwmon: {enabled: false}, cpufreq: {enabled: "
		"false}, devfreq: {enabled: false}, iio: {enabled: false}, meminfo: {enabled: false}}\n";
	char *errors = NULL;
	if (!config_load_string(&g->cfg, "t.yaml", yaml, strlen(yaml), &errors)) {
		printf("Bail out! config: %s\n", errors);
		exit(1);
	}
	free(g->cfg.sysfs_root);
	g->cfg.sysfs_root = xstrdup(FIXTURE);
	free(g->cfg.procfs_root);
	g->cfg.procfs_root = xstrdup(g->proc);
	free(g->cfg.debugfs_root);
	g->cfg.debugfs_root = xstrdup(g->debug);
}

static void rig_read(struct rig *g, int64_t mono_s) {
	g->n = sampler_read(g->s, mono_s, &g->ch, &g->rd);
}

/* The reading of @key: its value, or NAN with *err set (-ENOKEY when there is no channel). */
static double value(struct rig *g, const char *key, int *err) {
	ptrdiff_t i = find(g->ch, g->n, key);
	*err = i < 0 ? -ENOKEY : g->rd[i].err;
	return i < 0 || g->rd[i].err ? NAN : g->rd[i].value;
}

static void rig_finish(struct rig *g) {
	sampler_destroy(g->s);
	config_finish(&g->cfg);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", g->dir);
	if (system(cmd) != 0) {
		printf("# could not remove %s\n", g->dir);
	}
}

static void test_cpus_and_npu(void) {
	struct rig g;
	rig_init(&g);
	long long busy[8] = {100, 100, 100, 100, 100, 100, 100, 100};
	long long idle[8] = {900, 900, 900, 900, 900, 900, 900, 900};
	write_stat(&g, busy, idle);
	write_file(g.npu, "NPU load:  Core0:  12%, Core1:   0%, Core2:  40%,\n");
	g.s = sampler_create(&g.cfg);
	rig_read(&g, 0);
	// the NPU's devfreq load is left out: the vendor driver (governor rknpu_ondemand) reports
	// busy = total, a constant 100 % that is no load (platform brief §14)
	is_int(g.n, 9 + 3 + 1, "9 CPU channels, 3 NPU cores, the GPU's devfreq load");
	ptrdiff_t c0 = find(g.ch, g.n, "load/cpu0");
	ok(c0 >= 0 && g.ch[c0].kind == CHANNEL_KIND_LOAD && strcmp(g.ch[c0].unit, "percent") == 0,
	   "load/cpu0: kind load, unit percent");
	int err;
	double v = value(&g, "load/cpu", &err);
	ok(isnan(v) && err == -EAGAIN && g.rd[find(g.ch, g.n, "load/cpu")].pending,
	   "the first read has no share: pending, not 0");
	is_near(value(&g, "load/rknpu/core0", &err), 12, 0, "NPU core0 12 %");
	is_near(value(&g, "load/rknpu/core2", &err), 40, 0, "NPU core2 40 %");
	is_near(value(&g, "load/fb000000.gpu", &err), 3, 0, "GPU devfreq load 3 %");
	ok(find(g.ch, g.n, "load/fdab0000.npu") < 0,
	   "no load/fdab0000.npu: the rknpu driver's constant 100 % is not a load");

	// cpu0 all busy, cpu1 a quarter, cpu2 idle, the others half: known deltas
	long long db[8] = {200, 50, 0, 100, 100, 100, 100, 100};
	long long di[8] = {0, 150, 200, 100, 100, 100, 100, 100};
	for (int i = 0; i < 8; i++) {
		busy[i] += db[i];
		idle[i] += di[i];
	}
	write_stat(&g, busy, idle);
	write_file(g.npu, "NPU load: Core0: 100%, Core1: 0%, Core2: 0%,\n");
	rig_read(&g, 1);
	is_near(value(&g, "load/cpu0", &err), 100, 0, "cpu0 100 %");
	is_near(value(&g, "load/cpu1", &err), 25, 0, "cpu1 25 %");
	is_near(value(&g, "load/cpu2", &err), 0, 0, "cpu2 0 %");
	is_near(value(&g, "load/cpu7", &err), 50, 0, "cpu7 50 %");
	is_near(value(&g, "load/cpu", &err), 100.0 * 750 / 1600, 1e-12, "all CPUs: 750 of 1600");
	is_near(value(&g, "load/rknpu/core0", &err), 100, 0, "narrow padding: core0 100 %");

	// cpu5 goes offline: absent, not 0, and the rest unaffected
	long long off[8];
	memcpy(off, busy, sizeof(off));
	off[5] = -1;
	for (int i = 0; i < 8; i++) {
		busy[i] += 10;
		off[i] = i == 5 ? -1 : busy[i];
		idle[i] += 10;
	}
	write_stat(&g, off, idle);
	rig_read(&g, 2);
	v = value(&g, "load/cpu5", &err);
	ok(isnan(v) && err == -ENOENT, "offline cpu5: absent (-ENOENT), never 0");
	is_near(value(&g, "load/cpu4", &err), 50, 0, "cpu4 still reads");
	rig_read(&g, 3);
	ok(find(g.ch, g.n, "load/cpu5") >= 0, "no rescan dropped cpu5 (an expected absence)");
	// back online with its old counters: a first reading again, then shares
	write_stat(&g, busy, idle);
	rig_read(&g, 4);
	v = value(&g, "load/cpu5", &err);
	ok(isnan(v) && err == -EAGAIN, "cpu5 back: a first reading (pending)");
	busy[5] += 30;
	idle[5] += 70;
	write_stat(&g, busy, idle);
	rig_read(&g, 5);
	is_near(value(&g, "load/cpu5", &err), 30, 0, "cpu5 30 % again");
	v = value(&g, "load/cpu4", &err);
	ok(isnan(v) && err == -EAGAIN, "cpu4 without ticks between two reads: no share");

	// counters backwards (a restarted count): no share that cycle
	busy[0] -= 50;
	write_stat(&g, busy, idle);
	rig_read(&g, 6);
	v = value(&g, "load/cpu0", &err);
	ok(isnan(v) && err == -EAGAIN, "cpu0 counters went back: no share, not 0");

	// malformed rknpu/load: its channels fail, nothing else
	write_file(g.npu, "NPU load:  Core0:  x%\n");
	busy[1] += 10;
	idle[1] += 30;
	write_stat(&g, busy, idle);
	rig_read(&g, 7);
	v = value(&g, "load/rknpu/core1", &err);
	ok(isnan(v) && err == -EBADMSG, "malformed rknpu/load: -EBADMSG");
	is_near(value(&g, "load/cpu1", &err), 25, 0, "cpu1 unaffected");
	is_near(value(&g, "load/fb000000.gpu", &err), 3, 0, "devfreq load unaffected");

	// the single-core form after a rescan
	write_file(g.npu, "NPU load:  7%\n");
	sampler_rescan(g.s);
	rig_read(&g, 8);
	is_near(value(&g, "load/rknpu", &err), 7, 0, "single core: load/rknpu 7 %");
	ok(find(g.ch, g.n, "load/rknpu/core0") < 0, "the per-core channels are gone");
	rig_finish(&g);
}

static void test_unreadable(void) {
	struct rig g;
	rig_init(&g);
	long long busy[8] = {1, 1, 1, 1, 1, 1, 1, 1}, idle[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	write_stat(&g, busy, idle);
	// rknpu/load a directory (a read gives EISDIR, as a driver's errno would)
	if (mkdir(g.npu, 0755) != 0) {
		printf("Bail out! mkdir\n");
		exit(1);
	}
	g.s = sampler_create(&g.cfg);
	rig_read(&g, 0);
	is_int(g.n, 9 + 1, "an unreadable rknpu/load: no NPU channels, the rest there");
	ok(find(g.ch, g.n, "load/rknpu/core0") < 0, "no load/rknpu/core0");
	int err;
	is_near(value(&g, "load/fb000000.gpu", &err), 3, 0, "devfreq load unaffected");
	sampler_destroy(g.s);
	g.s = NULL;

	// no procfs: no CPU channels, the debugfs and devfreq ones still there
	free(g.cfg.procfs_root);
	g.cfg.procfs_root = xstrdup("fixtures/no-such-proc");
	g.s = sampler_create(&g.cfg);
	rig_read(&g, 0);
	is_int(g.n, 1, "no procfs: only the GPU's devfreq load");
	rig_finish(&g);
}

/* Lines of stderr written while @n passes read (the sampler's warnings), into *@out. */
static size_t warnings_over(struct rig *g, int n, char *out, size_t size) {
	char path[160];
	snprintf(path, sizeof(path), "%s/stderr", g->dir);
	fflush(stderr);
	int saved = dup(STDERR_FILENO), fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(fd, STDERR_FILENO);
	for (int i = 0; i < n; i++) {
		rig_read(g, 10 + i);
	}
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ssize_t len = pread(fd, out, size - 1, 0);
	close(fd);
	out[len > 0 ? len : 0] = '\0';
	size_t lines = 0;
	for (const char *c = out; *c; c++) {
		lines += *c == '\n';
	}
	return lines;
}

/* A /proc/stat whose cpu3 line cannot be read is said once, not at every pass. */
static void test_stat_warned_once(void) {
	struct rig g;
	rig_init(&g);
	long long busy[8] = {1, 1, 1, 1, 1, 1, 1, 1}, idle[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	write_stat(&g, busy, idle);
	g.s = sampler_create(&g.cfg);
	rig_read(&g, 0);
	write_file(g.stat,
		   "cpu  9 0 0 9 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 "
		   "0 0 0 0\ncpu2 1 0 0 1 0 0 0 0 0 0\ncpu3 garbage\ncpu4 1 0 0 1 0 0 0 0 0 "
		   "0\ncpu5 1 0 0 1 0 0 0 0 0 0\ncpu6 1 0 0 1 0 0 0 0 0 0\ncpu7 1 0 0 1 0 0 0 "
		   "0 0 0\nintr 1\n");
	char text[4096];
	size_t lines = warnings_over(&g, 5, text, sizeof(text));
	int err;
	value(&g, "load/cpu3", &err);
	ok(err == -EBADMSG && lines == 1 && strstr(text, "cpu3"),
	   "a malformed cpu3 line: one warning over five passes, naming it");
	if (lines != 1) {
		printf("# %s", text);
	}
	rig_finish(&g);
}

int main(void) {
	test_cpus_and_npu();
	test_unreadable();
	test_stat_warned_once();
	return test_done();
}
