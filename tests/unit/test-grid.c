/*
 * The loop's wall-clock grid on a fake clock: a wall clock and a boot clock a test moves by
 * hand (the daemon reads the real ones). Arming, the due slot (on time, late, early, after a
 * step or a suspend), step detection and the slots skipped.
 */
#include <stdint.h>

#include "grid.h"
#include "test.h"

#define MS    1000000LL          // ns
#define S     1000LL             // ms
#define T0_MS (1785542400LL * S) // 2026-08-01T00:00:00Z, on every grid

/* A fake pair of clocks: the wall clock may step; the boot clock only advances. */
struct fake {
	int64_t wall_ms, boot_ms;
};

static void advance(struct fake *f, int64_t ms) {
	f->wall_ms += ms;
	f->boot_ms += ms;
}

static struct grid_deadline arm(struct grid *g, const struct fake *f, int64_t interval_ms) {
	return grid_arm(g, interval_ms, f->wall_ms * MS, f->boot_ms * MS);
}

/* Sleeps on the boot clock to the armed deadline (plus @late_ms), as the timerfd does. */
static void sleep_to(struct fake *f, struct grid_deadline at, int64_t late_ms) {
	advance(f, at.boot_ns / MS - f->boot_ms + late_ms);
}

static void test_arm(void) {
	struct grid g = {0};
	struct fake f = {.wall_ms = T0_MS + 12 * S + 345, .boot_ms = 5000 * S};
	struct grid_deadline at = arm(&g, &f, 60 * S);
	is_int(at.slot_ms, T0_MS + 60 * S, "armed for the next minute of the wall clock");
	is_int(at.boot_ns, (5000 * S + 47 * S + 655) * MS, "its deadline on the boot clock");
	grid_take(&g, at.slot_ms);
	f.wall_ms = T0_MS + 60 * S - 1; // woke a hair early and handled that slot
	at = arm(&g, &f, 60 * S);
	is_int(at.slot_ms, T0_MS + 120 * S, "never the slot just handled again");
	is_int(grid_tolerance_ms(&g), 2000, "tolerance: at most 2 s");
	arm(&g, &f, 4 * S);
	is_int(grid_tolerance_ms(&g), 1000, "tolerance: a quarter interval under 8 s");
}

static void test_due(void) {
	struct grid g = {0};
	struct fake f = {.wall_ms = T0_MS + 10 * S, .boot_ms = 100 * S};
	struct grid_deadline at = arm(&g, &f, 60 * S);
	sleep_to(&f, at, 3);
	is_int(grid_due_slot(&g, f.wall_ms, f.boot_ms), T0_MS + 60 * S, "on time: the armed slot");
	f = (struct fake){.wall_ms = T0_MS + 10 * S, .boot_ms = 100 * S};
	arm(&g, &f, 60 * S);
	sleep_to(&f, at, 59 * S);
	is_int(grid_due_slot(&g, f.wall_ms, f.boot_ms), T0_MS + 60 * S,
	       "59 s late (a starved loop): still the armed slot, stamped as due");
	f = (struct fake){.wall_ms = T0_MS + 10 * S, .boot_ms = 100 * S};
	arm(&g, &f, 60 * S);
	sleep_to(&f, at, 61 * S);
	is_int(grid_due_slot(&g, f.wall_ms, f.boot_ms), T0_MS + 120 * S,
	       "an interval late: the grid slot within tolerance of now");
	f = (struct fake){.wall_ms = T0_MS + 10 * S, .boot_ms = 100 * S};
	arm(&g, &f, 60 * S);
	sleep_to(&f, at, 90 * S);
	is_int(grid_due_slot(&g, f.wall_ms, f.boot_ms), INT64_MIN,
	       "90 s late, 30 s off the grid: wait for the next slot");
	grid_take(&g, T0_MS + 60 * S);
	f = (struct fake){.wall_ms = T0_MS + 60 * S - 2, .boot_ms = 100 * S};
	g.armed_slot_ms = T0_MS + 60 * S;
	g.armed_offset_ms = f.wall_ms - f.boot_ms;
	is_int(grid_due_slot(&g, f.wall_ms, f.boot_ms), g.last_slot_ms,
	       "a wake-up early for a slot already handled names that slot");
}

