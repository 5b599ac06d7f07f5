/*
 * GET /api/v1/report: `thermlog report`'s document (report.h) over the daemon's database and
 * configuration, the same bytes as the CLI for the same arguments, as an attachment.
 */
#include "api-internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lifetime-profile.h"
#include "query.h"
#include "report.h"
#include "store.h"
#include "timefmt.h"
#include "xalloc.h"

/* 'lifetime': 0 (none), 1 (added) or only; false after a 400 naming it. */
static bool param_lifetime(struct request *r, enum report_lifetime *out) {
	const char *v = api_param(r, "lifetime");
	*out = REPORT_LIFETIME_NONE;
	if (!v || strcmp(v, "0") == 0 || strcmp(v, "false") == 0) {
		return true;
	}
	if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) {
		*out = REPORT_LIFETIME_ADD;
	} else if (strcmp(v, "only") == 0) {
		*out = REPORT_LIFETIME_ONLY;
	} else {
		api_respond_error(r->resp, 400, "lifetime",
				  "parameter 'lifetime' must be 0, 1 or only, not '%s'", v);
		return false;
	}
	return true;
}

/*
 * A window left open at its start covers at most http.max_window_s before its end (the
 * stored history's when that is open too): the whole history when it is shorter, as the CLI.
 */
static bool bound_start(struct request *r, struct report_options *opt) {
	int64_t max = r->ctx->cfg->http.max_window_s;
	struct store_info info;
	if (opt->has_from || max <= 0) {
		return true;
	}
	if (store_info(r->ctx->store, &info) < 0) {
		api_respond_error(r->resp, 500, NULL, "could not read the stored history");
		return false;
	}
	int64_t to = opt->has_to ? opt->to : info.last_cycle + 1;
	if (info.cycles > 0 && to - max > info.first_cycle) {
		opt->has_from = true;
		opt->from = to - max;
	}
	return true;
}

/*
 * The window as `thermlog report --from --to` reads it: none given is the whole history; an
 * end left out is now. Every window is bounded by http.max_window_s: one with a start is
 * refused when longer, one without starts at most that long before its end.
 */
static bool report_window(struct request *r, struct report_options *opt) {
	int64_t from = INT64_MIN, to = r->req->now;
	if (!api_param_times(r, &from, &to)) {
		return false;
	}
	opt->has_from = api_param(r, "from") != NULL;
	opt->has_to = api_param(r, "to") != NULL;
	if (!opt->has_from && !opt->has_to) {
		return bound_start(r, opt);
	}
	static const char *const names[] = {"'from'", "'to'"};
	char *err = NULL;
	int bad;
	if (query_window_check(from, to, !opt->has_to,
			       opt->has_from ? r->ctx->cfg->http.max_window_s : 0, names, &bad,
			       &err) < 0) {
		api_respond_error(r->resp, 400, from >= to || opt->has_from ? "from" : "to", "%s",
				  err);
		free(err);
		return false;
	}
	opt->from = from;
	opt->to = to;
	opt->has_to = opt->has_to || opt->has_from; // as the CLI: --from alone ends now
	return bound_start(r, opt);
}

static bool report_params(struct request *r, struct report_options *opt, enum report_format *fmt,
			  const char **labels) {
	const char *f = api_param(r, "format");
	*fmt = REPORT_HTML;
	if (f && !report_format_parse(f, fmt)) {
		api_respond_error(r->resp, 400, "format",
				  "parameter 'format' must be html or md, not '%s'", f);
		return false;
	}
	if (!report_window(r, opt) || !param_lifetime(r, &opt->lifetime)) {
		return false;
	}
	const char *w = api_param(r, "weight");
	if (w && !query_weight_parse(w, &opt->weight)) {
		api_respond_error(r->resp, 400, "weight",
				  "parameter 'weight' must be samples or time, not '%s'", w);
		return false;
	}
	const char *over = api_param(r, "over");
	int64_t ms;
	if (over && !timefmt_parse_duration_ms(over, &ms)) {
		api_respond_error(r->resp, 400, "over",
				  "parameter 'over' must be a duration (30m, 1h30m, 90s), not '%s'",
				  over);
		return false;
	}
	opt->over_s = over ? (double)ms / 1000.0 : NAN;
	for (size_t i = 0; i < r->target.n_params; i++) {
		if (strcmp(r->target.params[i].key, "label") != 0) {
			continue;
		}
		if (!*r->target.params[i].value) {
			api_respond_error(r->resp, 400, "label", "parameter 'label' is empty");
			return false;
		}
		labels[opt->n_labels++] = r->target.params[i].value;
	}
	opt->labels = labels;
	return true;
}

void api_handle_report(struct request *r) {
	static const struct param_spec specs[] = {
		{"format", false},       {"from", false},   {"to", false},       {"label", true},
		{"over", false},         {"weight", false}, {"lifetime", false}, {"tag", true},
		{"peak_channel", false}, {NULL, false}};
	if (!api_check_params(r, specs)) {
		return;
	}
	const char *labels[API_PARAMS_MAX];
	struct report_options opt = {
		.cfg = r->ctx->cfg, .now = r->req->now, .max_bytes = API_REPORT_MAX};
	enum report_format format;
	struct buf tags = {0};
	if (!report_params(r, &opt, &format, labels) || !api_param_tags(r, &tags)) {
		buf_finish(&tags);
		return;
	}
	opt.tags = tags.data;
	opt.peak_channel = api_param(r, "peak_channel");
	const char *db = r->ctx->db_path ? r->ctx->db_path : r->ctx->cfg->database;
	struct store *stores[1] = {r->ctx->store};
	const char *files[1] = {db ? db : "thermlog.db"};
	struct report rep;
	char *err = NULL;
	int rc = report_compute(stores, files, 1, &opt, &rep, &err);
	if (rc == -EINVAL) { // a label no run has, a peak channel no channel is
		const char *bad = rep.bad_param ? rep.bad_param : "label";
		api_respond_error(r->resp, 400, bad, "parameter '%s': %s", bad, err);
	} else if (rc < 0) {
		api_respond_error(r->resp, 500, NULL, "%s", err);
	} else {
		report_write(&rep, format, NULL, &r->resp->body);
		const struct report_board *b = &rep.boards[0];
		char from[TIMEFMT_ISO_LEN] = "all", to[TIMEFMT_ISO_LEN] = "all";
		if (b->has_stats) {
			api_compact_time(from, b->stats.from);
			api_compact_time(to, b->stats.to);
		}
		r->resp->status = 200;
		r->resp->content_type = format == REPORT_HTML ? "text/html; charset=utf-8"
							      : "text/markdown; charset=utf-8";
		r->resp->cache_control = "no-store";
		r->resp->filename =
			xasprintf("thermlog-%s-%s-%s.%s",
				  opt.lifetime == REPORT_LIFETIME_ONLY ? "capacitors" : "report",
				  from, to, format == REPORT_HTML ? "html" : "md");
	}
	free(err);
	report_finish(&rep);
	buf_finish(&tags);
}
