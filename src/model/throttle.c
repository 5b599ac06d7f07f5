/*
 * The throttle episode tracker: per domain, an open episode while the cap holds, explained by
 * the passive trips crossed and the capping cooling devices active; between cycles the cooling
 * devices' residency counters add the episodes the polls missed.
 */
#include "throttle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define MAX_TRACKED (2 * THROTTLE_MAX_DOMAINS + 1) // domains seen since start, "board" too
#define BOARD       "board"

struct tracked {
	struct throttle_domain_state st;
	bool open;
	bool zone_bound;  // the episode's zone drives its cooling device (not the hottest crossed)
	bool capped_prev; // the previous cycle's poll saw a cap
	bool seen;        // in this cycle's readings
	struct throttle_episode ep;
};

struct throttle_tracker {
	struct tracked doms[MAX_TRACKED];
	size_t n_doms;
	struct throttle_episode closed[2 * MAX_TRACKED];
	size_t n_closed;
	struct throttle_episode *out[3 * MAX_TRACKED];
	size_t n_out;
	bool have_prev;
	int64_t prev_ts;
	struct throttle_cdev_reading prev_cdevs[THROTTLE_MAX_CDEVS];
	size_t n_prev_cdevs;
	struct throttle_board_reading prev_board;
};

bool throttle_capped(const struct throttle_domain_reading *d) {
	return d->cap_hz > 0 && d->max_hz > 0 && d->cap_hz < d->max_hz;
}

bool throttle_cdev_caps(const char *type) {
	static const char *const capping[] = {"cpufreq", "devfreq", "idle", "powerclamp",
					      "Processor"};
	for (size_t i = 0; i < sizeof(capping) / sizeof(capping[0]); i++) {
		if (strstr(type, capping[i])) {
			return true;
		}
	}
	return false;
}

const char *throttle_cause_name(enum throttle_cause cause) {
	return cause == THROTTLE_CAUSE_THERMAL ? "thermal" : "cap";
}

const char *throttle_method_name(enum throttle_method method) {
	return method == THROTTLE_METHOD_COUNTERS ? "counters" : "poll";
}

struct throttle_tracker *throttle_tracker_create(void) {
	return xcalloc(1, sizeof(struct throttle_tracker));
}

void throttle_tracker_destroy(struct throttle_tracker *t) {
	free(t);
}

static void copy_name(char dst[static THROTTLE_NAME_LEN], const char *src) {
	snprintf(dst, THROTTLE_NAME_LEN, "%s", src);
}

/* The tracked domain @name, added when new; NULL when the table is full. */
static struct tracked *tracked(struct throttle_tracker *t, const char *name) {
	for (size_t i = 0; i < t->n_doms; i++) {
		if (strcmp(t->doms[i].st.name, name) == 0) {
			return &t->doms[i];
		}
	}
	if (t->n_doms == MAX_TRACKED) {
		return NULL;
	}
	struct tracked *d = &t->doms[t->n_doms++];
	*d = (struct tracked){0};
	copy_name(d->st.name, name);
	return d;
}

static const struct throttle_zone_reading *find_zone(const struct throttle_input *in,
						     const char *name) {
	for (size_t i = 0; i < in->n_zones; i++) {
		if (strcmp(in->zones[i].name, name) == 0) {
			return &in->zones[i];
		}
	}
	return NULL;
}

/* A capping cooling device that may explain a cap of @domain: its own, or one of no known
 * domain. */
static bool cdev_for(const struct throttle_cdev_reading *c, const char *domain) {
	return c->caps && (c->domain[0] == '\0' || strcmp(c->domain, domain) == 0);
}

static void note_cooling(struct throttle_episode *ep, const char *type, int dev, int64_t state) {
	for (size_t i = 0; i < ep->n_cooling; i++) {
		if (ep->cooling[i].dev == dev && strcmp(ep->cooling[i].type, type) == 0) {
			if (state > ep->cooling[i].state) {
				ep->cooling[i].state = state;
			}
			return;
		}
	}
	if (ep->n_cooling < THROTTLE_MAX_COOLING) {
		struct throttle_cooling *c = &ep->cooling[ep->n_cooling++];
		copy_name(c->type, type);
		c->dev = dev;
		c->state = state;
	}
}

static void set_zone(struct throttle_episode *ep, const struct throttle_zone_reading *z, int trip) {
	copy_name(ep->zone, z->name);
	ep->trip = trip >= 0 && (size_t)trip < z->n_trips ? trip : -1;
	ep->trip_temp_mc = ep->trip >= 0 ? z->trips[trip].temp_mc : 0;
	ep->trip_hyst_mc = ep->trip >= 0 ? z->trips[trip].hyst_mc : 0;
	ep->have_temp = z->valid;
	ep->temp_start_mc = ep->temp_peak_mc = z->temp_mc;
}

