/*
 * load: busy shares in percent. Each CPU's and all CPUs' from the ticks of /proc/stat (under
 * procfs_root) between two reads; the Rockchip NPU's cores from debugfs rknpu/load and the RGA's
 * schedulers from rkrga/load (under debugfs_root); the `load` attribute of Rockchip vendor
 * devfreq devices. loadparse.c parses the texts. A shared file is read once per sampler pass.
 * Files read each cycle are held open and read from offset 0 (the kernel formats them anew on a
 * read from 0), opened again when replaced (a test's or simulator's rename; the kernel never
 * does) or after an error; opened non-blocking, so no FIFO in their place can stall a cycle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "buf.h"
#include "loadparse.h"
#include "log.h"
#include "source.h"
#include "xalloc.h"

/* This driver's ops, defined at the end of the file; sampler.c's table names it. */
extern const struct source_ops source_load;

/* /proc/stat grows with the CPUs and the interrupt lines (its intr line): 1 MiB at most. */
#define LOAD_TEXT_MAX (1 << 20)

enum item { ITEM_CPU, ITEM_RKNPU, ITEM_RKRGA, ITEM_DEVFREQ };

/* A channel's figure, its CPU or core, and for a CPU the ticks of the previous read. */
struct load_sensor {
	enum item item;
	int sub; // the CPU (-1 = all) or the core's index (-1 = a single-core NPU)
	struct {
		int64_t busy, total;
		bool valid;
	} prev;
	int said_rc; // the error of its own /proc/stat line said (0 = none): said once a change
};

static struct load_sensor *add_load(struct sensor *s, enum item item, int sub) {
	struct load_sensor *ls = sensor_priv(s, sizeof(*ls));
	ls->item = item;
	ls->sub = sub;
	return ls;
}

/* The files more than one channel reads. */
enum shared { SHARED_STAT, SHARED_RKNPU, SHARED_RKRGA, SHARED_COUNT };

struct shared_file {
	uint64_t pass; // the pass its text is from; 0 = none
	int rc;        // that read's result (-EBADMSG: the parse's, with why)
	int fd;        // held open on the file named path; -1 = none (a zeroed struct: see files())
	char *path;    // its absolute path (the channels' path): another one after a reload
	struct buf text;
	int said_rc; // the error said of it (0 = none): said again only when it changes
	// /proc/stat: where its cpu lines begin in text (loadparse_stat_index()), n of them, as of
	// the pass indexed
	uint64_t indexed;
	int *ids;
	size_t *at, n, cap;
};

/* load's state across its sensors (source_ctx_priv()): the shared files of this pass. */
struct load_files {
	struct shared_file f[SHARED_COUNT];
	bool debugfs_denied_said; // "debugfs needs root" said once per sampler
	bool ready;               // the fds set to -1
};

static struct load_files *files(struct source_ctx *ctx) {
	struct load_files *lf = source_ctx_priv(ctx, SOURCE_LOAD, sizeof(*lf));
	for (size_t i = 0; i < SHARED_COUNT && !lf->ready; i++) {
		lf->f[i].fd = -1;
	}
	lf->ready = true;
	return lf;
}

/*
 * Reads the whole file @path (relative to @dir_fd, or absolute) into @out through ctx->pread,
 * at the fd *held (held open across calls; closed after an error), or opened for this read
 * when @held is NULL.
 */
static int read_whole(struct source_ctx *ctx, int *held, int dir_fd, const char *path,
		      struct buf *out) {
	buf_clear(out);
	int once = -1, *fdp = held ? held : &once;
	int rc = sysfs_hold(fdp, dir_fd, path);
	if (rc < 0) {
		return rc;
	}
	int fd = *fdp;
	char chunk[4096];
	for (off_t off = 0;;) {
		ssize_t n = ctx->pread(fd, chunk, sizeof(chunk), off);
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0) {
			break;
		}
		if (out->len + (size_t)n > LOAD_TEXT_MAX) {
			rc = -EFBIG;
			break;
		}
		buf_append(out, chunk, (size_t)n);
		off += n;
	}
	if (!held || rc < 0) {
		close(fd); // after an error: opened again by the next read
		*fdp = -1;
	}
	if (rc == 0 && !out->data) {
		buf_puts(out, ""); // an empty file: a text of its own, for the parser to refuse
	}
	return rc;
}

