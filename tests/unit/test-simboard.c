/*
 * The simulated board under work (simboard.c) and the declarations that give it work
 * (simload.c): the parameters, heating and cooling through the lags, throttling at the trip,
 * binning, ambient, cooling, the time scale, the counters, and the tree a board writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "sim.h"
#include "simboard.h"
#include "simload.h"
#include "test.h"

#define T0_MS 1787000000000LL

static void test_params(void) {
	struct simboard_params p;
	simboard_params_default(&p);
	char *err = NULL;
	ok(simboard_params_parse("ambient=31.5,big_max=2304,cooling=passive,time_scale=60", &p,
				 &err),
	   "a full spec reads");
	is_near(p.ambient_c, 31.5, 1e-12, "ambient");
	is_int(p.big_max_khz, 2304000, "big_max in kHz");
	is_int(p.cooling, SIMBOARD_COOLING_PASSIVE, "cooling");
	is_near(p.time_scale, 60, 1e-12, "time scale");
	static const char *const bad[][2] = {
		{"ambient=hot", "ambient=hot"},
		{"big_max=2300", "big_max=2300: expected"},
		{"cooling=water", "expected fan or"},
		{"time_scale=0", "time_scale=0"},
		{"colour=red", "unknown key 'colour'"},
		{"ambient", "expected KEY=VALUE"},
		{"", "empty"},
		{"ambient=nan", "ambient=nan"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		free(err);
		err = NULL;
		bool read = simboard_params_parse(bad[i][0], &p, &err);
		char what[96];
		snprintf(what, sizeof(what), "'%s' refused, naming it", bad[i][0]);
		ok(!read && err && strstr(err, bad[i][1]), what);
	}
	free(err);
}

static struct simboard_load all_cores(double pct) {
	struct simboard_load l = {{0}, {0}};
	for (int c = 0; c < SIM_CPUS; c++) {
		l.cpu_pct[c] = pct;
	}
	return l;
}

/* Steps @b by @step_ms for @ms under @l; returns the highest big-core clock seen. */
static int64_t run_for(struct simboard *b, const struct simboard_load *l, int64_t ms,
		       int64_t step_ms, int *max_state) {
	int64_t top = 0;
	for (int64_t end = b->t_ms + ms; b->t_ms < end;) {
		simboard_step(b, l, b->t_ms + step_ms);
		for (int p = SIM_POLICY_BIG0; p < SIM_POLICY_COUNT; p++) {
			top = b->cpu_khz[p] > top ? b->cpu_khz[p] : top;
			if (max_state && b->cool_state[p] > *max_state) {
				*max_state = b->cool_state[p];
			}
		}
	}
	return top;
}

