/*
 * The sampler: asks every enabled source for its channels, applies the configuration (include,
 * exclude, overrides), and reads them all once per cycle through held file descriptors.
 */
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "source.h"
#include "xalloc.h"

/* The drivers, each defined in its own file and named here alone (source.h names none). */
extern const struct source_ops source_thermal; // zones and cooling devices
extern const struct source_ops source_cpufreq;
extern const struct source_ops source_devfreq;
extern const struct source_ops source_iio;
extern const struct source_ops source_hwmon;
extern const struct source_ops source_meminfo; // /proc/meminfo and /proc/vmstat
extern const struct source_ops source_load;    // /proc/stat, debugfs rknpu/rkrga, devfreq load

/* The driver table: one driver per source, discovered and read in enum source_id order. */
static const struct source_ops *const sources[SOURCE_COUNT] = {
	[SOURCE_THERMAL] = &source_thermal, [SOURCE_CPUFREQ] = &source_cpufreq,
	[SOURCE_DEVFREQ] = &source_devfreq, [SOURCE_IIO] = &source_iio,
	[SOURCE_HWMON] = &source_hwmon,     [SOURCE_MEMINFO] = &source_meminfo,
	[SOURCE_LOAD] = &source_load,
};
#define N_SOURCES SOURCE_COUNT

const struct source_ops *source_driver(enum source_id id) {
	return (unsigned)id < SOURCE_COUNT ? sources[id] : NULL;
}

struct sampler {
	struct source_ctx ctx;
	struct sensor_list list;
	struct reading *readings;
	size_t readings_cap;
	int64_t last_scan_s; // monotonic; INT64_MIN = not yet known
	bool rescan_due;     // a read reported a vanished object
	uint64_t version;    // sampler_channels_version()
};

