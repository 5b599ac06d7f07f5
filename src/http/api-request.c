/*
 * What every handler of the API shares: the request target parsed and checked, the query
 * parameters read (times, windows, numbers, flags, percentiles), and the JSON responses and
 * errors written (a 400 names its parameter).
 */
#include "api-internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "export.h"
#include "json.h"
#include "log.h"
#include "query.h"
#include "runtag.h"
#include "xalloc.h"

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

/* The values of a repeatable parameter, in order; *n receives their count. */
size_t api_param_all(const struct request *r, const char *name, const char **out, size_t max) {
	size_t n = 0;
	for (size_t i = 0; i < r->target.n_params && n < max; i++) {
		if (strcmp(r->target.params[i].key, name) == 0) {
			out[n++] = r->target.params[i].value;
		}
	}
	return n;
}

/* Maps a query error to a response: bad parameters 400, no data 404, the rest 500. */
void api_respond_query_error(struct request *r, int rc, char *err) {
	const char *msg = err ? err : "query failed";
	if (rc == -EINVAL) {
		api_respond_error(r->resp, 400, NULL, "%s", msg);
	} else if (rc == -ENOENT) {
		api_respond_error(r->resp, 404, NULL, "%s", msg);
	} else {
		log_warn("http: %s: %s", r->target.path, msg);
		api_respond_error(r->resp, 500, NULL, "%s", msg);
	}
	free(err);
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

/*
 * Reads the repeatable 'percentile' parameter (after api_check_params(), so each has a value) into
 * @out: at most @max numbers from 0 to 100, their count in *n; false after a 400.
 */
bool api_param_percentiles(struct request *r, double *out, size_t max, size_t *n) {
	const char *values[API_PARAMS_MAX];
	*n = api_param_all(r, "percentile", values, API_PARAMS_MAX);
	if (*n > max) {
		api_respond_error(r->resp, 400, "percentile",
				  "more than %zu 'percentile' parameters", max);
		return false;
	}
	for (size_t i = 0; i < *n; i++) {
		char *end;
		double v = strtod(values[i], &end);
		if (end == values[i] || *end || !isfinite(v) || v < 0 || v > 100) {
			api_respond_error(
				r->resp, 400, "percentile",
				"parameter 'percentile' must be a number from 0 to 100, not '%s'",
				values[i]);
			return false;
		}
		out[i] = v;
	}
	return true;
}

/* The largest max_points / samples a request may ask for (http.max_points, 0 = 5000). */
unsigned api_max_points_cap(const struct request *r) {
	return r->ctx->cfg->http.max_points ? r->ctx->cfg->http.max_points : 5000;
}

/* "2026-08-20T00:00:00Z" -> "20260820T000000Z": no characters a file name dislikes. */
void api_compact_time(char out[TIMEFMT_ISO_LEN], int64_t ts) {
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

/*
 * Reads the repeatable 'tag' parameter, KEY=VALUE each (the rule of runtag.h), into @json as the
 * JSON object a runs filter takes (nothing written when there is none); false after a 400.
 */
bool api_param_tags(struct request *r, struct buf *json) {
	const char *values[API_PARAMS_MAX];
	size_t n = api_param_all(r, "tag", values, API_PARAMS_MAX);
	struct runtag_list tags = {0};
	bool good = true;
	for (size_t i = 0; i < n && good; i++) {
		char *err = NULL;
		good = runtag_parse(values[i], &tags, &err);
		if (!good) {
			api_respond_error(r->resp, 400, "tag", "parameter 'tag': %s, not '%s'", err,
					  values[i]);
		}
		free(err);
	}
	if (good && tags.n > 0) {
		runtag_list_json(&tags, json);
	}
	runtag_list_finish(&tags);
	return good;
}
