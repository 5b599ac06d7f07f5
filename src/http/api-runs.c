/*
 * The API's runs: the list, the per-label statistics, a run and its fast samples, and the
 * write endpoints (a start, a stop, a run's metrics) whose bodies the daemon's loop applies.
 */
#include "api-internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign.h"
#include "json.h"
#include "jsonread.h"
#include "runs.h"
#include "runtag.h"
#include "runwire.h"
#include "store.h"
#include "timefmt.h"
#include "xalloc.h"

/* runs: read side ------------------------------------------------------------------------- */

/*
 * Reads label, from, to and the tags into @f (times as everywhere in the API; the tags' JSON in
 * @tags, which must outlive @f); false after a 400.
 */
static bool runs_filter(struct request *r, struct store_run_filter *f, struct buf *tags) {
	*f = (struct store_run_filter){.label = api_param(r, "label")};
	int64_t from = 0, to = 0;
	if (!api_param_times(r, &from, &to) || !api_param_tags(r, tags)) {
		return false;
	}
	f->tags = tags->data;
	if (api_param(r, "from")) {
		f->from_ms = from * 1000;
		f->has_from = true;
	}
	if (api_param(r, "to")) {
		f->to_ms = to * 1000;
		f->has_to = true;
	}
	if (f->has_from && f->has_to && f->from_ms >= f->to_ms) {
		api_respond_error(r->resp, 400, "from", "parameter 'from' must be before 'to'");
		return false;
	}
	char *err = NULL;
	int rc = runs_label_check(r->ctx->store, f->label, &err);
	if (rc == -EINVAL) {
		api_respond_error(r->resp, 400, "label", "parameter 'label': %s", err);
	} else if (rc < 0) {
		api_respond_query_error(r, rc, err);
		err = NULL;
	}
	free(err);
	return rc == 0;
}

static void respond_runs(struct request *r, int rc, const char *what) {
	if (rc < 0) {
		api_respond_query_error(r, rc, xasprintf("%s: %s", what, strerror(-rc)));
		return;
	}
	buf_putc(&r->resp->body, '\n');
	api_respond_json(r->resp, 200);
}

void api_handle_runs(struct request *r) {
	static const struct param_spec specs[] = {{"label", false}, {"from", false}, {"to", false},
						  {"limit", false}, {"tag", true},   {NULL, false}};
	struct store_run_filter f;
	struct buf tags = {0};
	unsigned limit;
	if (api_check_params(r, specs) && runs_filter(r, &f, &tags) &&
	    api_param_uint(r, "limit", API_RUNS_LIMIT, 1, API_RUNS_LIMIT_MAX, NULL, &limit)) {
		f.limit = limit;
		respond_runs(r, runs_list_json(r->ctx->store, &f, true, &r->resp->body),
			     "could not read the runs");
	}
	buf_finish(&tags);
}

void api_handle_runs_stats(struct request *r) {
	static const struct param_spec specs[] = {
		{"label", false},     {"from", false}, {"to", false}, {"over", false},
		{"percentile", true}, {"tag", true},   {"by", false}, {NULL, false}};
	struct runs_stats_options opt = {.over_s = NAN, .by = api_param(r, "by")};
	struct buf tags = {0};
	const char *over = api_param(r, "over");
	int64_t ms = 0;
	double percentiles[API_PARAMS_MAX];
	if (!api_check_params(r, specs) || !runs_filter(r, &opt.filter, &tags)) {
		goto out;
	}
	if (opt.by && !runtag_name_valid(opt.by)) {
		api_respond_error(r->resp, 400, "by",
				  "parameter 'by': a tag key: " RUNTAG_TEXT_RULE);
		goto out;
	}
	if (over && !timefmt_parse_duration_ms(over, &ms)) {
		api_respond_error(r->resp, 400, "over",
				  "parameter 'over' must be a duration like 30m or 1h30m, not '%s'",
				  over);
		goto out;
	}
	if (over) {
		opt.over_s = (double)ms / 1000.0;
	}
	if (!api_param_percentiles(r, percentiles, API_PARAMS_MAX, &opt.n_percentiles)) {
		goto out;
	}
	opt.percentiles = percentiles;
	struct runstats_result res;
	struct testfig_result board = {0};
	int rc = runs_stats(r->ctx->store, &opt, &res);
	if (rc == 0) {
		rc = runs_board(r->ctx->store, &opt, &board);
	}
	if (rc == 0) {
		runs_stats_write_json(&res, &board, &opt, true, &r->resp->body);
	}
	runstats_result_finish(&res);
	testfig_result_finish(&board);
	respond_runs(r, rc, "could not compute the run statistics");
out:
	buf_finish(&tags);
}

