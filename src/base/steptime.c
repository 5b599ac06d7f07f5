/* The longest stage of a step, on the boot clock. */
#include "steptime.h"

#include <time.h>

int64_t steptime_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t steptime_end(struct steptime *t, const char *stage, int64_t start_ms) {
	int64_t now = steptime_now_ms();
	if (!t->stage || now - start_ms > t->ms) {
		t->stage = stage;
		t->ms = now - start_ms;
	}
	return now;
}

void steptime_merge(struct steptime *t, const struct steptime *other) {
	if (other->stage && (!t->stage || other->ms > t->ms)) {
		*t = *other;
	}
}
