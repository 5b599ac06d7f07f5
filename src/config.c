/*
 * Configuration: built-in defaults overridden by a YAML file. libyaml's events are turned into a
 * small tree (rejecting aliases, anchors, tags and extra documents on the way), then one
 * parse_<section>() per mapping validates it, collecting every error as FILE:LINE:COL: problem.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "buf.h"
#include "channel.h"
#include "timefmt.h"
#include "xalloc.h"

#define CONFIG_MAX_BYTES  (1024 * 1024) // a config is a few KiB; the cap bounds memory and time
#define CONFIG_MAX_DEPTH  32            // the schema nests 4 deep
#define CONFIG_MAX_ERRORS 100           // enough to fix a file in one go; bounds the report
#define CONFIG_MAX_ITEMS  1024          // per list: bounds the pairwise duplicate checks

#define DAY_S  86400LL
#define YEAR_S (365LL * DAY_S)

enum node_kind {
	NODE_SCALAR,
	NODE_MAPPING,
	NODE_SEQUENCE,
	NODE_BAD, // an alias already reported: checks skip it silently
};

struct node {
	enum node_kind kind;
	size_t line, col; // 1-based
	char *text;       // scalars: NUL-terminated (NUL bytes inside are rejected)
	size_t len;
	bool plain;          // scalars: unquoted, so `true`, `~` and `` keep their YAML meaning
	struct node **items; // mappings: key, value, key, value ...; sequences: items
	size_t n, cap;
};

struct error {
	size_t line, col, seq;
	char *msg;
};

struct parser {
	const char *name;
	struct config *cfg;
	struct error *errors;
	size_t n_errors, cap_errors, dropped;
};

/* --- errors --- */

__attribute__((format(printf, 4, 5))) static void error_at(struct parser *p, size_t line,
							   size_t col, const char *fmt, ...) {
	if (p->n_errors >= CONFIG_MAX_ERRORS) {
		p->dropped++;
		return;
	}
	struct buf b;
	buf_init(&b);
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	// Values quoted in messages may hold line breaks (folded scalars): one error, one line.
	struct buf clean;
	buf_init(&clean);
	for (size_t i = 0; i < b.len; i++) {
		unsigned char c = (unsigned char)b.data[i];
		if (c == '\n') {
			buf_puts(&clean, "\\n");
		} else if (c < 0x20 || c == 0x7f) {
			buf_printf(&clean, "\\x%02x", c);
		} else {
			buf_putc(&clean, (char)c);
		}
	}
	buf_finish(&b);
	p->errors = xgrow(p->errors, &p->cap_errors, p->n_errors + 1, sizeof(*p->errors));
	p->errors[p->n_errors] = (struct error){line, col, p->n_errors, buf_steal(&clean)};
	p->n_errors++;
}

#define error_node(p, node, ...) error_at((p), (node)->line, (node)->col, __VA_ARGS__)

static int compare_errors(const void *a, const void *b) {
	const struct error *x = a, *y = b;
	if (x->line != y->line) {
		return x->line < y->line ? -1 : 1;
	}
	if (x->col != y->col) {
		return x->col < y->col ? -1 : 1;
	}
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Appends the collected errors (if any) to *out in file order and frees them. */
static void flush_errors(struct parser *p, char **out) {
	if (p->n_errors == 0 && p->dropped == 0) {
		return;
	}
	qsort(p->errors, p->n_errors, sizeof(*p->errors), compare_errors);
	struct buf b;
	buf_init(&b);
	if (out && *out) {
		buf_puts(&b, *out);
		free(*out);
	}
	for (size_t i = 0; i < p->n_errors; i++) {
		buf_printf(&b, "%s:%zu:%zu: %s\n", p->name, p->errors[i].line, p->errors[i].col,
			   p->errors[i].msg);
		free(p->errors[i].msg);
	}
	if (p->dropped) {
		buf_printf(&b, "%s: %zu more errors not shown\n", p->name, p->dropped);
	}
	free(p->errors);
	p->errors = NULL;
	p->n_errors = p->cap_errors = p->dropped = 0;
	if (out) {
		*out = buf_steal(&b);
	} else {
		buf_finish(&b);
	}
}

/* --- the tree --- */

static void node_free(struct node *n) {
	if (!n) {
		return;
	}
	// Recursion is bounded: build_tree() refuses documents deeper than CONFIG_MAX_DEPTH.
	for (size_t i = 0; i < n->n; i++) {
		node_free(n->items[i]);
	}
	free(n->items);
	free(n->text);
	free(n);
}

static struct node *node_new(enum node_kind kind, yaml_mark_t mark) {
	struct node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->line = mark.line + 1;
	n->col = mark.column + 1;
	return n;
}

static void node_append(struct node *parent, struct node *child) {
	parent->items = xgrow(parent->items, &parent->cap, parent->n + 1, sizeof(*parent->items));
	parent->items[parent->n++] = child;
}

/* 1-based line and column (in characters) of byte @offset, for reader errors that have no mark. */
static void offset_position(const char *text, size_t len, size_t offset, size_t *line,
			    size_t *col) {
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < offset && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

/* The 1-based column of a tab in the indentation of line @line (1-based), or 0 if none. */
static size_t indent_tab_col(const char *text, size_t len, size_t line) {
	size_t i = 0;
	for (size_t l = 1; l < line && i < len; i++) {
		l += text[i] == '\n';
	}
	for (size_t col = 1; i < len && (text[i] == ' ' || text[i] == '\t'); i++, col++) {
		if (text[i] == '\t') {
			return col;
		}
	}
	return 0;
}

static void syntax_error(struct parser *p, yaml_parser_t *yp, const char *text, size_t len) {
	size_t line, col;
	const char *problem = yp->problem ? yp->problem : "invalid YAML";
	switch (yp->error) {
	case YAML_MEMORY_ERROR:
		error_at(p, 1, 1, "out of memory while parsing");
		return;
	case YAML_READER_ERROR:
		offset_position(text, len, yp->problem_offset, &line, &col);
		error_at(p, line, col, "%s (the file must be UTF-8 text)", problem);
		return;
	default:
		break;
	}
	line = yp->problem_mark.line + 1;
	col = yp->problem_mark.column + 1;
	size_t tab = indent_tab_col(text, len, line);
	if (tab) {
		error_at(p, line, tab, "tabs are not allowed for indentation: indent with spaces");
		return;
	}
	if (yp->context) {
		error_at(p, line, col, "%s %s started at line %zu, column %zu", problem,
			 yp->context, yp->context_mark.line + 1, yp->context_mark.column + 1);
	} else {
		error_at(p, line, col, "%s", problem);
	}
}

/* Rejects YAML features a configuration has no use for, which would hide what a value is. */
static void check_node_props(struct parser *p, yaml_char_t *anchor, yaml_char_t *tag, bool implicit,
			     yaml_mark_t mark) {
	if (anchor) {
		error_at(p, mark.line + 1, mark.column + 1,
			 "anchors are not supported ('&%s'): write each value out", anchor);
	}
	if (tag && !implicit) {
		error_at(p, mark.line + 1, mark.column + 1,
			 "tags are not supported ('%s'): write the plain value", tag);
	}
}

/*
 * Parses @text into a tree; *root is NULL for an empty stream. Returns false after a syntax
 * error (reported) or an unsupported structure that makes the rest meaningless.
 */
static bool build_tree(struct parser *p, const char *text, size_t len, struct node **root) {
	yaml_parser_t yp;
	struct node *stack[CONFIG_MAX_DEPTH];
	size_t depth = 0;
	unsigned documents = 0;
	bool done = false, good = true;
	*root = NULL;
	if (!yaml_parser_initialize(&yp)) {
		error_at(p, 1, 1, "out of memory while parsing");
		return false;
	}
	yaml_parser_set_input_string(&yp, (const unsigned char *)text, len);
	while (!done) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&yp, &ev)) {
			syntax_error(p, &yp, text, len);
			good = false;
			break;
		}
		struct node *n = NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1) {
				error_at(
					p, ev.start_mark.line + 1, ev.start_mark.column + 1,
					"multiple documents are not supported: keep one configuration per file");
				good = false;
				done = true;
			}
			break;
		case YAML_ALIAS_EVENT:
			error_at(p, ev.start_mark.line + 1, ev.start_mark.column + 1,
				 "aliases are not supported ('*%s'): write the value out",
				 ev.data.alias.anchor);
			n = node_new(NODE_BAD, ev.start_mark);
			break;
		case YAML_SCALAR_EVENT:
			check_node_props(p, ev.data.scalar.anchor, ev.data.scalar.tag,
					 ev.data.scalar.plain_implicit ||
						 ev.data.scalar.quoted_implicit,
					 ev.start_mark);
			n = node_new(NODE_SCALAR, ev.start_mark);
			n->len = ev.data.scalar.length;
			n->text = xstrndup((const char *)ev.data.scalar.value, n->len);
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			if (strlen(n->text) != n->len) {
				error_node(p, n, "NUL characters are not allowed in values");
				n->kind = NODE_BAD;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
			check_node_props(p, ev.data.sequence_start.anchor,
					 ev.data.sequence_start.tag,
					 ev.data.sequence_start.implicit, ev.start_mark);
			n = node_new(NODE_SEQUENCE, ev.start_mark);
			break;
		case YAML_MAPPING_START_EVENT:
			check_node_props(p, ev.data.mapping_start.anchor, ev.data.mapping_start.tag,
					 ev.data.mapping_start.implicit, ev.start_mark);
			n = node_new(NODE_MAPPING, ev.start_mark);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0) {
				depth--;
			}
			break;
		default:
			break;
		}
		if (n) {
			if (depth > 0) {
				node_append(stack[depth - 1], n);
			} else {
				*root = n;
			}
			if (n->kind == NODE_SEQUENCE || n->kind == NODE_MAPPING) {
				if (depth == CONFIG_MAX_DEPTH) {
					error_node(p, n, "nesting deeper than %d levels",
						   CONFIG_MAX_DEPTH);
					good = false;
					done = true;
				} else {
					stack[depth++] = n;
				}
			}
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	return good;
}