/* The zone over a passive trip by the most, with that trip; false when none is. */
static bool crossed_trip(const struct throttle_input *in, const struct throttle_zone_reading **zone,
			 int *trip) {
	int64_t best = -1;
	for (size_t i = 0; i < in->n_zones; i++) {
		const struct throttle_zone_reading *z = &in->zones[i];
		for (size_t k = 0; z->valid && k < z->n_trips; k++) {
			int64_t over; // a value read from outside: checked, as every difference
				      // here
			if (__builtin_sub_overflow(z->temp_mc, z->trips[k].temp_mc, &over)) {
				continue;
			}
			if (z->trips[k].passive && over >= 0 && over > best) {
				best = over;
				*zone = z;
				*trip = (int)k;
			}
		}
	}
	return best >= 0;
}

/* A zone bound to a cooling device, ranked by how far it is over the trip it is bound at. */
struct bound_candidate {
	const struct throttle_zone_reading *zone;
	int trip;
	bool margin_known; // temperature read and the bound trip known
	int64_t margin_mc; // temp - the bound trip's temp
};

/* @a drives its device more than @b: over its bound trip by more (a zone cooling through the
 * trip's hysteresis is below it, yet drives), then read, then hotter. */
static bool drives_more(const struct bound_candidate *a, const struct bound_candidate *b) {
	if (a->margin_known != b->margin_known) {
		return a->margin_known;
	}
	if (a->margin_known) {
		return a->margin_mc > b->margin_mc;
	}
	if (a->zone->valid != b->zone->valid) {
		return a->zone->valid;
	}
	return a->zone->temp_mc > b->zone->temp_mc;
}

/*
 * The zone whose trip drives one of the cooling devices @devs (thermal_zoneN/cdevK,
 * cdevK_trip_point): of the zones bound to them, the one over its bound trip by the most; false
 * when no zone is bound to any.
 */
static bool driving_zone(const struct throttle_input *in, const int *devs, size_t n_devs,
			 const struct throttle_zone_reading **zone, int *trip) {
	struct bound_candidate best = {0};
	for (size_t i = 0; i < in->n_zones; i++) {
		const struct throttle_zone_reading *z = &in->zones[i];
		for (size_t b = 0; b < z->n_binds; b++) {
			bool bound = false;
			for (size_t c = 0; c < n_devs && !bound; c++) {
				bound = devs[c] == z->binds[b].cdev;
			}
			if (!bound) {
				continue;
			}
			int k = z->binds[b].trip;
			struct bound_candidate cand = {.zone = z, .trip = k};
			cand.margin_known = z->valid && k >= 0 && (size_t)k < z->n_trips &&
					    !__builtin_sub_overflow(z->temp_mc, z->trips[k].temp_mc,
								    &cand.margin_mc);
			if (!best.zone || drives_more(&cand, &best)) {
				best = cand;
			}
		}
	}
	if (best.zone) {
		*zone = best.zone;
		*trip = best.trip;
	}
	return best.zone != NULL;
}

/* The zone driving a cooling device of the episode (those it noted). */
static bool bound_zone(const struct throttle_input *in, const struct throttle_episode *ep,
		       const struct throttle_zone_reading **zone, int *trip) {
	int devs[THROTTLE_MAX_COOLING];
	for (size_t c = 0; c < ep->n_cooling; c++) {
		devs[c] = ep->cooling[c].dev;
	}
	return driving_zone(in, devs, ep->n_cooling, zone, trip);
}

/* True when @z is known to be below trip - hyst of its trip @k. */
static bool zone_cool(const struct throttle_zone_reading *z, int k) {
	if (!z || !z->valid || k < 0 || (size_t)k >= z->n_trips) {
		return false;
	}
	int64_t below;
	return !__builtin_sub_overflow(z->trips[k].temp_mc, z->trips[k].hyst_mc, &below) &&
	       z->temp_mc < below;
}

/* Every zone bound to the episode (its own, those bound to its cooling devices) is cool, and
 * there is at least one. */
static bool bound_zones_cool(const struct throttle_input *in, const struct throttle_episode *ep) {
	size_t bound = 0;
	if (ep->zone[0] && ep->trip >= 0) {
		if (!zone_cool(find_zone(in, ep->zone), ep->trip)) {
			return false;
		}
		bound++;
	}
	for (size_t i = 0; i < in->n_zones; i++) {
		const struct throttle_zone_reading *z = &in->zones[i];
		for (size_t b = 0; b < z->n_binds; b++) {
			for (size_t c = 0; c < ep->n_cooling; c++) {
				if (ep->cooling[c].dev != z->binds[b].cdev) {
					continue;
				}
				if (!zone_cool(z, z->binds[b].trip)) {
					return false;
				}
				bound++;
			}
		}
	}
	return bound > 0;
}

