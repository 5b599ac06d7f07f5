/*
 * Runs on the daemon's side (runsock.h): HTTP threads hand run starts and stops to the loop
 * through a queue and an eventfd, so the loop's connection stays the only writer and the fast
 * sampler is read on one thread. Fast samples come from a sampler of their own, so the
 * minute sampler's rates (swap in/out) and hence the minute series never see them. This file
 * is the queue, the loop's answers, the runs' life and the socket; runsock-fast.c samples,
 * runsock-figures.c sums a run up at its end, runsock-fingerprint.c describes its machine.
 */
#include "runsock-internal.h"

/* --- runs ----------------------------------------------------------------------------------- */

static void run_free(struct run *r) {
	if (!r) {
		return;
	}
	free(r->label);
	free(r->request_id);
	for (size_t i = 0; i < r->n_heat; i++) {
		free(r->heat[i].key);
	}
	free(r->heat);
	for (size_t i = 0; i < r->n_freq; i++) {
		free(r->freq[i].key);
		free(r->freq[i].hz);
		free(r->freq[i].ms);
	}
	free(r->freq);
	free(r->power_key);
	free(r);
}

/* Frees a queued job: its copies of the request and what the loop answered. */
static void job_free(struct job *job) {
	buf_finish(&job->out);
	free(job->err);
	free((char *)job->start.label);
	free((char *)job->start.tags);
	free((char *)job->start.argv);
	free((char *)job->start.exe);
	free((char *)job->start.exe_sha256);
	free((char *)job->start.request_id);
	free((char *)job->stop.error);
	free(job);
}

/* --- the loop's answers ---------------------------------------------------------------------- */

/* Forgets the request_ids of runs started more than RECENT_MS ago. */
static void recent_prune(struct runsock *rs, int64_t mono_ms) {
	size_t old = 0;
	while (old < rs->n_recent && mono_ms - rs->recent[old].start_mono_ms >= RECENT_MS) {
		old++;
	}
	if (old > 0) { // memmove() must not be given the NULL of an empty list
		memmove(rs->recent, rs->recent + old, (rs->n_recent - old) * sizeof(*rs->recent));
	}
	rs->n_recent -= old;
	if (rs->n_recent == 0) {
		free(rs->recent);
		rs->recent = NULL;
		rs->cap_recent = 0;
	}
}

/* Remembers the request_id of @run, which ends now. */
static void recent_add(struct runsock *rs, const struct run *run, int64_t mono_ms) {
	if (!run->request_id || mono_ms - run->start_mono_ms >= RECENT_MS) {
		return;
	}
	if (rs->n_recent == RECENT_MAX) {
		memmove(rs->recent, rs->recent + 1, (rs->n_recent - 1) * sizeof(*rs->recent));
		rs->n_recent--;
	}
	rs->recent = xgrow(rs->recent, &rs->cap_recent, rs->n_recent + 1, sizeof(*rs->recent));
	struct recent *r = &rs->recent[rs->n_recent++];
	snprintf(r->request_id, sizeof(r->request_id), "%s", run->request_id);
	r->run_id = run->id;
	r->start_mono_ms = run->start_mono_ms;
}

/* The run started in the last RECENT_MS with @request_id, active or ended: its id, or 0. */
static int64_t recent_find(struct runsock *rs, const char *request_id, int64_t mono_ms) {
	for (size_t i = 0; i < rs->n_runs; i++) {
		const struct run *run = rs->runs[i];
		if (run->request_id && strcmp(run->request_id, request_id) == 0 &&
		    mono_ms - run->start_mono_ms < RECENT_MS) {
			return run->id;
		}
	}
	recent_prune(rs, mono_ms);
	for (size_t i = 0; i < rs->n_recent; i++) {
		if (strcmp(rs->recent[i].request_id, request_id) == 0) {
			return rs->recent[i].run_id;
		}
	}
	return 0;
}

