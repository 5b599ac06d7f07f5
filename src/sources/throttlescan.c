/* The throttle tracker's sysfs readings: frequency domains, thermal zones, cooling devices. */
#include "throttlescan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "source.h"
#include "xalloc.h"

#define CPUFREQ_DIR          "devices/system/cpu/cpufreq"
#define THERMAL_TEMP_INVALID (-274000) // the kernel's "no such trip"
#define TEXT_MAX             4096

static void set_name(char dst[static THROTTLE_NAME_LEN], const char *prefix, const char *name) {
	snprintf(dst, THROTTLE_NAME_LEN, "%s%s", prefix, name);
	source_key_sanitize(dst);
}

/* True when the CPU list @cpus ("4 5", as related_cpus reads) holds @cpu. */
static bool cpus_hold(const char *cpus, long cpu) {
	for (const char *p = cpus; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		if (v == cpu) {
			return true;
		}
		p = end;
	}
	return false;
}

void throttlescan_cdev_domain(const char *type, const char *const *policy_names,
			      const char *const *policy_cpus, size_t n_policies,
			      char out[static THROTTLE_NAME_LEN]) {
	out[0] = '\0';
	char *end;
	if (strncmp(type, "cpufreq-cpu", 11) == 0) {
		long cpu = strtol(type + 11, &end, 10);
		for (size_t i = 0; end != type + 11 && !*end && i < n_policies; i++) {
			if (cpus_hold(policy_cpus[i], cpu)) {
				set_name(out, "cpufreq/", policy_names[i]);
				return;
			}
		}
	} else if (strncmp(type, "thermal-cpufreq-", 16) == 0) {
		// numbered by registration, which follows the policies' order on every board seen
		long n = strtol(type + 16, &end, 10);
		if (end != type + 16 && !*end && n >= 0 && (size_t)n < n_policies) {
			set_name(out, "cpufreq/", policy_names[n]);
		}
	} else if (strncmp(type, "devfreq-", 8) == 0 && type[8]) {
		set_name(out, "devfreq/", type + 8);
	}
}

/* kHz attributes of a policy in Hz; false when unreadable. */
static bool read_khz(int root_fd, const char *dir, const char *name, int64_t *hz) {
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int64_t khz;
	if (sysfs_read_int(root_fd, path, &khz) < 0 || khz <= 0 || khz > INT64_MAX / 1000) {
		return false;
	}
	*hz = khz * 1000;
	return true;
}

struct policies {
	char *names[THROTTLE_MAX_DOMAINS];
	char *cpus[THROTTLE_MAX_DOMAINS];
	size_t n;
};

static void read_policies(int root_fd, struct throttle_input *in, struct policies *pol) {
	char **names = source_list_dir(root_fd, CPUFREQ_DIR, "policy");
	for (char **p = names; p && *p && pol->n < THROTTLE_MAX_DOMAINS; p++) {
		char dir[192], path[256], text[512];
		snprintf(dir, sizeof(dir), CPUFREQ_DIR "/%s", *p);
		snprintf(path, sizeof(path), "%s/related_cpus", dir);
		if (sysfs_read_text(root_fd, path, text, sizeof(text)) < 0) {
			text[0] = '\0';
		}
		pol->names[pol->n] = xstrdup(*p);
		pol->cpus[pol->n] = xstrdup(text);
		pol->n++;
		struct throttle_domain_reading d = {0};
		snprintf(path, sizeof(path), "%s/affected_cpus", dir);
		if (sysfs_read_text(root_fd, path, text, sizeof(text)) <= 0 ||
		    !read_khz(root_fd, dir, "scaling_max_freq", &d.cap_hz) ||
		    !read_khz(root_fd, dir, "cpuinfo_max_freq", &d.max_hz) ||
		    in->n_domains == THROTTLE_MAX_DOMAINS) {
			continue; // offline, or no maxima to compare
		}
		set_name(d.name, "cpufreq/", *p);
		in->domains[in->n_domains++] = d;
	}
	source_free_names(names);
}

