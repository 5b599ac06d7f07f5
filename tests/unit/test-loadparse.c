/*
 * The load source's parsers (loadparse.h): /proc/stat ticks and busy shares from known deltas,
 * both rknpu/load forms and their paddings, rkrga/load as the driver prints it, devfreq load,
 * and malformed texts (each an error with a reason, never a figure).
 */
#include <errno.h>

#include "loadparse.h"
#include "test.h"

/* The head of an RK3588's /proc/stat (user nice system idle iowait irq softirq steal guest
 * guest_nice), cpu5 offline. */
static const char stat_text[] = "cpu  1000 100 500 8000 200 10 20 30 400 40\n"
				"cpu0 100 0 50 800 50 0 0 0 0 0\n"
				"cpu1 200 10 60 700 0 0 0 0 100 10\n"
				"cpu2 0 0 0 1000 0 0 0 0 0 0\n"
				"cpu3 7 0 0 3\n"
				"cpu4 1 2 3 4 5 6 7 8 9 10 11\n"
				"cpu6 1 1 1 1 1 1 1 1 1 1\n"
				"intr 123456 0 0 1 2\n"
				"ctxt 98765\n"
				"btime 1700000000\n";

static void test_stat(void) {
	struct loadparse_ticks t;
	const char *why = NULL;
	is_int(loadparse_stat(stat_text, -1, &t, &why), 0, "the all-CPU line");
	// total = user..steal; guest and guest_nice are inside user and nice already
	is_int(t.total, 1000 + 100 + 500 + 8000 + 200 + 10 + 20 + 30, "total without guest");
	is_int(t.busy, t.total - 8000 - 200, "busy: not idle, not iowait");
	is_int(loadparse_stat(stat_text, 1, &t, &why), 0, "cpu1");
	is_int(t.total, 970, "cpu1 total: guest 100 and guest_nice 10 not added");
	is_int(t.busy, 270, "cpu1 busy");
	is_int(loadparse_stat(stat_text, 3, &t, &why), 0, "4 figures (an old kernel)");
	is_int(t.total, 10, "cpu3 total");
	is_int(t.busy, 7, "cpu3 busy");
	is_int(loadparse_stat(stat_text, 4, &t, &why), 0, "an 11th figure is ignored");
	is_int(t.total, 36, "cpu4 total of 8 figures");
	is_int(loadparse_stat(stat_text, 5, &t, &why), -ENOENT, "offline cpu5: -ENOENT");
	is_int(loadparse_stat(stat_text, 60, &t, &why), -ENOENT, "cpu60: -ENOENT");
	is_int(loadparse_stat("cpu10 1 2 3 4\n", 1, &t, &why), -ENOENT, "cpu1 is not cpu10");

	int ids[8];
	is_int(loadparse_stat_cpus(stat_text, ids, 8), 6, "6 cpuN lines (cpu5 offline)");
	is_int(ids[4], 4, "cpu4");
	is_int(ids[5], 6, "then cpu6");
	is_int(loadparse_stat_cpus(stat_text, ids, 2), 6, "the count past the capacity");
	is_int(loadparse_stat_cpus("intr 1\n", ids, 2), 0, "no cpu lines");

	// the index: one pass over the cpu lines, each CPU's line parsed from its offset
	size_t at[8];
	is_int(loadparse_stat_index(stat_text, ids, at, 8), 7, "7 cpu lines, the all-CPU one too");
	is_int(ids[0], -1, "the all-CPU line first");
	is_int(at[0], 0, "at the start");
	is_int(ids[6], 6, "cpu6 last");
	is_int(loadparse_stat(stat_text + at[2], 1, &t, &why), 0, "cpu1 from its offset");
	is_int(t.busy, 270, "the same ticks as found by a search");
	is_int(loadparse_stat_index(stat_text, ids, at, 3), 7, "the count past the capacity");
	is_int(ids[2], 1, "the first three kept");
	is_int(loadparse_stat_index("cpu  1 2 3 4\nintr 1\ncpu7 1 2 3 4\n", ids, at, 8), 1,
	       "the pass ends after the cpu lines");
	is_int(loadparse_stat_index("btime 1\ncpu0 1 2 3 4\n", ids, at, 8), 1,
	       "lines before the cpu lines are passed over");
	is_int(loadparse_stat_index("", ids, at, 8), 0, "no text, no lines");

	why = NULL;
	is_int(loadparse_stat("cpu  1 2 3\n", -1, &t, &why), -EBADMSG, "3 figures: -EBADMSG");
	ok(why && strstr(why, "fewer than 4"), "the reason names the figures");
	is_int(loadparse_stat("cpu  1 2 x 4\n", -1, &t, &why), -EBADMSG, "a letter: -EBADMSG");
	is_int(loadparse_stat("cpu  1 2 -3 4\n", -1, &t, &why), -EBADMSG, "a sign: -EBADMSG");
	is_int(loadparse_stat("cpu  1 2 3x 4\n", -1, &t, &why), -EBADMSG, "3x: -EBADMSG");
	is_int(loadparse_stat("cpu  99999999999999999999 1 1 1\n", -1, &t, &why), -ERANGE,
	       "20 digits: -ERANGE");
	is_int(loadparse_stat("cpu  1 2 3 4\r\n", -1, &t, &why), 0, "a CRLF line");
	is_int(loadparse_stat("", -1, &t, &why), -ENOENT, "empty text");
}