static void test_steps(void) {
	struct grid g = {0};
	struct fake f = {.wall_ms = T0_MS + 10 * S, .boot_ms = 100 * S};
	is_int(grid_wake(&g, f.wall_ms, f.boot_ms), 0, "the first wake-up: no step");
	struct grid_deadline at = arm(&g, &f, 60 * S);
	f.boot_ms = at.boot_ns / MS;
	f.wall_ms = T0_MS + 60 * S + 3600 * S; // the clock was set an hour forward meanwhile
	is_int(grid_wake(&g, f.wall_ms, f.boot_ms), 3600 * S, "a step forward is measured");
	is_int(grid_stepped_ms(&g, f.wall_ms, f.boot_ms), 3600 * S, "... against the armed offset");
	is_int(grid_due_slot(&g, f.wall_ms, f.boot_ms), T0_MS + 3660 * S,
	       "after a step: the grid slot at the new now");
	grid_take(&g, T0_MS + 60 * S - 60 * S); // the last slot taken before the step
	struct grid_skip skip = grid_skipped(&g, T0_MS + 3660 * S, f.wall_ms, f.boot_ms);
	ok(skip.stepped && skip.n == 60, "the slots stepped over: 60, and not missed");
	is_int(skip.first_ms, T0_MS + 60 * S, "the first slot stepped over");
	is_int(skip.last_ms, T0_MS + 3600 * S, "the last slot stepped over");

	// A step back: nothing skipped; the grid waits for the slot after the new now.
	g = (struct grid){0};
	f = (struct fake){.wall_ms = T0_MS + 10 * S, .boot_ms = 100 * S};
	grid_take(&g, T0_MS);
	at = arm(&g, &f, 60 * S);
	f.boot_ms = at.boot_ns / MS;
	f.wall_ms = T0_MS + 60 * S - 600 * S;
	is_int(grid_due_slot(&g, f.wall_ms, f.boot_ms), T0_MS - 540 * S,
	       "after a step back: the grid slot at the new now");
	skip = grid_skipped(&g, T0_MS - 540 * S, f.wall_ms, f.boot_ms);
	is_int(skip.n, 0, "a step back skips none");

	// A suspend: the boot clock counts it, the wall clock too: no step.
	g = (struct grid){0};
	f = (struct fake){.wall_ms = T0_MS + 10 * S, .boot_ms = 100 * S};
	grid_wake(&g, f.wall_ms, f.boot_ms);
	grid_take(&g, T0_MS);
	at = arm(&g, &f, 60 * S);
	sleep_to(&f, at, 3 * 3600 * S); // asleep three hours past the deadline
	is_int(grid_wake(&g, f.wall_ms, f.boot_ms), 0, "a suspend is no step");
	int64_t slot = grid_due_slot(&g, f.wall_ms, f.boot_ms);
	is_int(slot, T0_MS + 60 * S + 3 * 3600 * S, "after a suspend: the slot at now");
	skip = grid_skipped(&g, slot, f.wall_ms, f.boot_ms);
	ok(!skip.stepped && skip.n == 180, "a suspend's slots are missed, not stepped over");
	is_int(skip.gap_ms, 181 * 60 * S, "the gap from the last slot taken");
}

static void test_missed(void) {
	struct grid g = {0};
	struct fake f = {.wall_ms = T0_MS + 5 * S, .boot_ms = 100 * S};
	grid_take(&g, T0_MS);
	struct grid_deadline at = arm(&g, &f, 10 * S);
	sleep_to(&f, at, 0);
	struct grid_skip skip = grid_skipped(&g, at.slot_ms, f.wall_ms, f.boot_ms);
	is_int(skip.n, 0, "the next slot: none skipped");
	grid_take(&g, at.slot_ms);
	at = arm(&g, &f, 10 * S);
	sleep_to(&f, at, 30 * S); // the process stopped for 30 s
	int64_t slot = grid_due_slot(&g, f.wall_ms, f.boot_ms);
	is_int(slot, T0_MS + 50 * S, "30 s late at 10 s: the slot at now");
	skip = grid_skipped(&g, slot, f.wall_ms, f.boot_ms);
	ok(!skip.stepped && skip.n == 3, "three cycles missed");
	is_int(skip.first_ms, T0_MS + 20 * S, "the first missed");
	is_int(skip.last_ms, T0_MS + 40 * S, "the last missed");
	grid_take(&g, slot);
	is_int(g.last_slot_ms, slot, "taken");
}

int main(void) {
	test_arm();
	test_due();
	test_steps();
	test_missed();
	return test_done();
}
