/*
 * A run's metrics: the readers of NAME=VALUE[UNIT], of the metrics file (lines or one JSON
 * object) and of the wire's JSON object, each checking names, values and units alike.
 */
#include "runmetric.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "runtag.h"
#include "xalloc.h"

void runmetric_set_finish(struct runmetric_set *set) {
	if (!set) {
		return;
	}
	for (size_t i = 0; i < set->n; i++) {
		free(set->m[i].name);
		free(set->m[i].unit);
	}
	free(set->m);
	*set = (struct runmetric_set){0};
}

const struct runmetric *runmetric_find(const struct runmetric_set *set, const char *name) {
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->m[i].name, name) == 0) {
			return &set->m[i];
		}
	}
	return NULL;
}

static bool is_digit(char c) {
	return c >= '0' && c <= '9';
}

static bool is_space(char c) {
	return c == ' ' || c == '\t';
}

bool runmetric_unit_valid(const char *unit) {
	size_t len = strlen(unit);
	if (len == 0) {
		return true;
	}
	if (len > RUNMETRIC_UNIT_MAX || is_digit(unit[0]) || strchr(".+-", unit[0])) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)unit[i] <= ' ' || unit[i] == 0x7f) {
			return false;
		}
	}
	return jsonread_utf8_valid(unit, len);
}

bool runmetric_put(struct runmetric_set *set, const char *name, double value, const char *unit,
		   char **err) {
	unit = unit ? unit : "";
	if (!runtag_name_valid(name)) {
		*err = xstrdup("a metric name: expected " RUNTAG_TEXT_RULE);
		return false;
	}
	if (!isfinite(value)) {
		*err = xasprintf("metric '%s': the value is not a finite number", name);
		return false;
	}
	if (!runmetric_unit_valid(unit)) {
		*err = xasprintf("metric '%s': the unit: expected " RUNMETRIC_UNIT_RULE, name);
		return false;
	}
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->m[i].name, name) == 0) {
			set->m[i].value = value;
			free(set->m[i].unit);
			set->m[i].unit = xstrdup(unit);
			return true;
		}
	}
	if (set->n >= RUNMETRIC_MAX) {
		*err = xasprintf("metric '%s': a run carries at most %d metrics", name,
				 RUNMETRIC_MAX);
		return false;
	}
	set->m = xgrow(set->m, &set->cap, set->n + 1, sizeof(*set->m));
	set->m[set->n++] = (struct runmetric){xstrdup(name), value, xstrdup(unit)};
	return true;
}

/* The length of the decimal number at @s ([+-] digits [. digits] [e [+-] digits]), 0 if none. */
static size_t number_len(const char *s) {
	size_t i = 0, digits = 0;
	if (s[i] == '+' || s[i] == '-') {
		i++;
	}
	for (; is_digit(s[i]); i++) {
		digits++;
	}
	if (s[i] == '.') {
		for (i++; is_digit(s[i]); i++) {
			digits++;
		}
	}
	if (digits == 0) {
		return 0;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t k = i + 1 + (s[i + 1] == '+' || s[i + 1] == '-');
		if (is_digit(s[k])) {
			for (i = k; is_digit(s[i]); i++) {
			}
		}
	}
	return i;
}

bool runmetric_parse_value(const char *text, double *value, char **unit, char **err) {
	*unit = NULL;
	size_t len = number_len(text);
	if (len == 0 || len > 64) {
		*err = xstrdup("expected a decimal number, optionally followed by its unit");
		return false;
	}
	char num[72];
	memcpy(num, text, len);
	num[len] = '\0';
	if ((text[len] == 'x' || text[len] == 'X') && strspn(num, "+-0") == len) {
		*err = xstrdup("a hexadecimal number: expected a decimal one");
		return false;
	}
	errno = 0;
	double v = strtod(num, NULL);
	if (!isfinite(v)) {
		*err = xstrdup("the value is not a finite number");
		return false;
	}
	const char *u = text + len;
	while (is_space(*u)) {
		u++;
	}
	if (!runmetric_unit_valid(u)) {
		*err = xasprintf("after the number: expected a unit (" RUNMETRIC_UNIT_RULE ")");
		return false;
	}
	*value = v;
	*unit = xstrdup(u);
	return true;
}

bool runmetric_parse_assignment(const char *text, struct runmetric_set *set, char **err) {
	const char *eq = strchr(text, '=');
	if (!eq || eq == text) {
		*err = xstrdup("expected NAME=VALUE[UNIT]");
		return false;
	}
	char *name = xstrndup(text, (size_t)(eq - text)), *unit = NULL, *why = NULL;
	double value;
	bool good = runmetric_parse_value(eq + 1, &value, &unit, &why);
	if (!good) {
		*err = xasprintf("metric '%s': %s", name, why);
	} else {
		good = runmetric_put(set, name, value, unit, err);
	}
	free(why);
	free(unit);
	free(name);
	return good;
}