/* --- typed values --- */

static bool is_null(const struct node *n) {
	return n->kind == NODE_SCALAR && n->plain &&
	       (n->len == 0 || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0);
}

static const char *describe(const struct node *n) {
	switch (n->kind) {
	case NODE_MAPPING:
		return "a mapping";
	case NODE_SEQUENCE:
		return "a list";
	default:
		return is_null(n) ? "an empty value" : "a string";
	}
}

/*
 * True if @v is a usable scalar for @key; otherwise reports "KEY: expected WHAT, got ...".
 * NODE_BAD values were reported already and only return false.
 */
static bool want_scalar(struct parser *p, const struct node *v, const char *key, const char *what) {
	if (v->kind == NODE_BAD) {
		return false;
	}
	if (v->kind != NODE_SCALAR || is_null(v)) {
		error_node(p, v, "%s: expected %s, got %s", key, what, describe(v));
		return false;
	}
	return true;
}

static bool key_is(const struct node *k, const char *name) {
	return k->kind == NODE_SCALAR && strcmp(k->text, name) == 0;
}

static void get_string(struct parser *p, const struct node *v, const char *key, char **slot) {
	if (!want_scalar(p, v, key, "a string")) {
		return;
	}
	free(*slot);
	*slot = xstrdup(v->text);
}

/* An optional string: an empty value unsets it. */
static void get_optional_string(struct parser *p, const struct node *v, const char *key,
				char **slot) {
	if (is_null(v)) {
		free(*slot);
		*slot = NULL;
		return;
	}
	get_string(p, v, key, slot);
}

static void get_bool(struct parser *p, const struct node *v, const char *key, bool *out) {
	if (!want_scalar(p, v, key, "true or false")) {
		return;
	}
	// Only the two words: YAML 1.1's yes/no/on/off surprise people (the "Norway problem").
	if (v->plain && strcmp(v->text, "true") == 0) {
		*out = true;
	} else if (v->plain && strcmp(v->text, "false") == 0) {
		*out = false;
	} else if (!v->plain) {
		error_node(
			p, v,
			"%s: expected true or false, got the quoted string '%s' (drop the quotes)",
			key, v->text);
	} else {
		error_node(p, v, "%s: expected true or false, got '%s'", key, v->text);
	}
}

/* Decimal numbers only: no hex, inf or nan, which strtod() would take. */
static bool parse_number(const char *s, double *out) {
	const char *q = s;
	if (*q == '+' || *q == '-') {
		q++;
	}
	size_t int_digits = strspn(q, "0123456789");
	q += int_digits;
	size_t frac_digits = 0;
	if (*q == '.') {
		q++;
		frac_digits = strspn(q, "0123456789");
		q += frac_digits;
	}
	if (int_digits + frac_digits == 0) {
		return false;
	}
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '+' || *q == '-') {
			q++;
		}
		size_t exp_digits = strspn(q, "0123456789");
		if (exp_digits == 0) {
			return false;
		}
		q += exp_digits;
	}
	if (*q != '\0') {
		return false;
	}
	char *end;
	double d = strtod(s, &end);
	if (*end != '\0' || !isfinite(d)) {
		return false;
	}
	*out = d;
	return true;
}

struct range {
	double min, max;
	bool min_open; // min itself is excluded
};

static void get_double(struct parser *p, const struct node *v, const char *key, struct range r,
		       double *out) {
	if (!want_scalar(p, v, key, "a number")) {
		return;
	}
	double d;
	if (!v->plain || !parse_number(v->text, &d)) {
		error_node(p, v, "%s: expected a number, got '%s'", key, v->text);
		return;
	}
	if (r.min_open && (d <= r.min || d > r.max)) {
		error_node(p, v, "%s: must be greater than %g and at most %g, got %s", key, r.min,
			   r.max, v->text);
	} else if (!r.min_open && (d < r.min || d > r.max)) {
		error_node(p, v, "%s: must be between %g and %g, got %s", key, r.min, r.max,
			   v->text);
	} else {
		*out = d;
	}
}

static void get_uint(struct parser *p, const struct node *v, const char *key, unsigned min,
		     unsigned max, unsigned *out) {
	if (!want_scalar(p, v, key, "an integer")) {
		return;
	}
	const char *s = v->text;
	size_t n = strspn(s, "0123456789");
	if (!v->plain || n == 0 || s[n] != '\0') {
		error_node(p, v, "%s: expected an integer, got '%s'", key, s);
		return;
	}
	unsigned long long x = 0;
	for (size_t i = 0; i < n && x <= max; i++) {
		x = x * 10 + (unsigned)(s[i] - '0');
	}
	if (x < min || x > max) {
		error_node(p, v, "%s: must be between %u and %u, got %s", key, min, max, s);
		return;
	}
	*out = (unsigned)x;
}

static void format_duration(int64_t ms, char *out, size_t size) {
	static const struct {
		const char *unit;
		int64_t ms;
	} units[] = {{"d", DAY_S * 1000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ms >= units[i].ms && ms % units[i].ms == 0) {
			snprintf(out, size, "%lld%s", (long long)(ms / units[i].ms), units[i].unit);
			return;
		}
	}
	snprintf(out, size, "%lldms", (long long)ms);
}