/*
 * This cycle's cause, zone, temperatures, cooling devices and stuck mark of an open episode.
 * The zone is the one whose trip drives the domain's active cooling device (its own device
 * first, else one of no known domain); the zone over a passive trip by the most only while no
 * binding explains the cap, replaced once one does.
 */
static void explain(struct tracked *d, const struct throttle_input *in) {
	struct throttle_episode *ep = &d->ep;
	const struct throttle_zone_reading *zone = NULL;
	int trip = -1;
	bool crossed = crossed_trip(in, &zone, &trip);
	int own[THROTTLE_MAX_CDEVS], any[THROTTLE_MAX_CDEVS];
	size_t n_own = 0, n_any = 0;
	for (size_t i = 0; i < in->n_cdevs; i++) {
		const struct throttle_cdev_reading *c = &in->cdevs[i];
		if (cdev_for(c, ep->domain) && c->cur_state > 0) {
			note_cooling(ep, c->type, c->dev, c->cur_state);
			if (c->domain[0]) {
				own[n_own++] = c->dev;
			} else {
				any[n_any++] = c->dev;
			}
		}
	}
	if (crossed || n_own + n_any > 0) {
		ep->cause = THROTTLE_CAUSE_THERMAL;
	}
	const struct throttle_zone_reading *bz = NULL;
	int btrip = -1;
	bool bound = !d->zone_bound && (driving_zone(in, own, n_own, &bz, &btrip) ||
					driving_zone(in, any, n_any, &bz, &btrip));
	if (bound) {
		set_zone(ep, bz, btrip);
		d->zone_bound = true;
	} else if (!ep->zone[0] && crossed) {
		set_zone(ep, zone, trip);
	} else if (ep->zone[0]) {
		const struct throttle_zone_reading *z = find_zone(in, ep->zone);
		if (z && z->valid && (!ep->have_temp || z->temp_mc > ep->temp_peak_mc)) {
			if (!ep->have_temp) {
				ep->temp_start_mc = z->temp_mc;
			}
			ep->temp_peak_mc = z->temp_mc;
			ep->have_temp = true;
		}
	}
	if (bound_zones_cool(in, ep)) {
		ep->cool_since = ep->cool_since ? ep->cool_since : in->ts;
		ep->stuck |= in->ts - ep->cool_since > THROTTLE_STUCK_S;
	} else {
		ep->cool_since = 0;
	}
}

static void open_episode(struct tracked *d, const struct throttle_domain_reading *r, int64_t ts) {
	d->open = true;
	d->zone_bound = false;
	d->ep = (struct throttle_episode){
		.start = ts,
		.last_seen = ts,
		.min_hz = r->cap_hz,
		.max_hz = r->max_hz,
		.cause = THROTTLE_CAUSE_CAP,
		.method = THROTTLE_METHOD_POLL,
		.trip = -1,
	};
	copy_name(d->ep.domain, r->name);
}

static void close_episode(struct throttle_tracker *t, struct tracked *d, int64_t end) {
	d->open = false;
	d->ep.end = end;
	d->ep.duration_ms = (end - d->ep.start) * 1000;
	t->closed[t->n_closed++] = d->ep;
}

/* One domain's poll this cycle. */
static void poll_domain(struct throttle_tracker *t, const struct throttle_input *in,
			const struct throttle_domain_reading *r) {
	struct tracked *d = tracked(t, r->name);
	if (!d) {
		return;
	}
	d->seen = true;
	bool capped = throttle_capped(r);
	if (d->open && t->have_prev) {
		d->st.ms[d->ep.cause] += (in->ts - t->prev_ts) * 1000;
	}
	if (capped && !d->open) {
		open_episode(d, r, in->ts);
	}
	if (capped) {
		d->ep.min_hz = r->cap_hz < d->ep.min_hz ? r->cap_hz : d->ep.min_hz;
		d->ep.max_hz = r->max_hz;
		d->ep.last_seen = in->ts;
		d->ep.duration_ms = (in->ts - d->ep.start) * 1000;
		explain(d, in);
	} else if (d->open) {
		close_episode(t, d, in->ts);
	}
	d->st.throttled = capped;
}