static void do_start(struct runsock *rs, struct job *job, int64_t now_ms, int64_t mono_ms) {
	if (job->start.request_id) {
		int64_t id = recent_find(rs, job->start.request_id, mono_ms);
		if (id > 0) {
			log_info("runs: start %s repeated: run %" PRId64 " already has it",
				 job->start.request_id, id);
			job->new_id = id;
			job->rc = 0;
			return;
		}
	}
	if (rs->n_runs >= rs->cfg->runs.max_active) {
		job->rc = -EBUSY;
		job->err = xasprintf("%zu runs are active, as many as runs.max_active allows: "
				     "stop one first",
				     rs->n_runs);
		return;
	}
	struct run *run = xcalloc(1, sizeof(*run));
	run->label = xstrdup(job->start.label);
	run->start_ms = now_ms;
	run->start_mono_ms = mono_ms;
	run->request_id = job->start.request_id ? xstrdup(job->start.request_id) : NULL;
	run->pid = job->start.has_pid ? job->start.pid : 0;
	if (run->pid > 0 && pidstart_ticks(rs->cfg->procfs_root, run->pid, &run->pid_start) < 0) {
		run->pid_start = 0; // no procfs to tell: the pid alone is watched
	}
	run->mem_avail_min = NAN;
	run->swap_used_max = NAN;
	struct counters_snapshot start = {0};
	counters_snapshot_read(rs->sysfs_fd, &start);
	struct buf snap = {0}, fp = {0};
	runsock_snapshot_json(&start, mono_ms, run->pid_start, &snap);
	counters_snapshot_finish(&start); // stored: read back at the end
	runsock_fingerprint_json(rs, &job->start, &fp);
	struct store_run_new row = {.label = run->label,
				    .tags = job->start.tags,
				    .start_ms = now_ms,
				    .pid = run->pid,
				    .boot_id = rs->boot_id,
				    .start_snapshot = snap.data,
				    .fingerprint = fp.data};
	job->rc = rs->store ? store_run_begin(rs->store, &row, &run->id) : -EAGAIN;
	buf_finish(&snap);
	buf_finish(&fp);
	if (job->rc < 0) {
		job->err = xstrdup("the database did not accept the run; try again shortly");
		run_free(run);
		return;
	}
	job->new_id = run->id;
	rs->runs = xgrow(rs->runs, &rs->cap_runs, rs->n_runs + 1, sizeof(*rs->runs));
	rs->runs[rs->n_runs++] = run;
	// The demo's simulated runs, a few an hour, are nothing its user can act on: debug.
	run->simulated = job->simulated;
	log_write(run->simulated ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
		  "runs: run %" PRId64 " (%s) started, pid %" PRId64, run->id, run->label,
		  run->pid);
	runsock_fast_sample(rs, now_ms, mono_ms); // the run's first sample, at its start
	rs->trim_due = true;                      // its snapshot and fingerprint are freed
}

