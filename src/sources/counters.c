/*
 * Residency and energy counters: the kernel's formats parsed strictly, deltas between a run's
 * start and stop, and trapezoid integration of power samples (the fallback without a counter).
 */
#include "counters.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

/* devfreq's table may be one page; cpufreq's has a line per OPP. Twice a 16 KiB page is plenty. */
#define COUNTERS_TEXT_MAX 32768
#define COUNTERS_NAME_MAX 256 // a type, a chip's name, an energy counter
/* A file kept in a snapshot: a page of the kernel's (64 KiB pages on some arm64 kernels). */
#define COUNTERS_SNAPSHOT_MAX 65536

/* Parses an unsigned decimal at *p (after blanks); advances *p. False if none or overflow. */
static bool parse_u64(const char **p, int64_t *out) {
	const char *s = *p;
	while (*s == ' ' || *s == '\t') {
		s++;
	}
	if (*s < '0' || *s > '9') {
		return false;
	}
	int64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX - (*s - '0')) / 10) {
			return false;
		}
		v = v * 10 + (*s - '0');
	}
	*p = s;
	*out = v;
	return true;
}

/* True when only blanks remain before the end of the line at @p. */
static bool line_end(const char *p) {
	while (*p == ' ' || *p == '\t' || *p == '\r') {
		p++;
	}
	return *p == '\n' || *p == '\0';
}

static const char *next_line(const char *p) {
	const char *nl = strchr(p, '\n');
	return nl ? nl + 1 : p + strlen(p);
}

static void add_level(struct counters_table *t, size_t *cap, int64_t level, int64_t time_ms) {
	t->levels = xgrow(t->levels, cap, t->n + 1, sizeof(*t->levels));
	t->levels[t->n++] = (struct counters_level){.level = level, .time_ms = time_ms};
}

static int cmp_level(const void *a, const void *b) {
	const struct counters_level *x = a, *y = b;
	return (x->level > y->level) - (x->level < y->level);
}

/* "<kHz> <10 ms units>" per line (cpufreq_stats.c: "%u %llu\n"). */
static int parse_cpufreq_line(const char *p, int64_t *level, int64_t *time_ms) {
	int64_t khz, ticks;
	if (!parse_u64(&p, &khz) || !parse_u64(&p, &ticks) || !line_end(p) ||
	    khz > INT64_MAX / 1000 || ticks > INT64_MAX / 10) {
		return -EBADMSG;
	}
	*level = khz * 1000;
	*time_ms = ticks * 10;
	return 0;
}

/* "state<N>\t<ms>" per line (thermal_sysfs.c: "state%u\t%llu\n"). */
static int parse_cooling_line(const char *p, int64_t *level, int64_t *time_ms) {
	if (strncmp(p, "state", 5) != 0) {
		return -EBADMSG;
	}
	p += 5;
	if (*p < '0' || *p > '9' || !parse_u64(&p, level) || !parse_u64(&p, time_ms) ||
	    !line_end(p)) {
		return -EBADMSG;
	}
	return 0;
}

/*
 * One devfreq row: "[*] <Hz>:" then @n transition counts and time(ms), each printed "%10u" /
 * "%10llu". Counts or a time wider than 10 digits run into their neighbour, so when the
 * blank-separated fields do not number n + 1 the time is read by its fixed column instead.
 */
static int parse_devfreq_row(const char *p, size_t n, int64_t *level, int64_t *time_ms) {
	while (*p == ' ' || *p == '*') {
		p++;
	}
	if (!parse_u64(&p, level) || *p != ':') {
		return -EBADMSG;
	}
	const char *row = ++p;
	const char *end = row;
	while (*end && *end != '\n') {
		end++;
	}
	size_t fields = 0;
	int64_t v = 0;
	const char *q = row;
	while (!line_end(q)) {
		if (!parse_u64(&q, &v)) {
			return -EBADMSG;
		}
		fields++;
	}
	if (fields == n + 1) {
		*time_ms = v;
		return 0;
	}
	if ((size_t)(end - row) >= 10 * n + 10) {
		q = row + 10 * n;
		if (parse_u64(&q, time_ms) && line_end(q)) {
			return 0;
		}
	}
	return -EBADMSG;
}

