/*
 * api: request target parsing, bearer tokens, routing, errors naming the parameter, the
 * dashboard's caching rules, and /metrics and /api/v1/latest byte for byte against
 * tests/http/golden/ (THERMLOG_WRITE_GOLDEN=1 rewrites them; review the diff).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "fixture.h"
#include "json.h"
#include "query.h"
#include "runwire.h"
#include "session.h"
#include "src/http/api-internal.h" // the target parser and token compare, private to http/
#include "store.h"
#include "test.h"
#include "web.h"
#include "xalloc.h"

#define NOW 1787000000LL

static struct config cfg;
static struct live *live;

static void setup_config(void) {
	memset(&cfg, 0, sizeof(cfg));
	cfg.interval_ms = 60000;
	cfg.http.listen = "127.0.0.1:9470";
	cfg.http.max_points = 5000;
	cfg.http.max_window_s = 400 * 86400LL;
	cfg.http.connection_limit = 32;
}

static void publish_demo(void) {
	struct channel ch[] = {
		{FIXTURE_SOC_THERMAL, .label = "SoC"},
		{FIXTURE_POLICY4, .label = "A76 cluster 0"},
		{FIXTURE_PWM_FAN, .label = "pwm-fan"},
		{FIXTURE_FAN1, .label = "fan1"},
		{FIXTURE_THERMOCOUPLE, .label = "Thermocouple"},
		// a label that JSON and the exposition format must escape
		{FIXTURE_SARADC2, .label = "12V \"rail\" \\ sense\nsecond line"},
		{FIXTURE_NPU, .label = NULL},
		// an imported channel: none of the board's
		{.key = "import/ratio",
		 .source = "import",
		 .label = "Load",
		 .kind = CHANNEL_KIND_OTHER,
		 .unit = "percent",
		 .resolution = 0.1},
	};
	struct reading rd[] = {
		{.value = 45.123}, {.value = 2256000000.0}, {.value = 2},          {.value = 3120},
		{.err = -EINVAL},  {.value = 1234.5},       {.value = 1000000000}, {.value = 37.5},
	};
	size_t n = sizeof(ch) / sizeof(ch[0]);
	struct cycle cycle = {.ts = NOW, .n = n, .channels = ch, .readings = rd};
	struct live_health health = {.started = NOW - 3600,
				     .interval_ms = 60000,
				     .cycles_total = 60,
				     .cycles_failed = 1,
				     .read_errors_total = 3,
				     .errors_last_hour = 2,
				     .cycle_seconds = 0.0123,
				     .bytes_written_total = 4096000,
				     .clock = CLOCK_STATE_SYNCED};
	live_publish(live, &cycle, &health);
	struct capstate caps[] = {
		{.name = "C12 bulk",
		 .sensor = "iio/maxim_thermocouple/temp",
		 .consumed_fraction = 0.0123,
		 .consumed_total = 0.0345,
		 .remaining_h = 87600,
		 .effective_life_h = 100000,
		 .observed_h = 1234.5},
		{.name = "C7 \"input\"",
		 .sensor = "thermal/soc-thermal",
		 .consumed_fraction = 0,
		 .consumed_total = 0,
		 .remaining_h = NAN,
		 .effective_life_h = NAN,
		 .observed_h = 0},
	};
	live_publish_capacitors(live, caps, 2);
	struct throttle_domain_state throttle[] = {
		{.name = "cpufreq/policy6", .throttled = true, .ms = {1500, 612000}},
		{.name = "devfreq/fb000000.gpu", .throttled = false, .ms = {0, 0}},
	};
	live_publish_throttle(live, throttle, 2);
}

/* Runs one request; the response stays in @resp for inspection. */
static void run(const struct api_context *ctx, const char *method, const char *target,
		struct api_response *resp) {
	struct api_request req = {.method = method, .target = target, .now = NOW};
	api_handle(ctx, &req, resp);
}

static char *read_file(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		return NULL;
	}
	struct buf b;
	buf_init(&b);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf_append(&b, chunk, n);
	}
	fclose(f);
	return buf_steal(&b);
}

static void check_golden(const char *path, const char *got, const char *what) {
	if (getenv("THERMLOG_WRITE_GOLDEN")) {
		FILE *f = fopen(path, "wb");
		if (f) {
			fputs(got, f);
			fclose(f);
		}
	}
	char *want = read_file(path);
	is_str(got, want, what);
	free(want);
}

