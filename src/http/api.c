/*
 * The HTTP API as a function: request target parsing and validation, bearer-token checks,
 * routing, JSON endpoints, /metrics and the embedded dashboard. Read-only by construction:
 * the store connection it gets is opened read-only and no handler writes.
 */
#include "api.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"
#include "jobcsv.h"
#include "json.h"
#include "jsonread.h"
#include "lifetime-report.h"
#include "log.h"
#include "metrics.h"
#include "query.h"
#include "runs.h"
#include "session.h"
#include "store.h"
#include "timefmt.h"
#include "version.h"
#include "web.h"
#include "xalloc.h"

_Static_assert(API_RUN_ERROR_MAX == JOBCSV_ERROR_MAX,
	       "a stop body's error and a stored one have one limit");

#define JSON_TYPE "application/json"

static void respond_error(struct api_response *resp, unsigned status, const char *param,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Request target parsing ------------------------------------------------------------------- */

static int hex_value(char c) {
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/*
 * Decodes [s, s + n) into a new string; '+' is a space only in the query. Rejects broken
 * escapes and control bytes (a NUL would silently cut a value short in C).
 */
static bool decode(const char *s, size_t n, bool query, char **out) {
	char *d = xcalloc(n + 1, 1);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%') {
			int hi = i + 2 < n ? hex_value(s[i + 1]) : -1;
			int lo = i + 2 < n ? hex_value(s[i + 2]) : -1;
			if (hi < 0 || lo < 0) {
				free(d);
				return false;
			}
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
		} else if (c == '+' && query) {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f) {
			free(d);
			return false;
		}
		d[j++] = (char)c;
	}
	*out = d;
	return true;
}

static bool parse_fail(struct api_target *t, char **err, char *msg) {
	api_target_finish(t);
	*err = msg;
	return false;
}

bool api_parse_target(const char *target, struct api_target *out, char **err) {
	*out = (struct api_target){0};
	for (const char *p = target; *p; p++) {
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f) {
			return parse_fail(
				out, err,
				xstrdup("request target contains a space or a non-ASCII byte"));
		}
	}
	if (target[0] != '/') {
		return parse_fail(out, err, xstrdup("request target must start with '/'"));
	}
	size_t path_len = strcspn(target, "?#");
	if (!decode(target, path_len, false, &out->path)) {
		return parse_fail(out, err, xstrdup("bad percent-encoding in the URL path"));
	}
	if (target[path_len] != '?') {
		return true; // a fragment is never sent by clients; ignore what follows '#'
	}
	const char *q = target + path_len + 1;
	const char *end = q + strcspn(q, "#");
	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q));
		size_t len = (size_t)((amp ? amp : end) - q);
		if (len > 0) {
			if (out->n_params == API_PARAMS_MAX) {
				return parse_fail(
					out, err,
					xasprintf("more than %d query parameters", API_PARAMS_MAX));
			}
			const char *eq = memchr(q, '=', len);
			size_t key_len = eq ? (size_t)(eq - q) : len;
			struct api_param *p = &out->params[out->n_params];
			if (!decode(q, key_len, true, &p->key)) {
				return parse_fail(
					out, err,
					xasprintf(
						"bad percent-encoding in query parameter name '%.*s'",
						(int)key_len, q));
			}
			out->n_params++;
			if (p->key[0] == '\0') {
				return parse_fail(out, err, xstrdup("empty query parameter name"));
			}
			if (eq && !decode(eq + 1, len - key_len - 1, true, &p->value)) {
				char *msg =
					xasprintf("bad percent-encoding in parameter '%s'", p->key);
				return parse_fail(out, err, msg);
			}
		}
		q += len + 1;
	}
	return true;
}

bool api_target_within_limits(const char *target, struct api_response *resp) {
	*resp = (struct api_response){0};
	buf_init(&resp->body);
	if (strlen(target) > API_TARGET_MAX) {
		respond_error(resp, 414, NULL, "request target longer than %d bytes",
			      API_TARGET_MAX);
		return false;
	}
	const char *q = strchr(target, '?');
	size_t n = 0;
	for (const char *end = q ? q + 1 + strcspn(q + 1, "#") : NULL; q && q < end;) {
		const char *seg = q + 1;
		size_t len = strcspn(seg, "&#");
		n += len > 0;
		q = seg + len;
	}
	if (n > API_PARAMS_MAX) {
		respond_error(resp, 400, NULL, "more than %d query parameters", API_PARAMS_MAX);
		return false;
	}
	return true;
}

void api_target_finish(struct api_target *t) {
	free(t->path);
	for (size_t i = 0; i < t->n_params; i++) {
		free(t->params[i].key);
		free(t->params[i].value);
	}
	*t = (struct api_target){0};
}

bool api_token_equal(const char *a, const char *b) {
	// Walk all of @b whatever @a holds, so timing does not reveal a matching prefix.
	size_t la = strlen(a), lb = strlen(b);
	volatile unsigned char diff = la != lb;
	for (size_t i = 0; i < lb; i++) {
		unsigned char ca = i < la ? (unsigned char)a[i] : 0;
		diff |= ca ^ (unsigned char)b[i];
	}
	return diff == 0;
}

/* Responses -------------------------------------------------------------------------------- */

void api_response_finish(struct api_response *resp) {
	buf_finish(&resp->body);
	export_destroy(resp->export);
	free(resp->filename);
	free(resp->set_cookie);
	*resp = (struct api_response){0};
}

static void respond_json(struct api_response *resp, unsigned status) {
	resp->status = status;
	resp->content_type = JSON_TYPE;
	resp->cache_control = "no-store";
}

/* An error is {"error": "...", "parameter": "..."}: the message names the parameter too. */
static void respond_error(struct api_response *resp, unsigned status, const char *param,
			  const char *fmt, ...) {
	buf_clear(&resp->body);
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	struct json j;
	json_init(&j, &resp->body, false);
	json_object_begin(&j);
	json_key(&j, "error");
	json_string(&j, msg);
	if (param) {
		json_key(&j, "parameter");
		json_string(&j, param);
	}
	json_object_end(&j);
	buf_putc(&resp->body, '\n');
	free(msg);
	respond_json(resp, status);
}

/* Parameters ------------------------------------------------------------------------------- */

/* What an endpoint accepts; anything else is a 400 naming the parameter. */
struct param_spec {
	const char *name;
	bool repeatable;
};

struct request {
	const struct api_context *ctx;
	const struct api_request *req;
	struct api_target target;
	struct api_response *resp;
};

static bool check_params(struct request *r, const struct param_spec *specs) {
	const struct api_target *t = &r->target;
	for (size_t i = 0; i < t->n_params; i++) {
		const struct param_spec *spec = NULL;
		for (const struct param_spec *s = specs; s && s->name; s++) {
			if (strcmp(s->name, t->params[i].key) == 0) {
				spec = s;
			}
		}
		if (!spec) {
			respond_error(r->resp, 400, t->params[i].key, "unknown parameter '%s'",
				      t->params[i].key);
			return false;
		}
		if (!t->params[i].value) {
			respond_error(r->resp, 400, spec->name,
				      "parameter '%s' needs a value (%s=...)", spec->name,
				      spec->name);
			return false;
		}
		for (size_t k = 0; k < i && !spec->repeatable; k++) {
			if (strcmp(t->params[k].key, spec->name) == 0) {
				respond_error(r->resp, 400, spec->name, "duplicate parameter '%s'",
					      spec->name);
				return false;
			}
		}
	}
	return true;
}