bool throttlescan_top_frequency(const char *text, int64_t *hz) {
	*hz = 0;
	for (const char *p = text; *p;) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		if (errno == 0 && v > *hz) {
			*hz = v;
		}
		p = end;
	}
	return *hz > 0;
}

/* The highest of a devfreq device's available_frequencies (Hz); false when none parses. */
static bool top_frequency(int root_fd, const char *dir, int64_t *hz) {
	char path[256], text[TEXT_MAX];
	snprintf(path, sizeof(path), "%s/available_frequencies", dir);
	return sysfs_read_text(root_fd, path, text, sizeof(text)) > 0 &&
	       throttlescan_top_frequency(text, hz);
}

static void read_devfreq(int root_fd, struct throttle_input *in) {
	char **names = source_list_dir(root_fd, "class/devfreq", NULL);
	for (char **p = names; p && *p && in->n_domains < THROTTLE_MAX_DOMAINS; p++) {
		char dir[192], path[256];
		snprintf(dir, sizeof(dir), "class/devfreq/%s", *p);
		snprintf(path, sizeof(path), "%s/max_freq", dir);
		struct throttle_domain_reading d = {0};
		if (sysfs_read_int(root_fd, path, &d.cap_hz) < 0 ||
		    !top_frequency(root_fd, dir, &d.max_hz)) {
			continue;
		}
		set_name(d.name, "devfreq/", *p);
		in->domains[in->n_domains++] = d;
	}
	source_free_names(names);
}

static void read_trips(int root_fd, const char *dir, struct throttle_zone_reading *z) {
	for (int k = 0; k < THROTTLE_MAX_TRIPS; k++) {
		char path[256], type[32];
		snprintf(path, sizeof(path), "%s/trip_point_%d_type", dir, k);
		if (sysfs_read_text(root_fd, path, type, sizeof(type)) < 0) {
			break; // trips are numbered densely from 0
		}
		struct throttle_trip *t = &z->trips[z->n_trips++];
		*t = (struct throttle_trip){.temp_mc = THERMAL_TEMP_INVALID};
		snprintf(path, sizeof(path), "%s/trip_point_%d_temp", dir, k);
		int64_t v;
		if (sysfs_read_int(root_fd, path, &v) == 0 && v > THERMAL_TEMP_INVALID) {
			t->temp_mc = v;
			t->passive = strcmp(type, "passive") == 0;
		}
		snprintf(path, sizeof(path), "%s/trip_point_%d_hyst", dir, k);
		if (sysfs_read_int(root_fd, path, &v) == 0 && v >= 0) {
			t->hyst_mc = v;
		}
	}
}

/* The zone's cdevK links (to cooling_deviceN) and cdevK_trip_point. */
static void read_binds(int root_fd, const char *dir, struct throttle_zone_reading *z) {
	for (int k = 0; k < 64 && z->n_binds < THROTTLE_MAX_BINDS; k++) {
		char path[256], target[256];
		snprintf(path, sizeof(path), "%s/cdev%d", dir, k);
		ssize_t len = readlinkat(root_fd, path, target, sizeof(target) - 1);
		if (len < 0) {
			continue; // numbered by binding; unbound ones leave holes
		}
		target[len] = '\0';
		const char *base = strrchr(target, '/');
		base = base ? base + 1 : target;
		if (strncmp(base, "cooling_device", 14) != 0) {
			continue;
		}
		int64_t trip = -1;
		snprintf(path, sizeof(path), "%s/cdev%d_trip_point", dir, k);
		if (sysfs_read_int(root_fd, path, &trip) < 0) {
			trip = -1;
		}
		z->binds[z->n_binds].cdev = atoi(base + 14);
		z->binds[z->n_binds].trip = trip >= 0 && trip < THROTTLE_MAX_TRIPS ? (int)trip : -1;
		z->n_binds++;
	}
}