static void do_stop(struct runsock *rs, struct job *job, int64_t now_ms, int64_t mono_ms) {
	size_t at = rs->n_runs;
	for (size_t i = 0; i < rs->n_runs; i++) {
		if (rs->runs[i]->id == job->id) {
			at = i;
		}
	}
	if (at == rs->n_runs) {
		job->rc = -ENOENT;
		job->err = xasprintf("run %" PRId64 " is not running (unknown, or ended already)",
				     job->id);
		return;
	}
	runsock_fast_sample(rs, now_ms, mono_ms); // its last sample, at its end
	struct store_run_end end = {.end_ms = now_ms, .rss_max_bytes = job->stop.rss_max_bytes};
	end.has_exit_code = job->stop.has_exit_code;
	end.exit_code = job->stop.exit_code;
	end.has_signal = job->stop.has_signal;
	end.signal = job->stop.signal;
	end.error = job->stop.error;
	if (job->stop.has_status) {
		end.status = job->stop.status;
	} else if (job->stop.has_signal) {
		end.status = RUN_STATUS_SIGNALED;
	} else {
		end.status = job->stop.exit_code == 0 ? RUN_STATUS_OK : RUN_STATUS_FAILED;
	}
	struct run *run = rs->runs[at];
	size_t n_metrics = job->stop.metrics.n;
	struct store_run_metric *metrics = xcalloc(n_metrics + 1, sizeof(*metrics));
	int *metric_rc = xcalloc(n_metrics + 1, sizeof(*metric_rc));
	for (size_t i = 0; i < n_metrics; i++) {
		const struct runmetric *m = &job->stop.metrics.m[i];
		metrics[i] = (struct store_run_metric){
			.name = m->name, .value = m->value, .unit = m->unit};
	}
	end.metrics = metrics;
	end.n_metrics = n_metrics;
	end.metric_rc = metric_rc;
	job->rc = runsock_run_end(rs, run, &end, &job->out);
	for (size_t i = 0; job->rc == 0 && i < n_metrics; i++) {
		if (metric_rc[i] == -EDOM) { // the stop's reply leaves it out: the caller sees it
			log_warn("runs: run %" PRId64
				 ": metric '%s' not recorded: its unit '%s' is "
				 "not the one its name has",
				 run->id, metrics[i].name, metrics[i].unit);
		}
	}
	free(metric_rc);
	free(metrics);
	if (job->rc < 0) {
		job->err = xstrdup("the database did not accept the stop; try again shortly");
		return;
	}
	recent_add(rs, run, mono_ms);
	runsock_run_remove(rs, at);
	run_free(run);
}

/* Adds a run's metrics, all or none: a metric whose unit is not its name's refuses them all. */
static void do_metrics(struct runsock *rs, struct job *job) {
	const struct runmetric_set *set = job->metrics;
	if (!rs->store) {
		job->rc = -EAGAIN;
		job->err = xstrdup("the database is not open; try again shortly");
		return;
	}
	struct store_run_metric *m = xcalloc(set->n + 1, sizeof(*m));
	job->rc = 0;
	for (size_t i = 0; i < set->n && job->rc == 0; i++) {
		m[i] = (struct store_run_metric){
			.name = set->m[i].name, .value = set->m[i].value, .unit = set->m[i].unit};
		char *unit = NULL;
		job->rc = store_run_metric_unit(rs->store, m[i].name, &unit);
		if (job->rc == 0 && *unit && *m[i].unit && strcmp(unit, m[i].unit) != 0) {
			job->rc = -EDOM;
			job->err = xasprintf("metric '%s' is in '%s' in this database, not '%s': a "
					     "metric keeps one unit (give it in '%s', or none)",
					     m[i].name, unit, m[i].unit, unit);
		}
		free(unit);
	}
	if (job->rc == 0) {
		job->rc = store_run_metrics_put(rs->store, job->id, m, set->n, NULL);
		if (job->rc == -ENOENT) {
			job->err = xasprintf("no run %" PRId64, job->id);
		}
	}
	if (job->rc == 0 && runs_get_json(rs->store, job->id, &job->out) < 0) {
		buf_printf(&job->out, "{\"id\":%" PRId64 "}", job->id);
	}
	if (job->rc < 0 && !job->err) {
		job->err = xstrdup("the database did not accept the metrics; try again shortly");
	}
	free(m);
}

/* Closes as lost every watched run whose process is gone. */
static void watch_pids(struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	for (size_t i = 0; i < rs->n_runs;) {
		struct run *run = rs->runs[i];
		if (run->pid > 0 &&
		    !pidstart_alive(rs->cfg->procfs_root, run->pid, run->pid_start)) {
			struct store_run_end end = {
				.end_ms = now_ms, .status = RUN_STATUS_LOST, .rss_max_bytes = -1};
			log_notice("runs: process %" PRId64 " of run %" PRId64
				   " (%s) is gone without a stop: lost",
				   run->pid, run->id, run->label);
			if (runsock_run_end(rs, run, &end, NULL) == 0) {
				recent_add(rs, run, mono_ms);
				runsock_run_remove(rs, i);
				run_free(run);
				continue;
			}
		}
		i++;
	}
}