static int parse_devfreq(const char *text, struct counters_table *out, size_t *cap) {
	// First count the rows: lines whose label before ':' is a number.
	size_t rows = 0;
	for (const char *p = text; *p; p = next_line(p)) {
		const char *s = p;
		int64_t level;
		while (*s == ' ' || *s == '*') {
			s++;
		}
		if (parse_u64(&s, &level) && *s == ':') {
			rows++;
		}
	}
	if (rows == 0) {
		return -EBADMSG;
	}
	bool header = false, total = false;
	for (const char *p = text; *p; p = next_line(p)) {
		if (line_end(p)) {
			continue;
		}
		const char *s = p;
		int64_t level, time_ms;
		while (*s == ' ' || *s == '*') {
			s++;
		}
		if (*s == ':' || strncmp(s, "From", 4) == 0) {
			header = true; // "     From  :   To" and the frequency header
			continue;
		}
		if (strncmp(s, "Total transition", 16) == 0) {
			total = true;
			continue;
		}
		int rc = parse_devfreq_row(p, rows, &level, &time_ms);
		if (rc < 0) {
			return rc;
		}
		add_level(out, cap, level, time_ms);
	}
	return header && total ? 0 : -EBADMSG;
}

int counters_parse(enum counters_format format, const char *text, struct counters_table *out) {
	*out = (struct counters_table){0};
	size_t cap = 0;
	const char *s = text;
	while (*s == ' ' || *s == '\t' || *s == '\n') {
		s++;
	}
	if (!*s) {
		return -ENODATA;
	}
	int rc = 0;
	if (format == COUNTERS_FORMAT_DEVFREQ) {
		if (strncmp(s, "Not Supported.", 14) == 0) {
			return -ENOTSUP;
		}
		rc = parse_devfreq(text, out, &cap);
	} else {
		for (const char *p = text; *p && rc == 0; p = next_line(p)) {
			if (line_end(p)) {
				continue;
			}
			int64_t level, time_ms;
			rc = format == COUNTERS_FORMAT_CPUFREQ
				     ? parse_cpufreq_line(p, &level, &time_ms)
				     : parse_cooling_line(p, &level, &time_ms);
			if (rc == 0) {
				add_level(out, &cap, level, time_ms);
			}
		}
	}
	if (rc == 0) {
		qsort(out->levels, out->n, sizeof(*out->levels), cmp_level);
		for (size_t i = 1; i < out->n; i++) {
			if (out->levels[i].level == out->levels[i - 1].level) {
				rc = -EBADMSG;
			}
		}
	}
	if (rc < 0) {
		counters_table_finish(out);
	}
	return rc;
}

int counters_read(int root_fd, const char *path, enum counters_format format,
		  struct counters_table *out) {
	*out = (struct counters_table){0};
	char *text = xcalloc(1, COUNTERS_TEXT_MAX);
	int len = sysfs_read_text(root_fd, path, text, COUNTERS_TEXT_MAX);
	int rc = len == -ENOBUFS ? -EFBIG : len < 0 ? len : 0;
	if (rc == 0) {
		rc = strlen(text) == (size_t)len ? counters_parse(format, text, out) : -EBADMSG;
	}
	free(text);
	return rc;
}

void counters_table_finish(struct counters_table *table) {
	if (!table) {
		return;
	}
	free(table->levels);
	*table = (struct counters_table){0};
}

int counters_residency(const struct counters_table *start, const struct counters_table *stop,
		       struct counters_residency *out) {
	*out = (struct counters_residency){0};
	if (start->n != stop->n || start->n == 0) {
		return -ESTALE;
	}
	for (size_t i = 0; i < start->n; i++) {
		if (start->levels[i].level != stop->levels[i].level ||
		    stop->levels[i].time_ms < start->levels[i].time_ms) {
			return -ESTALE;
		}
	}
	out->n = start->n;
	out->levels = xcalloc(out->n, sizeof(*out->levels));
	out->top_level = start->levels[out->n - 1].level;
	for (size_t i = 0; i < out->n; i++) {
		int64_t d = stop->levels[i].time_ms - start->levels[i].time_ms;
		out->levels[i] =
			(struct counters_level){.level = start->levels[i].level, .time_ms = d};
		out->total_ms += d;
		if (i + 1 < out->n) {
			out->below_top_ms += d;
		}
		if (i > 0) {
			out->active_ms += d;
		}
	}
	return 0;
}

void counters_residency_finish(struct counters_residency *r) {
	if (!r) {
		return;
	}
	free(r->levels);
	*r = (struct counters_residency){0};
}

