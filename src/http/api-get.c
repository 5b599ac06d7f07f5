/*
 * The API's read endpoints over the samples: status, latest, channels, stats, samples, peak,
 * lifetime, the CSV export and /metrics.
 */
#include "api-internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "export.h"
#include "json.h"
#include "lifetime-profile.h"
#include "lifetime-report.h"
#include "live.h"
#include "log.h"
#include "metrics.h"
#include "query.h"
#include "store.h"
#include "throttle-report.h"
#include "version.h"
#include "xalloc.h"

/* Endpoints -------------------------------------------------------------------------------- */

typedef void (*snapshot_json_fn)(struct request *r, const struct live_snapshot *snap,
				 struct json *j);

/* Answers a parameterless endpoint with the JSON @write makes of the live snapshot. */
static void respond_snapshot_json(struct request *r, snapshot_json_fn write) {
	if (!api_check_params(r, NULL)) {
		return;
	}
	struct live_snapshot snap = {0};
	live_snapshot(r->ctx->live, &snap);
	struct json j;
	json_init(&j, &r->resp->body, true);
	write(r, &snap, &j);
	buf_putc(&r->resp->body, '\n');
	live_snapshot_finish(&snap);
	api_respond_json(r->resp, 200);
}

static void write_latest(struct request *r, const struct live_snapshot *snap, struct json *j) {
	(void)r;
	json_object_begin(j);
	json_field_int_or_null(j, "ts", snap->ts > 0, snap->ts); // null: no cycle yet
	json_field_time_or_null(j, "time", snap->ts > 0, snap->ts);
	json_field_string(j, "clock", clock_state_name(snap->health.clock));
	json_key(j, "channels");
	json_array_begin(j);
	for (size_t i = 0; i < snap->n; i++) {
		const struct channel *ch = &snap->channels[i];
		const struct reading *rd = &snap->readings[i];
		json_object_begin(j);
		channel_json_reading(j, ch, rd);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

void api_handle_latest(struct request *r) {
	respond_snapshot_json(r, write_latest);
}

static void write_status(struct request *r, const struct live_snapshot *snap, struct json *j) {
	const struct api_context *ctx = r->ctx;
	const struct live_health *h = &snap->health;

	struct store_info info = {0};
	bool have_info = ctx->store && store_info(ctx->store, &info) == 0;
	// Counts only: store_channels() would also scan the last hours' rows for last_seen.
	size_t n_list = 0, present = 0;
	bool have_channels = ctx->store && store_channel_counts(ctx->store, &n_list, &present) == 0;

	json_object_begin(j);
	json_field_string(j, "version", THERMLOG_VERSION);
	json_field_string(j, "host", ctx->host);
	json_field_string(j, "board", ctx->board);
	json_field_time(j, "now", r->req->now);
	json_field_time_or_null(j, "started", h->started > 0, h->started);
	json_field_int_or_null(j, "uptime_s", h->started > 0, r->req->now - h->started);
	int64_t interval_ms = h->interval_ms > 0 ? h->interval_ms : ctx->cfg->interval_ms;
	json_field_double(j, "interval_s", (double)interval_ms / 1000.0);
	json_field_time_or_null(j, "last_cycle", snap->ts > 0, snap->ts);
	json_field_int_or_null(j, "last_cycle_ts", snap->ts > 0, snap->ts);
	json_field_int_or_null(j, "last_cycle_age_s", snap->ts > 0, r->req->now - snap->ts);
	json_field_double(j, "cycle_seconds", h->cycle_seconds);
	json_field_int(j, "cycles_since_start", h->cycles_total);
	json_field_int(j, "cycles_failed", h->cycles_failed);
	json_field_int(j, "cycles_missed", h->cycles_missed);
	json_field_int(j, "queued_cycles", h->queued_cycles);
	json_field_int(j, "database_reopens", h->database_reopens);
	json_field_time_or_null(j, "database_reopened_at", h->database_reopened_at > 0,
				h->database_reopened_at);
	json_field_int(j, "read_errors_total", h->read_errors_total);
	json_field_int(j, "errors_last_hour", h->errors_last_hour);
	json_field_string(j, "error_channels", h->error_channels);
	json_field_string(j, "clock", clock_state_name(h->clock));
	if (h->clock == CLOCK_STATE_UNKNOWN) {
		json_field_null(j, "clock_synchronized");
	} else {
		json_field_bool(j, "clock_synchronized", h->clock == CLOCK_STATE_SYNCED);
	}
	json_field_int(j, "channels_live", (int64_t)snap->n);
	json_field_int_or_null(j, "channels_present", have_channels, (int64_t)present);
	json_field_int_or_null(j, "channels_absent", have_channels, (int64_t)(n_list - present));
	json_field_int(j, "capacitors", (int64_t)snap->n_capacitors);
	if (ctx->local && ctx->db_path) { // where runs sent to this socket are recorded
		json_field_string(j, "database_path", ctx->db_path);
	}
	json_key(j, "database");
	if (have_info) {
		json_object_begin(j);
		json_field_int(j, "cycles", info.cycles);
		json_field_int(j, "unsynced_cycles", info.unsynced_cycles);
		json_field_time_or_null(j, "first_cycle", info.first_cycle > 0, info.first_cycle);
		json_field_time_or_null(j, "last_cycle", info.last_cycle > 0, info.last_cycle);
		json_field_int(j, "size_bytes", info.size_bytes);
		json_field_int(j, "bytes_written_total", h->bytes_written_total);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_object_end(j);
}

void api_handle_status(struct request *r) {
	respond_snapshot_json(r, write_status);
}

void api_handle_metrics(struct request *r) {
	// No parameters, but a Prometheus job's `params:` must not fail the scrape: ignored.
	struct live_snapshot snap = {0};
	live_snapshot(r->ctx->live, &snap);
	metrics_write(&snap, &r->resp->body);
	live_snapshot_finish(&snap);
	r->resp->status = 200;
	r->resp->content_type = METRICS_CONTENT_TYPE;
	r->resp->cache_control = "no-store";
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
		if (!api_param_window(r, &q->p.from, &q->p.to)) {
			return false;
		}
		q->p.has_from = q->p.has_to = true;
	}
	if (!api_param_bool(r, "include_unsynced", &q->p.include_unsynced)) {
		return false;
	}
	q->p.n_channels = api_param_all(r, "channel", q->channels, API_PARAMS_MAX);
	q->p.channels = q->channels;
	for (size_t i = 0; i < q->p.n_channels; i++) {
		if (q->channels[i][0] == '\0') {
			api_respond_error(r->resp, 400, "channel", "parameter 'channel' is empty");
			return false;
		}
	}
	if (q->p.n_channels == 0) {
		return true;
	}
	// The one resolution of a channel name (key, glob or label, with "did you mean"), as the
	// CLI's: its refusal is the 400.
	struct query_selection sel;
	char *err = NULL;
	int rc = query_select(r->ctx->store, q->channels, q->p.n_channels, &sel, &err);
	if (rc == -EINVAL) {
		api_respond_error(r->resp, 400, "channel", "parameter 'channel': %s", err);
	} else if (rc < 0) {
		api_respond_query_error(r, rc, err);
		return false;
	} else {
		query_selection_finish(&sel);
	}
	free(err);
	return rc == 0;
}

typedef int (*query_json_fn)(struct store *store, const struct query_params *p, struct json *out,
			     char **err);

/* Answers a JSON writer's result: 200 with the body it wrote, or the error's status. */
static void respond_query_result(struct request *r, int rc, char *err) {
	if (rc < 0) {
		api_respond_query_error(r, rc, err);
		return;
	}
	free(err);
	buf_putc(&r->resp->body, '\n');
	api_respond_json(r->resp, 200);
}

/*
 * respond_query_result(), except that the writer's error @bad about parameter @param (NULL when
 * the request gave none) is a 400 naming it, with the writer's message after @prefix.
 */
static void respond_param_result(struct request *r, int rc, char *err, int bad, const char *param,
				 const char *prefix) {
	if (rc == bad && param) {
		api_respond_error(r->resp, 400, param, "%s%s", prefix, err);
		free(err);
		return;
	}
	respond_query_result(r, rc, err);
}

static void run_query_json(struct request *r, query_json_fn fn, const struct query_params *p) {
	struct json j;
	json_init(&j, &r->resp->body, true);
	char *err = NULL;
	int rc = fn(r->ctx->store, p, &j, &err);
	respond_query_result(r, rc, err);
}

void api_handle_channels(struct request *r) {
	if (!api_check_params(r, NULL)) {
		return;
	}
	run_query_json(r, query_channels_json, NULL);
}

void api_handle_stats(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", true},
						  {"percentile", true},
						  {"include_unsynced", false},
						  {"weight", false},
						  {NULL, false}};
	struct query_request q;
	if (!api_check_params(r, specs) || !query_request_init(r, &q, true)) {
		return;
	}
	if (!api_param_percentiles(r, q.percentiles, QUERY_MAX_PERCENTILES, &q.p.n_percentiles)) {
		return;
	}
	const char *weight = api_param(r, "weight");
	if (weight && !query_weight_parse(weight, &q.p.weight)) {
		api_respond_error(r->resp, 400, "weight",
				  "parameter 'weight' must be 'samples' or 'time', not '%s'",
				  weight);
		return;
	}
	q.p.percentiles = q.percentiles;
	run_query_json(r, query_stats_json, &q.p);
}

void api_handle_throttle(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"domain", false},
						  {"episodes", false},
						  {NULL, false}};
	int64_t from, to;
	if (!api_check_params(r, specs) || !api_param_window(r, &from, &to)) {
		return;
	}
	// episodes=open lists only the episodes still open (the dashboard's "throttled now");
	// the domains' totals are the window's either way.
	const char *which = api_param(r, "episodes");
	if (which && strcmp(which, "all") != 0 && strcmp(which, "open") != 0) {
		api_respond_error(r->resp, 400, "episodes",
				  "parameter 'episodes' must be all or open, not '%s'", which);
		return;
	}
	struct throttle_report report;
	char *err = NULL;
	int rc = throttle_report_compute(r->ctx->store, from, to, api_param(r, "domain"), &report,
					 &err);
	if (rc == 0) {
		struct json j;
		json_init(&j, &r->resp->body, false);
		if (which && strcmp(which, "open") == 0) {
			throttle_report_keep_open(&report);
		}
		throttle_report_write_json(&report, &j);
		throttle_report_finish(&report);
	}
	// -EINVAL once the window is checked: a domain no one has
	respond_param_result(r, rc, err, -EINVAL, api_param(r, "domain") ? "domain" : NULL,
			     "parameter 'domain': ");
}

