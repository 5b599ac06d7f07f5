/* The throttle episode tracker over hand-made cycles of an RK3588 board (1 s apart). */
#include <string.h>

#include "test.h"
#include "throttle.h"

#define MAX_HZ 2256000000LL

/* policy6 at its maximum, soc-thermal at 43 °C under its passive trip (60 °C, hyst 2 °C) bound
 * to cooling_device2 (cpufreq-cpu6), a fan running at state 1 that caps nothing. */
static void board(struct throttle_input *in, int64_t ts) {
	memset(in, 0, sizeof(*in));
	in->ts = ts;
	in->n_domains = 2;
	snprintf(in->domains[0].name, THROTTLE_NAME_LEN, "cpufreq/policy6");
	in->domains[0].cap_hz = in->domains[0].max_hz = MAX_HZ;
	snprintf(in->domains[1].name, THROTTLE_NAME_LEN, "devfreq/fb000000.gpu");
	in->domains[1].cap_hz = in->domains[1].max_hz = 1000000000;
	in->n_zones = 1;
	struct throttle_zone_reading *z = &in->zones[0];
	snprintf(z->name, THROTTLE_NAME_LEN, "soc-thermal");
	z->valid = true;
	z->temp_mc = 43000;
	z->n_trips = 2;
	z->trips[0] = (struct throttle_trip){.temp_mc = 60000, .hyst_mc = 2000, .passive = true};
	z->trips[1] = (struct throttle_trip){.temp_mc = 115000, .hyst_mc = 2000};
	z->n_binds = 1;
	z->binds[0].cdev = 2;
	z->binds[0].trip = 0;
	in->n_cdevs = 2;
	struct throttle_cdev_reading *c = &in->cdevs[0];
	c->dev = 2;
	snprintf(c->type, THROTTLE_NAME_LEN, "cpufreq-cpu6");
	c->caps = throttle_cdev_caps(c->type);
	snprintf(c->domain, THROTTLE_NAME_LEN, "cpufreq/policy6");
	c->counters = true;
	c->n_states = 4;
	c->state_ms[0] = ts * 1000;
	c = &in->cdevs[1];
	c->dev = 4;
	snprintf(c->type, THROTTLE_NAME_LEN, "pwm-fan");
	c->caps = throttle_cdev_caps(c->type);
	c->cur_state = 1;
}

static struct throttle_episode *only(struct throttle_tracker *t, size_t *n) {
	struct throttle_episode *const *eps = throttle_tracker_episodes(t, n);
	return *n ? eps[0] : NULL;
}

/* A 10 s cap with the cooling device at state 3, then released. */
static void test_thermal_episode(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	size_t n;
	ok(!throttle_cdev_caps("pwm-fan") && throttle_cdev_caps("thermal-cpufreq-0") &&
		   throttle_cdev_caps("devfreq-fb000000.gpu"),
	   "fans cap nothing; cpufreq and devfreq cooling devices do");
	for (int64_t ts = 1000; ts < 1005; ts++) {
		board(&in, ts);
		throttle_tracker_update(t, &in);
		only(t, &n);
		is_int(n, 0, "no episode at the maximum");
	}
	struct throttle_episode *ep = NULL;
	for (int64_t ts = 1005; ts < 1015; ts++) {
		board(&in, ts);
		in.domains[0].cap_hz = ts < 1008 ? 1800000000 : 1416000000;
		in.cdevs[0].cur_state = ts < 1008 ? 2 : 3;
		in.zones[0].temp_mc = 58000 + (ts - 1005) * 500;
		throttle_tracker_update(t, &in);
		ep = only(t, &n);
		if (ts == 1005) {
			is_int(n, 1, "an episode opens at the first capped cycle");
			ok(ep && ep->end == 0 && ep->start == 1005, "open, from 1005");
			ep->row = 42;
		}
	}
	ok(ep && ep->row == 42, "an open episode keeps the caller's row");
	board(&in, 1015);
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	is_int(n, 1, "released: one closed episode");
	if (ep) {
		is_int(ep->start, 1005, "start at the first capped cycle");
		is_int(ep->end, 1015, "end at the first released cycle");
		is_int(ep->duration_ms, 10000, "10 s");
		is_int(ep->min_hz, 1416000000, "the deepest cap");
		is_int(ep->max_hz, MAX_HZ, "the hardware maximum");
		is_str(throttle_cause_name(ep->cause), "thermal", "cause thermal (cooling active)");
		is_str(throttle_method_name(ep->method), "poll", "method poll");
		is_str(ep->zone, "soc-thermal", "explained by the zone bound to the device");
		is_int(ep->trip, 0, "at its bound trip");
		is_int(ep->trip_temp_mc, 60000, "trip temperature");
		is_int(ep->temp_start_mc, 58000, "temperature at start");
		is_int(ep->temp_peak_mc, 62500, "peak temperature");
		is_int(ep->n_cooling, 1, "one capping cooling device (the fan is not one)");
		is_str(ep->cooling[0].type, "cpufreq-cpu6", "cpufreq-cpu6");
		is_int(ep->cooling[0].state, 3, "its deepest state");
		ok(!ep->stuck, "not stuck");
		is_int(ep->row, 42, "the closed episode carries the row");
	}
	board(&in, 1016);
	throttle_tracker_update(t, &in);
	only(t, &n);
	is_int(n, 0, "nothing after it");
	struct throttle_domain_state st[4];
	is_int(throttle_tracker_domains(t, st, 4), 2, "two domains");
	is_int(st[0].ms[THROTTLE_CAUSE_THERMAL], 10000, "10 s throttled by thermal");
	is_int(st[0].ms[THROTTLE_CAUSE_CAP], 0, "none by a cap");
	ok(!st[0].throttled, "not throttled now");
	throttle_tracker_destroy(t);
}

