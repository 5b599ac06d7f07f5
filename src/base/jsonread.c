/* Strict JSON reader (RFC 8259): recursive descent over a byte range, depth bounded. */
#include "jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xalloc.h"

struct reader {
	const unsigned char *s;
	size_t len, pos;
	size_t line, line_start; // the current line (1-based) and the offset it starts at
	struct jsonread_error *err;
	bool failed;
};

static void fail_at(struct reader *r, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reports the first error only: later ones follow from it. */
static void fail_at(struct reader *r, size_t pos, const char *fmt, ...) {
	if (r->failed) {
		return;
	}
	r->failed = true;
	struct buf clean;
	buf_init(&clean);
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf_printable(&clean, fmt, ap);
	va_end(ap);
	// Every error is reported on the line being read: strings hold no raw line feed.
	size_t start = pos < r->line_start ? pos : r->line_start;
	*r->err = (struct jsonread_error){.offset = pos, .line = r->line, .col = pos - start + 1};
	snprintf(r->err->msg, sizeof(r->err->msg), "%s", clean.data ? clean.data : "");
	buf_finish(&clean);
}

static void skip_space(struct reader *r) {
	while (r->pos < r->len) {
		unsigned char c = r->s[r->pos];
		if (c == '\n') {
			r->line++;
			r->line_start = r->pos + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			return;
		}
		r->pos++;
	}
}

static struct jsonread_node *node_new(struct reader *r, enum jsonread_kind kind) {
	struct jsonread_node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->offset = r->pos;
	n->line = r->line;
	n->col = r->pos - r->line_start + 1;
	return n;
}

void jsonread_node_free(struct jsonread_node *n) {
	if (!n) {
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		jsonread_node_free(n->items[i]);
	}
	free(n->items);
	free(n->text);
	free(n);
}

/* How a byte reads in a message: printable ASCII as itself, the rest as a code. */
static const char *show_byte(unsigned char c, char out[8]) {
	if (c >= 0x20 && c < 0x7f) {
		snprintf(out, 8, "'%c'", c);
	} else {
		snprintf(out, 8, "0x%02x", c);
	}
	return out;
}

/* The length of the valid UTF-8 sequence at @p (at most @left bytes), or 0. */
static size_t utf8_sequence(const unsigned char *p, size_t left) {
	unsigned char c = p[0];
	size_t n;
	uint32_t cp, min;
	if (c < 0x80) {
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n > left) {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			return 0;
		}
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		return 0; // overlong, beyond Unicode, or a surrogate written as UTF-8
	}
	return n;
}

bool jsonread_utf8_valid(const char *s, size_t len) {
	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence((const unsigned char *)s + i, len - i);
		if (n == 0) {
			return false;
		}
		i += n;
	}
	return true;
}

static void put_utf8(struct buf *b, uint32_t cp) {
	if (cp < 0x80) {
		buf_putc(b, (char)cp);
	} else if (cp < 0x800) {
		buf_putc(b, (char)(0xc0 | cp >> 6));
		buf_putc(b, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		buf_putc(b, (char)(0xe0 | cp >> 12));
		buf_putc(b, (char)(0x80 | (cp >> 6 & 0x3f)));
		buf_putc(b, (char)(0x80 | (cp & 0x3f)));
	} else {
		buf_putc(b, (char)(0xf0 | cp >> 18));
		buf_putc(b, (char)(0x80 | (cp >> 12 & 0x3f)));
		buf_putc(b, (char)(0x80 | (cp >> 6 & 0x3f)));
		buf_putc(b, (char)(0x80 | (cp & 0x3f)));
	}
}

/* Four hex digits after "\u" at r->pos; false (reported) otherwise. */
static bool hex4(struct reader *r, uint32_t *out) {
	uint32_t v = 0;
	for (size_t i = 0; i < 4; i++) {
		unsigned char c = r->pos + i < r->len ? r->s[r->pos + i] : 0;
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0) {
			fail_at(r, r->pos - 2, "bad \\u escape: expected four hex digits");
			return false;
		}
		v = v << 4 | (uint32_t)d;
	}
	r->pos += 4;
	*out = v;
	return true;
}

