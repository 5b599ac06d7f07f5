/*
 * A strict RFC 8259 JSON reader: the text as a tree of nodes, each with its byte offset and
 * 1-based line:column for messages. Rejects what a lenient reader would guess at: duplicate
 * keys, trailing text, invalid UTF-8, lone surrogates, raw control characters in strings,
 * leading zeros, nesting deeper than JSONREAD_MAX_DEPTH and texts over the caller's limit.
 * Pure: no I/O, no globals.
 */
#ifndef JSONREAD_H
#define JSONREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* As deep as the writer (json.h) can write back: what we read, we can answer with. */
#define JSONREAD_MAX_DEPTH (JSON_MAX_DEPTH - 1)
/* The limit of a request body or a daemon's reply (api.h's API_RUN_BODY_MAX). */
#define JSONREAD_MAX_LEN (64 * 1024)

enum jsonread_kind {
	JSONREAD_NULL,
	JSONREAD_FALSE,
	JSONREAD_TRUE,
	JSONREAD_NUMBER,
	JSONREAD_STRING,
	JSONREAD_ARRAY,
	JSONREAD_OBJECT,
};

struct jsonread_node {
	enum jsonread_kind kind;
	size_t offset;    // of the node's first byte in the text
	size_t line, col; // 1-based; col counts bytes
	/*
	 * Strings: the decoded UTF-8 (escapes and surrogate pairs resolved; \u0000 is rejected,
	 * so the text is a C string). Numbers: the literal as written. Others: NULL.
	 */
	char *text;
	size_t len;
	double number;                // numbers: the value (always finite)
	struct jsonread_node **items; // arrays: the items; objects: key, value, key, value ...
	size_t n;                     // entries of items (twice the members of an object)
};

/** Where and why a text was refused. */
struct jsonread_error {
	size_t offset, line, col;
	char msg[160]; // control characters of the text quoted here are escaped
};

/**
 * Parses the @len bytes at @text (no NUL needed) as one JSON value. Returns the root (free it
 * with jsonread_node_free()) or NULL with *err filled; a text over @max_len bytes is refused
 * before it is read.
 */
struct jsonread_node *jsonread_parse(const char *text, size_t len, size_t max_len,
				     struct jsonread_error *err);
void jsonread_node_free(struct jsonread_node *n); // accepts NULL

/**
 * Writes @n back with the writer @j: the same value in the writer's one spelling, so two
 * texts that differ only in spacing or escapes write the same.
 */
void jsonread_write(struct json *j, const struct jsonread_node *n);

/** The value of member @key of object @obj; NULL if absent or @obj is not an object. */
const struct jsonread_node *jsonread_get(const struct jsonread_node *obj, const char *key);
/** How a message names a node's kind: "an object", "an array", "a string", "a number" ... */
const char *jsonread_describe(const struct jsonread_node *n);
/** The node's string, or NULL unless it is a JSON string. */
const char *jsonread_string(const struct jsonread_node *n);
/**
 * Whether the @len bytes at @s are UTF-8 as this reader takes it (no overlong form, surrogate
 * or code point beyond U+10FFFF): text the JSON writer writes and this reader reads back.
 */
bool jsonread_utf8_valid(const char *s, size_t len);
/** True if @n is a number that is an integer within [@min, @max]; the value in *out. */
bool jsonread_int(const struct jsonread_node *n, int64_t min, int64_t max, int64_t *out);

#endif
