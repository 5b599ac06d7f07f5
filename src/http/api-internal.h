/*
 * The API's private header, for src/http/api*.c alone (the contract is api.h): a request as
 * the handlers see it, the helpers they share (api-request.c) and the handlers the route
 * table of api.c dispatches to.
 */
#ifndef API_INTERNAL_H
#define API_INTERNAL_H

#include "api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timefmt.h"

struct web_asset;

#define JSON_TYPE "application/json"

/** One decoded query parameter. */
struct api_param {
	char *key;
	char *value; // NULL for "?key" without '='
};

/** A parsed request target. */
struct api_target {
	char *path; // percent-decoded
	struct api_param params[API_PARAMS_MAX];
	size_t n_params;
};

/**
 * Splits and percent-decodes a request target ("+" is a space in the query). Rejects
 * malformed escapes, NUL bytes, control characters and more than API_PARAMS_MAX parameters
 * with false and a message naming the part (*err, newly allocated, caller frees).
 */
bool api_parse_target(const char *target, struct api_target *out, char **err);
void api_target_finish(struct api_target *t); // accepts a zeroed struct

/** Constant-time comparison of the whole of @a and @b (time depends on @b's length only). */
bool api_token_equal(const char *a, const char *b);

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
	int64_t id; // the run or campaign id a route's "{id}" matched
};

/* api-request.c */
bool api_check_params(struct request *r, const struct param_spec *specs);
const char *api_param(const struct request *r, const char *name);
bool api_param_bool(struct request *r, const char *name, bool *out);
bool api_param_times(struct request *r, int64_t *from, int64_t *to);
bool api_param_uint(struct request *r, const char *name, unsigned def, unsigned min, unsigned max,
		    const char *limit_name, unsigned *out);
bool api_param_window(struct request *r, int64_t *from, int64_t *to);
void api_respond_error(struct api_response *resp, unsigned status, const char *param,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void api_respond_json(struct api_response *resp, unsigned status);
/** Maps a query error to a response (400, 404 or 500) and frees @err. */
void api_respond_query_error(struct request *r, int rc, char *err);
/** The values of the repeatable parameter @name, in order (at most @max); returns their count. */
size_t api_param_all(const struct request *r, const char *name, const char **out, size_t max);
/** The repeatable 'percentile' parameter: at most @max numbers from 0 to 100; false after a 400. */
bool api_param_percentiles(struct request *r, double *out, size_t max, size_t *n);
/** The repeatable 'tag' parameter (KEY=VALUE) as a runs filter's JSON object in @json (nothing
 * when absent); false after a 400. */
bool api_param_tags(struct request *r, struct buf *json);
/** The largest max_points / samples a request may ask for (http.max_points, 0 = 5000). */
unsigned api_max_points_cap(const struct request *r);
/** @ts as "20260820T000000Z": an ISO time without the characters a file name dislikes. */
void api_compact_time(char out[TIMEFMT_ISO_LEN], int64_t ts);

/* api-auth.c */
bool api_authorized(const struct api_context *ctx, const struct api_request *req, const char *path,
		    struct api_response *resp);
void api_handle_login(struct request *r);

/* api-assets.c */
void api_handle_asset(struct request *r, const struct web_asset *asset);

/* api-get.c */
void api_handle_channels(struct request *r);
void api_handle_export(struct request *r);
void api_handle_latest(struct request *r);
void api_handle_lifetime(struct request *r);
void api_handle_lifetime_profile(struct request *r);
void api_handle_lifetime_series(struct request *r);
void api_handle_metrics(struct request *r);
void api_handle_peak(struct request *r);
void api_handle_samples(struct request *r);
void api_handle_stats(struct request *r);
void api_handle_throttle(struct request *r); // GET /api/v1/throttle
void api_handle_status(struct request *r);

/* api-report.c */
void api_handle_report(struct request *r); // GET /api/v1/report

/* api-runs.c */
void api_handle_runs(struct request *r);
void api_handle_runs_stats(struct request *r);
void api_handle_run_show(struct request *r);      // GET /api/v1/runs/{id}
void api_handle_run_samples(struct request *r);   // GET /api/v1/runs/{id}/samples
void api_handle_run_start(struct request *r);     // POST /api/v1/runs
void api_handle_run_stop(struct request *r);      // POST /api/v1/runs/{id}/stop
void api_handle_run_metrics(struct request *r);   // POST /api/v1/runs/{id}/metrics
void api_handle_campaigns(struct request *r);     // GET /api/v1/campaigns
void api_handle_campaign_show(struct request *r); // GET /api/v1/campaigns/{id}

#endif