/* A duration within [@min_ms, @max_ms]; *out in ms. */
static bool get_duration(struct parser *p, const struct node *v, const char *key, int64_t min_ms,
			 int64_t max_ms, int64_t *out) {
	if (!want_scalar(p, v, key, "a duration like 60s")) {
		return false;
	}
	int64_t ms;
	const char *s = v->text;
	if (s[0] == '-') {
		error_node(p, v, "%s: must not be negative, got '%s'", key, s);
		return false;
	}
	if (!timefmt_parse_duration_ms(s, &ms)) {
		if (strspn(s, "0123456789") == strlen(s)) {
			error_node(
				p, v,
				"%s: '%s' has no unit: write e.g. %ss or %sm (units ms, s, m, h, d, w)",
				key, s, s, s);
		} else {
			error_node(p, v, "%s: '%s' is not a duration (e.g. 500ms, 60s, 5m, 2h, 7d)",
				   key, s);
		}
		return false;
	}
	char lim[32];
	if (ms < min_ms) {
		format_duration(min_ms, lim, sizeof(lim));
		error_node(p, v, "%s: '%s' is below the minimum of %s", key, s, lim);
		return false;
	}
	if (ms > max_ms) {
		format_duration(max_ms, lim, sizeof(lim));
		error_node(p, v, "%s: '%s' is above the maximum of %s", key, s, lim);
		return false;
	}
	*out = ms;
	return true;
}

/* A duration counted in whole seconds. */
static void get_duration_s(struct parser *p, const struct node *v, const char *key, int64_t min_s,
			   int64_t max_s, int64_t *out) {
	int64_t ms;
	if (!get_duration(p, v, key, min_s * 1000, max_s * 1000, &ms)) {
		return;
	}
	if (ms % 1000 != 0) {
		error_node(p, v, "%s: must be a whole number of seconds, got '%s'", key, v->text);
		return;
	}
	*out = ms / 1000;
}

/* --- mappings --- */

struct key_ref {
	const struct node *key;
	size_t index;
};

static int compare_keys(const void *a, const void *b) {
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->key->text, y->key->text);
	if (c != 0) {
		return c;
	}
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Levenshtein distance of @a and @b, or @limit if it is at least that (typos in short keys;
 * a fuzzed key can be long, so longer strings give up early).
 */
static size_t edit_distance(const char *a, const char *b, size_t limit) {
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) >= limit) {
		return limit;
	}
	size_t row[65];
	for (size_t j = 0; j <= lb; j++) {
		row[j] = j;
	}
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (a[i - 1] != b[j - 1]);
			size_t del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			diag = up;
		}
	}
	return row[lb] < limit ? row[lb] : limit;
}

/*
 * Checks that @map is a mapping with string keys, no duplicates and (if @allowed is not NULL)
 * only the keys listed. An empty value counts as an empty mapping. Returns false if @map cannot
 * be walked at all; the caller then skips the section.
 */
static bool check_mapping(struct parser *p, const struct node *map, const char *section,
			  const char *const *allowed) {
	if (map->kind == NODE_BAD || is_null(map)) {
		return false;
	}
	if (map->kind != NODE_MAPPING) {
		error_node(p, map, "%s: expected a mapping (key: value lines), got %s", section,
			   describe(map));
		return false;
	}
	size_t n_keys = map->n / 2;
	struct key_ref *keys = xcalloc(n_keys + 1, sizeof(*keys));
	size_t n = 0;
	for (size_t i = 0; i < n_keys; i++) {
		const struct node *k = map->items[2 * i];
		if (k->kind == NODE_BAD) {
			continue;
		}
		if (k->kind != NODE_SCALAR) {
			error_node(p, k, "%s: keys must be strings, got %s", section, describe(k));
			continue;
		}
		keys[n++] = (struct key_ref){k, i};
		if (!allowed) {
			continue;
		}
		bool known = false;
		for (const char *const *a = allowed; *a && !known; a++) {
			known = strcmp(*a, k->text) == 0;
		}
		if (!known) {
			struct buf list;
			buf_init(&list);
			const char *near = NULL;
			size_t best = 3; // a suggestion within two edits
			for (const char *const *a = allowed; *a; a++) {
				buf_printf(&list, "%s%s", a == allowed ? "" : ", ", *a);
				size_t d = edit_distance(k->text, *a, best);
				if (d < best && 2 * d <= strlen(k->text)) { // not for "xy" vs "bt"
					best = d;
					near = *a;
				}
			}
			if (near) {
				error_node(
					p, k,
					"unknown key '%s' in %s: did you mean '%s'? (allowed: %s)",
					k->text, section, near, list.data);
			} else {
				error_node(p, k, "unknown key '%s' in %s (allowed: %s)", k->text,
					   section, list.data);
			}
			buf_finish(&list);
		}
	}
	// Sorting finds duplicates in O(n log n): a fuzzed mapping can hold 100000 keys.
	qsort(keys, n, sizeof(*keys), compare_keys);
	for (size_t i = 1; i < n; i++) {
		size_t first = i - 1;
		while (i < n && strcmp(keys[i].key->text, keys[first].key->text) == 0) {
			error_node(p, keys[i].key, "duplicate key '%s' in %s (first at line %zu)",
				   keys[i].key->text, section, keys[first].key->line);
			i++;
		}
	}
	free(keys);
	return true;
}

/* A list, or an empty value as an empty list. Returns false if there is nothing to walk. */
static bool check_sequence(struct parser *p, const struct node *seq, const char *section) {
	if (seq->kind == NODE_BAD || is_null(seq)) {
		return false;
	}
	if (seq->kind != NODE_SEQUENCE) {
		error_node(p, seq, "%s: expected a list (lines starting with '- '), got %s",
			   section, describe(seq));
		return false;
	}
	if (seq->n > CONFIG_MAX_ITEMS) {
		error_node(p, seq, "%s: too many entries (%zu, the limit is %d)", section, seq->n,
			   CONFIG_MAX_ITEMS);
		return false;
	}
	return true;
}

/* --- glob patterns --- */

/* The key prefixes each source produces (include/channel.h). */
static const char *const source_prefixes[SOURCE_COUNT][3] = {
	[SOURCE_THERMAL] = {"thermal", "cooling", NULL},
	[SOURCE_HWMON] = {"hwmon", NULL},
	[SOURCE_CPUFREQ] = {"cpufreq", NULL},
	[SOURCE_DEVFREQ] = {"devfreq", NULL},
	[SOURCE_IIO] = {"iio", NULL},
	[SOURCE_MEMINFO] = {"meminfo", NULL},
};

static const char *const source_names[SOURCE_COUNT] = {
	[SOURCE_THERMAL] = "thermal", [SOURCE_HWMON] = "hwmon", [SOURCE_CPUFREQ] = "cpufreq",
	[SOURCE_DEVFREQ] = "devfreq", [SOURCE_IIO] = "iio",     [SOURCE_MEMINFO] = "meminfo",
};

/* NULL if @pat is a usable fnmatch() pattern for channel keys, else the problem. */
static const char *glob_problem(const char *pat) {
	if (!*pat) {
		return "an empty pattern matches nothing";
	}
	for (size_t i = 0; pat[i]; i++) {
		unsigned char c = (unsigned char)pat[i];
		if (c == ' ') {
			return "channel keys never contain spaces";
		}
		if (c < 0x21 || c > 0x7e) {
			return "channel keys are printable ASCII";
		}
		if (c == '\\') {
			if (!pat[i + 1]) {
				return "a trailing '\\' escapes nothing";
			}
			i++;
		} else if (c == '[') {
			size_t j = i + 1;
			if (pat[j] == '!' || pat[j] == '^') {
				j++;
			}
			if (pat[j] == ']') {
				j++; // a leading ']' is a member, not the end
			}
			while (pat[j] && pat[j] != ']') {
				j++;
			}
			if (!pat[j]) {
				return "unbalanced '[': a bracket expression needs its ']'";
			}
			i = j;
		}
	}
	return NULL;
}