void api_handle_run_show(struct request *r) {
	int64_t id = r->id;
	if (!api_check_params(r, NULL)) {
		return;
	}
	int rc = runs_show_json(r->ctx->store, r->ctx->cfg, id, true, &r->resp->body);
	if (rc == -ENOENT) {
		api_respond_error(r->resp, 404, NULL, "no run %lld", (long long)id);
		return;
	}
	respond_runs(r, rc, "could not read the run");
}

void api_handle_run_samples(struct request *r) {
	static const struct param_spec specs[] = {{"max_points", false}, {NULL, false}};
	int64_t id = r->id;
	unsigned cap = api_max_points_cap(r), max_points;
	if (!api_check_params(r, specs) ||
	    !api_param_uint(r, "max_points", cap < 1000 ? cap : 1000, 1, cap, "http.max_points",
			    &max_points)) {
		return;
	}
	int rc = runs_samples_json(r->ctx->store, id, max_points, true, &r->resp->body);
	if (rc == -ENOENT) {
		api_respond_error(r->resp, 404, NULL, "no run %lld", (long long)id);
		return;
	}
	respond_runs(r, rc, "could not read the run's fast samples");
}

/* --- campaigns --------------------------------------------------------------------------- */

void api_handle_campaigns(struct request *r) {
	if (!api_check_params(r, NULL)) {
		return;
	}
	struct json j;
	json_init(&j, &r->resp->body, true);
	respond_runs(r, campaign_list_json(r->ctx->store, r->ctx->cfg->procfs_root, &j),
		     "could not read the campaigns");
}

void api_handle_campaign_show(struct request *r) {
	int64_t id = r->id;
	if (!api_check_params(r, NULL)) {
		return;
	}
	struct campaign_view v;
	char *err = NULL;
	int rc = campaign_view_load(r->ctx->store, r->ctx->cfg->procfs_root, id, &v, &err);
	if (rc == -ENOENT) {
		api_respond_error(r->resp, 404, NULL, "no campaign %lld", (long long)id);
	} else if (rc < 0) {
		// A stored suite that no longer reads is the database's fault, not the request's.
		api_respond_query_error(
			r, rc == -EINVAL ? -EIO : rc,
			xasprintf("campaign %lld: %s", (long long)id, err ? err : strerror(-rc)));
	} else {
		struct json j;
		json_init(&j, &r->resp->body, true);
		campaign_view_json(&v, &j);
		respond_runs(r, 0, "could not read the campaign");
	}
	free(err);
	campaign_view_finish(&v);
}

/* --- runs: the write endpoints ------------------------------------------------------------ */

/*
 * POST /api/v1/runs and POST /api/v1/runs/{id}/stop. Their bodies are read with the strict
 * JSON reader (jsonread.h) and checked member by member by runwire.h, which also writes them
 * for thermlog run; the daemon does the rest through ctx->runs.
 */

/* Parses the body as a JSON object; false with a 400 (or 413) answered. */
static bool runs_body(struct request *r, struct jsonread_node **root) {
	const struct api_request *req = r->req;
	*root = NULL;
	if (req->body_len > API_RUN_BODY_MAX) {
		api_respond_error(r->resp, 413, NULL, "the body exceeds %d bytes",
				  API_RUN_BODY_MAX);
		return false;
	}
	if (req->body_len == 0) {
		return true; // no body: no members
	}
	struct jsonread_error err;
	*root = jsonread_parse(req->body, req->body_len, API_RUN_BODY_MAX, &err);
	if (!*root) {
		api_respond_error(r->resp, 400, NULL, "body:%zu:%zu: %s", err.line, err.col,
				  err.msg);
		return false;
	}
	if ((*root)->kind != JSONREAD_OBJECT) {
		api_respond_error(r->resp, 400, NULL,
				  "body:%zu:%zu: expected a JSON object, got %s", (*root)->line,
				  (*root)->col, jsonread_describe(*root));
		jsonread_node_free(*root);
		*root = NULL;
		return false;
	}
	return true;
}