/* The clock is low (powersave, idle) but the maximum is not capped. */
static void test_idle_low_clock(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	size_t n, total = 0;
	for (int64_t ts = 2000; ts < 2030; ts++) {
		board(&in, ts);
		in.zones[0].temp_mc = 30000;
		throttle_tracker_update(t, &in);
		only(t, &n);
		total += n;
	}
	is_int(total, 0, "a low clock under an uncapped maximum is no episode");
	struct throttle_domain_reading unread = {.cap_hz = 0, .max_hz = MAX_HZ};
	ok(!throttle_capped(&unread), "an unread cap is no cap");
	throttle_tracker_destroy(t);
}

/* 400 ms at state 2 between two cycles that both see the maximum. */
static void test_sub_interval(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	size_t n;
	board(&in, 3000);
	in.cdevs[0].state_ms[2] = 1000;
	throttle_tracker_update(t, &in);
	board(&in, 3001);
	in.cdevs[0].state_ms[2] = 1000;
	throttle_tracker_update(t, &in);
	only(t, &n);
	is_int(n, 0, "no counter change, no episode");
	board(&in, 3002);
	in.cdevs[0].state_ms[0] = 3002 * 1000 - 400;
	in.cdevs[0].state_ms[2] = 1400;
	in.cdevs[1].cur_state = 2; // the fan's activity never counts
	throttle_tracker_update(t, &in);
	struct throttle_episode *ep = only(t, &n);
	is_int(n, 1, "the counters saw an episode the polls missed");
	if (ep) {
		is_str(ep->domain, "cpufreq/policy6", "on the device's domain");
		is_str(throttle_method_name(ep->method), "counters", "method counters");
		is_str(throttle_cause_name(ep->cause), "thermal", "cause thermal");
		is_int(ep->start, 3001, "within the interval: from the previous cycle");
		is_int(ep->end, 3002, "to this one");
		is_int(ep->duration_ms, 400, "lasting the counted 400 ms");
		is_int(ep->min_hz, 0, "depth unknown");
		is_int(ep->max_hz, MAX_HZ, "the hardware maximum");
		is_int(ep->n_cooling, 1, "one device");
		is_int(ep->cooling[0].state, 2, "deepest state 2");
		is_str(ep->zone, "soc-thermal", "the zone bound to it");
	}
	board(&in, 3003);
	in.cdevs[0].state_ms[2] = 1400;
	throttle_tracker_update(t, &in);
	only(t, &n);
	is_int(n, 0, "once");
	board(&in, 3004);
	in.cdevs[0].state_ms[2] = 0; // reset
	throttle_tracker_update(t, &in);
	only(t, &n);
	is_int(n, 0, "a counter reset is no episode");
	throttle_tracker_destroy(t);
}

/* The zone cooled below trip - hyst but the cap holds. */
static void cap_held(struct throttle_tracker *t, struct throttle_input *in, int64_t ts,
		     int64_t temp_mc) {
	board(in, ts);
	in->domains[0].cap_hz = 1200000000;
	in->cdevs[0].cur_state = 5;
	in->zones[0].temp_mc = temp_mc;
	throttle_tracker_update(t, in);
}

