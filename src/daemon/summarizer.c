/* The runs' per-label summary on a thread of its own (summarizer.h). */
#include "summarizer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "log.h"
#include "runs.h"
#include "store.h"
#include "worker.h"
#include "xalloc.h"

struct summarizer {
	struct live *live;     // borrowed
	struct worker *worker; // runs summarize_asked() once per request
	pthread_mutex_t lock;
	// Under lock: what the loop asked for last.
	char *path;
	size_t max_labels;
	uint64_t generation;
	// The worker's own.
	struct store *store;
	char *opened; // the path store was opened at
	uint64_t opened_generation;
	bool warned; // a failed read was logged: the next ones go to debug
};

/* Opens the database again when the path or its generation moved, or the last read failed. */
static struct store *reader(struct summarizer *s, const char *path, uint64_t generation) {
	if (s->store && s->opened && strcmp(s->opened, path) == 0 &&
	    s->opened_generation == generation) {
		return s->store;
	}
	store_close(s->store);
	s->store = NULL;
	free(s->opened);
	s->opened = NULL;
	if (store_open(&s->store, path, STORE_MODE_READ) < 0) {
		return NULL; // logged by the store
	}
	s->opened = xstrdup(path);
	s->opened_generation = generation;
	return s->store;
}

static void summarize(struct summarizer *s, const char *path, size_t max_labels,
		      uint64_t generation) {
	struct store *store = reader(s, path, generation);
	struct runsummary_label *labels;
	size_t n;
	int rc = store ? runs_summary(store, max_labels, &labels, &n) : -EIO;
	if (rc < 0) {
		if (!s->warned) {
			log_warn("runs: the per-label summary of /metrics could not be read: it "
				 "shows the last one read");
		}
		s->warned = true;
		store_close(s->store); // opened again at the next request
		s->store = NULL;
		return;
	}
	s->warned = false;
	live_publish_runs(s->live, labels, n);
	runs_summary_free(labels, n);
	store_release_memory(store); // the pages read go back until the next request
}

/* The worker's job: the summary of what the loop asked for last. */
static void summarize_asked(void *arg) {
	struct summarizer *s = arg;
	pthread_mutex_lock(&s->lock);
	char *path = xstrdup(s->path);
	size_t max_labels = s->max_labels;
	uint64_t generation = s->generation;
	pthread_mutex_unlock(&s->lock);
	summarize(s, path, max_labels, generation);
	free(path);
}

struct summarizer *summarizer_create(struct live *live) {
	struct summarizer *s = xcalloc(1, sizeof(*s));
	s->live = live;
	pthread_mutex_init(&s->lock, NULL);
	s->worker = worker_start(summarize_asked, s);
	if (!s->worker) {
		log_errno("runs: could not start the summary's thread");
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

void summarizer_request(struct summarizer *s, const char *db_path, size_t max_labels,
			uint64_t generation) {
	pthread_mutex_lock(&s->lock);
	if (!s->path || strcmp(s->path, db_path) != 0) {
		free(s->path);
		s->path = xstrdup(db_path);
	}
	s->max_labels = max_labels;
	s->generation = generation;
	pthread_mutex_unlock(&s->lock);
	worker_wake(s->worker);
}

void summarizer_destroy(struct summarizer *s) {
	if (!s) {
		return;
	}
	worker_stop(s->worker); // after the summary under way, if one is
	store_close(s->store);
	free(s->opened);
	free(s->path);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
