/*
 * What a run is named by: the one text rule of labels, tag keys, tag values and metric names on
 * every path in, and a run's tags (KEY=VALUE pairs kept as a JSON object of strings): parsing
 * them, and whether a run's tags carry every tag a filter asks for. Pure: no I/O, no clock, no
 * globals.
 */
#ifndef RUNTAG_H
#define RUNTAG_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/*
 * The rule of a label, a tag key, a tag value and a metric name: 1 to RUNTAG_TEXT_MAX bytes of
 * UTF-8, no control characters (C0 or DEL), so no name can move a terminal's cursor or forge a
 * table row, and every JSON answer naming it reads back.
 */
#define RUNTAG_TEXT_MAX  200
#define RUNTAG_TEXT_RULE "1 to 200 characters, no control characters"

/** @len bytes of @s are 1..@max bytes of UTF-8 with no control character. */
bool runtag_text_valid(const char *s, size_t len, size_t max);
/** @s follows RUNTAG_TEXT_RULE. */
bool runtag_name_valid(const char *s);

/** Tags: KEY=VALUE pairs, keys unique (a later value replaces an earlier one). */
struct runtag {
	char *key, *value;
};

struct runtag_list {
	struct runtag *tags; // in the order given
	size_t n, cap;
};

/**
 * Adds "KEY=VALUE" (the first '=' splits) to @list. False with *err newly allocated naming
 * the problem (no '=', an empty key, a key or value against RUNTAG_TEXT_RULE).
 */
bool runtag_parse(const char *kv, struct runtag_list *list, char **err);
/** Adds @key = @value (both checked by the caller), replacing an earlier value of @key. */
void runtag_put(struct runtag_list *list, const char *key, const char *value);
void runtag_list_finish(struct runtag_list *list); // accepts a zeroed struct

/** Appends @list as a JSON object of strings ({} when empty). */
void runtag_list_json(const struct runtag_list *list, struct buf *out);

/**
 * Whether the stored tags @tags_json (a JSON object; NULL or unreadable = no tags) carry every
 * tag of @want with its value (an empty @want matches every run).
 */
bool runtag_match(const char *tags_json, const struct runtag_list *want);

/** The value of tag @key in @tags_json, newly allocated, or NULL when it has none. */
char *runtag_value(const char *tags_json, const char *key);

#endif