/* The "error" and "parameter" members of an error body, checked by substring. */
static void is_error(const struct api_response *resp, unsigned status, const char *param,
		     const char *what) {
	char label[256];
	snprintf(label, sizeof(label), "%s: status", what);
	is_int(resp->status, status, label);
	snprintf(label, sizeof(label), "%s: JSON error body", what);
	ok(resp->content_type && strcmp(resp->content_type, "application/json") == 0 &&
		   resp->body.data && strncmp(resp->body.data, "{\"error\":\"", 10) == 0,
	   label);
	if (param) {
		char want[128];
		snprintf(want, sizeof(want), "\"parameter\":\"%s\"", param);
		snprintf(label, sizeof(label), "%s: names parameter %s", what, param);
		ok(resp->body.data && strstr(resp->body.data, want) != NULL, label);
		snprintf(want, sizeof(want), "'%s'", param);
		snprintf(label, sizeof(label), "%s: message names '%s'", what, param);
		ok(resp->body.data && strstr(resp->body.data, want) != NULL, label);
	}
}

static void test_parse_target(void) {
	struct api_target t;
	char *err = NULL;
	ok(api_parse_target("/api/v1/stats?from=-24h&channel=thermal%2Fsoc-thermal&x+y=a+b&flag&e=",
			    &t, &err),
	   "a target parses");
	is_str(t.path, "/api/v1/stats", "path");
	is_int(t.n_params, 5, "five parameters");
	is_str(t.params[0].value, "-24h", "plain value");
	is_str(t.params[1].value, "thermal/soc-thermal", "percent-decoded value");
	is_str(t.params[2].key, "x y", "+ is a space in a key");
	is_str(t.params[2].value, "a b", "+ is a space in a value");
	ok(t.params[3].value == NULL, "?flag has no value");
	is_str(t.params[4].value, "", "?e= has an empty value");
	api_target_finish(&t);

	ok(api_parse_target("/a%2Bb+c?&&k=v&", &t, &err), "empty pieces are skipped");
	is_str(t.path, "/a+b+c", "+ stays + in the path");
	is_int(t.n_params, 1, "one parameter");
	api_target_finish(&t);

	static const struct {
		const char *target, *message;
	} bad[] = {
		{"/x?from=%zz", "bad percent-encoding in parameter 'from'"},
		{"/x?from=%2", "bad percent-encoding in parameter 'from'"},
		{"/x?to=a%00b", "bad percent-encoding in parameter 'to'"},
		{"/x?to=%0a", "bad percent-encoding in parameter 'to'"},
		{"/x%00y", "bad percent-encoding in the URL path"},
		{"/x?=v", "empty query parameter name"},
		{"x", "request target must start with '/'"},
		{"/x y", "request target contains a space or a non-ASCII byte"},
		{"/x?\xc3\xa9=1", "request target contains a space or a non-ASCII byte"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		bool good = api_parse_target(bad[i].target, &t, &err);
		ok(!good, bad[i].target);
		is_str(err, bad[i].message, "message names the part");
		free(err);
		api_target_finish(&t);
	}

	struct buf many;
	buf_init(&many);
	buf_puts(&many, "/x?");
	for (int i = 0; i <= API_PARAMS_MAX; i++) {
		buf_printf(&many, "k%d=1&", i);
	}
	err = NULL;
	ok(!api_parse_target(many.data, &t, &err), "too many parameters are refused");
	is_str(err, "more than 32 query parameters", "count named");
	free(err);
	buf_finish(&many);
}

static void test_token(void) {
	ok(api_token_equal("0123456789abcdef", "0123456789abcdef"), "equal tokens");
	ok(!api_token_equal("0123456789abcdeg", "0123456789abcdef"), "last byte differs");
	ok(!api_token_equal("0123456789abcde", "0123456789abcdef"), "prefix is not equal");
	ok(!api_token_equal("0123456789abcdef0", "0123456789abcdef"), "longer is not equal");
	ok(!api_token_equal("", "0123456789abcdef"), "empty is not equal");
}

static void test_auth(void) {
	struct api_context ctx = {.cfg = &cfg, .live = live, .token = "s3cret-token-0123456789"};
	struct api_response resp;
	struct api_request req = {.method = "GET", .target = "/api/v1/latest", .now = NOW};

	api_handle(&ctx, &req, &resp);
	is_error(&resp, 401, NULL, "no Authorization header");
	ok(resp.authenticate && resp.auth_error == NULL, "WWW-Authenticate without error code");
	api_response_finish(&resp);

	req.authorization = "Bearer s3cret-token-0123456788";
	api_handle(&ctx, &req, &resp);
	is_error(&resp, 401, NULL, "wrong token");
	is_str(resp.auth_error, "invalid_token", "invalid_token error code");
	api_response_finish(&resp);

	req.authorization = "Basic czNjcmV0";
	api_handle(&ctx, &req, &resp);
	is_error(&resp, 401, NULL, "Basic scheme");
	api_response_finish(&resp);

	req.authorization = "bearer s3cret-token-0123456789";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 200, "right token (scheme case-insensitive) is accepted");
	ok(!resp.authenticate, "no challenge on success");
	api_response_finish(&resp);

	// Unknown paths need the token too: nothing is revealed before authentication.
	req.authorization = NULL;
	req.target = "/nonexistent";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 401, "unknown path without a token is 401, not 404");
	api_response_finish(&resp);

	req.target = "/metrics";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 401, "/metrics needs the token by default");
	api_response_finish(&resp);

	cfg.http.metrics_public = true;
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 200, "/metrics is open with http.metrics_public");
	api_response_finish(&resp);
	req.target = "/api/v1/latest";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 401, "metrics_public opens only /metrics");
	api_response_finish(&resp);
	cfg.http.metrics_public = false;
}