/* --- discovery --- */

/* The channels of every cpuN line (and of all CPUs) of the /proc/stat read now. */
static void discover_cpus(struct source_ctx *ctx, struct sensor_list *out) {
	if (ctx->proc_fd < 0) {
		return; // said when the root failed to open
	}
	struct buf text;
	buf_init(&text);
	int rc = read_whole(ctx, NULL, ctx->proc_fd, "stat", &text);
	char *path = xasprintf("%s/stat", ctx->proc_root);
	struct loadparse_ticks t;
	const char *why = "";
	if (rc == 0) {
		rc = loadparse_stat(text.data, -1, &t, &why);
	}
	if (rc < 0) {
		log_warn("could not read %s: %s: no CPU load channels", path,
			 rc == -EBADMSG ? why : strerror(-rc));
		free(path);
		buf_finish(&text);
		return;
	}
	size_t n = loadparse_stat_cpus(text.data, NULL, 0);
	int *ids = xcalloc(n + 1, sizeof(*ids));
	loadparse_stat_cpus(text.data, ids, n);
	for (size_t i = 0; i <= n; i++) {
		int cpu = i == 0 ? -1 : ids[i - 1];
		char key[32], label[32];
		snprintf(key, sizeof(key), cpu < 0 ? "load/cpu" : "load/cpu%d", cpu);
		snprintf(label, sizeof(label), cpu < 0 ? "all CPUs" : "cpu%d", cpu);
		// Ticks are 1/100 s: a minute of one CPU has 6000, a fast sample of 5 s 500.
		struct sensor *s = sensor_list_add(out, &source_load, key, "load", label,
						   CHANNEL_KIND_LOAD, 0.1, path);
		add_load(s, ITEM_CPU, cpu);
		s->rate = true;          // a share needs two readings
		s->expect_absent = true; // an offline CPU has no line: absent, no rescan
	}
	free(ids);
	free(path);
	buf_finish(&text);
}

/* True when the board has a Rockchip NPU: its devfreq device or its driver's module. */
static bool npu_present(struct source_ctx *ctx) {
	if (sysfs_exists(ctx->root_fd, "module/rknpu")) {
		return true;
	}
	char **names = source_list_dir(ctx->root_fd, "class/devfreq", NULL);
	bool found = false;
	for (char **p = names; p && *p && !found; p++) {
		size_t len = strlen(*p);
		found = len > 4 && strcmp(*p + len - 4, ".npu") == 0;
	}
	source_free_names(names);
	return found;
}

/*
 * Says once why a debugfs file gave no channels: a text that does not parse, or a read that
 * failed. A missing file says nothing (no such driver); a debugfs the daemon may not enter
 * (mounted 0700, root only) is said once, and only on a board with an NPU.
 */
static void debugfs_unreadable(struct source_ctx *ctx, struct shared_file *f, const char *path,
			       int rc, const char *why, const char *what) {
	struct load_files *lf = files(ctx);
	if (rc == -ENOENT || rc == -ENOTDIR) {
		log_debug("no %s: %s", path, strerror(-rc));
		return;
	}
	if (f->said_rc == rc) {
		return;
	}
	f->said_rc = rc;
	if (rc == -EACCES) {
		if (lf->debugfs_denied_said || !npu_present(ctx)) {
			log_debug("could not read %s: %s", path, strerror(-rc));
			return;
		}
		lf->debugfs_denied_said = true;
		log_warn(
			"could not read %s: %s: no %s load channels; debugfs (%s) is root only: run "
			"thermlogd as root, or give it read access to that file (the systemd unit "
			"binds it readable, see docs/DAEMON.md)",
			path, strerror(-rc), what, ctx->cfg->debugfs_root);
		return;
	}
	if (rc == -EBADMSG) {
		log_warn("could not read %s: %s: no %s load channels", path, why, what);
	} else {
		log_warn("could not read %s: %s: no %s load channels; check that the file is the "
			 "driver's (debugfs_root is %s)",
			 path, strerror(-rc), what, ctx->cfg->debugfs_root);
	}
}