/* A version no list of this process had: samplers may live in more than one thread. */
static uint64_t next_version(void) {
	static uint64_t last;
	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

uint64_t sampler_channels_version(const struct sampler *s) {
	return s->version;
}

int sampler_root_fd(const struct sampler *s) {
	return s->ctx.root_fd;
}

static ssize_t default_pread(int fd, void *buf, size_t len, off_t off) {
	return pread(fd, buf, len, off);
}

static int64_t default_clock(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Opens cfg->procfs_root into @ctx; a missing /proc only costs the meminfo channels. */
static void open_proc(struct source_ctx *ctx, const struct config *cfg) {
	ctx->proc_root = NULL;
	ctx->proc_fd = open(cfg->procfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = errno;
	if (ctx->proc_fd >= 0) {
		ctx->proc_root = realpath(cfg->procfs_root, NULL);
		err = errno;
		if (!ctx->proc_root) {
			close(ctx->proc_fd);
			ctx->proc_fd = -1;
		}
	}
	if (ctx->proc_fd < 0 &&
	    (cfg->sources[SOURCE_MEMINFO].enabled || cfg->sources[SOURCE_LOAD].enabled)) {
		log_warn("could not open procfs root %s: %s: no memory or CPU load channels",
			 cfg->procfs_root, strerror(err));
	}
}

static void close_proc(struct source_ctx *ctx) {
	if (ctx->proc_fd >= 0) {
		close(ctx->proc_fd);
	}
	free(ctx->proc_root);
	ctx->proc_fd = -1;
	ctx->proc_root = NULL;
}

/* Keeps only what the configuration wants and applies label and calibration overrides. */
static void apply_config(const struct config *cfg, struct sensor_list *list) {
	size_t kept = 0;
	for (size_t i = 0; i < list->n; i++) {
		struct channel *c = &list->channels[i];
		struct sensor *s = &list->sensors[i];
		if (!cfg->sources[s->config_id].enabled ||
		    !config_channel_wanted(cfg, s->config_id, c->key)) {
			sensor_finish(s);
			channel_finish(c);
			continue;
		}
		const struct channel_override *o = config_channel_override(cfg, c->key);
		if (o) {
			if (o->label) {
				free(c->label);
				c->label = xstrdup(o->label);
			}
			s->cal_gain = o->gain;
			s->cal_offset = o->offset;
		}
		list->channels[kept] = *c;
		list->sensors[kept] = *s;
		kept++;
	}
	list->n = kept;
}

/* Finds @key in @list from index @hint on (lists keep their order across scans), or -1. */
static ptrdiff_t find_key(const struct sensor_list *list, const char *key, size_t hint) {
	for (size_t k = 0; k < list->n; k++) {
		size_t i = (hint + k) % list->n;
		if (strcmp(list->channels[i].key, key) == 0) {
			return (ptrdiff_t)i;
		}
	}
	return -1;
}

void sampler_rescan(struct sampler *s) {
	struct sensor_list fresh = {0};
	for (size_t i = 0; i < N_SOURCES; i++) {
		if (s->ctx.cfg->sources[sources[i]->config_id].enabled) {
			sources[i]->discover(&s->ctx, &fresh);
		} else if (sources[i]->cleanup) {
			sources[i]->cleanup(&s->ctx);
		}
	}
	sensor_list_seal(&fresh);
	if (source_stop_pending()) {
		// SIGTERM came during discovery, which stopped early: the daemon stops next, and
		// no cycle reads a half-found list.
		log_debug("discovery stopped: a signal to stop is pending");
		sensor_list_finish(&fresh);
		s->rescan_due = true;
		return;
	}
	apply_config(s->ctx.cfg, &fresh);
	// Carry over open fds and error states, so a rescan neither reopens nor re-logs.
	for (size_t i = 0; i < fresh.n; i++) {
		ptrdiff_t j = find_key(&s->list, fresh.channels[i].key, i);
		if (j < 0) {
			log_debug("new channel %s (%s)", fresh.channels[i].key,
				  fresh.channels[i].path);
			continue;
		}
		struct sensor *old = &s->list.sensors[j], *new = &fresh.sensors[i];
		new->last_err = old->last_err;
		if (new->ops == old->ops &&new->ops->carry) {
			new->ops->carry(new, old); // a rescan must not cost a rate its history
		}
		if (strcmp(s->list.channels[j].path, fresh.channels[i].path) == 0) {
			new->fd = old->fd;
			old->fd = -1;
		}
	}
	for (size_t i = 0; i < s->list.n; i++) {
		if (find_key(&fresh, s->list.channels[i].key, i) < 0) {
			log_info("channel %s is gone", s->list.channels[i].key);
		}
	}
	sensor_list_finish(&s->list);
	s->list = fresh;
	s->readings = xgrow(s->readings, &s->readings_cap, s->list.n + 1, sizeof(*s->readings));
	s->rescan_due = false;
	s->version = next_version();
}

struct sampler *sampler_create(const struct config *cfg) {
	int fd = open(cfg->sysfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		log_errno("could not open sysfs root %s", cfg->sysfs_root);
		return NULL;
	}
	struct sampler *s = xcalloc(1, sizeof(*s));
	s->ctx = (struct source_ctx){
		.root_fd = fd, .cfg = cfg, .pread = default_pread, .clock = default_clock};
	open_proc(&s->ctx, cfg);
	s->last_scan_s = INT64_MIN;
	sampler_rescan(s);
	size_t n_sysfs = 0;
	for (size_t i = 0; i < s->list.n; i++) {
		// /proc is always there; the load source's sysfs files come with devfreq's
		n_sysfs += s->list.sensors[i].ops != &source_meminfo &&
			   s->list.sensors[i].ops != &source_load;
	}
	if (n_sysfs == 0 && !source_stop_pending()) {
		// Said once at start, here, so `thermlog sample` and thermlogd both say it.
		log_warn("no channels found under %s (thermal zones, cpufreq, devfreq, IIO and "
			 "hwmon searched): check sysfs_root in the configuration (or "
			 "--sysfs-root) and the enabled sources",
			 cfg->sysfs_root);
	}
	return s;
}

void sampler_destroy(struct sampler *s) {
	if (!s) {
		return;
	}
	sensor_list_finish(&s->list);
	for (size_t i = 0; i < N_SOURCES; i++) {
		if (sources[i]->cleanup) {
			sources[i]->cleanup(&s->ctx);
		}
	}
	for (size_t id = 0; id < SOURCE_COUNT; id++) {
		source_ctx_priv_free(&s->ctx, (enum source_id)id);
	}
	close(s->ctx.root_fd);
	close_proc(&s->ctx);
	free(s->readings);
	free(s);
}

void sampler_set_config(struct sampler *s, const struct config *cfg) {
	if (strcmp(cfg->sysfs_root, s->ctx.cfg->sysfs_root) != 0) {
		int fd = open(cfg->sysfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			log_errno("could not open sysfs root %s, keeping %s", cfg->sysfs_root,
				  s->ctx.cfg->sysfs_root);
		} else {
			// Held fds belong to the old root: drop them all.
			sensor_list_finish(&s->list);
			close(s->ctx.root_fd);
			s->ctx.root_fd = fd;
		}
	}
	if (strcmp(cfg->procfs_root, s->ctx.cfg->procfs_root) != 0) {
		close_proc(&s->ctx); // held meminfo fds are dropped by the rescan's path change
		open_proc(&s->ctx, cfg);
	}
	s->ctx.cfg = cfg;
	sampler_rescan(s);
}

void sampler_set_pread(struct sampler *s, source_pread_fn fn) {
	s->ctx.pread = fn ? fn : default_pread;
}

void sampler_set_clock(struct sampler *s, source_clock_fn fn) {
	s->ctx.clock = fn ? fn : default_clock;
}

static bool vanished(int err) {
	return err == -ENOENT || err == -ENODEV;
}

/* Logs a channel's error only when it changes: a failing sensor must not fill the journal. */
static void log_transition(const struct channel *c, struct sensor *s, int err, double value) {
	if (err == s->last_err) {
		return;
	}
	if (s->rate && (err == -EAGAIN || (err == 0 && s->last_err == -EAGAIN))) {
		// A rate's first read has no value yet: expected, not a failure.
		log_debug("%s: %s", c->key, err ? "no rate until the next read" : "rate known");
	} else if (err == 0) {
		log_info("%s readable again: %s", c->key, c->path);
	} else if (err == -ERANGE && isfinite(value)) {
		log_warn(
			"implausible reading from %s: %g %s for a %s channel (%s): stored and shown "
			"as an error",
			c->path, value, c->unit, channel_kind_name(c->kind), c->key);
	} else if (s->err_said && err != 0) {
		log_debug("%s: %s", c->key, s->why ? s->why : strerror(-err)); // said by its source
	} else if (vanished(err) && (!s->absent_err || s->expect_absent)) {
		log_debug("could not read %s: %s", c->path, strerror(-err)); // expected on unplug
	} else if (err == -EBADMSG && s->why) {
		log_warn("could not read %s: %s (%s)", c->path, s->why, c->key);
	} else {
		log_warn("could not read %s: %s", c->path, strerror(-err));
	}
	s->last_err = err;
}

size_t sampler_read(struct sampler *s, int64_t mono_s, const struct channel **channels,
		    const struct reading **readings) {
	if (s->last_scan_s == INT64_MIN) {
		s->last_scan_s = mono_s; // created just now
	} else if (s->rescan_due || mono_s - s->last_scan_s >= s->ctx.cfg->rescan_s) {
		sampler_rescan(s);
		s->last_scan_s = mono_s;
	}
	s->ctx.pass++;
	for (size_t i = 0; i < s->list.n; i++) {
		struct sensor *sen = &s->list.sensors[i];
		double v = NAN; // a failed read has no value: its -ERANGE is not a plausibility one
		int err = sen->ops->read(&s->ctx, sen, &v);
		if (err == 0) {
			v = v * sen->cal_gain + sen->cal_offset;
			// One check for every consumer: live, /metrics and the store agree.
			if (!channel_plausible(&s->list.channels[i], v)) {
				err = -ERANGE;
			}
		} else if (vanished(err) && !sen->absent_err && !sen->expect_absent) {
			s->rescan_due = true;
		}
		s->readings[i] = (struct reading){
			.value = err ? NAN : v, .err = err, .pending = sen->rate && err == -EAGAIN};
		log_transition(&s->list.channels[i], sen, err, v);
	}
	*channels = s->list.channels;
	*readings = s->readings;
	return s->list.n;
}

static bool reads_file(const struct channel *c, const char *path) {
	return c->path && strcmp(c->path, path) == 0;
}

bool sampler_file_int(const struct sampler *s, const char *path, size_t *hint, int64_t *raw) {
	size_t i = *hint;
	if (i >= s->list.n || !reads_file(&s->list.channels[i], path)) {
		for (i = 0; i < s->list.n && !reads_file(&s->list.channels[i], path); i++) {
		}
		if (i == s->list.n) {
			return false;
		}
		*hint = i;
	}
	const struct sensor *sen = &s->list.sensors[i];
	if (s->ctx.pass == 0 || sen->raw_pass != s->ctx.pass) {
		return false; // not read in the last pass, or its read failed
	}
	*raw = sen->raw;
	return true;
}
