/*
 * Runs on the daemon's side (runsock.h): HTTP threads hand run starts and stops to the loop
 * through a queue and an eventfd, so the loop's connection stays the only writer and the fast
 * sampler is read on one thread. Fast samples come from a sampler of their own, so the
 * minute sampler's rates (swap in/out) and hence the minute series never see them.
 */
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
#include "runs.h"
#include "runstats.h"
#include "sampler.h"
#include "source.h"
#include "stats.h"
#include "store.h"
#include "timefmt.h"
#include "xalloc.h"

#define WAIT_MS      10000            // an HTTP request waits this long for the loop, then 503
#define RECENT_MS    (10 * 60 * 1000) // a start's request_id is remembered this long
#define RECENT_MAX   1024             // ended runs' request_ids remembered at most
#define FILE_MAX     65536            // a counter file (the kernel's limit is a page)
#define ENERGY_MAX_S 2.5 // power samples further apart than this many intervals are a gap

/* --- counters at a run's boundaries --------------------------------------------------------- */

enum snap_kind { SNAP_CPUFREQ, SNAP_DEVFREQ, SNAP_COOLING, SNAP_ENERGY };
static const char *const snap_kind_names[] = {"cpufreq", "devfreq", "cooling", "energy"};

/* One counter file's text as read at one moment; parsed only when differenced. */
struct snap_file {
	enum snap_kind kind;
	char *key;  // "cpufreq/policy4", "devfreq/fdab0000.npu", "cooling/pwm-fan",
		    // "hwmon/ina238/energy1"
	char *path; // relative to the sysfs root
	char *text;
};

struct snapshot {
	struct snap_file *files;
	size_t n, cap;
};

static void snapshot_finish(struct snapshot *s) {
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].key);
		free(s->files[i].path);
		free(s->files[i].text);
	}
	free(s->files);
	*s = (struct snapshot){0};
}

/* The whole small file @path under @root_fd, or NULL. */
static char *read_text(int root_fd, const char *path) {
	int fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return NULL;
	}
	struct buf b = {0};
	char chunk[4096];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 && b.len < FILE_MAX) {
		buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	if (n < 0) {
		buf_finish(&b);
		return NULL;
	}
	buf_putc(&b, '\0');
	return buf_steal(&b);
}

static void snapshot_add(struct snapshot *s, enum snap_kind kind, char *key, char *path,
			 char *text) {
	s->files = xgrow(s->files, &s->cap, s->n + 1, sizeof(*s->files));
	s->files[s->n++] = (struct snap_file){.kind = kind, .key = key, .path = path, .text = text};
}

/* Calls @fn for the entries of @dir under @root_fd whose names start with @prefix, sorted. */
static size_t list_dir(int root_fd, const char *dir, const char *prefix, char ***out) {
	*out = NULL;
	int fd = openat(root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0) {
			close(fd);
		}
		return 0;
	}
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && e->d_name[0] != '.') {
			*out = xgrow(*out, &cap, n + 1, sizeof(**out));
			(*out)[n++] = xstrdup(e->d_name);
		}
	}
	closedir(d);
	for (size_t i = 1; i < n; i++) { // few entries: insertion sort
		for (size_t j = i; j > 0 && strcmp((*out)[j - 1], (*out)[j]) > 0; j--) {
			char *t = (*out)[j];
			(*out)[j] = (*out)[j - 1];
			(*out)[j - 1] = t;
		}
	}
	return n;
}

static void free_names(char **names, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
	}
	free(names);
}

static void trim(char *s) {
	size_t len = strlen(s);
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ')) {
		s[--len] = '\0';
	}
}

/* Reads every residency and energy counter the kernel offers under @root_fd. */
static void snapshot_read(int root_fd, struct snapshot *s) {
	char **names;
	size_t n = list_dir(root_fd, "devices/system/cpu/cpufreq", "policy", &names);
	for (size_t i = 0; i < n; i++) {
		char *path =
			xasprintf("devices/system/cpu/cpufreq/%s/stats/time_in_state", names[i]);
		char *text = read_text(root_fd, path);
		if (text) {
			snapshot_add(s, SNAP_CPUFREQ, xasprintf("cpufreq/%s", names[i]), path,
				     text);
		} else {
			free(path);
		}
	}
	free_names(names, n);
	n = list_dir(root_fd, "class/devfreq", "", &names);
	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("class/devfreq/%s/trans_stat", names[i]);
		char *text = read_text(root_fd, path);
		if (text) {
			snapshot_add(s, SNAP_DEVFREQ, xasprintf("devfreq/%s", names[i]), path,
				     text);
		} else {
			free(path);
		}
	}
	free_names(names, n);
	n = list_dir(root_fd, "class/thermal", "cooling_device", &names);
	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("class/thermal/%s/stats/time_in_state_ms", names[i]);
		char *type_path = xasprintf("class/thermal/%s/type", names[i]);
		char *type = read_text(root_fd, type_path);
		char *text = read_text(root_fd, path);
		if (type) {
			trim(type);
		}
		if (text) {
			snapshot_add(s, SNAP_COOLING,
				     xasprintf("cooling/%s#%s", type ? type : "", names[i] + 14),
				     path, text);
		} else {
			free(path);
		}
		free(type);
		free(type_path);
	}
	free_names(names, n);
	n = list_dir(root_fd, "class/hwmon", "hwmon", &names);
	for (size_t i = 0; i < n; i++) {
		char *name_path = xasprintf("class/hwmon/%s/name", names[i]);
		char *chip = read_text(root_fd, name_path);
		free(name_path);
		if (chip) {
			trim(chip);
		}
		char *dir = xasprintf("class/hwmon/%s", names[i]);
		char **files;
		size_t m = list_dir(root_fd, dir, "energy", &files);
		for (size_t k = 0; k < m; k++) {
			size_t len = strlen(files[k]);
			if (len < 7 || strcmp(files[k] + len - 6, "_input") != 0) {
				continue;
			}
			char *path = xasprintf("%s/%s", dir, files[k]);
			char *text = read_text(root_fd, path);
			if (text) {
				trim(text);
				files[k][len - 6] = '\0';
				snapshot_add(
					s, SNAP_ENERGY,
					xasprintf("hwmon/%s/%s", chip ? chip : names[i], files[k]),
					path, text);
			} else {
				free(path);
			}
		}
		free_names(files, m);
		free(dir);
		free(chip);
	}
	free_names(names, n);
}

