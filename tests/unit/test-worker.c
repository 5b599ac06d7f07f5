/*
 * The thread that runs one job per wake: a wake runs it, wakes during a run are one run after
 * it, stopping waits for the run under way. The job is held on a gate the test opens, so each
 * check waits for a state, never for the clock.
 */
#include <pthread.h>
#include <stdbool.h>

#include "test.h"
#include "worker.h"

struct probe {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	int started, finished;
	int gate;               // runs may finish while finished < gate
	bool stopped;           // worker_stop() returned (set by the stopping thread)
	bool stopped_at_finish; // ... already when the last run finished
	struct worker *w;
};

static void job(void *arg) {
	struct probe *p = arg;
	pthread_mutex_lock(&p->lock);
	p->started++;
	pthread_cond_broadcast(&p->changed);
	while (p->finished >= p->gate) {
		pthread_cond_wait(&p->changed, &p->lock);
	}
	p->finished++;
	p->stopped_at_finish = p->stopped;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
}

/* Waits, holding the lock, until *@count reaches @n. */
static void wait_for(struct probe *p, const int *count, int n) {
	while (*count < n) {
		pthread_cond_wait(&p->changed, &p->lock);
	}
}

static void open_gate(struct probe *p, int gate) {
	p->gate = gate;
	pthread_cond_broadcast(&p->changed);
}

static void *stop_worker(void *arg) {
	struct probe *p = arg;
	worker_stop(p->w);
	pthread_mutex_lock(&p->lock);
	p->stopped = true;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int main(void) {
	struct probe p = {.gate = 1};
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	p.w = worker_start(job, &p);
	ok(p.w != NULL, "started");

	worker_wake(p.w);
	pthread_mutex_lock(&p.lock);
	wait_for(&p, &p.finished, 1);
	is_int(p.started, 1, "a wake runs the job once");

	// A run held at the gate; three wakes meanwhile.
	pthread_mutex_unlock(&p.lock);
	worker_wake(p.w);
	pthread_mutex_lock(&p.lock);
	wait_for(&p, &p.started, 2);
	pthread_mutex_unlock(&p.lock);
	for (int i = 0; i < 3; i++) {
		worker_wake(p.w);
	}
	pthread_mutex_lock(&p.lock);
	open_gate(&p, 2);
	wait_for(&p, &p.started, 3);
	is_int(p.finished, 2, "the held run ended, then one more began");
	open_gate(&p, 3);
	wait_for(&p, &p.finished, 3);
	pthread_mutex_unlock(&p.lock);

	// Stopping during a held run returns only after it.
	worker_wake(p.w);
	pthread_mutex_lock(&p.lock);
	wait_for(&p, &p.started, 4);
	pthread_mutex_unlock(&p.lock);
	pthread_t stopper;
	pthread_create(&stopper, NULL, stop_worker, &p);
	pthread_mutex_lock(&p.lock);
	open_gate(&p, 4);
	pthread_mutex_unlock(&p.lock);
	pthread_join(stopper, NULL);
	ok(p.finished == 4 && !p.stopped_at_finish, "stopping waits for the run under way");
	is_int(p.started, 4, "the three wakes during a run were one run after it");

	worker_stop(NULL);
	ok(true, "stopping NULL does nothing");
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.lock);
	return test_done();
}
