/* cpufreq: one channel per frequency domain (policyN, or an old kernel's per-CPU directory), kHz →
 * Hz. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "log.h"
#include "xalloc.h"

/* This driver's ops, defined at the end of the file; sampler.c's table names it. */
extern const struct source_ops source_cpufreq;

#define CPU_DIR "devices/system/cpu"

/* Parses a "0 1 2 3" CPU list into @cpus; returns the count, or -1 on garbage. */
static int parse_cpus(const char *text, int *cpus, int max) {
	int n = 0;
	const char *p = text;
	while (*p) {
		if (*p == ' ') {
			p++;
			continue;
		}
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > 65535 || n == max) {
			return -1;
		}
		cpus[n++] = (int)v;
		p = end;
	}
	return n;
}

/* "CPU 0-3", "CPU 4,6": the label of a domain from its CPU list. */
static char *cpus_label(const int *cpus, int n) {
	struct buf b;
	buf_init(&b);
	buf_puts(&b, "CPU ");
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1) {
			j++;
		}
		buf_printf(&b, i ? ",%d" : "%d", cpus[i]);
		if (j > i) {
			buf_printf(&b, "-%d", cpus[j]);
		}
		i = j + 1;
	}
	return buf_steal(&b);
}

/* Adds the domain in @dir (which holds scaling_cur_freq or cpuinfo_cur_freq). */
static void add_domain(struct source_ctx *ctx, struct sensor_list *out, const char *dir,
		       const char *id, const int *related, int n_related, const int *affected,
		       int n_affected) {
	char path[256];
	snprintf(path, sizeof(path), "%s/scaling_cur_freq", dir);
	if (!sysfs_exists(ctx->root_fd, path)) {
		// cpuinfo_cur_freq asks the hardware; some drivers only offer that.
		snprintf(path, sizeof(path), "%s/cpuinfo_cur_freq", dir);
		if (!sysfs_exists(ctx->root_fd, path)) {
			log_debug("skipping %s: no scaling_cur_freq or cpuinfo_cur_freq", dir);
			return;
		}
	}
	char *key = xasprintf("cpufreq/%s", id);
	char *label = cpus_label(related, n_related);
	struct sensor *s = sensor_list_add(out, &source_cpufreq, key, "cpufreq", label,
					   CHANNEL_KIND_FREQUENCY, 1, path);
	free(key);
	free(label);
	s->scale = 1000; // kHz

	struct buf meta;
	struct json j;
	source_meta_begin(&meta, &j);
	snprintf(path, sizeof(path), "%s/scaling_governor", dir);
	source_meta_text(ctx->root_fd, path, &j, "governor");
	snprintf(path, sizeof(path), "%s/scaling_driver", dir);
	source_meta_text(ctx->root_fd, path, &j, "driver");
	json_key(&j, "affected_cpus");
	json_array_begin(&j);
	for (int i = 0; i < n_affected; i++) {
		json_int(&j, affected[i]);
	}
	json_array_end(&j);
	source_meta_end(out, &meta, &j);
}

static void discover_policy(struct source_ctx *ctx, struct sensor_list *out, const char *name) {
	char dir[128], path[192], text[512];
	int related[256], affected[256], n_related, n_affected;
	snprintf(dir, sizeof(dir), CPU_DIR "/cpufreq/%s", name);
	snprintf(path, sizeof(path), "%s/affected_cpus", dir);
	int rc = sysfs_read_text(ctx->root_fd, path, text, sizeof(text));
	if (rc < 0 || (n_affected = parse_cpus(text, affected, 256)) < 0) {
		log_debug("skipping %s: %s", path, rc < 0 ? strerror(-rc) : "not a CPU list");
		return;
	}
	if (n_affected == 0) {
		// Every CPU of the policy is offline: its attributes would fail with EBUSY.
		log_debug("skipping %s: all its CPUs are offline", dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/related_cpus", dir);
	if (sysfs_read_text(ctx->root_fd, path, text, sizeof(text)) < 0 ||
	    (n_related = parse_cpus(text, related, 256)) <= 0) {
		memcpy(related, affected, sizeof(int) * (size_t)n_affected);
		n_related = n_affected;
	}
	add_domain(ctx, out, dir, name, related, n_related, affected, n_affected);
}

/* Older kernels give each CPU its own cpuN/cpufreq directory instead of a link to a policy. */
static void discover_cpu_dir(struct source_ctx *ctx, struct sensor_list *out, const char *name) {
	char dir[128], path[192];
	char *end;
	long cpu = strtol(name + 3, &end, 10);
	if (end == name + 3 || *end || cpu < 0 || cpu > 65535) {
		return; // cpuidle, cpufreq, ...
	}
	snprintf(dir, sizeof(dir), CPU_DIR "/%s/cpufreq", name);
	struct stat st;
	if (fstatat(ctx->root_fd, dir, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
		return; // absent, or a link to a policy (already counted)
	}
	int64_t online = 1;
	snprintf(path, sizeof(path), CPU_DIR "/%s/online", name);
	if (sysfs_read_int(ctx->root_fd, path, &online) == 0 && online == 0) {
		log_debug("skipping %s: CPU offline", dir);
		return;
	}
	int id = (int)cpu;
	add_domain(ctx, out, dir, name, &id, 1, &id, 1);
}

static void cpufreq_discover(struct source_ctx *ctx, struct sensor_list *out) {
	source_discover_each(ctx, out, CPU_DIR "/cpufreq", "policy", discover_policy);
	source_discover_each(ctx, out, CPU_DIR, "cpu", discover_cpu_dir);
}

const struct source_ops source_cpufreq = {
	.config_id = SOURCE_CPUFREQ,
	.discover = cpufreq_discover,
	.read = source_read_scaled, // one integer attribute, scaled
};
