/*
 * The unit registry: how a channel's unit reads wherever thermlog presents a value (its symbol
 * and scaling in the CLI and the dashboard, its Prometheus family), so memory reads in MiB in
 * every table and as thermlog_memory_bytes in /metrics.
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdbool.h>
#include <stddef.h>

#include "channel.h"

/** One known unit. Values are stored and sent as JSON in the unit itself ("bytes", "hertz"). */
struct unit_info {
	const char *name;   // "celsius", "hertz", "bytes", ...
	const char *symbol; // shown beside a value: "°C", "MHz", "MiB"; "" for a bare count
	double factor;      // shown value = value * factor (hertz as MHz: 1e-6)
	int places;         // decimal places shown, or -1: as many as the channel's resolution has
	int column_places;  // in a table's columns of statistics, or -1: as places (operating
			    // points read as whole MHz there; one reading keeps its kHz)
	/*
	 * The Prometheus gauge family, in the base unit Prometheus conventions ask for
	 * (base = value / family_divisor), or NULL: "thermlog_value" with a unit label.
	 */
	const char *family;
	double family_divisor;
	const char *family_help;
	int family_kind; // the family only for channels of this kind (a percentage is humidity
			 // only for a humidity channel), or -1: any kind
};

/** The entry of unit @name, or NULL for a unit thermlog does not know (an imported one). */
const struct unit_info *unit_lookup(const char *name);
/** The registry in order (the order /metrics writes its families in); *n gets its length. */
const struct unit_info *unit_all(size_t *n);

/**
 * How @unit reads beside a value: its symbol, or the unit itself when unknown, "" for NULL;
 * *factor gets the multiplier from the unit to the shown one (1 when unknown).
 */
const char *unit_symbol(const char *unit, double *factor);
/**
 * Fixed decimal places for @unit's shown values (@column: in a table's columns of statistics),
 * or -1: from the channel's resolution.
 */
int unit_places(const char *unit, bool column);

/** The Prometheus family of @ch's values, or NULL for the catch-all "thermlog_value". */
const struct unit_info *unit_family(const struct channel *ch);
/**
 * How a duration of @s seconds reads, wherever thermlog prints one (the CLI's tables, the
 * report, runs stats' text, the throttle episodes and totals; the dashboard's fmtDuration
 * follows the same steps, rounding half up alike): "0 s", "300 ms" below a second, "45 s" or
 * "8.5 s" below 2 minutes, "2 min 27 s" below 10 minutes (whole seconds), then three
 * significant figures in the largest unit that fits: "25.6 min", "2.5 h", "6.02 days".
 * tests/fixtures/durations.txt holds the cases both are tested against.
 */
void unit_duration(char *out, size_t len, double s);

/** The catch-all family: "thermlog_value", a unit label beside its key. */
#define UNIT_FAMILY_OTHER      "thermlog_value"
#define UNIT_FAMILY_OTHER_HELP "Value of a channel without a standard unit (see the unit label)."

#endif