/* A string at r->pos ('"'); the decoded text into *out (freed by the caller). */
static bool read_string(struct reader *r, char **out, size_t *out_len) {
	size_t start = r->pos++;
	struct buf b;
	buf_init(&b);
	buf_puts(&b, ""); // an empty string is "" rather than NULL
	for (;;) {
		if (r->pos >= r->len) {
			fail_at(r, start, "unterminated string");
			goto err;
		}
		unsigned char c = r->s[r->pos];
		if (c == '"') {
			r->pos++;
			break;
		}
		if (c < 0x20) {
			fail_at(r, r->pos,
				"control character 0x%02x in a string (write it as \\u%04x)", c, c);
			goto err;
		}
		if (c != '\\') {
			size_t n = utf8_sequence(r->s + r->pos, r->len - r->pos);
			if (n == 0) {
				fail_at(r, r->pos, "invalid UTF-8 (byte 0x%02x)", c);
				goto err;
			}
			buf_append(&b, r->s + r->pos, n);
			r->pos += n;
			continue;
		}
		size_t esc = r->pos;
		unsigned char e = r->pos + 1 < r->len ? r->s[r->pos + 1] : 0;
		r->pos += 2;
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e && simple) {
			static const char decoded[] = "\"\\/\b\f\n\r\t";
			buf_putc(&b, decoded[simple - "\"\\/bfnrt"]);
			continue;
		}
		if (e != 'u') {
			char shown[8];
			fail_at(r, esc, "bad escape \\%s in a string",
				e ? show_byte(e, shown) : "at the end");
			goto err;
		}
		uint32_t cp;
		if (!hex4(r, &cp)) {
			goto err;
		}
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			fail_at(r, esc, "lone low surrogate \\u%04x in a string", (unsigned)cp);
			goto err;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			uint32_t lo = 0;
			if (r->pos + 1 >= r->len || r->s[r->pos] != '\\' ||
			    r->s[r->pos + 1] != 'u') {
				fail_at(r, esc, "lone high surrogate \\u%04x in a string",
					(unsigned)cp);
				goto err;
			}
			r->pos += 2;
			if (!hex4(r, &lo)) {
				goto err;
			}
			if (lo < 0xdc00 || lo > 0xdfff) {
				fail_at(r, esc, "lone high surrogate \\u%04x in a string",
					(unsigned)cp);
				goto err;
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		}
		if (cp == 0) {
			fail_at(r, esc, "\\u0000 in a string is not accepted");
			goto err;
		}
		put_utf8(&b, cp);
	}
	*out_len = b.len;
	*out = buf_steal(&b);
	return true;
err:
	buf_finish(&b);
	return false;
}

static bool is_digit(unsigned char c) {
	return c >= '0' && c <= '9';
}

/* Where the run of digits starting at @p ends (@p itself when there is none). */
static size_t digits_end(const struct reader *r, size_t p) {
	while (p < r->len && is_digit(r->s[p])) {
		p++;
	}
	return p;
}

static struct jsonread_node *read_number(struct reader *r) {
	struct jsonread_node *n = node_new(r, JSONREAD_NUMBER);
	size_t p = r->pos;
	const unsigned char *s = r->s;
	if (p < r->len && s[p] == '-') {
		p++;
	}
	if (p >= r->len || !is_digit(s[p])) {
		fail_at(r, r->pos, "bad number: expected a digit");
		goto err;
	}
	if (s[p] == '0' && p + 1 < r->len && is_digit(s[p + 1])) {
		fail_at(r, r->pos, "bad number: leading zero");
		goto err;
	}
	p = digits_end(r, p);
	if (p < r->len && s[p] == '.') {
		p++;
		if (p >= r->len || !is_digit(s[p])) {
			fail_at(r, r->pos, "bad number: expected a digit after '.'");
			goto err;
		}
		p = digits_end(r, p);
	}
	if (p < r->len && (s[p] == 'e' || s[p] == 'E')) {
		p++;
		if (p < r->len && (s[p] == '+' || s[p] == '-')) {
			p++;
		}
		if (p >= r->len || !is_digit(s[p])) {
			fail_at(r, r->pos, "bad number: expected a digit in the exponent");
			goto err;
		}
		p = digits_end(r, p);
	}
	n->len = p - r->pos;
	n->text = xstrndup((const char *)s + r->pos, n->len);
	n->number = strtod(n->text, NULL);
	if (!isfinite(n->number)) {
		fail_at(r, r->pos, "number out of range: %.40s", n->text);
		goto err;
	}
	r->pos = p;
	return n;
err:
	jsonread_node_free(n);
	return NULL;
}