/* Whether the literal start of @pat, up to its first '/', names a prefix of @source's keys. */
static bool glob_fits_source(const char *pat, enum source_id source) {
	size_t lit = strcspn(pat, "*?[\\");
	const char *slash = memchr(pat, '/', lit);
	if (!slash) {
		return true; // "*soc*" may match anything
	}
	for (const char *const *q = source_prefixes[source]; *q; q++) {
		if (strlen(*q) == (size_t)(slash - pat) && strncmp(pat, *q, strlen(*q)) == 0) {
			return true;
		}
	}
	return false;
}

static void free_strv(char **v) {
	for (char **q = v; q && *q; q++) {
		free(*q);
	}
	free(v);
}

static char **empty_strv(void) {
	return xcalloc(1, sizeof(char *));
}

static void parse_globs(struct parser *p, const struct node *seq, const char *key,
			enum source_id source, char ***slot) {
	char section[64];
	snprintf(section, sizeof(section), "sources.%s.%s", source_names[source], key);
	if (is_null(seq)) {
		free_strv(*slot);
		*slot = empty_strv();
		return;
	}
	if (!check_sequence(p, seq, section)) {
		return;
	}
	char **v = xcalloc(seq->n + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++) {
		const struct node *item = seq->items[i];
		if (!want_scalar(p, item, section, "a glob pattern")) {
			continue;
		}
		const char *problem = glob_problem(item->text);
		if (problem) {
			error_node(p, item, "%s: bad glob '%s': %s", section, item->text, problem);
			continue;
		}
		if (!glob_fits_source(item->text, source)) {
			const char *const *pre = source_prefixes[source];
			error_node(p, item,
				   "%s: '%s' can never match: %s channel keys start with %s/%s%s%s",
				   section, item->text, source_names[source], pre[0],
				   pre[1] ? " or " : "", pre[1] ? pre[1] : "", pre[1] ? "/" : "");
			continue;
		}
		v[n++] = xstrdup(item->text);
	}
	free_strv(*slot);
	*slot = v;
}

/* --- sections --- */

static void parse_source(struct parser *p, const struct node *map, enum source_id id) {
	static const char *const keys[] = {"enabled", "include", "exclude", NULL};
	char section[32];
	snprintf(section, sizeof(section), "sources.%s", source_names[id]);
	struct source_config *src = &p->cfg->sources[id];
	if (!check_mapping(p, map, section, keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		if (key_is(k, "enabled")) {
			get_bool(p, v, "enabled", &src->enabled);
		} else if (key_is(k, "include")) {
			parse_globs(p, v, "include", id, &src->include);
		} else if (key_is(k, "exclude")) {
			parse_globs(p, v, "exclude", id, &src->exclude);
		}
	}
}

static void parse_sources(struct parser *p, const struct node *map) {
	static const char *const keys[] = {"thermal", "hwmon",   "cpufreq", "devfreq",
					   "iio",     "meminfo", NULL};
	if (!check_mapping(p, map, "sources", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		for (int id = 0; id < SOURCE_COUNT; id++) {
			if (key_is(map->items[i], source_names[id])) {
				parse_source(p, map->items[i + 1], (enum source_id)id);
			}
		}
	}
}

/* "ADDR:PORT" with a dotted IPv4 address or a bracketed IPv6 one; NULL if fine, else why not. */
static const char *listen_problem(const char *s) {
	char addr[INET6_ADDRSTRLEN + 1];
	const char *port;
	unsigned char bin[sizeof(struct in6_addr)];
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':') {
			return "an IPv6 address goes in brackets followed by :PORT, e.g. [::1]:9470";
		}
		size_t n = (size_t)(close - s - 1);
		if (n == 0 || n >= sizeof(addr)) {
			return "not an IPv6 address";
		}
		memcpy(addr, s + 1, n);
		addr[n] = '\0';
		if (inet_pton(AF_INET6, addr, bin) != 1) {
			return "not an IPv6 address";
		}
		port = close + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon) {
			return "expected ADDRESS:PORT, e.g. 127.0.0.1:9470";
		}
		size_t n = (size_t)(colon - s);
		if (memchr(s, ':', n)) {
			return "an IPv6 address goes in brackets, e.g. [::1]:9470";
		}
		if (n == 0 || n >= sizeof(addr)) {
			return "not an IPv4 address (host names are not resolved)";
		}
		memcpy(addr, s, n);
		addr[n] = '\0';
		if (inet_pton(AF_INET, addr, bin) != 1) {
			return "not an IPv4 address (host names are not resolved)";
		}
		port = colon + 1;
	}
	size_t digits = strspn(port, "0123456789");
	// Port 0 asks for any free port, as --listen allows (the log names the one bound).
	if (digits == 0 || port[digits] != '\0' || digits > 5 || atoi(port) > 65535) {
		return "the port must be a number from 0 to 65535";
	}
	return NULL;
}

/* A bearer token travels in an HTTP header: visible ASCII only. */
static bool token_valid(const char *s) {
	for (const char *q = s; *q; q++) {
		if (*q < 0x21 || *q > 0x7e) {
			return false;
		}
	}
	return *s != '\0';
}

static void parse_http(struct parser *p, const struct node *map) {
	static const char *const keys[] = {"listen",           "token",      "token_file",
					   "metrics_public",   "tls_cert",   "tls_key",
					   "tls_priorities",   "max_points", "max_window",
					   "connection_limit", NULL};
	struct http_config *http = &p->cfg->http;
	if (!check_mapping(p, map, "http", keys)) {
		return;
	}
	const struct node *token = NULL, *token_file = NULL, *cert = NULL, *key = NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		struct config_mark at = {(unsigned)v->line, (unsigned)v->col};
		if (key_is(k, "listen")) {
			http->listen_at = at;
			if (want_scalar(p, v, "listen", "ADDRESS:PORT")) {
				const char *problem = listen_problem(v->text);
				if (problem) {
					error_node(p, v, "listen: '%s': %s", v->text, problem);
				} else {
					get_string(p, v, "listen", &http->listen);
				}
			}
		} else if (key_is(k, "token")) {
			http->token_at = at;
			if (!is_null(v) && v->kind == NODE_SCALAR && !token_valid(v->text)) {
				error_node(p, v, "token: must be visible ASCII without spaces");
			} else {
				get_optional_string(p, v, "token", &http->token);
				token = http->token ? v : NULL;
			}
		} else if (key_is(k, "token_file")) {
			http->token_file_at = at;
			get_optional_string(p, v, "token_file", &http->token_file);
			token_file = http->token_file ? v : NULL;
		} else if (key_is(k, "metrics_public")) {
			get_bool(p, v, "metrics_public", &http->metrics_public);
		} else if (key_is(k, "tls_cert")) {
			http->tls_cert_at = at;
			get_optional_string(p, v, "tls_cert", &http->tls_cert);
			cert = http->tls_cert ? v : NULL;
		} else if (key_is(k, "tls_key")) {
			http->tls_key_at = at;
			get_optional_string(p, v, "tls_key", &http->tls_key);
			key = http->tls_key ? v : NULL;
		} else if (key_is(k, "tls_priorities")) {
			get_optional_string(p, v, "tls_priorities", &http->tls_priorities);
		} else if (key_is(k, "max_points")) {
			get_uint(p, v, "max_points", 2, 1000000, &http->max_points);
		} else if (key_is(k, "max_window")) {
			get_duration_s(p, v, "max_window", 60, 100 * YEAR_S, &http->max_window_s);
		} else if (key_is(k, "connection_limit")) {
			get_uint(p, v, "connection_limit", 1, 65536, &http->connection_limit);
		}
	}
	if (token && token_file) {
		error_node(p, token_file, "token_file: give either token or token_file, not both");
	}
	if (cert && !key) {
		error_node(p, cert, "tls_cert: needs tls_key as well");
	} else if (key && !cert) {
		error_node(p, key, "tls_key: needs tls_cert as well");
	}
}

