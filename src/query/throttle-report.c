/* Throttle episodes over a window and their per-domain totals, as one JSON for CLI and API. */
#include "throttle-report.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "store.h"
#include "textdist.h"
#include "unit.h"
#include "xalloc.h"

/* The episode's end in s: its release, or the last cycle that saw it while open. */
static int64_t episode_end(const struct throttle_episode *ep) {
	return ep->end ? ep->end : ep->last_seen;
}

/* The part of @ep inside [from_ms, to_ms), in ms. */
static int64_t inside_ms(const struct throttle_episode *ep, int64_t from_ms, int64_t to_ms) {
	int64_t start = ep->start * 1000 > from_ms ? ep->start * 1000 : from_ms;
	int64_t end = episode_end(ep) * 1000 < to_ms ? episode_end(ep) * 1000 : to_ms;
	int64_t overlap = end > start ? end - start : 0;
	if (ep->method == THROTTLE_METHOD_COUNTERS) {
		// Somewhere between the two cycles around it: counted whole, but never more than
		// the part of that interval inside the window.
		return ep->duration_ms < overlap ? ep->duration_ms : overlap;
	}
	return overlap;
}

struct throttle_report_domain *throttle_report_domain(struct throttle_report *r, const char *name) {
	for (size_t i = 0; i < r->n_domains; i++) {
		if (strcmp(r->domains[i].name, name) == 0) {
			return &r->domains[i];
		}
	}
	r->domains = xrealloc(r->domains, (r->n_domains + 1) * sizeof(*r->domains));
	struct throttle_report_domain *d = &r->domains[r->n_domains++];
	*d = (struct throttle_report_domain){0};
	snprintf(d->name, sizeof(d->name), "%s", name);
	return d;
}

static int cmp_domain(const void *a, const void *b) {
	const struct throttle_report_domain *x = a, *y = b;
	return strcmp(x->name, y->name);
}

void throttle_report_sort_domains(struct throttle_report *r) {
	if (r->n_domains > 1) {
		qsort(r->domains, r->n_domains, sizeof(*r->domains), cmp_domain);
	}
}

static void totals(struct throttle_report *r) {
	for (size_t i = 0; i < r->n; i++) {
		const struct throttle_episode *ep = &r->episodes[i];
		struct throttle_report_domain *d = throttle_report_domain(r, ep->domain);
		d->episodes++;
		d->throttled_ms += inside_ms(ep, r->from_ms, r->to_ms);
		if (ep->min_hz > 0 && (d->min_hz == 0 || ep->min_hz < d->min_hz)) {
			d->min_hz = ep->min_hz;
		}
		d->max_hz = ep->max_hz > 0 ? ep->max_hz : d->max_hz;
	}
	for (size_t i = 0; i < r->n_domains; i++) {
		r->domains[i].share =
			(double)r->domains[i].throttled_ms / (double)(r->to_ms - r->from_ms);
	}
	throttle_report_sort_domains(r);
}

/* Whether @ep overlaps [from_ms, to_ms): started before its end, ended at or after its start. */
static bool overlaps(const struct throttle_episode *ep, int64_t from_ms, int64_t to_ms) {
	return ep->start * 1000 < to_ms && episode_end(ep) * 1000 >= from_ms;
}

void throttle_report_window(const struct throttle_episode *all, size_t n, int64_t from_ms,
			    int64_t to_ms, const char *domain, struct throttle_report *r) {
	*r = (struct throttle_report){.from = from_ms / 1000 - (from_ms % 1000 < 0),
				      .to = to_ms / 1000 + (to_ms % 1000 > 0),
				      .from_ms = from_ms,
				      .to_ms = to_ms};
	// @all may be every episode of a long list of runs: only the ones kept are copied.
	size_t cap = 0;
	for (size_t i = 0; from_ms < to_ms && i < n; i++) {
		if (overlaps(&all[i], from_ms, to_ms) &&
		    (!domain || fnmatch(domain, all[i].domain, 0) == 0)) {
			r->episodes = xgrow(r->episodes, &cap, r->n + 1, sizeof(*r->episodes));
			r->episodes[r->n++] = all[i];
		}
	}
	totals(r);
}