/* The channels of rknpu/load (NPU cores) or rkrga/load (RGA schedulers). */
static void discover_debugfs(struct source_ctx *ctx, struct sensor_list *out, enum item item) {
	bool npu = item == ITEM_RKNPU;
	struct shared_file *f = &files(ctx)->f[npu ? SHARED_RKNPU : SHARED_RKRGA];
	char *path = xasprintf("%s/%s", ctx->cfg->debugfs_root, npu ? "rknpu/load" : "rkrga/load");
	struct loadparse_cores cores;
	const char *why = "";
	int rc = read_whole(ctx, NULL, AT_FDCWD, path, &f->text);
	f->pass = 0; // read outside a pass: the next pass reads again
	if (rc == 0) {
		rc = npu ? loadparse_rknpu(f->text.data, &cores, &why)
			 : loadparse_rkrga(f->text.data, &cores, &why);
	}
	if (rc < 0) {
		debugfs_unreadable(ctx, f, path, rc, why, npu ? "NPU" : "RGA");
		free(path);
		return;
	}
	f->said_rc = 0;
	for (size_t i = 0; i < cores.n; i++) {
		char key[80], label[80];
		if (!cores.cores) {
			snprintf(key, sizeof(key), "load/rknpu");
			snprintf(label, sizeof(label), "NPU");
		} else if (npu) {
			snprintf(key, sizeof(key), "load/rknpu/core%d", cores.index[i]);
			snprintf(label, sizeof(label), "NPU core %d", cores.index[i]);
		} else {
			snprintf(key, sizeof(key), "load/rkrga/%s", cores.name[i]);
			snprintf(label, sizeof(label), "RGA %s", cores.name[i]);
		}
		source_key_sanitize(key);
		struct sensor *s = sensor_list_add(out, &source_load, key, "load", label,
						   CHANNEL_KIND_LOAD, 1, path);
		add_load(s, item, cores.cores ? cores.index[i] : -1);
	}
	free(path);
}

/*
 * True when device @name's devfreq driver is known to report a constant `load`, which is then
 * no load: the Rockchip NPU's vendor driver (rknpu, its governor rknpu_ondemand) fills its
 * devfreq status with busy = total, so the file reads 100 % however idle the NPU is; its cores'
 * real loads are debugfs rknpu/load's (platform brief §14).
 */
static bool devfreq_load_constant(struct source_ctx *ctx, const char *name) {
	char text[64], *path = xasprintf("class/devfreq/%s/governor", name);
	bool constant = sysfs_read_text(ctx->root_fd, path, text, sizeof(text)) > 0 &&
			strncmp(text, "rknpu", 5) == 0;
	free(path);
	path = xasprintf("class/devfreq/%s/device/driver", name);
	ssize_t n = readlinkat(ctx->root_fd, path, text, sizeof(text) - 1);
	free(path);
	if (n > 0) {
		text[n] = '\0';
		const char *base = strrchr(text, '/') ? strrchr(text, '/') + 1 : text;
		constant |= strcasecmp(base, "rknpu") == 0;
	}
	return constant;
}

/*
 * The `load` attribute of each devfreq device that has one (Rockchip vendor kernels), but for
 * a driver known to report a constant (devfreq_load_constant()).
 */
static void discover_devfreq(struct source_ctx *ctx, struct sensor_list *out) {
	char **names = source_list_dir(ctx->root_fd, "class/devfreq", NULL);
	for (char **p = names; p && *p; p++) {
		char *path = xasprintf("class/devfreq/%s/load", *p);
		bool constant = sysfs_exists(ctx->root_fd, path) && devfreq_load_constant(ctx, *p);
		if (constant) {
			log_debug(
				"%s left out: the rknpu driver reports a constant 100 %%, not a load "
				"(the NPU cores' loads are rknpu/load's)",
				path);
		}
		if (!constant && sysfs_exists(ctx->root_fd, path)) {
			char *key = xasprintf("load/%s", *p);
			source_key_sanitize(key);
			struct sensor *s = sensor_list_add(out, &source_load, key, "load", *p,
							   CHANNEL_KIND_LOAD, 1, path);
			add_load(s, ITEM_DEVFREQ, -1);
			free(key);
		}
		free(path);
	}
	source_free_names(names);
}