static void parse_retention(struct parser *p, const struct node *map) {
	static const char *const keys[] = {"raw", NULL};
	if (!check_mapping(p, map, "retention", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		if (key_is(map->items[i], "raw")) {
			get_duration_s(p, map->items[i + 1], "raw", 3600, 100 * YEAR_S,
				       &p->cfg->retention_raw_s);
		}
	}
}

static void parse_channel(struct parser *p, const struct node *k, const struct node *map,
			  struct channel_override *o) {
	static const char *const keys[] = {"label", "enabled", "offset", "gain", NULL};
	const struct range any = {-1e9, 1e9, false};
	if (!check_mapping(p, map, k->text, keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *key = map->items[i], *v = map->items[i + 1];
		if (key_is(key, "label")) {
			get_optional_string(p, v, "label", &o->label);
		} else if (key_is(key, "enabled")) {
			get_bool(p, v, "enabled", &o->enabled);
		} else if (key_is(key, "offset")) {
			get_double(p, v, "offset", any, &o->offset);
		} else if (key_is(key, "gain")) {
			double gain = o->gain;
			get_double(p, v, "gain", any, &gain);
			if (gain == 0) {
				error_node(p, v,
					   "gain: 0 would turn every reading into the offset");
			} else {
				o->gain = gain;
			}
		}
	}
}

static int compare_overrides(const void *a, const void *b) {
	return strcmp(((const struct channel_override *)a)->key,
		      ((const struct channel_override *)b)->key);
}

static void parse_channels(struct parser *p, const struct node *map) {
	struct config *cfg = p->cfg;
	if (!check_mapping(p, map, "channels", NULL)) {
		return;
	}
	cfg->channels = xrealloc(cfg->channels,
				 (cfg->n_channels + map->n / 2 + 1) * sizeof(*cfg->channels));
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		if (k->kind != NODE_SCALAR) {
			continue; // reported by check_mapping()
		}
		if (!channel_key_valid(k->text)) {
			error_node(
				p, k,
				"channels: '%s' is not a channel key (1 to %d printable ASCII characters, no spaces, e.g. thermal/soc-thermal)",
				k->text, CHANNEL_KEY_MAX);
			continue;
		}
		struct channel_override *o = &cfg->channels[cfg->n_channels++];
		*o = (struct channel_override){.key = xstrdup(k->text), .enabled = true, .gain = 1};
		parse_channel(p, k, v, o);
	}
	// Sorted for config_channel_override()'s binary search; duplicates were errors above.
	qsort(cfg->channels, cfg->n_channels, sizeof(*cfg->channels), compare_overrides);
}

/* IIO names and channel stems become part of sysfs file names: no '/' and no spaces. */
static bool iio_name_valid(const char *s) {
	for (const char *q = s; *q; q++) {
		if (*q < 0x21 || *q > 0x7e || *q == '/') {
			return false;
		}
	}
	return *s != '\0';
}

/* "voltage2", "temp", "current0_i": lower-case type, optional index and modifier. */
static bool iio_channel_valid(const char *s) {
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz");
	return n > 0 && strspn(s + n, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(s + n) &&
	       s[strlen(s) - 1] != '_';
}

static void parse_linear(struct parser *p, const struct node *map, struct iio_channel_config *c) {
	static const char *const keys[] = {"gain", "offset", NULL};
	const struct range any = {-1e12, 1e12, false};
	if (!check_mapping(p, map, "linear", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		if (key_is(k, "gain")) {
			double gain = c->gain;
			get_double(p, v, "gain", any, &gain);
			if (gain == 0) {
				error_node(p, v,
					   "gain: 0 would turn every reading into the offset");
			} else {
				c->gain = gain;
			}
		} else if (key_is(k, "offset")) {
			get_double(p, v, "offset", any, &c->offset);
		}
	}
}

static void parse_iio_channel(struct parser *p, const struct node *map,
			      struct iio_channel_config *c) {
	static const char *const keys[] = {"device", "channel", "label", "unit", "linear", NULL};
	if (map->kind != NODE_BAD && (is_null(map) || map->kind != NODE_MAPPING)) {
		error_node(p, map,
			   "iio_channels: each entry is a mapping with device and channel, got %s",
			   describe(map));
		return;
	}
	if (!check_mapping(p, map, "iio_channels entry", keys)) {
		return;
	}
	bool has_device = false, has_channel = false;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		if (key_is(k, "device")) {
			has_device = true;
			if (want_scalar(p, v, "device", "an IIO device name") &&
			    !iio_name_valid(v->text)) {
				error_node(
					p, v,
					"device: '%s' is not an IIO device name (its 'name' file, or iio:deviceN)",
					v->text);
			} else {
				get_string(p, v, "device", &c->device);
			}
		} else if (key_is(k, "channel")) {
			has_channel = true;
			if (want_scalar(p, v, "channel", "an IIO channel like voltage2") &&
			    !iio_channel_valid(v->text)) {
				error_node(
					p, v,
					"channel: '%s' is not an IIO channel (e.g. voltage2 for in_voltage2_raw)",
					v->text);
			} else {
				get_string(p, v, "channel", &c->channel);
			}
		} else if (key_is(k, "label")) {
			get_optional_string(p, v, "label", &c->label);
		} else if (key_is(k, "unit")) {
			if (want_scalar(p, v, "unit", "a unit name")) {
				const char *unit = channel_unit_lookup(v->text);
				if (!unit) {
					error_node(
						p, v,
						"unit: unknown unit '%s' (e.g. celsius, volts, amperes, watts, hertz)",
						v->text);
				} else {
					c->unit = unit;
				}
			}
		} else if (key_is(k, "linear")) {
			parse_linear(p, v, c);
		}
	}
	if (!has_device) {
		error_node(p, map, "iio_channels entry: 'device' is required");
	}
	if (!has_channel) {
		error_node(p, map, "iio_channels entry: 'channel' is required");
	}
}

static void parse_iio_channels(struct parser *p, const struct node *seq) {
	struct config *cfg = p->cfg;
	if (!check_sequence(p, seq, "iio_channels")) {
		return;
	}
	cfg->iio_channels = xrealloc(cfg->iio_channels, (cfg->n_iio_channels + seq->n + 1) *
								sizeof(*cfg->iio_channels));
	for (size_t i = 0; i < seq->n; i++) {
		struct iio_channel_config *c = &cfg->iio_channels[cfg->n_iio_channels++];
		*c = (struct iio_channel_config){.unit = "volts", .gain = 1};
		parse_iio_channel(p, seq->items[i], c);
		for (size_t j = 0; c->device && c->channel && j + 1 < cfg->n_iio_channels; j++) {
			const struct iio_channel_config *o = &cfg->iio_channels[j];
			if (o->device && o->channel && strcmp(o->device, c->device) == 0 &&
			    strcmp(o->channel, c->channel) == 0) {
				error_node(p, seq->items[i],
					   "iio_channels: %s %s is configured twice", c->device,
					   c->channel);
				break;
			}
		}
	}
}

struct self_heating_keys {
	const struct node *rise_k, *current_a, *esr_ohm, *rth_k_per_w, *rated_ripple_a,
		*rated_rise_k;
};

static void parse_self_heating(struct parser *p, const struct node *map,
			       struct capacitor_config *c) {
	static const char *const keys[] = {"rise_k",      "current_a",      "esr_ohm",
					   "rth_k_per_w", "rated_ripple_a", "rated_rise_k",
					   NULL};
	const struct range positive = {0, 1e6, true}, non_negative = {0, 1e6, false};
	if (!check_mapping(p, map, "self_heating", keys)) {
		return;
	}
	struct self_heating_keys seen = {0};
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		if (key_is(k, "rise_k")) {
			seen.rise_k = v;
			get_double(p, v, "rise_k", (struct range){0, 100, false}, &c->rise_k);
		} else if (key_is(k, "current_a")) {
			seen.current_a = v;
			get_double(p, v, "current_a", non_negative, &c->current_a);
		} else if (key_is(k, "esr_ohm")) {
			seen.esr_ohm = v;
			get_double(p, v, "esr_ohm", positive, &c->esr_ohm);
		} else if (key_is(k, "rth_k_per_w")) {
			seen.rth_k_per_w = v;
			get_double(p, v, "rth_k_per_w", positive, &c->rth_k_per_w);
		} else if (key_is(k, "rated_ripple_a")) {
			seen.rated_ripple_a = v;
			get_double(p, v, "rated_ripple_a", positive, &c->rated_ripple_a);
		} else if (key_is(k, "rated_rise_k")) {
			seen.rated_rise_k = v;
			get_double(p, v, "rated_rise_k", (struct range){0, 100, true},
				   &c->rated_rise_k);
		}
	}
	bool power = seen.esr_ohm || seen.rth_k_per_w;
	bool ripple = seen.rated_ripple_a || seen.rated_rise_k;
	if (seen.rise_k && !seen.current_a && !power && !ripple) {
		c->self_heating = SELF_HEATING_RISE;
	} else if (!seen.rise_k && seen.current_a && seen.esr_ohm && seen.rth_k_per_w && !ripple) {
		c->self_heating = SELF_HEATING_POWER;
	} else if (!seen.rise_k && seen.current_a && seen.rated_ripple_a && seen.rated_rise_k &&
		   !power) {
		c->self_heating = SELF_HEATING_RIPPLE;
	} else {
		error_node(
			p, map,
			"self_heating: give exactly one form: {rise_k}, {current_a, esr_ohm, rth_k_per_w} or {current_a, rated_ripple_a, rated_rise_k}");
	}
}

/* Matches @v against @names; the index, or -1 after reporting the allowed words. */
static int get_enum(struct parser *p, const struct node *v, const char *key,
		    const char *const *names) {
	struct buf list;
	buf_init(&list);
	for (const char *const *q = names; *q; q++) {
		buf_printf(&list, "%s%s", q == names ? "" : " or ", *q);
	}
	int found = -1;
	if (want_scalar(p, v, key, list.data)) {
		for (int i = 0; names[i] && found < 0; i++) {
			if (strcmp(v->text, names[i]) == 0) {
				found = i;
			}
		}
		if (found < 0) {
			error_node(p, v, "%s: expected %s, got '%s'", key, list.data, v->text);
		}
	}
	buf_finish(&list);
	return found;
}

struct capacitor_keys {
	const struct node *name, *sensor, *rated_life_h, *rated_temp_c, *model, *bt, *ea_ev,
		*self_heating, *validity_low_c;
};

static void check_capacitor(struct parser *p, const struct node *map,
			    const struct capacitor_keys *seen, struct capacitor_config *c) {
	static const char *const required[] = {"name", "sensor", "rated_life_h", "rated_temp_c"};
	const struct node *const present[] = {seen->name, seen->sensor, seen->rated_life_h,
					      seen->rated_temp_c};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!present[i]) {
			error_node(p, map, "capacitor%s%s: '%s' is required", c->name ? " " : "",
				   c->name ? c->name : "", required[i]);
		}
	}
	if (seen->bt && c->model != LIFETIME_MODEL_BT) {
		error_node(p, seen->bt, "bt: applies to model bt only (arrhenius uses ea_ev)");
	}
	if (seen->ea_ev && c->model != LIFETIME_MODEL_ARRHENIUS) {
		error_node(
			p, seen->ea_ev,
			"ea_ev: applies to model arrhenius only (set model: arrhenius, or use bt)");
	}
	if (!seen->ea_ev && c->model == LIFETIME_MODEL_ARRHENIUS) {
		error_node(p, seen->model,
			   "model: arrhenius needs ea_ev (the activation energy in eV, e.g. 0.83)");
	}
	if (seen->self_heating && c->basis != TEMP_BASIS_AMBIENT) {
		error_node(
			p, seen->self_heating,
			"self_heating: only for an ambient basis: a %s temperature already includes the capacitor's own heating, so adding it again would count it twice",
			c->basis == TEMP_BASIS_CASE ? "case" : "core");
	}
	if (seen->validity_low_c && seen->rated_temp_c && !isnan(c->validity_low_c) &&
	    c->validity_low_c >= c->rated_temp_c) {
		error_node(p, seen->validity_low_c,
			   "validity_low_c: must be below rated_temp_c (%g)", c->rated_temp_c);
	}
}