/*
 * A run's start and end build their rows and figures from scans (its samples, the channel list,
 * sysfs listings) and free them on the loop; the HTTP thread frees its answer once it is sent.
 * Their free pages go back TRIM_DELAY_MS after, not at the next cycle's trim: while other runs
 * stay active the pages lie among theirs, and a minute's interval would keep them resident for
 * a minute. The runs' array goes with the last run: many runs' small blocks leave the heap's top
 * pinned.
 */
static void give_back(struct runsock *rs) {
	rs->trim_due = false;
	rs->trim_at_mono = 0;
	if (rs->n_runs == 0) {
		free(rs->runs);
		rs->runs = NULL;
		rs->cap_runs = 0;
	}
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

void runsock_work(struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	uint64_t count;
	if (read(rs->efd, &count, sizeof(count)) < 0 && errno != EAGAIN) {
		log_errno("runs: could not read the eventfd");
	}
	rs->longest = (struct steptime){0};
	int64_t t = steptime_now_ms();
	for (;;) {
		// Taken under the lock: from here on its thread waits for the answer, however late.
		// A job whose thread gave up first left the queue with it, and never happens.
		pthread_mutex_lock(&rs->lock);
		struct job *job = rs->queue;
		if (job) {
			rs->queue = job->next;
			job->taken = true;
		}
		pthread_mutex_unlock(&rs->lock);
		if (!job) {
			break;
		}
		if (job->kind == JOB_START) {
			do_start(rs, job, now_ms, mono_ms);
			t = steptime_end(&rs->longest, "starting a run", t);
		} else if (job->kind == JOB_METRICS) {
			do_metrics(rs, job);
			t = steptime_end(&rs->longest, "recording a run's metrics", t);
		} else {
			do_stop(rs, job, now_ms, mono_ms);
			t = steptime_end(&rs->longest, "ending a run (its figures)", t);
		}
		pthread_mutex_lock(&rs->lock);
		job->done = true;
		pthread_cond_broadcast(&rs->answered);
		pthread_mutex_unlock(&rs->lock);
	}
	if (rs->n_runs > 0 && mono_ms >= rs->next_sample_mono) {
		runsock_fast_sample(rs, now_ms, mono_ms);
		t = steptime_end(&rs->longest, "reading a run's fast sample", t);
	}
	watch_pids(rs, now_ms, mono_ms);
	t = steptime_end(&rs->longest, "watching the runs' processes (a lost run's end)", t);
	if (rs->n_runs == 0 ||
	    (rs->n_batch > 0 && mono_ms - rs->batch_mono >= RUNSOCK_BATCH_MAX_MS)) {
		runsock_flush_batch(rs);
		t = steptime_end(&rs->longest, "writing the runs' fast samples", t);
	}
	if (rs->trim_due && !rs->trim_at_mono) {
		rs->trim_at_mono = mono_ms + TRIM_DELAY_MS;
	}
	if (rs->trim_at_mono && mono_ms >= rs->trim_at_mono) {
		give_back(rs);
		steptime_end(&rs->longest, "giving a run's pages back", t);
	}
}

struct steptime runsock_work_longest(const struct runsock *rs) {
	return rs->longest;
}

int runsock_start(struct runsock *rs, const struct runwire_start *start, int64_t now_ms,
		  int64_t mono_ms, int64_t *id) {
	struct job job = {.kind = JOB_START, .start = *start, .simulated = true};
	if (!job.start.tags) {
		job.start.tags = "{}";
	}
	do_start(rs, &job, now_ms, mono_ms);
	if (job.rc < 0) {
		log_warn("runs: %s could not start: %s", start->label, job.err);
	}
	*id = job.new_id;
	free(job.err);
	return job.rc;
}

int runsock_stop(struct runsock *rs, int64_t id, const struct runwire_stop *stop, int64_t now_ms,
		 int64_t mono_ms) {
	struct job job = {.kind = JOB_STOP, .id = id, .stop = *stop};
	do_stop(rs, &job, now_ms, mono_ms);
	if (job.rc < 0) {
		log_warn("runs: run %" PRId64 " could not stop: %s", id, job.err);
	}
	buf_finish(&job.out);
	free(job.err);
	return job.rc;
}

int runsock_timeout_ms(const struct runsock *rs, int64_t mono_ms) {
	if (!rs || (rs->n_runs == 0 && !rs->trim_at_mono)) {
		return -1;
	}
	int64_t left = rs->n_runs > 0 ? rs->next_sample_mono - mono_ms : INT64_MAX;
	if (rs->n_batch > 0 && rs->batch_mono + RUNSOCK_BATCH_MAX_MS - mono_ms < left) {
		left = rs->batch_mono + RUNSOCK_BATCH_MAX_MS - mono_ms;
	}
	if (rs->trim_at_mono && rs->trim_at_mono - mono_ms < left) {
		left = rs->trim_at_mono - mono_ms;
	}
	return left < 0 ? 0 : (int)left;
}

/* --- the HTTP threads' side ----------------------------------------------------------------- */

/* Queues @job for the loop and waits for its answer; false when the loop did not answer. */
static bool submit(struct runsock *rs, struct job *job) {
	pthread_mutex_lock(&rs->lock);
	struct job **tail = &rs->queue;
	while (*tail) {
		tail = &(*tail)->next;
	}
	*tail = job;
	pthread_mutex_unlock(&rs->lock);
	uint64_t one = 1;
	if (write(rs->efd, &one, sizeof(one)) < 0) {
		log_errno("runs: could not wake the loop");
	}
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&rs->lock);
	while (!job->done) {
		if (pthread_cond_timedwait(&rs->answered, &rs->lock, &deadline) != 0) {
			break;
		}
	}
	// Not taken yet: out of the queue, so it never happens (the caller hears 503 and nothing
	// is stored). Taken: the loop is at it, and its answer is the truth: wait for it.
	bool done = job->done;
	if (!done && !job->taken) {
		for (struct job **at = &rs->queue; *at; at = &(*at)->next) {
			if (*at == job) {
				*at = job->next;
				break;
			}
		}
	}
	while (!done && job->taken) {
		pthread_cond_wait(&rs->answered, &rs->lock);
		done = job->done;
	}
	pthread_mutex_unlock(&rs->lock);
	return done;
}

