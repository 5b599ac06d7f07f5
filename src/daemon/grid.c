/* The loop's wall-clock grid (grid.h): which slot a wake-up is for, and what it skipped. */
#include "grid.h"

#include <stdlib.h>

#include "timefmt.h"

struct grid_deadline grid_arm(struct grid *g, int64_t interval_ms, int64_t now_wall_ns,
			      int64_t now_boot_ns) {
	g->interval_ms = interval_ms;
	int64_t slot = (timefmt_floor_div(now_wall_ns / 1000000, interval_ms) + 1) * interval_ms;
	if (slot == g->last_slot_ms) {
		slot += interval_ms;
	}
	g->armed_slot_ms = slot;
	g->armed_offset_ms = now_wall_ns / 1000000 - now_boot_ns / 1000000;
	return (struct grid_deadline){.slot_ms = slot,
				      .boot_ns = now_boot_ns + slot * 1000000 - now_wall_ns};
}

int64_t grid_wake(struct grid *g, int64_t now_wall_ms, int64_t now_mono_ms) {
	int64_t step_ms = 0;
	if (g->prev_mono_ms > 0) {
		step_ms = (now_wall_ms - g->prev_wall_ms) - (now_mono_ms - g->prev_mono_ms);
	}
	g->prev_wall_ms = now_wall_ms;
	g->prev_mono_ms = now_mono_ms;
	return step_ms;
}

int64_t grid_tolerance_ms(const struct grid *g) {
	int64_t quarter = g->interval_ms / 4;
	return quarter < 2000 ? quarter : 2000;
}

int64_t grid_stepped_ms(const struct grid *g, int64_t now_wall_ms, int64_t now_mono_ms) {
	return (now_wall_ms - now_mono_ms) - g->armed_offset_ms;
}

int64_t grid_due_slot(const struct grid *g, int64_t now_wall_ms, int64_t now_mono_ms) {
	int64_t interval = g->interval_ms;
	int64_t tolerance = grid_tolerance_ms(g);
	int64_t late = now_wall_ms - g->armed_slot_ms;
	int64_t stepped = grid_stepped_ms(g, now_wall_ms, now_mono_ms);
	if (llabs(stepped) <= tolerance && late >= -tolerance && late < interval) {
		return g->armed_slot_ms;
	}
	int64_t slot = timefmt_floor_div(now_wall_ms + interval / 2, interval) * interval;
	return llabs(now_wall_ms - slot) <= tolerance ? slot : INT64_MIN;
}

struct grid_skip grid_skipped(const struct grid *g, int64_t slot_ms, int64_t now_wall_ms,
			      int64_t now_mono_ms) {
	int64_t interval = g->interval_ms;
	struct grid_skip s = {0};
	s.n = g->last_slot_ms > 0 ? (slot_ms - g->last_slot_ms) / interval - 1 : 0;
	if (s.n <= 0) {
		s.n = 0;
		return s;
	}
	s.first_ms = g->last_slot_ms + interval;
	s.last_ms = slot_ms - interval;
	s.gap_ms = slot_ms - g->last_slot_ms;
	s.stepped_ms = grid_stepped_ms(g, now_wall_ms, now_mono_ms);
	s.stepped = s.stepped_ms > grid_tolerance_ms(g);
	return s;
}

void grid_take(struct grid *g, int64_t slot_ms) {
	g->last_slot_ms = slot_ms;
}
