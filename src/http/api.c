/*
 * The HTTP API as a function: request target parsing and validation, bearer-token checks,
 * routing, JSON endpoints, /metrics and the embedded dashboard. Read-only by construction:
 * the store connection it gets is opened read-only and no handler writes. This file routes
 * (the route table and api_handle()); api-request.c parses the target, reads the parameters
 * and writes the responses every handler shares; the endpoints are in api-get.c,
 * api-report.c, api-runs.c, api-auth.c (the sign-in) and api-assets.c.
 */
#include "api-internal.h"

#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "web.h"
#include "xalloc.h"

/* Routing ---------------------------------------------------------------------------------- */

/* What a route needs before its handler runs. */
enum route_needs {
	ROUTE_OPEN,  // nothing: answered before authentication (the sign-in)
	ROUTE_AUTH,  // an authorized request
	ROUTE_STORE, // that and the database
};

struct route {
	const char *method;  // "GET" (which answers HEAD too) or "POST"
	const char *pattern; // the path; "{id}" stands for a run or campaign id (request.id)
	void (*handle)(struct request *r);
	enum route_needs needs;
	enum api_cost cost; // the first route of a path gives the path's (api_target_cost())
};

static const struct route routes[] = {
	{"GET", "/login", api_handle_login, ROUTE_OPEN, API_COST_NONE},
	{"POST", "/login", api_handle_login, ROUTE_OPEN, API_COST_NONE},
	{"GET", "/api/v1/status", api_handle_status, ROUTE_AUTH, API_COST_LIGHT},
	{"GET", "/api/v1/latest", api_handle_latest, ROUTE_AUTH, API_COST_NONE},
	{"GET", "/api/v1/channels", api_handle_channels, ROUTE_STORE, API_COST_LIGHT},
	{"GET", "/api/v1/stats", api_handle_stats, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/samples", api_handle_samples, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/peak", api_handle_peak, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/lifetime", api_handle_lifetime, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/lifetime/profile", api_handle_lifetime_profile, ROUTE_STORE,
	 API_COST_HEAVY},
	{"GET", "/api/v1/lifetime/series", api_handle_lifetime_series, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/export.csv", api_handle_export, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/runs", api_handle_runs, ROUTE_STORE, API_COST_HEAVY},
	{"POST", "/api/v1/runs", api_handle_run_start, ROUTE_AUTH, API_COST_HEAVY},
	{"GET", "/api/v1/runs/stats", api_handle_runs_stats, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/runs/{id}", api_handle_run_show, ROUTE_STORE, API_COST_LIGHT},
	{"GET", "/api/v1/runs/{id}/samples", api_handle_run_samples, ROUTE_STORE, API_COST_HEAVY},
	{"POST", "/api/v1/runs/{id}/stop", api_handle_run_stop, ROUTE_AUTH, API_COST_NONE},
	{"POST", "/api/v1/runs/{id}/metrics", api_handle_run_metrics, ROUTE_AUTH, API_COST_NONE},
	{"GET", "/api/v1/campaigns", api_handle_campaigns, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/campaigns/{id}", api_handle_campaign_show, ROUTE_STORE, API_COST_LIGHT},
	{"GET", "/api/v1/report", api_handle_report, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/throttle", api_handle_throttle, ROUTE_STORE, API_COST_LIGHT},
	{"GET", "/metrics", api_handle_metrics, ROUTE_AUTH, API_COST_NONE},
};

#define ROUTES_N      (sizeof(routes) / sizeof(routes[0]))
#define ID_DIGITS_MAX 18 // a run id: a positive decimal that fits in 63 bits

/* Whether @path matches @pattern; a "{id}" in it matches a run id, into *@id. */
static bool route_matches(const char *pattern, const char *path, int64_t *id) {
	const char *hole = strstr(pattern, "{id}");
	size_t head = hole ? (size_t)(hole - pattern) : strlen(pattern);
	if (strncmp(pattern, path, head) != 0) {
		return false;
	}
	if (!hole) {
		return path[head] == '\0';
	}
	const char *digits = path + head;
	size_t n = strspn(digits, "0123456789");
	if (n == 0 || n > ID_DIGITS_MAX || digits[0] == '0' || strcmp(digits + n, hole + 4) != 0) {
		return false;
	}
	*id = strtoll(digits, NULL, 10);
	return true;
}

static bool method_is(const char *route_method, const char *method) {
	return strcmp(route_method, method) == 0 ||
	       (strcmp(route_method, "GET") == 0 && strcmp(method, "HEAD") == 0);
}

/*
 * The route for @method at @path (*@id its run id), or NULL; *@first the first route of the
 * path whatever its method (NULL: no route has it), *@allow the methods the path's routes
 * take ("GET, HEAD", "GET, HEAD, POST" or "POST").
 */
static const struct route *route_find(const char *method, const char *path, int64_t *id,
				      const struct route **first, const char **allow) {
	const struct route *found = NULL;
	bool get = false, post = false;
	*first = NULL;
	for (size_t i = 0; i < ROUTES_N; i++) {
		int64_t v = 0;
		if (!route_matches(routes[i].pattern, path, &v)) {
			continue;
		}
		*first = *first ? *first : &routes[i];
		get = get || strcmp(routes[i].method, "GET") == 0;
		post = post || strcmp(routes[i].method, "POST") == 0;
		if (!found && method_is(routes[i].method, method)) {
			found = &routes[i];
			*id = v;
		}
	}
	*allow = get && post ? "GET, HEAD, POST" : post ? "POST" : "GET, HEAD";
	return found;
}

enum api_cost api_target_cost(const char *target) {
	struct api_target t;
	char *err = NULL;
	enum api_cost cost = API_COST_NONE;
	if (!api_parse_target(target, &t, &err)) {
		free(err);
		return cost; // answered with a 400 before anything is read
	}
	int64_t id;
	const struct route *first;
	const char *allow;
	route_find("GET", t.path, &id, &first, &allow);
	cost = first ? first->cost : cost;
	api_target_finish(&t);
	return cost;
}

/* A 405 for @method at a path whose routes take @allow. */
static void respond_method(struct request *r, bool path_known, const char *allow) {
	if (!path_known || strcmp(allow, "GET, HEAD") == 0) {
		// One rule for every path no route writes to, known or not: read-only.
		api_respond_error(r->resp, 405, NULL,
				  "method %s not allowed: this API is read-only (GET, HEAD)",
				  r->req->method);
		r->resp->allow = "GET, HEAD";
		return;
	}
	api_respond_error(r->resp, 405, NULL, "method %s not allowed on %s (%s)", r->req->method,
			  r->target.path, strcmp(allow, "POST") == 0 ? "POST" : "GET, HEAD, POST");
	r->resp->allow = allow;
}

void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp) {
	if (!api_target_within_limits(req->target, resp)) {
		return;
	}
	struct request r = {.ctx = ctx, .req = req, .resp = resp};
	char *err = NULL;
	if (!api_parse_target(req->target, &r.target, &err)) {
		api_respond_error(resp, 400, NULL, "%s", err);
		free(err);
		return;
	}
	const struct route *first;
	const char *allow;
	const struct route *route = route_find(req->method, r.target.path, &r.id, &first, &allow);
	bool path_known = first != NULL;
	if (first && first->needs == ROUTE_OPEN) {
		if (route) {
			route->handle(&r); // the sign-in: before authentication
		} else {
			respond_method(&r, path_known, allow);
		}
		goto out;
	}
	if (!ctx->local && !api_authorized(ctx, req, r.target.path, resp)) {
		goto out;
	}
	bool read = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	bool api_path = strncmp(r.target.path, "/api/", 5) == 0;
	// The dashboard owns every path outside /api/ and /metrics that no route has.
	const struct web_asset *asset = NULL;
	if (!path_known && read && !api_path) {
		asset = web_asset_find(r.target.path);
	}
	// A path no route has is a 404 for a method the API takes there (a write to a run that
	// is no id: the path is wrong); the dashboard's paths and other methods are read-only.
	bool api_method = read || (api_path && strcmp(req->method, "POST") == 0);
	if (asset) {
		api_handle_asset(&r, asset);
	} else if (!route && (path_known || !api_method)) {
		respond_method(&r, path_known, allow);
	} else if (!route) {
		api_respond_error(resp, 404, NULL, "no such path: %s", r.target.path);
	} else if (route->needs == ROUTE_STORE && !ctx->store) {
		api_respond_error(resp, 503, NULL,
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

void api_database_idle(struct api_database *db) {
	store_release_memory(db->store);
}

void api_database_finish(struct api_database *db) {
	store_close(db->store);
	free(db->path);
	*db = (struct api_database){0};
}
