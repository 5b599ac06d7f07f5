/*
 * The last cycle in memory: the sampling loop publishes deep copies under a mutex and the HTTP
 * thread takes deep copies out, so neither ever sees the other's buffers.
 */
#include "live.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct live {
	pthread_mutex_t lock;
	struct live_snapshot cur; // owned deep copy
	uint64_t version;         // channels_version of cur's channels; 0 = none promised
};

static char *dup_or_null(const char *s) {
	return s ? xstrdup(s) : NULL;
}

static void channels_free(struct channel *channels, size_t n) {
	for (size_t i = 0; i < n; i++) {
		channel_finish(&channels[i]);
	}
	free(channels);
}

static void capacitors_free(struct capstate *caps, size_t n) {
	for (size_t i = 0; i < n; i++) {
		// The strings are our own copies; the header keeps them const for readers.
		free((char *)caps[i].name);
		free((char *)caps[i].sensor);
	}
	free(caps);
}

static struct channel *channels_copy(const struct channel *src, size_t n) {
	if (n == 0) {
		return NULL;
	}
	struct channel *dst = xcalloc(n, sizeof(*dst));
	for (size_t i = 0; i < n; i++) {
		channel_copy(&dst[i], &src[i]);
	}
	return dst;
}

/* A copy of @n plain elements of @size bytes each (readings, throttle states); NULL when n is 0. */
static void *array_copy(const void *src, size_t n, size_t size) {
	if (n == 0) {
		return NULL;
	}
	void *dst = xcalloc(n, size);
	memcpy(dst, src, n * size);
	return dst;
}

static struct capstate *capacitors_copy(const struct capstate *src, size_t n) {
	if (n == 0) {
		return NULL;
	}
	struct capstate *dst = xcalloc(n, sizeof(*dst));
	for (size_t i = 0; i < n; i++) {
		dst[i] = src[i];
		dst[i].name = dup_or_null(src[i].name);
		dst[i].sensor = dup_or_null(src[i].sensor);
	}
	return dst;
}

struct live *live_create(void) {
	struct live *live = xcalloc(1, sizeof(*live));
	pthread_mutex_init(&live->lock, NULL);
	return live;
}

void live_destroy(struct live *live) {
	if (!live) {
		return;
	}
	live_snapshot_finish(&live->cur);
	pthread_mutex_destroy(&live->lock);
	free(live);
}