static void test_stuck(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	size_t n;
	int64_t ts = 4000;
	for (; ts < 4010; ts++) {
		cap_held(t, &in, ts, 61000); // over the passive trip
	}
	for (; ts < 4030 + THROTTLE_STUCK_S; ts++) {
		cap_held(t, &in, ts, 59000); // under the trip, above trip - hyst (58 °C)
	}
	struct throttle_episode *ep = only(t, &n);
	ok(ep && !ep->stuck, "not stuck while above trip - hyst");
	for (; ts <= 4030 + 2 * THROTTLE_STUCK_S; ts++) {
		cap_held(t, &in, ts, 50000);
	}
	ep = only(t, &n);
	ok(ep && !ep->stuck, "not stuck at exactly 5 minutes below trip - hyst");
	cap_held(t, &in, ts, 50000);
	ep = only(t, &n);
	ok(ep && ep->stuck, "stuck: the cap held over 5 minutes with the zone below trip - hyst");
	if (ep) {
		is_int(ep->temp_start_mc, 61000, "start temperature (over the passive trip)");
		is_int(ep->temp_peak_mc, 61000, "peak");
		is_str(ep->zone, "soc-thermal", "zone");
	}
	board(&in, ts + 1);
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	ok(ep && ep->stuck && ep->end == ts + 1, "the closed episode stays stuck");
	throttle_tracker_destroy(t);
}

/* A user limit with no trip crossed and no cooling device active; then a trip crossed. */
static void test_cause(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	size_t n;
	struct throttle_episode *ep = NULL;
	for (int64_t ts = 5000; ts < 5005; ts++) {
		board(&in, ts);
		in.domains[1].cap_hz = 600000000;
		throttle_tracker_update(t, &in);
		ep = only(t, &n);
	}
	board(&in, 5005);
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	ok(ep && ep->cause == THROTTLE_CAUSE_CAP, "a user limit is cause cap");
	ok(ep && ep->zone[0] == '\0' && ep->n_cooling == 0, "with no zone or device");
	ok(ep && ep->min_hz == 600000000 && ep->duration_ms == 5000, "600 MHz for 5 s");
	for (int64_t ts = 5010; ts < 5013; ts++) {
		board(&in, ts);
		in.domains[1].cap_hz = 800000000;
		in.zones[0].temp_mc = ts == 5011 ? 60500 : 55000;
		throttle_tracker_update(t, &in);
		ep = only(t, &n);
	}
	ok(ep && ep->cause == THROTTLE_CAUSE_THERMAL, "a passive trip crossed during it: thermal");
	ok(ep && strcmp(ep->zone, "soc-thermal") == 0 && ep->trip == 0, "that zone and trip");
	ok(ep && ep->temp_start_mc == 60500, "the temperature when it explained the cap");
	struct throttle_domain_state st[4];
	throttle_tracker_domains(t, st, 4);
	is_int(st[1].ms[THROTTLE_CAUSE_CAP], 5000 + 1000,
	       "cap seconds (the first episode, then "
	       "one interval before the trip)");
	is_int(st[1].ms[THROTTLE_CAUSE_THERMAL], 1000, "thermal seconds after it");
	ok(st[1].throttled, "throttled now");
	// the domain vanishes: closed at the last cycle that saw it
	board(&in, 5013);
	in.n_domains = 1;
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	ok(ep && ep->end == 5012, "a vanished domain's episode ends at the last cycle that saw it");
	throttle_tracker_destroy(t);
}

/* The board's episode of @t this update, or NULL. */
static struct throttle_episode *board_episode(struct throttle_tracker *t) {
	size_t n;
	struct throttle_episode *const *eps = throttle_tracker_episodes(t, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(eps[i]->domain, "board") == 0) {
			return eps[i];
		}
	}
	return NULL;
}

static bool board_throttled(const struct throttle_tracker *t) {
	struct throttle_domain_state st[8];
	size_t n = throttle_tracker_domains(t, st, 8);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(st[i].name, "board") == 0) {
			return st[i].throttled;
		}
	}
	return false;
}

/* x86: two CPUs' thermal_throttle counters, 60 s cycles; events in two intervals in a row. */
static void x86(struct throttle_input *in, int64_t ts, int64_t events0, int64_t events1) {
	board(in, ts);
	in->board.n_cpus = 2;
	in->board.cpus[0].cpu = 0;
	in->board.cpus[0].events = events0;
	in->board.cpus[0].time_ms = -1;
	in->board.cpus[1].cpu = 1;
	in->board.cpus[1].events = events1;
	in->board.cpus[1].time_ms = -1;
}