static void parse_capacitor(struct parser *p, const struct node *map, struct capacitor_config *c) {
	static const char *const keys[] = {"name",
					   "sensor",
					   "basis",
					   "rated_life_h",
					   "rated_temp_c",
					   "model",
					   "bt",
					   "ea_ev",
					   "type",
					   "self_heating",
					   "in_service",
					   "life_cap_years",
					   "validity_low_c",
					   NULL};
	static const char *const bases[] = {"ambient", "case", "core", NULL};
	static const char *const models[] = {"bt", "arrhenius", NULL};
	static const char *const types[] = {"wet", "polymer", NULL};
	if (map->kind != NODE_BAD && (is_null(map) || map->kind != NODE_MAPPING)) {
		error_node(
			p, map,
			"capacitors: each entry is a mapping with name, sensor, rated_life_h and rated_temp_c, got %s",
			describe(map));
		return;
	}
	if (!check_mapping(p, map, "capacitor", keys)) {
		return;
	}
	struct capacitor_keys seen = {0};
	int e;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		if (key_is(k, "name")) {
			seen.name = v;
			get_string(p, v, "name", &c->name);
		} else if (key_is(k, "sensor")) {
			seen.sensor = v;
			get_string(p, v, "sensor", &c->sensor);
		} else if (key_is(k, "basis")) {
			if ((e = get_enum(p, v, "basis", bases)) >= 0) {
				c->basis = (enum temp_basis)e;
			}
		} else if (key_is(k, "rated_life_h")) {
			seen.rated_life_h = v;
			get_double(p, v, "rated_life_h", (struct range){0, 1e7, true},
				   &c->rated_life_h);
		} else if (key_is(k, "rated_temp_c")) {
			seen.rated_temp_c = v;
			get_double(p, v, "rated_temp_c", (struct range){40, 200, false},
				   &c->rated_temp_c);
		} else if (key_is(k, "model")) {
			seen.model = v;
			if ((e = get_enum(p, v, "model", models)) >= 0) {
				c->model = (enum lifetime_model)e;
			}
		} else if (key_is(k, "bt")) {
			seen.bt = v;
			get_double(p, v, "bt", (struct range){1, 10, true}, &c->bt);
		} else if (key_is(k, "ea_ev")) {
			seen.ea_ev = v;
			get_double(p, v, "ea_ev", (struct range){0, 5, true}, &c->ea_ev);
		} else if (key_is(k, "type")) {
			if ((e = get_enum(p, v, "type", types)) >= 0) {
				c->type = (enum capacitor_type)e;
			}
		} else if (key_is(k, "self_heating")) {
			seen.self_heating = is_null(v) ? NULL : v;
			parse_self_heating(p, v, c);
		} else if (key_is(k, "in_service")) {
			int64_t ts;
			if (want_scalar(p, v, "in_service", "a date YYYY-MM-DD")) {
				if (timefmt_parse_date(v->text, &ts)) {
					c->in_service = ts;
				} else {
					error_node(
						p, v,
						"in_service: expected a date YYYY-MM-DD, got '%s'",
						v->text);
				}
			}
		} else if (key_is(k, "life_cap_years")) {
			get_double(p, v, "life_cap_years", (struct range){0, 100, true},
				   &c->life_cap_years);
		} else if (key_is(k, "validity_low_c")) {
			seen.validity_low_c = v;
			get_double(p, v, "validity_low_c", (struct range){-55, 150, false},
				   &c->validity_low_c);
		}
	}
	check_capacitor(p, map, &seen, c);
}

