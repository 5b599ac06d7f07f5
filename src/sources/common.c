/* What every source shares: strict sysfs reads and parsing, sorted directory lists, the sensor
 * list. */
#include "source.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "xalloc.h"

int sysfs_parse_int(const char *text, size_t len, int64_t *out) {
	if (len > 0 && text[len - 1] == '\n') {
		len--;
	}
	if (len == 0) {
		return -ENODATA;
	}
	size_t i = 0;
	bool neg = false;
	if (text[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == len) {
		return -EBADMSG;
	}
	// Accumulate negatively so INT64_MIN parses too.
	int64_t v = 0;
	bool range = false;
	for (; i < len; i++) {
		if (text[i] < '0' || text[i] > '9') {
			return -EBADMSG;
		}
		int d = text[i] - '0';
		if (v < (INT64_MIN + d) / 10) {
			range = true;
		} else {
			v = v * 10 - d;
		}
	}
	if (range || (!neg && v == INT64_MIN)) {
		return -ERANGE;
	}
	*out = neg ? v : -v;
	return 0;
}

int sysfs_read_text(int root_fd, const char *path, char *buf, size_t size) {
	int fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	size_t len = 0;
	int rc = 0;
	for (;;) {
		if (len + 1 >= size) {
			rc = -ENOBUFS;
			break;
		}
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			rc = -errno;
			break;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (rc < 0) {
		return rc;
	}
	if (len > 0 && buf[len - 1] == '\n') {
		len--;
	}
	buf[len] = '\0';
	return (int)len;
}

int sysfs_hold(int *fd, int dir_fd, const char *path) {
	struct stat st;
	if (*fd >= 0 && (fstat(*fd, &st) < 0 || st.st_nlink == 0)) {
		close(*fd);
		*fd = -1;
	}
	if (*fd < 0 && (*fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		return -errno;
	}
	return 0;
}

char *sysfs_read_alloc(int root_fd, const char *path, size_t max) {
	// max bytes and a newline, then room for the read that finds the end (sysfs_read_text())
	char *text = xrealloc(NULL, max + 3);
	int len = sysfs_read_text(root_fd, path, text, max + 3);
	while (len > 0 &&
	       (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\n')) {
		text[--len] = '\0';
	}
	if (len < 0 || (size_t)len > max) {
		free(text);
		return NULL;
	}
	return xrealloc(text, (size_t)len + 1);
}

int sysfs_read_int(int root_fd, const char *path, int64_t *out) {
	char buf[64];
	int len = sysfs_read_text(root_fd, path, buf, sizeof(buf));
	if (len < 0) {
		return len == -ENOBUFS ? -EBADMSG : len;
	}
	return sysfs_parse_int(buf, (size_t)len, out);
}

bool sysfs_exists(int root_fd, const char *path) {
	return faccessat(root_fd, path, F_OK, 0) == 0;
}

int source_read_scaled(struct source_ctx *ctx, struct sensor *sensor, double *value) {
	if (sensor->fd < 0) {
		sensor->fd = openat(ctx->root_fd, sensor->path, O_RDONLY | O_CLOEXEC);
		if (sensor->fd < 0) {
			return -errno;
		}
	}
	char buf[64];
	ssize_t n = ctx->pread(sensor->fd, buf, sizeof(buf), 0);
	int rc;
	int64_t raw = 0;
	if (n < 0) {
		rc = -errno;
	} else if ((size_t)n == sizeof(buf)) {
		rc = -EBADMSG; // no integer attribute is this long
	} else {
		rc = sysfs_parse_int(buf, (size_t)n, &raw);
	}
	if (rc < 0) {
		// A vanished device keeps failing on this fd: reopen next time to learn its fate.
		close(sensor->fd);
		sensor->fd = -1;
		return rc;
	}
	*value = ((double)raw + sensor->raw_offset) * sensor->scale / sensor->divisor;
	sensor->raw = raw;
	sensor->raw_pass = ctx->pass;
	return 0;
}

/* Splits a name into its non-digit prefix length and trailing number (or -1). */
static long long trailing_number(const char *s, size_t *prefix_len) {
	size_t len = strlen(s), i = len;
	while (i > 0 && isdigit((unsigned char)s[i - 1])) {
		i--;
	}
	*prefix_len = i;
	if (i == len || len - i > 18) {
		return -1;
	}
	return strtoll(s + i, NULL, 10);
}

int source_name_cmp(const char *a, const char *b) {
	size_t pa, pb;
	long long na = trailing_number(a, &pa), nb = trailing_number(b, &pb);
	if (na >= 0 && nb >= 0 && pa == pb && strncmp(a, b, pa) == 0 && na != nb) {
		return na < nb ? -1 : 1;
	}
	return strcmp(a, b);
}

static int cmp_names(const void *a, const void *b) {
	return source_name_cmp(*(char *const *)a, *(char *const *)b);
}

char **source_list_dir(int root_fd, const char *dir, const char *prefix) {
	int fd = openat(root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		return NULL;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		int saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (prefix ? strncmp(e->d_name, prefix, strlen(prefix)) != 0
			   : e->d_name[0] == '.') {
			continue;
		}
		names = xgrow(names, &cap, n + 2, sizeof(*names));
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	names = xgrow(names, &cap, n + 1, sizeof(*names));
	names[n] = NULL;
	qsort(names, n, sizeof(*names), cmp_names);
	return names;
}

void source_read_each(int root_fd, const char *dir, const char *prefix, const char *file,
		      size_t max, source_text_fn fn, void *ctx) {
	char **names = source_list_dir(root_fd, dir, prefix);
	for (char **p = names; p && *p; p++) {
		char *path = xasprintf("%s/%s/%s", dir, *p, file);
		char *text = sysfs_read_alloc(root_fd, path, max);
		if (text) {
			fn(ctx, *p, path, text);
		}
		free(path);
	}
	source_free_names(names);
}

void source_free_names(char **names) {
	if (!names) {
		return;
	}
	for (char **p = names; *p; p++) {
		free(*p);
	}
	free(names);
}

void source_discover_each(struct source_ctx *ctx, struct sensor_list *out, const char *dir,
			  const char *prefix, source_entry_fn fn) {
	char **names = source_list_dir(ctx->root_fd, dir, prefix);
	for (char **p = names; p && *p; p++) {
		fn(ctx, out, *p);
	}
	source_free_names(names);
}

void source_key_sanitize(char *s) {
	for (; *s; s++) {
		if (*s <= ' ' || *s > '~') {
			*s = '_';
		}
	}
}

/* A key taken, and the next "#N" to try for a key added again under it. */
struct sensor_key_slot {
	const char *key; // the channel's own string; NULL = empty slot
	int next;
};

static size_t key_hash(const char *key) {
	uint64_t h = 1469598103934665603ULL; // FNV-1a
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h = (h ^ *p) * 1099511628211ULL;
	}
	return (size_t)h;
}

/* The slot of @key in the list's index: its own, or the empty one it would take. */
static struct sensor_key_slot *key_slot(const struct sensor_list *list, const char *key) {
	size_t mask = list->index_cap - 1;
	for (size_t i = key_hash(key) & mask;; i = (i + 1) & mask) {
		struct sensor_key_slot *slot = &list->index[i];
		if (!slot->key || strcmp(slot->key, key) == 0) {
			return slot;
		}
	}
}

/* Makes room for one more key (at most half full), indexing every channel when first used. */
static void key_index_grow(struct sensor_list *list) {
	if (list->index && 2 * (list->index_n + 1) <= list->index_cap) {
		return;
	}
	struct sensor_key_slot *old = list->index;
	size_t old_cap = list->index_cap;
	size_t cap = 64;
	while (cap < 2 * (list->n + list->index_n + 2)) {
		cap *= 2;
	}
	list->index = xcalloc(cap, sizeof(*list->index));
	list->index_cap = cap;
	list->index_n = 0;
	if (old) {
		for (size_t i = 0; i < old_cap; i++) {
			if (old[i].key) {
				*key_slot(list, old[i].key) = old[i];
				list->index_n++;
			}
		}
		free(old);
		return;
	}
	for (size_t i = 0; i < list->n; i++) {
		struct sensor_key_slot *slot = key_slot(list, list->channels[i].key);
		if (!slot->key) {
			*slot = (struct sensor_key_slot){.key = list->channels[i].key, .next = 2};
			list->index_n++;
		}
	}
}

/* A key not in the list yet: @key, else @key#N with the first N free from the last tried. */
static char *unique_key(struct sensor_list *list, const char *key) {
	key_index_grow(list);
	struct sensor_key_slot *base = key_slot(list, key);
	if (!base->key) {
		return xstrdup(key);
	}
	for (;;) {
		char *candidate = xasprintf("%s#%d", key, base->next++);
		if (!key_slot(list, candidate)->key) {
			return candidate;
		}
		free(candidate);
	}
}

struct sensor *sensor_list_add(struct sensor_list *list, const struct source_ops *ops,
			       const char *key, const char *source, const char *label,
			       enum channel_kind kind, double resolution, const char *path) {
	if (list->n == list->cap) {
		size_t cap = list->cap;
		list->channels = xgrow(list->channels, &cap, list->n + 1, sizeof(*list->channels));
		list->sensors =
			xgrow(list->sensors, &list->cap, list->n + 1, sizeof(*list->sensors));
	}
	char *unique = unique_key(list, key);
	key_index_grow(list); // the new key's room (a "#N" may have taken the last)
	*key_slot(list, unique) = (struct sensor_key_slot){.key = unique, .next = 2};
	list->index_n++;
	struct channel *c = &list->channels[list->n];
	*c = (struct channel){
		.key = unique,
		.source = xstrdup(source),
		.label = xstrdup(label),
		.kind = kind,
		.unit = channel_kind_unit(kind),
		.resolution = resolution,
		.path = xstrdup(path),
	};
	struct sensor *s = &list->sensors[list->n++];
	*s = (struct sensor){
		.ops = ops,
		.config_id = ops->config_id,
		.path = c->path,
		.fd = -1,
		.scale = 1,
		.divisor = 1,
		.cal_gain = 1,
	};
	return s;
}

struct sensor *sensor_list_add_named(struct sensor_list *list, const struct source_ops *ops,
				     const char *source, const char *name, enum channel_kind kind,
				     double resolution, const char *path) {
	char *key = xasprintf("%s/%s", source, name);
	source_key_sanitize(key);
	struct sensor *s = sensor_list_add(list, ops, key, source, name, kind, resolution, path);
	free(key);
	return s;
}

void sensor_finish(struct sensor *sensor) {
	if (sensor->fd >= 0) {
		close(sensor->fd);
	}
	sensor->fd = -1;
	free(sensor->priv);
	sensor->priv = NULL;
}

void *sensor_priv(struct sensor *sensor, size_t size) {
	if (!sensor->priv) {
		sensor->priv = xcalloc(1, size);
	}
	return sensor->priv;
}

void *source_ctx_priv(struct source_ctx *ctx, enum source_id id, size_t size) {
	if (!ctx->driver[id]) {
		ctx->driver[id] = xcalloc(1, size);
	}
	return ctx->driver[id];
}

void source_ctx_priv_free(struct source_ctx *ctx, enum source_id id) {
	free(ctx->driver[id]);
	ctx->driver[id] = NULL;
}

void sensor_list_finish(struct sensor_list *list) {
	for (size_t i = 0; i < list->n; i++) {
		sensor_finish(&list->sensors[i]);
		channel_finish(&list->channels[i]);
	}
	free(list->channels);
	free(list->sensors);
	free(list->index);
	*list = (struct sensor_list){0};
}

void sensor_list_seal(struct sensor_list *list) {
	free(list->index);
	list->index = NULL;
	list->index_n = list->index_cap = 0;
}

bool source_stop_pending(void) {
	sigset_t pending;
	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

void source_meta_begin(struct buf *meta, struct json *j) {
	buf_init(meta);
	json_init(j, meta, false);
	json_object_begin(j);
}

void source_meta_end(struct sensor_list *list, struct buf *meta, struct json *j) {
	json_object_end(j);
	list->channels[list->n - 1].meta = buf_steal(meta);
}

void source_meta_text(int root_fd, const char *path, struct json *j, const char *key) {
	char text[64];
	if (sysfs_read_text(root_fd, path, text, sizeof(text)) > 0) {
		json_field_string(j, key, text);
	}
}

void source_meta_int(int root_fd, const char *path, struct json *j, const char *key) {
	int64_t v;
	if (sysfs_read_int(root_fd, path, &v) == 0) {
		json_field_int(j, key, v);
	}
}