/* True when a CPU's thermal_throttle counters grew between @p and @b (a reset is no event). */
static bool board_events(const struct throttle_board_reading *p,
			 const struct throttle_board_reading *b) {
	for (size_t i = 0; i < b->n_cpus; i++) {
		for (size_t k = 0; k < p->n_cpus; k++) {
			if (p->cpus[k].cpu == b->cpus[i].cpu &&
			    b->cpus[i].events > p->cpus[k].events) {
				return true;
			}
		}
	}
	return false;
}

/*
 * The board's poll this cycle. Counters that grew since the previous cycle make the interval
 * between them throttled (method counters, cause thermal: the CPU's thermal monitor): the
 * episode starts at the cycle before the first such interval and ends at the last cycle that
 * closed one. The under-voltage alarm is a poll like a cap (cause cap: a power limit), from
 * the first cycle that saw it to the first that saw it clear. A board with neither signal has
 * no board domain.
 */
static void poll_board(struct throttle_tracker *t, const struct throttle_input *in) {
	const struct throttle_board_reading *b = &in->board;
	if (b->n_cpus == 0 && !b->has_alarm) {
		return;
	}
	struct tracked *d = tracked(t, BOARD);
	if (!d) {
		return;
	}
	d->seen = true;
	bool events = t->have_prev && board_events(&t->prev_board, b);
	bool alarm = b->has_alarm && b->alarm;
	bool capped = events || alarm;
	bool was_open = d->open;
	if (capped && !d->open) {
		d->open = true;
		d->zone_bound = false;
		d->ep = (struct throttle_episode){
			.start = events && !alarm ? t->prev_ts : in->ts,
			.cause = events ? THROTTLE_CAUSE_THERMAL : THROTTLE_CAUSE_CAP,
			.method =
				events && !alarm ? THROTTLE_METHOD_COUNTERS : THROTTLE_METHOD_POLL,
			.trip = -1,
		};
		copy_name(d->ep.domain, BOARD);
	}
	// the time counted: each interval with events; a poll's, as a domain's, from its start on
	if (t->have_prev && d->open &&
	    (d->ep.method == THROTTLE_METHOD_COUNTERS ? events : was_open)) {
		d->st.ms[events ? THROTTLE_CAUSE_THERMAL : d->ep.cause] +=
			(in->ts - t->prev_ts) * 1000;
	}
	if (capped) {
		d->ep.cause = events ? THROTTLE_CAUSE_THERMAL : d->ep.cause;
		d->ep.last_seen = in->ts;
		d->ep.duration_ms = (in->ts - d->ep.start) * 1000;
		explain(d, in);
	} else if (d->open) {
		// counters: the interval just ended had no event, so it ended by the cycle before
		close_episode(t, d, d->ep.method == THROTTLE_METHOD_COUNTERS ? t->prev_ts : in->ts);
	}
	d->st.throttled = capped;
}

static const struct throttle_cdev_reading *prev_cdev(const struct throttle_tracker *t,
						     const struct throttle_cdev_reading *c) {
	for (size_t i = 0; i < t->n_prev_cdevs; i++) {
		const struct throttle_cdev_reading *p = &t->prev_cdevs[i];
		if (p->dev == c->dev && strcmp(p->type, c->type) == 0 && p->counters &&
		    p->n_states == c->n_states) {
			return p;
		}
	}
	return NULL;
}

/* The time @c spent in states above 0 since @p, and the deepest such state; -1 when the
 * counters went backwards (reset). */
static int64_t active_delta(const struct throttle_cdev_reading *p,
			    const struct throttle_cdev_reading *c, int64_t *deepest) {
	int64_t sum = 0;
	*deepest = 0;
	for (size_t s = 0; s < c->n_states; s++) {
		int64_t d;
		if (__builtin_sub_overflow(c->state_ms[s], p->state_ms[s], &d) || d < 0) {
			return -1; // a reset, or counters no kernel wrote
		}
		if (s > 0 && d > 0) {
			if (__builtin_add_overflow(sum, d, &sum)) {
				return -1;
			}
			*deepest = (int64_t)s;
		}
	}
	return sum;
}