static void snapshot_json(const struct snapshot *s, int64_t mono_ms, uint64_t pid_start,
			  struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	json_key(&j, "mono_ms");
	json_int(&j, mono_ms);
	if (pid_start > 0 && pid_start <= INT64_MAX) {
		json_key(&j, "pid_start"); // the watched process's start time, for a restart
		json_int(&j, (int64_t)pid_start);
	}
	json_key(&j, "counters");
	json_array_begin(&j);
	for (size_t i = 0; i < s->n; i++) {
		json_object_begin(&j);
		json_key(&j, "kind");
		json_string(&j, snap_kind_names[s->files[i].kind]);
		json_key(&j, "key");
		json_string(&j, s->files[i].key);
		json_key(&j, "path");
		json_string(&j, s->files[i].path);
		json_key(&j, "text");
		json_string(&j, s->files[i].text);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
}

/*
 * Reads back a start snapshot stored as JSON (a run left running by an earlier daemon), and the
 * watched process's start time in it (@pid_start may be NULL).
 */
static bool snapshot_parse(const char *text, struct snapshot *s, uint64_t *pid_start) {
	struct jsonread_error err;
	size_t len = text ? strlen(text) : 0;
	struct jsonread_node *root = text ? jsonread_parse(text, len, len, &err) : NULL;
	const struct jsonread_node *ps = jsonread_get(root, "pid_start");
	if (pid_start && ps && ps->kind == JSONREAD_NUMBER && ps->number > 0) {
		*pid_start = (uint64_t)ps->number;
	}
	const struct jsonread_node *list = jsonread_get(root, "counters");
	for (size_t i = 0; list && list->kind == JSONREAD_ARRAY && i < list->n; i++) {
		const char *kind = jsonread_string(jsonread_get(list->items[i], "kind"));
		const char *key = jsonread_string(jsonread_get(list->items[i], "key"));
		const char *path = jsonread_string(jsonread_get(list->items[i], "path"));
		const char *t = jsonread_string(jsonread_get(list->items[i], "text"));
		if (!kind || !key || !path || !t) {
			continue;
		}
		for (int k = 0; k <= SNAP_ENERGY; k++) {
			if (strcmp(kind, snap_kind_names[k]) == 0) {
				snapshot_add(s, (enum snap_kind)k, xstrdup(key), xstrdup(path),
					     xstrdup(t));
			}
		}
	}
	bool good = root != NULL;
	jsonread_node_free(root);
	return good;
}

/* --- runs ----------------------------------------------------------------------------------- */

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

/* The passive trip points from a thermal channel's meta ({"trips": [{"type", "temp"}]}). */
static void heat_trips(struct heat *h, const char *meta) {
	struct jsonread_error err;
	size_t len = meta ? strlen(meta) : 0;
	struct jsonread_node *root = meta ? jsonread_parse(meta, len, len, &err) : NULL;
	const struct jsonread_node *trips = jsonread_get(root, "trips");
	for (size_t i = 0;
	     trips && trips->kind == JSONREAD_ARRAY && i < trips->n && h->n_trips < HEAT_TRIPS_MAX;
	     i++) {
		const char *type = jsonread_string(jsonread_get(trips->items[i], "type"));
		const struct jsonread_node *temp = jsonread_get(trips->items[i], "temp");
		if (type && temp && temp->kind == JSONREAD_NUMBER && strcmp(type, "passive") == 0) {
			h->trip_c[h->n_trips++] = temp->number;
		}
	}
	jsonread_node_free(root);
}

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
};

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

/* A request from an HTTP thread, answered by the loop. */
enum job_kind { JOB_START, JOB_STOP };
struct job {
	enum job_kind kind;
	struct api_run_start start; // strings owned
	int64_t id;
	struct api_run_stop stop;
	// the answer
	bool taken, done; // the loop took it; answered
	int rc;
	int64_t new_id;
	struct buf out;
	char *err;
	struct job *next;
};

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

/* The request_id of a run that ended, for a start repeated by its caller. */
struct recent {
	char request_id[65];
	int64_t run_id;
	int64_t start_mono_ms;
};

/* The fast samples not written yet. */
struct pending {
	int64_t ts_ms;
	struct channel *channels;
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
	bool trim_due; // a run ended: give the heap back once none is active
};

static void flush_batch(struct runsock *rs) {
	if (rs->n_batch == 0) {
		return;
	}
	struct store_run_instant samples[RUNSOCK_BATCH];
	for (size_t i = 0; i < rs->n_batch; i++) {
		samples[i] = (struct store_run_instant){.ts_ms = rs->batch[i].ts_ms,
							.n = rs->batch[i].n,
							.channels = rs->batch[i].channels,
							.readings = rs->batch[i].readings};
	}
	if (rs->store && store_run_samples_put(rs->store, samples, rs->n_batch) < 0) {
		log_warn("runs: %zu fast samples were not stored", rs->n_batch);
	}
	for (size_t i = 0; i < rs->n_batch; i++) {
		for (size_t k = 0; k < rs->batch[i].n; k++) {
			channel_finish(&rs->batch[i].channels[k]);
		}
		free(rs->batch[i].channels);
		free(rs->batch[i].readings);
	}
	rs->n_batch = 0;
}

