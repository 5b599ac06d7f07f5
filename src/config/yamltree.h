/*
 * A small YAML toolkit over libyaml, schema-free: the document as a node tree with 1-based
 * positions, typed getters that report "KEY: expected ..., got ..." at file:line:col, mapping
 * checks with "did you mean" for unknown keys, and the error list sorted in file order. The
 * thermlog schema (config.c) is written with it; nothing here knows that schema.
 */
#ifndef YAMLTREE_H
#define YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define YAMLTREE_MAX_DEPTH  32   // the schema nests 4 deep
#define YAMLTREE_MAX_ERRORS 100  // enough to fix a file in one go; bounds the report
#define YAMLTREE_MAX_ITEMS  1024 // per list: bounds the pairwise duplicate checks

enum yamltree_kind {
	YAMLTREE_SCALAR,
	YAMLTREE_MAPPING,
	YAMLTREE_SEQUENCE,
	YAMLTREE_BAD, // an alias already reported: checks skip it silently
};

struct yamltree_node {
	enum yamltree_kind kind;
	size_t line, col; // 1-based
	char *text;       // scalars: NUL-terminated (NUL bytes inside are rejected)
	size_t len;
	bool plain; // scalars: unquoted, so `true`, `~` and `` keep their YAML meaning
	struct yamltree_node **items; // mappings: key, value, key, value ...; sequences: items
	size_t n, cap;
};

struct yamltree_error {
	size_t line, col, seq;
	char *msg;
};

/** The errors of one document; zero it with .name set (the file name in messages). */
struct yamltree {
	const char *name;
	struct yamltree_error *errors;
	size_t n_errors, cap_errors, dropped;
};

/** Records an error at @line:@col (1-based); control characters in it are escaped. */
void yamltree_error_at(struct yamltree *p, size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define yamltree_error_node(p, node, ...) \
	yamltree_error_at((p), (node)->line, (node)->col, __VA_ARGS__)
/** Appends the errors (if any) to *out as "NAME:LINE:COL: message" lines in file order. */
void yamltree_flush_errors(struct yamltree *p, char **out);

/**
 * Reads all of @path, up to @max bytes and then a little more (so a caller can tell a file too
 * large); *text (NUL-terminated) is caller-freed. 0 or a negative errno.
 */
int yamltree_read_file(const char *path, size_t max, char **text, size_t *len);

/**
 * Parses @text into a tree; *root is NULL for an empty stream. Returns false after a syntax
 * error (reported) or an unsupported structure that makes the rest meaningless.
 */
bool yamltree_build(struct yamltree *p, const char *text, size_t len, struct yamltree_node **root);
void yamltree_node_free(struct yamltree_node *n); // accepts NULL

/** An empty, "~" or "null" plain scalar. */
bool yamltree_is_null(const struct yamltree_node *n);
/** How a message names a node's kind: "a mapping", "a list", "an empty value", "a string". */
const char *yamltree_describe(const struct yamltree_node *n);
/**
 * True if @v is a usable scalar for @key; otherwise reports "KEY: expected WHAT, got ...".
 * YAMLTREE_BAD values were reported already and only return false.
 */
bool yamltree_want_scalar(struct yamltree *p, const struct yamltree_node *v, const char *key,
			  const char *what);
bool yamltree_key_is(const struct yamltree_node *k, const char *name);

/*
 * Typed getters: each reports a bad value at its position and leaves the slot unchanged; an
 * empty value clears an optional string.
 */
void yamltree_get_string(struct yamltree *p, const struct yamltree_node *v, const char *key,
			 char **slot);
void yamltree_get_optional_string(struct yamltree *p, const struct yamltree_node *v,
				  const char *key, char **slot);
/*
 * The same for a name or a label, which is printed where terminals read it: a control
 * character (C0, DEL) in it is an error naming it, as the text's escape.
 */
void yamltree_get_text(struct yamltree *p, const struct yamltree_node *v, const char *key,
		       char **slot);
void yamltree_get_optional_text(struct yamltree *p, const struct yamltree_node *v, const char *key,
				char **slot);
void yamltree_get_bool(struct yamltree *p, const struct yamltree_node *v, const char *key,
		       bool *out);
/** Decimal numbers only: no hex, inf or nan, which strtod() would take. */
bool yamltree_parse_number(const char *s, double *out);
struct yamltree_range {
	double min, max;
	bool min_open; // min itself is excluded
};
void yamltree_get_double(struct yamltree *p, const struct yamltree_node *v, const char *key,
			 struct yamltree_range r, double *out);
void yamltree_get_uint(struct yamltree *p, const struct yamltree_node *v, const char *key,
		       unsigned min, unsigned max, unsigned *out);
/** @ms as the largest whole unit ("7d", "90s", "1500ms") into @out. */
void yamltree_format_duration(int64_t ms, char *out, size_t size);
/** A duration within [@min_ms, @max_ms]; *out in ms. */
bool yamltree_get_duration(struct yamltree *p, const struct yamltree_node *v, const char *key,
			   int64_t min_ms, int64_t max_ms, int64_t *out);
/** A duration counted in whole seconds. */
void yamltree_get_duration_s(struct yamltree *p, const struct yamltree_node *v, const char *key,
			     int64_t min_s, int64_t max_s, int64_t *out);

/**
 * Checks that @map is a mapping with string keys, no duplicates and (if @allowed is not NULL)
 * only the keys listed, naming the nearest allowed key for a typo. An empty value counts as an
 * empty mapping. Returns false if @map cannot be walked at all; the caller skips the section.
 */
bool yamltree_check_mapping(struct yamltree *p, const struct yamltree_node *map,
			    const char *section, const char *const *allowed);
/**
 * Checks @map as yamltree_check_mapping() does with the keys @names (NULL-terminated) and puts
 * each key's value at its index in @values (one slot a name: NULL where the key is absent; a
 * repeated key, reported, keeps its first value). False when @map cannot be walked.
 */
bool yamltree_named_values(struct yamltree *p, const struct yamltree_node *map, const char *section,
			   const char *const *names, const struct yamltree_node **values);
/**
 * Whether @map, an entry of the list @section, is a mapping of @keys only (NULL-terminated),
 * checked as yamltree_check_mapping() does under the name @name; otherwise reports it
 * (@required names what an entry needs) and says false.
 */
bool yamltree_check_entry(struct yamltree *p, const struct yamltree_node *map, const char *section,
			  const char *required, const char *name, const char *const *keys);
/**
 * Checks that @seq is a list of at most YAMLTREE_MAX_ITEMS entries; false (reported, except for
 * an empty value) when it cannot be walked.
 */
bool yamltree_check_sequence(struct yamltree *p, const struct yamltree_node *seq,
			     const char *section);

#endif