static void test_heat_and_cool(void) {
	struct simboard_params p;
	simboard_params_default(&p);
	struct simboard b;
	simboard_init(&b, &p, T0_MS, 3600);
	double idle[SIM_ZONE_COUNT];
	memcpy(idle, b.excess_k, sizeof(idle));
	struct simboard_load none = {{0}, {0}};
	run_for(&b, &none, 3600 * 1000, 1000, NULL);
	bool settled = true;
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		settled = settled && fabs(b.excess_k[z] - idle[z]) < 1e-9;
	}
	ok(settled, "left alone, the board stays at its idle temperatures");
	is_int(b.cpu_khz[SIM_POLICY_BIG0], 408000, "idle big cores at the bottom OPP");

	struct simboard_load full = all_cores(100);
	int max_state = 0;
	int64_t top = run_for(&b, &full, 1800 * 1000, 1000, &max_state);
	double big = p.ambient_c + b.excess_k[SIM_ZONE_BIGCORE0];
	printf("# all-core load: bigcore0 %.2f C, deepest state %d, clock now %lld kHz\n", big,
	       max_state, (long long)b.cpu_khz[SIM_POLICY_BIG0]);
	is_int(top, 2400000, "an unbinned board reaches its top OPP");
	ok(max_state >= 2, "the big cores are throttled at their passive trip");
	ok(big > SIM_BIG_TRIP_MC / 1000.0 - 3 && big < SIM_BIG_TRIP_MC / 1000.0 + 8,
	   "throttling holds the big cores near their trip");
	ok(b.cpu_khz[SIM_POLICY_BIG0] < 2400000, "the cap lowers the clock");
	ok(b.power_w > 8, "the load draws power");
	ok(b.excess_k[SIM_ZONE_BIGCORE0] > b.excess_k[SIM_ZONE_GPU],
	   "the big cores' zones heat most under CPU load");

	// Left alone, every zone falls monotonically back toward its idle temperature.
	bool falling = true, above = true;
	double prev[SIM_ZONE_COUNT];
	memcpy(prev, b.excess_k, sizeof(prev));
	for (int i = 0; i < 60; i++) {
		simboard_step(&b, &none, b.t_ms + 60000);
		for (int z = 0; z < SIM_ZONE_COUNT; z++) {
			falling = falling && b.excess_k[z] <= prev[z] + 1e-12;
			above = above && b.excess_k[z] >= idle[z] - 1e-9;
			prev[z] = b.excess_k[z];
		}
	}
	ok(falling && above, "cooling is monotonic and never undershoots the idle state");
	ok(fabs(b.excess_k[SIM_ZONE_BIGCORE0] - idle[SIM_ZONE_BIGCORE0]) < 0.1,
	   "an hour later the board is back at idle");
	ok(b.cool_state[SIM_POLICY_BIG0] == 0 && b.cool_state[SIM_POLICY_BIG1] == 0,
	   "the cooling devices are back at state 0");

	// The NPU heats its own zone most.
	struct simboard_load npu = {{0}, {0}};
	for (int k = 0; k < SIM_NPU_CORES; k++) {
		npu.npu_pct[k] = 90;
	}
	run_for(&b, &npu, 1200 * 1000, 1000, NULL);
	ok(b.excess_k[SIM_ZONE_NPU] > b.excess_k[SIM_ZONE_BIGCORE0] + 10,
	   "NPU work heats npu-thermal most");
	struct sim_state s;
	simboard_state(&b, 1, &s);
	ok(s.npu_busy && s.npu_hz == SIM_NPU_BUSY_HZ && s.npu_load_pct[0] == 90,
	   "the NPU runs at 1 GHz, its cores as loaded");
}

static void test_boards_differ(void) {
	struct simboard_params a, b;
	simboard_params_default(&a);
	simboard_params_default(&b);
	char *err = NULL;
	ok(simboard_params_parse("ambient=31.5,big_max=2304", &b, &err), "board B");
	free(err);
	struct simboard ba, bb;
	simboard_init(&ba, &a, T0_MS, 60);
	simboard_init(&bb, &b, T0_MS, 60);
	struct sim_state sa, sb;
	simboard_state(&ba, 1, &sa);
	simboard_state(&bb, 1, &sb);
	is_near(sb.zone_c[SIM_ZONE_SOC] - sa.zone_c[SIM_ZONE_SOC], 6.5, 1e-9,
		"B idles 6.5 K above A (the same seed's noise)");
	is_near((sb.tc_ambient_raw - sa.tc_ambient_raw) * 0.0625, 6.5, 0.07,
		"the cold junction reads the ambient's difference");
	// A short all-core burst: A reaches 2400 MHz, B its binned 2304.
	struct simboard_load full = all_cores(100);
	int64_t top_a = run_for(&ba, &full, 20 * 1000, 1000, NULL);
	int64_t top_b = run_for(&bb, &full, 20 * 1000, 1000, NULL);
	is_int(top_a, 2400000, "A's burst reaches 2400 MHz");
	is_int(top_b, 2304000, "B's burst holds 2304 MHz, its binned maximum");

	struct simboard_params pa;
	simboard_params_default(&pa);
	pa.cooling = SIMBOARD_COOLING_PASSIVE;
	struct simboard fan, passive;
	simboard_init(&fan, &a, T0_MS, 60);
	simboard_init(&passive, &pa, T0_MS, 60);
	struct simboard_load both = all_cores(100);
	both.npu_pct[0] = both.npu_pct[1] = both.npu_pct[2] = 100;
	run_for(&fan, &both, 1800 * 1000, 1000, NULL);
	run_for(&passive, &both, 1800 * 1000, 1000, NULL);
	ok(passive.excess_k[SIM_ZONE_NPU] > fan.excess_k[SIM_ZONE_NPU] + 2,
	   "a passive board runs hotter under load");
	ok(fan.fan_state > 0 && passive.fan_state == 0, "only the fan board spins a fan");
}

