/* Counters: the kernel's residency formats, start/stop deltas on the ROCK 5C fixture before and
 * after a 1627.29 s run, energy counter wrap/reset, and trapezoid integration of power. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "source.h"
#include "test.h"
#include "xalloc.h"

#define BEFORE "fixtures/rock5c"
#define AFTER  "fixtures/rock5c-after-run"

static int open_root(const char *path) {
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

/* Reads @path under both roots and returns the residency between them. */
static int delta(int before, int after, const char *path, enum counters_format format,
		 struct counters_residency *r) {
	struct counters_table a, b;
	int rc = counters_read(before, path, format, &a);
	if (rc == 0) {
		rc = counters_read(after, path, format, &b);
		if (rc == 0) {
			rc = counters_residency(&a, &b, r);
			counters_table_finish(&b);
		}
		counters_table_finish(&a);
	}
	return rc;
}

static void test_fixture_deltas(void) {
	int before = open_root(BEFORE), after = open_root(AFTER);
	struct counters_residency r;

	// policy4 (A76 cpu4-5): 1627.29 s at 11 levels, 1589.29 s at the top (2.256 GHz)
	int rc = delta(before, after, "devices/system/cpu/cpufreq/policy4/stats/time_in_state",
		       COUNTERS_FORMAT_CPUFREQ, &r);
	is_int(rc, 0, "policy4 time_in_state deltas");
	is_int(r.n, 11, "policy4: 11 frequencies");
	is_int(r.total_ms, 1627290, "policy4: the run's 1627.29 s");
	is_int(r.top_level, 2256000000, "policy4: top is 2.256 GHz in Hz");
	is_int(r.levels[10].time_ms, 1589290, "policy4: 1589.29 s at the top");
	is_int(r.levels[0].level, 408000000, "policy4: lowest 408 MHz");
	is_int(r.levels[0].time_ms, 21000, "policy4: 21 s at 408 MHz");
	is_int(r.below_top_ms, 38000, "policy4: 38 s below the top");
	counters_residency_finish(&r);

	// The NPU ran at 1 GHz for the whole run: nothing below the top.
	rc = delta(before, after, "class/devfreq/fdab0000.npu/trans_stat", COUNTERS_FORMAT_DEVFREQ,
		   &r);
	is_int(rc, 0, "npu trans_stat deltas");
	is_int(r.n, 8, "npu: 8 OPPs");
	is_int(r.top_level, 1000000000, "npu: top 1 GHz");
	is_int(r.total_ms, 1627290, "npu: whole run counted");
	is_int(r.below_top_ms, 0, "npu: clocks held at 1 GHz");
	counters_residency_finish(&r);

	// DMC: 10-digit frequencies run together in the header; the rows still parse.
	rc = delta(before, after, "class/devfreq/dmc/trans_stat", COUNTERS_FORMAT_DEVFREQ, &r);
	is_int(rc, 0, "dmc trans_stat deltas (merged header columns)");
	is_int(r.n, 4, "dmc: 4 OPPs");
	is_int(r.levels[1].level, 1068000000, "dmc: 1068 MHz");
	is_int(r.levels[1].time_ms, 40120, "dmc: 40.12 s at 1068 MHz");
	is_int(r.below_top_ms, 172830, "dmc: 172.83 s below 2112 MHz");
	counters_residency_finish(&r);

	// The fan: active (state > 0) for 1407.29 s of the run.
	rc = delta(before, after, "class/thermal/cooling_device4/stats/time_in_state_ms",
		   COUNTERS_FORMAT_COOLING, &r);
	is_int(rc, 0, "pwm-fan time_in_state_ms deltas");
	is_int(r.n, 5, "pwm-fan: states 0..4");
	is_int(r.active_ms, 1407290, "pwm-fan: 1407.29 s active");
	is_int(r.levels[2].time_ms, 206000, "pwm-fan: 206 s at state 2");
	counters_residency_finish(&r);

	// Any cooling device active: the fan 1407.29 s, cpu4 30 s, cpu6 15 s, possibly overlapping.
	struct counters_residency cool[5];
	for (int i = 0; i < 5; i++) {
		char path[96];
		snprintf(path, sizeof(path),
			 "class/thermal/cooling_device%d/stats/time_in_state_ms", i);
		is_int(delta(before, after, path, COUNTERS_FORMAT_COOLING, &cool[i]), 0, path);
	}
	int64_t low, high;
	counters_cooling_any(cool, 5, &low, &high);
	is_int(low, 1407290, "any cooling active: at least the fan's 1407.29 s");
	is_int(high, 1452290, "any cooling active: at most the sum, 1452.29 s");
	counters_cooling_any(cool, 1, &low, &high);
	ok(low == 0 && high == 0, "cpu0 cooling alone: never active");
	for (int i = 0; i < 5; i++) {
		counters_residency_finish(&cool[i]);
	}

	// hwmon energy (ina238): 12693.062 J over the run.
	int64_t e0 = 0, e1 = 0;
	is_int(sysfs_read_int(before, "class/hwmon/hwmon0/energy1_input", &e0), 0, "energy start");
	is_int(sysfs_read_int(after, "class/hwmon/hwmon0/energy1_input", &e1), 0, "energy stop");
	double j = 0;
	is_int(counters_energy_delta((uint64_t)e0, (uint64_t)e1, 0, &j), COUNTERS_ENERGY_DELTA,
	       "energy: plain delta");
	is_near(j, 12693.062, 1e-12, "energy: 12693.062 J");

	// Missing counters name themselves, so the caller can fall back to samples.
	struct counters_table t;
	is_int(counters_read(before, "devices/system/cpu/cpufreq/policy9/stats/time_in_state",
			     COUNTERS_FORMAT_CPUFREQ, &t),
	       -ENOENT, "no CONFIG_CPU_FREQ_STAT: -ENOENT");
	close(before);
	close(after);
}