static void load_discover(struct source_ctx *ctx, struct sensor_list *out) {
	discover_cpus(ctx, out);
	discover_debugfs(ctx, out, ITEM_RKNPU);
	discover_debugfs(ctx, out, ITEM_RKRGA);
	discover_devfreq(ctx, out);
}

/* --- reading --- */

/*
 * A shared file's error, said once for all its channels (and again only when it changes); the
 * sampler logs the channels' own transitions at debug level.
 */
static int shared_error(struct shared_file *f, struct sensor *s, int rc) {
	if (rc != f->said_rc) {
		f->said_rc = rc;
		log_warn("could not read %s: %s: its load channels are absent until it reads again",
			 s->path, rc == -EBADMSG && s->why ? s->why : strerror(-rc));
	}
	s->err_said = true;
	return rc;
}

/* Finds where /proc/stat's cpu lines begin, once per pass (by the first CPU channel read). */
static void index_cpu_lines(struct shared_file *f) {
	if (f->indexed == f->pass &&
	    f->pass != 0) { // pass 0: no pass, read each time (pass_text())
		return;
	}
	f->indexed = f->pass;
	f->n = loadparse_stat_index(f->text.data, f->ids, f->at, f->cap);
	if (f->n > f->cap) {
		f->cap = f->n;
		f->ids = xrealloc(f->ids, f->cap * sizeof(*f->ids));
		f->at = xrealloc(f->at, f->cap * sizeof(*f->at));
		f->n = loadparse_stat_index(f->text.data, f->ids, f->at, f->cap);
	}
}

/* The line of CPU @cpu (-1: all) in this pass's /proc/stat, or NULL (an offline CPU). */
static const char *cpu_line_of(const struct shared_file *f, int cpu) {
	for (size_t i = 0; i < f->n; i++) {
		if (f->ids[i] == cpu) {
			return f->text.data + f->at[i];
		}
	}
	return NULL;
}

/*
 * The text of a shared file in this pass: read by the first of its channels to need it, at
 * @rel under @dir_fd; @path, its absolute path, tells whether the held file is still the one.
 */
static int pass_text(struct source_ctx *ctx, enum shared which, int dir_fd, const char *rel,
		     const char *path, const char **text) {
	struct shared_file *f = &files(ctx)->f[which];
	if (f->pass != ctx->pass || ctx->pass == 0) {
		if (!f->path || strcmp(f->path, path) != 0) {
			if (f->fd >= 0) {
				close(f->fd); // another root since (a reload)
				f->fd = -1;
			}
			free(f->path);
			f->path = xstrdup(path);
		}
		f->rc = read_whole(ctx, &f->fd, dir_fd, rel, &f->text);
		f->pass = ctx->pass;
	}
	*text = f->text.data;
	return f->rc;
}

