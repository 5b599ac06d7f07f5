/*
 * A run's metrics and names (runmetric.c, runtag.c): NAME=VALUE[UNIT], the metrics file as
 * lines and as one JSON object (bad lines named by number, the rest kept), the wire's object,
 * the text rule of names, tags and their filter.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runmetric.h"
#include "runtag.h"
#include "test.h"

static void test_assignment(void) {
	struct runmetric_set set = {0};
	char *err = NULL;
	ok(runmetric_parse_assignment("latency=12.5ms", &set, &err), "NAME=VALUEUNIT");
	ok(runmetric_parse_assignment("tok/s=-3e-2 tok/s", &set, &err), "a unit after a space");
	ok(runmetric_parse_assignment("deviation=0", &set, &err), "no unit");
	is_int(set.n, 3, "three metrics");
	is_str(set.m[0].unit, "ms", "the unit after the number");
	ok(set.m[0].value == 12.5 && set.m[1].value == -0.03, "the values");
	is_str(set.m[2].unit, "", "no unit reads as none");
	ok(runmetric_parse_assignment("latency=13", &set, &err) && set.n == 3 &&
		   set.m[0].value == 13 && strcmp(set.m[0].unit, "") == 0,
	   "a later value of a name replaces the earlier one");
	static const char *const bad[] = {"latency", "=1",      "x=",       "x=abc",    "x=0x1A",
					  "x=nan",   "x=inf",   "x=1e999",  "x=12 m s", "x=1.2.3",
					  "x=5\x01", "x\x1b=1", "x=1 \xff", "x=-",      "x=1 -ms"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		bool got = runmetric_parse_assignment(bad[i], &set, &err);
		ok(!got && err && *err, bad[i]);
		free(err);
	}
	is_int(set.n, 3, "a refused metric adds nothing");
	runmetric_set_finish(&set);
	for (int i = 0; i < RUNMETRIC_MAX; i++) {
		char text[32];
		snprintf(text, sizeof(text), "m%d=%d", i, i);
		runmetric_parse_assignment(text, &set, &err);
	}
	err = NULL;
	ok(!runmetric_parse_assignment("one_more=1", &set, &err) && err, "at most RUNMETRIC_MAX");
	free(err);
	runmetric_set_finish(&set);
}

static void test_file_lines(void) {
	static const char text[] = "# the benchmark's figures\n"
				   "latency 12.5 ms\r\n"
				   "throughput\t3.25\timg/h\n"
				   "\n"
				   "this is not a metric\n"
				   "quality=0.985\n"
				   "bad nan\n"
				   "latency 13\n"
				   "x 1 2 3\n";
	struct runmetric_set set = {0};
	struct buf errors = {0};
	size_t bad = runmetric_parse_file(text, strlen(text), "M", &set, &errors);
	is_int(bad, 3, "three bad lines");
	ok(strstr(errors.data, "M:5: ") && strstr(errors.data, "M:7: ") &&
		   strstr(errors.data, "M:9: ") && !strstr(errors.data, "M:2:") &&
		   !strstr(errors.data, "M:8:"),
	   "each named by its line number");
	is_int(set.n, 3, "the good lines kept");
	const struct runmetric *m = runmetric_find(&set, "latency");
	ok(m && m->value == 13 && strcmp(m->unit, "") == 0, "a later line replaces an earlier one");
	m = runmetric_find(&set, "throughput");
	ok(m && m->value == 3.25 && strcmp(m->unit, "img/h") == 0, "tabs separate too");
	runmetric_set_finish(&set);
	buf_finish(&errors);

	static const char nul[] = "a 1\nb\0 2\nc 3";
	bad = runmetric_parse_file(nul, sizeof(nul) - 1, "M", &set, &errors);
	ok(bad == 1 && strstr(errors.data, "M:2:") && set.n == 2, "a NUL byte spoils its line");
	runmetric_set_finish(&set);
	buf_finish(&errors);
}

static void test_file_json(void) {
	static const char text[] = "{\"latency\": {\"value\": 12.5, \"unit\": \"ms\"},\n"
				   " \"tok_s\": 31,\n"
				   " \"bad\": \"fast\",\n"
				   " \"odd\": {\"value\": 1, \"when\": 2}}\n";
	struct runmetric_set set = {0};
	struct buf errors = {0};
	size_t bad = runmetric_parse_file(text, strlen(text), "M", &set, &errors);
	ok(bad == 2 && strstr(errors.data, "M:3:") && strstr(errors.data, "M:4:"),
	   "bad members named at their line");
	ok(set.n == 2 && runmetric_find(&set, "tok_s")->value == 31 &&
		   strcmp(runmetric_find(&set, "latency")->unit, "ms") == 0,
	   "the good members kept");
	runmetric_set_finish(&set);
	buf_finish(&errors);
	bad = runmetric_parse_file("{\"a\": 1", 7, "M", &set, &errors);
	ok(bad == 1 && strstr(errors.data, "M:1:") && set.n == 0, "a JSON text cut short");
	runmetric_set_finish(&set);
	buf_finish(&errors);

	// The wire's object written and read back.
	struct runmetric_set out = {0}, back = {0};
	char *err = NULL;
	runmetric_put(&out, "latency", 0.1, "ms", &err);
	runmetric_put(&out, "n", 3, NULL, &err);
	struct buf b = {0};
	struct json j;
	json_init(&j, &b, false);
	runmetric_write_json(&out, &j);
	is_str(b.data,
	       "{\"latency\":{\"value\":0.1,\"unit\":\"ms\"},\"n\":{\"value\":3,\"unit\":null}}",
	       "the wire's object");
	struct jsonread_error e;
	struct jsonread_node *n = jsonread_parse(b.data, b.len, b.len, &e);
	ok(runmetric_read_json(n, &back, &err) && back.n == 2 && back.m[0].value == 0.1,
	   "reads back");
	jsonread_node_free(n);
	runmetric_set_finish(&back);
	runmetric_set_finish(&out);
	buf_finish(&b);
}

static void test_names_and_tags(void) {
	ok(runtag_name_valid("sdxl-image") && runtag_name_valid("ÿ label"), "names");
	ok(!runtag_name_valid("") && !runtag_name_valid("a\nb") && !runtag_name_valid("\x7f") &&
		   !runtag_name_valid("bad \xff utf-8"),
	   "empty, control characters and broken UTF-8 are refused");
	char long_name[RUNTAG_TEXT_MAX + 2];
	memset(long_name, 'x', sizeof(long_name));
	long_name[RUNTAG_TEXT_MAX] = '\0';
	ok(runtag_name_valid(long_name), "RUNTAG_TEXT_MAX bytes");
	long_name[RUNTAG_TEXT_MAX] = 'x';
	long_name[RUNTAG_TEXT_MAX + 1] = '\0';
	ok(!runtag_name_valid(long_name), "one more is refused");

	struct runtag_list want = {0};
	char *err = NULL;
	ok(runtag_parse("start=cold", &want, &err) && runtag_parse("sdk=2.3.2", &want, &err),
	   "KEY=VALUE");
	ok(!runtag_parse("=x", &want, &err) && err, "no key");
	free(err);
	err = NULL;
	ok(!runtag_parse("x", &want, &err) && err, "no value");
	free(err);
	ok(runtag_parse("a=b=c", &want, &err) && strcmp(want.tags[2].value, "b=c") == 0,
	   "the first '=' splits");
	want.n = 2;
	ok(runtag_match("{\"start\":\"cold\",\"sdk\":\"2.3.2\",\"x\":\"y\"}", &want),
	   "a run with every tag matches");
	ok(!runtag_match("{\"start\":\"warm\",\"sdk\":\"2.3.2\"}", &want) &&
		   !runtag_match("{\"start\":\"cold\"}", &want) && !runtag_match(NULL, &want) &&
		   !runtag_match("not json", &want),
	   "another value, a missing tag or no tags do not");
	struct runtag_list none = {0};
	ok(runtag_match(NULL, &none), "no filter matches every run");
	char *v = runtag_value("{\"start\":\"cold\"}", "start");
	is_str(v, "cold", "a tag's value");
	free(v);
	ok(runtag_value("{\"start\":\"cold\"}", "sdk") == NULL, "a tag it has not");
	want.n = 3;
	struct buf b = {0};
	runtag_list_json(&want, &b);
	is_str(b.data, "{\"start\":\"cold\",\"sdk\":\"2.3.2\",\"a\":\"b=c\"}", "as JSON");
	buf_finish(&b);
	runtag_list_finish(&want);
}

int main(void) {
	test_assignment();
	test_file_lines();
	test_file_json();
	test_names_and_tags();
	return test_done();
}
