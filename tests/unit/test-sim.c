/* The simulated ROCK 5C: model ranges, job bursts, sensor steps, determinism, and the tree. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim.h"
#include "test.h"

#define T0   1787000000LL // 2026-08-17
#define WEEK (7 * 86400)

static bool same_state(const struct sim_state *a, const struct sim_state *b) {
	return memcmp(a, b, sizeof(*a)) == 0;
}

static void test_determinism(void) {
	struct sim_state a, b;
	bool same = true, differs = false;
	for (int64_t t = T0; t < T0 + 86400; t += 60) {
		sim_model(7, t, &a);
		sim_model(7, t, &b);
		same = same && same_state(&a, &b);
		sim_model(8, t, &b);
		differs = differs || !same_state(&a, &b);
	}
	ok(same, "the same seed and time give the same state");
	ok(differs, "another seed gives another day");
}

/* A week, minute by minute: idle band, job peaks, the NPU clock, the fan. */
static void test_week(uint64_t seed) {
	struct sim_state s;
	int64_t busy = 0, minutes = 0, jobs = 0;
	double idle_min = 1e9, idle_max = -1e9, npu_peak_min = 1e9, npu_peak_max = -1e9;
	double big_peak_max = -1e9, job_npu_peak = -1e9, job_big_peak = -1e9;
	bool npu_clock_ok = true, was_busy = false, fan_on = false, tc_ok = true;
	int64_t quiet_since = T0 - 86400;
	for (int64_t t = T0; t < T0 + WEEK; t += 60, minutes++) {
		sim_model(seed, t, &s);
		if (s.npu_busy) {
			busy++;
			npu_clock_ok = npu_clock_ok && s.npu_hz == SIM_NPU_BUSY_HZ;
			job_npu_peak = fmax(job_npu_peak, s.zone_c[SIM_ZONE_NPU]);
			job_big_peak = fmax(job_big_peak, s.zone_c[SIM_ZONE_BIGCORE0]);
			quiet_since = t;
		} else if (was_busy) {
			jobs++;
			npu_peak_min = fmin(npu_peak_min, job_npu_peak);
			npu_peak_max = fmax(npu_peak_max, job_npu_peak);
			big_peak_max = fmax(big_peak_max, job_big_peak);
			job_npu_peak = job_big_peak = -1e9;
		}
		was_busy = s.npu_busy;
		// Two hours after the last job the board is back at idle.
		if (!s.npu_busy && t - quiet_since > 7200) {
			for (int z = 0; z < SIM_ZONE_COUNT; z++) {
				idle_min = fmin(idle_min, s.zone_c[z]);
				idle_max = fmax(idle_max, s.zone_c[z]);
			}
		}
		fan_on = fan_on || s.fan_state > 0;
		tc_ok = tc_ok && s.tc_raw * 0.25 > 30 && s.tc_raw * 0.25 < 70;
	}
	printf("# seed %llu: %lld jobs, busy %.1f %%, idle %.2f..%.2f C, NPU peaks %.1f..%.1f C, "
	       "big core peak %.1f C\n",
	       (unsigned long long)seed, (long long)jobs, 100.0 * busy / minutes, idle_min,
	       idle_max, npu_peak_min, npu_peak_max, big_peak_max);
	ok(jobs >= 30 && jobs <= 200, "a week has bursts of NPU jobs");
	ok(busy * 100 / minutes >= 10 && busy * 100 / minutes <= 60, "jobs take part of the time");
	ok(idle_min >= 37.9 && idle_max <= 40.1, "idle zones stay within 38-40 C");
	ok(npu_peak_min >= 62 && npu_peak_max <= 76, "NPU jobs peak toward 65-75 C");
	ok(big_peak_max >= 62 && big_peak_max <= 76, "big cores heat with the NPU");
	ok(npu_clock_ok, "the NPU runs at 1.0 GHz during jobs");
	ok(fan_on, "the fan spins up during jobs");
	ok(tc_ok, "the thermocouple stays in a plausible band");
}