/* The dashboard's sign-in: /login before authentication, then the session cookie. */
static void test_login(void) {
	static const unsigned char key[SESSION_KEY_LEN] = {7};
	const char *token = "s3cret-token-0123456789";
	struct api_context ctx = {.cfg = &cfg, .live = live, .token = token, .session_key = key};
	struct api_response resp;
	struct api_request req = {.method = "GET", .target = "/", .now = NOW};

	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 303, "GET / without credentials goes to the sign-in form");
	is_str(resp.location, "login", "... at login, relative to the path");
	ok(!resp.authenticate, "without a Bearer challenge");
	api_response_finish(&resp);
	req.target = "/api/v1/latest";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 401, "the API still answers 401");
	api_response_finish(&resp);

	req.target = "/login";
	api_handle(&ctx, &req, &resp);
	ok(resp.status == 200 && resp.static_body && strstr(resp.content_type, "text/html"),
	   "GET /login: the form, before authentication");
	api_response_finish(&resp);

	req.method = "POST";
	const char *wrong = "token=s3cret-token-0123456788";
	req.body = wrong;
	req.body_len = strlen(wrong);
	api_handle(&ctx, &req, &resp);
	ok(resp.status == 303 && resp.set_cookie == NULL, "a wrong token sets no cookie");
	is_str(resp.location, "login?failed", "and goes back to the form");
	api_response_finish(&resp);

	const char *right = "token=s3cret%2Dtoken-0123456789&remember=on";
	req.body = right;
	req.body_len = strlen(right);
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 303, "the right token (percent-encoded) signs in");
	is_str(resp.location, "./", "and goes to the dashboard");
	char value[SESSION_VALUE_MAX], want[256];
	session_value(key, token, NOW + SESSION_MAX_AGE_S, value);
	snprintf(want, sizeof(want),
		 "thermlog_session=%s; Path=/; Max-Age=604800; HttpOnly; SameSite=Strict", value);
	is_str(resp.set_cookie, want, "the cookie: a session value, HttpOnly, SameSite=Strict");
	api_response_finish(&resp);

	cfg.http.tls_cert = "cert.pem";
	api_handle(&ctx, &req, &resp);
	ok(resp.set_cookie && strstr(resp.set_cookie, "; Secure"), "Secure with TLS");
	api_response_finish(&resp);
	cfg.http.tls_cert = NULL;

	req.body_len = API_LOGIN_MAX + 1;
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 413, "a form over API_LOGIN_MAX: 413");
	api_response_finish(&resp);
	req.body = NULL;
	req.body_len = 0;

	req.method = "GET";
	req.target = "/api/v1/latest";
	char cookie[256];
	snprintf(cookie, sizeof(cookie), "a=b; thermlog_session=%s", value);
	req.cookie = cookie;
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 200, "the session cookie opens the API");
	api_response_finish(&resp);
	req.now = NOW + SESSION_MAX_AGE_S;
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 401, "an expired session does not");
	api_response_finish(&resp);
	req.now = NOW;
	req.authorization = "Bearer wrong-token-0123456789";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 401, "a wrong Authorization header decides even with a good cookie");
	api_response_finish(&resp);
	req.authorization = NULL;
	ctx.token = "another-token-0123456789";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 401, "a new token ends the session");
	api_response_finish(&resp);

	struct api_context open = {.cfg = &cfg, .live = live};
	req.target = "/login";
	api_handle(&open, &req, &resp);
	ok(resp.status == 303 && strcmp(resp.location, "./") == 0,
	   "without a token /login goes to the dashboard");
	api_response_finish(&resp);
}

