/* The run requests on the wire: writing them (thermlog run) and reading them (the API). */
#include "runwire.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "jobcsv.h"
#include "json.h"
#include "xalloc.h"

/* --- writing ------------------------------------------------------------------------------ */

void runwire_argv(struct buf *out, char *const *argv, size_t argc) {
	struct json j;
	json_init(&j, out, false);
	json_strings(&j, argv, argc);
}

static void put_string(struct json *j, const char *key, const char *value) {
	if (value) {
		json_field_string(j, key, value);
	}
}

void runwire_start_write(const struct runwire_start *s, struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	put_string(&j, "label", s->label);
	json_field_raw(&j, "tags", s->tags ? s->tags : "{}");
	if (s->has_pid) {
		json_field_int_or_null(&j, "pid", s->pid > 0, s->pid);
	}
	if (s->argv) {
		json_field_raw(&j, "argv", s->argv);
	}
	put_string(&j, "exe", s->exe);
	put_string(&j, "exe_sha256", s->exe_sha256);
	put_string(&j, "request_id", s->request_id);
	json_object_end(&j);
}

void runwire_stop_write(const struct runwire_stop *s, struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	if (s->has_status) {
		put_string(&j, "status", run_status_name(s->status));
	}
	if (s->has_exit_code) {
		json_field_int(&j, "exit_code", s->exit_code);
	}
	if (s->has_signal) {
		json_field_int(&j, "signal", s->signal);
	}
	if (s->rss_max_bytes >= 0) {
		json_field_int(&j, "rss_max_bytes", s->rss_max_bytes);
	}
	put_string(&j, "error", s->error);
	if (s->metrics.n > 0) {
		json_key(&j, "metrics");
		runmetric_write_json(&s->metrics, &j);
	}
	json_object_end(&j);
}

void runwire_metrics_write(const struct runmetric_set *metrics, struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	json_key(&j, "metrics");
	runmetric_write_json(metrics, &j);
	json_object_end(&j);
}

/* --- reading ------------------------------------------------------------------------------ */

/* Whether every key of @body is one of @known (NULL-terminated); else *msg names it. */
static bool keys_known(const struct jsonread_node *body, const char *const *known, char **msg) {
	for (size_t i = 0; body && i + 1 < body->n; i += 2) {
		bool ok = false;
		for (size_t k = 0; known[k]; k++) {
			ok = ok || strcmp(body->items[i]->text, known[k]) == 0;
		}
		if (!ok) {
			struct buf allowed, key; // the key: the client's bytes, printable
			buf_init(&allowed);
			buf_init(&key);
			for (size_t k = 0; known[k]; k++) {
				buf_printf(&allowed, "%s%s", k ? ", " : "", known[k]);
			}
			buf_put_printable(&key, body->items[i]->text, body->items[i]->len);
			*msg = xasprintf("body: unknown key '%s' (allowed: %s)",
					 key.data ? key.data : "", allowed.data);
			buf_finish(&key);
			buf_finish(&allowed);
			return false;
		}
	}
	return true;
}

/* A member that is absent or null reads as absent. */
static const struct jsonread_node *member(const struct jsonread_node *body, const char *key) {
	const struct jsonread_node *v = jsonread_get(body, key);
	return v && v->kind != JSONREAD_NULL ? v : NULL;
}

