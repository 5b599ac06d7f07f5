/*
 * The HTTP API as a function: request target parsing and validation, bearer-token checks,
 * routing, JSON endpoints, /metrics and the embedded dashboard. Read-only by construction:
 * the store connection it gets is opened read-only and no handler writes. This file parses,
 * checks parameters and routes; the endpoints are in api-get.c, api-runs.c, api-auth.c (the
 * sign-in) and api-assets.c.
 */
#include "api-internal.h"

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
		api_respond_error(resp, 414, NULL, "request target longer than %d bytes",
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
		api_respond_error(resp, 400, NULL, "more than %d query parameters", API_PARAMS_MAX);
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

void api_respond_json(struct api_response *resp, unsigned status) {
	resp->status = status;
	resp->content_type = JSON_TYPE;
	resp->cache_control = "no-store";
}

/* An error is {"error": "...", "parameter": "..."}: the message names the parameter too. */
void api_respond_error(struct api_response *resp, unsigned status, const char *param,
		       const char *fmt, ...) {
	buf_clear(&resp->body);
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	struct json j;
	json_init(&j, &resp->body, false);
	json_object_begin(&j);
	json_field_string(&j, "error", msg);
	if (param) {
		json_field_string(&j, "parameter", param);
	}
	json_object_end(&j);
	buf_putc(&resp->body, '\n');
	free(msg);
	api_respond_json(resp, status);
}

/* Parameters ------------------------------------------------------------------------------- */

bool api_check_params(struct request *r, const struct param_spec *specs) {
	const struct api_target *t = &r->target;
	for (size_t i = 0; i < t->n_params; i++) {
		const struct param_spec *spec = NULL;
		for (const struct param_spec *s = specs; s && s->name; s++) {
			if (strcmp(s->name, t->params[i].key) == 0) {
				spec = s;
			}
		}
		if (!spec) {
			api_respond_error(r->resp, 400, t->params[i].key, "unknown parameter '%s'",
					  t->params[i].key);
			return false;
		}
		if (!t->params[i].value) {
			api_respond_error(r->resp, 400, spec->name,
					  "parameter '%s' needs a value (%s=...)", spec->name,
					  spec->name);
			return false;
		}
		for (size_t k = 0; k < i && !spec->repeatable; k++) {
			if (strcmp(t->params[k].key, spec->name) == 0) {
				api_respond_error(r->resp, 400, spec->name,
						  "duplicate parameter '%s'", spec->name);
				return false;
			}
		}
	}
	return true;
}

/* The first value of @name, or NULL. */
const char *api_param(const struct request *r, const char *name) {
	for (size_t i = 0; i < r->target.n_params; i++) {
		if (strcmp(r->target.params[i].key, name) == 0) {
			return r->target.params[i].value;
		}
	}
	return NULL;
}

bool api_param_bool(struct request *r, const char *name, bool *out) {
	const char *v = api_param(r, name);
	*out = false;
	if (!v) {
		return true;
	}
	if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) {
		*out = true;
	} else if (strcmp(v, "0") != 0 && strcmp(v, "false") != 0) {
		api_respond_error(r->resp, 400, name, "parameter '%s' must be 0 or 1, not '%s'",
				  name, v);
		return false;
	}
	return true;
}

bool api_param_uint(struct request *r, const char *name, unsigned def, unsigned min, unsigned max,
		    const char *limit_name, unsigned *out) {
	const char *v = api_param(r, name);
	*out = def;
	if (!v) {
		return true;
	}
	char *end;
	errno = 0;
	unsigned long long n = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
	if (v[0] < '0' || v[0] > '9' || *end || errno) {
		api_respond_error(r->resp, 400, name,
				  "parameter '%s' must be a whole number, not '%s'", name, v);
		return false;
	}
	if (n < min || n > max) {
		api_respond_error(r->resp, 400, name,
				  "parameter '%s' must be between %u and %u%s%s%s", name, min, max,
				  limit_name ? " (" : "", limit_name ? limit_name : "",
				  limit_name ? ")" : "");
		return false;
	}
	*out = (unsigned)n;
	return true;
}

/* Reads the 'from' and 'to' parameters that are given into *from and *to (the others keep
 * their values); false after a 400 naming the one that is not a time. */
bool api_param_times(struct request *r, int64_t *from, int64_t *to) {
	const char *names[] = {"from", "to"};
	int64_t *dst[] = {from, to};
	for (int i = 0; i < 2; i++) {
		const char *v = api_param(r, names[i]);
		if (v && !timefmt_parse_time(v, r->req->now, dst[i])) {
			api_respond_error(
				r->resp, 400, names[i],
				"parameter '%s': cannot read '%s' as a time (ISO 8601 like 2026-08-20T00:00:00Z, a date, unix seconds, -24h or now)",
				names[i], v);
			return false;
		}
	}
	return true;
}

/* A window [from, to): defaults to the last 24 hours, bounded by http.max_window_s. */
bool api_param_window(struct request *r, int64_t *from, int64_t *to) {
	int64_t now = r->req->now;
	*to = now;
	*from = now - 24 * 3600;
	if (!api_param_times(r, from, to)) {
		return false;
	}
	static const char *const names[] = {"'from'", "'to'"};
	char *err = NULL;
	int bad;
	if (query_window_check(*from, *to, !api_param(r, "to"), r->ctx->cfg->http.max_window_s,
			       names, &bad, &err) < 0) {
		// An empty window blames 'from'; one too long blames the end the user gave.
		const char *blame = *from >= *to || api_param(r, "from") ? "from" : "to";
		api_respond_error(r->resp, 400, blame, "%s", err);
		free(err);
		return false;
	}
	return true;
}

/* Routing ---------------------------------------------------------------------------------- */

/* What a route needs before its handler runs. */
enum route_needs {
	ROUTE_OPEN,  // nothing: answered before authentication (the sign-in)
	ROUTE_AUTH,  // an authorized request
	ROUTE_STORE, // that and the database
};

struct route {
	const char *method;  // "GET" (which answers HEAD too) or "POST"
	const char *pattern; // the path; "{id}" stands for a run id (request.id)
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
	{"GET", "/api/v1/export.csv", api_handle_export, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/runs", api_handle_runs, ROUTE_STORE, API_COST_HEAVY},
	{"POST", "/api/v1/runs", api_handle_run_start, ROUTE_AUTH, API_COST_HEAVY},
	{"GET", "/api/v1/runs/stats", api_handle_runs_stats, ROUTE_STORE, API_COST_HEAVY},
	{"GET", "/api/v1/runs/{id}", api_handle_run_show, ROUTE_STORE, API_COST_LIGHT},
	{"GET", "/api/v1/runs/{id}/samples", api_handle_run_samples, ROUTE_STORE, API_COST_HEAVY},
	{"POST", "/api/v1/runs/{id}/stop", api_handle_run_stop, ROUTE_AUTH, API_COST_NONE},
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

/* A 303 to @location, relative to the request's path so that a reverse proxy's prefix stays. */
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
