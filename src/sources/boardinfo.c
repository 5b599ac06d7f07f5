/* The board as it stands, for a campaign's fingerprint (boardinfo.h). */
#include "boardinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "thermal.h"
#include "xalloc.h"

#define TEXT_MAX 4096 // a frequency table or a command line

/* Opens @root as a directory (-1 when it cannot be). */
static int open_root(const char *root) {
	return root ? open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

/* The text of @path under @fd as a JSON string, or null. */
static void field_text(struct json *j, const char *key, int fd, const char *path) {
	char *text = fd >= 0 ? sysfs_read_alloc(fd, path, TEXT_MAX) : NULL;
	json_field_string(j, key, text);
	free(text);
}

/* A device tree string list (NUL-separated) as a JSON array, or null. */
static void field_strings(struct json *j, const char *key, int fd, const char *path) {
	json_key(j, key);
	char buf[1024];
	int f = fd >= 0 ? openat(fd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	ssize_t n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
	if (f >= 0) {
		close(f);
	}
	if (n <= 0) {
		json_null(j);
		return;
	}
	buf[n] = '\0';
	json_array_begin(j);
	for (ssize_t at = 0; at < n;) {
		size_t len = strnlen(buf + at, (size_t)(n - at));
		if (len > 0) {
			json_string(j, buf + at);
		}
		at += (ssize_t)len + 1;
	}
	json_array_end(j);
}

/* "12345 kB" of MemTotal in procfs's meminfo, in bytes, or null. */
static void field_ram(struct json *j, int proc_fd) {
	char *text = proc_fd >= 0 ? sysfs_read_alloc(proc_fd, "meminfo", 16384) : NULL;
	const char *at = text ? strstr(text, "MemTotal:") : NULL;
	long long kb = 0;
	if (at && sscanf(at, "MemTotal: %lld kB", &kb) == 1 && kb > 0) {
		json_field_int(j, "ram_bytes", kb * 1024);
	} else {
		json_field_null(j, "ram_bytes");
	}
	free(text);
}

/* A list of numbers (kHz, or Hz with @scale 1) as a JSON array of Hz, or null. */
static void field_hz_list(struct json *j, const char *key, int fd, const char *path,
			  int64_t scale) {
	char *text = sysfs_read_alloc(fd, path, TEXT_MAX);
	json_key(j, key);
	if (!text) {
		json_null(j);
		return;
	}
	json_array_begin(j);
	for (char *save = NULL, *w = strtok_r(text, " \t\n", &save); w;
	     w = strtok_r(NULL, " \t\n", &save)) {
		char *end;
		long long v = strtoll(w, &end, 10);
		if (!*end && v > 0) {
			json_int(j, v * scale);
		}
	}
	json_array_end(j);
	free(text);
}

/* A class of sysfs devices: an array with an object per device, in source_list_dir()'s order. */
struct device_class {
	const char *key;      // the array's key
	const char *dir;      // the class's directory under the sysfs root
	const char *prefix;   // what its devices' names begin with (NULL: every entry)
	const char *name_key; // the key of the device's name in its object
	void (*fields)(struct json *j, int fd, const char *dir); // the rest of a device's object
};

static void field_hz(struct json *j, const char *key, int fd, const char *path, int64_t scale) {
	int64_t v = 0;
	bool known = sysfs_read_int(fd, path, &v) == 0 && v > 0;
	json_field_int_or_null(j, key, known, v * scale);
}

static void field_int(struct json *j, const char *key, int fd, const char *path) {
	int64_t v = 0;
	bool known = sysfs_read_int(fd, path, &v) == 0;
	json_field_int_or_null(j, key, known, v);
}

#define PATH_SIZE 320

/* "@dir/@file" in @path (PATH_SIZE bytes), for the field writers. */
static const char *in_dir(char *path, const char *dir, const char *file) {
	snprintf(path, PATH_SIZE, "%s/%s", dir, file);
	return path;
}

static void class_json(struct json *j, int fd, const struct device_class *c) {
	json_key(j, c->key);
	json_array_begin(j);
	char **names = source_list_dir(fd, c->dir, c->prefix);
	for (char **p = names; p && *p && !source_stop_pending(); p++) {
		char dir[256];
		snprintf(dir, sizeof(dir), "%s/%s", c->dir, *p);
		json_object_begin(j);
		json_field_string(j, c->name_key, *p);
		c->fields(j, fd, dir);
		json_object_end(j);
	}
	source_free_names(names);
	json_array_end(j);
}

static void cpufreq_fields(struct json *j, int fd, const char *dir) {
	char path[PATH_SIZE];
	field_text(j, "cpus", fd, in_dir(path, dir, "related_cpus"));
	field_hz(j, "cpuinfo_max_hz", fd, in_dir(path, dir, "cpuinfo_max_freq"), 1000);
	field_hz_list(j, "frequencies_hz", fd, in_dir(path, dir, "scaling_available_frequencies"),
		      1000);
	field_text(j, "governor", fd, in_dir(path, dir, "scaling_governor"));
}

/* The devfreq governors' tunables a board may expose beside the device (the vendor DMC's). */
static const char *const tunables[] = {"upthreshold", "downdifferential", "polling_interval",
				       "timer",       "system_status",    NULL};

static void devfreq_fields(struct json *j, int fd, const char *dir) {
	char path[PATH_SIZE];
	field_text(j, "governor", fd, in_dir(path, dir, "governor"));
	field_hz(j, "min_hz", fd, in_dir(path, dir, "min_freq"), 1);
	field_hz(j, "max_hz", fd, in_dir(path, dir, "max_freq"), 1);
	field_hz_list(j, "frequencies_hz", fd, in_dir(path, dir, "available_frequencies"), 1);
	json_key(j, "tunables");
	json_object_begin(j);
	for (const char *const *t = tunables; *t; t++) {
		char *text = sysfs_read_alloc(fd, in_dir(path, dir, *t), 256);
		if (text) {
			json_field_string(j, *t, text);
		}
		free(text);
	}
	json_object_end(j);
}

/* The cooling device a zone's cdevN link points to ("cooling_device4"), or "". */
static void cdev_target(int fd, const char *path, char out[64]) {
	char link[256];
	ssize_t n = readlinkat(fd, path, link, sizeof(link) - 1);
	out[0] = '\0';
	if (n > 0) {
		link[n] = '\0';
		const char *slash = strrchr(link, '/');
		snprintf(out, 64, "%.63s", slash ? slash + 1 : link);
	}
}

/* Calls @fn for each binding of zone @dir: the device, its type and the trip's index and type. */
typedef void (*binding_fn)(void *ctx, const char *device, const char *type, int64_t trip,
			   const char *trip_type);

static void each_binding(int fd, const char *dir, binding_fn fn, void *ctx) {
	for (int c = 0; c < 64; c++) {
		char path[256], device[64], type[128], trip_type[32] = "";
		snprintf(path, sizeof(path), "%s/cdev%d", dir, c);
		cdev_target(fd, path, device);
		if (!device[0]) {
			break; // bindings are numbered densely from 0
		}
		int64_t trip = -1;
		snprintf(path, sizeof(path), "%s/cdev%d_trip_point", dir, c);
		sysfs_read_int(fd, path, &trip);
		if (trip >= 0) {
			snprintf(path, sizeof(path), "%s/trip_point_%lld_type", dir,
				 (long long)trip);
			sysfs_read_text(fd, path, trip_type, sizeof(trip_type));
		}
		snprintf(path, sizeof(path), "class/thermal/%s/type", device);
		if (sysfs_read_text(fd, path, type, sizeof(type)) <= 0) {
			snprintf(type, sizeof(type), "%s", device);
		}
		fn(ctx, device, type, trip, trip_type);
	}
}

static void write_binding(void *ctx, const char *device, const char *type, int64_t trip,
			  const char *trip_type) {
	struct json *j = ctx;
	json_object_begin(j);
	json_field_string(j, "device", device);
	json_field_string(j, "type", type);
	json_field_int_or_null(j, "trip", trip >= 0, trip);
	json_field_string(j, "trip_type", *trip_type ? trip_type : NULL);
	json_object_end(j);
}

static void zone_fields(struct json *j, int fd, const char *dir) {
	char path[PATH_SIZE];
	field_text(j, "type", fd, in_dir(path, dir, "type"));
	field_text(j, "policy", fd, in_dir(path, dir, "policy"));
	thermal_trips_json(fd, dir, j);
	json_key(j, "cooling");
	json_array_begin(j);
	each_binding(fd, dir, write_binding, j);
	json_array_end(j);
}

static void cdev_fields(struct json *j, int fd, const char *dir) {
	char path[PATH_SIZE];
	field_text(j, "type", fd, in_dir(path, dir, "type"));
	field_int(j, "max_state", fd, in_dir(path, dir, "max_state"));
}

/* The clocks, the thermal zones with their trips and bindings, and the cooling devices. */
static const struct device_class classes[] = {
	{"cpufreq", "devices/system/cpu/cpufreq", "policy", "policy", cpufreq_fields},
	{"devfreq", "class/devfreq", NULL, "name", devfreq_fields},
	{"thermal", "class/thermal", "thermal_zone", "zone", zone_fields},
	{"cooling", "class/thermal", "cooling_device", "device", cdev_fields},
};

void boardinfo_json(const char *sysfs_root, const char *procfs_root, const char *debugfs_root,
		    struct json *j) {
	int sys = open_root(sysfs_root), proc = open_root(procfs_root),
	    debug = open_root(debugfs_root);
	json_object_begin(j);
	field_text(j, "model", sys, "firmware/devicetree/base/model");
	field_strings(j, "compatible", sys, "firmware/devicetree/base/compatible");
	field_text(j, "kernel", proc, "sys/kernel/osrelease");
	field_text(j, "cmdline", proc, "cmdline");
	field_ram(j, proc);
	// "RKNPU driver: v0.9.6": the vendor driver's debugfs file (root only)
	char *npu = debug >= 0 ? sysfs_read_alloc(debug, "rknpu/version", 256) : NULL;
	const char *colon = npu ? strrchr(npu, ':') : NULL;
	json_field_string(j, "npu_driver", colon ? colon + 1 + strspn(colon + 1, " ") : npu);
	free(npu);
	for (size_t k = 0; sys >= 0 && k < sizeof(classes) / sizeof(classes[0]); k++) {
		class_json(j, sys, &classes[k]);
	}
	json_object_end(j);
	const int fds[] = {sys, proc, debug};
	for (size_t k = 0; k < 3; k++) {
		if (fds[k] >= 0) {
			close(fds[k]);
		}
	}
}

struct passive {
	char **types;
	size_t n;
};

static void add_passive(void *ctx, const char *device, const char *type, int64_t trip,
			const char *trip_type) {
	(void)device;
	(void)trip;
	struct passive *p = ctx;
	if (strcmp(trip_type, "passive") != 0) {
		return;
	}
	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->types[i], type) == 0) {
			return;
		}
	}
	p->types = xrealloc(p->types, (p->n + 2) * sizeof(*p->types));
	p->types[p->n++] = xstrdup(type);
	p->types[p->n] = NULL;
}

char **boardinfo_passive_cooling(const char *sysfs_root) {
	struct passive p = {.types = xcalloc(1, sizeof(char *))};
	int fd = open_root(sysfs_root);
	char **zones = fd >= 0 ? source_list_dir(fd, "class/thermal", "thermal_zone") : NULL;
	for (char **z = zones; z && *z; z++) {
		char dir[128];
		snprintf(dir, sizeof(dir), "class/thermal/%s", *z);
		each_binding(fd, dir, add_passive, &p);
	}
	source_free_names(zones);
	if (fd >= 0) {
		close(fd);
	}
	return p.types;
}
