/*
 * The loop's wall-clock grid: cycles fall on multiples of the interval of the wall clock, timed
 * by the boot clock (which keeps counting through a suspend and never steps). Pure arithmetic
 * over the two clocks' readings, which the caller takes: no clock is read here, so a unit test
 * drives it with a fake clock (tests/unit/test-grid.c).
 */
#ifndef GRID_H
#define GRID_H

#include <stdbool.h>
#include <stdint.h>

/** A wall-clock step this large is said by itself (grid_wake()). */
#define GRID_STEP_NOTICE_MS 2000

struct grid {
	int64_t interval_ms;
	int64_t last_slot_ms;    // the last slot the loop acted on (wall clock ms), 0 = none yet
	int64_t armed_slot_ms;   // the slot the timer is armed for (wall clock ms)
	int64_t armed_offset_ms; // wall minus boot clock when it was armed
	int64_t prev_wall_ms, prev_mono_ms; // the previous wake-up, for step detection
};

/** The boot clock's absolute deadline of grid_arm()'s slot, in ns. */
struct grid_deadline {
	int64_t slot_ms;
	int64_t boot_ns;
};

/**
 * Arms the grid for the next slot of @interval_ms after @now_wall_ns, never the slot last acted
 * on (a wake-up a hair early must not run the same slot twice); no catch-up for missed slots.
 * @now_wall_ns and @now_boot_ns are readings of the two clocks taken together.
 */
struct grid_deadline grid_arm(struct grid *g, int64_t interval_ms, int64_t now_wall_ns,
			      int64_t now_boot_ns);

/**
 * A wake-up at @now_wall_ms / @now_mono_ms (boot clock): how far the wall clock stepped against
 * the boot clock since the previous one (0 at the first); a step of GRID_STEP_NOTICE_MS or more
 * is worth saying.
 */
int64_t grid_wake(struct grid *g, int64_t now_wall_ms, int64_t now_mono_ms);

/** How far off a slot the loop may act on it: a quarter interval, at most 2 s. */
int64_t grid_tolerance_ms(const struct grid *g);

/** How far the wall clock moved against the boot clock since the grid was armed. */
int64_t grid_stepped_ms(const struct grid *g, int64_t now_wall_ms, int64_t now_mono_ms);

/**
 * The slot a timer expiry at @now_wall_ms is for, or INT64_MIN to wait for the next one. The
 * armed slot when the clock did not step since it was armed and the loop is less than an
 * interval late (a loaded machine, a stopped process: the cycle is stamped with its slot, not
 * dropped); else, after a clock step or a suspend, the grid slot within grid_tolerance_ms() of
 * now, if any: never a cycle off the grid. The last slot acted on again: a wake-up too early.
 */
int64_t grid_due_slot(const struct grid *g, int64_t now_wall_ms, int64_t now_mono_ms);

/** The slots between the last one acted on and a due one at which no cycle was taken. */
struct grid_skip {
	int64_t n;                 // how many (0: none)
	int64_t first_ms, last_ms; // the first and the last of them (wall clock ms)
	int64_t gap_ms;            // from the last slot acted on to the due one
	int64_t stepped_ms;        // the wall clock's step since the grid was armed
	bool stepped;              // skipped by a forward step: those seconds never came
};

/**
 * The slots skipped before @slot_ms: missed when the loop woke an interval or more late (the
 * process did not run), or stepped over when the wall clock stepped forward past them (nothing
 * missed). A step back skips none.
 */
struct grid_skip grid_skipped(const struct grid *g, int64_t slot_ms, int64_t now_wall_ms,
			      int64_t now_mono_ms);

/** Records @slot_ms as the last slot acted on. */
void grid_take(struct grid *g, int64_t slot_ms);

#endif