static int read_cpu(struct source_ctx *ctx, struct sensor *s, double *value) {
	if (ctx->proc_fd < 0) {
		return -ENOENT;
	}
	const char *text;
	struct load_sensor *ls = s->priv;
	struct shared_file *f = &files(ctx)->f[SHARED_STAT];
	int rc = pass_text(ctx, SHARED_STAT, ctx->proc_fd, "stat", s->path, &text);
	struct loadparse_ticks now;
	if (rc < 0) { // the file: said once for all its channels
		ls->prev.valid = false;
		return rc == -ENOENT ? rc : shared_error(f, s, rc);
	}
	f->said_rc = 0;
	index_cpu_lines(f);
	const char *line = cpu_line_of(f, ls->sub);
	rc = line ? loadparse_stat(line, ls->sub, &now, &s->why) : -ENOENT;
	if (rc < 0) {
		// Offline (no line) or its line unreadable: the next reading is a first one again.
		// A line's error is this channel's, said once (the other CPUs read on meanwhile).
		ls->prev.valid = false;
		if (rc != -ENOENT && rc != ls->said_rc) {
			char cpu[16] = "cpu";
			if (ls->sub >= 0) {
				snprintf(cpu, sizeof(cpu), "cpu%d", ls->sub);
			}
			log_warn("could not read %s: its %s line: %s: load/%s is absent until it "
				 "reads again",
				 s->path, cpu, s->why ? s->why : strerror(-rc), cpu);
		}
		ls->said_rc = rc == -ENOENT ? 0 : rc;
		s->err_said = rc != -ENOENT;
		return rc;
	}
	ls->said_rc = 0;
	struct loadparse_ticks before = {.total = ls->prev.total, .busy = ls->prev.busy};
	rc = loadparse_busy(ls->prev.valid ? &before : NULL, &now, value);
	ls->prev.total = now.total;
	ls->prev.busy = now.busy;
	ls->prev.valid = true;
	return rc;
}

static int read_debugfs(struct source_ctx *ctx, struct sensor *s, double *value) {
	const struct load_sensor *ls = s->priv;
	bool npu = ls->item == ITEM_RKNPU;
	enum shared which = npu ? SHARED_RKNPU : SHARED_RKRGA;
	struct shared_file *f = &files(ctx)->f[which];
	const char *text;
	int rc = pass_text(ctx, which, AT_FDCWD, s->path, s->path, &text);
	struct loadparse_cores cores;
	if (rc == 0) {
		rc = npu ? loadparse_rknpu(text, &cores, &s->why)
			 : loadparse_rkrga(text, &cores, &s->why);
	}
	if (rc < 0) {
		return shared_error(f, s, rc);
	}
	f->said_rc = 0;
	for (size_t i = 0; i < cores.n; i++) {
		if (!cores.cores ? ls->sub < 0 : cores.index[i] == ls->sub) {
			*value = (double)cores.percent[i];
			return 0;
		}
	}
	return -ENOENT; // the core is gone from the text: rescan
}

static int read_devfreq(struct source_ctx *ctx, struct sensor *s, double *value) {
	struct buf text;
	buf_init(&text);
	int rc = read_whole(ctx, &s->fd, ctx->root_fd, s->path, &text);
	int64_t pct;
	if (rc == 0) {
		rc = loadparse_devfreq(text.data, &pct, NULL, &s->why);
	}
	buf_finish(&text);
	if (rc == 0) {
		*value = (double)pct;
	}
	return rc;
}

static int load_read(struct source_ctx *ctx, struct sensor *s, double *value) {
	s->why = NULL;
	s->err_said = false;
	switch (((const struct load_sensor *)s->priv)->item) {
	case ITEM_CPU:
		return read_cpu(ctx, s, value);
	case ITEM_RKNPU:
	case ITEM_RKRGA:
		return read_debugfs(ctx, s, value);
	case ITEM_DEVFREQ:
		return read_devfreq(ctx, s, value);
	}
	return -EINVAL;
}

/* A rescan keeps a CPU's previous ticks. */
static void load_carry(struct sensor *fresh, const struct sensor *old) {
	struct load_sensor *f = fresh->priv;
	const struct load_sensor *o = old->priv;
	if (f && o && f->item == o->item && f->sub == o->sub) {
		f->prev = o->prev;
	}
}

static void load_cleanup(struct source_ctx *ctx) {
	struct load_files *lf = ctx->driver[SOURCE_LOAD];
	if (!lf) {
		return;
	}
	for (size_t i = 0; i < SHARED_COUNT; i++) {
		struct shared_file *f = &lf->f[i];
		buf_finish(&f->text);
		if (f->fd >= 0) {
			close(f->fd);
		}
		free(f->path);
		free(f->ids);
		free(f->at);
	}
	source_ctx_priv_free(ctx, SOURCE_LOAD);
}

const struct source_ops source_load = {
	.config_id = SOURCE_LOAD,
	.discover = load_discover,
	.read = load_read,
	.cleanup = load_cleanup,
	.carry = load_carry,
};