/* The first value of @name, or NULL. */
static const char *param(const struct request *r, const char *name) {
	for (size_t i = 0; i < r->target.n_params; i++) {
		if (strcmp(r->target.params[i].key, name) == 0) {
			return r->target.params[i].value;
		}
	}
	return NULL;
}

static bool param_bool(struct request *r, const char *name, bool *out) {
	const char *v = param(r, name);
	*out = false;
	if (!v) {
		return true;
	}
	if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) {
		*out = true;
	} else if (strcmp(v, "0") != 0 && strcmp(v, "false") != 0) {
		respond_error(r->resp, 400, name, "parameter '%s' must be 0 or 1, not '%s'", name,
			      v);
		return false;
	}
	return true;
}

static bool param_uint(struct request *r, const char *name, unsigned def, unsigned min,
		       unsigned max, const char *limit_name, unsigned *out) {
	const char *v = param(r, name);
	*out = def;
	if (!v) {
		return true;
	}
	char *end;
	errno = 0;
	unsigned long long n = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
	if (v[0] < '0' || v[0] > '9' || *end || errno) {
		respond_error(r->resp, 400, name, "parameter '%s' must be a whole number, not '%s'",
			      name, v);
		return false;
	}
	if (n < min || n > max) {
		respond_error(r->resp, 400, name, "parameter '%s' must be between %u and %u%s%s%s",
			      name, min, max, limit_name ? " (" : "", limit_name ? limit_name : "",
			      limit_name ? ")" : "");
		return false;
	}
	*out = (unsigned)n;
	return true;
}

/* Reads the 'from' and 'to' parameters that are given into *from and *to (the others keep
 * their values); false after a 400 naming the one that is not a time. */
static bool param_times(struct request *r, int64_t *from, int64_t *to) {
	const char *names[] = {"from", "to"};
	int64_t *dst[] = {from, to};
	for (int i = 0; i < 2; i++) {
		const char *v = param(r, names[i]);
		if (v && !timefmt_parse_time(v, r->req->now, dst[i])) {
			respond_error(
				r->resp, 400, names[i],
				"parameter '%s': cannot read '%s' as a time (ISO 8601 like 2026-08-20T00:00:00Z, a date, unix seconds, -24h or now)",
				names[i], v);
			return false;
		}
	}
	return true;
}

/* A window [from, to): defaults to the last 24 hours, bounded by http.max_window_s. */
static bool param_window(struct request *r, int64_t *from, int64_t *to) {
	int64_t now = r->req->now;
	*to = now;
	*from = now - 24 * 3600;
	if (!param_times(r, from, to)) {
		return false;
	}
	static const char *const names[] = {"'from'", "'to'"};
	char *err = NULL;
	int bad;
	if (query_window_check(*from, *to, !param(r, "to"), r->ctx->cfg->http.max_window_s, names,
			       &bad, &err) < 0) {
		// An empty window blames 'from'; one too long blames the end the user gave.
		const char *blame = *from >= *to || param(r, "from") ? "from" : "to";
		respond_error(r->resp, 400, blame, "%s", err);
		free(err);
		return false;
	}
	return true;
}

/* Endpoints -------------------------------------------------------------------------------- */

static void iso_time(struct json *j, int64_t ts) {
	char text[TIMEFMT_ISO_LEN];
	timefmt_iso(ts, text);
	json_string(j, text);
}