/*
 * Submits @job and frees it: its answer's rc, with its message in *err and its body appended to
 * @out; -EAGAIN with @busy when the loop did not take it.
 */
static int submit_answer(struct runsock *rs, struct job *job, const char *busy, struct buf *out,
			 char **err) {
	if (!submit(rs, job)) {
		*err = xstrdup(busy);
		job_free(job);
		return -EAGAIN;
	}
	int rc = job->rc;
	*err = job->err;
	job->err = NULL; // the caller's now
	buf_append(out, job->out.data ? job->out.data : "", job->out.len);
	job_free(job);
	return rc;
}

/* A job of @kind for the run @id (0 for a start), for submit() or submit_answer(). */
static struct job *job_new(enum job_kind kind, int64_t id) {
	struct job *job = xcalloc(1, sizeof(*job));
	job->kind = kind;
	job->id = id;
	return job;
}

static int api_start(void *ctx, const struct runwire_start *run, int64_t *id, char **err) {
	struct runsock *rs = ctx;
	struct job *job = job_new(JOB_START, 0);
	job->start = (struct runwire_start){
		.label = xstrdup(run->label),
		.tags = xstrdup(run->tags ? run->tags : "{}"),
		.has_pid = run->has_pid,
		.pid = run->pid,
		.argv = run->argv ? xstrdup(run->argv) : NULL,
		.exe = run->exe ? xstrdup(run->exe) : NULL,
		.exe_sha256 = run->exe_sha256 ? xstrdup(run->exe_sha256) : NULL,
		.request_id = run->request_id ? xstrdup(run->request_id) : NULL,
	};
	if (!submit(rs, job)) {
		*err = xstrdup("the daemon is busy: no run was started; try again");
		job_free(job);
		return -EAGAIN;
	}
	int rc = job->rc;
	*id = job->new_id;
	*err = job->err;
	job->err = NULL; // the caller's now
	job_free(job);
	return rc;
}

