/* runwire: a start and a stop written as thermlog run writes them read back the same; every
 * bad member is refused with a message naming it. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jsonread.h"
#include "runwire.h"
#include "test.h"

static struct jsonread_node *parse(const char *text) {
	struct jsonread_error err;
	return jsonread_parse(text, strlen(text), JSONREAD_MAX_LEN, &err);
}

/* Reads @body as a start; NULL when accepted, else the message (caller frees). */
static char *start_refusal(const char *body) {
	struct jsonread_node *root = parse(body);
	struct runwire_start_read in;
	char *msg = NULL;
	if (!root) {
		return strdup("not JSON");
	}
	bool good = runwire_start_read(root, &in, &msg);
	runwire_start_read_finish(&in);
	jsonread_node_free(root);
	return good ? NULL : msg;
}

static char *stop_refusal(const char *body) {
	struct jsonread_node *root = parse(body);
	struct runwire_stop stop;
	char *msg = NULL;
	if (!root) {
		return strdup("not JSON");
	}
	bool good = runwire_stop_read(root, &stop, &msg);
	runwire_stop_finish(&stop);
	jsonread_node_free(root);
	return good ? NULL : msg;
}

static void refused_naming(char *msg, const char *want, const char *what) {
	ok(msg && strstr(msg, want), what);
	if (msg && !strstr(msg, want)) {
		printf("# got: %s\n", msg);
	}
	free(msg);
}

static void test_start_round_trip(void) {
	char *argv[] = {"/usr/bin/python3", "gen.py", "--steps", "30", "a \"quoted\" arg"};
	struct buf args = {0}, body = {0};
	runwire_argv(&args, argv, 5);
	struct runwire_start s = {
		.tags = "{\"model\":\"sdxl\",\"steps\":\"30\"}",
		.argv = args.data,
		.exe = "/usr/bin/python3.11",
		.exe_sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF",
		.request_id = "f00d.1_a-2",
	};
	runwire_start_write(&s, &body);
	struct jsonread_node *root = parse(body.data);
	struct runwire_start_read in;
	char *msg = NULL;
	ok(root && runwire_start_read(root, &in, &msg), "a written start reads back");
	is_str(in.s.label, "python3", "no label: argv[0]'s base name");
	is_str(in.s.tags, s.tags, "tags as written");
	is_str(in.s.argv, args.data, "argv as written");
	is_str(in.s.exe, s.exe, "exe");
	is_str(in.s.exe_sha256, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	       "the digest in lowercase");
	is_str(in.s.request_id, "f00d.1_a-2", "request_id");
	ok(!in.s.has_pid, "no pid member: the caller is watched");
	runwire_start_read_finish(&in);
	jsonread_node_free(root);
	buf_finish(&body);
	buf_finish(&args);

	struct runwire_start given = {.label = "rerank", .has_pid = true, .pid = 4242};
	runwire_start_write(&given, &body);
	root = parse(body.data);
	ok(root && runwire_start_read(root, &in, &msg), "a start with a pid reads back");
	ok(in.s.has_pid && in.s.pid == 4242, "the pid given");
	is_str(in.s.tags, "{}", "no tags: an empty object");
	ok(in.s.argv == NULL, "no argv");
	runwire_start_read_finish(&in);
	jsonread_node_free(root);
	buf_clear(&body);

	struct runwire_start none = {.label = "batch", .has_pid = true, .pid = 0};
	runwire_start_write(&none, &body);
	is_str(body.data, "{\"label\":\"batch\",\"tags\":{},\"pid\":null}",
	       "pid 0 is written null");
	root = parse(body.data);
	ok(root && runwire_start_read(root, &in, &msg) && in.s.has_pid && in.s.pid == 0,
	   "\"pid\": null reads as watching nothing");
	runwire_start_read_finish(&in);
	jsonread_node_free(root);
	buf_finish(&body);

	root = parse("{\"exe\": \"/opt/sd/bin/sdxl-run\", \"tags\": {\"n\": 3, \"hot\": true}}");
	ok(root && runwire_start_read(root, &in, &msg), "exe alone");
	is_str(in.s.label, "sdxl-run", "no label or argv: exe's base name");
	is_str(in.s.tags, "{\"n\":\"3\",\"hot\":\"true\"}", "numbers and booleans as their text");
	runwire_start_read_finish(&in);
	jsonread_node_free(root);
}