/* One job from its start: the thermocouple lags the NPU and stays cooler. */
static void test_job_shape(void) {
	struct sim_state s;
	int64_t start = -1;
	for (int64_t t = T0; t < T0 + WEEK && start < 0; t += 10) {
		sim_model(3, t, &s);
		if (s.npu_busy) {
			// Back up to the exact start second.
			while (s.npu_busy) {
				sim_model(3, --t, &s);
			}
			start = t + 1;
		}
	}
	ok(start > 0, "a job starts within the week");
	struct sim_state before, mid, end;
	sim_model(3, start - 1, &before);
	sim_model(3, start + 300, &mid);
	sim_model(3, start + SIM_JOB_S - 1, &end);
	double npu_rise_mid = mid.zone_c[SIM_ZONE_NPU] - before.zone_c[SIM_ZONE_NPU];
	double npu_rise_end = end.zone_c[SIM_ZONE_NPU] - before.zone_c[SIM_ZONE_NPU];
	double tc_rise_mid = (mid.tc_raw - before.tc_raw) * 0.25;
	double tc_rise_end = (end.tc_raw - before.tc_raw) * 0.25;
	ok(npu_rise_mid > 0.8 * npu_rise_end, "the NPU is near its plateau five minutes in");
	ok(tc_rise_mid < 0.5 * tc_rise_end, "the capacitor thermocouple follows more slowly");
	ok(tc_rise_end > 5 && tc_rise_end < npu_rise_end, "and rises less than the NPU");
	ok(end.npu_busy, "the job still runs in its last second");
	struct sim_state after;
	sim_model(3, start + SIM_JOB_S, &after);
	ok(!after.npu_busy, "the job lasts 25 minutes");
}

/*
 * Every sdxl-image job of a week takes both big-core zones over their passive trip: the policy's
 * cooling state rises, its cap steps one OPP down per state, and both are released a little
 * after the job, before the next run; the clock never exceeds the cap.
 */
static void test_throttle(uint64_t seed) {
	static const int64_t big_khz[] = {408000,  600000,  816000,  1008000, 1200000, 1416000,
					  1608000, 1800000, 2016000, 2208000, 2256000};
	size_t n = sim_runs(seed, T0, T0 + WEEK, NULL, 0);
	struct sim_run *runs = calloc(n, sizeof(*runs));
	sim_runs(seed, T0, T0 + WEEK, runs, n);
	size_t sdxl = 0, throttled = 0, released = 0, crossed = 0;
	bool caps_ok = true, clock_ok = true, little_ok = true;
	int deepest = 0;
	int64_t throttled_s = 0, release_max = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(runs[i].label, "sdxl-image") != 0) {
			continue;
		}
		sdxl++;
		struct sim_state s;
		bool both = false, over = false;
		int64_t t = runs[i].start, release = -1;
		for (; t < runs[i].end + 300 && release < 0; t++) {
			sim_model(seed, t, &s);
			for (int p = SIM_POLICY_BIG0; p <= SIM_POLICY_BIG1; p++) {
				caps_ok = caps_ok && s.cap_khz[p] == big_khz[10 - s.cool_state[p]];
				clock_ok = clock_ok && s.cpu_khz[p] <= s.cap_khz[p];
				deepest = s.cool_state[p] > deepest ? s.cool_state[p] : deepest;
				int z = p == SIM_POLICY_BIG0 ? SIM_ZONE_BIGCORE0
							     : SIM_ZONE_BIGCORE1;
				over = over ||
				       (s.cool_state[p] > 0 && s.zone_mc[z] >= SIM_BIG_TRIP_MC);
			}
			little_ok = little_ok && s.cool_state[SIM_POLICY_LITTLE] == 0 &&
				    s.cap_khz[SIM_POLICY_LITTLE] == 1800000;
			both = both || (s.cool_state[SIM_POLICY_BIG0] > 0 &&
					s.cool_state[SIM_POLICY_BIG1] > 0);
			throttled_s += s.cool_state[SIM_POLICY_BIG0] > 0;
			if (!s.npu_busy && t > runs[i].start + 60 &&
			    s.cool_state[SIM_POLICY_BIG0] == 0 &&
			    s.cool_state[SIM_POLICY_BIG1] == 0) {
				release = t; // the job is over and both caps are gone
			}
		}
		throttled += both;
		crossed += over;
		released += release > 0;
		int64_t after = release - runs[i].end;
		release_max = after > release_max ? after : release_max;
	}
	printf("# seed %llu: %zu sdxl-image runs, deepest cooling state %d, policy4 throttled %lld s "
	       "of them, released up to %lld s after the run\n",
	       (unsigned long long)seed, sdxl, deepest, (long long)throttled_s,
	       (long long)release_max);
	ok(sdxl > 0 && throttled == sdxl, "every sdxl-image run throttles both big policies");
	ok(crossed == sdxl, "with the zone's reading over its passive trip");
	ok(released == sdxl && release_max < 120, "and releases them within 2 minutes of the end");
	ok(deepest >= 3 && deepest < SIM_COOL_STATES, "the cap deepens with the heat");
	ok(caps_ok, "each cooling state takes one OPP off scaling_max_freq");
	ok(clock_ok, "the big cores' clock never exceeds the cap");
	ok(little_ok, "the little cores are never capped");
	free(runs);
}

