/* A streaming JSON writer into a struct buf: commas and escaping are handled here. Pure. */
#ifndef JSON_H
#define JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define JSON_MAX_DEPTH 32

struct json {
	struct buf *out; // borrowed
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
	bool after_key;
	bool pretty; // newline + two-space indent
};

/** Writes into @out (borrowed), appending. */
void json_init(struct json *j, struct buf *out, bool pretty);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
/** Emits an object key; the next value call supplies its value. */
void json_key(struct json *j, const char *key);

void json_string(struct json *j, const char *s); // NULL writes null
void json_int(struct json *j, int64_t v);
/** Shortest text that reads back as the same double ("%.17g" trimmed); non-finite → null. */
void json_double(struct json *j, double v);
/** Fixed precision: @digits after the point; non-finite → null. */
void json_fixed(struct json *j, double v, int digits);
/**
 * A value known to @digits decimals: rounded to them, trailing zeros dropped (13853.53125,
 * 78.336, 12), so no float noise shows (13853.531249999998); non-finite → null.
 */
void json_decimal(struct json *j, double v, int digits);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/** Inserts @text, which must already be valid JSON. */
void json_raw(struct json *j, const char *text);

/*
 * Object members, one call each: json_field_X(j, key, v) is json_key(j, key) followed by
 * json_X(j, v), so json_field_int(j, "id", 3) writes "id":3. The _or_null forms write
 * "key":null when @known is false, for a figure that may be absent.
 */
void json_field_string(struct json *j, const char *key, const char *s); // NULL writes null
void json_field_int(struct json *j, const char *key, int64_t v);
void json_field_double(struct json *j, const char *key, double v); // non-finite → null
void json_field_fixed(struct json *j, const char *key, double v, int digits);
void json_field_decimal(struct json *j, const char *key, double v, int digits);
void json_field_bool(struct json *j, const char *key, bool v);
void json_field_null(struct json *j, const char *key);
/** @text must already be valid JSON; NULL writes null. */
void json_field_raw(struct json *j, const char *key, const char *text);
void json_field_int_or_null(struct json *j, const char *key, bool known, int64_t v);
void json_field_double_or_null(struct json *j, const char *key, bool known, double v);
/** A time as its ISO 8601 UTC string (timefmt_iso): unix seconds @ts. */
void json_field_time(struct json *j, const char *key, int64_t ts);
/** A time as its ISO 8601 UTC string with milliseconds when not whole (timefmt_iso_ms). */
void json_field_time_ms(struct json *j, const char *key, int64_t ms);
void json_field_time_or_null(struct json *j, const char *key, bool known, int64_t ts);
void json_field_time_ms_or_null(struct json *j, const char *key, bool known, int64_t ms);

/*
 * A list of strings as an array: json_strings() writes the @n strings of @s in their order,
 * escaped (a NULL one as null; no strings make [], and @s may then be NULL);
 * json_field_strings() is json_key() followed by it.
 */
void json_strings(struct json *j, char *const *s, size_t n);
void json_field_strings(struct json *j, const char *key, char *const *s, size_t n);

/** Appends @s escaped as a JSON string body (no quotes) to @out. */
void json_escape(struct buf *out, const char *s);
/** Formats @v as the shortest round-trip decimal into @out (at least 32 bytes). */
void json_format_double(char *out, double v);

#endif