int throttle_report_list(struct store *store, int64_t from_ms, int64_t to_ms,
			 struct throttle_episode **out, size_t *n) {
	// Whole seconds around the window: throttle_report_window() clips to the millisecond.
	int64_t from = from_ms / 1000 - (from_ms % 1000 < 0);
	int64_t to = to_ms / 1000 + (to_ms % 1000 > 0);
	return store_throttle_list(store, from, to, out, n);
}

/* Whether @glob names a domain: one of the episodes' or a stored frequency domain's. */
static bool domain_known(const char *glob, const char *name, struct textdist_near *near) {
	textdist_near_offer(near, name, name);
	const char *last = strchr(name, '/');
	if (last) {
		textdist_near_offer(near, name, last + 1);
	}
	return fnmatch(glob, name, 0) == 0;
}

/*
 * A --domain or 'domain' that matches no domain is an error naming the near ones: a frequency
 * domain of the channel list (cpufreq/policyN, devfreq/NAME), "board", or one of @all's.
 */
static int check_domain(struct store *store, const char *glob, const struct throttle_episode *all,
			size_t n, char **err) {
	struct store_channel *list = NULL;
	size_t n_list = 0;
	if (store_channels(store, &list, &n_list) < 0) {
		*err = xstrdup("could not read the channel list");
		return -EIO;
	}
	struct textdist_near near;
	textdist_near_init(&near, glob);
	bool known = domain_known(glob, "board", &near);
	for (size_t i = 0; i < n_list && !known; i++) {
		const char *key = list[i].ch.key;
		if (strncmp(key, "cpufreq/", 8) == 0 || strncmp(key, "devfreq/", 8) == 0) {
			known = domain_known(glob, key, &near);
		}
	}
	for (size_t i = 0; i < n && !known; i++) {
		known = domain_known(glob, all[i].domain, &near);
	}
	int rc = 0;
	if (!known) {
		struct buf hint;
		buf_init(&hint);
		textdist_near_write(&near, true, &hint);
		*err = xasprintf("unknown domain '%s'%s", glob,
				 hint.len ? hint.data
					  : " (cpufreq/policyN, devfreq/NAME or board)");
		buf_finish(&hint);
		rc = -EINVAL;
	}
	store_channels_free(list, n_list);
	return rc;
}

int throttle_report_compute(struct store *store, int64_t from, int64_t to, const char *domain,
			    struct throttle_report *r, char **err) {
	*r = (struct throttle_report){.from = from, .to = to};
	*err = NULL;
	if (from >= to) {
		*err = xstrdup("the window is empty: 'from' must be before 'to'");
		return -EINVAL;
	}
	struct throttle_episode *all;
	size_t n;
	// [from, to): an episode that starts at `to` is the next window's
	int rc = store_throttle_list(store, from, to - 1, &all, &n);
	if (rc < 0) {
		*err = xstrdup("could not read the throttle episodes");
		return rc;
	}
	if (domain && (rc = check_domain(store, domain, all, n, err)) < 0) {
		free(all);
		return rc;
	}
	throttle_report_window(all, n, from * 1000, to * 1000, domain, r);
	free(all);
	return 0;
}

void throttle_report_finish(struct throttle_report *r) {
	if (!r) {
		return;
	}
	free(r->episodes);
	free(r->domains);
	*r = (struct throttle_report){0};
}

static void write_celsius(struct json *j, const char *key, bool known, int64_t mc) {
	json_field_double_or_null(j, key, known, (double)mc / 1000);
}