static void test_start_refusals(void) {
	refused_naming(start_refusal("{\"label\": \"a\", \"colour\": 1}"),
		       "unknown key 'colour' (allowed: label, tags", "an unknown key is named");
	refused_naming(start_refusal("{}"), "label: required", "no label, argv or exe");
	refused_naming(start_refusal("{\"label\": 7}"), "label: expected a string",
		       "a label that is no string");
	refused_naming(start_refusal("{\"label\": \"a\\u0001b\"}"), "label: expected",
		       "a control character in a label");
	refused_naming(start_refusal("{\"label\": \"a\", \"tags\": [\"x\"]}"),
		       "tags: expected an object", "tags that are no object");
	refused_naming(start_refusal("{\"label\": \"a\", \"tags\": {\"k\": {}}}"),
		       "tags: expected an object of strings", "a tag whose value is an object");
	refused_naming(start_refusal("{\"label\": \"a\", \"argv\": [\"x\", 1]}"),
		       "argv: expected an array of strings", "argv with a number");
	refused_naming(start_refusal("{\"label\": \"a\", \"exe\": \"\"}"), "exe: expected a path",
		       "an empty exe");
	refused_naming(start_refusal("{\"label\": \"a\", \"exe_sha256\": \"abc\"}"),
		       "exe_sha256: expected 64 hexadecimal digits", "a short digest");
	refused_naming(start_refusal("{\"label\": \"a\", \"request_id\": \"no spaces\"}"),
		       "request_id: expected 1 to 64", "a request_id with a space");
	refused_naming(start_refusal("{\"label\": \"a\", \"pid\": 0}"),
		       "pid: expected a process id", "pid 0");
	refused_naming(start_refusal("{\"label\": \"a\", \"pid\": 1.5}"),
		       "pid: expected a process id", "a fractional pid");
	refused_naming(start_refusal("{\"argv\": [\"/x/\\u0007\"]}"),
		       "label: the name taken from argv or exe",
		       "a derived label that is not valid");
	ok(start_refusal("{\"label\": \"a\", \"pid\": 2147483647}") == NULL, "the largest pid");
}

static void test_stop(void) {
	struct runwire_stop s = {.has_status = true,
				 .status = RUN_STATUS_TIMEOUT,
				 .has_signal = true,
				 .signal = 15,
				 .rss_max_bytes = 123456789012,
				 .error = "gen.py: killed after 30m"};
	struct buf body = {0};
	runwire_stop_write(&s, &body);
	is_str(body.data,
	       "{\"status\":\"timeout\",\"signal\":15,\"rss_max_bytes\":123456789012,"
	       "\"error\":\"gen.py: killed after 30m\"}",
	       "a stop as written");
	struct jsonread_node *root = parse(body.data);
	struct runwire_stop back;
	char *msg = NULL;
	ok(root && runwire_stop_read(root, &back, &msg), "reads back");
	ok(back.has_status && back.status == RUN_STATUS_TIMEOUT && back.has_signal &&
		   back.signal == 15 && !back.has_exit_code && back.rss_max_bytes == 123456789012,
	   "every member as written");
	is_str(back.error, s.error, "the error text");
	jsonread_node_free(root);
	buf_clear(&body);

	struct runwire_stop code = {.has_exit_code = true, .exit_code = 0, .rss_max_bytes = -1};
	runwire_stop_write(&code, &body);
	is_str(body.data, "{\"exit_code\":0}", "no rss: left out");
	buf_finish(&body);

	refused_naming(stop_refusal("{}"), "needs status, exit_code or signal", "an empty stop");
	refused_naming(stop_refusal("{\"status\": \"lost\"}"), "status: expected \"ok\"",
		       "lost is not a status a client gives");
	refused_naming(stop_refusal("{\"status\": \"running\"}"), "status: expected",
		       "running is no end");
	refused_naming(stop_refusal("{\"exit_code\": 256}"),
		       "exit_code: expected an integer 0..255", "exit code out of range");
	refused_naming(stop_refusal("{\"signal\": 0}"), "signal: expected a signal number",
		       "signal 0");
	refused_naming(stop_refusal("{\"exit_code\": 1, \"rss_max_bytes\": -1}"),
		       "rss_max_bytes: expected a non-negative integer", "negative rss");
	refused_naming(stop_refusal("{\"exit_code\": 1, \"error\": \"a\\nb\"}"),
		       "error: expected null or a text", "a line feed in an error");
	refused_naming(stop_refusal("{\"exit_code\": 1, \"why\": 1}"), "unknown key 'why'",
		       "an unknown key");
	ok(stop_refusal("{\"exit_code\": null, \"signal\": 9, \"error\": null}") == NULL,
	   "null members are absent");
	runwire_stop_finish(&back);
}