static void test_routing(void) {
	struct api_context ctx = {.cfg = &cfg, .live = live};
	struct api_response resp;

	// A run id path of exactly 64 bytes before "/samples" (found by fuzz-query): no overflow
	// of the 64-byte id buffer, just no such path.
	char long_id[128];
	snprintf(long_id, sizeof(long_id), "/api/v1/runs/%051d/samples", 7);
	run(&ctx, "GET", long_id, &resp);
	is_int(resp.status, 404, "a 64-byte run path before /samples is no path");
	api_response_finish(&resp);

	run(&ctx, "GET", "/api/v1/nope", &resp);
	is_error(&resp, 404, NULL, "unknown API path");
	is_str(resp.body.data, "{\"error\":\"no such path: /api/v1/nope\"}\n", "404 body");
	api_response_finish(&resp);

	run(&ctx, "POST", "/api/v1/latest", &resp);
	is_error(&resp, 405, NULL, "POST");
	is_str(resp.allow, "GET, HEAD", "Allow header");
	api_response_finish(&resp);

	run(&ctx, "DELETE", "/", &resp);
	is_int(resp.status, 405, "DELETE on the dashboard");
	api_response_finish(&resp);

	run(&ctx, "HEAD", "/api/v1/latest", &resp);
	is_int(resp.status, 200, "HEAD is allowed");
	api_response_finish(&resp);

	run(&ctx, "GET", "/api/v1/latest?verbose=1", &resp);
	is_error(&resp, 400, "verbose", "unknown parameter");
	api_response_finish(&resp);

	run(&ctx, "GET", "/api/v1/latest?x", &resp);
	is_error(&resp, 400, "x", "unknown parameter without a value");
	api_response_finish(&resp);

	// A Prometheus job's params: /metrics ignores parameters it does not know.
	run(&ctx, "GET", "/metrics?x", &resp);
	is_int(resp.status, 200, "/metrics?x: 200");
	api_response_finish(&resp);
	run(&ctx, "GET", "/metrics?job=a&x=1", &resp);
	is_int(resp.status, 200, "/metrics?job=a&x=1: 200");
	api_response_finish(&resp);

	run(&ctx, "GET", "/api/v1/latest?x=%zz", &resp);
	is_error(&resp, 400, NULL, "broken escape");
	ok(strstr(resp.body.data, "parameter 'x'") != NULL, "broken escape names the parameter");
	api_response_finish(&resp);

	struct buf big;
	buf_init(&big);
	buf_puts(&big, "/api/v1/latest?");
	while (big.len <= API_TARGET_MAX) {
		buf_puts(&big, "aaaaaaaaaa");
	}
	run(&ctx, "GET", big.data, &resp);
	is_error(&resp, 414, NULL, "overlong target");
	api_response_finish(&resp);
	buf_finish(&big);

	// Database endpoints without a database connection answer 503, not a crash.
	run(&ctx, "GET", "/api/v1/stats", &resp);
	is_error(&resp, 503, NULL, "stats without a database");
	api_response_finish(&resp);

	run(&ctx, "GET", "/api/v1/report?format=md", &resp);
	is_error(&resp, 503, NULL, "report without a database");
	api_response_finish(&resp);
	ok(api_target_cost("/api/v1/report?lifetime=1") == API_COST_HEAVY,
	   "the report is a heavy request");

	run(&ctx, "GET", "/api/v1/status", &resp);
	is_int(resp.status, 200, "status works without a database");
	ok(strstr(resp.body.data, "\"database\": null") != NULL, "status says database null");
	ok(strstr(resp.body.data, "\"uptime_s\": 3600") != NULL, "status uptime");
	ok(strstr(resp.body.data, "\"last_cycle\": \"2026-08-17T") != NULL, "status last cycle");
	ok(strstr(resp.body.data, "\"clock_synchronized\": true") != NULL, "status clock");
	ok(strstr(resp.body.data, "\"errors_last_hour\": 2") != NULL, "status errors last hour");
	api_response_finish(&resp);
}

static void test_golden(void) {
	struct api_context ctx = {.cfg = &cfg, .live = live};
	struct api_response resp;

	run(&ctx, "GET", "/metrics", &resp);
	is_int(resp.status, 200, "/metrics 200");
	is_str(resp.content_type, "text/plain; version=0.0.4; charset=utf-8", "exposition type");
	check_golden("http/golden/metrics.txt", resp.body.data, "/metrics matches the golden file");
	ok(strstr(resp.body.data, "maxim_thermocouple/temp\",label=\"Thermocouple\"") == NULL ||
		   strstr(resp.body.data, "thermlog_temperature_celsius{key=\"iio/maxim") == NULL,
	   "a failed reading has no value sample");
	ok(strstr(resp.body.data, "label=\"12V \\\"rail\\\" \\\\ sense\\nsecond line\"") != NULL,
	   "label value escaped");
	ok(strstr(resp.body.data, "thermlog_voltage_volts{key=\"iio/fec10000.saradc/voltage2\"") !=
			   NULL &&
		   strstr(resp.body.data, "} 1.2345\n") != NULL,
	   "millivolts exported as volts");
	api_response_finish(&resp);

	run(&ctx, "GET", "/api/v1/latest", &resp);
	is_int(resp.status, 200, "/api/v1/latest 200");
	check_golden("http/golden/latest.json", resp.body.data,
		     "/api/v1/latest matches the golden file");
	api_response_finish(&resp);

	struct live *empty = live_create();
	struct api_context ectx = {.cfg = &cfg, .live = empty};
	run(&ectx, "GET", "/metrics", &resp);
	ok(strstr(resp.body.data, "thermlog_temperature_celsius") == NULL,
	   "no cycle yet: no channel samples");
	ok(strstr(resp.body.data, "thermlog_up 1\n") != NULL, "no cycle yet: still up");
	api_response_finish(&resp);
	run(&ectx, "GET", "/api/v1/latest", &resp);
	ok(strstr(resp.body.data, "\"ts\": null") != NULL, "no cycle yet: ts null");
	api_response_finish(&resp);
	live_destroy(empty);
}

