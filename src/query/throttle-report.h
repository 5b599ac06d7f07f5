/*
 * Throttle episodes over a window, from the store: the episodes (oldest first) and per-domain
 * totals. One computation and one JSON writer, shared by `thermlog throttle --json` and
 * GET /api/v1/throttle, so the two answer byte for byte alike; the CLI prints tables of it.
 */
#ifndef THROTTLE_REPORT_H
#define THROTTLE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "store.h"
#include "throttle.h"

/** One domain's totals over the window. */
struct throttle_report_domain {
	char name[THROTTLE_NAME_LEN];
	int64_t episodes;     // episodes overlapping the window
	int64_t throttled_ms; // throttled time inside the window
	double share;         // throttled_ms over the window's length
	int64_t min_hz;       // the deepest cap, 0 = unknown (only counter episodes)
	int64_t max_hz;       // the hardware maximum
	// How throttled_ms was had, said where it differs (a run's throttle): NULL, or
	// "time_in_state_ms" (the kernel's own count, exact) or "episodes" (the cycles that saw
	// the cap, to one cycle at each end: uncertainty_ms, -1 when not known)
	const char *method;
	int64_t uncertainty_ms;
};

struct throttle_report {
	int64_t from, to; // the window [from, to), s since epoch, UTC (whole seconds around it)
	int64_t from_ms, to_ms; // the same window to the millisecond: what the totals clip to
	struct throttle_episode *episodes;
	size_t n;
	struct throttle_report_domain *domains; // by name
	size_t n_domains;
};

/**
 * The episodes overlapping [@from, @to) whose domain matches the fnmatch(3) glob @domain
 * (NULL = all), and their totals. Returns 0, -EINVAL (from >= to, or a @domain that matches no
 * domain: the message names the near ones), or the store's -errno, with
 * a newly allocated message in *err. Free with throttle_report_finish().
 */
int throttle_report_compute(struct store *store, int64_t from, int64_t to, const char *domain,
			    struct throttle_report *r, char **err);
void throttle_report_finish(struct throttle_report *r); // accepts a zeroed struct
/** @r's domain @name, added (no episode, depth unknown) when it has none; valid until the next
 * call adds one. */
struct throttle_report_domain *throttle_report_domain(struct throttle_report *r, const char *name);
/** Sorts @r's domains by name, as throttle_report_window() leaves them. */
void throttle_report_sort_domains(struct throttle_report *r);
/** Drops the closed episodes from r->episodes (the domains' totals stay the window's). */
void throttle_report_keep_open(struct throttle_report *r);

/**
 * The episodes of @all (@n, oldest first, borrowed) overlapping [@from_ms, @to_ms) (ms since
 * epoch: a run's interval) whose domain matches @domain (NULL = all), copied into @r with their
 * totals clipped to that window: the one computation behind throttle_report_compute() and a
 * run's throttle figures. A poll episode counts its time inside the window; a counters episode
 * its counted time, at most the part of its interval inside the window. An empty window has
 * none. Free with throttle_report_finish().
 */
void throttle_report_window(const struct throttle_episode *all, size_t n, int64_t from_ms,
			    int64_t to_ms, const char *domain, struct throttle_report *r);

/**
 * The stored episodes that may overlap [@from_ms, @to_ms) (the whole seconds around it), for
 * throttle_report_window(). *out allocated (free()). 0 or the store's -errno.
 */
int throttle_report_list(struct store *store, int64_t from_ms, int64_t to_ms,
			 struct throttle_episode **out, size_t *n);

/**
 * Appends {"from", "to", "episodes": [{"domain", "start", "end", "last_seen", "duration_s",
 * "min_hz", "max_hz", "cause", "method", "zone", "trip", "trip_temp_c", "trip_hyst_c",
 * "temp_start_c", "temp_peak_c", "cooling": [{"device", "type", "state"}], "stuck"}],
 * "domains": [{"domain", "episodes", "throttled_s", "share", "min_hz", "max_hz"}]}; times ISO
 * 8601 UTC, unknowns null.
 */
void throttle_report_write_json(const struct throttle_report *r, struct json *j);

/**
 * A cap as people read it, the one writer of it (thermlog throttle's tables, the report):
 * "1416 MHz of 2256 MHz" (hertz as the unit registry reads them); "no clock (whole-board
 * signal)" for x86's throttle counters or an under-voltage alarm, which cap no clock; "depth not
 * known (counters), max 2256 MHz" when only the kernel's counters saw a cap. @min_hz, @max_hz:
 * 0 or less when not known.
 */
void throttle_report_cap(char *out, size_t len, int64_t min_hz, int64_t max_hz);

/**
 * One domain's totals as an object: {"domain", "episodes", "throttled_s", "share", "min_hz",
 * "max_hz"} (the hertz null when not known): the writer of `thermlog throttle --json`'s
 * domains and of a run's throttle domains.
 */
void throttle_report_write_domain(const struct throttle_report_domain *d, struct json *j);

#endif