/* A member's value: a number, or {"value": number, "unit": string}. */
static bool read_member(const char *name, const struct jsonread_node *v, struct runmetric_set *set,
			char **err) {
	const char *unit = NULL;
	const struct jsonread_node *num = v;
	if (v->kind == JSONREAD_OBJECT) {
		for (size_t i = 0; i + 1 < v->n; i += 2) {
			const char *k = v->items[i]->text;
			if (strcmp(k, "value") != 0 && strcmp(k, "unit") != 0) {
				*err = xasprintf(
					"metric '%s': unknown key '%s' (allowed: value, unit)",
					name, k);
				return false;
			}
		}
		num = jsonread_get(v, "value");
		const struct jsonread_node *u = jsonread_get(v, "unit");
		if (u && u->kind != JSONREAD_NULL && !(unit = jsonread_string(u))) {
			*err = xasprintf("metric '%s': unit: expected a string", name);
			return false;
		}
	}
	if (!num || num->kind != JSONREAD_NUMBER) {
		*err = xasprintf("metric '%s': expected a number or {\"value\": number, \"unit\": "
				 "string}",
				 name);
		return false;
	}
	return runmetric_put(set, name, num->number, unit, err);
}

bool runmetric_read_json(const struct jsonread_node *obj, struct runmetric_set *set, char **err) {
	if (!obj || obj->kind != JSONREAD_OBJECT) {
		*err = xstrdup("metrics: expected an object of metrics");
		return false;
	}
	for (size_t i = 0; i + 1 < obj->n; i += 2) {
		if (!read_member(obj->items[i]->text, obj->items[i + 1], set, err)) {
			return false;
		}
	}
	return true;
}

void runmetric_write_json(const struct runmetric_set *set, struct json *j) {
	json_object_begin(j);
	for (size_t i = 0; i < set->n; i++) {
		json_key(j, set->m[i].name);
		json_object_begin(j);
		json_field_double(j, "value", set->m[i].value);
		json_field_string(j, "unit", *set->m[i].unit ? set->m[i].unit : NULL);
		json_object_end(j);
	}
	json_object_end(j);
}

/* --- the metrics file ----------------------------------------------------------------------- */

struct file_reader {
	const char *name;
	struct buf *errors;
	size_t bad;
};

static void __attribute__((format(printf, 3, 4)))
bad_line(struct file_reader *r, size_t line, const char *fmt, ...) {
	if (r->bad++ >= RUNMETRIC_ERRORS_MAX) {
		return;
	}
	buf_printf(r->errors, "%s:%zu: ", r->name, line);
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf_printable(r->errors, fmt, ap); // the file's bytes reach a terminal
	va_end(ap);
	buf_putc(r->errors, '\n');
}

/* One line "NAME VALUE [UNIT]" or "NAME=VALUE[UNIT]" (no NUL, no line feed in it). */
static void read_line(struct file_reader *r, size_t line, char *text, struct runmetric_set *set) {
	size_t len = strlen(text);
	while (len > 0 && (is_space(text[len - 1]) || text[len - 1] == '\r')) {
		text[--len] = '\0';
	}
	char *p = text;
	while (is_space(*p)) {
		p++;
	}
	if (*p == '\0' || *p == '#') {
		return;
	}
	char *err = NULL;
	char *sep = p + strcspn(p, " \t=");
	if (*sep == '=') {
		if (!runmetric_parse_assignment(p, set, &err)) {
			bad_line(r, line, "%s", err);
		}
		free(err);
		return;
	}
	if (*sep == '\0') {
		bad_line(r, line, "expected NAME VALUE [UNIT] or NAME=VALUE[UNIT]");
		return;
	}
	*sep = '\0';
	char *unit = NULL;
	double value;
	if (!runmetric_parse_value(sep + 1 + strspn(sep + 1, " \t"), &value, &unit, &err)) {
		bad_line(r, line, "metric '%s': %s", p, err);
	} else if (!runmetric_put(set, p, value, unit, &err)) {
		bad_line(r, line, "%s", err);
	}
	free(unit);
	free(err);
}

/* One JSON object: each member a metric, a bad one named at its line and the others kept. */
static void read_json_file(struct file_reader *r, const char *text, size_t len,
			   struct runmetric_set *set) {
	struct jsonread_error e;
	struct jsonread_node *root = jsonread_parse(text, len, RUNMETRIC_FILE_MAX, &e);
	if (!root || root->kind != JSONREAD_OBJECT) {
		if (root) {
			bad_line(r, root->line, "expected one JSON object of metrics");
		} else {
			bad_line(r, e.line, "column %zu: %s", e.col, e.msg);
		}
		jsonread_node_free(root);
		return;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		char *err = NULL;
		if (!read_member(root->items[i]->text, root->items[i + 1], set, &err)) {
			bad_line(r, root->items[i]->line, "%s", err);
		}
		free(err);
	}
	jsonread_node_free(root);
}

size_t runmetric_parse_file(const char *text, size_t len, const char *name,
			    struct runmetric_set *set, struct buf *errors) {
	struct file_reader r = {.name = name, .errors = errors};
	size_t first = 0;
	while (first < len && strchr(" \t\r\n", text[first])) {
		first++;
	}
	if (first < len && text[first] == '{') {
		read_json_file(&r, text, len, set);
	} else {
		size_t line = 1;
		for (size_t at = 0; at < len; line++) {
			const char *nl = memchr(text + at, '\n', len - at);
			size_t end = nl ? (size_t)(nl - text) : len;
			if (memchr(text + at, '\0', end - at)) {
				bad_line(&r, line, "a NUL byte: not a text line");
			} else {
				char *copy = xstrndup(text + at, end - at);
				read_line(&r, line, copy, set);
				free(copy);
			}
			at = end + 1;
		}
	}
	if (r.bad > RUNMETRIC_ERRORS_MAX) {
		buf_printf(errors, "%s: %zu more bad lines not listed\n", name,
			   r.bad - RUNMETRIC_ERRORS_MAX);
	}
	return r.bad;
}