static void handle_latest(struct request *r) {
	if (!check_params(r, NULL)) {
		return;
	}
	struct live_snapshot snap = {0};
	live_snapshot(r->ctx->live, &snap);
	struct json j;
	json_init(&j, &r->resp->body, true);
	json_object_begin(&j);
	json_key(&j, "ts");
	if (snap.ts > 0) {
		json_int(&j, snap.ts);
		json_key(&j, "time");
		iso_time(&j, snap.ts);
	} else {
		json_null(&j); // no cycle yet
		json_key(&j, "time");
		json_null(&j);
	}
	json_key(&j, "clock");
	json_string(&j, clock_state_name(snap.health.clock));
	json_key(&j, "channels");
	json_array_begin(&j);
	for (size_t i = 0; i < snap.n; i++) {
		const struct channel *ch = &snap.channels[i];
		const struct reading *rd = &snap.readings[i];
		json_object_begin(&j);
		channel_json_reading(&j, ch, rd);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	buf_putc(&r->resp->body, '\n');
	live_snapshot_finish(&snap);
	respond_json(r->resp, 200);
}

static void handle_status(struct request *r) {
	if (!check_params(r, NULL)) {
		return;
	}
	const struct api_context *ctx = r->ctx;
	struct live_snapshot snap = {0};
	live_snapshot(ctx->live, &snap);
	const struct live_health *h = &snap.health;

	struct store_info info = {0};
	bool have_info = ctx->store && store_info(ctx->store, &info) == 0;
	// Counts only: store_channels() would also scan the last hours' rows for last_seen.
	size_t n_list = 0, present = 0;
	bool have_channels = ctx->store && store_channel_counts(ctx->store, &n_list, &present) == 0;

	struct json j;
	json_init(&j, &r->resp->body, true);
	json_object_begin(&j);
	json_key(&j, "version");
	json_string(&j, THERMLOG_VERSION);
	json_key(&j, "host");
	json_string(&j, ctx->host);
	json_key(&j, "board");
	json_string(&j, ctx->board);
	json_key(&j, "now");
	iso_time(&j, r->req->now);
	json_key(&j, "started");
	if (h->started > 0) {
		iso_time(&j, h->started);
		json_key(&j, "uptime_s");
		json_int(&j, r->req->now - h->started);
	} else {
		json_null(&j);
		json_key(&j, "uptime_s");
		json_null(&j);
	}
	json_key(&j, "interval_s");
	json_double(&j,
		    (double)(h->interval_ms > 0 ? h->interval_ms : ctx->cfg->interval_ms) / 1000.0);
	json_key(&j, "last_cycle");
	if (snap.ts > 0) {
		iso_time(&j, snap.ts);
		json_key(&j, "last_cycle_ts");
		json_int(&j, snap.ts);
		json_key(&j, "last_cycle_age_s");
		json_int(&j, r->req->now - snap.ts);
	} else {
		json_null(&j);
		json_key(&j, "last_cycle_ts");
		json_null(&j);
		json_key(&j, "last_cycle_age_s");
		json_null(&j);
	}
	json_key(&j, "cycle_seconds");
	json_double(&j, h->cycle_seconds);
	json_key(&j, "cycles_since_start");
	json_int(&j, h->cycles_total);
	json_key(&j, "cycles_failed");
	json_int(&j, h->cycles_failed);
	json_key(&j, "queued_cycles");
	json_int(&j, h->queued_cycles);
	json_key(&j, "database_reopens");
	json_int(&j, h->database_reopens);
	json_key(&j, "database_reopened_at");
	if (h->database_reopened_at > 0) {
		iso_time(&j, h->database_reopened_at);
	} else {
		json_null(&j);
	}
	json_key(&j, "read_errors_total");
	json_int(&j, h->read_errors_total);
	json_key(&j, "errors_last_hour");
	json_int(&j, h->errors_last_hour);
	json_key(&j, "error_channels");
	json_string(&j, h->error_channels);
	json_key(&j, "clock");
	json_string(&j, clock_state_name(h->clock));
	json_key(&j, "clock_synchronized");
	if (h->clock == CLOCK_STATE_UNKNOWN) {
		json_null(&j);
	} else {
		json_bool(&j, h->clock == CLOCK_STATE_SYNCED);
	}
	json_key(&j, "channels_live");
	json_int(&j, (int64_t)snap.n);
	json_key(&j, "channels_present");
	if (have_channels) {
		json_int(&j, (int64_t)present);
		json_key(&j, "channels_absent");
		json_int(&j, (int64_t)(n_list - present));
	} else {
		json_null(&j);
		json_key(&j, "channels_absent");
		json_null(&j);
	}
	json_key(&j, "capacitors");
	json_int(&j, (int64_t)snap.n_capacitors);
	if (ctx->local && ctx->db_path) { // where runs sent to this socket are recorded
		json_key(&j, "database_path");
		json_string(&j, ctx->db_path);
	}
	json_key(&j, "database");
	if (have_info) {
		json_object_begin(&j);
		json_key(&j, "cycles");
		json_int(&j, info.cycles);
		json_key(&j, "unsynced_cycles");
		json_int(&j, info.unsynced_cycles);
		json_key(&j, "first_cycle");
		if (info.first_cycle > 0) {
			iso_time(&j, info.first_cycle);
		} else {
			json_null(&j);
		}
		json_key(&j, "last_cycle");
		if (info.last_cycle > 0) {
			iso_time(&j, info.last_cycle);
		} else {
			json_null(&j);
		}
		json_key(&j, "size_bytes");
		json_int(&j, info.size_bytes);
		json_key(&j, "bytes_written_total");
		json_int(&j, h->bytes_written_total);
		json_object_end(&j);
	} else {
		json_null(&j);
	}
	json_object_end(&j);
	buf_putc(&r->resp->body, '\n');
	live_snapshot_finish(&snap);
	respond_json(r->resp, 200);
}

static void handle_metrics(struct request *r) {
	// No parameters, but a Prometheus job's `params:` must not fail the scrape: ignored.
	struct live_snapshot snap = {0};
	live_snapshot(r->ctx->live, &snap);
	metrics_write(&snap, &r->resp->body);
	live_snapshot_finish(&snap);
	r->resp->status = 200;
	r->resp->content_type = METRICS_CONTENT_TYPE;
	r->resp->cache_control = "no-store";
}

/* The values of a repeatable parameter, in order; *n receives their count. */
static size_t param_all(const struct request *r, const char *name, const char **out, size_t max) {
	size_t n = 0;
	for (size_t i = 0; i < r->target.n_params && n < max; i++) {
		if (strcmp(r->target.params[i].key, name) == 0) {
			out[n++] = r->target.params[i].value;
		}
	}
	return n;
}

/*
 * Every channel parameter must name a stored channel (a key or a glob matching one), so an
 * unknown one is a 400 naming the parameter rather than an error deep in the query.
 */
static bool check_channels(struct request *r, const char *const *keys, size_t n) {
	if (n == 0) {
		return true;
	}
	struct store_channel *list = NULL;
	size_t n_list = 0;
	if (store_channels(r->ctx->store, &list, &n_list) < 0) {
		respond_error(r->resp, 500, NULL,
			      "could not read the channel list from the database");
		return false;
	}
	bool good = true;
	for (size_t k = 0; k < n && good; k++) {
		bool found = false;
		for (size_t i = 0; i < n_list && !found; i++) {
			found = strcmp(list[i].ch.key, keys[k]) == 0 ||
				fnmatch(keys[k], list[i].ch.key, 0) == 0;
		}
		if (!found) {
			respond_error(
				r->resp, 400, "channel",
				"parameter 'channel': no stored channel matches '%s' (see /api/v1/channels)",
				keys[k]);
			good = false;
		}
	}
	store_channels_free(list, n_list);
	return good;
}

/*
 * Reads the repeatable 'percentile' parameter (after check_params(), so each has a value) into
 * @out: at most @max numbers from 0 to 100, their count in *n; false after a 400.
 */
static bool param_percentiles(struct request *r, double *out, size_t max, size_t *n) {
	const char *values[API_PARAMS_MAX];
	*n = param_all(r, "percentile", values, API_PARAMS_MAX);
	if (*n > max) {
		respond_error(r->resp, 400, "percentile", "more than %zu 'percentile' parameters",
			      max);
		return false;
	}
	for (size_t i = 0; i < *n; i++) {
		char *end;
		double v = strtod(values[i], &end);
		if (end == values[i] || *end || !isfinite(v) || v < 0 || v > 100) {
			respond_error(
				r->resp, 400, "percentile",
				"parameter 'percentile' must be a number from 0 to 100, not '%s'",
				values[i]);
			return false;
		}
		out[i] = v;
	}
	return true;
}

/* Common window, channel and include_unsynced handling for the query endpoints. */
struct query_request {
	struct query_params p;
	const char *channels[API_PARAMS_MAX];
	double percentiles[QUERY_MAX_PERCENTILES];
};

static bool query_request_init(struct request *r, struct query_request *q, bool window) {
	memset(q, 0, sizeof(*q));
	if (window) {
		if (!param_window(r, &q->p.from, &q->p.to)) {
			return false;
		}
		q->p.has_from = q->p.has_to = true;
	}
	if (!param_bool(r, "include_unsynced", &q->p.include_unsynced)) {
		return false;
	}
	q->p.n_channels = param_all(r, "channel", q->channels, API_PARAMS_MAX);
	q->p.channels = q->channels;
	for (size_t i = 0; i < q->p.n_channels; i++) {
		if (q->channels[i][0] == '\0') {
			respond_error(r->resp, 400, "channel", "parameter 'channel' is empty");
			return false;
		}
	}
	return check_channels(r, q->channels, q->p.n_channels);
}

/* Maps a query error to a response: bad parameters 400, no data 404, the rest 500. */
static void respond_query_error(struct request *r, int rc, char *err) {
	const char *msg = err ? err : "query failed";
	if (rc == -EINVAL) {
		respond_error(r->resp, 400, NULL, "%s", msg);
	} else if (rc == -ENOENT) {
		respond_error(r->resp, 404, NULL, "%s", msg);
	} else {
		log_warn("http: %s: %s", r->target.path, msg);
		respond_error(r->resp, 500, NULL, "%s", msg);
	}
	free(err);
}

typedef int (*query_json_fn)(struct store *store, const struct query_params *p, struct json *out,
			     char **err);

/* Answers a JSON writer's result: 200 with the body it wrote, or the error's status. */
static void respond_query_result(struct request *r, int rc, char *err) {
	if (rc < 0) {
		respond_query_error(r, rc, err);
		return;
	}
	free(err);
	buf_putc(&r->resp->body, '\n');
	respond_json(r->resp, 200);
}

static void run_query_json(struct request *r, query_json_fn fn, const struct query_params *p) {
	struct json j;
	json_init(&j, &r->resp->body, true);
	char *err = NULL;
	int rc = fn(r->ctx->store, p, &j, &err);
	respond_query_result(r, rc, err);
}

static void handle_channels(struct request *r) {
	if (!check_params(r, NULL)) {
		return;
	}
	run_query_json(r, query_channels_json, NULL);
}

static void handle_stats(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", true},
						  {"percentile", true},
						  {"include_unsynced", false},
						  {"weight", false},
						  {NULL, false}};
	struct query_request q;
	if (!check_params(r, specs) || !query_request_init(r, &q, true)) {
		return;
	}
	if (!param_percentiles(r, q.percentiles, QUERY_MAX_PERCENTILES, &q.p.n_percentiles)) {
		return;
	}
	const char *weight = param(r, "weight");
	if (weight && !query_weight_parse(weight, &q.p.weight)) {
		respond_error(r->resp, 400, "weight",
			      "parameter 'weight' must be 'samples' or 'time', not '%s'", weight);
		return;
	}
	q.p.percentiles = q.percentiles;
	run_query_json(r, query_stats_json, &q.p);
}

