/*
 * The API's runs: the list, the per-label statistics, a run and its fast samples, and the
 * write endpoints (a start, a stop) whose bodies the daemon's loop applies.
 */
#include "api-internal.h"

_Static_assert(API_RUN_ERROR_MAX == JOBCSV_ERROR_MAX,
	       "a stop body's error and a stored one have one limit");

/* runs: read side ------------------------------------------------------------------------- */

/* Reads label, from and to into @f (times as everywhere in the API); false after a 400. */
static bool runs_filter(struct request *r, struct store_run_filter *f) {
	*f = (struct store_run_filter){.label = api_param(r, "label")};
	int64_t from = 0, to = 0;
	if (!api_param_times(r, &from, &to)) {
		return false;
	}
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
	return true;
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
	static const struct param_spec specs[] = {
		{"label", false}, {"from", false}, {"to", false}, {"limit", false}, {NULL, false}};
	struct store_run_filter f;
	unsigned limit;
	if (!api_check_params(r, specs) || !runs_filter(r, &f) ||
	    !api_param_uint(r, "limit", API_RUNS_LIMIT, 1, API_RUNS_LIMIT_MAX, NULL, &limit)) {
		return;
	}
	f.limit = limit;
	respond_runs(r, runs_list_json(r->ctx->store, &f, true, &r->resp->body),
		     "could not read the runs");
}

