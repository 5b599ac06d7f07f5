/* Durations ("60s", "7d") and timestamps (ISO 8601, unix seconds, "-24h") as users type them. */
#ifndef TIMEFMT_H
#define TIMEFMT_H

#include <stdbool.h>
#include <stdint.h>

/* Room for any int64_t second count; years 0000..9999 take 21 bytes ("2026-08-20T00:00:00Z"). */
#define TIMEFMT_ISO_LEN 48

/**
 * Parses a duration into milliseconds: one or more <integer><unit> terms ("500ms", "60s", "1m",
 * "2h", "7d", "1w", "1h30m"), units ms, s, m, h, d, w. Bare integers are rejected as ambiguous,
 * as are signs, spaces, empty strings and values above INT64_MAX ms. Returns false on error
 * (*ms untouched).
 */
bool timefmt_parse_duration_ms(const char *s, int64_t *ms);

/**
 * Parses a point in time into unix seconds (UTC):
 *   ISO 8601 "2026-08-20T00:00:00Z", "2026-08-20T02:00:00+02:00" (also "+0200", "+02", a space
 *   for the T, seconds optional, fractional seconds truncated); a zone is required;
 *   a date "2026-08-20" (00:00 UTC); unix seconds "1787000000";
 *   relative to @now: "-24h", "-7d", "-90m" (any duration above, in the past); "now".
 * Returns false on error (*ts untouched).
 */
bool timefmt_parse_time(const char *s, int64_t now, int64_t *ts);

/** Formats unix seconds @ts as "YYYY-MM-DDTHH:MM:SSZ" (UTC, proleptic Gregorian calendar). */
void timefmt_iso(int64_t ts, char out[TIMEFMT_ISO_LEN]);

/**
 * Formats unix milliseconds @ms as "YYYY-MM-DDTHH:MM:SSZ", with ".mmm" before the Z when the
 * time is not a whole second (before 1970 as well: -1 ms is 1969-12-31T23:59:59.999Z).
 */
void timefmt_iso_ms(int64_t ms, char out[TIMEFMT_ISO_LEN]);

/**
 * @a / @b rounded toward minus infinity (@b > 0): the index of the slot, minute or hour that a
 * time falls in, before 1970 as well.
 */
int64_t timefmt_floor_div(int64_t a, int64_t b);

/**
 * The largest multiple of @unit (> 0) at or below @t: the start of its hour, day or slot
 * (INT64_MIN when that is below the 64-bit range).
 */
int64_t timefmt_floor(int64_t t, int64_t unit);

/** The smallest multiple of @unit (> 0) at or above @t (INT64_MAX when that is above the range). */
int64_t timefmt_ceil(int64_t t, int64_t unit);

/** Parses exactly a calendar date "YYYY-MM-DD" into unix seconds at 00:00 UTC; false if invalid. */
bool timefmt_parse_date(const char *s, int64_t *ts);

#endif