/* The largest max_points / samples a request may ask for (http.max_points, 0 = 5000). */
static unsigned max_points_cap(const struct request *r) {
	return r->ctx->cfg->http.max_points ? r->ctx->cfg->http.max_points : 5000;
}

static void handle_samples(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", true},
						  {"max_points", false},
						  {"include_unsynced", false},
						  {NULL, false}};
	struct query_request q;
	unsigned cap = max_points_cap(r);
	if (!check_params(r, specs) || !param_uint(r, "max_points", cap < 1000 ? cap : 1000, 1, cap,
						   "http.max_points", &q.p.max_points)) {
		return;
	}
	unsigned max_points = q.p.max_points;
	if (!query_request_init(r, &q, true)) {
		return;
	}
	q.p.max_points = max_points;
	run_query_json(r, query_samples_json, &q.p);
}

static void handle_peak(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", false},
						  {"samples", false},
						  {"include_unsynced", false},
						  {NULL, false}};
	unsigned samples;
	unsigned cap = max_points_cap(r);
	if (!check_params(r, specs) ||
	    !param_uint(r, "samples", 30, 1, cap, "http.max_points", &samples)) {
		return;
	}
	if (!param(r, "channel")) {
		respond_error(
			r->resp, 400, "channel",
			"parameter 'channel' is required: the channel whose maximum to centre on");
		return;
	}
	struct query_request q;
	if (!query_request_init(r, &q, true)) {
		return;
	}
	q.p.samples = samples;
	run_query_json(r, query_peak_json, &q.p);
}

static void handle_lifetime(struct request *r) {
	static const struct param_spec specs[] = {
		{"from", false}, {"to", false}, {"include_unsynced", false}, {NULL, false}};
	if (!check_params(r, specs)) {
		return;
	}
	// Capacitor wear is about the whole service life: open ends by default, no window cap.
	int64_t from = INT64_MIN, to = INT64_MAX;
	if (!param_times(r, &from, &to)) {
		return;
	}
	if (from >= to) {
		respond_error(r->resp, 400, "from", "parameter 'from' must be before 'to'");
		return;
	}
	bool include_unsynced;
	if (!param_bool(r, "include_unsynced", &include_unsynced)) {
		return;
	}
	struct json j;
	json_init(&j, &r->resp->body, true);
	char *err = NULL;
	int rc = lifetime_report_json(r->ctx->store, r->ctx->cfg, from, to, include_unsynced,
				      r->req->now, &j, &err);
	respond_query_result(r, rc, err);
}

static void compact_time(char out[TIMEFMT_ISO_LEN], int64_t ts) {
	// "2026-08-20T00:00:00Z" -> "20260820T000000Z": no characters a file name dislikes.
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(ts, iso);
	size_t j = 0;
	for (const char *p = iso; *p; p++) {
		if (*p != '-' && *p != ':') {
			out[j++] = *p;
		}
	}
	out[j] = '\0';
}

static void handle_export(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", true},
						  {"format", false},
						  {"include_unsynced", false},
						  {NULL, false}};
	if (!check_params(r, specs)) {
		return;
	}
	enum export_format format = EXPORT_FORMAT_LONG;
	const char *f = param(r, "format");
	if (f && strcmp(f, "wide") == 0) {
		format = EXPORT_FORMAT_WIDE;
	} else if (f && strcmp(f, "long") != 0) {
		respond_error(r->resp, 400, "format",
			      "parameter 'format' must be long or wide, not '%s'", f);
		return;
	}
	struct query_request q;
	if (!query_request_init(r, &q, true)) {
		return;
	}
	char *err = NULL;
	struct export *e = export_create(r->ctx->store, &q.p, format, &err);
	if (!e) {
		respond_query_error(r, -EINVAL, err);
		return;
	}
	free(err);
	char from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
	compact_time(from, q.p.from);
	compact_time(to, q.p.to);
	r->resp->status = 200;
	r->resp->content_type = "text/csv; charset=utf-8; header=present";
	r->resp->cache_control = "no-store";
	r->resp->export = e;
	r->resp->filename = xasprintf("thermlog-%s-%s-%s.csv", from, to,
				      format == EXPORT_FORMAT_WIDE ? "wide" : "long");
}

ssize_t api_export_read(struct export *e, char *buf, size_t max) {
	return export_read(e, buf, max);
}

void api_export_destroy(struct export *e) {
	export_destroy(e);
}

/* Dashboard assets ------------------------------------------------------------------------- */

/* Whether an If-None-Match list names @etag (weak comparison, as RFC 9110 asks for it). */
static bool etag_listed(const char *list, const char *etag) {
	size_t etag_len = strlen(etag);
	const char *p = list;
	while (*p) {
		p += strspn(p, " \t,");
		if (*p == '*') {
			return true;
		}
		if (strncmp(p, "W/", 2) == 0) {
			p += 2;
		}
		size_t len = strcspn(p, ",");
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) {
			len--;
		}
		if (len == etag_len && memcmp(p, etag, len) == 0) {
			return true;
		}
		p += strcspn(p, ",");
	}
	return false;
}