static void test_board(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	board(&in, 100);
	throttle_tracker_update(t, &in);
	struct throttle_domain_state st[8];
	size_t n = throttle_tracker_domains(t, st, 8);
	ok(n == 2, "a board without whole-board signals has no board domain");
	throttle_tracker_destroy(t);

	t = throttle_tracker_create();
	int64_t counts[][2] = {{5, 3}, {5, 3}, {5, 4}, {9, 4}, {9, 4}, {9, 4}};
	struct throttle_episode got = {0};
	for (int k = 0; k < 6; k++) {
		x86(&in, 1000 + 60 * k, counts[k][0], counts[k][1]);
		throttle_tracker_update(t, &in);
		struct throttle_episode *ep = board_episode(t);
		if (k == 2) {
			ok(ep && ep->end == 0 && ep->start == 1060 && board_throttled(t),
			   "x86: an event on cpu1 between 1060 and 1120 opens a board episode at 1060");
		}
		if (k == 4) {
			ok(ep && ep->end != 0 && !board_throttled(t),
			   "closed by the interval without events");
			got = ep ? *ep : got;
		}
	}
	ok(got.start == 1060 && got.end == 1180 && got.duration_ms == 120000,
	   "the episode spans the two intervals with events: 1060-1180");
	ok(got.method == THROTTLE_METHOD_COUNTERS && got.cause == THROTTLE_CAUSE_THERMAL &&
		   got.min_hz == 0 && got.max_hz == 0,
	   "method counters, cause thermal, no frequency");
	n = throttle_tracker_domains(t, st, 8);
	ok(n == 3 && strcmp(st[2].name, "board") == 0 &&
		   st[2].ms[THROTTLE_CAUSE_THERMAL] == 120000 && st[2].ms[THROTTLE_CAUSE_CAP] == 0,
	   "the board's throttled time: the two intervals with events, 120 s");
	x86(&in, 1400, 2, 1); // counters reset (a reboot would also change the boot id)
	throttle_tracker_update(t, &in);
	ok(!board_episode(t), "counters that went backwards are no event");
	throttle_tracker_destroy(t);

	// the Raspberry Pi's under-voltage alarm: a poll from the cycle that sees it set
	t = throttle_tracker_create();
	for (int k = 0; k < 5; k++) {
		board(&in, 2000 + k);
		in.board.has_alarm = true;
		in.board.alarm = k == 1 || k == 2;
		throttle_tracker_update(t, &in);
		struct throttle_episode *ep = board_episode(t);
		if (k == 3) {
			ok(ep && ep->start == 2001 && ep->end == 2003 &&
				   ep->method == THROTTLE_METHOD_POLL &&
				   ep->cause == THROTTLE_CAUSE_CAP,
			   "under-voltage 2001-2003: a board episode, poll, cause cap");
		}
	}
	n = throttle_tracker_domains(t, st, 8);
	ok(n == 3 && st[2].ms[THROTTLE_CAUSE_CAP] == 2000, "its throttled time: 2 s, cause cap");
	throttle_tracker_destroy(t);
}

/*
 * The ROCK 5C's zones as a vendor kernel binds them: soc-thermal (passive 60 °C) bound to the
 * fan only, bigcore1-thermal (passive 60 °C, hyst 2 °C) bound to cpufreq-cpu6 at that trip.
 */
static void bound_board(struct throttle_input *in, int64_t ts, int64_t soc_mc, int64_t big1_mc,
			int64_t cpu6_state) {
	board(in, ts);
	in->zones[0].temp_mc = soc_mc;
	in->zones[0].binds[0].cdev = 4; // pwm-fan
	in->n_zones = 2;
	struct throttle_zone_reading *z = &in->zones[1];
	snprintf(z->name, THROTTLE_NAME_LEN, "bigcore1-thermal");
	z->valid = true;
	z->temp_mc = big1_mc;
	z->n_trips = 2;
	z->trips[0] = (struct throttle_trip){.temp_mc = 60000, .hyst_mc = 2000, .passive = true};
	z->trips[1] = (struct throttle_trip){.temp_mc = 115000, .hyst_mc = 2000};
	z->n_binds = 1;
	z->binds[0].cdev = 2;
	z->binds[0].trip = 0;
	in->domains[0].cap_hz = 1800000000;
	in->cdevs[0].cur_state = cpu6_state;
}

/*
 * The zone named is the one whose trip drives the domain's active cooling device, even when
 * another zone is hotter over its own passive trip; the hottest crossed zone only when no
 * binding explains the cap.
 */