static void runs_start(struct request *r, const struct jsonread_node *root) {
	struct runwire_start_read in;
	char *msg = NULL;
	if (!runwire_start_read(root, &in, &msg)) {
		api_respond_error(r->resp, 400, NULL, "%s", msg);
		goto out;
	}
	struct runwire_start run = in.s; // no "pid": the caller's own process is watched
	run.pid = in.s.has_pid ? in.s.pid : r->req->peer_pid;
	run.has_pid = true;
	int64_t id = 0;
	int rc = r->ctx->runs->start(r->ctx->runs->ctx, &run, &id, &msg);
	if (rc < 0) {
		unsigned status = rc == -EINVAL ? 400 : rc == -EBUSY ? 429 : 503;
		api_respond_error(r->resp, status, NULL, "%s",
				  msg ? msg : "the run could not be recorded");
		goto out;
	}
	buf_clear(&r->resp->body);
	struct json j;
	json_init(&j, &r->resp->body, false);
	json_object_begin(&j);
	json_field_int(&j, "id", id);
	json_object_end(&j);
	buf_putc(&r->resp->body, '\n');
	api_respond_json(r->resp, 201);
out:
	free(msg);
	runwire_start_read_finish(&in);
}

/*
 * The answer of a write the loop applied to a run: 200 with @out (the run's object), or the
 * error: 404 no such run, 409 ended already or a metric's unit, 400 bad input, 503 not now.
 */
static void respond_write(struct request *r, int rc, const char *msg, const struct buf *out,
			  const char *not_done) {
	if (rc < 0) {
		unsigned status = rc == -ENOENT                    ? 404
				  : rc == -EALREADY || rc == -EDOM ? 409
				  : rc == -EINVAL                  ? 400
								   : 503;
		api_respond_error(r->resp, status, NULL, "%s", msg ? msg : not_done);
		return;
	}
	buf_clear(&r->resp->body);
	buf_append(&r->resp->body, out->data ? out->data : "", out->len);
	buf_putc(&r->resp->body, '\n');
	api_respond_json(r->resp, 200);
}

static void runs_stop(struct request *r, const struct jsonread_node *root, int64_t id) {
	struct runwire_stop stop;
	char *msg = NULL;
	if (!runwire_stop_read(root, &stop, &msg)) {
		api_respond_error(r->resp, 400, NULL, "%s", msg);
		runwire_stop_finish(&stop);
		free(msg);
		return;
	}
	struct buf out = {0};
	int rc = r->ctx->runs->stop(r->ctx->runs->ctx, id, &stop, &out, &msg);
	respond_write(r, rc, msg, &out, "the stop was not recorded");
	runwire_stop_finish(&stop);
	free(msg);
	buf_finish(&out);
}

static void runs_metrics(struct request *r, const struct jsonread_node *root, int64_t id) {
	struct runmetric_set metrics;
	char *msg = NULL;
	struct buf out = {0};
	if (!runwire_metrics_read(root, &metrics, &msg)) {
		api_respond_error(r->resp, 400, NULL, "%s", msg);
		goto out;
	}
	int rc = r->ctx->runs->metrics
			 ? r->ctx->runs->metrics(r->ctx->runs->ctx, id, &metrics, &out, &msg)
			 : -EAGAIN;
	respond_write(r, rc, msg, &out, "the metrics were not recorded");
out:
	runmetric_set_finish(&metrics);
	free(msg);
	buf_finish(&out);
}

/*
 * A write's body, after the rule for who may write: the Unix socket's peers, or over TCP the
 * bearer token itself. NULL, answered, when there is none to act on.
 */
static struct jsonread_node *run_write_body(struct request *r) {
	const struct api_context *ctx = r->ctx;
	// Over TCP a write needs the bearer token itself: never anonymous, never a browser's
	// cookie (which another site could make the browser send).
	if (!ctx->local && (!ctx->token || !r->req->authorization)) {
		api_respond_error(
			r->resp, 403, NULL,
			"runs are recorded through the Unix socket (runs.socket), or over TCP "
			"with http.token and 'Authorization: Bearer TOKEN'");
		return NULL;
	}
	if (!ctx->runs) {
		api_respond_error(r->resp, 503, NULL, "this server does not record runs");
		return NULL;
	}
	struct jsonread_node *root;
	return runs_body(r, &root) ? root : NULL;
}

void api_handle_run_start(struct request *r) {
	struct jsonread_node *root = run_write_body(r);
	if (root) {
		runs_start(r, root);
		jsonread_node_free(root);
	}
}

void api_handle_run_stop(struct request *r) {
	struct jsonread_node *root = run_write_body(r);
	if (root) {
		runs_stop(r, root, r->id);
		jsonread_node_free(root);
	}
}

void api_handle_run_metrics(struct request *r) {
	struct jsonread_node *root = run_write_body(r);
	if (root) {
		runs_metrics(r, root, r->id);
		jsonread_node_free(root);
	}
}