/* Whether Accept-Encoding allows gzip: listed (or "*") with a nonzero q. */
static bool gzip_accepted(const char *header) {
	if (!header) {
		return false;
	}
	int gzip = -1, star = -1; // -1 = not mentioned, else q > 0
	const char *p = header;
	while (*p) {
		p += strspn(p, " \t,");
		size_t len = strcspn(p, ",");
		size_t name_len = strcspn(p, ";, \t");
		bool allowed = true;
		const char *q = memchr(p, ';', len);
		if (q) {
			q++;
			q += strspn(q, " \t");
			if ((q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
				allowed = strtod(q + 2, NULL) > 0;
			}
		}
		if ((name_len == 4 && strncasecmp(p, "gzip", 4) == 0) ||
		    (name_len == 6 && strncasecmp(p, "x-gzip", 6) == 0)) {
			gzip = allowed;
		} else if (name_len == 1 && *p == '*') {
			star = allowed;
		}
		p += len;
	}
	return gzip == 1 || (gzip == -1 && star == 1);
}

static void handle_asset(struct request *r, const struct web_asset *asset) {
	struct api_response *resp = r->resp;
	// The dashboard takes no parameters, but cache-busting queries are harmless.
	bool gz = asset->gz && gzip_accepted(r->req->accept_encoding);
	// A strong ETag names one representation, so the gzip variant gets its own.
	size_t n = strlen(asset->etag);
	if (gz && n >= 2 && n + 4 < sizeof(resp->etag) && asset->etag[n - 1] == '"') {
		snprintf(resp->etag, sizeof(resp->etag), "%.*s-gz\"", (int)(n - 1), asset->etag);
	} else {
		snprintf(resp->etag, sizeof(resp->etag), "%s", asset->etag);
	}
	resp->content_type = asset->content_type;
	resp->cache_control = "no-cache"; // revalidate with the ETag: cheap, never stale
	resp->vary_accept_encoding = asset->gz != NULL;
	if (r->req->if_none_match && (etag_listed(r->req->if_none_match, resp->etag) ||
				      etag_listed(r->req->if_none_match, asset->etag))) {
		resp->status = 304;
		return;
	}
	resp->status = 200;
	if (gz) {
		resp->content_encoding = "gzip";
		resp->static_body = asset->gz;
		resp->static_len = asset->gz_len;
	} else {
		resp->static_body = asset->data;
		resp->static_len = asset->len;
	}
}

/* Routing ---------------------------------------------------------------------------------- */

struct route {
	const char *path;
	void (*handle)(struct request *r);
	bool needs_store;
	enum api_cost cost;
};

static void handle_runs(struct request *r);
static void handle_runs_stats(struct request *r);

static const struct route routes[] = {
	{"/api/v1/status", handle_status, false, API_COST_LIGHT},
	{"/api/v1/latest", handle_latest, false, API_COST_NONE},
	{"/api/v1/channels", handle_channels, true, API_COST_LIGHT},
	{"/api/v1/stats", handle_stats, true, API_COST_HEAVY},
	{"/api/v1/samples", handle_samples, true, API_COST_HEAVY},
	{"/api/v1/peak", handle_peak, true, API_COST_HEAVY},
	{"/api/v1/lifetime", handle_lifetime, true, API_COST_HEAVY},
	{"/api/v1/export.csv", handle_export, true, API_COST_HEAVY},
	{"/api/v1/runs", handle_runs, true, API_COST_HEAVY},
	{"/api/v1/runs/stats", handle_runs_stats, true, API_COST_HEAVY},
	{"/metrics", handle_metrics, false, API_COST_NONE},
};

/* runs: read side ------------------------------------------------------------------------- */

/* Reads label, from and to into @f (times as everywhere in the API); false after a 400. */
static bool runs_filter(struct request *r, struct store_run_filter *f) {
	*f = (struct store_run_filter){.label = param(r, "label")};
	int64_t from = 0, to = 0;
	if (!param_times(r, &from, &to)) {
		return false;
	}
	if (param(r, "from")) {
		f->from_ms = from * 1000;
		f->has_from = true;
	}
	if (param(r, "to")) {
		f->to_ms = to * 1000;
		f->has_to = true;
	}
	if (f->has_from && f->has_to && f->from_ms >= f->to_ms) {
		respond_error(r->resp, 400, "from", "parameter 'from' must be before 'to'");
		return false;
	}
	return true;
}

static void respond_runs(struct request *r, int rc, const char *what) {
	if (rc < 0) {
		respond_query_error(r, rc, xasprintf("%s: %s", what, strerror(-rc)));
		return;
	}
	buf_putc(&r->resp->body, '\n');
	respond_json(r->resp, 200);
}

static void handle_runs(struct request *r) {
	static const struct param_spec specs[] = {
		{"label", false}, {"from", false}, {"to", false}, {"limit", false}, {NULL, false}};
	struct store_run_filter f;
	unsigned limit;
	if (!check_params(r, specs) || !runs_filter(r, &f) ||
	    !param_uint(r, "limit", API_RUNS_LIMIT, 1, API_RUNS_LIMIT_MAX, NULL, &limit)) {
		return;
	}
	f.limit = limit;
	respond_runs(r, runs_list_json(r->ctx->store, &f, true, &r->resp->body),
		     "could not read the runs");
}

static void handle_runs_stats(struct request *r) {
	static const struct param_spec specs[] = {{"label", false},     {"from", false},
						  {"to", false},        {"over", false},
						  {"percentile", true}, {NULL, false}};
	struct runs_stats_options opt = {.over_s = NAN};
	if (!check_params(r, specs) || !runs_filter(r, &opt.filter)) {
		return;
	}
	const char *over = param(r, "over");
	int64_t ms;
	if (over && !timefmt_parse_duration_ms(over, &ms)) {
		respond_error(r->resp, 400, "over",
			      "parameter 'over' must be a duration like 30m or 1h30m, not '%s'",
			      over);
		return;
	}
	if (over) {
		opt.over_s = (double)ms / 1000.0;
	}
	double percentiles[API_PARAMS_MAX];
	if (!param_percentiles(r, percentiles, API_PARAMS_MAX, &opt.n_percentiles)) {
		return;
	}
	opt.percentiles = percentiles;
	struct runstats_result res;
	int rc = runs_stats(r->ctx->store, &opt, &res);
	if (rc == 0) {
		runs_stats_write_json(&res, &opt, true, &r->resp->body);
	}
	runstats_result_finish(&res);
	respond_runs(r, rc, "could not compute the run statistics");
}

#define RUNS_PATH "/api/v1/runs/"

/* /api/v1/runs/{id}: a positive decimal id, nothing after it. */
static bool run_path_id(const char *path, int64_t *id) {
	if (strncmp(path, RUNS_PATH, strlen(RUNS_PATH)) != 0) {
		return false;
	}
	const char *digits = path + strlen(RUNS_PATH);
	if (*digits < '1' || *digits > '9' || strlen(digits) > 18 ||
	    strspn(digits, "0123456789") != strlen(digits)) {
		return false;
	}
	*id = strtoll(digits, NULL, 10);
	return true;
}

static void handle_run_show(struct request *r) {
	int64_t id = 0;
	if (!check_params(r, NULL) || !run_path_id(r->target.path, &id)) {
		return;
	}
	int rc = runs_show_json(r->ctx->store, r->ctx->cfg, id, true, &r->resp->body);
	if (rc == -ENOENT) {
		respond_error(r->resp, 404, NULL, "no run %lld", (long long)id);
		return;
	}
	respond_runs(r, rc, "could not read the run");
}

static const struct route run_show_route = {RUNS_PATH "{id}", handle_run_show, true,
					    API_COST_LIGHT};

#define RUNS_SAMPLES_SUFFIX "/samples"

/* /api/v1/runs/{id}/samples: the id as for run_path_id(), then the suffix. */
static bool run_samples_path_id(const char *path, int64_t *id) {
	size_t len = strlen(path), n = strlen(RUNS_SAMPLES_SUFFIX);
	if (len <= n || strcmp(path + len - n, RUNS_SAMPLES_SUFFIX) != 0 || len - n >= 64) {
		return false;
	}
	char head[64];
	memcpy(head, path, len - n);
	head[len - n] = '\0';
	return run_path_id(head, id);
}

static void handle_run_samples(struct request *r) {
	static const struct param_spec specs[] = {{"max_points", false}, {NULL, false}};
	int64_t id = 0;
	unsigned cap = max_points_cap(r), max_points;
	if (!check_params(r, specs) || !run_samples_path_id(r->target.path, &id) ||
	    !param_uint(r, "max_points", cap < 1000 ? cap : 1000, 1, cap, "http.max_points",
			&max_points)) {
		return;
	}
	int rc = runs_samples_json(r->ctx->store, id, max_points, true, &r->resp->body);
	if (rc == -ENOENT) {
		respond_error(r->resp, 404, NULL, "no run %lld", (long long)id);
		return;
	}
	respond_runs(r, rc, "could not read the run's fast samples");
}

static const struct route run_samples_route = {RUNS_PATH "{id}" RUNS_SAMPLES_SUFFIX,
					       handle_run_samples, true, API_COST_HEAVY};

/* The route of @path: the table's, or the one of /api/v1/runs/{id}; NULL when none. */
static const struct route *route_find(const char *path) {
	int64_t id;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(routes[i].path, path) == 0) {
			return &routes[i];
		}
	}
	if (run_samples_path_id(path, &id)) {
		return &run_samples_route;
	}
	return run_path_id(path, &id) ? &run_show_route : NULL;
}

