/* The throttle tracker's sysfs readings: frequency domains, thermal zones, cooling devices. */
#include "throttlescan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "counters.h"
#include "sampler.h"
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
static bool read_khz(int root_fd, const char *path, int64_t *hz) {
	int64_t khz;
	if (sysfs_read_int(root_fd, path, &khz) < 0 || khz <= 0 || khz > INT64_MAX / 1000) {
		return false;
	}
	*hz = khz * 1000;
	return true;
}

/*
 * A file read every cycle, held open (sysfs_hold(): opened again when replaced): one pread at
 * offset 0 reads a sysfs attribute afresh.
 */
struct held {
	char path[192];
	int fd; // -1: opened at the next read
};

static void held_init(struct held *h, const char *path) {
	snprintf(h->path, sizeof(h->path), "%s", path);
	h->fd = -1;
}

static void held_close(struct held *h) {
	if (h->fd >= 0) {
		close(h->fd);
		h->fd = -1;
	}
}

/* The file's text without its trailing newline (NUL-terminated); its length or -errno. */
static int held_read_text(int root_fd, struct held *h, char *buf, size_t size) {
	int rc = sysfs_hold(&h->fd, root_fd, h->path);
	if (rc < 0) {
		return rc;
	}
	ssize_t n = pread(h->fd, buf, size - 1, 0);
	if (n < 0) {
		int err = -errno;
		held_close(h); // gone with its device: found again by path, or by the next create
		return err;
	}
	if ((size_t)n == size - 1) {
		return -ENOBUFS; // an attribute is read whole by one read; this one is too long
	}
	if (n > 0 && buf[n - 1] == '\n') {
		n--;
	}
	buf[n] = '\0';
	return (int)n;
}

static int held_read_int(int root_fd, struct held *h, int64_t *out) {
	char buf[64];
	int len = held_read_text(root_fd, h, buf, sizeof(buf));
	if (len < 0) {
		return len == -ENOBUFS ? -EBADMSG : len;
	}
	return sysfs_parse_int(buf, (size_t)len, out);
}

/* A frequency domain: its name and hardware maximum, found once; its cap read each cycle. */
struct scan_domain {
	char name[THROTTLE_NAME_LEN];
	struct held cap; // scaling_max_freq (kHz) or devfreq max_freq (Hz)
	bool khz;        // cap in kHz (cpufreq)
	int64_t max_hz;
};

/* A zone that can explain a cap (a passive trip or a binding): trips and bindings found once. */
struct scan_zone {
	struct throttle_zone_reading z; // name, trips, binds; temp and valid each cycle
	struct held temp;
	size_t hint;   // where the sampler's channel of temp stood (sampler_file_int())
	bool disabled; // `mode` said "disabled" when found, as the thermal source takes it
};

/* A cooling device: type, whether it caps and what, found once; its state read each cycle. */
struct scan_cdev {
	struct throttle_cdev_reading c; // dev, type, caps, domain; state and counters each cycle
	struct held state;              // cur_state
	size_t hint;                    // where the sampler's channel of cur_state stood
	struct held stats;              // stats/time_in_state_ms, read for a capping device only
	struct channel plausible;       // its cur_state as the sampler judges it (max_state)
};

/* An x86 CPU's thermal_throttle counters (cumulative since boot). */
struct scan_cpu {
	int cpu;
	struct held core_count, package_count, core_time, package_time;
};

struct throttlescan {
	int root_fd; // borrowed
	struct scan_cpu cpus[THROTTLE_MAX_CPUS];
	size_t n_cpus;
	bool has_alarm;
	struct held alarm; // hwmon rpi_volt in0_lcrit_alarm
	struct scan_domain domains[THROTTLE_MAX_DOMAINS];
	size_t n_domains;
	struct scan_zone zones[THROTTLE_MAX_ZONES];
	size_t n_zones;
	struct scan_cdev cdevs[THROTTLE_MAX_CDEVS];
	size_t n_cdevs;
	struct buf limits; // what a limit left out, for throttlescan_limits(); "" = nothing
};

