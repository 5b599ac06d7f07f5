/*
 * The daemon's side of runs: the Unix socket (runs.socket), the run endpoints' work on the
 * daemon's own loop (the only writer), fast samples while any run is active, the kernel
 * counters at a run's start and stop, the watched processes, and each run's figures.
 */
#ifndef RUNSOCK_H
#define RUNSOCK_H

#include <stdint.h>

#include "api.h"
#include "config.h"
#include "runwire.h"
#include "steptime.h"

struct runsock;
struct store;

/*
 * Fast samples are written in batches of this many, or when the oldest has waited this long
 * (a timer of its own: runsock_timeout_ms() counts it), or at a stop, or when no run is active
 * any more: a transaction writes whole pages, so flash sees far less per sample than one by
 * one (bench/store-wear). A daemon killed mid-run loses at most the last RUNSOCK_BATCH_MAX_MS
 * of fast samples.
 */
#define RUNSOCK_BATCH        24
#define RUNSOCK_BATCH_MAX_MS 10000

/**
 * Creates the listening AF_UNIX socket at cfg->runs.socket: its directory is created when
 * missing, the socket gets group thermlog (when that group exists) and mode 0660. With
 * @private_dir (the demo's own tree, which only this user reaches) a missing group is no
 * warning: nobody else could reach the socket anyway. Returns the fd, or -1 with a warning
 * (never fatal: the daemon goes on without it).
 */
int runsock_listen(const struct config *cfg, bool private_dir);

/**
 * The run bookkeeping over @store (the daemon's write connection, borrowed) and @cfg (borrowed;
 * runsock_set_config() on reload). Reads back the runs left running by an earlier daemon, so
 * their stops still land. @boot_id is copied. Returns NULL (logged) on error.
 */
struct runsock *runsock_create(const struct config *cfg, struct store *store, const char *boot_id,
			       int64_t now_ms);
void runsock_destroy(struct runsock *rs); // flushes pending fast samples; accepts NULL

void runsock_set_config(struct runsock *rs, const struct config *cfg);
/** The write connection changed (the database was reopened). */
void runsock_set_store(struct runsock *rs, struct store *store);

/** The endpoints' implementation for the HTTP servers (lives as long as @rs). */
const struct api_runs *runsock_api(struct runsock *rs);

/** An eventfd that is readable when an HTTP request waits for the loop: poll it. */
int runsock_fd(const struct runsock *rs);

/**
 * The loop's part, on the daemon's thread: answers waiting requests, takes a fast sample when
 * one is due, closes runs whose process is gone as lost, writes full batches, and gives the
 * heap's free pages back shortly after a run started or ended. @now_ms is the
 * wall clock (ms since epoch), @mono_ms the boot clock.
 */
void runsock_work(struct runsock *rs, int64_t now_ms, int64_t mono_ms);

/** The longest stage of the last runsock_work() (a run's start, its end, a fast sample...). */
struct steptime runsock_work_longest(const struct runsock *rs);

/**
 * Starts a run from the loop's own thread (the demo's workload), as POST /api/v1/runs would at
 * @now_ms. *id gets its id. 0 or a negative errno (logged).
 */
int runsock_start(struct runsock *rs, const struct runwire_start *start, int64_t now_ms,
		  int64_t mono_ms, int64_t *id);
/** Stops run @id from the loop's own thread, as POST /api/v1/runs/{id}/stop would. 0 or -errno. */
int runsock_stop(struct runsock *rs, int64_t id, const struct runwire_stop *stop, int64_t now_ms,
		 int64_t mono_ms);

/**
 * Milliseconds until runsock_work() has something to do (a fast sample, a batch to write, or
 * the pages a start or an end freed to give back), or -1 (nothing: no run active).
 */
int runsock_timeout_ms(const struct runsock *rs, int64_t mono_ms);

#endif