static void write_episode(struct json *j, const struct throttle_episode *ep) {
	json_object_begin(j);
	json_field_string(j, "domain", ep->domain);
	json_field_time_or_null(j, "start", ep->start != 0, ep->start);
	json_field_time_or_null(j, "end", ep->end != 0, ep->end);
	json_field_time_or_null(j, "last_seen", ep->last_seen != 0, ep->last_seen);
	json_field_double(j, "duration_s", (double)ep->duration_ms / 1000);
	json_field_int_or_null(j, "min_hz", ep->min_hz > 0, ep->min_hz);
	json_field_int_or_null(j, "max_hz", ep->max_hz > 0, ep->max_hz);
	json_field_string(j, "cause", throttle_cause_name(ep->cause));
	json_field_string(j, "method", throttle_method_name(ep->method));
	json_field_string(j, "zone", ep->zone[0] ? ep->zone : NULL);
	json_field_int_or_null(j, "trip", ep->trip >= 0, ep->trip);
	write_celsius(j, "trip_temp_c", ep->trip >= 0, ep->trip_temp_mc);
	write_celsius(j, "trip_hyst_c", ep->trip >= 0, ep->trip_hyst_mc);
	write_celsius(j, "temp_start_c", ep->have_temp, ep->temp_start_mc);
	write_celsius(j, "temp_peak_c", ep->have_temp, ep->temp_peak_mc);
	json_key(j, "cooling");
	json_array_begin(j);
	for (size_t i = 0; i < ep->n_cooling; i++) {
		json_object_begin(j);
		char dev[32];
		snprintf(dev, sizeof(dev), "cooling_device%d", ep->cooling[i].dev);
		json_field_string(j, "device", ep->cooling[i].dev >= 0 ? dev : NULL);
		json_field_string(j, "type", ep->cooling[i].type);
		json_field_int(j, "state", ep->cooling[i].state);
		json_object_end(j);
	}
	json_array_end(j);
	json_field_bool(j, "stuck", ep->stuck);
	json_object_end(j);
}

void throttle_report_keep_open(struct throttle_report *r) {
	size_t kept = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->episodes[i].end == 0) {
			r->episodes[kept++] = r->episodes[i];
		}
	}
	r->n = kept;
}

void throttle_report_write_domain(const struct throttle_report_domain *d, struct json *j) {
	json_object_begin(j);
	json_field_string(j, "domain", d->name);
	json_field_int(j, "episodes", d->episodes);
	json_field_double(j, "throttled_s", (double)d->throttled_ms / 1000);
	json_field_double(j, "share", d->share);
	json_field_int_or_null(j, "min_hz", d->min_hz > 0, d->min_hz);
	json_field_int_or_null(j, "max_hz", d->max_hz > 0, d->max_hz);
	if (d->method) {
		json_field_string(j, "method", d->method);
		json_key(j, "uncertainty_s");
		if (d->uncertainty_ms < 0) {
			json_null(j);
		} else {
			json_decimal(j, (double)d->uncertainty_ms / 1000, 3);
		}
	}
	json_object_end(j);
}

void throttle_report_write_json(const struct throttle_report *r, struct json *j) {
	json_object_begin(j);
	json_field_time_or_null(j, "from", r->from != 0, r->from);
	json_field_time_or_null(j, "to", r->to != 0, r->to);
	json_key(j, "episodes");
	json_array_begin(j);
	for (size_t i = 0; i < r->n; i++) {
		write_episode(j, &r->episodes[i]);
	}
	json_array_end(j);
	json_key(j, "domains");
	json_array_begin(j);
	for (size_t i = 0; i < r->n_domains; i++) {
		throttle_report_write_domain(&r->domains[i], j);
	}
	json_array_end(j);
	json_object_end(j);
}

/* "1416 MHz" or "-" for an unknown frequency. */
static void mhz(char *out, size_t len, int64_t hz) {
	double factor;
	const char *unit = unit_symbol("hertz", &factor);
	if (hz <= 0) {
		snprintf(out, len, "-");
	} else {
		snprintf(out, len, "%.0f %s", (double)hz * factor, unit);
	}
}

void throttle_report_cap(char *out, size_t len, int64_t min_hz, int64_t max_hz) {
	char cap[32], max[32];
	mhz(max, sizeof(max), max_hz);
	if (min_hz <= 0 && max_hz <= 0) {
		snprintf(out, len, "no clock (whole-board signal)");
	} else if (min_hz <= 0) {
		snprintf(out, len, "depth not known (counters), max %s", max);
	} else {
		mhz(cap, sizeof(cap), min_hz);
		snprintf(out, len, "%s of %s", cap, max);
	}
}