static int api_stop(void *ctx, int64_t id, const struct runwire_stop *stop, struct buf *out,
		    char **err) {
	struct runsock *rs = ctx;
	struct job *job = job_new(JOB_STOP, id);
	job->stop = *stop;
	job->stop.error = stop->error ? xstrdup(stop->error) : NULL; // the job's own copy
	return submit_answer(rs, job, "the daemon is busy: the run was not stopped; try again", out,
			     err);
}

static int api_metrics(void *ctx, int64_t id, const struct runmetric_set *metrics, struct buf *out,
		       char **err) {
	struct runsock *rs = ctx;
	struct job *job = job_new(JOB_METRICS, id);
	job->metrics = metrics; // this thread waits for the answer
	return submit_answer(
		rs, job, "the daemon is busy: the metrics were not recorded; try again", out, err);
}

/* --- life ------------------------------------------------------------------------------------ */

struct runsock *runsock_create(const struct config *cfg, struct store *store, const char *boot_id,
			       int64_t now_ms) {
	(void)now_ms;
	struct runsock *rs = xcalloc(1, sizeof(*rs));
	rs->cfg = cfg;
	rs->store = store;
	rs->boot_id = boot_id && *boot_id ? xstrdup(boot_id) : NULL;
	rs->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rs->sysfs_fd = open(cfg->sysfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pthread_mutex_init(&rs->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&rs->answered, &attr);
	pthread_condattr_destroy(&attr);
	rs->api = (struct api_runs){
		.start = api_start, .stop = api_stop, .metrics = api_metrics, .ctx = rs};
	if (rs->efd < 0 || rs->sysfs_fd < 0) {
		log_errno("runs: could not set up (sysfs root %s)", cfg->sysfs_root);
		runsock_destroy(rs);
		return NULL;
	}
	// Runs an earlier daemon left running stay open: their stops still land here.
	struct store_run_open *open_runs = NULL;
	size_t n = 0;
	if (store && store_runs_open_list(store, &open_runs, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			struct run *run = xcalloc(1, sizeof(*run));
			run->id = open_runs[i].id;
			run->label = xstrdup(open_runs[i].label);
			run->start_ms = open_runs[i].start_ms;
			run->pid = open_runs[i].pid;
			run->mem_avail_min = NAN;
			run->swap_used_max = NAN;
			struct counters_snapshot start = {0};
			runsock_snapshot_parse(open_runs[i].start_snapshot, &start,
					       &run->pid_start);
			counters_snapshot_finish(&start);
			rs->runs =
				xgrow(rs->runs, &rs->cap_runs, rs->n_runs + 1, sizeof(*rs->runs));
			rs->runs[rs->n_runs++] = run;
		}
		if (n > 0) {
			log_info("runs: %zu runs still running from before the restart", n);
		}
	}
	store_runs_open_free(open_runs, n);
	return rs;
}

void runsock_destroy(struct runsock *rs) {
	if (!rs) {
		return;
	}
	runsock_flush_batch(rs);
	for (size_t i = 0; i < rs->n_runs; i++) {
		run_free(rs->runs[i]); // still running in the database: the next daemon goes on
	}
	free(rs->runs);
	sampler_destroy(rs->sampler);
	// Jobs nobody will answer any more: their threads time out and free nothing of ours.
	pthread_mutex_lock(&rs->lock);
	for (struct job *job = rs->queue; job; job = job->next) {
		job->rc = -EAGAIN;
		job->done = true;
	}
	rs->queue = NULL;
	pthread_cond_broadcast(&rs->answered);
	pthread_mutex_unlock(&rs->lock);
	pthread_cond_destroy(&rs->answered);
	pthread_mutex_destroy(&rs->lock);
	if (rs->efd >= 0) {
		close(rs->efd);
	}
	if (rs->sysfs_fd >= 0) {
		close(rs->sysfs_fd);
	}
	free(rs->auto_power);
	free(rs->recent);
	free(rs->boot_id);
	free(rs);
}

void runsock_set_config(struct runsock *rs, const struct config *cfg) {
	rs->cfg = cfg;
	if (rs->sampler) {
		sampler_set_config(rs->sampler, cfg);
	}
}

void runsock_set_store(struct runsock *rs, struct store *store) {
	rs->store = store;
}

const struct api_runs *runsock_api(struct runsock *rs) {
	return &rs->api;
}

int runsock_fd(const struct runsock *rs) {
	return rs ? rs->efd : -1;
}

/* --- the socket ------------------------------------------------------------------------------ */

/*
 * Whether chown() could give a file of ours, now of group @gid, another group: with CAP_CHOWN,
 * or to our effective or a supplementary group other than @gid. Under the unit (User= and
 * Group=thermlog, no capabilities, chown() filtered) it cannot, so the socket already has the
 * only group it can have: naming the group would only load NSS modules (libnss_systemd and its
 * libraries, 0.35 MiB resident for the daemon's life when the group is not in /etc/group).
 */
static bool group_changeable(gid_t gid) {
	struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = {{0}};
	if (syscall(SYS_capget, &head, caps) < 0 || (caps[0].effective & (1u << CAP_CHOWN))) {
		return true;
	}
	if (getegid() != gid) {
		return true;
	}
	gid_t groups[64];
	int n = getgroups(64, groups);
	if (n < 0) {
		return true; // more than 64: one of them may be thermlog
	}
	for (int i = 0; i < n; i++) {
		if (groups[i] != gid) {
			return true;
		}
	}
	return false;
}

int runsock_listen(const struct config *cfg, bool private_dir) {
	const char *path = cfg->runs.socket;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		log_warn("runs.socket: no usable path: runs are not recorded");
		return -1;
	}
	strcpy(sa.sun_path, path);
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		// The unit's RuntimeDirectory makes it; by hand or in a test we do.
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			log_warn("runs: could not create %s: %s: runs are not recorded", dir,
				 strerror(errno));
			free(dir);
			return -1;
		}
	}
	free(dir);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		log_warn("runs: could not create a socket: %s: runs are not recorded",
			 strerror(errno));
		return -1;
	}
	// A socket file left by a daemon that died is stale: nothing listens on it any more.
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool alive = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		if (probe >= 0) {
			close(probe);
		}
		if (alive) {
			log_warn("runs: %s is in use by another daemon: runs are not recorded here",
				 path);
			close(fd);
			return -1;
		}
		unlink(path);
	}
	mode_t old = umask(0117); // srw-rw---- from the start, never wider
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(fd, 64) < 0) {
		log_warn("runs: could not listen on %s: %s: runs are not recorded", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	struct group *g = NULL;
	if (lstat(path, &st) == 0 && !group_changeable(st.st_gid)) {
		log_debug("runs: %s keeps the daemon's group (gid %u), the only one it can have",
			  path, (unsigned)st.st_gid);
	} else if (!(g = getgrnam("thermlog"))) {
		log_write(private_dir ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN,
			  "runs: no group 'thermlog': %s is for this user (and root) only", path);
	} else if (chown(path, (uid_t)-1, g->gr_gid) < 0) {
		log_warn("runs: could not give %s to group thermlog: %s", path, strerror(errno));
	}
	chmod(path, 0660);
	log_info("runs: listening on %s", path);
	return fd;
}