static void test_busy(void) {
	struct loadparse_ticks a = {.total = 1000, .busy = 250};
	struct loadparse_ticks b = {.total = 1400, .busy = 350};
	double pct = -1;
	is_int(loadparse_busy(NULL, &b, &pct), -EAGAIN, "no earlier reading: -EAGAIN");
	is_int(loadparse_busy(&a, &b, &pct), 0, "a share");
	is_near(pct, 25, 0, "100 busy of 400 ticks: exactly 25 %");
	b = (struct loadparse_ticks){.total = 1300, .busy = 550};
	is_int(loadparse_busy(&a, &b, &pct), 0, "all busy");
	is_near(pct, 100, 0, "300 of 300: 100 %");
	b = (struct loadparse_ticks){.total = 1600, .busy = 250};
	is_int(loadparse_busy(&a, &b, &pct), 0, "all idle");
	is_near(pct, 0, 0, "0 of 600: 0 %");
	b = (struct loadparse_ticks){.total = 1000, .busy = 250};
	is_int(loadparse_busy(&a, &b, &pct), -EAGAIN, "no tick between: -EAGAIN");
	b = (struct loadparse_ticks){.total = 900, .busy = 200};
	is_int(loadparse_busy(&a, &b, &pct), -EAGAIN, "counters went back: -EAGAIN");
	b = (struct loadparse_ticks){.total = 1100, .busy = 200};
	is_int(loadparse_busy(&a, &b, &pct), -EAGAIN, "busy went back: -EAGAIN");

	// Through the parser: the fixture's cpu0 before and after 2 s at 100 ticks/s
	struct loadparse_ticks t0, t1;
	const char *why;
	is_int(loadparse_stat("cpu0 100 0 50 800 50 0 0 0 0 0\n", 0, &t0, &why), 0, "first");
	is_int(loadparse_stat("cpu0 130 0 65 945 60 0 0 0 20 0\n", 0, &t1, &why), 0, "second");
	is_int(loadparse_busy(&t0, &t1, &pct), 0, "share");
	is_near(pct, 22.5, 1e-15, "45 busy of 200 ticks (iowait idle, guest not twice)");
}

static void test_rknpu(void) {
	struct loadparse_cores c;
	const char *why = NULL;
	is_int(loadparse_rknpu("NPU load:  Core0:  12%, Core1:   0%, Core2:  40%,\n", &c, &why), 0,
	       "three cores, 6.1 padding");
	is_int(c.n, 3, "3 cores");
	ok(c.cores, "per core");
	is_int(c.index[2], 2, "Core2");
	is_int(c.percent[0], 12, "core0 12 %");
	is_int(c.percent[1], 0, "core1 0 %");
	is_int(c.percent[2], 40, "core2 40 %");
	is_int(loadparse_rknpu("NPU load: Core0: 12%, Core1: 0%, Core2: 100%,\n", &c, &why), 0,
	       "three cores, narrow padding");
	is_int(c.percent[2], 100, "core2 100 %");
	is_int(loadparse_rknpu("NPU load:  Core0:  5%, Core1:  7%", &c, &why), 0,
	       "no trailing comma, no newline");
	is_int(c.n, 2, "2 cores");
	is_int(loadparse_rknpu("NPU load:  0%\n", &c, &why), 0, "single core");
	is_int(c.n, 1, "one figure");
	ok(!c.cores, "not per core");
	is_int(c.percent[0], 0, "0 %");
	is_int(loadparse_rknpu("NPU load: 87%", &c, &why), 0, "single core, narrow");
	is_int(c.percent[0], 87, "87 %");

	static const char *const bad[] = {
		"",
		"GPU load: 1%\n",
		"NPU load:\n",
		"NPU load:  12\n",
		"NPU load:  x%\n",
		"NPU load:  12% extra\n",
		"NPU load:  Core0:  12%, Core1:\n",
		"NPU load:  Core0  12%\n",
		"NPU load:  Core:  12%\n",
		"NPU load:  Core0:  12%, Core0:  3%,\n",
		"NPU load:  Core0:  -1%\n",
		"NPU load:  Core0:  12%, garbage\n",
		"NPU load:  Core0:  99999999%\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		char what[128];
		snprintf(what, sizeof(what), "malformed rknpu '%s': -EBADMSG with a reason",
			 bad[i]);
		ok(loadparse_rknpu(bad[i], &c, &why) == -EBADMSG && why && *why, what);
	}
	char many[1024] = "NPU load:";
	for (int i = 0; i < 17; i++) {
		snprintf(many + strlen(many), sizeof(many) - strlen(many), " Core%d: 1%%,", i);
	}
	is_int(loadparse_rknpu(many, &c, &why), -EBADMSG, "17 cores: -EBADMSG");
}