/* Adds one limit that applied to the note throttlescan_limits() gives. */
__attribute__((format(printf, 2, 3))) static void limit_applied(struct throttlescan *ts,
								const char *fmt, ...) {
	if (ts->limits.len > 0) {
		buf_puts(&ts->limits, "; ");
	}
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&ts->limits, fmt, ap);
	va_end(ap);
}

/* Counts what a limit leaves out and names the first one, for limit_applied(). */
struct left_out {
	size_t n;
	char first[THROTTLE_NAME_LEN];
};

static void leave_out(struct left_out *l, const char *name) {
	if (l->n++ == 0) {
		snprintf(l->first, sizeof(l->first), "%s", name);
	}
}

/*
 * Adds what @l left out past the first @max @what, if anything: "N WHAT past the first MAX left
 * out (FIRST on)", or "(FIRST on: WHY)" with @why.
 */
static void say_left_out(struct throttlescan *ts, const struct left_out *l, const char *what,
			 int max, const char *why) {
	if (l->n > 0) {
		limit_applied(ts, "%zu %s past the first %d left out (%s on%s%s)", l->n, what, max,
			      l->first, why ? ": " : "", why ? why : "");
	}
}

struct policies {
	char *names[THROTTLE_MAX_DOMAINS];
	char *cpus[THROTTLE_MAX_DOMAINS];
	size_t n;
};