/* A 303 to @location, relative to the request's path so that a reverse proxy's prefix stays. */
static void redirect(struct api_response *resp, const char *location) {
	buf_clear(&resp->body);
	buf_printf(&resp->body, "see %s\n", location);
	resp->status = 303;
	resp->content_type = "text/plain; charset=utf-8";
	resp->cache_control = "no-store";
	resp->location = location;
}

/*
 * The dashboard's sign-in, answered before authentication: GET shows the form, POST of
 * token=TOKEN (a form) sets a session cookie derived from the token and goes to the
 * dashboard, since a browser cannot send an Authorization header when it navigates.
 */
static void handle_login(struct request *r) {
	const struct api_context *ctx = r->ctx;
	const struct api_request *req = r->req;
	struct api_response *resp = r->resp;
	bool read_only = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	if (!read_only && strcmp(req->method, "POST") != 0) {
		respond_error(resp, 405, NULL, "method %s not allowed on /login (GET, HEAD, POST)",
			      req->method);
		resp->allow = "GET, HEAD, POST";
		return;
	}
	if (!ctx->token || !ctx->session_key) {
		redirect(resp, "./"); // nothing to sign in to
		return;
	}
	const struct web_asset *page = web_asset_find("/login.html");
	if (read_only) {
		if (page) {
			handle_asset(r, page);
		} else {
			respond_error(resp, 404, NULL, "no sign-in page in this build");
		}
		return;
	}
	if (req->body_len > API_LOGIN_MAX) {
		respond_error(resp, 413, NULL, "the sign-in form is larger than %d bytes",
			      API_LOGIN_MAX);
		return;
	}
	// The form is application/x-www-form-urlencoded: a query string without the '?'.
	struct buf target;
	buf_init(&target);
	buf_printf(&target, "/login?");
	buf_append(&target, req->body ? req->body : "", req->body ? req->body_len : 0);
	struct api_target form = {0};
	char *err = NULL;
	const char *given = NULL;
	if (api_parse_target(target.data, &form, &err)) {
		for (size_t i = 0; i < form.n_params; i++) {
			if (strcmp(form.params[i].key, "token") == 0 && form.params[i].value) {
				given = form.params[i].value;
			}
		}
	}
	if (given && api_token_equal(given, ctx->token)) {
		char value[SESSION_VALUE_MAX];
		session_value(ctx->session_key, ctx->token, req->now + SESSION_MAX_AGE_S, value);
		struct buf c;
		buf_init(&c);
		// Secure only over TLS, where the browser would otherwise refuse to store it.
		buf_printf(&c, "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s",
			   SESSION_COOKIE, value, SESSION_MAX_AGE_S,
			   ctx->cfg->http.tls_cert ? "; Secure" : "");
		resp->set_cookie = buf_steal(&c);
		redirect(resp, "./");
	} else {
		redirect(resp, "login?failed");
	}
	free(err);
	for (size_t i = 0; i < form.n_params; i++) {
		if (form.params[i].value) { // a token, right or nearly so: leave no copy behind
			explicit_bzero(form.params[i].value, strlen(form.params[i].value));
		}
	}
	api_target_finish(&form);
	explicit_bzero(target.data, target.len);
	buf_finish(&target);
}

enum api_cost api_target_cost(const char *target) {
	struct api_target t;
	char *err = NULL;
	enum api_cost cost = API_COST_NONE;
	if (!api_parse_target(target, &t, &err)) {
		free(err);
		return cost; // answered with a 400 before anything is read
	}
	const struct route *route = route_find(t.path);
	cost = route ? route->cost : cost;
	api_target_finish(&t);
	return cost;
}

static void handle_runs_post(struct request *r);

static bool authorized(const struct api_context *ctx, const struct api_request *req,
		       const char *path, struct api_response *resp) {
	if (!ctx->token) {
		return true;
	}
	if (ctx->cfg->http.metrics_public && strcmp(path, "/metrics") == 0) {
		return true;
	}
	if (strcmp(path, "/favicon.svg") == 0) {
		return true; // the sign-in page's icon, public anyway
	}
	const char *h = req->authorization;
	// A browser signed in through /login carries the session cookie instead of the header.
	if (!h && ctx->session_key &&
	    session_check(ctx->session_key, ctx->token, req->cookie, req->now)) {
		return true;
	}
	if (!h && ctx->session_key &&
	    (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)) {
		redirect(resp, "login"); // a person opening the dashboard: to the sign-in form
		return false;
	}
	resp->authenticate = true;
	if (!h) {
		respond_error(
			resp, 401, NULL,
			"this server needs a bearer token: send 'Authorization: Bearer TOKEN'");
		return false;
	}
	// The scheme is case-insensitive (RFC 9110); one or more spaces follow it.
	if (strncasecmp(h, "Bearer ", 7) != 0) {
		resp->auth_error = "invalid_request";
		respond_error(
			resp, 401, NULL,
			"the Authorization header must use the Bearer scheme: 'Authorization: Bearer TOKEN'");
		return false;
	}
	const char *given = h + 7;
	given += strspn(given, " ");
	if (!api_token_equal(given, ctx->token)) {
		resp->auth_error = "invalid_token";
		respond_error(resp, 401, NULL, "wrong bearer token");
		return false;
	}
	resp->authenticate = false;
	return true;
}