/* The automatic board power: the first power*_input of an ina2xx-style hwmon chip. */
static const char *auto_power_path(struct runsock *rs) {
	if (rs->auto_power_probed) {
		return rs->auto_power;
	}
	rs->auto_power_probed = true;
	char **names;
	size_t n = list_dir(rs->sysfs_fd, "class/hwmon", "hwmon", &names);
	for (size_t i = 0; i < n && !rs->auto_power; i++) {
		char *name_path = xasprintf("class/hwmon/%s/name", names[i]);
		char *chip = read_text(rs->sysfs_fd, name_path);
		free(name_path);
		if (chip && strncmp(chip, "ina", 3) == 0) {
			char *path = xasprintf("class/hwmon/%s/power1_input", names[i]);
			if (faccessat(rs->sysfs_fd, path, R_OK, 0) == 0) {
				rs->auto_power = path;
			} else {
				free(path);
			}
		}
		free(chip);
	}
	free_names(names, n);
	return rs->auto_power;
}

/* Board power now in watts, and the channel it came from; NAN when unknown. */
static double power_now(struct runsock *rs, const struct channel *ch, const struct reading *rd,
			size_t n, const char **key) {
	const char *want = rs->cfg->runs.power_channel;
	if (want) {
		*key = want;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(ch[i].key, want) == 0 && rd[i].err == 0) {
				return rd[i].value;
			}
		}
		return NAN;
	}
	const char *path = auto_power_path(rs);
	*key = path;
	char *text = path ? read_text(rs->sysfs_fd, path) : NULL;
	double w = NAN;
	if (text) {
		char *end;
		long long uw = strtoll(text, &end, 10);
		if (end != text) {
			w = counters_power_hwmon_w(uw);
		}
	}
	free(text);
	return w;
}

/* Left point: the interval since the previous sample counts at the previous frequency. */
static void freq_add(struct run *run, const char *key, int64_t hz, int64_t now_ms) {
	struct freq *f = NULL;
	for (size_t k = 0; k < run->n_freq && !f; k++) {
		f = strcmp(run->freq[k].key, key) == 0 ? &run->freq[k] : NULL;
	}
	if (!f) {
		run->freq = xrealloc(run->freq, (run->n_freq + 1) * sizeof(*run->freq));
		f = &run->freq[run->n_freq++];
		*f = (struct freq){.key = xstrdup(key)};
	}
	if (f->seen && now_ms > f->last_ms) {
		size_t at = 0;
		while (at < f->n && f->hz[at] != f->last_hz) {
			at++;
		}
		if (at == f->n) {
			f->hz = xgrow(f->hz, &f->cap_hz, f->n + 1, sizeof(*f->hz));
			f->ms = xgrow(f->ms, &f->cap_ms, f->n + 1, sizeof(*f->ms));
			f->hz[at] = f->last_hz;
			f->ms[at] = 0;
			f->n++;
		}
		f->ms[at] += now_ms - f->last_ms;
	}
	f->seen = true;
	f->last_hz = hz;
	f->last_ms = now_ms;
}

/*
 * Integrates the power samples held (over the run from its start on: they are all inside it)
 * and keeps the last, which pairs with the next sample: the chunks add up to the whole.
 */
static void power_fold(struct run *run, int64_t interval_ms, double upto_s) {
	struct counters_integral in;
	if (run->n_power > 1 &&
	    counters_integrate_power(run->power, run->n_power, (double)run->start_ms / 1000, upto_s,
				     ENERGY_MAX_S * (double)interval_ms / 1000, &in) == 0) {
		run->power_j += in.joules;
		run->power_covered_s += in.covered_s;
		run->power_seen = true;
	}
	if (run->n_power > 0) {
		run->power[0] = run->power[run->n_power - 1];
		run->n_power = 1;
	}
}

/* One fast sample: stored (in the next batch) and added to every active run. */
static void fast_sample(struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	if (!rs->sampler) {
		rs->sampler = sampler_create(rs->cfg);
		if (!rs->sampler) {
			return;
		}
	}
	const struct channel *ch;
	const struct reading *rd;
	size_t n = sampler_read(rs->sampler, mono_ms / 1000, &ch, &rd);
	if (rs->n_batch > 0 && rs->batch[rs->n_batch - 1].ts_ms >= now_ms) {
		return; // the same instant (a start right after a sample)
	}
	struct pending *p = &rs->batch[rs->n_batch++];
	p->ts_ms = now_ms;
	p->n = n;
	p->channels = xcalloc(n ? n : 1, sizeof(*p->channels));
	p->readings = xcalloc(n ? n : 1, sizeof(*p->readings));
	for (size_t i = 0; i < n; i++) {
		channel_copy(&p->channels[i], &ch[i]);
		p->readings[i] = rd[i];
	}
	const char *power_key = NULL;
	double watts = power_now(rs, ch, rd, n, &power_key);
	for (size_t r = 0; r < rs->n_runs; r++) {
		struct run *run = rs->runs[r];
		run->samples++;
		if (run->first_sample_ms == 0) {
			run->first_sample_ms = now_ms;
		}
		for (size_t i = 0; i < n; i++) {
			if (rd[i].err != 0) {
				continue;
			}
			if (ch[i].kind == CHANNEL_KIND_TEMPERATURE) {
				struct heat *h = NULL;
				for (size_t k = 0; k < run->n_heat && !h; k++) {
					h = strcmp(run->heat[k].key, ch[i].key) == 0 ? &run->heat[k]
										     : NULL;
				}
				if (!h) {
					// Grown one at a time: a run holds no slack.
					run->heat = xrealloc(run->heat, (run->n_heat + 1) *
										sizeof(*run->heat));
					h = &run->heat[run->n_heat++];
					*h = (struct heat){.key = xstrdup(ch[i].key),
							   .max = -INFINITY};
					heat_trips(h, ch[i].meta);
				}
				// Time above a trip: each interval counts when it starts above
				// (left point of the fast samples).
				for (size_t k = 0; h->n > 0 && k < h->n_trips; k++) {
					if (h->last_v > h->trip_c[k]) {
						h->above_ms[k] += now_ms - h->last_ms;
					}
				}
				h->last_v = rd[i].value;
				h->last_ms = now_ms;
				h->n++;
				h->sum += rd[i].value;
				if (rd[i].value > h->max) {
					h->max = rd[i].value;
					h->max_ms = now_ms;
				}
			} else if (ch[i].kind == CHANNEL_KIND_FREQUENCY &&
				   (strcmp(ch[i].source, "cpufreq") == 0 ||
				    strcmp(ch[i].source, "devfreq") == 0)) {
				freq_add(run, ch[i].key, llround(rd[i].value), now_ms);
			} else if (strcmp(ch[i].key, "meminfo/available") == 0) {
				run->mem_avail_min =
					isnan(run->mem_avail_min) ||
							rd[i].value < run->mem_avail_min
						? rd[i].value
						: run->mem_avail_min;
			} else if (strcmp(ch[i].key, "meminfo/swap_used") == 0) {
				run->swap_used_max =
					isnan(run->swap_used_max) ||
							rd[i].value > run->swap_used_max
						? rd[i].value
						: run->swap_used_max;
			}
		}
		if (power_key) {
			if (!run->power_key) {
				run->power_key = xstrdup(power_key);
			}
			if (run->n_power == POWER_CHUNK) {
				power_fold(run, rs->cfg->runs.interval_ms,
					   run->power[POWER_CHUNK - 1].t_s);
			}
			// Wall time, like the run's bounds (ms since epoch, as seconds).
			run->power[run->n_power++] = (struct counters_power_sample){
				.t_s = (double)now_ms / 1000, .power_w = watts};
		}
	}
	rs->next_sample_mono = mono_ms + rs->cfg->runs.interval_ms;
	if (rs->n_batch == 1) {
		rs->batch_mono = mono_ms;
	}
	if (rs->n_batch == RUNSOCK_BATCH || mono_ms - rs->batch_mono >= RUNSOCK_BATCH_MAX_MS) {
		flush_batch(rs);
	}
}