static void test_steps(void) {
	is_int(sim_tsadc_mc(25.0), 25000, "TSADC table point 25 C");
	is_int(sim_tsadc_mc(85.0), 85000, "TSADC table point 85 C");
	is_int(sim_tsadc_mc(40.0), 39769, "40 C reads as the driver interpolates code 301");
	is_int(sim_tsadc_mc(200.0), 125000, "the driver clamps at 125 C");
	is_int(sim_tsadc_mc(-60.0), -40000, "and at -40 C");
	int32_t prev = sim_tsadc_mc(30.0);
	int distinct = 0;
	bool steps_ok = true;
	for (double c = 30.0; c <= 80.0; c += 0.01) {
		int32_t v = sim_tsadc_mc(c);
		if (v != prev) {
			distinct++;
			steps_ok = steps_ok && v - prev >= 900 && v - prev <= 950;
			prev = v;
		}
	}
	ok(steps_ok, "TSADC values move in ~0.92 C steps");
	ok(distinct >= 50 && distinct <= 56, "about one code per degree between 30 and 80 C");
	struct sim_state s;
	sim_model(1, T0, &s);
	ok(s.tc_ambient_raw > 400 && s.tc_ambient_raw < 640, "cold junction in 0.0625 C steps");
}

static char *slurp(const char *root, const char *path) {
	static char text[256];
	char full[1024];
	snprintf(full, sizeof(full), "%s/%s", root, path);
	int fd = open(full, O_RDONLY);
	if (fd < 0) {
		return NULL;
	}
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n < 0 ? 0 : n] = '\0';
	return text;
}

/* The numbers of a line of a text file under @root that starts with @key, into @v. */
static int line_numbers(const char *root, const char *path, const char *key, long long *v,
			int max) {
	char full[1024], line[512];
	snprintf(full, sizeof(full), "%s/%s", root, path);
	FILE *f = fopen(full, "r");
	int n = -1;
	while (f && n < 0 && fgets(line, sizeof(line), f)) {
		size_t k = strlen(key);
		if (strncmp(line, key, k) != 0) {
			continue;
		}
		n = 0;
		for (char *p = line + k, *end; n < max; p = end) {
			v[n] = strtoll(p, &end, 10);
			if (end == p) {
				break;
			}
			n++;
		}
	}
	if (f) {
		fclose(f);
	}
	return n;
}

/* cpuN's busy share (not idle, not iowait) in proc/stat between the trees of @t1 and @t2. */
static double stat_share(struct sim *sim, const char *root, int cpu, int64_t t1, int64_t t2) {
	char key[16];
	snprintf(key, sizeof(key), "cpu%d ", cpu);
	long long a[10], b[10];
	sim_write(sim, t1);
	int na = line_numbers(root, "proc/stat", key, a, 10);
	sim_write(sim, t2);
	int nb = line_numbers(root, "proc/stat", key, b, 10);
	if (na < 8 || nb < 8) {
		return -1;
	}
	long long total = 0, idle = (b[3] - a[3]) + (b[4] - a[4]);
	for (int i = 0; i < 8; i++) {
		total += b[i] - a[i];
	}
	return total > 0 ? 100.0 * (double)(total - idle) / (double)total : -1;
}