/* The time scale: a second of the wall at scale 60 is a minute of the board's physics. */
static void test_time_scale(void) {
	struct simboard_params p1, p60;
	simboard_params_default(&p1);
	simboard_params_default(&p60);
	p60.time_scale = 60;
	struct simboard a, b;
	simboard_init(&a, &p1, T0_MS, 60);
	simboard_init(&b, &p60, T0_MS, 60);
	struct simboard_load l = all_cores(40);
	for (int i = 0; i < 10; i++) {
		simboard_step(&a, &l, a.t_ms + 60000);
		simboard_step(&b, &l, b.t_ms + 1000);
	}
	is_near(b.excess_k[SIM_ZONE_SOC], a.excess_k[SIM_ZONE_SOC], 1e-9,
		"10 s at scale 60 = 10 min at scale 1");
	// The counters count the wall clock: 10 s of 40 % (+ housekeeping) on cpu4.
	is_near(b.busy_ticks[4] - 60 * 1.0, 10 * 41.0, 1e-6, "busy ticks count wall seconds");
	int64_t total = 0;
	for (int s = 0; s < SIMBOARD_MAX_STATES; s++) {
		total += b.state_ms[SIM_POLICY_BIG0][s];
	}
	is_int(total, 70000, "the time in the cooling states adds up to the uptime");
}