/* rkrga/load as the RK3588 6.1 driver prints it (rga_debugger.c, rga_load_show). */
static const char rga_text[] = "num of scheduler = 3\n"
			       "================= load ==================\n"
			       "scheduler[0]: rga3_core0\n"
			       "\t load = 35%\n"
			       "-----------------------------------\n"
			       "scheduler[1]: rga3_core1\n"
			       "\t load = 0%\n"
			       "-----------------------------------\n"
			       "scheduler[2]: rga2\n"
			       "\t load = 100%\n"
			       "-----------------------------------\n"
			       "\t process 1234: pid = 1234, name: demo\n";

static void test_rkrga(void) {
	struct loadparse_cores c;
	const char *why = NULL;
	is_int(loadparse_rkrga(rga_text, &c, &why), 0, "three schedulers");
	is_int(c.n, 3, "3 schedulers");
	is_str(c.name[0], "rga3_core0", "its driver name");
	is_str(c.name[2], "rga2", "rga2");
	is_int(c.percent[0], 35, "35 %");
	is_int(c.percent[2], 100, "100 %");
	is_int(loadparse_rkrga("scheduler[0]: rga2\n\t load = 7\n", &c, &why), 0,
	       "an old driver's figure without '%'");
	is_int(c.percent[0], 7, "7");

	static const char *const bad[] = {
		"",
		"num of scheduler = 0\n",
		"scheduler[0]: rga2\n",
		"\t load = 3%\n",
		"scheduler[0]: rga2\nscheduler[1]: rga3\n\t load = 1%\n",
		"scheduler[x]: rga2\n\t load = 1%\n",
		"scheduler[0]:\n\t load = 1%\n",
		"scheduler[0]: rga2\n\t load = x%\n",
		"scheduler[0]: rga2\n\t load = 1% busy\n",
		"scheduler[0]: a_name_far_longer_than_thirty_one_bytes\n\t load = 1%\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		char what[160];
		snprintf(what, sizeof(what), "malformed rkrga '%s': -EBADMSG with a reason",
			 bad[i]);
		ok(loadparse_rkrga(bad[i], &c, &why) == -EBADMSG && why && *why, what);
	}
}

static void test_devfreq(void) {
	int64_t pct = -1, hz = -1;
	const char *why = NULL;
	is_int(loadparse_devfreq("37@800000000Hz\n", &pct, &hz, &why), 0, "37@800000000Hz");
	is_int(pct, 37, "37 %");
	is_int(hz, 800000000, "at 800 MHz");
	is_int(loadparse_devfreq("0@300000000Hz", &pct, NULL, &why), 0, "0 %, no newline");
	is_int(pct, 0, "0 %");
	static const char *const bad[] = {"",
					  "37",
					  "37@",
					  "37@800000000",
					  "37@800000000 Hz",
					  "x@1Hz",
					  "37%@1Hz",
					  "37@1Hz trailing",
					  "-1@1Hz"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		char what[96];
		snprintf(what, sizeof(what), "malformed devfreq '%s': -EBADMSG with a reason",
			 bad[i]);
		ok(loadparse_devfreq(bad[i], &pct, &hz, &why) == -EBADMSG && why && *why, what);
	}
}

int main(void) {
	test_stat();
	test_busy();
	test_rknpu();
	test_rkrga();
	test_devfreq();
	return test_done();
}