/* The cooling device's time_in_state_ms: its states' times, how many states. */
static int time_in_state(const char *root, int dev, long long *ms) {
	char p[128];
	int n = 0;
	for (; n < 11; n++) {
		snprintf(p, sizeof(p), "class/thermal/cooling_device%d/stats/time_in_state_ms",
			 dev);
		char key[16];
		snprintf(key, sizeof(key), "state%d\t", n);
		if (line_numbers(root, p, key, &ms[n], 1) != 1) {
			break;
		}
	}
	return n;
}

/*
 * The counters the tree prints around an sdxl-image run: proc/stat's busy shares are the
 * model's exactly over each phase, whatever order the times are written in; the big cores'
 * cooling device leaves state 0 and its time_in_state_ms counts it; rknpu/load has the cores.
 */
static void test_tree_counters(struct sim *sim, const char *root) {
	struct sim_run runs[64];
	size_t n = sim_runs(42, T0 + 86400, T0 + 2 * 86400, runs, 64);
	const struct sim_run *r = NULL;
	for (size_t i = 0; i < n && i < 64 && !r; i++) {
		r = strcmp(runs[i].label, "sdxl-image") == 0 ? &runs[i] : NULL;
	}
	ok(r != NULL, "an sdxl-image run on the second day");
	if (!r) {
		return;
	}
	// The NPU job: from the first second the NPU is busy; 10 minutes in, for a minute.
	struct sim_state s, s2;
	int64_t job = r->start;
	for (sim_model(42, job, &s); !s.npu_busy; sim_model(42, ++job, &s)) {
	}
	int64_t t1 = job + 600, t2 = job + 660;
	sim_model(42, t1, &s);
	sim_model(42, t2, &s2);
	bool flat = memcmp(s.cpu_busy_pct, s2.cpu_busy_pct, sizeof(s.cpu_busy_pct)) == 0;
	bool shares_ok = flat;
	for (int c = 0; c < SIM_CPUS; c++) {
		double got = stat_share(sim, root, c, t1, t2);
		if (fabs(got - s.cpu_busy_pct[c]) > 1e-9) {
			printf("# cpu%d: %.3f %% in proc/stat, the model %d %%\n", c, got,
			       s.cpu_busy_pct[c]);
			shares_ok = false;
		}
	}
	ok(shares_ok, "proc/stat's busy shares over a minute of the job are the model's");
	ok(s.cpu_busy_pct[4] >= 40 && s.cpu_busy_pct[0] < 30, "the job loads the big cores most");
	double before = stat_share(sim, root, 4, r->start - 900, r->start - 840);
	double loading = stat_share(sim, root, 4, r->start, job);
	printf("# cpu4: %.1f %% before the run, %.1f %% loading the model\n", before, loading);
	ok(before >= 0 && before < 5 && loading > 80, "cpu4 idles before the run, loads the model");
	// Written back and forth, the counters are the same function of time.
	long long a[10], b[10];
	sim_write(sim, t2);
	line_numbers(root, "proc/stat", "cpu ", a, 10);
	sim_write(sim, T0);
	sim_write(sim, t2);
	line_numbers(root, "proc/stat", "cpu ", b, 10);
	ok(memcmp(a, b, sizeof(a)) == 0,
	   "proc/stat at a time does not depend on the order written");

	long long ms_before[11] = {0}, ms_after[11] = {0};
	sim_write(sim, r->start);
	int states = time_in_state(root, 1, ms_before);
	char want[64];
	snprintf(want, sizeof(want), "%d\n", 0);
	is_str(slurp(root, "class/thermal/cooling_device1/cur_state"), want,
	       "cpufreq-cpu4 at state 0 when the run starts");
	sim_model(42, t1, &s);
	sim_write(sim, t1);
	snprintf(want, sizeof(want), "%d\n", s.cool_state[SIM_POLICY_BIG0]);
	is_str(slurp(root, "class/thermal/cooling_device1/cur_state"), want,
	       "its cur_state is the model's in the job");
	snprintf(want, sizeof(want), "%lld\n", (long long)s.cap_khz[SIM_POLICY_BIG0]);
	is_str(slurp(root, "devices/system/cpu/cpufreq/policy4/scaling_max_freq"), want,
	       "policy4's scaling_max_freq is the cap");
	ok(s.cool_state[SIM_POLICY_BIG0] > 0 && s.cap_khz[SIM_POLICY_BIG0] < 2256000,
	   "capped below cpuinfo_max_freq ten minutes into the job");
	int64_t release = job + SIM_JOB_S;
	for (sim_model(42, release, &s); s.cool_state[SIM_POLICY_BIG0] > 0;
	     sim_model(42, ++release, &s)) {
	}
	sim_write(sim, release);
	time_in_state(root, 1, ms_after);
	long long active = 0, sum = 0;
	for (int st = 1; st < 11; st++) {
		active += ms_after[st] - ms_before[st];
	}
	for (int st = 0; st < 11; st++) {
		sum += ms_after[st] - ms_before[st];
	}
	printf("# cpufreq-cpu4: %lld ms above state 0 over the run\n", active);
	ok(states == 11 && active > 600000 && active < (r->end - job) * 1000,
	   "time_in_state_ms counts the run's throttled time");
	ok(sum == (release - r->start) * 1000, "and its states add up to the elapsed time");
	is_str(slurp(root, "class/thermal/cooling_device1/cur_state"), "0\n",
	       "released after the job");
	ok(release > job + SIM_JOB_S && release < job + SIM_JOB_S + 120, "within 2 minutes");

	sim_model(42, t1, &s);
	sim_write(sim, t1);
	snprintf(want, sizeof(want), "NPU load:  Core0: %3d%%, Core1: %3d%%, Core2: %3d%%,\n",
		 s.npu_load_pct[0], s.npu_load_pct[1], s.npu_load_pct[2]);
	is_str(slurp(root, "debug/rknpu/load"), want, "debug/rknpu/load has the three cores");
	ok(s.npu_load_pct[0] >= 80 && s.npu_load_pct[1] >= 76 && s.npu_load_pct[2] >= 38,
	   "the NPU cores are busy in the job");
	sim_model(42, r->start - 900, &s);
	ok(s.npu_load_pct[0] == 0 && s.npu_load_pct[1] == 0, "and idle before the run");
}

