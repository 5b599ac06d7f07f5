/* The run statuses and their names. */
#include "runstatus.h"

#include <string.h>

static const char *const status_names[RUN_STATUS_COUNT] = {
	[RUN_STATUS_OK] = "ok",
	[RUN_STATUS_FAILED] = "failed",
	[RUN_STATUS_SIGNALED] = "signaled",
	[RUN_STATUS_TIMEOUT] = "timeout",
	[RUN_STATUS_LOST] = "lost",
	[RUN_STATUS_RUNNING] = "running",
};

const char *run_status_name(enum run_status status) {
	return (unsigned)status < RUN_STATUS_COUNT ? status_names[status] : "unknown";
}

bool run_status_parse(const char *name, enum run_status *out) {
	if (!name) {
		return false;
	}
	for (int i = 0; i < RUN_STATUS_COUNT; i++) {
		if (strcmp(name, status_names[i]) == 0) {
			*out = (enum run_status)i;
			return true;
		}
	}
	return false;
}

bool run_status_final(enum run_status status) {
	return (unsigned)status < RUN_STATUS_COUNT && status != RUN_STATUS_RUNNING;
}
