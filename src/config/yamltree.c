/* The YAML toolkit (yamltree.h): libyaml events to a node tree, typed values, errors. */
#include "yamltree.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "buf.h"
#include "textdist.h"
#include "timefmt.h"
#include "xalloc.h"

#define DAY_S 86400LL

/* --- errors --- */

void yamltree_error_at(struct yamltree *p, size_t line, size_t col, const char *fmt, ...) {
	if (p->n_errors >= YAMLTREE_MAX_ERRORS) {
		p->dropped++;
		return;
	}
	// Values quoted in messages may hold line breaks (folded scalars): one error, one line.
	struct buf clean;
	buf_init(&clean);
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf_printable(&clean, fmt, ap);
	va_end(ap);
	p->errors = xgrow(p->errors, &p->cap_errors, p->n_errors + 1, sizeof(*p->errors));
	p->errors[p->n_errors] = (struct yamltree_error){line, col, p->n_errors, buf_steal(&clean)};
	p->n_errors++;
}

static int compare_errors(const void *a, const void *b) {
	const struct yamltree_error *x = a, *y = b;
	if (x->line != y->line) {
		return x->line < y->line ? -1 : 1;
	}
	if (x->col != y->col) {
		return x->col < y->col ? -1 : 1;
	}
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Appends the collected errors (if any) to *out in file order and frees them. */
void yamltree_flush_errors(struct yamltree *p, char **out) {
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

void yamltree_node_free(struct yamltree_node *n) {
	if (!n) {
		return;
	}
	// Recursion is bounded: yamltree_build() refuses documents deeper than YAMLTREE_MAX_DEPTH.
	for (size_t i = 0; i < n->n; i++) {
		yamltree_node_free(n->items[i]);
	}
	free(n->items);
	free(n->text);
	free(n);
}

static struct yamltree_node *node_new(enum yamltree_kind kind, yaml_mark_t mark) {
	struct yamltree_node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->line = mark.line + 1;
	n->col = mark.column + 1;
	return n;
}

static void node_append(struct yamltree_node *parent, struct yamltree_node *child) {
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

static void syntax_error(struct yamltree *p, yaml_parser_t *yp, const char *text, size_t len) {
	size_t line, col;
	const char *problem = yp->problem ? yp->problem : "invalid YAML";
	switch (yp->error) {
	case YAML_MEMORY_ERROR:
		yamltree_error_at(p, 1, 1, "out of memory while parsing");
		return;
	case YAML_READER_ERROR:
		offset_position(text, len, yp->problem_offset, &line, &col);
		yamltree_error_at(p, line, col, "%s (the file must be UTF-8 text)", problem);
		return;
	default:
		break;
	}
	line = yp->problem_mark.line + 1;
	col = yp->problem_mark.column + 1;
	size_t tab = indent_tab_col(text, len, line);
	if (tab) {
		yamltree_error_at(p, line, tab,
				  "tabs are not allowed for indentation: indent with spaces");
		return;
	}
	if (yp->context) {
		yamltree_error_at(p, line, col, "%s %s started at line %zu, column %zu", problem,
				  yp->context, yp->context_mark.line + 1,
				  yp->context_mark.column + 1);
	} else {
		yamltree_error_at(p, line, col, "%s", problem);
	}
}

/* Rejects YAML features a configuration has no use for, which would hide what a value is. */
static void check_node_props(struct yamltree *p, yaml_char_t *anchor, yaml_char_t *tag,
			     bool implicit, yaml_mark_t mark) {
	if (anchor) {
		yamltree_error_at(p, mark.line + 1, mark.column + 1,
				  "anchors are not supported ('&%s'): write each value out",
				  anchor);
	}
	if (tag && !implicit) {
		yamltree_error_at(p, mark.line + 1, mark.column + 1,
				  "tags are not supported ('%s'): write the plain value", tag);
	}
}

/*
 * Parses @text into a tree; *root is NULL for an empty stream. Returns false after a syntax
 * error (reported) or an unsupported structure that makes the rest meaningless.
 */
bool yamltree_build(struct yamltree *p, const char *text, size_t len, struct yamltree_node **root) {
	yaml_parser_t yp;
	struct yamltree_node *stack[YAMLTREE_MAX_DEPTH];
	size_t depth = 0;
	unsigned documents = 0;
	bool done = false, good = true;
	*root = NULL;
	if (!yaml_parser_initialize(&yp)) {
		yamltree_error_at(p, 1, 1, "out of memory while parsing");
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
		struct yamltree_node *n = NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1) {
				yamltree_error_at(
					p, ev.start_mark.line + 1, ev.start_mark.column + 1,
					"multiple documents are not supported: keep one configuration per file");
				good = false;
				done = true;
			}
			break;
		case YAML_ALIAS_EVENT:
			yamltree_error_at(p, ev.start_mark.line + 1, ev.start_mark.column + 1,
					  "aliases are not supported ('*%s'): write the value out",
					  ev.data.alias.anchor);
			n = node_new(YAMLTREE_BAD, ev.start_mark);
			break;
		case YAML_SCALAR_EVENT:
			check_node_props(p, ev.data.scalar.anchor, ev.data.scalar.tag,
					 ev.data.scalar.plain_implicit ||
						 ev.data.scalar.quoted_implicit,
					 ev.start_mark);
			n = node_new(YAMLTREE_SCALAR, ev.start_mark);
			n->len = ev.data.scalar.length;
			n->text = xstrndup((const char *)ev.data.scalar.value, n->len);
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			if (strlen(n->text) != n->len) {
				yamltree_error_node(p, n,
						    "NUL characters are not allowed in values");
				n->kind = YAMLTREE_BAD;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
			check_node_props(p, ev.data.sequence_start.anchor,
					 ev.data.sequence_start.tag,
					 ev.data.sequence_start.implicit, ev.start_mark);
			n = node_new(YAMLTREE_SEQUENCE, ev.start_mark);
			break;
		case YAML_MAPPING_START_EVENT:
			check_node_props(p, ev.data.mapping_start.anchor, ev.data.mapping_start.tag,
					 ev.data.mapping_start.implicit, ev.start_mark);
			n = node_new(YAMLTREE_MAPPING, ev.start_mark);
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
			if (n->kind == YAMLTREE_SEQUENCE || n->kind == YAMLTREE_MAPPING) {
				if (depth == YAMLTREE_MAX_DEPTH) {
					yamltree_error_node(p, n, "nesting deeper than %d levels",
							    YAMLTREE_MAX_DEPTH);
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

bool yamltree_is_null(const struct yamltree_node *n) {
	return n->kind == YAMLTREE_SCALAR && n->plain &&
	       (n->len == 0 || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0);
}

const char *yamltree_describe(const struct yamltree_node *n) {
	switch (n->kind) {
	case YAMLTREE_MAPPING:
		return "a mapping";
	case YAMLTREE_SEQUENCE:
		return "a list";
	default:
		return yamltree_is_null(n) ? "an empty value" : "a string";
	}
}

/*
 * True if @v is a usable scalar for @key; otherwise reports "KEY: expected WHAT, got ...".
 * YAMLTREE_BAD values were reported already and only return false.
 */
bool yamltree_want_scalar(struct yamltree *p, const struct yamltree_node *v, const char *key,
			  const char *what) {
	if (v->kind == YAMLTREE_BAD) {
		return false;
	}
	if (v->kind != YAMLTREE_SCALAR || yamltree_is_null(v)) {
		yamltree_error_node(p, v, "%s: expected %s, got %s", key, what,
				    yamltree_describe(v));
		return false;
	}
	return true;
}

bool yamltree_key_is(const struct yamltree_node *k, const char *name) {
	return k->kind == YAMLTREE_SCALAR && strcmp(k->text, name) == 0;
}

void yamltree_get_string(struct yamltree *p, const struct yamltree_node *v, const char *key,
			 char **slot) {
	if (!yamltree_want_scalar(p, v, key, "a string")) {
		return;
	}
	free(*slot);
	*slot = xstrdup(v->text);
}

/* An optional string: an empty value unsets it. */
void yamltree_get_optional_string(struct yamltree *p, const struct yamltree_node *v,
				  const char *key, char **slot) {
	if (yamltree_is_null(v)) {
		free(*slot);
		*slot = NULL;
		return;
	}
	yamltree_get_string(p, v, key, slot);
}

/* Whether @v's text holds a control character, said at @v when it does. */
static bool control_in(struct yamltree *p, const struct yamltree_node *v, const char *key) {
	for (const unsigned char *c = (const unsigned char *)v->text; *c; c++) {
		if (*c < 0x20 || *c == 0x7f) {
			char one[2] = {(char)*c, '\0'};
			yamltree_error_node(
				p, v,
				"%s: a control character (%s) in '%s': names and labels "
				"are printed where terminals read them",
				key, one, v->text);
			return true;
		}
	}
	return false;
}

void yamltree_get_text(struct yamltree *p, const struct yamltree_node *v, const char *key,
		       char **slot) {
	if (yamltree_want_scalar(p, v, key, "a string") && !control_in(p, v, key)) {
		yamltree_get_string(p, v, key, slot);
	}
}

void yamltree_get_optional_text(struct yamltree *p, const struct yamltree_node *v, const char *key,
				char **slot) {
	if (yamltree_is_null(v)) {
		yamltree_get_optional_string(p, v, key, slot);
	} else {
		yamltree_get_text(p, v, key, slot);
	}
}

void yamltree_get_bool(struct yamltree *p, const struct yamltree_node *v, const char *key,
		       bool *out) {
	if (!yamltree_want_scalar(p, v, key, "true or false")) {
		return;
	}
	// Only the two words: YAML 1.1's yes/no/on/off surprise people (the "Norway problem").
	if (v->plain && strcmp(v->text, "true") == 0) {
		*out = true;
	} else if (v->plain && strcmp(v->text, "false") == 0) {
		*out = false;
	} else if (!v->plain) {
		yamltree_error_node(
			p, v,
			"%s: expected true or false, got the quoted string '%s' (drop the quotes)",
			key, v->text);
	} else {
		yamltree_error_node(p, v, "%s: expected true or false, got '%s'", key, v->text);
	}
}

/* Decimal numbers only: no hex, inf or nan, which strtod() would take. */
bool yamltree_parse_number(const char *s, double *out) {
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

void yamltree_get_double(struct yamltree *p, const struct yamltree_node *v, const char *key,
			 struct yamltree_range r, double *out) {
	if (!yamltree_want_scalar(p, v, key, "a number")) {
		return;
	}
	double d;
	if (!v->plain || !yamltree_parse_number(v->text, &d)) {
		yamltree_error_node(p, v, "%s: expected a number, got '%s'", key, v->text);
		return;
	}
	if (r.min_open && (d <= r.min || d > r.max)) {
		yamltree_error_node(p, v, "%s: must be greater than %g and at most %g, got %s", key,
				    r.min, r.max, v->text);
	} else if (!r.min_open && (d < r.min || d > r.max)) {
		yamltree_error_node(p, v, "%s: must be between %g and %g, got %s", key, r.min,
				    r.max, v->text);
	} else {
		*out = d;
	}
}

void yamltree_get_uint(struct yamltree *p, const struct yamltree_node *v, const char *key,
		       unsigned min, unsigned max, unsigned *out) {
	if (!yamltree_want_scalar(p, v, key, "an integer")) {
		return;
	}
	const char *s = v->text;
	size_t n = strspn(s, "0123456789");
	if (!v->plain || n == 0 || s[n] != '\0') {
		yamltree_error_node(p, v, "%s: expected an integer, got '%s'", key, s);
		return;
	}
	unsigned long long x = 0;
	for (size_t i = 0; i < n && x <= max; i++) {
		x = x * 10 + (unsigned)(s[i] - '0');
	}
	if (x < min || x > max) {
		yamltree_error_node(p, v, "%s: must be between %u and %u, got %s", key, min, max,
				    s);
		return;
	}
	*out = (unsigned)x;
}

void yamltree_format_duration(int64_t ms, char *out, size_t size) {
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
bool yamltree_get_duration(struct yamltree *p, const struct yamltree_node *v, const char *key,
			   int64_t min_ms, int64_t max_ms, int64_t *out) {
	if (!yamltree_want_scalar(p, v, key, "a duration like 60s")) {
		return false;
	}
	int64_t ms;
	const char *s = v->text;
	if (s[0] == '-') {
		yamltree_error_node(p, v, "%s: must not be negative, got '%s'", key, s);
		return false;
	}
	if (!timefmt_parse_duration_ms(s, &ms)) {
		if (strspn(s, "0123456789") == strlen(s)) {
			yamltree_error_node(
				p, v,
				"%s: '%s' has no unit: write e.g. %ss or %sm (units ms, s, m, h, d, w)",
				key, s, s, s);
		} else {
			yamltree_error_node(
				p, v, "%s: '%s' is not a duration (e.g. 500ms, 60s, 5m, 2h, 7d)",
				key, s);
		}
		return false;
	}
	char lim[32];
	if (ms < min_ms) {
		yamltree_format_duration(min_ms, lim, sizeof(lim));
		yamltree_error_node(p, v, "%s: '%s' is below the minimum of %s", key, s, lim);
		return false;
	}
	if (ms > max_ms) {
		yamltree_format_duration(max_ms, lim, sizeof(lim));
		yamltree_error_node(p, v, "%s: '%s' is above the maximum of %s", key, s, lim);
		return false;
	}
	*out = ms;
	return true;
}

/* A duration counted in whole seconds. */
void yamltree_get_duration_s(struct yamltree *p, const struct yamltree_node *v, const char *key,
			     int64_t min_s, int64_t max_s, int64_t *out) {
	int64_t ms;
	if (!yamltree_get_duration(p, v, key, min_s * 1000, max_s * 1000, &ms)) {
		return;
	}
	if (ms % 1000 != 0) {
		yamltree_error_node(p, v, "%s: must be a whole number of seconds, got '%s'", key,
				    v->text);
		return;
	}
	*out = ms / 1000;
}

/* --- mappings --- */

struct key_ref {
	const struct yamltree_node *key;
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
 * Checks that @map is a mapping with string keys, no duplicates and (if @allowed is not NULL)
 * only the keys listed. An empty value counts as an empty mapping. Returns false if @map cannot
 * be walked at all; the caller then skips the section.
 */
bool yamltree_check_mapping(struct yamltree *p, const struct yamltree_node *map,
			    const char *section, const char *const *allowed) {
	if (map->kind == YAMLTREE_BAD || yamltree_is_null(map)) {
		return false;
	}
	if (map->kind != YAMLTREE_MAPPING) {
		yamltree_error_node(p, map, "%s: expected a mapping (key: value lines), got %s",
				    section, yamltree_describe(map));
		return false;
	}
	size_t n_keys = map->n / 2;
	struct key_ref *keys = xcalloc(n_keys + 1, sizeof(*keys));
	size_t n = 0;
	for (size_t i = 0; i < n_keys; i++) {
		const struct yamltree_node *k = map->items[2 * i];
		if (k->kind == YAMLTREE_BAD) {
			continue;
		}
		if (k->kind != YAMLTREE_SCALAR) {
			yamltree_error_node(p, k, "%s: keys must be strings, got %s", section,
					    yamltree_describe(k));
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
				size_t d = textdist(k->text, *a, best);
				if (d < best && 2 * d <= strlen(k->text)) { // not for "xy" vs "bt"
					best = d;
					near = *a;
				}
			}
			if (near) {
				yamltree_error_node(
					p, k,
					"unknown key '%s' in %s: did you mean '%s'? (allowed: %s)",
					k->text, section, near, list.data);
			} else {
				yamltree_error_node(p, k, "unknown key '%s' in %s (allowed: %s)",
						    k->text, section, list.data);
			}
			buf_finish(&list);
		}
	}
	// Sorting finds duplicates in O(n log n): a fuzzed mapping can hold 100000 keys.
	qsort(keys, n, sizeof(*keys), compare_keys);
	for (size_t i = 1; i < n; i++) {
		size_t first = i - 1;
		while (i < n && strcmp(keys[i].key->text, keys[first].key->text) == 0) {
			yamltree_error_node(p, keys[i].key,
					    "duplicate key '%s' in %s (first at line %zu)",
					    keys[i].key->text, section, keys[first].key->line);
			i++;
		}
	}
	free(keys);
	return true;
}

bool yamltree_named_values(struct yamltree *p, const struct yamltree_node *map, const char *section,
			   const char *const *names, const struct yamltree_node **values) {
	size_t n = 0;
	for (; names[n]; n++) {
		values[n] = NULL;
	}
	if (!yamltree_check_mapping(p, map, section, names)) {
		return false;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		for (size_t k = 0; k < n; k++) {
			if (!values[k] && yamltree_key_is(map->items[i], names[k])) {
				values[k] = map->items[i + 1];
			}
		}
	}
	return true;
}

bool yamltree_check_entry(struct yamltree *p, const struct yamltree_node *map, const char *section,
			  const char *required, const char *name, const char *const *keys) {
	if (map->kind != YAMLTREE_BAD && (yamltree_is_null(map) || map->kind != YAMLTREE_MAPPING)) {
		yamltree_error_node(p, map, "%s: each entry is a mapping with %s, got %s", section,
				    required, yamltree_describe(map));
		return false;
	}
	return yamltree_check_mapping(p, map, name, keys);
}

/* A list, or an empty value as an empty list. Returns false if there is nothing to walk. */
bool yamltree_check_sequence(struct yamltree *p, const struct yamltree_node *seq,
			     const char *section) {
	if (seq->kind == YAMLTREE_BAD || yamltree_is_null(seq)) {
		return false;
	}
	if (seq->kind != YAMLTREE_SEQUENCE) {
		yamltree_error_node(p, seq,
				    "%s: expected a list (lines starting with '- '), got %s",
				    section, yamltree_describe(seq));
		return false;
	}
	if (seq->n > YAMLTREE_MAX_ITEMS) {
		yamltree_error_node(p, seq, "%s: too many entries (%zu, the limit is %d)", section,
				    seq->n, YAMLTREE_MAX_ITEMS);
		return false;
	}
	return true;
}

int yamltree_read_file(const char *path, size_t max, char **text, size_t *len) {
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
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
			close(fd);
			return -err;
		}
		if (n == 0 || b.len > max) {
			break;
		}
		buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	*len = b.len;
	*text = buf_steal(&b);
	return 0;
}