/* --- figures at a run's end ---------------------------------------------------------------- */

static enum counters_format snap_format(enum snap_kind kind) {
	return kind == SNAP_CPUFREQ   ? COUNTERS_FORMAT_CPUFREQ
	       : kind == SNAP_DEVFREQ ? COUNTERS_FORMAT_DEVFREQ
				      : COUNTERS_FORMAT_COOLING;
}

static const struct snap_file *snap_find(const struct snapshot *s, const char *path) {
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->files[i].path, path) == 0) {
			return &s->files[i];
		}
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* @v to @digits decimal places, the double nearest that decimal (no float noise in the JSON). */
static double rounded(double v, int digits) {
	double step = pow(10, -digits);
	return isfinite(v) ? stats_value(llround(v / step), step) : v;
}

/* Energy: a counter's delta, else the integrated power, else none. */
struct energy {
	double joules, coverage;
	const char *method;
	char *channel;
};

static void energy_of(struct run *run, const struct snapshot *start, const struct snapshot *stop,
		      int64_t end_ms, int64_t interval_ms, struct energy *e) {
	*e = (struct energy){.joules = NAN, .coverage = NAN};
	for (size_t i = 0; i < start->n; i++) {
		const struct snap_file *a = &start->files[i];
		const struct snap_file *b =
			a->kind == SNAP_ENERGY ? snap_find(stop, a->path) : NULL;
		if (!b) {
			continue;
		}
		char *end_a, *end_b;
		unsigned long long ua = strtoull(a->text, &end_a, 10);
		unsigned long long ub = strtoull(b->text, &end_b, 10);
		if (end_a == a->text || end_b == b->text) {
			continue;
		}
		enum counters_energy_method m = counters_energy_delta(ua, ub, 0, &e->joules);
		e->method = m == COUNTERS_ENERGY_DELTA ? "counter" : "counter_reset";
		e->coverage = 1;
		e->channel = xstrdup(a->key);
		return;
	}
	power_fold(run, interval_ms, (double)end_ms / 1000);
	double span_s = (double)end_ms / 1000 - (double)run->start_ms / 1000; // as integrated
	if (run->power_seen && span_s > 0) {
		e->joules = run->power_j;
		e->coverage = run->power_covered_s / span_s;
		e->method = "power_trapezoid";
		e->channel = run->power_key ? xstrdup(run->power_key) : NULL;
	}
}

/* A clock's hardware maximum in Hz: cpufreq's cpuinfo_max_freq (kHz), or the highest of a devfreq
 * device's available_frequencies (Hz). 0 when the kernel says neither; *from names the file. */
static int64_t hw_max_hz(int root_fd, const char *key, const char **from) {
	int64_t top = 0;
	*from = NULL;
	if (strncmp(key, "cpufreq/", 8) == 0) {
		char *path = xasprintf("devices/system/cpu/cpufreq/%s/cpuinfo_max_freq", key + 8);
		int64_t khz;
		if (sysfs_read_int(root_fd, path, &khz) == 0 && khz > 0) {
			top = khz * 1000;
			*from = "cpuinfo_max_freq";
		}
		free(path);
	} else if (strncmp(key, "devfreq/", 8) == 0) {
		char *path = xasprintf("class/devfreq/%s/available_frequencies", key + 8);
		char *text = read_text(root_fd, path);
		for (char *p = text, *end; p && *p; p = end) {
			long long hz = strtoll(p, &end, 10);
			if (end == p) {
				break; // not a number: the list ends here
			}
			top = hz > top ? hz : top;
		}
		*from = top > 0 ? "available_frequencies" : NULL;
		free(text);
		free(path);
	}
	return top;
}

/* "max_hz" (and where it came from) and the share of @total_ms spent below it. */
static void below_max_json(struct json *j, int64_t max_hz, const char *from, int64_t below_ms,
			   int64_t total_ms) {
	json_key(j, "max_hz");
	json_int(j, max_hz);
	json_key(j, "max_hz_from");
	json_string(j, from);
	json_key(j, "below_max_share");
	json_double(j, total_ms > 0 ? (double)below_ms / (double)total_ms : NAN);
}