static void test_assets(void) {
	struct api_context ctx = {.cfg = &cfg, .live = live};
	const struct web_asset *index = web_asset_find("/");
	if (!ok(index != NULL, "the dashboard has an index")) {
		return;
	}
	struct api_response resp;
	struct api_request req = {.method = "GET", .target = "/", .now = NOW};
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 200, "GET /");
	is_str(resp.content_type, index->content_type, "index content type");
	ok(resp.static_body == index->data && resp.static_len == index->len, "identity body");
	is_str(resp.etag, index->etag, "ETag");
	is_str(resp.cache_control, "no-cache", "revalidate with the ETag");
	ok(resp.content_encoding == NULL, "no gzip unless asked");
	api_response_finish(&resp);

	req.if_none_match = index->etag;
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 304, "If-None-Match with the ETag is 304");
	ok(resp.body.len == 0 && resp.static_body == NULL, "304 has no body");
	api_response_finish(&resp);

	req.if_none_match = "\"other\", W/\"x\"";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 200, "another ETag is 200");
	api_response_finish(&resp);

	req.if_none_match = NULL;
	req.accept_encoding = "br, gzip;q=0.8";
	api_handle(&ctx, &req, &resp);
	if (index->gz) {
		is_str(resp.content_encoding, "gzip", "gzip when accepted");
		ok(resp.static_body == index->gz && resp.static_len == index->gz_len, "gzip body");
		ok(strcmp(resp.etag, index->etag) != 0, "the gzip variant has its own ETag");
		ok(resp.vary_accept_encoding, "Vary: Accept-Encoding");
		char etag[96];
		snprintf(etag, sizeof(etag), "%s", resp.etag);
		api_response_finish(&resp);
		req.if_none_match = etag;
		api_handle(&ctx, &req, &resp);
		is_int(resp.status, 304, "the gzip ETag revalidates");
		req.if_none_match = NULL;
	}
	api_response_finish(&resp);

	static const char *refuse[] = {"gzip;q=0", "identity", "*;q=0", "gzip; q=0.0, *"};
	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		req.accept_encoding = refuse[i];
		api_handle(&ctx, &req, &resp);
		ok(resp.content_encoding == NULL, refuse[i]);
		api_response_finish(&resp);
	}
	req.accept_encoding = "*";
	api_handle(&ctx, &req, &resp);
	ok(!index->gz || resp.content_encoding != NULL, "* accepts gzip");
	api_response_finish(&resp);

	size_t n;
	const struct web_asset *all = web_assets(&n);
	for (size_t i = 0; i < n; i++) {
		req.target = all[i].path;
		req.accept_encoding = NULL;
		api_handle(&ctx, &req, &resp);
		ok(resp.status == 200 && strcmp(resp.content_type, all[i].content_type) == 0,
		   all[i].path);
		api_response_finish(&resp);
	}
	req.target = "/nope.js";
	api_handle(&ctx, &req, &resp);
	is_int(resp.status, 404, "unknown asset 404");
	api_response_finish(&resp);
}

/* The run endpoints' collaborator: records what the API hands over, answers like the daemon. */
struct runs_seen {
	struct runwire_start start;
	char label[64], tags[256], argv[256];
	struct runwire_stop stop;
	char error[600]; // the stop's error, copied ("(null)" for none)
	int64_t stop_id;
	int calls;
};

static int seen_start(void *ctx, const struct runwire_start *run, int64_t *id, char **err) {
	struct runs_seen *s = ctx;
	(void)err;
	s->calls++;
	s->start = *run;
	snprintf(s->label, sizeof(s->label), "%s", run->label);
	snprintf(s->tags, sizeof(s->tags), "%s", run->tags);
	snprintf(s->argv, sizeof(s->argv), "%s", run->argv ? run->argv : "(null)");
	*id = 42;
	return 0;
}

static int seen_stop(void *ctx, int64_t id, const struct runwire_stop *stop, struct buf *out,
		     char **err) {
	struct runs_seen *s = ctx;
	s->calls++;
	s->stop = *stop;
	snprintf(s->error, sizeof(s->error), "%s", stop->error ? stop->error : "(null)");
	s->stop.error = NULL; // borrowed from the request: gone when it returns
	s->stop_id = id;
	if (id != 42) {
		*err = xstrdup("run 7 is not running");
		return -ENOENT;
	}
	buf_puts(out, "{\"id\":42}");
	return 0;
}

