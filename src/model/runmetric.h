/*
 * A run's metrics: numbers a run carries of its own (an operator's latency, images per hour,
 * tokens/s, an output's deviation), each a name (the rule of labels, runtag.h), a finite value
 * and a unit. The readers of every way in (NAME=VALUE[UNIT] on a command line, the file
 * THERMLOG_METRICS names, a JSON object on the wire); runstats.h summarises them per label.
 * Pure: no I/O, no clock, no globals.
 */
#ifndef RUNMETRIC_H
#define RUNMETRIC_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "json.h"
#include "jsonread.h"

#define RUNMETRIC_UNIT_MAX   32           // bytes of a unit
#define RUNMETRIC_MAX        100          // metrics one run carries at most
#define RUNMETRIC_FILE_MAX   (256 * 1024) // bytes of a metrics file read at most
#define RUNMETRIC_ERRORS_MAX 20           // problems listed; the rest are counted
#define RUNMETRIC_UNIT_RULE                                                                        \
	"1 to 32 bytes of UTF-8 without spaces or control characters, not starting with a digit, " \
	"'.', '+' or '-'"

struct runmetric {
	char *name;
	double value; // finite
	char *unit;   // "" when none was given (the name's recorded unit applies)
};

/** Metrics of one run, names unique: a later value of a name replaces the earlier one. */
struct runmetric_set {
	struct runmetric *m; // in the order first given
	size_t n, cap;
};

void runmetric_set_finish(struct runmetric_set *set); // accepts a zeroed struct
/** The metric named @name in @set, or NULL. */
const struct runmetric *runmetric_find(const struct runmetric_set *set, const char *name);

/** @unit is empty or follows RUNMETRIC_UNIT_RULE. */
bool runmetric_unit_valid(const char *unit);

/**
 * Puts @name = @value [@unit] into @set (checking all three; NULL @unit = none), replacing an
 * earlier value of @name. False with *err newly allocated naming the problem: a bad name or
 * unit, a value that is not finite, more than RUNMETRIC_MAX metrics.
 */
bool runmetric_put(struct runmetric_set *set, const char *name, double value, const char *unit,
		   char **err);

/**
 * Parses a value with an optional unit after it: "12.5", "12.5ms", "-3e-2 tok/s" (a decimal
 * number: no hexadecimal, infinity or NaN). *unit gets the unit (newly allocated, "" when
 * none). False with *err newly allocated.
 */
bool runmetric_parse_value(const char *text, double *value, char **unit, char **err);

/** Parses "NAME=VALUE[UNIT]" into @set (the first '=' splits); false with *err as above. */
bool runmetric_parse_assignment(const char *text, struct runmetric_set *set, char **err);

/**
 * Reads a JSON object of metrics into @set: each member NAME: VALUE or NAME: {"value": VALUE,
 * "unit": "UNIT"}. False with *err newly allocated naming the member at fault (nothing of @obj
 * is then kept in @set beyond the members before it).
 */
bool runmetric_read_json(const struct jsonread_node *obj, struct runmetric_set *set, char **err);

/** Writes @set as the JSON object runmetric_read_json() reads: {NAME: {"value", "unit"}}. */
void runmetric_write_json(const struct runmetric_set *set, struct json *j);

/**
 * Parses a metrics file (@len bytes at @text, named @name in messages): one JSON object (as
 * runmetric_read_json() reads it), or lines "NAME VALUE [UNIT]" or "NAME=VALUE[UNIT]", blank
 * lines and lines starting with '#' skipped. The good metrics land in @set (a later line of a
 * name replaces an earlier one); each bad line adds "NAME:LINE: problem" to @errors (at most
 * RUNMETRIC_ERRORS_MAX, then a count); in a JSON object each bad member is named at its line
 * and the others kept, and a text that does not parse is one bad line. Returns the number of
 * bad lines.
 */
size_t runmetric_parse_file(const char *text, size_t len, const char *name,
			    struct runmetric_set *set, struct buf *errors);

#endif