static void residency_json(struct json *j, int root_fd, const struct run *run,
			   const struct snapshot *start, const struct snapshot *stop) {
	json_key(j, "residency");
	json_object_begin(j);
	struct counters_residency *cool = NULL;
	size_t n_cool = 0;
	const char **counted = NULL; // keys answered by a kernel counter
	size_t n_counted = 0;
	for (size_t i = 0; i < start->n; i++) {
		const struct snap_file *a = &start->files[i];
		if (a->kind == SNAP_ENERGY) {
			continue;
		}
		const struct snap_file *b = snap_find(stop, a->path);
		struct counters_table ta = {0}, tb = {0};
		struct counters_residency res = {0};
		int rc = b ? counters_parse(snap_format(a->kind), a->text, &ta) : -ENOENT;
		rc = rc == 0 ? counters_parse(snap_format(a->kind), b->text, &tb) : rc;
		rc = rc == 0 ? counters_residency(&ta, &tb, &res) : rc;
		counters_table_finish(&ta);
		counters_table_finish(&tb);
		if (a->kind == SNAP_COOLING) {
			if (rc == 0) {
				cool = xrealloc(cool, (n_cool + 1) * sizeof(*cool));
				cool[n_cool++] = res;
			}
			continue;
		}
		if (rc != 0) {
			continue; // the fast samples stand in, below
		}
		counted = xrealloc(counted, (n_counted + 1) * sizeof(*counted));
		counted[n_counted++] = a->key;
		json_key(j, a->key);
		json_object_begin(j);
		json_key(j, "method");
		json_string(j, a->kind == SNAP_CPUFREQ ? "time_in_state" : "trans_stat");
		{
			json_key(j, "seconds");
			json_object_begin(j);
			for (size_t k = 0; k < res.n; k++) {
				char hz[32];
				snprintf(hz, sizeof(hz), "%" PRId64, res.levels[k].level);
				json_key(j, hz);
				json_fixed(j, (double)res.levels[k].time_ms / 1000, 3);
			}
			json_object_end(j);
			// Against the hardware's maximum, not the table's top: a clock held at
			// 300 MHz of 1 GHz all run long was below it all run long.
			const char *from;
			int64_t top = hw_max_hz(root_fd, a->key, &from);
			int64_t below = 0;
			for (size_t k = 0; top > 0 && k < res.n; k++) {
				below += res.levels[k].level < top ? res.levels[k].time_ms : 0;
			}
			below_max_json(j, top > 0 ? top : res.top_level, from ? from : "table",
				       top > 0 ? below : res.below_top_ms, res.total_ms);
		}
		json_object_end(j);
		counters_residency_finish(&res);
	}
	// No counter (no CONFIG_CPU_FREQ_STAT, "Not Supported.", a reset): the fast samples, each
	// interval at the frequency it started with, against the hardware maximum (the highest
	// frequency seen when the kernel tells none).
	for (size_t i = 0; i < run->n_freq; i++) {
		const struct freq *f = &run->freq[i];
		bool done = false;
		for (size_t k = 0; k < n_counted && !done; k++) {
			done = strcmp(counted[k], f->key) == 0;
		}
		if (done) {
			continue;
		}
		json_key(j, f->key);
		json_object_begin(j);
		json_key(j, "method");
		json_string(j, f->n > 0 ? "fast_samples" : "unavailable");
		int64_t seen = 0, total = 0, below = 0;
		for (size_t k = 0; k < f->n; k++) {
			seen = f->hz[k] > seen ? f->hz[k] : seen;
			total += f->ms[k];
		}
		const char *from;
		int64_t top = hw_max_hz(root_fd, f->key, &from);
		if (top <= 0) {
			top = seen;
			from = "highest seen";
		}
		json_key(j, "seconds");
		json_object_begin(j);
		for (size_t k = 0; k < f->n; k++) {
			char hz[32];
			snprintf(hz, sizeof(hz), "%" PRId64, f->hz[k]);
			json_key(j, hz);
			json_fixed(j, (double)f->ms[k] / 1000, 3);
			below += f->hz[k] < top ? f->ms[k] : 0;
		}
		json_object_end(j);
		json_key(j, "max_hz_seen");
		json_int(j, seen);
		below_max_json(j, top, from, below, total);
		json_object_end(j);
	}
	free(counted);
	json_object_end(j);
	json_key(j, "cooling");
	if (n_cool == 0) {
		json_null(j);
	} else {
		int64_t low, high;
		counters_cooling_any(cool, n_cool, &low, &high);
		json_object_begin(j);
		json_key(j, "method");
		json_string(j, "time_in_state_ms");
		json_key(j, "active_s_low");
		json_fixed(j, (double)low / 1000, 3);
		json_key(j, "active_s_high");
		json_fixed(j, (double)high / 1000, 3);
		json_object_end(j);
	}
	for (size_t i = 0; i < n_cool; i++) {
		counters_residency_finish(&cool[i]);
	}
	free(cool);
}

/* One heat channel's stored fast samples, for its p95. */
struct heat_values {
	int64_t channel_id; // -1 = not stored
	double resolution;
	double *v;
	size_t n, cap;
};

struct heat_scan {
	struct heat_values *hv;
	size_t n;
};

static int heat_collect(void *ctx, const struct store_run_sample *sample) {
	struct heat_scan *hs = ctx;
	for (size_t k = 0; k < hs->n; k++) {
		struct heat_values *h = &hs->hv[k];
		if (h->channel_id == sample->channel_id) {
			h->v = xgrow(h->v, &h->cap, h->n + 1, sizeof(*h->v));
			h->v[h->n++] = (double)sample->q * h->resolution;
		}
	}
	return 0;
}

/*
 * The type-7 p95 of each heat channel of @run over its stored fast samples from its first
 * sample of this daemon's to @end_ms: read back at the end, so an active run holds none of
 * them. p95[k] is NAN for a channel the store does not keep.
 */