void api_handle_samples(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", true},
						  {"max_points", false},
						  {"include_unsynced", false},
						  {NULL, false}};
	struct query_request q;
	unsigned cap = api_max_points_cap(r);
	if (!api_check_params(r, specs) ||
	    !api_param_uint(r, "max_points", cap < 1000 ? cap : 1000, 1, cap, "http.max_points",
			    &q.p.max_points)) {
		return;
	}
	unsigned max_points = q.p.max_points;
	if (!query_request_init(r, &q, true)) {
		return;
	}
	q.p.max_points = max_points;
	run_query_json(r, query_samples_json, &q.p);
}

void api_handle_peak(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", false},
						  {"samples", false},
						  {"include_unsynced", false},
						  {NULL, false}};
	unsigned samples;
	unsigned cap = api_max_points_cap(r);
	if (!api_check_params(r, specs) ||
	    !api_param_uint(r, "samples", 30, 1, cap, "http.max_points", &samples)) {
		return;
	}
	if (!api_param(r, "channel")) {
		api_respond_error(
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

/*
 * The lifetime endpoints' from, to and include_unsynced: capacitor wear is about the whole
 * service life, so open ends by default and no window cap. False after a 400.
 */
static bool lifetime_request(struct request *r, int64_t *from, int64_t *to,
			     bool *include_unsynced) {
	*from = INT64_MIN;
	*to = INT64_MAX;
	if (!api_param_times(r, from, to)) {
		return false;
	}
	if (*from >= *to) {
		api_respond_error(r->resp, 400, "from", "parameter 'from' must be before 'to'");
		return false;
	}
	return api_param_bool(r, "include_unsynced", include_unsynced);
}

void api_handle_lifetime(struct request *r) {
	static const struct param_spec specs[] = {
		{"from", false}, {"to", false}, {"include_unsynced", false}, {NULL, false}};
	int64_t from, to;
	bool include_unsynced;
	if (!api_check_params(r, specs) || !lifetime_request(r, &from, &to, &include_unsynced)) {
		return;
	}
	struct json j;
	json_init(&j, &r->resp->body, true);
	char *err = NULL;
	int rc = lifetime_report_json(r->ctx->store, r->ctx->cfg, from, to, include_unsynced,
				      r->req->now, &j, &err);
	respond_query_result(r, rc, err);
}

void api_handle_lifetime_series(struct request *r) {
	static const struct param_spec specs[] = {{"from", false}, {"to", false}, {NULL, false}};
	int64_t from, to;
	bool include_unsynced = false;
	if (!api_check_params(r, specs) || !lifetime_request(r, &from, &to, &include_unsynced)) {
		return;
	}
	struct json j;
	json_init(&j, &r->resp->body, true);
	char *err = NULL;
	int rc = lifetime_series_json(r->ctx->store, r->ctx->cfg, from, to, r->req->now, &j, &err);
	respond_query_result(r, rc, err);
}

/* 'bin': the profile's bin width in kelvin; false after a 400 naming it. */
static bool param_bin(struct request *r, double *bin_k) {
	const char *v = api_param(r, "bin");
	*bin_k = LIFETIME_PROFILE_BIN_K;
	if (!v) {
		return true;
	}
	char *end;
	errno = 0;
	double k = strtod(v, &end);
	if (end == v || *end || errno == ERANGE) {
		api_respond_error(r->resp, 400, "bin",
				  "parameter 'bin' must be a bin width in kelvin, not '%s'", v);
		return false;
	}
	char *err = NULL;
	if (!lifetime_profile_bin_check(k, "parameter 'bin'", &err)) {
		api_respond_error(r->resp, 400, "bin", "%s", err);
		free(err);
		return false;
	}
	*bin_k = k;
	return true;
}

void api_handle_lifetime_profile(struct request *r) {
	static const struct param_spec specs[] = {
		{"from", false}, {"to", false},        {"include_unsynced", false},
		{"bin", false},  {"capacitor", false}, {NULL, false}};
	int64_t from, to;
	bool include_unsynced;
	double bin_k;
	if (!api_check_params(r, specs) || !lifetime_request(r, &from, &to, &include_unsynced) ||
	    !param_bin(r, &bin_k)) {
		return;
	}
	struct json j;
	json_init(&j, &r->resp->body, true);
	char *err = NULL;
	int rc = lifetime_profile_json(r->ctx->store, r->ctx->cfg, from, to, include_unsynced,
				       r->req->now, bin_k, api_param(r, "capacitor"), &j, &err);
	respond_param_result(r, rc, err, -E2BIG, "bin", ""); // too many bins of that width
}

void api_handle_export(struct request *r) {
	static const struct param_spec specs[] = {{"from", false},
						  {"to", false},
						  {"channel", true},
						  {"format", false},
						  {"include_unsynced", false},
						  {NULL, false}};
	if (!api_check_params(r, specs)) {
		return;
	}
	enum export_format format = EXPORT_FORMAT_LONG;
	const char *f = api_param(r, "format");
	if (f && strcmp(f, "wide") == 0) {
		format = EXPORT_FORMAT_WIDE;
	} else if (f && strcmp(f, "long") != 0) {
		api_respond_error(r->resp, 400, "format",
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
		api_respond_query_error(r, -EINVAL, err);
		return;
	}
	free(err);
	char from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
	api_compact_time(from, q.p.from);
	api_compact_time(to, q.p.to);
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