static void test_formats(void) {
	struct counters_table t;
	is_int(counters_parse(COUNTERS_FORMAT_DEVFREQ, "Not Supported.\n", &t), -ENOTSUP,
	       "devfreq without a table: -ENOTSUP");
	is_int(counters_parse(COUNTERS_FORMAT_CPUFREQ, "", &t), -ENODATA, "empty: -ENODATA");
	is_int(counters_parse(COUNTERS_FORMAT_CPUFREQ, "408000 12\n600000 x\n", &t), -EBADMSG,
	       "cpufreq garbage: -EBADMSG");
	is_int(counters_parse(COUNTERS_FORMAT_CPUFREQ, "408000 12\n408000 3\n", &t), -EBADMSG,
	       "cpufreq duplicate level: -EBADMSG");
	is_int(counters_parse(COUNTERS_FORMAT_COOLING, "state0 12\nstat1 3\n", &t), -EBADMSG,
	       "cooling garbage: -EBADMSG");
	is_int(counters_parse(COUNTERS_FORMAT_CPUFREQ, "1800000 4\n408000 100\n", &t), 0,
	       "cpufreq out of order");
	ok(t.n == 2 && t.levels[0].level == 408000000 && t.levels[0].time_ms == 1000 &&
		   t.levels[1].time_ms == 40,
	   "cpufreq: sorted, kHz -> Hz, 10 ms units -> ms");
	counters_table_finish(&t);

	// A time over 10 digits (uptime > 115 days) runs into the last count: read by column.
	const char *wide = "     From  :   To\n"
			   "           :1068000000 528000000   time(ms)\n"
			   "*1068000000:         0        1212345678901\n"
			   "  528000000:        13         0      5000\n"
			   "Total transition : 25\n";
	is_int(counters_parse(COUNTERS_FORMAT_DEVFREQ, wide, &t), 0, "devfreq merged time column");
	ok(t.n == 2 && t.levels[1].level == 1068000000 && t.levels[1].time_ms == 12345678901 &&
		   t.levels[0].time_ms == 5000,
	   "devfreq: time read by its fixed column");
	counters_table_finish(&t);
	is_int(counters_parse(COUNTERS_FORMAT_DEVFREQ, "  300000000: 0 0 12\n", &t), -EBADMSG,
	       "devfreq row without its header: -EBADMSG");

	// A reset between start and stop: no delta, the caller falls back.
	struct counters_table a, b;
	struct counters_residency r;
	counters_parse(COUNTERS_FORMAT_CPUFREQ, "408000 100\n600000 50\n", &a);
	counters_parse(COUNTERS_FORMAT_CPUFREQ, "408000 10\n600000 50\n", &b);
	is_int(counters_residency(&a, &b, &r), -ESTALE, "counter went backwards: -ESTALE");
	counters_table_finish(&b);
	counters_parse(COUNTERS_FORMAT_CPUFREQ, "408000 100\n", &b);
	is_int(counters_residency(&a, &b, &r), -ESTALE, "levels changed: -ESTALE");
	counters_table_finish(&a);
	counters_table_finish(&b);
}