void counters_cooling_any(const struct counters_residency *devices, size_t n, int64_t *low_ms,
			  int64_t *high_ms) {
	int64_t low = 0, sum = 0, run = 0;
	for (size_t i = 0; i < n; i++) {
		low = devices[i].active_ms > low ? devices[i].active_ms : low;
		sum += devices[i].active_ms;
		run = devices[i].total_ms > run ? devices[i].total_ms : run;
	}
	*low_ms = low;
	*high_ms = sum < run ? sum : run;
}

enum counters_energy_method counters_energy_delta(uint64_t start_uj, uint64_t stop_uj,
						  uint64_t max_uj, double *joules) {
	if (stop_uj >= start_uj) {
		*joules = (double)(stop_uj - start_uj) / 1e6;
		return COUNTERS_ENERGY_DELTA;
	}
	if (max_uj > 0 && start_uj <= max_uj) {
		// powercap counts 0..max_energy_range_uj and then starts over at 0
		*joules = (double)(max_uj - start_uj + stop_uj) / 1e6;
		return COUNTERS_ENERGY_WRAP;
	}
	*joules = (double)stop_uj / 1e6;
	return COUNTERS_ENERGY_RESET;
}

const char *counters_energy_method_name(enum counters_energy_method method) {
	switch (method) {
	case COUNTERS_ENERGY_DELTA:
		return "counter";
	case COUNTERS_ENERGY_WRAP:
		return "counter (wrapped)";
	case COUNTERS_ENERGY_RESET:
		return "counter (reset)";
	}
	return "unknown";
}

/* The power at @t on the line through (t0, p0) and (t1, p1). */
static double lerp_power(double t0, double p0, double t1, double p1, double t) {
	return p0 + (p1 - p0) * (t - t0) / (t1 - t0);
}

int counters_integrate_power(const struct counters_power_sample *samples, size_t n, double start_s,
			     double stop_s, double max_gap_s, struct counters_integral *out) {
	*out = (struct counters_integral){0};
	if (!(stop_s > start_s)) {
		return -EINVAL;
	}
	ptrdiff_t prev = -1;
	for (size_t i = 0; i < n; i++) {
		const struct counters_power_sample *b = &samples[i];
		if (!isfinite(b->power_w) || !isfinite(b->t_s)) {
			prev = -1; // a failed read breaks the pair
			continue;
		}
		if (b->t_s >= start_s && b->t_s <= stop_s) {
			out->n_samples++;
		}
		if (prev < 0) {
			prev = (ptrdiff_t)i;
			continue;
		}
		const struct counters_power_sample *a = &samples[prev];
		prev = (ptrdiff_t)i;
		double t0 = fmax(a->t_s, start_s), t1 = fmin(b->t_s, stop_s);
		if (!(b->t_s > a->t_s) || b->t_s - a->t_s > max_gap_s || !(t1 > t0)) {
			continue;
		}
		double p0 = lerp_power(a->t_s, a->power_w, b->t_s, b->power_w, t0);
		double p1 = lerp_power(a->t_s, a->power_w, b->t_s, b->power_w, t1);
		out->joules += (t1 - t0) * (p0 + p1) / 2;
		out->covered_s += t1 - t0;
	}
	out->coverage = out->covered_s / (stop_s - start_s);
	if (out->covered_s <= 0) {
		out->joules = NAN;
		return -ENODATA;
	}
	return 0;
}

double counters_power_hwmon_w(int64_t uw) {
	return (double)uw / 1e6;
}

double counters_power_vi_w(int64_t mv, int64_t ma) {
	return (double)mv * (double)ma / 1e6;
}

double counters_power_iio_w(double raw, double scale) {
	return raw * scale / 1e3;
}

/* --- snapshots -------------------------------------------------------------------------------- */

static const char *const snap_kind_names[COUNTERS_SNAP_KINDS] = {"cpufreq", "devfreq", "cooling",
								 "energy"};

const char *counters_snap_kind_name(enum counters_snap_kind kind) {
	return snap_kind_names[kind];
}

bool counters_snap_kind_parse(const char *name, enum counters_snap_kind *out) {
	for (int k = 0; k < COUNTERS_SNAP_KINDS; k++) {
		if (strcmp(name, snap_kind_names[k]) == 0) {
			*out = (enum counters_snap_kind)k;
			return true;
		}
	}
	return false;
}