/* A run's metrics: with a stop, and alone (POST /api/v1/runs/{id}/metrics). */
static void test_metrics(void) {
	struct runwire_stop s = {.has_exit_code = true, .exit_code = 0, .rss_max_bytes = -1};
	char *msg = NULL;
	runmetric_put(&s.metrics, "latency", 12.5, "ms", &msg);
	struct buf body = {0};
	runwire_stop_write(&s, &body);
	is_str(body.data,
	       "{\"exit_code\":0,\"metrics\":{\"latency\":{\"value\":12.5,\"unit\":\"ms\"}}}",
	       "a stop with its metrics");
	struct jsonread_node *root = parse(body.data);
	struct runwire_stop back;
	ok(runwire_stop_read(root, &back, &msg) && back.metrics.n == 1 &&
		   back.metrics.m[0].value == 12.5,
	   "read back with them");
	runwire_stop_finish(&back);
	jsonread_node_free(root);
	buf_clear(&body);
	runwire_metrics_write(&s.metrics, &body);
	is_str(body.data, "{\"metrics\":{\"latency\":{\"value\":12.5,\"unit\":\"ms\"}}}",
	       "a metrics request");
	root = parse(body.data);
	struct runmetric_set set;
	ok(runwire_metrics_read(root, &set, &msg) && set.n == 1, "reads back");
	runmetric_set_finish(&set);
	jsonread_node_free(root);
	buf_finish(&body);
	runmetric_set_finish(&s.metrics);
	refused_naming(stop_refusal("{\"exit_code\": 0, \"metrics\": {\"x\": \"fast\"}}"),
		       "metric 'x': expected a number", "a metric that is no number");
	refused_naming(stop_refusal("{\"exit_code\": 0, \"metrics\": [1]}"),
		       "metrics: expected an object", "metrics not an object");
	static const char *const bad[][2] = {
		{"{}", "metrics: required"},
		{"{\"metrics\": {}}", "name at least one"},
		{"{\"metrics\": {\"x\": {\"value\": 1, \"unit\": \"1ms\"}}}", "the unit"},
		{"{\"metrics\": {\"x\": 1}, \"more\": 2}", "unknown key 'more'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		root = parse(bad[i][0]);
		msg = NULL;
		bool got = runwire_metrics_read(root, &set, &msg);
		refused_naming(got ? NULL : msg, bad[i][1], bad[i][0]);
		runmetric_set_finish(&set);
		jsonread_node_free(root);
	}
}

int main(void) {
	test_start_round_trip();
	test_start_refusals();
	test_stop();
	test_metrics();
	return test_done();
}
