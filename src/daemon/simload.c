/* Work declared on the simulated board: the declaration files, written and read (simload.h). */
#include "simload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "xalloc.h"

#define MAGIC "thermlog-simload 1"

/* "A-B" or "N" within [0, @count) into [*from, *to]; false when it does not read. */
static bool index_range(const char *s, size_t len, int count, int *from, int *to) {
	if (len == 3 && strncmp(s, "all", 3) == 0) {
		*from = 0;
		*to = count - 1;
		return true;
	}
	char text[32];
	if (len == 0 || len >= sizeof(text)) {
		return false;
	}
	memcpy(text, s, len);
	text[len] = '\0';
	char *end;
	if (text[0] < '0' || text[0] > '9') {
		return false;
	}
	long a = strtol(text, &end, 10), b = a;
	if (*end == '-') {
		const char *second = end + 1;
		if (*second < '0' || *second > '9') {
			return false;
		}
		b = strtol(second, &end, 10);
	}
	if (*end || a < 0 || b < a || b >= count) {
		return false;
	}
	*from = (int)a;
	*to = (int)b;
	return true;
}

/* A share in percent, 0 .. 100, filling @s whole. */
static bool percent(const char *s, double *out) {
	char *end;
	if (!*s || strpbrk(s, "xXnNiI")) { // strtod's hex, nan and inf
		return false;
	}
	double v = strtod(s, &end);
	if (*end || !(v >= 0 && v <= 100)) {
		return false;
	}
	*out = v;
	return true;
}

bool simload_spec(const char *spec, double *pct, int count) {
	const char *eq = strchr(spec, '=');
	int from, to;
	double v;
	if (!eq || !index_range(spec, (size_t)(eq - spec), count, &from, &to) ||
	    !percent(eq + 1, &v)) {
		return false;
	}
	for (int i = from; i <= to; i++) {
		pct[i] = fmin(100, pct[i] + v);
	}
	return true;
}

/* A time in ms since epoch, 2000-01-01 .. 2200-01-01. */
static bool time_ms(const char *s, int64_t *out) {
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 946684800000LL || v > 7258118400000LL) {
		return false;
	}
	*out = v;
	return true;
}

/* One line (NUL-terminated, no newline) of a declaration; false with *err set. */
static bool parse_line(char *line, size_t no, struct simload_decl *out, bool *has_start,
		       char **err) {
	char *save = NULL;
	char *key = strtok_r(line, " ", &save);
	char *a = key ? strtok_r(NULL, " ", &save) : NULL;
	char *b = a ? strtok_r(NULL, " ", &save) : NULL;
	char *extra = b ? strtok_r(NULL, " ", &save) : NULL;
	if (!key) {
		return true; // an empty line
	}
	bool ok = false;
	if (strcmp(key, "start_ms") == 0 || strcmp(key, "end_ms") == 0) {
		bool start = key[0] == 's';
		ok = a && !b && time_ms(a, start ? &out->start_ms : &out->end_ms);
		*has_start = *has_start || (ok && start);
	} else if (strcmp(key, "cpu") == 0 || strcmp(key, "npu") == 0) {
		bool cpu = key[0] == 'c';
		int count = cpu ? SIM_CPUS : SIM_NPU_CORES;
		double *pct = cpu ? out->load.cpu_pct : out->load.npu_pct;
		int from, to;
		double v;
		ok = a && b && !extra && index_range(a, strlen(a), count, &from, &to) &&
		     percent(b, &v);
		for (int i = from; ok && i <= to; i++) {
			pct[i] = fmin(100, pct[i] + v);
		}
	} else {
		*err = xasprintf("line %zu: unknown key '%s' (start_ms, end_ms, cpu, npu)", no,
				 key);
		return false;
	}
	if (!ok) {
		*err = xasprintf("line %zu: %s: expected %s", no, key,
				 key[1] == 'p' ? "a list (all, N or A-B) and a share 0 .. 100"
					       : "milliseconds since the epoch");
	}
	return ok;
}

bool simload_parse(const char *text, size_t len, struct simload_decl *out, char **err) {
	*err = NULL;
	memset(out, 0, sizeof(*out));
	if (len > SIMLOAD_MAX_LEN || memchr(text, '\0', len)) {
		*err = xstrdup("not a declaration: too long, or not text");
		return false;
	}
	char *copy = xstrndup(text, len);
	bool ok = true, has_start = false;
	size_t no = 0;
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); ok && line;
	     line = strtok_r(NULL, "\n", &save)) {
		no++;
		if (no == 1) {
			ok = strcmp(line, MAGIC) == 0;
			if (!ok) {
				*err = xstrdup("line 1: expected '" MAGIC "'");
			}
			continue;
		}
		ok = parse_line(line, no, out, &has_start, err);
	}
	free(copy);
	if (ok && !has_start) {
		*err = xstrdup(no == 0 ? "empty" : "no start_ms line");
		ok = false;
	}
	if (ok && out->end_ms && out->end_ms < out->start_ms) {
		*err = xstrdup("end_ms is before start_ms");
		ok = false;
	}
	return ok;
}