void counters_snapshot_add(struct counters_snapshot *s, enum counters_snap_kind kind, char *key,
			   char *path, char *text) {
	s->files = xgrow(s->files, &s->cap, s->n + 1, sizeof(*s->files));
	s->files[s->n++] =
		(struct counters_snap_file){.kind = kind, .key = key, .path = path, .text = text};
}

void counters_snapshot_finish(struct counters_snapshot *s) {
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].key);
		free(s->files[i].path);
		free(s->files[i].text);
	}
	free(s->files);
	*s = (struct counters_snapshot){0};
}

const struct counters_snap_file *counters_snapshot_find(const struct counters_snapshot *s,
							const char *path) {
	const struct counters_snap_file *f = s->files, *end = s->files + s->n;
	while (f < end && strcmp(f->path, path) != 0) {
		f++;
	}
	return f < end ? f : NULL;
}

struct snapshot_adder {
	struct counters_snapshot *s;
	enum counters_snap_kind kind;
	const char *label;
};

static void add_file(void *ctx, const char *name, const char *path, char *text) {
	struct snapshot_adder *a = ctx;
	counters_snapshot_add(a->s, a->kind, xasprintf("%s/%s", a->label, name), xstrdup(path),
			      text);
}

/* Each entry NAME of @dir starting with @prefix (NULL: all) whose @dir/NAME/@file reads. */
static void add_each(struct counters_snapshot *s, int root_fd, enum counters_snap_kind kind,
		     const char *dir, const char *prefix, const char *file, const char *label) {
	struct snapshot_adder a = {.s = s, .kind = kind, .label = label};
	source_read_each(root_fd, dir, prefix, file, COUNTERS_SNAPSHOT_MAX, add_file, &a);
}

/* Each cooling device's stats/time_in_state_ms, keyed by its type and number. */
static void add_cooling(struct counters_snapshot *s, int root_fd) {
	char **names = source_list_dir(root_fd, "class/thermal", "cooling_device");
	for (char **p = names; p && *p; p++) {
		char *path = xasprintf("class/thermal/%s/stats/time_in_state_ms", *p);
		char *type_path = xasprintf("class/thermal/%s/type", *p);
		char *type = sysfs_read_alloc(root_fd, type_path, COUNTERS_NAME_MAX);
		char *text = sysfs_read_alloc(root_fd, path, COUNTERS_SNAPSHOT_MAX);
		if (text) {
			counters_snapshot_add(s, COUNTERS_SNAP_COOLING,
					      xasprintf("cooling/%s#%s", type ? type : "",
							*p + strlen("cooling_device")),
					      path, text);
		} else {
			free(path);
		}
		free(type);
		free(type_path);
	}
	source_free_names(names);
}

/* Each hwmon chip's energyN_input, keyed by the chip's name. */
static void add_energy(struct counters_snapshot *s, int root_fd) {
	char **names = source_list_dir(root_fd, "class/hwmon", "hwmon");
	for (char **p = names; p && *p; p++) {
		char *name_path = xasprintf("class/hwmon/%s/name", *p);
		char *chip = sysfs_read_alloc(root_fd, name_path, COUNTERS_NAME_MAX);
		free(name_path);
		char *dir = xasprintf("class/hwmon/%s", *p);
		char **files = source_list_dir(root_fd, dir, "energy");
		for (char **f = files; f && *f; f++) {
			size_t len = strlen(*f);
			if (len < 7 || strcmp(*f + len - 6, "_input") != 0) {
				continue;
			}
			char *path = xasprintf("%s/%s", dir, *f);
			char *text = sysfs_read_alloc(root_fd, path, COUNTERS_NAME_MAX);
			if (text) {
				(*f)[len - 6] = '\0';
				counters_snapshot_add(
					s, COUNTERS_SNAP_ENERGY,
					xasprintf("hwmon/%s/%s", chip ? chip : *p, *f), path, text);
			} else {
				free(path);
			}
		}
		source_free_names(files);
		free(dir);
		free(chip);
	}
	source_free_names(names);
}

void counters_snapshot_read(int root_fd, struct counters_snapshot *s) {
	add_each(s, root_fd, COUNTERS_SNAP_CPUFREQ, "devices/system/cpu/cpufreq", "policy",
		 "stats/time_in_state", "cpufreq");
	add_each(s, root_fd, COUNTERS_SNAP_DEVFREQ, "class/devfreq", NULL, "trans_stat", "devfreq");
	add_cooling(s, root_fd);
	add_energy(s, root_fd);
}