static void test_energy_counter(void) {
	double j;
	is_int(counters_energy_delta(262143328850, 1000000, 262143328850, &j), COUNTERS_ENERGY_WRAP,
	       "powercap wrap at max_energy_range_uj");
	is_near(j, 1.0, 1e-12, "wrap: 1 J past the maximum");
	is_int(counters_energy_delta(262143000000, 3000000, 262143328850, &j), COUNTERS_ENERGY_WRAP,
	       "wrap below the maximum");
	is_near(j, 3.32885, 1e-12, "wrap: the rest of the range plus the new count");
	is_int(counters_energy_delta(5000000000, 2500000, 0, &j), COUNTERS_ENERGY_RESET,
	       "decrease without a maximum: reset");
	is_near(j, 2.5, 1e-12, "reset: counted from 0");
	is_str(counters_energy_method_name(COUNTERS_ENERGY_RESET), "counter (reset)",
	       "method name");
}

static void test_integration(void) {
	// Constant 5 W sampled every 5 s from 2 s before to 3 s after a 1627.29 s run.
	struct counters_power_sample s[400];
	size_t n = 0;
	const double start = 1000.0, stop = start + 1627.29;
	for (double t = start - 2; t < stop + 5; t += 5) {
		s[n++] = (struct counters_power_sample){.t_s = t, .power_w = 5.0};
	}
	struct counters_integral r;
	is_int(counters_integrate_power(s, n, start, stop, 10, &r), 0, "constant 5 W: integrates");
	is_near(r.joules, 5 * 1627.29, 1e-12, "5 W x 1627.29 s = 8136.45 J");
	is_near(r.coverage, 1, 1e-12, "samples around the run cover all of it");

	// Samples only inside the run: the edges are not extrapolated, coverage says so, and the
	// energy is within one interval at each edge of 5 W x duration.
	n = 0;
	for (double t = start + 1.7; t <= stop; t += 5) {
		s[n++] = (struct counters_power_sample){.t_s = t, .power_w = 5.0};
	}
	is_int(counters_integrate_power(s, n, start, stop, 10, &r), 0, "inside samples integrate");
	ok(r.coverage < 1 && r.coverage > 1 - 10 / 1627.29, "coverage below 1, within 2 intervals");
	ok(fabs(r.joules - 5 * 1627.29) <= 5 * 2 * 5, "energy within the sampling bound");
	is_near(r.joules, 5 * r.covered_s, 1e-12, "energy = 5 W x covered time");

	// A ramp 0 -> 10 W over 10 s: trapezoid is exact for linear power (50 J).
	struct counters_power_sample ramp[] = {{0, 0}, {5, 5}, {10, 10}};
	is_int(counters_integrate_power(ramp, 3, 0, 10, 10, &r), 0, "ramp");
	is_near(r.joules, 50, 1e-12, "ramp: 50 J");
	// Clipping interpolates: [2, 7] of the ramp is (2 + 7) / 2 x 5 = 22.5 J.
	counters_integrate_power(ramp, 3, 2, 7, 10, &r);
	is_near(r.joules, 22.5, 1e-12, "clipped ramp: 22.5 J");

	// A failed read (NAN) and a long gap are not bridged.
	struct counters_power_sample gaps[] = {{0, 4},  {5, NAN}, {10, 4},
					       {15, 4}, {60, 4},  {65, 4}};
	is_int(counters_integrate_power(gaps, 6, 0, 65, 10, &r), 0, "gaps");
	is_near(r.joules, 40, 1e-12, "gaps: only [10,15] and [60,65] count");
	is_near(r.coverage, 10.0 / 65, 1e-12, "gaps: coverage 10/65");

	struct counters_power_sample one[] = {{3, 5}};
	is_int(counters_integrate_power(one, 1, 0, 10, 10, &r), -ENODATA, "one sample: no energy");
	ok(isnan(r.joules) && r.coverage == 0, "one sample: NaN, not 0 J");
	is_int(counters_integrate_power(ramp, 3, 5, 5, 10, &r), -EINVAL, "empty run: -EINVAL");

	is_near(counters_power_hwmon_w(7804000), 7.804, 1e-15, "hwmon power: µW");
	is_near(counters_power_vi_w(5120, 1524), 7.80288, 1e-12, "in x curr: mV x mA");
	is_near(counters_power_iio_w(3120, 2.5), 7.8, 1e-12, "IIO power: mW");
}

static const struct counters_snap_file *snap_key(const struct counters_snapshot *s,
						 const char *key) {
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->files[i].key, key) == 0) {
			return &s->files[i];
		}
	}
	return NULL;
}

