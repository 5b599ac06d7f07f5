/*
 * The run requests on the wire, both sides of the format in one place: the body of
 * POST /api/v1/runs (a start), of POST /api/v1/runs/{id}/stop and of
 * POST /api/v1/runs/{id}/metrics, as `thermlog run` and `thermlog runs metric` write them and
 * the API reads them. Reading takes a parsed body (jsonread.h) and checks every member; a
 * refusal is a message naming the member, for a 400. The same types carry a start and a stop
 * on to the daemon (runsock_start(), runsock_stop(), the API's api_runs), from the API and
 * from the demo alike: one type per wire message.
 */
#ifndef RUNWIRE_H
#define RUNWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "jsonread.h"
#include "runmetric.h"
#include "runstatus.h"

/** A start's members; strings borrowed. */
struct runwire_start {
	const char *label;      // NULL: taken from argv[0] or exe (its base name) when read
	const char *tags;       // a JSON object of strings; NULL = {}
	bool has_pid;           // false: no "pid", the caller's own process is watched
	int64_t pid;            // with has_pid: the process to watch, 0 = none ("pid": null)
	const char *argv;       // a JSON array of strings, or NULL
	const char *exe;        // the executable's path (never opened by the daemon), or NULL
	const char *exe_sha256; // its sha256 as 64 lowercase hex digits, from the caller, or NULL
	const char *request_id; // the caller's idempotency key (1-64 of [A-Za-z0-9._-]), or NULL
};

/** A start as read: @s borrows from the body's tree and from the buffers here. */
struct runwire_start_read {
	struct runwire_start s; // label always set, tags always an object
	struct buf tags, argv;  // the normalised tags object and argv array
	char sha[65];
};

/** How a run ended, as a stop says it. */
struct runwire_stop {
	bool has_status;        // else the status follows from exit_code or signal
	enum run_status status; // RUN_STATUS_OK, _FAILED or _TIMEOUT
	bool has_exit_code, has_signal;
	int exit_code, signal;
	int64_t rss_max_bytes; // < 0 = unknown
	const char *error;     // why it failed (JOBCSV_ERROR_MAX bytes at most), or NULL
	// The run's metrics ("metrics": runmetric_read_json()'s object): the writer's to fill,
	// the reader's own (runwire_stop_finish() frees them).
	struct runmetric_set metrics;
};

/** Appends @argc strings as the JSON array a start's "argv" is. */
void runwire_argv(struct buf *out, char *const *argv, size_t argc);

/** Appends a start's body (a JSON object, no newline) to @out. */
void runwire_start_write(const struct runwire_start *s, struct buf *out);

/**
 * Reads a start from @body (a JSON object, or NULL for an empty body). True with @out filled
 * (finish it either way); false with *msg (newly allocated) naming the member at fault.
 */
bool runwire_start_read(const struct jsonread_node *body, struct runwire_start_read *out,
			char **msg);
void runwire_start_read_finish(struct runwire_start_read *r); // accepts a zeroed struct

/** Appends a stop's body (a JSON object, no newline) to @out. */
void runwire_stop_write(const struct runwire_stop *s, struct buf *out);

/**
 * Reads a stop from @body (a JSON object, or NULL). True with @out filled (strings borrowed
 * from @body); false with *msg (newly allocated) naming the member at fault. A stop must say
 * how the run ended: status, exit_code or signal.
 */
bool runwire_stop_read(const struct jsonread_node *body, struct runwire_stop *out, char **msg);
/** Frees what runwire_stop_read() allocated (the metrics); accepts a zeroed struct. */
void runwire_stop_finish(struct runwire_stop *s);

/** Appends the body of a metrics request, {"metrics": {...}}, to @out. */
void runwire_metrics_write(const struct runmetric_set *metrics, struct buf *out);
/**
 * Reads a metrics request from @body into @out (initialised here; free it with
 * runmetric_set_finish() either way). False with *msg (newly allocated) naming the member at
 * fault; a request names at least one metric.
 */
bool runwire_metrics_read(const struct jsonread_node *body, struct runmetric_set *out, char **msg);

#endif