/* The counter episode of @domain this update, added when new. */
static struct throttle_episode *counter_episode(struct throttle_tracker *t, const char *domain,
						const struct throttle_input *in) {
	for (size_t i = 0; i < t->n_closed; i++) {
		struct throttle_episode *ep = &t->closed[i];
		if (ep->method == THROTTLE_METHOD_COUNTERS && strcmp(ep->domain, domain) == 0) {
			return ep;
		}
	}
	if (t->n_closed == sizeof(t->closed) / sizeof(t->closed[0])) {
		return NULL;
	}
	struct throttle_episode *ep = &t->closed[t->n_closed++];
	*ep = (struct throttle_episode){
		.start = t->prev_ts,
		.end = in->ts,
		.last_seen = in->ts,
		.cause = THROTTLE_CAUSE_THERMAL,
		.method = THROTTLE_METHOD_COUNTERS,
		.trip = -1,
	};
	copy_name(ep->domain, domain);
	for (size_t i = 0; i < in->n_domains; i++) {
		if (strcmp(in->domains[i].name, domain) == 0) {
			ep->max_hz = in->domains[i].max_hz;
		}
	}
	return ep;
}

/* Episodes between the previous cycle and this one that only the cooling counters saw. */
static void count_between(struct throttle_tracker *t, const struct throttle_input *in) {
	int64_t interval_ms;
	if (__builtin_sub_overflow(in->ts, t->prev_ts, &interval_ms) ||
	    __builtin_mul_overflow(interval_ms, 1000, &interval_ms)) {
		interval_ms = INT64_MAX;
	}
	for (size_t i = 0; i < in->n_cdevs; i++) {
		const struct throttle_cdev_reading *c = &in->cdevs[i];
		const struct throttle_cdev_reading *p =
			c->caps && c->counters ? prev_cdev(t, c) : NULL;
		int64_t deepest, ms = p ? active_delta(p, c, &deepest) : -1;
		const char *domain = c->domain[0] ? c->domain : BOARD;
		struct tracked *d = ms > 0 ? tracked(t, domain) : NULL;
		if (!d || d->capped_prev || d->st.throttled) {
			continue; // no activity, or the polls saw the cap
		}
		struct throttle_episode *ep = counter_episode(t, domain, in);
		if (!ep) {
			continue;
		}
		int64_t before = ep->duration_ms;
		ms = ms < interval_ms ? ms : interval_ms;
		ep->duration_ms = ms > ep->duration_ms ? ms : ep->duration_ms;
		d->st.ms[THROTTLE_CAUSE_THERMAL] += ep->duration_ms - before;
		note_cooling(ep, c->type, c->dev, deepest);
		const struct throttle_zone_reading *zone = NULL;
		int trip = -1;
		if (!ep->zone[0] && bound_zone(in, ep, &zone, &trip)) {
			set_zone(ep, zone, trip);
		}
	}
}

void throttle_tracker_update(struct throttle_tracker *t, const struct throttle_input *in) {
	if (t->have_prev && in->ts <= t->prev_ts) {
		return;
	}
	t->n_closed = 0;
	t->n_out = 0;
	for (size_t i = 0; i < t->n_doms; i++) {
		t->doms[i].capped_prev = t->doms[i].st.throttled;
		t->doms[i].seen = false;
	}
	for (size_t i = 0; i < in->n_domains; i++) {
		poll_domain(t, in, &in->domains[i]);
	}
	poll_board(t, in);
	for (size_t i = 0; i < t->n_doms; i++) {
		struct tracked *d = &t->doms[i];
		if (!d->seen && d->open) {
			close_episode(t, d, d->ep.last_seen); // the domain vanished
		}
		if (!d->seen) {
			d->st.throttled = false;
		}
	}
	if (t->have_prev) {
		count_between(t, in);
	}
	for (size_t i = 0; i < t->n_closed; i++) {
		t->out[t->n_out++] = &t->closed[i];
	}
	for (size_t i = 0; i < t->n_doms; i++) {
		if (t->doms[i].open) {
			t->out[t->n_out++] = &t->doms[i].ep;
		}
	}
	memcpy(t->prev_cdevs, in->cdevs, in->n_cdevs * sizeof(in->cdevs[0]));
	t->n_prev_cdevs = in->n_cdevs;
	t->prev_board = in->board;
	t->prev_ts = in->ts;
	t->have_prev = true;
}

struct throttle_episode *const *throttle_tracker_episodes(struct throttle_tracker *t, size_t *n) {
	*n = t->n_out;
	return t->out;
}

void throttle_tracker_zero_totals(struct throttle_tracker *t) {
	for (size_t i = 0; i < t->n_doms; i++) {
		t->doms[i].st.ms[THROTTLE_CAUSE_CAP] = t->doms[i].st.ms[THROTTLE_CAUSE_THERMAL] = 0;
	}
}

size_t throttle_tracker_domains(const struct throttle_tracker *t, struct throttle_domain_state *out,
				size_t max) {
	size_t n = t->n_doms < max ? t->n_doms : max;
	for (size_t i = 0; i < n; i++) {
		out[i] = t->doms[i].st;
	}
	return n;
}