static struct jsonread_node *read_value(struct reader *r, int depth);

static void add_item(struct jsonread_node *c, size_t *cap, struct jsonread_node *item) {
	c->items = xgrow(c->items, cap, c->n + 1, sizeof(*c->items));
	c->items[c->n++] = item;
}

static struct jsonread_node *read_container(struct reader *r, int depth) {
	bool object = r->s[r->pos] == '{';
	struct jsonread_node *c = node_new(r, object ? JSONREAD_OBJECT : JSONREAD_ARRAY);
	size_t cap = 0;
	if (depth >= JSONREAD_MAX_DEPTH) {
		fail_at(r, r->pos, "nested deeper than %d levels", JSONREAD_MAX_DEPTH);
		goto err;
	}
	r->pos++;
	skip_space(r);
	char close = object ? '}' : ']';
	if (r->pos < r->len && r->s[r->pos] == close) {
		r->pos++;
		return c;
	}
	for (;;) {
		skip_space(r);
		if (object) {
			if (r->pos >= r->len || r->s[r->pos] != '"') {
				fail_at(r, r->pos, "expected a string key");
				goto err;
			}
			struct jsonread_node *key = node_new(r, JSONREAD_STRING);
			if (!read_string(r, &key->text, &key->len)) {
				jsonread_node_free(key);
				goto err;
			}
			for (size_t i = 0; i < c->n; i += 2) {
				if (c->items[i]->len == key->len &&
				    memcmp(c->items[i]->text, key->text, key->len) == 0) {
					fail_at(r, key->offset, "duplicate key '%s'", key->text);
					jsonread_node_free(key);
					goto err;
				}
			}
			add_item(c, &cap, key);
			skip_space(r);
			if (r->pos >= r->len || r->s[r->pos] != ':') {
				fail_at(r, r->pos, "expected ':' after the key");
				goto err;
			}
			r->pos++;
		}
		struct jsonread_node *v = read_value(r, depth + 1);
		if (!v) {
			goto err;
		}
		add_item(c, &cap, v);
		skip_space(r);
		if (r->pos < r->len && r->s[r->pos] == ',') {
			r->pos++;
			continue;
		}
		if (r->pos < r->len && r->s[r->pos] == close) {
			r->pos++;
			return c;
		}
		fail_at(r, r->pos, "expected ',' or '%c'", close);
		goto err;
	}
err:
	jsonread_node_free(c);
	return NULL;
}

static struct jsonread_node *read_word(struct reader *r, const char *word,
				       enum jsonread_kind kind) {
	size_t n = strlen(word);
	if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n) != 0) {
		return NULL;
	}
	struct jsonread_node *v = node_new(r, kind);
	r->pos += n;
	return v;
}