static void test_parse(void) {
	struct simload_decl d;
	char *err = NULL;
	const char good[] = "thermlog-simload 1\nstart_ms 1787000000123\ncpu 4-7 100\ncpu 0 "
			    "12.5\nnpu all 80\nend_ms 1787000002123\n";
	ok(simload_parse(good, strlen(good), &d, &err), "a declaration reads");
	is_int(d.start_ms, 1787000000123LL, "start_ms");
	is_int(d.end_ms, 1787000002123LL, "end_ms");
	ok(d.load.cpu_pct[0] == 12.5 && d.load.cpu_pct[3] == 0 && d.load.cpu_pct[7] == 100 &&
		   d.load.npu_pct[2] == 80,
	   "the shares per CPU and core");
	struct buf text = {0};
	simload_format(&d, &text);
	struct simload_decl back;
	ok(simload_parse(text.data, text.len, &back, &err) &&
		   memcmp(&back.load, &d.load, sizeof(d.load)) == 0 &&
		   back.start_ms == d.start_ms && back.end_ms == 0,
	   "format then parse gives the same load");
	buf_finish(&text);
	static const char *const bad[][2] = {
		{"thermlog-simload 2\nstart_ms 1787000000000\n", "line 1"},
		{"thermlog-simload 1\ncpu 0-8 10\nstart_ms 1787000000000\n", "line 2: cpu"},
		{"thermlog-simload 1\nstart_ms 1787000000000\nnpu 0 101\n", "line 3: npu"},
		{"thermlog-simload 1\nstart_ms 1787000000000\ngpu 0 1\n", "unknown key 'gpu'"},
		{"thermlog-simload 1\ncpu 0 1\n", "no start_ms"},
		{"thermlog-simload 1\nstart_ms 17\n", "line 2: start_ms"},
		{"thermlog-simload 1\nstart_ms 1787000000000\nend_ms 1786000000000\n", "before"},
		{"", "empty"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		free(err);
		err = NULL;
		bool read = simload_parse(bad[i][0], strlen(bad[i][0]), &d, &err);
		char what[96];
		snprintf(what, sizeof(what), "bad declaration %zu refused: %s", i, bad[i][1]);
		ok(!read && err && strstr(err, bad[i][1]), what);
	}
	free(err);
	double pct[SIM_CPUS] = {0};
	ok(simload_spec("all=50", pct, SIM_CPUS) && simload_spec("6-7=60", pct, SIM_CPUS) &&
		   pct[0] == 50 && pct[7] == 100,
	   "specs add up, capped at 100 %");
	ok(!simload_spec("8=10", pct, SIM_CPUS) && !simload_spec("1=x", pct, SIM_CPUS) &&
		   !simload_spec("3-1=5", pct, SIM_CPUS) && !simload_spec("=5", pct, SIM_CPUS),
	   "bad specs refused");
}

/* Declarations in a tree: a running one counts to the end of the interval, an ended one to its
 * end and goes, a killed one (its lock gone without end_ms) counts to the interval's end once. */
static void test_collect(void) {
	char root[] = "/tmp/test-simboard.XXXXXX";
	ok(mkdtemp(root) != NULL, "temporary tree");
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/sim", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/" SIMLOAD_DIR, root);
	mkdir(dir, 0755);
	int root_fd = open(root, O_RDONLY | O_DIRECTORY);
	struct simload_decl d = {.start_ms = T0_MS};
	d.load.cpu_pct[4] = 100;
	int fd = simload_declare(root, &d);
	ok(fd >= 0, "declared");
	struct simboard_load l;
	simload_collect(root_fd, T0_MS - 1000, T0_MS + 1000, &l);
	is_near(l.cpu_pct[4], 50, 1e-9, "a running declaration counts from its start");
	ok(simload_end(fd, T0_MS + 1500) == 0, "ended");
	simload_collect(root_fd, T0_MS + 1000, T0_MS + 2000, &l);
	is_near(l.cpu_pct[4], 50, 1e-9, "an ended one counts to its end");
	simload_collect(root_fd, T0_MS + 2000, T0_MS + 3000, &l);
	is_near(l.cpu_pct[4], 0, 1e-9, "and is gone after it");

	// A child declares and exits without ending: killed work. Flushed first: valgrind's exit
	// frees libc's buffers in the child, writing the TAP lines they hold a second time.
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct simload_decl k = {.start_ms = T0_MS + 3000};
		k.load.npu_pct[1] = 80;
		_exit(simload_declare(root, &k) >= 0 ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child declared and died");
	simload_collect(root_fd, T0_MS + 3000, T0_MS + 4000, &l);
	is_near(l.npu_pct[1], 80, 1e-9, "killed work counts to the interval's end");
	simload_collect(root_fd, T0_MS + 4000, T0_MS + 5000, &l);
	is_near(l.npu_pct[1], 0, 1e-9, "then it is gone");

	// The tree of a board: declared work heats it.
	struct simboard_params p;
	simboard_params_default(&p);
	p.time_scale = 60;
	struct sim *sim = sim_create_board(root, 3, T0_MS / 1000, &p);
	ok(sim != NULL, "a board's tree");
	if (sim) {
		const char *r = sim_root(sim);
		char path[512], text[256] = "";
		snprintf(path, sizeof(path),
			 "%s/devices/system/cpu/cpufreq/policy4/cpuinfo_max_freq", r);
		FILE *f = fopen(path, "r");
		ok(f && fgets(text, sizeof(text), f) && strcmp(text, "2400000\n") == 0,
		   "the big cores list 2.4 GHz");
		if (f) {
			fclose(f);
		}
		struct simload_decl w = {.start_ms = T0_MS};
		for (int c = 0; c < SIM_CPUS; c++) {
			w.load.cpu_pct[c] = 100;
		}
		int wfd = simload_declare(r, &w);
		ok(wfd >= 0 && sim_write_ms(sim, T0_MS + 5000) == 0, "a write under work");
		snprintf(path, sizeof(path), "%s/class/thermal/thermal_zone1/temp", r);
		f = fopen(path, "r");
		long mc = f && fgets(text, sizeof(text), f) ? strtol(text, NULL, 10) : 0;
		if (f) {
			fclose(f);
		}
		ok(mc > 50000, "5 s at scale 60 under all-core load heat bigcore0 past 50 C");
		if (wfd >= 0) {
			simload_end(wfd, T0_MS + 5000);
		}
		sim_destroy(sim);
	}
	close(root_fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ok(system(cmd) == 0, "cleaned up");
}

int main(void) {
	test_params();
	test_heat_and_cool();
	test_boards_differ();
	test_time_scale();
	test_parse();
	test_collect();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