static void heat_p95(struct runsock *rs, const struct run *run, int64_t end_ms, double *p95) {
	struct heat_scan hs = {.hv = xcalloc(run->n_heat ? run->n_heat : 1, sizeof(*hs.hv)),
			       .n = run->n_heat};
	struct store_channel *list = NULL;
	size_t n = 0;
	bool known =
		rs->store && run->first_sample_ms > 0 && store_channels(rs->store, &list, &n) == 0;
	for (size_t k = 0; k < run->n_heat; k++) {
		hs.hv[k].channel_id = -1;
		for (size_t i = 0; known && i < n; i++) {
			if (strcmp(list[i].ch.key, run->heat[k].key) == 0) {
				hs.hv[k].channel_id = list[i].id;
				hs.hv[k].resolution = list[i].ch.resolution;
			}
		}
	}
	store_channels_free(list, n);
	if (known && store_run_samples_scan(rs->store, run->first_sample_ms, end_ms + 1,
					    heat_collect, &hs) < 0) {
		log_warn("runs: run %" PRId64 ": the fast samples could not be read back for "
			 "the p95",
			 run->id);
	}
	for (size_t k = 0; k < run->n_heat; k++) {
		struct heat_values *h = &hs.hv[k];
		qsort(h->v, h->n, sizeof(*h->v), cmp_double);
		p95[k] = h->n > 0 ? runstats_quantile_sorted(h->v, h->n, 95) : NAN;
		free(h->v);
	}
	free(hs.hv);
}

/* The figures JSON; *temp_max the highest temperature seen on a channel of runs.peak_channels
 * (NAN = none). */
static void figures_json(const struct config *cfg, int root_fd, const struct run *run,
			 const struct snapshot *start, const struct snapshot *stop,
			 const struct energy *e, const double *p95, struct buf *out,
			 double *temp_max) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	residency_json(&j, root_fd, run, start, stop);
	json_key(&j, "energy");
	json_object_begin(&j);
	json_key(&j, "joules");
	json_double(&j, rounded(e->joules, 6));
	json_key(&j, "method");
	json_string(&j, e->method);
	json_key(&j, "coverage");
	json_double(&j, e->coverage);
	json_key(&j, "channel");
	json_string(&j, e->channel);
	json_object_end(&j);
	json_key(&j, "heat");
	json_object_begin(&j);
	*temp_max = NAN;
	const struct heat *peak = NULL;
	for (size_t i = 0; i < run->n_heat; i++) {
		const struct heat *h = &run->heat[i];
		if (!config_peak_channel(cfg, h->key)) {
			continue; // a capacitor's thermocouple is no zone of the board
		}
		char at[TIMEFMT_ISO_LEN];
		runs_format_time(h->max_ms, at);
		json_key(&j, h->key);
		json_object_begin(&j);
		json_key(&j, "max_c");
		json_double(&j, rounded(h->max, 3));
		json_key(&j, "max_at");
		json_string(&j, at);
		json_key(&j, "p95_c");
		json_double(&j, rounded(p95[i], 3));
		json_key(&j, "mean_c");
		json_double(&j, rounded(h->sum / (double)h->n, 3));
		json_key(&j, "samples");
		json_int(&j, (int64_t)h->n);
		if (h->n_trips > 0) {
			json_key(&j, "above_passive_trips");
			json_array_begin(&j);
			for (size_t k = 0; k < h->n_trips; k++) {
				json_object_begin(&j);
				json_key(&j, "trip_c");
				json_double(&j, h->trip_c[k]);
				json_key(&j, "seconds");
				json_fixed(&j, (double)h->above_ms[k] / 1000, 3);
				json_object_end(&j);
			}
			json_array_end(&j);
		}
		json_object_end(&j);
		if (!peak || h->max > peak->max) {
			peak = h;
		}
	}
	json_object_end(&j);
	*temp_max = peak ? rounded(peak->max, 3) : NAN; // m°C: the zones' step
	json_key(&j, "peak");
	if (peak) {
		char at[TIMEFMT_ISO_LEN];
		runs_format_time(peak->max_ms, at);
		json_object_begin(&j);
		json_key(&j, "channel");
		json_string(&j, peak->key);
		json_key(&j, "max_c");
		json_double(&j, rounded(peak->max, 3));
		json_key(&j, "max_at");
		json_string(&j, at);
		json_object_end(&j);
	} else {
		json_null(&j);
	}
	json_key(&j, "heat_method");
	json_string(&j, "fast samples of the channels of runs.peak_channels: type 7 percentiles "
			"over the stored ones; time above a trip counts each interval that starts "
			"above it");
	json_key(&j, "memory");
	json_object_begin(&j);
	json_key(&j, "available_min_bytes");
	json_double(&j, run->mem_avail_min);
	json_key(&j, "swap_used_max_bytes");
	json_double(&j, run->swap_used_max);
	json_object_end(&j);
	json_key(&j, "fast_samples");
	json_int(&j, (int64_t)run->samples);
	// Heat, memory, fallback residency and integrated power cover the samples from here on:
	// the run's start, or the daemon's restart in its middle.
	json_key(&j, "fast_samples_from");
	if (run->first_sample_ms > 0) {
		char from[TIMEFMT_ISO_LEN];
		runs_format_time(run->first_sample_ms, from);
		json_string(&j, from);
	} else {
		json_null(&j);
	}
	json_object_end(&j);
}

/* The start counters of open run @id as stored: an active run keeps none in memory. */
static void start_snapshot(struct runsock *rs, int64_t id, struct snapshot *s) {
	char *text = NULL;
	if (rs->store && store_run_start_snapshot(rs->store, id, &text) == 0 && text) {
		snapshot_parse(text, s, NULL);
	}
	free(text);
}