static struct jsonread_node *read_value(struct reader *r, int depth) {
	skip_space(r);
	if (r->pos >= r->len) {
		fail_at(r, r->pos, "expected a value, got the end of the text");
		return NULL;
	}
	unsigned char c = r->s[r->pos];
	struct jsonread_node *v = NULL;
	if (c == '{' || c == '[') {
		return read_container(r, depth);
	} else if (c == '"') {
		v = node_new(r, JSONREAD_STRING);
		if (!read_string(r, &v->text, &v->len)) {
			jsonread_node_free(v);
			return NULL;
		}
		return v;
	} else if (c == '-' || is_digit(c)) {
		return read_number(r);
	} else if ((v = read_word(r, "true", JSONREAD_TRUE)) ||
		   (v = read_word(r, "false", JSONREAD_FALSE)) ||
		   (v = read_word(r, "null", JSONREAD_NULL))) {
		if (r->pos < r->len && (r->s[r->pos] >= 'a' && r->s[r->pos] <= 'z')) {
			fail_at(r, v->offset, "expected a value");
			jsonread_node_free(v);
			return NULL;
		}
		return v;
	}
	char shown[8];
	fail_at(r, r->pos, "expected a value, got %s", show_byte(c, shown));
	return NULL;
}

struct jsonread_node *jsonread_parse(const char *text, size_t len, size_t max_len,
				     struct jsonread_error *err) {
	struct reader r = {.s = (const unsigned char *)text, .len = len, .line = 1, .err = err};
	*err = (struct jsonread_error){0};
	if (len > max_len) {
		fail_at(&r, 0, "the text exceeds %zu bytes", max_len);
		return NULL;
	}
	if (!text) {
		r.len = 0;
		r.s = (const unsigned char *)"";
	}
	struct jsonread_node *root = read_value(&r, 0);
	if (!root) {
		return NULL;
	}
	skip_space(&r);
	if (r.pos < r.len) {
		char shown[8];
		fail_at(&r, r.pos, "trailing text after the value: %s",
			show_byte(r.s[r.pos], shown));
		jsonread_node_free(root);
		return NULL;
	}
	return root;
}

const struct jsonread_node *jsonread_get(const struct jsonread_node *obj, const char *key) {
	for (size_t i = 0; obj && obj->kind == JSONREAD_OBJECT && i + 1 < obj->n; i += 2) {
		if (strcmp(obj->items[i]->text, key) == 0) {
			return obj->items[i + 1];
		}
	}
	return NULL;
}

const char *jsonread_describe(const struct jsonread_node *n) {
	if (!n) {
		return "nothing";
	}
	switch (n->kind) {
	case JSONREAD_NULL:
		return "null";
	case JSONREAD_FALSE:
	case JSONREAD_TRUE:
		return "a boolean";
	case JSONREAD_NUMBER:
		return "a number";
	case JSONREAD_STRING:
		return "a string";
	case JSONREAD_ARRAY:
		return "an array";
	case JSONREAD_OBJECT:
		return "an object";
	}
	return "a value";
}

const char *jsonread_string(const struct jsonread_node *n) {
	return n && n->kind == JSONREAD_STRING ? n->text : NULL;
}

bool jsonread_int(const struct jsonread_node *n, int64_t min, int64_t max, int64_t *out) {
	if (!n || n->kind != JSONREAD_NUMBER || strpbrk(n->text, ".eE")) {
		return false;
	}
	char *end;
	errno = 0;
	long long x = strtoll(n->text, &end, 10);
	if (errno || *end || x < min || x > max) {
		return false;
	}
	*out = x;
	return true;
}

void jsonread_write(struct json *j, const struct jsonread_node *n) {
	switch (n->kind) {
	case JSONREAD_NULL:
		json_null(j);
		break;
	case JSONREAD_FALSE:
	case JSONREAD_TRUE:
		json_bool(j, n->kind == JSONREAD_TRUE);
		break;
	case JSONREAD_NUMBER:
		json_raw(j, n->text);
		break;
	case JSONREAD_STRING:
		json_string(j, n->text);
		break;
	case JSONREAD_ARRAY:
		json_array_begin(j);
		for (size_t i = 0; i < n->n; i++) {
			jsonread_write(j, n->items[i]);
		}
		json_array_end(j);
		break;
	case JSONREAD_OBJECT:
		json_object_begin(j);
		for (size_t i = 0; i + 1 < n->n; i += 2) {
			json_key(j, n->items[i]->text);
			jsonread_write(j, n->items[i + 1]);
		}
		json_object_end(j);
		break;
	}
}