void config_capacitor_init(struct capacitor_config *c) {
	*c = (struct capacitor_config){
		.basis = TEMP_BASIS_AMBIENT,
		.model = LIFETIME_MODEL_BT,
		.bt = NAN,
		.ea_ev = NAN,
		.type = CAPACITOR_TYPE_WET,
		.self_heating = SELF_HEATING_NONE,
		.in_service = -1,
		.life_cap_years = 15,
		.validity_low_c = NAN,
	};
}

static void parse_capacitors(struct parser *p, const struct node *seq) {
	struct config *cfg = p->cfg;
	if (!check_sequence(p, seq, "capacitors")) {
		return;
	}
	cfg->capacitors = xrealloc(cfg->capacitors,
				   (cfg->n_capacitors + seq->n + 1) * sizeof(*cfg->capacitors));
	for (size_t i = 0; i < seq->n; i++) {
		const struct node *item = seq->items[i];
		struct capacitor_config *c = &cfg->capacitors[cfg->n_capacitors++];
		config_capacitor_init(c);
		c->line = (int)item->line;
		parse_capacitor(p, item, c);
		for (size_t j = 0; c->name && j + 1 < cfg->n_capacitors; j++) {
			if (cfg->capacitors[j].name &&
			    strcmp(cfg->capacitors[j].name, c->name) == 0) {
				error_node(
					p, item,
					"capacitors: the name '%s' is used twice (first at line %d)",
					c->name, cfg->capacitors[j].line);
				break;
			}
		}
	}
}

static void parse_root(struct parser *p, const struct node *map) {
	static const char *const keys[] = {"interval",  "database",     "sysfs_root", "procfs_root",
					   "retention", "rescan",       "http",       "sources",
					   "channels",  "iio_channels", "capacitors", NULL};
	struct config *cfg = p->cfg;
	if (map->kind != NODE_MAPPING && !is_null(map) && map->kind != NODE_BAD) {
		error_node(p, map, "the configuration must be a mapping of keys to values, got %s",
			   describe(map));
		return;
	}
	if (!check_mapping(p, map, "the top level", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct node *k = map->items[i], *v = map->items[i + 1];
		if (key_is(k, "interval")) {
			get_duration(p, v, "interval", 1000, DAY_S * 1000, &cfg->interval_ms);
		} else if (key_is(k, "database")) {
			get_string(p, v, "database", &cfg->database);
		} else if (key_is(k, "sysfs_root")) {
			get_string(p, v, "sysfs_root", &cfg->sysfs_root);
		} else if (key_is(k, "procfs_root")) {
			get_string(p, v, "procfs_root", &cfg->procfs_root);
		} else if (key_is(k, "retention")) {
			parse_retention(p, v);
		} else if (key_is(k, "rescan")) {
			get_duration_s(p, v, "rescan", 1, DAY_S, &cfg->rescan_s);
		} else if (key_is(k, "http")) {
			parse_http(p, v);
		} else if (key_is(k, "sources")) {
			parse_sources(p, v);
		} else if (key_is(k, "channels")) {
			parse_channels(p, v);
		} else if (key_is(k, "iio_channels")) {
			parse_iio_channels(p, v);
		} else if (key_is(k, "capacitors")) {
			parse_capacitors(p, v);
		}
	}
}

/* --- public --- */

void config_init(struct config *cfg) {
	*cfg = (struct config){
		.interval_ms = 60000,
		.database = xstrdup(CONFIG_DEFAULT_DATABASE),
		.sysfs_root = xstrdup("/sys"),
		.procfs_root = xstrdup("/proc"),
		.retention_raw_s = 400 * DAY_S,
		.rescan_s = 300,
		.http =
			{
				.listen = xstrdup(CONFIG_DEFAULT_LISTEN),
				.max_points = 5000,
				.max_window_s = 400 * DAY_S,
				.connection_limit = 32,
			},
	};
	for (int i = 0; i < SOURCE_COUNT; i++) {
		cfg->sources[i] = (struct source_config){
			.enabled = true,
			.include = empty_strv(),
			.exclude = empty_strv(),
		};
	}
}

void config_finish(struct config *cfg) {
	if (!cfg) {
		return;
	}
	free(cfg->path);
	free(cfg->database);
	free(cfg->sysfs_root);
	free(cfg->procfs_root);
	free(cfg->http.listen);
	free(cfg->http.token);
	free(cfg->http.token_file);
	free(cfg->http.tls_cert);
	free(cfg->http.tls_key);
	free(cfg->http.tls_priorities);
	for (int i = 0; i < SOURCE_COUNT; i++) {
		free_strv(cfg->sources[i].include);
		free_strv(cfg->sources[i].exclude);
	}
	for (size_t i = 0; i < cfg->n_channels; i++) {
		free(cfg->channels[i].key);
		free(cfg->channels[i].label);
	}
	free(cfg->channels);
	for (size_t i = 0; i < cfg->n_iio_channels; i++) {
		free(cfg->iio_channels[i].device);
		free(cfg->iio_channels[i].channel);
		free(cfg->iio_channels[i].label);
	}
	free(cfg->iio_channels);
	for (size_t i = 0; i < cfg->n_capacitors; i++) {
		free(cfg->capacitors[i].name);
		free(cfg->capacitors[i].sensor);
	}
	free(cfg->capacitors);
	*cfg = (struct config){0};
}

bool config_load_string(struct config *cfg, const char *name, const char *text, size_t len,
			char **errors) {
	struct parser p = {.name = name, .cfg = cfg};
	struct node *root = NULL;
	if (len > CONFIG_MAX_BYTES) {
		error_at(&p, 1, 1, "file too large: %zu bytes, the limit is %d KiB", len,
			 CONFIG_MAX_BYTES / 1024);
		goto out;
	}
	if (build_tree(&p, text, len, &root) && root) {
		parse_root(&p, root);
	}
	node_free(root);
out:;
	bool good = p.n_errors == 0 && p.dropped == 0;
	flush_errors(&p, errors);
	return good;
}

/* Reads all of @fd up to the cap (plus one byte, to tell "too large"); *text is caller-freed. */
static int read_capped(int fd, char **text, size_t *len) {
	struct buf b;
	buf_init(&b);
	char chunk[16384];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			int err = errno;
			buf_finish(&b);
			return -err;
		}
		if (n == 0 || b.len > CONFIG_MAX_BYTES) {
			break;
		}
		buf_append(&b, chunk, (size_t)n);
	}
	*len = b.len;
	*text = buf_steal(&b);
	return 0;
}

