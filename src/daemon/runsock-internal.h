/*
 * The runs side's private header, for src/daemon/runsock*.c alone (the contract is
 * runsock.h): struct runsock, a run's running figures, the queue's jobs and the
 * helpers the files share.
 */
#ifndef RUNSOCK_INTERNAL_H
#define RUNSOCK_INTERNAL_H

#include "runsock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "counters.h"
#include "json.h"
#include "jsonread.h"
#include "log.h"
#include "pidstart.h"
#include "runload.h"
#include "runs.h"
#include "runstats.h"
#include "sampler.h"
#include "source.h"
#include "stats.h"
#include "store.h"
#include "xalloc.h"

#define WAIT_MS       10000            // an HTTP request waits this long for the loop, then 503
#define RECENT_MS     (10 * 60 * 1000) // a start's request_id is remembered this long
#define TRIM_DELAY_MS 100   // a start's or an end's pages are given back this long after it
#define RECENT_MAX    1024  // ended runs' request_ids remembered at most
#define FILE_MAX      65536 // a file read for a run (the kernel's limit is a page)
#define CHIP_NAME_MAX 256   // an hwmon chip's name
#define ENERGY_MAX_S  2.5   // power samples further apart than this many intervals are a gap

#define HEAT_TRIPS_MAX 8

/*
 * One temperature channel over a run's fast samples: running figures only, so a run costs the
 * same whatever its length; the p95 is read back from the stored fast samples at the end.
 */
struct heat {
	char *key;
	size_t n; // samples
	double sum;
	double max;
	int64_t max_ms;
	double last_v; // the previous sample, for the time above the trips
	int64_t last_ms;
	double trip_c[HEAT_TRIPS_MAX]; // the zone's passive trip points
	int64_t above_ms[HEAT_TRIPS_MAX];
	size_t n_trips;
};

/* A clock over a run's fast samples: the fallback when the kernel keeps no residency counter. */
struct freq {
	char *key;
	int64_t *hz, *ms; // time at each frequency seen, in first-seen order
	size_t n, cap_hz, cap_ms;
	int64_t last_hz, last_ms;
	bool seen;
};

/* Power samples integrated a chunk at a time, the last one carried into the next chunk. */
#define POWER_CHUNK 32

struct run {
	int64_t id;
	char *label;
	int64_t start_ms;
	int64_t pid;           // 0 = not watched
	uint64_t pid_start;    // the process's start time (/proc/PID/stat field 22), 0 = unknown
	int64_t start_mono_ms; // of this daemon's boot clock: a request_id is remembered 10 min
	char *request_id;      // or NULL
	struct heat *heat;
	size_t n_heat;
	struct freq *freq;
	size_t n_freq;
	struct counters_power_sample power[POWER_CHUNK]; // not integrated yet
	size_t n_power;
	double power_j, power_covered_s;     // the chunks integrated so far
	bool power_seen;                     // any pair integrated
	char *power_key;                     // the channel integrated
	double mem_avail_min, swap_used_max; // bytes, NAN = not seen
	size_t samples;
	int64_t first_sample_ms; // of this daemon's: a restart mid-run starts over (0 = none)
	bool simulated; // started by the loop itself (the demo's workload): logged at debug
};

/* A request from an HTTP thread, answered by the loop. */
enum job_kind { JOB_START, JOB_STOP, JOB_METRICS };
struct job {
	enum job_kind kind;
	struct runwire_start start; // strings owned
	int64_t id;
	struct runwire_stop stop; // its metrics borrowed from the waiting thread
	bool simulated; // from the loop's own thread (runsock_start/_stop): the demo's workload
	const struct runmetric_set *metrics; // JOB_METRICS: borrowed from the waiting thread
	// the answer
	bool taken, done; // the loop took it; answered
	int rc;
	int64_t new_id;
	struct buf out;
	char *err;
	struct job *next;
};

/* The request_id of a run that ended, for a start repeated by its caller. */
struct recent {
	char request_id[65];
	int64_t run_id;
	int64_t start_mono_ms;
};

/* A fast sample waiting for its batch. Its channels are the previous sample's when their keys
 * are the same (the usual case: one copy a batch, not one a sample), else a copy of its own. */
struct pending {
	int64_t ts_ms;
	struct channel *channels;
	bool owns_channels;
	struct reading *readings;
	size_t n;
};

struct runsock {
	const struct config *cfg;
	struct store *store;
	char *boot_id;
	int sysfs_fd;
	struct sampler *sampler; // the fast one, created with the first active run
	struct api_runs api;
	int efd;
	pthread_mutex_t lock;
	pthread_cond_t answered;
	struct job *queue; // under lock
	struct run **runs;
	size_t n_runs, cap_runs;
	int64_t next_sample_mono; // ms; 0 = now
	struct pending batch[RUNSOCK_BATCH];
	size_t n_batch;
	int64_t batch_mono;    // boot clock of the batch's first sample
	struct recent *recent; // request_ids of runs ended in the last RECENT_MS, oldest first
	size_t n_recent, cap_recent;
	char *auto_power; // the automatic power file (µW), relative to the sysfs root, or NULL
	bool auto_power_probed;
	struct steptime longest; // the last runsock_work()'s longest stage
	bool trim_due;           // a run started or ended: give its scratch pages back
	int64_t trim_at_mono;    // when (boot clock ms): after its answer is sent, or 0
};

/* runsock-fast.c */
void runsock_fast_sample(struct runsock *rs, int64_t now_ms, int64_t mono_ms);
void runsock_flush_batch(struct runsock *rs);
void runsock_power_fold(struct run *run, int64_t interval_ms, double upto_s);
/*
 * Adds @run's power sample of wall time @t_s (seconds) and @watts (NAN: a failed read, which
 * breaks the pair), folding a full chunk first. A sample not later than the last one is
 * dropped: the span up to the last one is integrated already.
 */
void runsock_power_add(struct run *run, int64_t interval_ms, double t_s, double watts);
/*
 * A clock's sample at @now_ms (wall, ms) added to @run's time at each frequency (left point: the
 * interval since the previous sample counts at the previous frequency). A sample not later than
 * the last one is dropped: its span would be counted twice.
 */
void runsock_freq_add(struct run *run, const char *key, int64_t hz, int64_t now_ms);

/* runsock-figures.c */
int runsock_run_end(struct runsock *rs, struct run *run, struct store_run_end *end,
		    struct buf *summary);
void runsock_run_remove(struct runsock *rs, size_t at);
void runsock_snapshot_json(const struct counters_snapshot *s, int64_t mono_ms, uint64_t pid_start,
			   struct buf *out);
bool runsock_snapshot_parse(const char *text, struct counters_snapshot *s, uint64_t *pid_start);
void runsock_start_snapshot(struct runsock *rs, int64_t id, struct counters_snapshot *s);

/* runsock-fingerprint.c */
void runsock_fingerprint_json(struct runsock *rs, const struct runwire_start *start,
			      struct buf *out);

#endif