void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp) {
	if (!api_target_within_limits(req->target, resp)) {
		return;
	}
	struct request r = {.ctx = ctx, .req = req, .resp = resp};
	char *err = NULL;
	if (!api_parse_target(req->target, &r.target, &err)) {
		respond_error(resp, 400, NULL, "%s", err);
		free(err);
		return;
	}
	if (strcmp(r.target.path, "/login") == 0) {
		handle_login(&r);
		goto out;
	}
	if (!ctx->local && !authorized(ctx, req, r.target.path, resp)) {
		goto out;
	}
	if (strcmp(req->method, "POST") == 0 && strncmp(r.target.path, "/api/v1/runs", 12) == 0) {
		handle_runs_post(&r);
		goto out;
	}

	// One rule for every path, known or not: the API is read-only.
	if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
		respond_error(resp, 405, NULL,
			      "method %s not allowed: this API is read-only (GET, HEAD)",
			      req->method);
		resp->allow = "GET, HEAD";
		goto out;
	}
	const struct route *route = route_find(r.target.path);
	// The dashboard owns every path outside /api/ and /metrics.
	const struct web_asset *asset = NULL;
	if (!route && strncmp(r.target.path, "/api/", 5) != 0) {
		asset = web_asset_find(r.target.path);
	}
	if (!route && !asset) {
		respond_error(resp, 404, NULL, "no such path: %s", r.target.path);
		goto out;
	}
	if (asset) {
		handle_asset(&r, asset);
	} else if (route->needs_store && !ctx->store) {
		respond_error(resp, 503, NULL,
			      "the database is not available yet; try again shortly");
	} else {
		route->handle(&r);
	}
out:
	api_target_finish(&r.target);
}

void api_database_init(struct api_database *db, const char *path) {
	*db = (struct api_database){.path = xstrdup(path)};
}

struct store *api_database_get(struct api_database *db, int64_t now) {
	if (db->store || now < db->retry_at) {
		return db->store;
	}
	if (store_open(&db->store, db->path, STORE_MODE_READ) < 0) { // logs why
		db->store = NULL;
		db->retry_at = now + API_DATABASE_RETRY_S;
	}
	return db->store;
}

void api_database_finish(struct api_database *db) {
	store_close(db->store);
	free(db->path);
	*db = (struct api_database){0};
}

/* --- runs: the write endpoints ------------------------------------------------------------ */

/*
 * POST /api/v1/runs and POST /api/v1/runs/{id}/stop. Their bodies are read with the strict
 * JSON reader (jsonread.h); the daemon does the rest through ctx->runs.
 */

/* Parses the body as a JSON object; false with a 400 (or 413) answered. */
static bool runs_body(struct request *r, struct jsonread_node **root) {
	const struct api_request *req = r->req;
	*root = NULL;
	if (req->body_len > API_RUN_BODY_MAX) {
		respond_error(r->resp, 413, NULL, "the body exceeds %d bytes", API_RUN_BODY_MAX);
		return false;
	}
	if (req->body_len == 0) {
		return true; // no body: no members
	}
	struct jsonread_error err;
	*root = jsonread_parse(req->body, req->body_len, API_RUN_BODY_MAX, &err);
	if (!*root) {
		respond_error(r->resp, 400, NULL, "body:%zu:%zu: %s", err.line, err.col, err.msg);
		return false;
	}
	if ((*root)->kind != JSONREAD_OBJECT) {
		respond_error(r->resp, 400, NULL, "body:%zu:%zu: expected a JSON object, got %s",
			      (*root)->line, (*root)->col, jsonread_describe(*root));
		jsonread_node_free(*root);
		*root = NULL;
		return false;
	}
	return true;
}

/* Whether every key of the body is one of @known (NULL-terminated); false after a 400 naming it. */
static bool body_keys_known(struct request *r, const struct jsonread_node *root,
			    const char *const *known) {
	for (size_t i = 0; root && i + 1 < root->n; i += 2) {
		bool ok = false;
		for (size_t k = 0; known[k]; k++) {
			ok = ok || strcmp(root->items[i]->text, known[k]) == 0;
		}
		if (!ok) {
			struct buf allowed;
			buf_init(&allowed);
			for (size_t k = 0; known[k]; k++) {
				buf_printf(&allowed, "%s%s", k ? ", " : "", known[k]);
			}
			struct buf key; // the client's bytes, quoted to a terminal by thermlog run
			buf_init(&key);
			buf_put_printable(&key, root->items[i]->text, root->items[i]->len);
			respond_error(r->resp, 400, NULL, "body: unknown key '%s' (allowed: %s)",
				      key.data ? key.data : "", allowed.data);
			buf_finish(&key);
			buf_finish(&allowed);
			return false;
		}
	}
	return true;
}

