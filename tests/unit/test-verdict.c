/*
 * Comparable or not (verdict.c): each rule fires on its figures and on nothing else; the same
 * board against itself is comparable.
 */
#include <math.h>
#include <string.h>

#include "test.h"
#include "verdict.h"

static void board(struct verdict_side *s, const char *name, double ambient, double big_max,
		  double reached) {
	*s = (struct verdict_side){.name = name, .ambient_c = ambient, .exposure = 0.80};
	snprintf(s->ambient_from, sizeof(s->ambient_from), "iio/maxim_thermocouple/temp_ambient");
	s->clocks[0] =
		(struct verdict_clock){"cpufreq/policy4", big_max, reached, true, ROLE_CLUSTER_BIG};
	s->clocks[1] =
		(struct verdict_clock){"cpufreq/policy0", 1.8e9, 1.8e9, true, ROLE_CLUSTER_LITTLE};
	// The GPU, idle during the test, never reaches its maximum: no binning to tell from it.
	s->clocks[2] = (struct verdict_clock){"devfreq/fb000000.gpu", 1e9, 6e8, false, ROLE_GPU};
	s->n_clocks = 3;
	snprintf(s->governors[0].key, 80, "devfreq/dmc");
	snprintf(s->governors[0].value, 64, "dmc_ondemand");
	s->n_governors = 1;
	snprintf(s->exe_sha256, sizeof(s->exe_sha256), "%064d", 1);
}

static const char *codes(const struct verdict *v, char *out, size_t len) {
	out[0] = '\0';
	for (size_t i = 0; i < v->n; i++) {
		strncat(out, v->reasons[i].code, len - strlen(out) - 2);
		strncat(out, " ", len - strlen(out) - 1);
	}
	return out;
}

/*
 * Clocks pair by their part, never by their name alone: a board whose big cluster is named
 * otherwise is judged against it; an x86 board's policy0 (one kind of core) is no little
 * cluster, however its maximum differs; --map-channel pairs what it names.
 */
static void test_roles(void) {
	struct verdict_side a, b;
	struct verdict v;
	char text[256];
	board(&a, "A", 25.0, 2.256e9, 2.256e9);
	board(&b, "B", 25.0, 2.208e9, 2.208e9);
	snprintf(b.clocks[0].key, sizeof(b.clocks[0].key), "cpufreq/policy6");
	verdict_judge(&a, &b, &v);
	is_str(codes(&v, text, sizeof(text)), "clock ", "the big clusters pair by role");
	ok(v.n == 1 && strstr(v.reasons[0].message,
			      "cpufreq/policy4 and cpufreq/policy6 (the big cluster)"),
	   "and the reason names both");
	verdict_finish(&v);
	// An x86 board: policy0, its only cluster, at 4.7 GHz, and no big cluster.
	board(&b, "x86", 25.0, 0, 0);
	b.clocks[0] =
		(struct verdict_clock){"cpufreq/policy0", 4.7e9, 4.7e9, true, ROLE_CLUSTER_CPU};
	b.n_clocks = 1;
	verdict_judge(&a, &b, &v);
	ok(v.comparable, "RK3588 policy0 (little) and x86 policy0 (its CPU) are not compared");
	verdict_finish(&v);
	const struct role_pair by_hand[] = {{"cpufreq/policy4", "cpufreq/policy0"}};
	verdict_judge_paired(&a, &b, by_hand, 1, &v);
	ok(v.n == 1 && strstr(v.reasons[0].message, "2256 MHz on A, 4700 MHz on x86"),
	   "--map-channel compares what it names");
	verdict_finish(&v);
}

int main(void) {
	struct verdict_side a, b;
	struct verdict v;
	char text[256];
	board(&a, "A", 25.0, 2.256e9, 2.256e9);
	board(&b, "A again", 25.0, 2.256e9, 2.256e9);
	verdict_judge(&a, &b, &v);
	ok(v.comparable && v.n == 0, "the same board against itself is comparable");
	verdict_finish(&v);

	// Board B: 6.5 K warmer and binned one OPP lower: exactly the ambient and clock reasons.
	board(&b, "B", 31.5, 2.208e9, 2.208e9);
	verdict_judge(&a, &b, &v);
	is_str(codes(&v, text, sizeof(text)), "ambient clock ", "ambient and clock, nothing else");
	ok(!v.comparable, "not comparable");
	ok(strstr(v.reasons[0].message, "+6.50 K") && strcmp(v.reasons[0].a, "25") == 0 &&
		   strcmp(v.reasons[0].b, "31.5") == 0,
	   "the ambient reason with its figures");
	ok(strstr(v.reasons[1].message, "2256 MHz") && strstr(v.reasons[1].message, "2208 MHz") &&
		   strcmp(v.reasons[1].a, "2256000000") == 0,
	   "the clock reason: the hardware maxima");
	struct buf out = {0};
	struct json j;
	json_init(&j, &out, false);
	verdict_write_json(&v, &j);
	ok(strncmp(out.data,
		   "{\"comparable\":false,\"reasons\":[{\"code\":\"ambient\",\"a\":25,\"b\":31.5,",
		   63) == 0,
	   "the JSON shape");
	buf_finish(&out);
	verdict_finish(&v);

	// 2 K apart is still like for like; a board that never reached its maximum is binned.
	board(&b, "B", 27.0, 2.256e9, 2.208e9);
	verdict_judge(&a, &b, &v);
	is_str(codes(&v, text, sizeof(text)), "clock ", "2 K apart: no ambient reason");
	ok(strstr(v.reasons[0].message, "highest clock reached") != NULL,
	   "reached below the hardware maximum (binning)");
	verdict_finish(&v);

	// A test that loads the big cluster part of the way: both boards below the maximum alike.
	board(&a, "A", 25.0, 2.256e9, 1.416e9);
	board(&b, "A again", 25.0, 2.256e9, 1.416e9);
	verdict_judge(&a, &b, &v);
	ok(v.comparable, "both boards held alike below the maximum by a partial load: comparable");
	verdict_finish(&v);
	board(&a, "A", 25.0, 2.256e9, 2.256e9);

	// Governors, the executable, throttle exposure and cooling.
	board(&b, "B", 25.0, 2.256e9, 2.256e9);
	snprintf(b.governors[0].value, 64, "dmc_ondemand upthreshold=25");
	snprintf(b.exe_sha256, sizeof(b.exe_sha256), "%064d", 2);
	b.exposure = 0.95;
	snprintf(a.cooling, sizeof(a.cooling), "heatsink and fan");
	snprintf(b.cooling, sizeof(b.cooling), "heatsink");
	verdict_judge(&a, &b, &v);
	is_str(codes(&v, text, sizeof(text)), "governor executable throttle cooling ",
	       "each other rule fires on its own figure");
	verdict_finish(&v);
	b.exposure = 0.899;
	b.ambient_c = NAN;
	b.exe_sha256[0] = '\0';
	b.cooling[0] = '\0';
	snprintf(b.governors[0].value, 64, "dmc_ondemand");
	verdict_judge(&a, &b, &v);
	ok(v.comparable, "10 points apart, an unknown ambient or hash, no cooling declared: "
			 "nothing to hold against");
	verdict_finish(&v);
	test_roles();
	return test_done();
}