/* "KEY A-B PCT" lines for runs of equal shares of @pct (@count), zeros left out. */
static void format_shares(struct buf *out, const char *key, const double *pct, int count) {
	for (int i = 0; i < count;) {
		int j = i;
		while (j + 1 < count && pct[j + 1] == pct[i]) {
			j++;
		}
		if (pct[i] > 0) {
			if (j > i) {
				buf_printf(out, "%s %d-%d %.17g\n", key, i, j, pct[i]);
			} else {
				buf_printf(out, "%s %d %.17g\n", key, i, pct[i]);
			}
		}
		i = j + 1;
	}
}

void simload_format(const struct simload_decl *d, struct buf *out) {
	buf_printf(out, MAGIC "\nstart_ms %" PRId64 "\n", d->start_ms);
	format_shares(out, "cpu", d->load.cpu_pct, SIM_CPUS);
	format_shares(out, "npu", d->load.npu_pct, SIM_NPU_CORES);
}

int simload_declare(const char *root, const struct simload_decl *d) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char *hidden = xasprintf("%s/" SIMLOAD_DIR "/.%ld.%ld", root, (long)getpid(), ts.tv_nsec);
	char *name = xasprintf("%s/" SIMLOAD_DIR "/%ld.%ld", root, (long)getpid(), ts.tv_nsec);
	struct buf text = {0};
	simload_format(d, &text);
	int fd = open(hidden, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int rc = fd < 0 ? -errno : 0;
	if (rc == 0 && flock(fd, LOCK_EX) < 0) {
		rc = -errno;
	}
	if (rc == 0 && write(fd, text.data, text.len) != (ssize_t)text.len) {
		rc = -EIO;
	}
	if (rc == 0 && rename(hidden, name) < 0) {
		rc = -errno;
	}
	if (rc < 0 && fd >= 0) {
		unlink(hidden);
		close(fd);
	}
	buf_finish(&text);
	free(hidden);
	free(name);
	return rc < 0 ? rc : fd;
}

int simload_end(int fd, int64_t end_ms) {
	char line[64];
	int len = snprintf(line, sizeof(line), "end_ms %" PRId64 "\n", end_ms);
	int rc = 0;
	errno = 0;
	if (lseek(fd, 0, SEEK_END) < 0 || write(fd, line, (size_t)len) != len) {
		rc = errno ? -errno : -EIO;
	}
	if (close(fd) < 0 && rc == 0) {
		rc = -errno;
	}
	return rc;
}

/* Adds declaration @d's part of [@from, @to) to @out; true when it ended by @to (or was killed). */
static bool add_decl(const struct simload_decl *d, bool running, int64_t from, int64_t to,
		     struct simboard_load *out) {
	int64_t end = running || d->end_ms == 0 ? to : d->end_ms;
	int64_t lo = d->start_ms > from ? d->start_ms : from, hi = end < to ? end : to;
	if (hi > lo) {
		double w = (double)(hi - lo) / (double)(to - from);
		for (int c = 0; c < SIM_CPUS; c++) {
			out->cpu_pct[c] += w * d->load.cpu_pct[c];
		}
		for (int k = 0; k < SIM_NPU_CORES; k++) {
			out->npu_pct[k] += w * d->load.npu_pct[k];
		}
	}
	return !running && (d->end_ms == 0 || d->end_ms <= to);
}

/* Reads and locks-probes the declaration @name of @dir; false when it is to be removed unread. */
static bool read_decl(int dir, const char *name, struct simload_decl *d, bool *running) {
	int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	*running = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	char text[SIMLOAD_MAX_LEN + 1];
	ssize_t n = read(fd, text, sizeof(text));
	close(fd);
	char *err = NULL;
	bool ok = n >= 0 && simload_parse(text, (size_t)n, d, &err);
	if (!ok) {
		log_warn("demo: %s/%s: %s: removed", SIMLOAD_DIR, name,
			 err ? err : strerror(errno));
	}
	free(err);
	return ok;
}

void simload_collect(int root_fd, int64_t from_ms, int64_t to_ms, struct simboard_load *out) {
	memset(out, 0, sizeof(*out));
	int dir = openat(root_fd, SIMLOAD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
	if (!d) {
		if (dir >= 0) {
			close(dir);
		}
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.') {
			continue; // ".", "..", and a declaration being written
		}
		struct simload_decl decl;
		bool running = false;
		bool done = !read_decl(dir, e->d_name, &decl, &running) ||
			    (to_ms > from_ms && add_decl(&decl, running, from_ms, to_ms, out)) ||
			    (to_ms <= from_ms && !running);
		if (done) {
			unlinkat(dir, e->d_name, 0);
		}
	}
	closedir(d);
	for (int c = 0; c < SIM_CPUS; c++) {
		out->cpu_pct[c] = fmin(100, out->cpu_pct[c]);
	}
	for (int k = 0; k < SIM_NPU_CORES; k++) {
		out->npu_pct[k] = fmin(100, out->npu_pct[k]);
	}
}
