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
#include "xalloc.h"

struct summarizer {
	struct live *live; // borrowed
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	// Under lock: what the loop asked for last.
	bool due, stop;
	char *path;
	size_t max_labels;
	uint64_t generation;
	// The thread's own.
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

static void *run(void *arg) {
	struct summarizer *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->due && !s->stop) {
			pthread_cond_wait(&s->wake, &s->lock);
		}
		if (s->stop) {
			break;
		}
		s->due = false;
		char *path = xstrdup(s->path);
		size_t max_labels = s->max_labels;
		uint64_t generation = s->generation;
		pthread_mutex_unlock(&s->lock);
		summarize(s, path, max_labels, generation);
		free(path);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct summarizer *summarizer_create(struct live *live) {
	struct summarizer *s = xcalloc(1, sizeof(*s));
	s->live = live;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	if (pthread_create(&s->thread, NULL, run, s) != 0) {
		log_errno("runs: could not start the summary's thread");
		pthread_cond_destroy(&s->wake);
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
	s->due = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

void summarizer_destroy(struct summarizer *s) {
	if (!s) {
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	store_close(s->store);
	free(s->opened);
	free(s->path);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