/* The base name of @path, for a default label. */
static const char *base_name(const char *path) {
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

static void runs_start(struct request *r, const struct jsonread_node *root) {
	// "request_id" names one start however often it is retried.
	static const char *const known[] = {"label", "tags",       "pid",        "argv",
					    "exe",   "exe_sha256", "request_id", NULL};
	if (!body_keys_known(r, root, known)) {
		return;
	}
	struct buf tags = {0}, argv = {0};
	struct json j;
	char *msg = NULL;
	const char *label = NULL, *exe = NULL;
	const struct jsonread_node *v = jsonread_get(root, "label");
	if (v && !jsonread_string(v)) {
		msg = xstrdup("label: expected a string of " JOBCSV_LABEL_RULE);
		goto bad;
	}
	if (v && !jobcsv_label_valid(v->text)) {
		msg = xstrdup("label: expected " JOBCSV_LABEL_RULE);
		goto bad;
	}
	label = v ? v->text : NULL;
	v = jsonread_get(root, "exe");
	if (v && (!jsonread_string(v) || v->len == 0)) {
		msg = xstrdup("exe: expected a path");
		goto bad;
	}
	exe = v ? v->text : NULL;
	// The caller hashes its own executable: the daemon never opens a path a client names.
	char sha[65] = "";
	v = jsonread_get(root, "exe_sha256");
	if (v && v->kind != JSONREAD_NULL) {
		bool hex = jsonread_string(v) && v->len == 64;
		for (size_t i = 0; hex && i < 64; i++) {
			hex = strchr("0123456789abcdefABCDEF", v->text[i]) != NULL;
			sha[i] = (char)tolower((unsigned char)v->text[i]);
		}
		if (!hex) {
			msg = xstrdup("exe_sha256: expected 64 hexadecimal digits (a sha256)");
			goto bad;
		}
		sha[64] = '\0';
	}
	const char *request_id = NULL;
	v = jsonread_get(root, "request_id");
	if (v && v->kind != JSONREAD_NULL) {
		bool good = jsonread_string(v) && v->len >= 1 && v->len <= 64;
		for (size_t i = 0; good && i < v->len; i++) {
			good = isalnum((unsigned char)v->text[i]) || strchr("._-", v->text[i]);
		}
		if (!good) {
			msg = xstrdup(
				"request_id: expected 1 to 64 characters of A-Z, a-z, 0-9, '.', "
				"'_' and '-'");
			goto bad;
		}
		request_id = v->text;
	}
	json_init(&j, &tags, false);
	json_object_begin(&j);
	v = jsonread_get(root, "tags");
	if (v && v->kind != JSONREAD_OBJECT) {
		msg = xstrdup("tags: expected an object of strings");
		goto bad;
	}
	for (size_t i = 0; v && i + 1 < v->n; i += 2) {
		const struct jsonread_node *value = v->items[i + 1];
		// A number or a boolean is taken as its text: {"n": 3} is the tag n=3.
		if (value->kind != JSONREAD_STRING && value->kind != JSONREAD_NUMBER &&
		    value->kind != JSONREAD_TRUE && value->kind != JSONREAD_FALSE) {
			msg = xstrdup("tags: expected an object of strings");
			goto bad;
		}
		const char *text = value->text                    ? value->text
				   : value->kind == JSONREAD_TRUE ? "true"
								  : "false";
		if (!jobcsv_label_valid(v->items[i]->text)) {
			msg = xstrdup("tags: a key: expected " JOBCSV_LABEL_RULE);
			goto bad;
		}
		if (!jobcsv_label_valid(text)) {
			msg = xasprintf("tags: '%s': expected " JOBCSV_LABEL_RULE,
					v->items[i]->text);
			goto bad;
		}
		json_key(&j, v->items[i]->text);
		json_string(&j, text);
	}
	json_object_end(&j);
	v = jsonread_get(root, "argv");
	if (v) {
		if (v->kind != JSONREAD_ARRAY) {
			msg = xstrdup("argv: expected an array of strings");
			goto bad;
		}
		json_init(&j, &argv, false);
		json_array_begin(&j);
		for (size_t i = 0; i < v->n; i++) {
			if (!jsonread_string(v->items[i])) {
				msg = xstrdup("argv: expected an array of strings");
				goto bad;
			}
			json_string(&j, v->items[i]->text);
		}
		json_array_end(&j);
		if (!label && v->n > 0) {
			label = base_name(v->items[0]->text);
		}
	}
	if (!label && exe) {
		label = base_name(exe);
	}
	if (!label) {
		msg = xstrdup("label: required (or argv or exe to take it from)");
		goto bad;
	}
	if (!jobcsv_label_valid(label)) {
		msg = xstrdup("label: the name taken from argv or exe is not " JOBCSV_LABEL_RULE
			      "; give a label");
		goto bad;
	}
	// No "pid": the caller is watched; "pid": null: nothing is (an orchestrator's run).
	int64_t pid = r->req->peer_pid;
	v = jsonread_get(root, "pid");
	if (v && v->kind == JSONREAD_NULL) {
		pid = 0;
	} else if (v && !jsonread_int(v, 1, INT32_MAX, &pid)) {
		msg = xstrdup("pid: expected a process id (a positive integer)");
		goto bad;
	}
	struct api_run_start run = {
		.label = label,
		.tags = tags.data,
		.pid = pid,
		.argv = argv.len ? argv.data : NULL,
		.exe = exe,
		.exe_sha256 = sha[0] ? sha : NULL,
		.request_id = request_id,
	};
	int64_t id = 0;
	int rc = r->ctx->runs->start(r->ctx->runs->ctx, &run, &id, &msg);
	if (rc < 0) {
		unsigned status = rc == -EINVAL ? 400 : rc == -EBUSY ? 429 : 503;
		respond_error(r->resp, status, NULL, "%s",
			      msg ? msg : "the run could not be recorded");
		goto out;
	}
	buf_clear(&r->resp->body);
	json_init(&j, &r->resp->body, false);
	json_object_begin(&j);
	json_key(&j, "id");
	json_int(&j, id);
	json_object_end(&j);
	buf_putc(&r->resp->body, '\n');
	respond_json(r->resp, 201);
	goto out;
bad:
	respond_error(r->resp, 400, NULL, "%s", msg);
out:
	free(msg);
	buf_finish(&tags);
	buf_finish(&argv);
}

static void runs_stop(struct request *r, const struct jsonread_node *root, int64_t id) {
	static const char *const known[] = {"status",        "exit_code", "signal",
					    "rss_max_bytes", "error",     NULL};
	if (!body_keys_known(r, root, known)) {
		return;
	}
	struct api_run_stop stop = {.rss_max_bytes = -1};
	const struct jsonread_node *v = jsonread_get(root, "status");
	if (v) {
		if (!jsonread_string(v) ||
		    (strcmp(v->text, "ok") != 0 && strcmp(v->text, "failed") != 0 &&
		     strcmp(v->text, "timeout") != 0)) {
			respond_error(r->resp, 400, NULL,
				      "status: expected \"ok\", \"failed\" or \"timeout\"");
			return;
		}
		stop.status = v->text;
	}
	int64_t x;
	if ((v = jsonread_get(root, "exit_code")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_int(v, 0, 255, &x)) {
			respond_error(r->resp, 400, NULL, "exit_code: expected an integer 0..255");
			return;
		}
		stop.has_exit_code = true;
		stop.exit_code = (int)x;
	}
	if ((v = jsonread_get(root, "signal")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_int(v, 1, 127, &x)) {
			respond_error(r->resp, 400, NULL,
				      "signal: expected a signal number 1..127");
			return;
		}
		stop.has_signal = true;
		stop.signal = (int)x;
	}
	if ((v = jsonread_get(root, "rss_max_bytes")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_int(v, 0, INT64_MAX, &x)) {
			respond_error(r->resp, 400, NULL,
				      "rss_max_bytes: expected a non-negative integer");
			return;
		}
		stop.rss_max_bytes = x;
	}
	if ((v = jsonread_get(root, "error")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_string(v) || !jobcsv_text_valid(v->text, v->len, API_RUN_ERROR_MAX)) {
			respond_error(
				r->resp, 400, NULL,
				"error: expected null or a text of 1..%d bytes without control "
				"characters",
				API_RUN_ERROR_MAX);
			return;
		}
		stop.error = v->text;
	}
	if (!stop.status && !stop.has_exit_code && !stop.has_signal) {
		respond_error(r->resp, 400, NULL,
			      "the body needs status, exit_code or signal: how did the run end?");
		return;
	}
	char *msg = NULL;
	struct buf out = {0};
	int rc = r->ctx->runs->stop(r->ctx->runs->ctx, id, &stop, &out, &msg);
	if (rc < 0) {
		unsigned status = rc == -ENOENT     ? 404
				  : rc == -EALREADY ? 409
				  : rc == -EINVAL   ? 400
						    : 503;
		respond_error(r->resp, status, NULL, "%s", msg ? msg : "the stop was not recorded");
	} else {
		buf_clear(&r->resp->body);
		buf_append(&r->resp->body, out.data, out.len);
		buf_putc(&r->resp->body, '\n');
		respond_json(r->resp, 200);
	}
	free(msg);
	buf_finish(&out);
}

static void handle_runs_post(struct request *r) {
	const struct api_context *ctx = r->ctx;
	const char *path = r->target.path + 12; // after "/api/v1/runs"
	int64_t id = 0;
	bool start = *path == '\0';
	if (!start) {
		char *end;
		errno = 0;
		long long x = path[0] == '/' ? strtoll(path + 1, &end, 10) : 0;
		if (errno || x <= 0 || path[1] == '+' || strcmp(end, "/stop") != 0) {
			respond_error(r->resp, 404, NULL, "no such path: %s", r->target.path);
			return;
		}
		id = x;
	}
	// Over TCP a write needs the bearer token itself: never anonymous, never a browser's
	// cookie (which another site could make the browser send).
	if (!ctx->local && (!ctx->token || !r->req->authorization)) {
		respond_error(
			r->resp, 403, NULL,
			"runs are recorded through the Unix socket (runs.socket), or over TCP "
			"with http.token and 'Authorization: Bearer TOKEN'");
		return;
	}
	if (!ctx->runs) {
		respond_error(r->resp, 503, NULL, "this server does not record runs");
		return;
	}
	struct jsonread_node *root;
	if (!runs_body(r, &root)) {
		return;
	}
	if (start) {
		runs_start(r, root);
	} else {
		runs_stop(r, root, id);
	}
	jsonread_node_free(root);
}