/* Ends @run (taken out of the list by the caller) and frees it. */
static int run_end(struct runsock *rs, struct run *run, struct store_run_end *end,
		   struct buf *summary) {
	flush_batch(rs); // the samples before the end's figures, which read them back
	struct snapshot start = {0}, stop = {0};
	start_snapshot(rs, run->id, &start);
	snapshot_read(rs->sysfs_fd, &stop);
	struct energy e;
	energy_of(run, &start, &stop, end->end_ms, rs->cfg->runs.interval_ms, &e);
	double *p95 = xcalloc(run->n_heat ? run->n_heat : 1, sizeof(*p95));
	heat_p95(rs, run, end->end_ms, p95);
	struct buf figures = {0};
	double temp_max;
	figures_json(rs->cfg, rs->sysfs_fd, run, &start, &stop, &e, p95, &figures, &temp_max);
	free(p95);
	end->energy_j = rounded(e.joules, 6); // uJ: the hwmon energy counters' step
	end->energy_method = e.method;
	end->energy_coverage = e.coverage;
	end->temp_max_c = temp_max;
	end->figures = figures.data;
	int rc = rs->store ? store_run_end(rs->store, run->id, end) : -EAGAIN;
	if (rc == 0 && summary) {
		// The stop's reply is the run as `runs show` and the API give it: read back, one
		// writer (runs.c), so tags and origin are there too.
		int got = runs_get_json(rs->store, run->id, summary);
		if (got < 0) {
			log_warn("runs: could not read run %" PRId64 " back for its reply: %s",
				 run->id, strerror(-got));
			buf_printf(summary, "{\"id\":%" PRId64 "}", run->id);
		}
	}
	if (rc == 0) {
		log_info("runs: run %" PRId64 " (%s) ended: %s", run->id, run->label, end->status);
	}
	buf_finish(&figures);
	free(e.channel);
	snapshot_finish(&start);
	snapshot_finish(&stop);
	return rc;
}

static void run_remove(struct runsock *rs, size_t at) {
	memmove(&rs->runs[at], &rs->runs[at + 1], (rs->n_runs - at - 1) * sizeof(*rs->runs));
	rs->n_runs--;
	rs->trim_due = true;
}

/* --- the loop's answers ---------------------------------------------------------------------- */

/* "@key_prefix/NAME": the governor in @dir/NAME/@file for each entry NAME starting @name_prefix. */
static void write_governors(struct json *j, int sysfs_fd, const char *dir, const char *name_prefix,
			    const char *file, const char *key_prefix) {
	char **names;
	size_t n = list_dir(sysfs_fd, dir, name_prefix, &names);
	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s/%s", dir, names[i], file);
		char *gov = read_text(sysfs_fd, path);
		if (gov) {
			trim(gov);
			char *key = xasprintf("%s/%s", key_prefix, names[i]);
			json_key(j, key);
			json_string(j, gov);
			free(key);
		}
		free(gov);
		free(path);
	}
	free_names(names, n);
}
/* The fingerprint of a run: board, kernel, governors, argv, the executable's sha256, tags. */
static void fingerprint_json(struct runsock *rs, const struct api_run_start *start,
			     struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	char *board = clock_board_model(rs->cfg->sysfs_root);
	json_key(&j, "board");
	json_string(&j, board);
	free(board);
	struct utsname u;
	json_key(&j, "kernel");
	json_string(&j, uname(&u) == 0 ? u.release : NULL);
	json_key(&j, "governors");
	json_object_begin(&j);
	write_governors(&j, rs->sysfs_fd, "devices/system/cpu/cpufreq", "policy",
			"scaling_governor", "cpufreq");
	write_governors(&j, rs->sysfs_fd, "class/devfreq", "", "governor", "devfreq");
	json_object_end(&j);
	json_key(&j, "argv");
	if (start->argv) {
		json_raw(&j, start->argv);
	} else {
		json_null(&j);
	}
	json_key(&j, "exe");
	json_string(&j, start->exe);
	// The caller's digest: the daemon never opens a path a client names (a FIFO or a device
	// would stall the loop, and it could read files the caller cannot).
	json_key(&j, "exe_sha256");
	json_string(&j, start->exe_sha256);
	json_key(&j, "tags");
	json_raw(&j, start->tags);
	json_object_end(&j);
}

/*
 * The start time of process @pid (field 22 of @procfs_root/PID/stat, clock ticks after boot)
 * in *ticks: 0, -ENOENT when there is no such process, or another negative errno. procfs
 * never blocks; a stand-in tree's file is opened so that it cannot either.
 */
static int pid_start_time(const char *procfs_root, int64_t pid, uint64_t *ticks) {
	char *path = xasprintf("%s/%" PRId64 "/stat", procfs_root, pid);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd < 0) {
		return errno == ESRCH ? -ENOENT : -errno;
	}
	struct stat st;
	char text[1024];
	ssize_t n = -1;
	int rc = -EINVAL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		n = read(fd, text, sizeof(text) - 1);
		rc = n < 0 ? (errno == ESRCH ? -ENOENT : -errno) : -EINVAL;
	}
	close(fd);
	if (n <= 0) {
		return rc;
	}
	text[n] = '\0';
	// The name (field 2) may hold spaces and parentheses: count from its last ')'.
	const char *p = strrchr(text, ')');
	for (int f = 2; p && f < 22; f++) {
		p = strchr(p + 1, ' ');
	}
	char *end;
	errno = 0;
	unsigned long long x = p ? strtoull(p + 1, &end, 10) : 0;
	if (!p || errno || end == p + 1 || x == 0) {
		return -EINVAL;
	}
	*ticks = x;
	return 0;
}

/*
 * Whether the watched process of @run is gone: no process has its pid, or the one that has
 * it started at another time (the pid went to another process).
 */
