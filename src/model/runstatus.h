/*
 * How a run ended: the one list of run statuses. The store keeps a run's status as its name
 * (the schema's CHECK list is these names); every other layer passes the enum.
 */
#ifndef RUNSTATUS_H
#define RUNSTATUS_H

#include <stdbool.h>

/** How a run ended; RUN_STATUS_RUNNING while it has not. */
enum run_status {
	RUN_STATUS_OK,       // exit 0
	RUN_STATUS_FAILED,   // exit != 0 (exit code kept)
	RUN_STATUS_SIGNALED, // killed by a signal (signal kept)
	RUN_STATUS_TIMEOUT,  // killed by the wrapper's --timeout
	RUN_STATUS_LOST,     // its process vanished without a stop
	RUN_STATUS_RUNNING,  // not ended yet
	RUN_STATUS_COUNT,
};

/** "ok", "failed", "signaled", "timeout", "lost", "running"; "unknown" out of range. */
const char *run_status_name(enum run_status status);
/** Parses exactly one of the names above; false otherwise (also for NULL). */
bool run_status_parse(const char *name, enum run_status *out);
/** Whether a run can end with @status: every status but RUN_STATUS_RUNNING. */
bool run_status_final(enum run_status status);

#endif