static void find_policies(struct throttlescan *ts, struct policies *pol) {
	char **names = source_list_dir(ts->root_fd, CPUFREQ_DIR, "policy");
	struct left_out left = {0};
	for (char **p = names; p && *p; p++) {
		if (pol->n == THROTTLE_MAX_DOMAINS) {
			leave_out(&left, *p);
			continue;
		}
		char dir[128], path[192], text[512];
		snprintf(dir, sizeof(dir), CPUFREQ_DIR "/%s", *p);
		snprintf(path, sizeof(path), "%s/related_cpus", dir);
		if (sysfs_read_text(ts->root_fd, path, text, sizeof(text)) < 0) {
			text[0] = '\0';
		}
		pol->names[pol->n] = xstrdup(*p);
		pol->cpus[pol->n] = xstrdup(text);
		pol->n++;
		struct scan_domain *d = &ts->domains[ts->n_domains];
		snprintf(path, sizeof(path), "%s/cpuinfo_max_freq", dir);
		if (ts->n_domains == THROTTLE_MAX_DOMAINS ||
		    !read_khz(ts->root_fd, path, &d->max_hz)) {
			continue; // no hardware maximum to compare with
		}
		set_name(d->name, "cpufreq/", *p);
		snprintf(path, sizeof(path), "%s/scaling_max_freq", dir);
		held_init(&d->cap, path);
		d->khz = true;
		ts->n_domains++;
	}
	say_left_out(ts, &left, "cpufreq policies", THROTTLE_MAX_DOMAINS, NULL);
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

static void find_devfreq(struct throttlescan *ts) {
	char **names = source_list_dir(ts->root_fd, "class/devfreq", NULL);
	struct left_out left = {0};
	for (char **p = names; p && *p; p++) {
		char dir[128];
		snprintf(dir, sizeof(dir), "class/devfreq/%s", *p);
		struct scan_domain spare, *d = ts->n_domains < THROTTLE_MAX_DOMAINS
						       ? &ts->domains[ts->n_domains]
						       : &spare;
		if (!top_frequency(ts->root_fd, dir, &d->max_hz)) {
			continue;
		}
		if (d == &spare) {
			leave_out(&left, *p);
			continue;
		}
		set_name(d->name, "devfreq/", *p);
		char path[192];
		snprintf(path, sizeof(path), "%s/max_freq", dir);
		held_init(&d->cap, path);
		d->khz = false;
		ts->n_domains++;
	}
	if (left.n > 0) {
		limit_applied(ts, "%zu devfreq devices past %d frequency domains left out (%s on)",
			      left.n, THROTTLE_MAX_DOMAINS, left.first);
	}
	source_free_names(names);
}

/* The zone's trips, the first THROTTLE_MAX_TRIPS; true when it has more. */
static bool read_trips(int root_fd, const char *dir, struct throttle_zone_reading *z) {
	for (int k = 0;; k++) {
		char path[256], type[32];
		snprintf(path, sizeof(path), "%s/trip_point_%d_type", dir, k);
		if (sysfs_read_text(root_fd, path, type, sizeof(type)) < 0) {
			return false; // trips are numbered densely from 0
		}
		if (k == THROTTLE_MAX_TRIPS) {
			return true;
		}
		struct throttle_trip *t = &z->trips[z->n_trips++];
		*t = (struct throttle_trip){.temp_mc = THERMAL_TEMP_INVALID};
		snprintf(path, sizeof(path), "%s/trip_point_%d_temp", dir, k);
		int64_t v;
		// a trip at or below 0 °C is one not set: THERMAL_TEMP_INVALID (-274000), or the 0
		// x86_pkg_temp shows for a threshold nobody programmed
		if (sysfs_read_int(root_fd, path, &v) == 0 && v > 0) {
			t->temp_mc = v;
			t->passive = strcmp(type, "passive") == 0;
		}
		snprintf(path, sizeof(path), "%s/trip_point_%d_hyst", dir, k);
		if (sysfs_read_int(root_fd, path, &v) == 0 && v >= 0) {
			t->hyst_mc = v;
		}
	}
}

/* True when @name is "cdev" and digits only (the link, not cdevK_trip_point or _weight). */
static bool is_cdev_link(const char *name, int *k) {
	const char *p = name + 4;
	if (strncmp(name, "cdev", 4) != 0 || !*p || strspn(p, "0123456789") != strlen(p)) {
		return false;
	}
	*k = atoi(p);
	return true;
}

/*
 * The zone's cdevK links (to cooling_deviceN) and cdevK_trip_point, from one listing: the first
 * THROTTLE_MAX_BINDS; how many more there are.
 */
static size_t read_binds(int root_fd, const char *dir, struct throttle_zone_reading *z) {
	char **names = source_list_dir(root_fd, dir, "cdev");
	size_t more = 0;
	for (char **p = names; p && *p; p++) {
		int k;
		char path[256], target[256];
		if (!is_cdev_link(*p, &k)) {
			continue;
		}
		if (z->n_binds == THROTTLE_MAX_BINDS) {
			more++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, *p);
		ssize_t len = readlinkat(root_fd, path, target, sizeof(target) - 1);
		if (len < 0) {
			continue;
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
	source_free_names(names);
	return more;
}

/* True when the zone can explain a cap: a passive trip to cross or a cooling device bound. */
static bool zone_explains(const struct throttle_zone_reading *z) {
	for (size_t k = 0; k < z->n_trips; k++) {
		if (z->trips[k].passive) {
			return true;
		}
	}
	return z->n_binds > 0;
}

static void find_zones(struct throttlescan *ts) {
	char **names = source_list_dir(ts->root_fd, "class/thermal", "thermal_zone");
	struct left_out left = {0}, trips = {0}, binds = {0};
	for (char **p = names; p && *p; p++) {
		char dir[128], path[192], text[THROTTLE_NAME_LEN];
		snprintf(dir, sizeof(dir), "class/thermal/%s", *p);
		// past the limit a spare: read to tell whether the zone would be watched
		struct scan_zone spare,
			*sz = ts->n_zones < THROTTLE_MAX_ZONES ? &ts->zones[ts->n_zones] : &spare;
		*sz = (struct scan_zone){0};
		bool more_trips = read_trips(ts->root_fd, dir, &sz->z);
		if (sz->z.n_trips == 0) {
			continue; // no trip to cross or bind a cooling device at: one failed open
		}
		size_t more_binds = read_binds(ts->root_fd, dir, &sz->z);
		snprintf(path, sizeof(path), "%s/type", dir);
		if (!zone_explains(&sz->z) ||
		    sysfs_read_text(ts->root_fd, path, text, sizeof(text)) <= 0) {
			continue; // nothing a cap could be blamed on: not read each cycle
		}
		if (sz == &spare) {
			leave_out(&left, *p);
			continue;
		}
		if (more_trips) {
			leave_out(&trips, *p);
		}
		if (more_binds > 0) {
			leave_out(&binds, *p);
		}
		set_name(sz->z.name, "", text);
		snprintf(path, sizeof(path), "%s/mode", dir);
		sz->disabled = sysfs_read_text(ts->root_fd, path, text, sizeof(text)) >= 8 &&
			       memcmp(text, "disabled", 8) == 0;
		snprintf(path, sizeof(path), "%s/temp", dir);
		held_init(&sz->temp, path);
		sz->hint = SIZE_MAX;
		ts->n_zones++;
	}
	say_left_out(ts, &left, "thermal zones", THROTTLE_MAX_ZONES,
		     "a cap they explain reads cause cap");
	if (trips.n > 0) {
		limit_applied(ts, "trips past the first %d left out in %s (and %zu zones more)",
			      THROTTLE_MAX_TRIPS, trips.first, trips.n - 1);
	}
	if (binds.n > 0) {
		limit_applied(ts, "bindings past the first %d left out in %s (and %zu zones more)",
			      THROTTLE_MAX_BINDS, binds.first, binds.n - 1);
	}
	source_free_names(names);
}

static void find_cdevs(struct throttlescan *ts, const struct policies *pol) {
	char **names = source_list_dir(ts->root_fd, "class/thermal", "cooling_device");
	struct left_out left = {0};
	for (char **p = names; p && *p; p++) {
		char dir[128], path[192], text[THROTTLE_NAME_LEN];
		struct scan_cdev *sc = &ts->cdevs[ts->n_cdevs];
		snprintf(dir, sizeof(dir), "class/thermal/%s", *p);
		snprintf(path, sizeof(path), "%s/type", dir);
		if (sysfs_read_text(ts->root_fd, path, text, sizeof(text)) <= 0) {
			continue;
		}
		if (ts->n_cdevs == THROTTLE_MAX_CDEVS) {
			leave_out(&left, *p);
			continue;
		}
		struct throttle_cdev_reading *c = &sc->c;
		*c = (struct throttle_cdev_reading){.dev = atoi(*p + 14), .cur_state = -1};
		set_name(c->type, "", text);
		c->caps = throttle_cdev_caps(c->type);
		throttlescan_cdev_domain(c->type, (const char *const *)pol->names,
					 (const char *const *)pol->cpus, pol->n, c->domain);
		snprintf(path, sizeof(path), "%s/cur_state", dir);
		held_init(&sc->state, path);
		sc->hint = SIZE_MAX;
		sc->plausible = (struct channel){.kind = CHANNEL_KIND_STATE,
						 .unit = channel_kind_unit(CHANNEL_KIND_STATE),
						 .resolution = 1};
		int64_t max_state;
		snprintf(path, sizeof(path), "%s/max_state", dir);
		if (sysfs_read_int(ts->root_fd, path, &max_state) == 0 && max_state >= 0) {
			sc->plausible.has_max = true;
			sc->plausible.max = (double)max_state;
		}
		snprintf(path, sizeof(path), "%s/stats/time_in_state_ms", dir);
		held_init(&sc->stats, path);
		ts->n_cdevs++;
	}
	say_left_out(ts, &left, "cooling devices", THROTTLE_MAX_CDEVS,
		     "their states explain no episode");
	source_free_names(names);
}

/* x86: each CPU's thermal_throttle directory (CONFIG_X86_THERMAL_VECTOR). */
static void find_cpus(struct throttlescan *ts) {
	char **names = source_list_dir(ts->root_fd, "devices/system/cpu", "cpu");
	struct left_out left = {0};
	for (char **p = names; p && *p; p++) {
		const char *num = *p + 3;
		if (!*num || strspn(num, "0123456789") != strlen(num)) {
			continue; // cpufreq, cpuidle
		}
		char dir[128], path[192];
		snprintf(dir, sizeof(dir), "devices/system/cpu/%s/thermal_throttle", *p);
		snprintf(path, sizeof(path), "%s/core_throttle_count", dir);
		if (!sysfs_exists(ts->root_fd, path)) {
			continue;
		}
		if (ts->n_cpus == THROTTLE_MAX_CPUS) {
			leave_out(&left, *p);
			continue;
		}
		struct scan_cpu *c = &ts->cpus[ts->n_cpus++];
		c->cpu = atoi(num);
		held_init(&c->core_count, path);
		snprintf(path, sizeof(path), "%s/package_throttle_count", dir);
		held_init(&c->package_count, path);
		snprintf(path, sizeof(path), "%s/core_throttle_total_time_ms", dir);
		held_init(&c->core_time, path);
		snprintf(path, sizeof(path), "%s/package_throttle_total_time_ms", dir);
		held_init(&c->package_time, path);
	}
	say_left_out(ts, &left, "CPUs' thermal_throttle counters", THROTTLE_MAX_CPUS, NULL);
	source_free_names(names);
}

/* The Raspberry Pi: the firmware's under-voltage bit, as the rpi_volt hwmon chip shows it. */
static void find_alarm(struct throttlescan *ts) {
	char **names = source_list_dir(ts->root_fd, "class/hwmon", "hwmon");
	for (char **p = names; p && *p && !ts->has_alarm; p++) {
		char path[192], name[32];
		snprintf(path, sizeof(path), "class/hwmon/%s/name", *p);
		if (sysfs_read_text(ts->root_fd, path, name, sizeof(name)) <= 0 ||
		    strcmp(name, "rpi_volt") != 0) {
			continue;
		}
		snprintf(path, sizeof(path), "class/hwmon/%s/in0_lcrit_alarm", *p);
		if (sysfs_exists(ts->root_fd, path)) {
			held_init(&ts->alarm, path);
			ts->has_alarm = true;
		}
	}
	source_free_names(names);
}

struct throttlescan *throttlescan_create(int root_fd) {
	struct throttlescan *ts = xcalloc(1, sizeof(*ts));
	ts->root_fd = root_fd;
	buf_init(&ts->limits);
	held_init(&ts->alarm, ""); // closed by destroy whether found or not
	struct policies pol = {0};
	find_policies(ts, &pol);
	find_devfreq(ts);
	find_zones(ts);
	find_cdevs(ts, &pol);
	find_cpus(ts);
	find_alarm(ts);
	for (size_t i = 0; i < pol.n; i++) {
		free(pol.names[i]);
		free(pol.cpus[i]);
	}
	return ts;
}

void throttlescan_destroy(struct throttlescan *ts) {
	if (!ts) {
		return;
	}
	for (size_t i = 0; i < ts->n_domains; i++) {
		held_close(&ts->domains[i].cap);
	}
	for (size_t i = 0; i < ts->n_zones; i++) {
		held_close(&ts->zones[i].temp);
	}
	for (size_t i = 0; i < ts->n_cdevs; i++) {
		held_close(&ts->cdevs[i].state);
		held_close(&ts->cdevs[i].stats);
	}
	for (size_t i = 0; i < ts->n_cpus; i++) {
		held_close(&ts->cpus[i].core_count);
		held_close(&ts->cpus[i].package_count);
		held_close(&ts->cpus[i].core_time);
		held_close(&ts->cpus[i].package_time);
	}
	held_close(&ts->alarm);
	buf_finish(&ts->limits);
	free(ts);
}

const char *throttlescan_limits(const struct throttlescan *ts) {
	return ts->limits.len > 0 ? ts->limits.data : NULL;
}

void throttlescan_counts(const struct throttlescan *ts, size_t *domains, size_t *zones,
			 size_t *cdevs) {
	*domains = ts->n_domains + (ts->n_cpus > 0 || ts->has_alarm); // "board" too
	*zones = ts->n_zones;
	*cdevs = ts->n_cdevs;
}

static void read_cooling_counters(int root_fd, struct held *stats,
				  struct throttle_cdev_reading *c) {
	char text[TEXT_MAX];
	struct counters_table table;
	if (held_read_text(root_fd, stats, text, sizeof(text)) < 0 ||
	    counters_parse(COUNTERS_FORMAT_COOLING, text, &table) < 0) {
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

/*
 * A domain's cap this cycle; false when unreadable: a policy whose CPUs are all offline is
 * inactive, and the kernel answers every read of its attributes with EBUSY.
 */
static bool read_cap(int root_fd, struct scan_domain *d, int64_t *cap_hz) {
	int64_t v;
	if (held_read_int(root_fd, &d->cap, &v) < 0 || v <= 0) {
		return false;
	}
	if (d->khz && v > INT64_MAX / 1000) {
		return false;
	}
	*cap_hz = d->khz ? v * 1000 : v;
	return true;
}

/* The board's signals this cycle: a CPU whose count cannot be read is left out. */
static void read_board(struct throttlescan *ts, struct throttle_board_reading *b) {
	b->n_cpus = 0;
	for (size_t i = 0; i < ts->n_cpus; i++) {
		struct scan_cpu *c = &ts->cpus[i];
		int64_t core, package = 0, core_ms = -1, package_ms = -1;
		if (held_read_int(ts->root_fd, &c->core_count, &core) < 0 ||
		    held_read_int(ts->root_fd, &c->package_count, &package) == -EBADMSG) {
			continue;
		}
		if (held_read_int(ts->root_fd, &c->core_time, &core_ms) < 0) {
			core_ms = -1; // before kernel 6.2 there are only the counts
		}
		if (held_read_int(ts->root_fd, &c->package_time, &package_ms) < 0) {
			package_ms = -1;
		}
		b->cpus[b->n_cpus].cpu = c->cpu;
		b->cpus[b->n_cpus].events = core + (package > 0 ? package : 0);
		b->cpus[b->n_cpus].time_ms = core_ms > package_ms ? core_ms : package_ms;
		b->n_cpus++;
	}
	int64_t v;
	b->has_alarm = ts->has_alarm && held_read_int(ts->root_fd, &ts->alarm, &v) == 0;
	b->alarm = b->has_alarm && v != 0;
}

/* The integer in @h's file: the one @same_pass read this cycle, else read from the file. */
static int shared_int(struct throttlescan *ts, const struct sampler *same_pass, struct held *h,
		      size_t *hint, int64_t *out) {
	if (same_pass && sampler_file_int(same_pass, h->path, hint, out)) {
		return 0;
	}
	return held_read_int(ts->root_fd, h, out);
}

/* A zone's temperature as the sampler judges one (thermal zones read m°C). */
static const struct channel zone_temp = {
	.kind = CHANNEL_KIND_TEMPERATURE, .unit = "celsius", .resolution = 0.001};

void throttlescan_read(struct throttlescan *ts, struct throttle_input *in,
		       const struct sampler *same_pass) {
	in->n_domains = in->n_zones = in->n_cdevs = 0;
	for (size_t i = 0; i < ts->n_domains; i++) {
		struct scan_domain *d = &ts->domains[i];
		struct throttle_domain_reading *out = &in->domains[in->n_domains];
		if (!read_cap(ts->root_fd, d, &out->cap_hz)) {
			continue;
		}
		memcpy(out->name, d->name, sizeof(out->name));
		out->max_hz = d->max_hz;
		in->n_domains++;
	}
	for (size_t i = 0; i < ts->n_zones; i++) {
		struct scan_zone *sz = &ts->zones[i];
		struct throttle_zone_reading *z = &in->zones[in->n_zones++];
		*z = sz->z;
		// One rule for samples and episodes: what the sampler rejects opens no episode.
		z->valid = !sz->disabled &&
			   shared_int(ts, same_pass, &sz->temp, &sz->hint, &z->temp_mc) == 0 &&
			   channel_plausible(&zone_temp, (double)z->temp_mc / 1000.0);
	}
	for (size_t i = 0; i < ts->n_cdevs; i++) {
		struct scan_cdev *sc = &ts->cdevs[i];
		struct throttle_cdev_reading *c = &in->cdevs[in->n_cdevs++];
		*c = sc->c;
		if (shared_int(ts, same_pass, &sc->state, &sc->hint, &c->cur_state) < 0 ||
		    !channel_plausible(&sc->plausible, (double)c->cur_state)) {
			c->cur_state = -1;
		}
		if (c->caps) {
			read_cooling_counters(ts->root_fd, &sc->stats, c);
		}
	}
	read_board(ts, &in->board);
}