static bool str_same(const char *a, const char *b) {
	return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * True when @cycle has the channels already published (only this thread changes them): the
 * same nonzero channels_version promises it, else the descriptions are compared.
 */
static bool channels_same(const struct live *live, const struct cycle *cycle) {
	size_t n = cycle->n;
	if (n == 0 || live->cur.n != n || !live->cur.readings) {
		return false;
	}
	if (cycle->channels_version != 0 && cycle->channels_version == live->version) {
		return true;
	}
	const struct channel *src = cycle->channels;
	for (size_t i = 0; i < n; i++) {
		const struct channel *c = &live->cur.channels[i];
		if (c->kind != src[i].kind || c->resolution != src[i].resolution ||
		    !str_same(c->key, src[i].key) || !str_same(c->source, src[i].source) ||
		    !str_same(c->label, src[i].label) || !str_same(c->unit, src[i].unit) ||
		    !str_same(c->path, src[i].path) || !str_same(c->meta, src[i].meta)) {
			return false;
		}
	}
	return true;
}

void live_publish(struct live *live, const struct cycle *cycle, const struct live_health *health) {
	// The usual cycle has the channels of the last one: only the readings change, copied in
	// place under the lock, with no allocation.
	if (cycle && channels_same(live, cycle)) {
		live->version = cycle->channels_version;
		pthread_mutex_lock(&live->lock);
		memcpy(live->cur.readings, cycle->readings, cycle->n * sizeof(*cycle->readings));
		live->cur.ts = cycle->ts;
		if (health) {
			live->cur.health = *health;
		}
		pthread_mutex_unlock(&live->lock);
		return;
	}
	// Copy outside the lock so readers wait only for a pointer swap. A NULL cycle (one that
	// could not be stored) updates the health counters and keeps the last good values.
	struct channel *channels = NULL;
	struct reading *readings = NULL;
	if (cycle) {
		channels = channels_copy(cycle->channels, cycle->n);
		readings = array_copy(cycle->readings, cycle->n, sizeof(*readings));
	}

	struct channel *old_channels = NULL;
	size_t old_n = 0;
	struct reading *old_readings = NULL;
	pthread_mutex_lock(&live->lock);
	if (cycle) {
		old_channels = live->cur.channels;
		old_readings = live->cur.readings;
		old_n = live->cur.n;
		live->cur.channels = channels;
		live->cur.readings = readings;
		live->cur.n = cycle->n;
		live->cur.ts = cycle->ts;
		live->version = cycle->channels_version;
	}
	if (health) {
		live->cur.health = *health;
	}
	pthread_mutex_unlock(&live->lock);

	channels_free(old_channels, old_n);
	free(old_readings);
}

void live_publish_capacitors(struct live *live, const struct capstate *caps, size_t n) {
	struct capstate *copy = capacitors_copy(caps, n);
	pthread_mutex_lock(&live->lock);
	struct capstate *old = live->cur.capacitors;
	size_t old_n = live->cur.n_capacitors;
	live->cur.capacitors = copy;
	live->cur.n_capacitors = copy ? n : 0;
	pthread_mutex_unlock(&live->lock);
	capacitors_free(old, old_n);
}

static struct runsummary_label *run_labels_copy(const struct runsummary_label *src, size_t n) {
	if (n == 0) {
		return NULL;
	}
	struct runsummary_label *dst = xcalloc(n, sizeof(*dst));
	for (size_t i = 0; i < n; i++) {
		dst[i] = src[i];
		dst[i].label = xstrdup(src[i].label);
	}
	return dst;
}

static void run_labels_free(struct runsummary_label *labels, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(labels[i].label);
	}
	free(labels);
}

void live_publish_runs(struct live *live, const struct runsummary_label *labels, size_t n) {
	struct runsummary_label *copy = run_labels_copy(labels, n);
	pthread_mutex_lock(&live->lock);
	struct runsummary_label *old = live->cur.run_labels;
	size_t old_n = live->cur.n_run_labels;
	live->cur.run_labels = copy;
	live->cur.n_run_labels = copy ? n : 0;
	pthread_mutex_unlock(&live->lock);
	run_labels_free(old, old_n);
}

void live_publish_throttle(struct live *live, const struct throttle_domain_state *domains,
			   size_t n) {
	struct throttle_domain_state *copy = array_copy(domains, n, sizeof(*copy));
	pthread_mutex_lock(&live->lock);
	struct throttle_domain_state *old = live->cur.throttle;
	live->cur.throttle = copy;
	live->cur.n_throttle = copy ? n : 0;
	pthread_mutex_unlock(&live->lock);
	free(old);
}

void live_snapshot(struct live *live, struct live_snapshot *out) {
	pthread_mutex_lock(&live->lock);
	out->ts = live->cur.ts;
	out->n = live->cur.n;
	out->channels = channels_copy(live->cur.channels, live->cur.n);
	out->readings = array_copy(live->cur.readings, live->cur.n, sizeof(*out->readings));
	out->health = live->cur.health;
	out->n_capacitors = live->cur.n_capacitors;
	out->capacitors = capacitors_copy(live->cur.capacitors, live->cur.n_capacitors);
	out->n_run_labels = live->cur.n_run_labels;
	out->run_labels = run_labels_copy(live->cur.run_labels, live->cur.n_run_labels);
	out->n_throttle = live->cur.n_throttle;
	out->throttle =
		array_copy(live->cur.throttle, live->cur.n_throttle, sizeof(*out->throttle));
	pthread_mutex_unlock(&live->lock);
}

void live_snapshot_finish(struct live_snapshot *snap) {
	channels_free(snap->channels, snap->n);
	free(snap->readings);
	capacitors_free(snap->capacitors, snap->n_capacitors);
	run_labels_free(snap->run_labels, snap->n_run_labels);
	free(snap->throttle);
	*snap = (struct live_snapshot){0};
}