static bool pid_gone(const struct runsock *rs, const struct run *run) {
	if (kill((pid_t)run->pid, 0) < 0 && errno == ESRCH) {
		return true;
	}
	if (run->pid_start == 0) {
		return false;
	}
	uint64_t now = 0;
	int rc = pid_start_time(rs->cfg->procfs_root, run->pid, &now);
	return rc == -ENOENT || (rc == 0 && now != run->pid_start);
}

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
	run->pid = job->start.pid;
	if (run->pid > 0 && pid_start_time(rs->cfg->procfs_root, run->pid, &run->pid_start) < 0) {
		run->pid_start = 0; // no procfs to tell: the pid alone is watched
	}
	run->mem_avail_min = NAN;
	run->swap_used_max = NAN;
	struct snapshot start = {0};
	snapshot_read(rs->sysfs_fd, &start);
	struct buf snap = {0}, fp = {0};
	snapshot_json(&start, mono_ms, run->pid_start, &snap);
	snapshot_finish(&start); // stored: read back at the end
	fingerprint_json(rs, &job->start, &fp);
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
	log_info("runs: run %" PRId64 " (%s) started, pid %" PRId64, run->id, run->label, run->pid);
	fast_sample(rs, now_ms, mono_ms); // the run's first sample, at its start
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
	fast_sample(rs, now_ms, mono_ms); // its last sample, at its end
	struct store_run_end end = {.end_ms = now_ms, .rss_max_bytes = job->stop.rss_max_bytes};
	end.has_exit_code = job->stop.has_exit_code;
	end.exit_code = job->stop.exit_code;
	end.has_signal = job->stop.has_signal;
	end.signal = job->stop.signal;
	end.error = job->stop.error;
	if (job->stop.status) {
		end.status = job->stop.status;
	} else if (job->stop.has_signal) {
		end.status = "signaled";
	} else {
		end.status = job->stop.exit_code == 0 ? "ok" : "failed";
	}
	struct run *run = rs->runs[at];
	job->rc = run_end(rs, run, &end, &job->out);
	if (job->rc < 0) {
		job->err = xstrdup("the database did not accept the stop; try again shortly");
		return;
	}
	recent_add(rs, run, mono_ms);
	run_remove(rs, at);
	run_free(run);
}

/* Closes as lost every watched run whose process is gone. */
static void watch_pids(struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	for (size_t i = 0; i < rs->n_runs;) {
		struct run *run = rs->runs[i];
		if (run->pid > 0 && pid_gone(rs, run)) {
			struct store_run_end end = {
				.end_ms = now_ms, .status = "lost", .rss_max_bytes = -1};
			log_notice("runs: process %" PRId64 " of run %" PRId64
				   " (%s) is gone without a stop: lost",
				   run->pid, run->id, run->label);
			if (run_end(rs, run, &end, NULL) == 0) {
				recent_add(rs, run, mono_ms);
				run_remove(rs, i);
				run_free(run);
				continue;
			}
		}
		i++;
	}
}

void runsock_work(struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	uint64_t count;
	if (read(rs->efd, &count, sizeof(count)) < 0 && errno != EAGAIN) {
		log_errno("runs: could not read the eventfd");
	}
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
		} else {
			do_stop(rs, job, now_ms, mono_ms);
		}
		pthread_mutex_lock(&rs->lock);
		job->done = true;
		pthread_cond_broadcast(&rs->answered);
		pthread_mutex_unlock(&rs->lock);
	}
	if (rs->n_runs > 0 && mono_ms >= rs->next_sample_mono) {
		fast_sample(rs, now_ms, mono_ms);
	}
	watch_pids(rs, now_ms, mono_ms);
	if (rs->n_runs == 0 ||
	    (rs->n_batch > 0 && mono_ms - rs->batch_mono >= RUNSOCK_BATCH_MAX_MS)) {
		flush_batch(rs);
	}
	if (rs->n_runs == 0 && rs->trim_due) {
		// Many runs' small blocks leave the heap's top pinned: hand the free pages back.
		rs->trim_due = false;
		free(rs->runs);
		rs->runs = NULL;
		rs->cap_runs = 0;
#ifdef __GLIBC__
		malloc_trim(0);
#endif
	}
}

int runsock_start(struct runsock *rs, const struct api_run_start *start, int64_t now_ms,
		  int64_t mono_ms, int64_t *id) {
	struct job job = {.kind = JOB_START, .start = *start};
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

int runsock_stop(struct runsock *rs, int64_t id, const struct api_run_stop *stop, int64_t now_ms,
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
	if (!rs || rs->n_runs == 0) {
		return -1;
	}
	int64_t left = rs->next_sample_mono - mono_ms;
	if (rs->n_batch > 0 && rs->batch_mono + RUNSOCK_BATCH_MAX_MS - mono_ms < left) {
		left = rs->batch_mono + RUNSOCK_BATCH_MAX_MS - mono_ms;
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

static int api_start(void *ctx, const struct api_run_start *run, int64_t *id, char **err) {
	struct runsock *rs = ctx;
	struct job *job = xcalloc(1, sizeof(*job));
	job->kind = JOB_START;
	job->start = (struct api_run_start){
		.label = xstrdup(run->label),
		.tags = xstrdup(run->tags ? run->tags : "{}"),
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

static int api_stop(void *ctx, int64_t id, const struct api_run_stop *stop, struct buf *out,
		    char **err) {
	struct runsock *rs = ctx;
	struct job *job = xcalloc(1, sizeof(*job));
	job->kind = JOB_STOP;
	job->id = id;
	job->stop = *stop;
	job->stop.status = NULL;
	// Status strings are the API's static choices; keep our own copy of the pointer's meaning.
	if (stop->status) {
		job->stop.status = strcmp(stop->status, "ok") == 0       ? "ok"
				   : strcmp(stop->status, "failed") == 0 ? "failed"
									 : "timeout";
	}
	job->stop.error = stop->error ? xstrdup(stop->error) : NULL; // the job's own copy
	if (!submit(rs, job)) {
		*err = xstrdup("the daemon is busy: the run was not stopped; try again");
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
	rs->api = (struct api_runs){.start = api_start, .stop = api_stop, .ctx = rs};
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
			struct snapshot start = {0};
			snapshot_parse(open_runs[i].start_snapshot, &start, &run->pid_start);
			snapshot_finish(&start);
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
	flush_batch(rs);
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

int runsock_listen(const struct config *cfg) {
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
		log_warn("runs: no group 'thermlog': %s is for this user (and root) only", path);
	} else if (chown(path, (uid_t)-1, g->gr_gid) < 0) {
		log_warn("runs: could not give %s to group thermlog: %s", path, strerror(errno));
	}
	chmod(path, 0660);
	log_info("runs: listening on %s", path);
	return fd;
}