bool config_load(struct config *cfg, const char *path, char **errors) {
	free(cfg->path);
	cfg->path = xstrdup(path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = fd < 0 ? -errno : 0;
	char *text = NULL;
	size_t len = 0;
	if (rc == 0) {
		rc = read_capped(fd, &text, &len);
		close(fd);
	}
	if (rc < 0) {
		struct buf b;
		buf_init(&b);
		if (errors && *errors) {
			buf_puts(&b, *errors);
			free(*errors);
		}
		buf_printf(&b, "%s:1:1: could not read the configuration: %s\n", path,
			   strerror(-rc));
		if (errors) {
			*errors = buf_steal(&b);
		} else {
			buf_finish(&b);
		}
		return false;
	}
	bool good = config_load_string(cfg, path, text, len, errors);
	free(text);
	return good;
}

/* --- whole-configuration checks --- */

__attribute__((format(printf, 4, 5))) static void
problem_at(struct buf *b, const char *name, struct config_mark at, const char *fmt, ...) {
	if (at.line) {
		buf_printf(b, "%s:%u:%u: ", name, at.line, at.col);
	} else {
		buf_printf(b, "%s: ", name);
	}
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
	buf_putc(b, '\n');
}

/* Reads a small file the configuration names; NULL with the problem added to @b. */
static char *read_named_file(struct buf *b, const char *name, struct config_mark at,
			     const char *key, const char *path) {
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = fd < 0 ? -errno : 0;
	char *text = NULL;
	size_t len = 0;
	if (rc == 0) {
		rc = read_capped(fd, &text, &len);
		close(fd);
	}
	if (rc < 0) {
		problem_at(b, name, at, "%s: cannot read '%s': %s", key, path, strerror(-rc));
		return NULL;
	}
	const char *why = len == 0                 ? "the file is empty"
			  : len > CONFIG_MAX_BYTES ? "the file is larger than 1 MiB"
			  : strlen(text) != len    ? "the file is binary (contains a NUL byte)"
						   : NULL;
	if (why) {
		problem_at(b, name, at, "%s: '%s': %s", key, path, why);
		free(text);
		return NULL;
	}
	return text;
}

bool config_listen_is_loopback(const char *listen) {
	// Only the address matters here: a flag may ask for port 0 (any free port).
	char addr[INET6_ADDRSTRLEN + 1];
	const char *end = !listen            ? NULL
			  : listen[0] == '[' ? strchr(listen, ']')
					     : strrchr(listen, ':');
	const char *start = listen && listen[0] == '[' ? listen + 1 : listen;
	if (!end || end < start || (size_t)(end - start) >= sizeof(addr)) {
		return false;
	}
	size_t n = (size_t)(end - start);
	memcpy(addr, start, n);
	addr[n] = '\0';
	struct in_addr in4;
	struct in6_addr in6;
	if (strcmp(addr, "localhost") == 0) {
		return true; // the server binds it as 127.0.0.1
	}
	if (inet_pton(AF_INET, addr, &in4) == 1) {
		return (ntohl(in4.s_addr) >> 24) == 127;
	}
	if (inet_pton(AF_INET6, addr, &in6) == 1) {
		return IN6_IS_ADDR_LOOPBACK(&in6) ||
		       (IN6_IS_ADDR_V4MAPPED(&in6) && in6.s6_addr[12] == 127);
	}
	return false;
}

bool config_validate_http(const struct config *cfg, int local, char **errors) {
	const struct http_config *hc = &cfg->http;
	const char *name = cfg->path ? cfg->path : "configuration";
	struct buf b;
	buf_init(&b);
	char *token = NULL;
	struct config_mark token_at = hc->token_at;
	if (hc->token) {
		token = xstrdup(hc->token);
	} else if (hc->token_file) {
		token_at = hc->token_file_at;
		token = read_named_file(&b, name, hc->token_file_at, "http.token_file",
					hc->token_file);
		size_t n = token ? strlen(token) : 0;
		while (n > 0 &&
		       (token[n - 1] == '\n' || token[n - 1] == '\r' || token[n - 1] == ' ')) {
			token[--n] = '\0';
		}
	}
	const char *key = hc->token ? "http.token" : "http.token_file";
	if (token && !token_valid(token)) {
		problem_at(&b, name, token_at, "%s: the token must be visible ASCII without spaces",
			   key);
	} else if (token && strlen(token) < CONFIG_TOKEN_MIN_LEN) {
		problem_at(
			&b, name, token_at,
			"%s: the token has %zu characters, at least %d are required (e.g. `openssl rand -hex 32`)",
			key, strlen(token), CONFIG_TOKEN_MIN_LEN);
	}
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	if (local < 0) {
		local = config_listen_is_loopback(hc->listen);
	}
	if (!local && !hc->token && !hc->token_file) {
		problem_at(
			&b, name, hc->listen_at,
			"http.listen: '%s' is not a loopback address, so a token is required: set http.token or http.token_file (or listen on 127.0.0.1 behind an SSH tunnel or a reverse proxy)",
			hc->listen ? hc->listen : "the socket-activated listener");
	}
	if (hc->tls_cert && !hc->tls_key) {
		problem_at(&b, name, hc->tls_cert_at, "http.tls_cert: needs http.tls_key as well");
	} else if (hc->tls_key && !hc->tls_cert) {
		problem_at(&b, name, hc->tls_key_at, "http.tls_key: needs http.tls_cert as well");
	}
	if (hc->tls_cert) {
		free(read_named_file(&b, name, hc->tls_cert_at, "http.tls_cert", hc->tls_cert));
	}
	if (hc->tls_key) {
		char *pem = read_named_file(&b, name, hc->tls_key_at, "http.tls_key", hc->tls_key);
		if (pem) {
			explicit_bzero(pem, strlen(pem));
		}
		free(pem);
	}
	bool good = b.len == 0;
	if (!good && errors) {
		if (*errors) {
			char *all = xasprintf("%s%s", *errors, b.data);
			free(*errors);
			*errors = all;
		} else {
			*errors = buf_steal(&b);
		}
	}
	buf_finish(&b);
	return good;
}

bool config_validate(const struct config *cfg, char **errors) {
	return config_validate_http(cfg, -1, errors);
}

const char *config_source_name(enum source_id id) {
	return (unsigned)id < SOURCE_COUNT ? source_names[id] : "unknown";
}

const struct channel_override *config_channel_override(const struct config *cfg, const char *key) {
	if (cfg->n_channels == 0) {
		return NULL;
	}
	struct channel_override probe = {.key = (char *)key};
	return bsearch(&probe, cfg->channels, cfg->n_channels, sizeof(*cfg->channels),
		       compare_overrides);
}

static bool matches_any(char *const *globs, const char *key) {
	for (char *const *g = globs; g && *g; g++) {
		if (fnmatch(*g, key, 0) == 0) {
			return true;
		}
	}
	return false;
}

bool config_channel_wanted(const struct config *cfg, enum source_id source, const char *key) {
	if ((unsigned)source >= SOURCE_COUNT) {
		return false;
	}
	const struct source_config *src = &cfg->sources[source];
	if (!src->enabled) {
		return false;
	}
	if (src->include && src->include[0] && !matches_any(src->include, key)) {
		return false;
	}
	if (matches_any(src->exclude, key)) {
		return false;
	}
	const struct channel_override *o = config_channel_override(cfg, key);
	return !o || o->enabled;
}