static void read_zones(int root_fd, struct throttle_input *in) {
	char **names = source_list_dir(root_fd, "class/thermal", "thermal_zone");
	for (char **p = names; p && *p && in->n_zones < THROTTLE_MAX_ZONES; p++) {
		char dir[192], path[256], text[THROTTLE_NAME_LEN];
		snprintf(dir, sizeof(dir), "class/thermal/%s", *p);
		snprintf(path, sizeof(path), "%s/type", dir);
		if (sysfs_read_text(root_fd, path, text, sizeof(text)) <= 0) {
			continue;
		}
		struct throttle_zone_reading *z = &in->zones[in->n_zones++];
		*z = (struct throttle_zone_reading){0};
		set_name(z->name, "", text);
		snprintf(path, sizeof(path), "%s/mode", dir);
		bool disabled = sysfs_read_text(root_fd, path, text, sizeof(text)) >= 8 &&
				memcmp(text, "disabled", 8) == 0;
		snprintf(path, sizeof(path), "%s/temp", dir);
		z->valid = !disabled && sysfs_read_int(root_fd, path, &z->temp_mc) == 0;
		read_trips(root_fd, dir, z);
		read_binds(root_fd, dir, z);
	}
	source_free_names(names);
}

static void read_cooling_counters(int root_fd, const char *dir, struct throttle_cdev_reading *c) {
	char path[256];
	snprintf(path, sizeof(path), "%s/stats/time_in_state_ms", dir);
	struct counters_table table;
	if (counters_read(root_fd, path, COUNTERS_FORMAT_COOLING, &table) < 0) {
		return;
	}
	// states are 0..max_state densely; anything else is not a table to difference
	c->counters = table.n > 0 && table.n <= THROTTLE_MAX_STATES;
	for (size_t i = 0; c->counters && i < table.n; i++) {
		c->counters = table.levels[i].level == (int64_t)i;
		c->state_ms[i] = table.levels[i].time_ms;
	}
	c->n_states = c->counters ? table.n : 0;
	counters_table_finish(&table);
}

static void read_cdevs(int root_fd, struct throttle_input *in, const struct policies *pol) {
	char **names = source_list_dir(root_fd, "class/thermal", "cooling_device");
	for (char **p = names; p && *p && in->n_cdevs < THROTTLE_MAX_CDEVS; p++) {
		char dir[192], path[256], text[THROTTLE_NAME_LEN];
		snprintf(dir, sizeof(dir), "class/thermal/%s", *p);
		snprintf(path, sizeof(path), "%s/type", dir);
		if (sysfs_read_text(root_fd, path, text, sizeof(text)) <= 0) {
			continue;
		}
		struct throttle_cdev_reading *c = &in->cdevs[in->n_cdevs++];
		*c = (struct throttle_cdev_reading){.dev = atoi(*p + 14), .cur_state = -1};
		set_name(c->type, "", text);
		c->caps = throttle_cdev_caps(c->type);
		throttlescan_cdev_domain(c->type, (const char *const *)pol->names,
					 (const char *const *)pol->cpus, pol->n, c->domain);
		snprintf(path, sizeof(path), "%s/cur_state", dir);
		if (sysfs_read_int(root_fd, path, &c->cur_state) < 0) {
			c->cur_state = -1;
		}
		read_cooling_counters(root_fd, dir, c);
	}
	source_free_names(names);
}

void throttlescan_read(int root_fd, struct throttle_input *in) {
	in->n_domains = in->n_zones = in->n_cdevs = 0;
	struct policies pol = {0};
	read_policies(root_fd, in, &pol);
	read_devfreq(root_fd, in);
	read_zones(root_fd, in);
	read_cdevs(root_fd, in, &pol);
	for (size_t i = 0; i < pol.n; i++) {
		free(pol.names[i]);
		free(pol.cpus[i]);
	}
}