static void test_tree(void) {
	char parent[] = "/tmp/test-sim.XXXXXX";
	ok(mkdtemp(parent) != NULL, "temporary parent");
	struct sim *sim = sim_create(parent, 42, T0);
	ok(sim != NULL, "sim_create builds the tree");
	if (!sim) {
		return;
	}
	const char *root = sim_root(sim);
	static const char *const types[] = {
		"soc-thermal",    "bigcore0-thermal", "bigcore1-thermal", "littlecore-thermal",
		"center-thermal", "gpu-thermal",      "npu-thermal"};
	bool types_ok = true;
	for (int z = 0; z < 7; z++) {
		char p[128], want[64];
		snprintf(p, sizeof(p), "class/thermal/thermal_zone%d/type", z);
		snprintf(want, sizeof(want), "%s\n", types[z]);
		const char *got = slurp(root, p);
		types_ok = types_ok && got && strcmp(got, want) == 0;
	}
	ok(types_ok, "seven zones in TSADC channel order, BSP names");
	struct sim_state s;
	sim_model(42, T0, &s);
	char want[64];
	snprintf(want, sizeof(want), "%d\n", (int)s.zone_mc[SIM_ZONE_NPU]);
	is_str(slurp(root, "class/thermal/thermal_zone6/temp"), want, "zone temp is the model's");
	is_str(slurp(root, "class/thermal/cooling_device4/type"), "pwm-fan\n", "pwm-fan cooling");
	is_str(slurp(root, "class/thermal/cooling_device4/max_state"), "4\n", "BSP fan levels");
	is_str(slurp(root, "class/thermal/thermal_zone0/trip_point_0_temp"), "60000\n",
	       "ROCK 5C fan trip");
	snprintf(want, sizeof(want), "%lld\n", (long long)s.cpu_khz[SIM_POLICY_BIG0]);
	is_str(slurp(root, "devices/system/cpu/cpu5/cpufreq/scaling_cur_freq"), want,
	       "cpu5 links to policy4");
	is_str(slurp(root, "devices/system/cpu/cpufreq/policy6/related_cpus"), "6 7\n",
	       "policy6 covers cpu6-7");
	is_str(slurp(root, "class/devfreq/fdab0000.npu/governor"), "rknpu_ondemand\n",
	       "NPU devfreq governor");
	is_str(slurp(root, "bus/iio/devices/iio:device0/name"), "fec10000.saradc\n", "SARADC");
	is_str(slurp(root, "bus/iio/devices/iio:device0/of_node/compatible"),
	       "rockchip,rk3588-saradc", "SARADC compatible through of_node");
	is_str(slurp(root, "bus/iio/devices/iio:device1/name"), "maxim_thermocouple\n",
	       "MAX31855 driver name");
	is_str(slurp(root, "bus/iio/devices/iio:device1/in_temp_scale"), "250\n",
	       "thermocouple scale");
	snprintf(want, sizeof(want), "%d\n", (int)s.tc_raw);
	is_str(slurp(root, "bus/iio/devices/iio:device1/in_temp_raw"), want, "thermocouple raw");

	// A time inside a job changes the NPU clock file.
	int64_t busy_t = -1;
	for (int64_t t = T0; t < T0 + WEEK && busy_t < 0; t += 60) {
		sim_model(42, t, &s);
		busy_t = s.npu_busy ? t : -1;
	}
	ok(busy_t > 0 && sim_write(sim, busy_t) == 0, "sim_write during a job");
	is_str(slurp(root, "class/devfreq/fdab0000.npu/cur_freq"), "1000000000\n",
	       "NPU at 1.0 GHz in the tree");
	test_tree_counters(sim, root);
	char *copy = strdup(root);
	sim_destroy(sim);
	struct stat st;
	ok(stat(copy, &st) < 0, "sim_destroy removes the tree");
	free(copy);
	rmdir(parent);
}

