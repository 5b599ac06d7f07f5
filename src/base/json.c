/* JSON writer: keeps only a comma flag per nesting level, so output streams into the buffer. */
#include "json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timefmt.h"

void json_init(struct json *j, struct buf *out, bool pretty) {
	*j = (struct json){.out = out, .pretty = pretty};
}

static void newline(struct json *j) {
	if (!j->pretty) {
		return;
	}
	buf_putc(j->out, '\n');
	for (int i = 0; i < j->depth; i++) {
		buf_puts(j->out, "  ");
	}
}

/* Called before every value or key: separates siblings unless a key was just written. */
static void before_value(struct json *j) {
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0) {
		if (j->need_comma[j->depth]) {
			buf_putc(j->out, ',');
		}
		j->need_comma[j->depth] = true;
		newline(j);
	}
}

static void push(struct json *j, char c) {
	before_value(j);
	buf_putc(j->out, c);
	assert(j->depth + 1 < JSON_MAX_DEPTH);
	j->depth++;
	j->need_comma[j->depth] = false;
}

static void pop(struct json *j, char c) {
	bool had_items = j->need_comma[j->depth];
	j->depth--;
	if (had_items) {
		newline(j);
	}
	buf_putc(j->out, c);
}

void json_object_begin(struct json *j) {
	push(j, '{');
}

void json_object_end(struct json *j) {
	pop(j, '}');
}

void json_array_begin(struct json *j) {
	push(j, '[');
}

void json_array_end(struct json *j) {
	pop(j, ']');
}

/* The escapes JSON has names for; the other control bytes are \u00XX. */
static const char *const json_escapes[128] = {
	['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t",
};

static void put_unicode_escape(struct buf *out, unsigned char c) {
	buf_printf(out, "\\u%04x", c);
}

void json_escape(struct buf *out, const char *s) {
	buf_put_escaped(out, s, json_escapes, put_unicode_escape);
}

void json_key(struct json *j, const char *key) {
	before_value(j);
	buf_putc(j->out, '"');
	json_escape(j->out, key);
	buf_puts(j->out, j->pretty ? "\": " : "\":");
	j->after_key = true;
}

void json_string(struct json *j, const char *s) {
	if (!s) {
		json_null(j);
		return;
	}
	before_value(j);
	buf_putc(j->out, '"');
	json_escape(j->out, s);
	buf_putc(j->out, '"');
}

void json_int(struct json *j, int64_t v) {
	before_value(j);
	buf_printf(j->out, "%" PRId64, v);
}

void json_format_double(char *out, double v) {
	// The shortest of %.15g..%.17g that reads back exactly: 0.1 stays "0.1".
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, 32, "%.*g", prec, v);
		if (strtod(out, NULL) == v) {
			break;
		}
	}
}

void json_double(struct json *j, double v) {
	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	char text[32];
	json_format_double(text, v);
	before_value(j);
	buf_puts(j->out, text);
}

void json_fixed(struct json *j, double v, int digits) {
	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	before_value(j);
	buf_printf(j->out, "%.*f", digits, v);
}

void json_decimal(struct json *j, double v, int digits) {
	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	char text[64];
	int n = snprintf(text, sizeof(text), "%.*f", digits, v);
	if (n > 0 && (size_t)n < sizeof(text) && strchr(text, '.')) {
		while (n > 0 && text[n - 1] == '0') {
			text[--n] = '\0';
		}
		if (n > 0 && text[n - 1] == '.') {
			text[--n] = '\0';
		}
	}
	before_value(j);
	buf_puts(j->out, strcmp(text, "-0") == 0 ? "0" : text);
}

void json_bool(struct json *j, bool v) {
	before_value(j);
	buf_puts(j->out, v ? "true" : "false");
}

void json_null(struct json *j) {
	before_value(j);
	buf_puts(j->out, "null");
}

void json_raw(struct json *j, const char *text) {
	before_value(j);
	buf_puts(j->out, text);
}

void json_field_string(struct json *j, const char *key, const char *s) {
	json_key(j, key);
	json_string(j, s);
}

void json_field_int(struct json *j, const char *key, int64_t v) {
	json_key(j, key);
	json_int(j, v);
}

void json_field_double(struct json *j, const char *key, double v) {
	json_key(j, key);
	json_double(j, v);
}

void json_field_fixed(struct json *j, const char *key, double v, int digits) {
	json_key(j, key);
	json_fixed(j, v, digits);
}

void json_field_decimal(struct json *j, const char *key, double v, int digits) {
	json_key(j, key);
	json_decimal(j, v, digits);
}

void json_field_bool(struct json *j, const char *key, bool v) {
	json_key(j, key);
	json_bool(j, v);
}

void json_field_null(struct json *j, const char *key) {
	json_key(j, key);
	json_null(j);
}

void json_field_raw(struct json *j, const char *key, const char *text) {
	json_key(j, key);
	if (text) {
		json_raw(j, text);
	} else {
		json_null(j);
	}
}

void json_field_int_or_null(struct json *j, const char *key, bool known, int64_t v) {
	if (known) {
		json_field_int(j, key, v);
	} else {
		json_field_null(j, key);
	}
}

void json_field_double_or_null(struct json *j, const char *key, bool known, double v) {
	if (known) {
		json_field_double(j, key, v);
	} else {
		json_field_null(j, key);
	}
}

void json_field_time(struct json *j, const char *key, int64_t ts) {
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(ts, iso);
	json_field_string(j, key, iso);
}

void json_field_time_ms(struct json *j, const char *key, int64_t ms) {
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso_ms(ms, iso);
	json_field_string(j, key, iso);
}

void json_field_time_or_null(struct json *j, const char *key, bool known, int64_t ts) {
	if (known) {
		json_field_time(j, key, ts);
	} else {
		json_field_null(j, key);
	}
}

void json_field_time_ms_or_null(struct json *j, const char *key, bool known, int64_t ms) {
	if (known) {
		json_field_time_ms(j, key, ms);
	} else {
		json_field_null(j, key);
	}
}

void json_strings(struct json *j, char *const *s, size_t n) {
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_string(j, s[i]);
	}
	json_array_end(j);
}

void json_field_strings(struct json *j, const char *key, char *const *s, size_t n) {
	json_key(j, key);
	json_strings(j, s, n);
}
