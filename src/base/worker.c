/* A thread that runs one job per wake (worker.h). */
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "xalloc.h"

struct worker {
	worker_job_fn *job;
	void *arg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool due, stop; // under lock
};

static void *run(void *arg) {
	struct worker *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->due && !w->stop) {
			pthread_cond_wait(&w->wake, &w->lock);
		}
		if (w->stop) {
			break;
		}
		w->due = false;
		pthread_mutex_unlock(&w->lock);
		w->job(w->arg);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct worker *worker_start(worker_job_fn *job, void *arg) {
	struct worker *w = xcalloc(1, sizeof(*w));
	w->job = job;
	w->arg = arg;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	int rc = pthread_create(&w->thread, NULL, run, w);
	if (rc != 0) {
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		free(w);
		errno = rc;
		return NULL;
	}
	return w;
}

/* Sets @flag (due or stop) under the lock and wakes the thread to see it. */
static void tell(struct worker *w, bool *flag) {
	pthread_mutex_lock(&w->lock);
	*flag = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

void worker_wake(struct worker *w) {
	tell(w, &w->due);
}

void worker_stop(struct worker *w) {
	if (!w) {
		return;
	}
	tell(w, &w->stop);
	pthread_join(w->thread, NULL); // after the run under way, if one is
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