void api_handle_runs_stats(struct request *r) {
	static const struct param_spec specs[] = {{"label", false},     {"from", false},
						  {"to", false},        {"over", false},
						  {"percentile", true}, {NULL, false}};
	struct runs_stats_options opt = {.over_s = NAN};
	if (!api_check_params(r, specs) || !runs_filter(r, &opt.filter)) {
		return;
	}
	const char *over = api_param(r, "over");
	int64_t ms;
	if (over && !timefmt_parse_duration_ms(over, &ms)) {
		api_respond_error(r->resp, 400, "over",
				  "parameter 'over' must be a duration like 30m or 1h30m, not '%s'",
				  over);
		return;
	}
	if (over) {
		opt.over_s = (double)ms / 1000.0;
	}
	double percentiles[API_PARAMS_MAX];
	if (!api_param_percentiles(r, percentiles, API_PARAMS_MAX, &opt.n_percentiles)) {
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
bool api_run_path_id(const char *path, int64_t *id) {
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
	if (!api_check_params(r, NULL) || !api_run_path_id(r->target.path, &id)) {
		return;
	}
	int rc = runs_show_json(r->ctx->store, r->ctx->cfg, id, true, &r->resp->body);
	if (rc == -ENOENT) {
		api_respond_error(r->resp, 404, NULL, "no run %lld", (long long)id);
		return;
	}
	respond_runs(r, rc, "could not read the run");
}

const struct route api_run_show_route = {RUNS_PATH "{id}", handle_run_show, true, API_COST_LIGHT};

#define RUNS_SAMPLES_SUFFIX "/samples"

/* /api/v1/runs/{id}/samples: the id as for api_run_path_id(), then the suffix. */
bool api_run_samples_path_id(const char *path, int64_t *id) {
	size_t len = strlen(path), n = strlen(RUNS_SAMPLES_SUFFIX);
	if (len <= n || strcmp(path + len - n, RUNS_SAMPLES_SUFFIX) != 0 || len - n >= 64) {
		return false;
	}
	char head[64];
	memcpy(head, path, len - n);
	head[len - n] = '\0';
	return api_run_path_id(head, id);
}

static void handle_run_samples(struct request *r) {
	static const struct param_spec specs[] = {{"max_points", false}, {NULL, false}};
	int64_t id = 0;
	unsigned cap = api_max_points_cap(r), max_points;
	if (!api_check_params(r, specs) || !api_run_samples_path_id(r->target.path, &id) ||
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

const struct route api_run_samples_route = {RUNS_PATH "{id}" RUNS_SAMPLES_SUFFIX,
					    handle_run_samples, true, API_COST_HEAVY};

/* The route of @path: the table's, or the one of /api/v1/runs/{id}; NULL when none. */
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
			api_respond_error(r->resp, 400, NULL,
					  "body: unknown key '%s' (allowed: %s)",
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
		api_respond_error(r->resp, status, NULL, "%s",
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
	api_respond_json(r->resp, 201);
	goto out;
bad:
	api_respond_error(r->resp, 400, NULL, "%s", msg);
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
		if (!jsonread_string(v) || !run_status_parse(v->text, &stop.status) ||
		    (stop.status != RUN_STATUS_OK && stop.status != RUN_STATUS_FAILED &&
		     stop.status != RUN_STATUS_TIMEOUT)) {
			api_respond_error(r->resp, 400, NULL,
					  "status: expected \"ok\", \"failed\" or \"timeout\"");
			return;
		}
		stop.has_status = true;
	}
	int64_t x;
	if ((v = jsonread_get(root, "exit_code")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_int(v, 0, 255, &x)) {
			api_respond_error(r->resp, 400, NULL,
					  "exit_code: expected an integer 0..255");
			return;
		}
		stop.has_exit_code = true;
		stop.exit_code = (int)x;
	}
	if ((v = jsonread_get(root, "signal")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_int(v, 1, 127, &x)) {
			api_respond_error(r->resp, 400, NULL,
					  "signal: expected a signal number 1..127");
			return;
		}
		stop.has_signal = true;
		stop.signal = (int)x;
	}
	if ((v = jsonread_get(root, "rss_max_bytes")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_int(v, 0, INT64_MAX, &x)) {
			api_respond_error(r->resp, 400, NULL,
					  "rss_max_bytes: expected a non-negative integer");
			return;
		}
		stop.rss_max_bytes = x;
	}
	if ((v = jsonread_get(root, "error")) && v->kind != JSONREAD_NULL) {
		if (!jsonread_string(v) || !jobcsv_text_valid(v->text, v->len, API_RUN_ERROR_MAX)) {
			api_respond_error(
				r->resp, 400, NULL,
				"error: expected null or a text of 1..%d bytes without control "
				"characters",
				API_RUN_ERROR_MAX);
			return;
		}
		stop.error = v->text;
	}
	if (!stop.has_status && !stop.has_exit_code && !stop.has_signal) {
		api_respond_error(
			r->resp, 400, NULL,
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
		api_respond_error(r->resp, status, NULL, "%s",
				  msg ? msg : "the stop was not recorded");
	} else {
		buf_clear(&r->resp->body);
		buf_append(&r->resp->body, out.data, out.len);
		buf_putc(&r->resp->body, '\n');
		api_respond_json(r->resp, 200);
	}
	free(msg);
	buf_finish(&out);
}

void api_handle_runs_post(struct request *r) {
	const struct api_context *ctx = r->ctx;
	const char *path = r->target.path + 12; // after "/api/v1/runs"
	int64_t id = 0;
	bool start = *path == '\0';
	if (!start) {
		char *end;
		errno = 0;
		long long x = path[0] == '/' ? strtoll(path + 1, &end, 10) : 0;
		if (errno || x <= 0 || path[1] == '+' || strcmp(end, "/stop") != 0) {
			api_respond_error(r->resp, 404, NULL, "no such path: %s", r->target.path);
			return;
		}
		id = x;
	}
	// Over TCP a write needs the bearer token itself: never anonymous, never a browser's
	// cookie (which another site could make the browser send).
	if (!ctx->local && (!ctx->token || !r->req->authorization)) {
		api_respond_error(
			r->resp, 403, NULL,
			"runs are recorded through the Unix socket (runs.socket), or over TCP "
			"with http.token and 'Authorization: Bearer TOKEN'");
		return;
	}
	if (!ctx->runs) {
		api_respond_error(r->resp, 503, NULL, "this server does not record runs");
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