static const char *base_name(const char *path) {
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

static bool read_label(const struct jsonread_node *body, struct runwire_start *s, char **msg) {
	const struct jsonread_node *v = jsonread_get(body, "label");
	if (v && !jsonread_string(v)) {
		*msg = xstrdup("label: expected a string of " JOBCSV_LABEL_RULE);
		return false;
	}
	if (v && !jobcsv_label_valid(v->text)) {
		*msg = xstrdup("label: expected " JOBCSV_LABEL_RULE);
		return false;
	}
	s->label = v ? v->text : NULL;
	return true;
}

static bool read_exe(const struct jsonread_node *body, struct runwire_start_read *r, char **msg) {
	const struct jsonread_node *v = jsonread_get(body, "exe");
	if (v && (!jsonread_string(v) || v->len == 0)) {
		*msg = xstrdup("exe: expected a path");
		return false;
	}
	r->s.exe = v ? v->text : NULL;
	// The caller hashes its own executable: the daemon never opens a path a client names.
	if ((v = member(body, "exe_sha256"))) {
		bool hex = jsonread_string(v) && v->len == 64;
		for (size_t i = 0; hex && i < 64; i++) {
			hex = strchr("0123456789abcdefABCDEF", v->text[i]) != NULL;
			r->sha[i] = (char)tolower((unsigned char)v->text[i]);
		}
		if (!hex) {
			*msg = xstrdup("exe_sha256: expected 64 hexadecimal digits (a sha256)");
			return false;
		}
		r->sha[64] = '\0';
		r->s.exe_sha256 = r->sha;
	}
	return true;
}

static bool read_request_id(const struct jsonread_node *body, struct runwire_start *s, char **msg) {
	const struct jsonread_node *v = member(body, "request_id");
	if (!v) {
		return true;
	}
	bool good = jsonread_string(v) && v->len >= 1 && v->len <= 64;
	for (size_t i = 0; good && i < v->len; i++) {
		good = isalnum((unsigned char)v->text[i]) || strchr("._-", v->text[i]);
	}
	if (!good) {
		*msg = xstrdup("request_id: expected 1 to 64 characters of A-Z, a-z, 0-9, '.', "
			       "'_' and '-'");
		return false;
	}
	s->request_id = v->text;
	return true;
}

/* The tags as an object of strings: a number or a boolean is taken as its text. */
static bool read_tags(const struct jsonread_node *body, struct runwire_start_read *r, char **msg) {
	const struct jsonread_node *v = jsonread_get(body, "tags");
	if (v && v->kind != JSONREAD_OBJECT) {
		*msg = xstrdup("tags: expected an object of strings");
		return false;
	}
	struct json j;
	json_init(&j, &r->tags, false);
	json_object_begin(&j);
	for (size_t i = 0; v && i + 1 < v->n; i += 2) {
		const struct jsonread_node *value = v->items[i + 1];
		if (value->kind != JSONREAD_STRING && value->kind != JSONREAD_NUMBER &&
		    value->kind != JSONREAD_TRUE && value->kind != JSONREAD_FALSE) {
			*msg = xstrdup("tags: expected an object of strings");
			return false;
		}
		const char *text = value->text                    ? value->text
				   : value->kind == JSONREAD_TRUE ? "true"
								  : "false";
		if (!jobcsv_label_valid(v->items[i]->text)) {
			*msg = xstrdup("tags: a key: expected " JOBCSV_LABEL_RULE);
			return false;
		}
		if (!jobcsv_label_valid(text)) {
			*msg = xasprintf("tags: '%s': expected " JOBCSV_LABEL_RULE,
					 v->items[i]->text);
			return false;
		}
		json_field_string(&j, v->items[i]->text, text);
	}
	json_object_end(&j);
	r->s.tags = r->tags.data;
	return true;
}

static bool read_argv(const struct jsonread_node *body, struct runwire_start_read *r, char **msg) {
	const struct jsonread_node *v = jsonread_get(body, "argv");
	if (!v) {
		return true;
	}
	bool strings = v->kind == JSONREAD_ARRAY;
	for (size_t i = 0; strings && i < v->n; i++) {
		strings = jsonread_string(v->items[i]) != NULL;
	}
	if (!strings) {
		*msg = xstrdup("argv: expected an array of strings");
		return false;
	}
	struct json j;
	json_init(&j, &r->argv, false);
	json_array_begin(&j);
	for (size_t i = 0; i < v->n; i++) {
		json_string(&j, v->items[i]->text);
	}
	json_array_end(&j);
	r->s.argv = v->n ? r->argv.data : NULL;
	if (!r->s.label && v->n > 0) {
		r->s.label = base_name(v->items[0]->text);
	}
	return true;
}

/* No "pid": the caller is watched; "pid": null: nothing is (an orchestrator's run). */
static bool read_pid(const struct jsonread_node *body, struct runwire_start *s, char **msg) {
	const struct jsonread_node *v = jsonread_get(body, "pid");
	s->has_pid = v != NULL;
	s->pid = 0;
	if (v && v->kind != JSONREAD_NULL && !jsonread_int(v, 1, INT32_MAX, &s->pid)) {
		*msg = xstrdup("pid: expected a process id (a positive integer)");
		return false;
	}
	return true;
}

bool runwire_start_read(const struct jsonread_node *body, struct runwire_start_read *out,
			char **msg) {
	static const char *const known[] = {"label", "tags",       "pid",        "argv",
					    "exe",   "exe_sha256", "request_id", NULL};
	*out = (struct runwire_start_read){0};
	if (!keys_known(body, known, msg) || !read_label(body, &out->s, msg) ||
	    !read_exe(body, out, msg) || !read_request_id(body, &out->s, msg) ||
	    !read_tags(body, out, msg) || !read_argv(body, out, msg)) {
		return false;
	}
	if (!out->s.label && out->s.exe) {
		out->s.label = base_name(out->s.exe);
	}
	if (!out->s.label) {
		*msg = xstrdup("label: required (or argv or exe to take it from)");
		return false;
	}
	if (!jobcsv_label_valid(out->s.label)) {
		*msg = xstrdup("label: the name taken from argv or exe is not " JOBCSV_LABEL_RULE
			       "; give a label");
		return false;
	}
	return read_pid(body, &out->s, msg);
}

void runwire_start_read_finish(struct runwire_start_read *r) {
	buf_finish(&r->tags);
	buf_finish(&r->argv);
}

static bool read_int(const struct jsonread_node *body, const char *key, int64_t min, int64_t max,
		     const char *expected, bool *has, int64_t *x, char **msg) {
	const struct jsonread_node *v = member(body, key);
	*has = v != NULL;
	if (v && !jsonread_int(v, min, max, x)) {
		*msg = xasprintf("%s: expected %s", key, expected);
		return false;
	}
	return true;
}

bool runwire_stop_read(const struct jsonread_node *body, struct runwire_stop *out, char **msg) {
	static const char *const known[] = {"status", "exit_code", "signal", "rss_max_bytes",
					    "error",  "metrics",   NULL};
	*out = (struct runwire_stop){.rss_max_bytes = -1};
	if (!keys_known(body, known, msg)) {
		return false;
	}
	const struct jsonread_node *m = member(body, "metrics");
	if (m && !runmetric_read_json(m, &out->metrics, msg)) {
		return false;
	}
	const struct jsonread_node *v = jsonread_get(body, "status");
	if (v) {
		if (!jsonread_string(v) || !run_status_parse(v->text, &out->status) ||
		    (out->status != RUN_STATUS_OK && out->status != RUN_STATUS_FAILED &&
		     out->status != RUN_STATUS_TIMEOUT)) {
			*msg = xstrdup("status: expected \"ok\", \"failed\" or \"timeout\"");
			return false;
		}
		out->has_status = true;
	}
	int64_t exit_code = 0, signal = 0, rss = -1;
	bool has_rss;
	if (!read_int(body, "exit_code", 0, 255, "an integer 0..255", &out->has_exit_code,
		      &exit_code, msg) ||
	    !read_int(body, "signal", 1, 127, "a signal number 1..127", &out->has_signal, &signal,
		      msg) ||
	    !read_int(body, "rss_max_bytes", 0, INT64_MAX, "a non-negative integer", &has_rss, &rss,
		      msg)) {
		return false;
	}
	out->exit_code = (int)exit_code;
	out->signal = (int)signal;
	out->rss_max_bytes = has_rss ? rss : -1;
	if ((v = member(body, "error"))) {
		if (!jsonread_string(v) || !jobcsv_text_valid(v->text, v->len, JOBCSV_ERROR_MAX)) {
			*msg = xasprintf("error: expected null or a text of 1..%d bytes without "
					 "control characters",
					 JOBCSV_ERROR_MAX);
			return false;
		}
		out->error = v->text;
	}
	if (!out->has_status && !out->has_exit_code && !out->has_signal) {
		*msg = xstrdup("the body needs status, exit_code or signal: how did the run end?");
		return false;
	}
	return true;
}

void runwire_stop_finish(struct runwire_stop *s) {
	if (s) {
		runmetric_set_finish(&s->metrics);
	}
}

bool runwire_metrics_read(const struct jsonread_node *body, struct runmetric_set *out, char **msg) {
	static const char *const known[] = {"metrics", NULL};
	*out = (struct runmetric_set){0};
	if (!keys_known(body, known, msg)) {
		return false;
	}
	const struct jsonread_node *m = member(body, "metrics");
	if (!m) {
		*msg = xstrdup("metrics: required, an object of metrics");
		return false;
	}
	if (!runmetric_read_json(m, out, msg)) {
		return false;
	}
	if (out->n == 0) {
		*msg = xstrdup("metrics: name at least one metric");
		return false;
	}
	return true;
}
