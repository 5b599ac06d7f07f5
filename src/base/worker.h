/*
 * A thread of its own for work the daemon's loop only asks for (the runs' summary for /metrics,
 * the store's WAL checkpoints): it runs one job each time it is woken, outside the worker's lock,
 * which a wake holds only to say so. Wakes that come before the job begins are one run; a wake
 * while it runs is one more run after it.
 */
#ifndef WORKER_H
#define WORKER_H

struct worker;

/* The work, run on the worker's thread with the @arg given to worker_start(). */
typedef void worker_job_fn(void *arg);

/** Starts the thread, idle until woken. NULL, errno set, when no thread starts. */
struct worker *worker_start(worker_job_fn *job, void *arg);
/** Asks for one run of the job; returns at once. Any thread may call it. */
void worker_wake(struct worker *w);
/**
 * Waits for the run under way, if any (a wake not yet begun is dropped), ends the thread and frees
 * the worker; accepts NULL.
 */
void worker_stop(struct worker *w);

#endif