static void test_bound_zone(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	size_t n;
	// soc-thermal at 66 °C (6 K over its trip), bigcore1 at 61 °C driving cpufreq-cpu6
	bound_board(&in, 7000, 66000, 61000, 2);
	throttle_tracker_update(t, &in);
	struct throttle_episode *ep = only(t, &n);
	is_str(ep ? ep->zone : NULL, "bigcore1-thermal",
	       "policy6 capped by cpufreq-cpu6: the zone bound to it, not the hotter soc-thermal");
	ok(ep && ep->trip == 0 && ep->temp_start_mc == 61000, "at its bound trip, from 61 °C");
	// bigcore1 cools under its trip, the device still at state 1 (hysteresis): still its zone
	bound_board(&in, 7001, 67000, 59000, 1);
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	is_str(ep ? ep->zone : NULL, "bigcore1-thermal", "still bigcore1-thermal while it drives");
	throttle_tracker_destroy(t);

	// a cap with cpufreq-cpu6 idle: no binding explains it, the hottest crossed zone does
	t = throttle_tracker_create();
	bound_board(&in, 7100, 66000, 61000, 0);
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	is_str(ep ? ep->zone : NULL, "soc-thermal",
	       "no active device: the zone over a passive trip by the most");
	// then cpufreq-cpu6 goes active: its bound zone explains the episode from here on
	bound_board(&in, 7101, 66000, 62000, 1);
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	is_str(ep ? ep->zone : NULL, "bigcore1-thermal",
	       "once the domain's device is active, the zone bound to it");
	ok(ep && ep->temp_start_mc == 62000, "its temperature from then on");
	// the totals start over (a replayed history handed to the live loop), the episode goes on
	throttle_tracker_zero_totals(t);
	struct throttle_domain_state st[4];
	throttle_tracker_domains(t, st, 4);
	is_int(st[0].ms[THROTTLE_CAUSE_THERMAL] + st[0].ms[THROTTLE_CAUSE_CAP], 0, "totals zeroed");
	bound_board(&in, 7102, 66000, 62000, 1);
	throttle_tracker_update(t, &in);
	ep = only(t, &n);
	ok(ep && ep->start == 7100 && ep->end == 0, "the open episode goes on from 7100");
	throttle_tracker_domains(t, st, 4);
	is_int(st[0].ms[THROTTLE_CAUSE_THERMAL], 1000, "one interval counted since");
	throttle_tracker_destroy(t);
}

/*
 * Values read from outside at the 64-bit limits (a zone at INT64_MIN, a trip there, counters
 * that jump by 2^63 - 1 or add past it) are no trip crossed and no throttled time: checked
 * arithmetic, where the sanitizer build stopped at the signed overflows.
 */
static void test_hostile(void) {
	struct throttle_tracker *t = throttle_tracker_create();
	struct throttle_input in;
	size_t n;
	board(&in, 2000);
	in.cdevs[0].state_ms[1] = -5; // counters no kernel writes
	in.cdevs[0].state_ms[2] = 0;
	throttle_tracker_update(t, &in);
	board(&in, 2001);
	in.cdevs[0].state_ms[1] = INT64_MAX;
	in.cdevs[0].state_ms[2] = 0;
	throttle_tracker_update(t, &in);
	only(t, &n);
	is_int(n, 0, "time_in_state_ms jumping from -5 to 2^63 - 1 is no throttled time");
	board(&in, 2002); // both at 0: a reset
	throttle_tracker_update(t, &in);
	board(&in, 2003);
	in.cdevs[0].state_ms[0] = 2002 * 1000;
	in.cdevs[0].state_ms[1] = INT64_MAX / 2 + 1;
	in.cdevs[0].state_ms[2] = INT64_MAX / 2 + 1;
	throttle_tracker_update(t, &in);
	only(t, &n);
	is_int(n, 0, "nor two states whose times add past 2^63 - 1");
	// policy6 capped, soc-thermal at INT64_MIN m°C, a trip at INT64_MIN bound to the device.
	for (int64_t ts = 2004; ts < 2007; ts++) {
		board(&in, ts);
		in.domains[0].cap_hz = 1800000000;
		in.zones[0].temp_mc = INT64_MIN;
		in.zones[0].trips[1] =
			(struct throttle_trip){.temp_mc = INT64_MIN, .hyst_mc = 2000};
		in.zones[0].binds[0].trip = 1;
		throttle_tracker_update(t, &in);
	}
	struct throttle_episode *ep = only(t, &n);
	ok(n == 1 && ep && ep->cause == THROTTLE_CAUSE_CAP,
	   "a zone at INT64_MIN crosses no trip: the cap is a cap, not thermal");
	throttle_tracker_destroy(t);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_thermal_episode();
	test_idle_low_clock();
	test_sub_interval();
	test_stuck();
	test_cause();
	test_bound_zone();
	test_board();
	test_hostile();
	return test_done();
}
