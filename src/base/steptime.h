/* Which stage of a step of the daemon's loop took the time: a cycle's read, its write, a run's
 * end. The loop keeps the longest since the last cycle and names it when it misses cycles. */
#ifndef STEPTIME_H
#define STEPTIME_H

#include <stdint.h>

struct steptime {
	const char *stage; // a static phrase, "writing the cycle to the database"; NULL: none
	int64_t ms;        // how long it took
};

/** The boot clock (CLOCK_BOOTTIME) in ms: the clock stages are timed on. */
int64_t steptime_now_ms(void);

/**
 * Ends @stage, begun at @start_ms on that clock: kept in @t if it took longer than the stage
 * kept there. Returns the time it ended, the next stage's start.
 */
int64_t steptime_end(struct steptime *t, const char *stage, int64_t start_ms);

/** Keeps @other's stage in @t if it took longer. */
void steptime_merge(struct steptime *t, const struct steptime *other);

#endif