/* A snapshot of the fixture: every residency and energy counter it has, by kind, key and path. */
static void test_snapshot(void) {
	int root = open_root(BEFORE);
	struct counters_snapshot s = {0};
	counters_snapshot_read(root, &s);
	size_t by_kind[COUNTERS_SNAP_KINDS] = {0};
	for (size_t i = 0; i < s.n; i++) {
		by_kind[s.files[i].kind]++;
	}
	is_int(by_kind[COUNTERS_SNAP_CPUFREQ], 3, "three policies' time_in_state");
	is_int(by_kind[COUNTERS_SNAP_DEVFREQ], 3, "three devfreq devices' trans_stat");
	is_int(by_kind[COUNTERS_SNAP_COOLING], 5, "five cooling devices' time_in_state_ms");
	is_int(by_kind[COUNTERS_SNAP_ENERGY], 1, "the INA238's energy counter");
	const struct counters_snap_file *f = snap_key(&s, "cpufreq/policy4");
	ok(f && strcmp(f->path, "devices/system/cpu/cpufreq/policy4/stats/time_in_state") == 0,
	   "policy4 by its path");
	struct counters_table t;
	ok(f && counters_parse(COUNTERS_FORMAT_CPUFREQ, f->text, &t) == 0 && t.n == 11,
	   "its text parses: 11 frequencies");
	counters_table_finish(&t);
	f = snap_key(&s, "cooling/pwm-fan#4");
	ok(f && f->kind == COUNTERS_SNAP_COOLING, "a cooling device keyed by its type and number");
	f = snap_key(&s, "hwmon/ina238/energy1");
	ok(f && f->text[strlen(f->text) - 1] != '\n', "the energy counter, its newline removed");
	ok(snap_key(&s, "devfreq/fdab0000.npu") != NULL, "the NPU's trans_stat");
	f = counters_snapshot_find(&s, "class/devfreq/dmc/trans_stat");
	ok(f && strcmp(f->key, "devfreq/dmc") == 0, "found by its path");
	ok(!counters_snapshot_find(&s, "class/devfreq/dmc/cur_freq"), "a path not read: none");
	counters_snapshot_finish(&s);
	is_int(s.n, 0, "finished: empty");
	enum counters_snap_kind k;
	ok(counters_snap_kind_parse("devfreq", &k) && k == COUNTERS_SNAP_DEVFREQ &&
		   strcmp(counters_snap_kind_name(k), "devfreq") == 0,
	   "kind names both ways");
	ok(!counters_snap_kind_parse("hwmon", &k), "an unknown kind is refused");
	close(root);
}

static void put(const char *dir, const char *rel, const char *text, size_t len) {
	char *path = xasprintf("%s/%s", dir, rel);
	char *cmd = xasprintf("mkdir -p \"$(dirname '%s')\"", path);
	ok(system(cmd) == 0, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok(fd >= 0 && write(fd, text, len) == (ssize_t)len, rel);
	close(fd);
	free(cmd);
	free(path);
}

/*
 * What a snapshot keeps: a table up to a 64 KiB page (41 KiB here), a type's trailing blanks
 * trimmed; sysfs_read_alloc() takes @max bytes and a newline, refuses a byte more.
 */
static void test_snapshot_limits(void) {
	char dir[] = "/tmp/test-counters-XXXXXX";
	ok(mkdtemp(dir) != NULL, "a scratch tree");
	size_t big = 41004;
	char *table = xcalloc(1, big + 1);
	for (size_t i = 0; i < big; i++) {
		table[i] = i % 41 == 40 ? '\n' : '1';
	}
	put(dir, "class/devfreq/big/trans_stat", table, big);
	put(dir, "class/thermal/cooling_device7/type", "fan \n", 5);
	put(dir, "class/thermal/cooling_device7/stats/time_in_state_ms", "state0 5\n", 9);
	int root = open_root(dir);
	struct counters_snapshot s = {0};
	counters_snapshot_read(root, &s);
	const struct counters_snap_file *f = snap_key(&s, "devfreq/big");
	ok(f && strlen(f->text) == big, "a 41 KiB trans_stat is kept whole");
	ok(snap_key(&s, "cooling/fan#7") != NULL, "a type's trailing blank trimmed from its key");
	counters_snapshot_finish(&s);
	memset(table, 'x', 64);
	table[64] = '\n';
	put(dir, "edge", table, 65);
	char *text = sysfs_read_alloc(root, "edge", 64);
	ok(text && strlen(text) == 64, "max bytes and a newline: read");
	free(text);
	put(dir, "edge", table, 64);
	text = sysfs_read_alloc(root, "edge", 63);
	ok(!text, "a byte over max: refused");
	free(text);
	free(table);
	close(root);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ok(system(cmd) == 0, "remove the scratch tree");
	free(cmd);
}

int main(void) {
	test_fixture_deltas();
	test_snapshot();
	test_snapshot_limits();
	test_formats();
	test_energy_counter();
	test_integration();
	return test_done();
}