/*
 * sim_quiet_minute(): inside a run (and in its cooling after it) the quiet minute is before the
 * run's start, on the minute, with no run under way and no cooling; on a quiet minute, itself.
 */
static void test_quiet_minute(uint64_t seed) {
	// Six hours of runs, each probed every 5 minutes and 4 more after its end.
	size_t n = sim_runs(seed, T0, T0 + 6 * 3600, NULL, 0);
	struct sim_run *runs = calloc(n, sizeof(*runs));
	sim_runs(seed, T0, T0 + 6 * 3600, runs, n);
	size_t inside = 0, before = 0, quiet = 0, idem = 0;
	for (size_t i = 0; i < n; i++) {
		for (int64_t t = runs[i].start + 1; t < runs[i].end + 240; t += 301) {
			int64_t q = sim_quiet_minute(seed, t);
			bool busy = false;
			for (size_t j = 0; j < n; j++) {
				busy = busy || (runs[j].start < q && runs[j].end > q);
			}
			struct sim_state s;
			sim_model(seed, q, &s);
			busy = busy || s.cool_state[SIM_POLICY_BIG0] > 0 ||
			       s.cool_state[SIM_POLICY_BIG1] > 0;
			inside += t < runs[i].end;
			before += t < runs[i].end && q <= runs[i].start && q % 60 == 0 &&
				  t - q < 3600;
			quiet += !busy;
			idem += sim_quiet_minute(seed, q) == q;
		}
	}
	size_t probes = 0;
	for (size_t i = 0; i < n; i++) {
		for (int64_t t = runs[i].start + 1; t < runs[i].end + 240; t += 301) {
			probes++;
		}
	}
	printf("# seed %llu: %zu probes inside runs, %zu in all\n", (unsigned long long)seed,
	       inside, probes);
	ok(n > 0 && inside > 0 && before == inside,
	   "inside a run the quiet minute is on the minute before its start");
	ok(quiet == probes && idem == probes,
	   "no run under way and no cooling there, and it is its own quiet minute");
	free(runs);
}

int main(void) {
	test_determinism();
	test_week(1);
	test_week(2024);
	test_job_shape();
	test_throttle(1);
	test_throttle(2024);
	test_quiet_minute(1);
	test_quiet_minute(2024);
	test_steps();
	test_tree();
	return test_done();
}