static void post(const struct api_context *ctx, const char *target, const char *body,
		 const char *auth, struct api_response *resp) {
	struct api_request req = {.method = "POST",
				  .target = target,
				  .body = body,
				  .body_len = body ? strlen(body) : 0,
				  .authorization = auth,
				  .peer_pid = 4242,
				  .now = NOW};
	api_handle(ctx, &req, resp);
}

static void test_runs_post(void) {
	struct runs_seen seen = {0};
	struct api_runs runs = {.start = seen_start, .stop = seen_stop, .ctx = &seen};
	struct api_context tcp = {.cfg = &cfg, .live = live, .runs = &runs};
	struct api_response resp;

	post(&tcp, "/api/v1/runs", "{\"label\":\"x\"}", NULL, &resp);
	is_int(resp.status, 403, "TCP without a token: never anonymous");
	api_response_finish(&resp);
	tcp.token = "s3cret-token-0123456789";
	tcp.session_key = (const unsigned char *)"0123456789abcdef0123456789abcdef";
	post(&tcp, "/api/v1/runs", "{\"label\":\"x\"}", NULL, &resp);
	is_int(resp.status, 401, "TCP with a token configured: the header is needed");
	api_response_finish(&resp);
	post(&tcp, "/api/v1/runs", "{\"label\":\"x\", \"pid\": 99}",
	     "Bearer s3cret-token-0123456789", &resp);
	is_int(resp.status, 201, "TCP with the bearer token: created");
	is_str(resp.body.data, "{\"id\":42}\n", "the new id");
	is_int(seen.start.pid, 99, "the body's pid");
	api_response_finish(&resp);

	struct api_context local = {.cfg = &cfg,
				    .live = live,
				    .runs = &runs,
				    .local = true,
				    .token = "s3cret-token-0123456789"};
	post(&local, "/api/v1/runs",
	     "{\"tags\":{\"model\":\"v1\",\"n\":3},\"argv\":[\"/usr/bin/python3\",\"gen.py\"]}",
	     NULL, &resp);
	is_int(resp.status, 201, "the Unix socket needs no token");
	is_str(seen.label, "python3", "the label defaults to argv[0]'s base name");
	is_str(seen.tags, "{\"model\":\"v1\",\"n\":\"3\"}", "tags as an object of strings");
	is_str(seen.argv, "[\"/usr/bin/python3\",\"gen.py\"]", "argv as a JSON array");
	is_int(seen.start.pid, 4242, "no pid in the body: the caller's (SO_PEERCRED)");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs", "{\"label\":\"o\",\"pid\":null}", NULL, &resp);
	is_int(seen.start.pid, 0, "pid null: nothing watched");
	api_response_finish(&resp);

	int before = seen.calls;
	post(&local, "/api/v1/runs", "{\"label\":\"x\",\"lable\":1}", NULL, &resp);
	is_error(&resp, 400, NULL, "an unknown key is named");
	ok(strstr(resp.body.data, "unknown key 'lable'") != NULL, "by name");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs", "{\"label\": \"x\"", NULL, &resp);
	is_error(&resp, 400, NULL, "broken JSON");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs", "{}", NULL, &resp);
	is_error(&resp, 400, NULL, "no label, argv or exe");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs", "{\"label\":\"x\",\"pid\":-3}", NULL, &resp);
	is_error(&resp, 400, NULL, "a negative pid");
	api_response_finish(&resp);
	is_int(seen.calls, before, "bad bodies never reach the daemon");

	// JSON as Python's json.dumps writes it: surrogate pairs for characters beyond the BMP.
	post(&local, "/api/v1/runs",
	     "{\"label\": \"fire \\ud83d\\udd25\", \"tags\": {\"k\": \"\\u00e9\"}}", NULL, &resp);
	is_int(resp.status, 201, "a surrogate pair escape is JSON");
	is_str(seen.label, "fire \xf0\x9f\x94\xa5", "decoded to UTF-8");
	is_str(seen.tags, "{\"k\":\"\xc3\xa9\"}", "in tags too");
	api_response_finish(&resp);
	before = seen.calls;
	static const struct {
		const char *body, *want;
	} bad[] = {
		{"{\"label\":\"x\",\"label\":\"y\"}",
		 "{\"error\":\"body:1:14: duplicate key 'label'\"}\n"},
		{"{\"label\": &a \"x\"}", "{\"error\":\"body:1:11: expected a value, got '&'\"}\n"},
		{"{label: x}", "{\"error\":\"body:1:2: expected a string key\"}\n"},
		{"{\"label\":\"x\"} {}",
		 "{\"error\":\"body:1:15: trailing text after the value: '{'\"}\n"},
		{"{\"label\":\"\\ud83d\"}",
		 "{\"error\":\"body:1:11: lone high surrogate \\\\ud83d in a string\"}\n"},
		{"[1]", "{\"error\":\"body:1:1: expected a JSON object, got an array\"}\n"},
		{"{\"label\":\"a\\u001b]0;pwned\\u0007\"}",
		 "{\"error\":\"label: expected 1 to 200 characters, no control characters\"}\n"},
		{"{\"label\":\"a\\nb\"}",
		 "{\"error\":\"label: expected 1 to 200 characters, no control characters\"}\n"},
		{"{\"label\":\"a\\rb\"}",
		 "{\"error\":\"label: expected 1 to 200 characters, no control characters\"}\n"},
		{"{\"label\":\"x\",\"tags\":{\"k\":\"a\\u001bb\"}}",
		 "{\"error\":\"tags: 'k': expected 1 to 200 characters, no control characters\"}\n"},
		{"{\"label\":\"x\",\"tags\":{\"a\\tb\":\"v\"}}",
		 "{\"error\":\"tags: a key: expected 1 to 200 characters, no control characters\"}\n"},
		{"{\"label\":\"x\",\"a\\u001b[2Jb\":1}",
		 "{\"error\":\"body: unknown key 'a\\\\x1b[2Jb' "
		 "(allowed: label, tags, pid, argv, exe, exe_sha256, request_id)\"}\n"},
		{"{\"label\":\"x\",\"tags\":{\"k\":null}}",
		 "{\"error\":\"tags: expected an object of strings\"}\n"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		post(&local, "/api/v1/runs", bad[i].body, NULL, &resp);
		is_int(resp.status, 400, bad[i].body);
		is_str(resp.body.data, bad[i].want, bad[i].body);
		api_response_finish(&resp);
	}
	is_int(seen.calls, before, "bodies that are not strict JSON never reach the daemon");

	post(&local, "/api/v1/runs/42/stop", "{\"exit_code\":3,\"rss_max_bytes\":1048576}", NULL,
	     &resp);
	is_int(resp.status, 200, "stop: 200 with the summary");
	ok(seen.stop.has_exit_code && seen.stop.exit_code == 3 && !seen.stop.has_signal &&
		   seen.stop.rss_max_bytes == 1048576 && seen.stop_id == 42,
	   "exit code and peak RSS handed over");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs/7/stop", "{\"signal\":15}", NULL, &resp);
	is_error(&resp, 404, NULL, "stop of a run that is not running");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs/42/stop", "{}", NULL, &resp);
	is_error(&resp, 400, NULL, "a stop must say how the run ended");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs/42/stop", "{\"status\":\"lost\"}", NULL, &resp);
	is_error(&resp, 400, NULL, "lost is the daemon's verdict, not the caller's");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs/x/stop", "{\"status\":\"ok\"}", NULL, &resp);
	is_error(&resp, 404, NULL, "a bad run id in the path");
	api_response_finish(&resp);
	// routes[] gives each path its methods and its {id}: a run id is a positive decimal
	static const char *const not_ids[] = {
		"/api/v1/runs/0/stop",   "/api/v1/runs/042/stop",
		"/api/v1/runs/+42/stop", "/api/v1/runs/1234567890123456789/stop",
		"/api/v1/runs/42/stop/", "/api/v1/runs/42/stopped"};
	for (size_t i = 0; i < sizeof(not_ids) / sizeof(not_ids[0]); i++) {
		post(&local, not_ids[i], "{\"status\":\"ok\"}", NULL, &resp);
		is_int(resp.status, 404, not_ids[i]);
		api_response_finish(&resp);
	}
	run(&local, "GET", "/api/v1/runs/42/stop", &resp);
	is_error(&resp, 405, NULL, "GET on a stop");
	is_str(resp.allow, "POST", "a stop takes POST only");
	ok(strstr(resp.body.data, "not allowed on /api/v1/runs/42/stop (POST)") != NULL,
	   "the 405 names the path and its method");
	api_response_finish(&resp);
	run(&local, "PUT", "/api/v1/runs", &resp);
	is_error(&resp, 405, NULL, "PUT on the runs");
	is_str(resp.allow, "GET, HEAD, POST", "the runs take GET, HEAD and POST");
	api_response_finish(&resp);
	post(&local, "/api/v1/nope", "{}", NULL, &resp);
	is_error(&resp, 404, NULL, "a POST to an API path no route has");
	api_response_finish(&resp);
	struct api_context none = {.cfg = &cfg, .live = live, .local = true};
	post(&none, "/api/v1/runs", "{\"label\":\"x\"}", NULL, &resp);
	is_error(&resp, 503, NULL, "a server that records no runs");
	api_response_finish(&resp);
}

/* The percentile and body-key checks shared by several endpoints: their exact messages. */
static void test_shared_checks(void) {
	struct store *store = NULL;
	if (!ok(store_open(&store, ":memory:", STORE_MODE_WRITE) == 0, "an empty store")) {
		return;
	}
	struct api_context ctx = {.cfg = &cfg, .live = live, .store = store};
	struct api_response resp;
	static const struct {
		const char *target, *body;
	} cases[] = {
		{"/api/v1/stats?percentile=101",
		 "{\"error\":\"parameter 'percentile' must be a number from 0 to 100, not '101'\",\"parameter\":\"percentile\"}\n"},
		{"/api/v1/stats?percentile=nan",
		 "{\"error\":\"parameter 'percentile' must be a number from 0 to 100, not 'nan'\",\"parameter\":\"percentile\"}\n"},
		{"/api/v1/stats?percentile=1&percentile=2&percentile=3&percentile=4&percentile=5&"
		 "percentile=6&percentile=7&percentile=8&percentile=9&percentile=10&percentile=11&"
		 "percentile=12&percentile=13&percentile=14&percentile=15&percentile=16&percentile=17",
		 "{\"error\":\"more than 16 'percentile' parameters\",\"parameter\":\"percentile\"}\n"},
		{"/api/v1/stats?weight=both",
		 "{\"error\":\"parameter 'weight' must be 'samples' or 'time', not 'both'\",\"parameter\":\"weight\"}\n"},
		{"/api/v1/runs/stats?percentile=-1",
		 "{\"error\":\"parameter 'percentile' must be a number from 0 to 100, not '-1'\",\"parameter\":\"percentile\"}\n"},
		{"/api/v1/runs/stats?percentile=50x",
		 "{\"error\":\"parameter 'percentile' must be a number from 0 to 100, not '50x'\",\"parameter\":\"percentile\"}\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run(&ctx, "GET", cases[i].target, &resp);
		is_int(resp.status, 400, cases[i].target);
		is_str(resp.body.data, cases[i].body, cases[i].target);
		api_response_finish(&resp);
	}
	store_close(store);

	struct runs_seen seen = {0};
	struct api_runs runs = {.start = seen_start, .stop = seen_stop, .ctx = &seen};
	struct api_context local = {.cfg = &cfg, .live = live, .runs = &runs, .local = true};
	post(&local, "/api/v1/runs", "{\"label\":\"x\",\"lable\":1}", NULL, &resp);
	is_str(resp.body.data,
	       "{\"error\":\"body: unknown key 'lable' (allowed: label, tags, pid, argv, exe, exe_sha256, request_id)\"}\n",
	       "start: the unknown key and the allowed ones");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs/42/stop", "{\"status\":\"ok\",\"rss\":1}", NULL, &resp);
	is_str(resp.body.data,
	       "{\"error\":\"body: unknown key 'rss' (allowed: status, exit_code, signal, rss_max_bytes, error, metrics)\"}\n",
	       "stop: the unknown key and the allowed ones");
	api_response_finish(&resp);

	// A stop's error: null or a text of 1..500 bytes without control characters.
	post(&local, "/api/v1/runs/42/stop",
	     "{\"status\":\"failed\",\"exit_code\":127,\"error\":\"/x: No such file\"}", NULL,
	     &resp);
	is_int(resp.status, 200, "stop with an error");
	is_str(seen.error, "/x: No such file", "the error reaches the daemon");
	api_response_finish(&resp);
	post(&local, "/api/v1/runs/42/stop", "{\"exit_code\":1,\"error\":null}", NULL, &resp);
	is_int(resp.status, 200, "error null");
	is_str(seen.error, "(null)", "is none");
	api_response_finish(&resp);
	char long_error[600];
	snprintf(long_error, sizeof(long_error), "{\"exit_code\":1,\"error\":\"%0501d\"}", 0);
	const char *const bad_errors[] = {
		"{\"exit_code\":1,\"error\":5}",
		"{\"exit_code\":1,\"error\":\"\"}",
		"{\"exit_code\":1,\"error\":\"a\\nb\"}",
		"{\"exit_code\":1,\"error\":\"a\\u001b[2J\"}",
		long_error,
	};
	int before = seen.calls;
	for (size_t i = 0; i < sizeof(bad_errors) / sizeof(bad_errors[0]); i++) {
		post(&local, "/api/v1/runs/42/stop", bad_errors[i], NULL, &resp);
		is_error(&resp, 400, NULL, bad_errors[i]);
		ok(strstr(resp.body.data, "\"error: expected null or a text of 1..500 bytes") !=
			   NULL,
		   "the 400 names error");
		api_response_finish(&resp);
	}
	is_int(seen.calls, before, "a bad error never reaches the daemon");
}

int main(void) {
	setup_config();
	live = live_create();
	publish_demo();
	test_parse_target();
	test_token();
	test_auth();
	test_login();
	test_routing();
	test_golden();
	test_assets();
	test_runs_post();
	test_shared_checks();
	live_destroy(live);
	return test_done();
}
