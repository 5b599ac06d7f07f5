/* The unit registry (unit.h): symbols, display scaling and Prometheus families, in one table. */
#include "unit.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define MIB (1.0 / 1048576)

/*
 * Table order is /metrics' family order. A unit sharing the family before it (millivolts with
 * volts) follows that entry; a unit with a family per kind (percent: humidity, load) has an
 * entry per kind, the first of them the one unit_lookup() finds. Memory reads in MiB to 0.1 (a
 * tenth is detail enough); operating points are whole MHz in a table of statistics.
 */
static const struct unit_info units[] = {
	{"celsius", "°C", 1, -1, -1, "thermlog_temperature_celsius", 1,
	 "Temperature of the channel in degrees Celsius.", -1},
	{"hertz", "MHz", 1e-6, -1, 0, "thermlog_frequency_hertz", 1,
	 "Current clock frequency of the channel in hertz.", -1},
	{"volts", "V", 1, -1, -1, "thermlog_voltage_volts", 1, "Voltage of the channel in volts.",
	 -1},
	{"millivolts", "mV", 1, -1, -1, "thermlog_voltage_volts", 1000,
	 "Voltage of the channel in volts.", -1},
	{"amperes", "A", 1, -1, -1, "thermlog_current_amperes", 1,
	 "Current of the channel in amperes.", -1},
	{"watts", "W", 1, -1, -1, "thermlog_power_watts", 1, "Power of the channel in watts.", -1},
	{"joules", "J", 1, -1, -1, "thermlog_energy_joules", 1,
	 "Energy counter of the channel in joules.", -1},
	{"rpm", "rpm", 1, -1, -1, "thermlog_fan_rpm", 1,
	 "Fan speed of the channel in revolutions per minute.", -1},
	{"percent", "%", 1, -1, -1, "thermlog_humidity_ratio", 100,
	 "Relative humidity of the channel as a ratio (0..1).", CHANNEL_KIND_HUMIDITY},
	{"percent", "%", 1, -1, -1, "thermlog_load_ratio", 100,
	 "Busy share of the channel's CPU, NPU core or device as a ratio (0..1).",
	 CHANNEL_KIND_LOAD},
	{"state", "", 1, -1, -1, "thermlog_cooling_state", 1,
	 "Cooling device state index (0 = off, max_state = full).", CHANNEL_KIND_STATE},
	{"ohms", "ohm", 1, -1, -1, "thermlog_resistance_ohms", 1,
	 "Resistance of the channel in ohms.", -1},
	{"bytes", "MiB", MIB, 1, 1, "thermlog_memory_bytes", 1,
	 "Memory or swap of the channel in bytes.", CHANNEL_KIND_MEMORY},
	{"pages_per_second", "pages/s", 1, -1, -1, NULL, 1, NULL, -1},
	{"1", "", 1, -1, -1, NULL, 1, NULL, -1},
};

const struct unit_info *unit_all(size_t *n) {
	*n = sizeof(units) / sizeof(units[0]);
	return units;
}

const struct unit_info *unit_lookup(const char *name) {
	for (size_t i = 0; name && i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(name, units[i].name) == 0) {
			return &units[i];
		}
	}
	return NULL;
}

const char *unit_symbol(const char *unit, double *factor) {
	const struct unit_info *u = unit_lookup(unit);
	*factor = u ? u->factor : 1;
	return u ? u->symbol : unit ? unit : "";
}

int unit_places(const char *unit, bool column) {
	const struct unit_info *u = unit_lookup(unit);
	return !u ? -1 : column && u->column_places >= 0 ? u->column_places : u->places;
}

const struct unit_info *unit_family(const struct channel *ch) {
	// A unit may have a family per kind (a percentage: humidity, load): the first that fits.
	for (size_t i = 0; ch->unit && i < sizeof(units) / sizeof(units[0]); i++) {
		const struct unit_info *u = &units[i];
		if (strcmp(ch->unit, u->name) == 0 && u->family &&
		    (u->family_kind < 0 || (int)ch->kind == u->family_kind)) {
			return u;
		}
	}
	return NULL;
}

/* @v rounded half up to @places decimals (the dashboard's Math.round(v * 10^places) / ...). */
static double round_half_up(double v, int places) {
	double scale = pow(10, places);
	return floor(v * scale + 0.5) / scale;
}

/*
 * @v (at least 1) in three significant figures, rounded half up, without trailing zeros: "25.6",
 * "6.02", "130", "1230" (the dashboard's fig3() computes it the same way, so both read alike).
 */
static void three_figures(char *out, size_t len, double v, const char *unit) {
	int e = (int)floor(log10(v));
	double r;
	if (e <= 2) {
		r = round_half_up(v, 2 - e);
	} else {
		double step = pow(10, e - 2);
		r = floor(v / step + 0.5) * step;
	}
	int n = snprintf(out, len, "%.*f", e < 2 ? 2 - e : 0, r);
	if (n > 0 && (size_t)n < len && strchr(out, '.')) {
		while (n > 0 && out[n - 1] == '0') {
			out[--n] = '\0';
		}
		if (n > 0 && out[n - 1] == '.') {
			out[--n] = '\0';
		}
	}
	if (n > 0 && (size_t)n < len) {
		snprintf(out + n, len - (size_t)n, " %s", unit);
	}
}

void unit_duration(char *out, size_t len, double s) {
	s = fabs(s);
	if (!isfinite(s)) {
		snprintf(out, len, "-");
	} else if (s >= 2 * 86400) {
		three_figures(out, len, s / 86400, "days");
	} else if (s >= 2 * 3600) {
		three_figures(out, len, s / 3600, "h");
	} else if (s >= 600) {
		three_figures(out, len, s / 60, "min");
	} else if (s >= 120) { // p50 91 s and p95 147 s never both read "2 min"
		long r = lround(floor(s + 0.5));
		if (r % 60) {
			snprintf(out, len, "%ld min %ld s", r / 60, r % 60);
		} else {
			snprintf(out, len, "%ld min", r / 60);
		}
	} else if (s >= 1 || s == 0) {
		double r = round_half_up(s, 1);
		snprintf(out, len, r == floor(r) ? "%.0f s" : "%.1f s", r);
	} else if (s >= 0.0005) {
		snprintf(out, len, "%.0f ms", floor(s * 1000 + 0.5));
	} else {
		snprintf(out, len, "under 1 ms");
	}
}
