/*
 * meminfo: memory available and swap used from /proc/meminfo, swap-in and swap-out rates
 * (pages/s) from the pswpin/pswpout counters of /proc/vmstat. The files are read relative to
 * procfs_root, as sysfs files are relative to sysfs_root, so fixtures can stand in for /proc.
 */
#include "meminfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "source.h"
#include "xalloc.h"

/* This driver's ops, defined at the end of the file; sampler.c's table names it. */
extern const struct source_ops source_meminfo;

/* /proc/vmstat has about 180 lines on 6.1 (under 5 KiB); meminfo under 2 KiB. */
#define MEMINFO_TEXT_MAX 16384

enum item {
	ITEM_AVAILABLE,
	ITEM_SWAP_USED,
	ITEM_SWAP_IN,
	ITEM_SWAP_OUT,
};

static const struct {
	const char *key, *label, *file;
	bool rate;
} items[] = {
	[ITEM_AVAILABLE] = {"meminfo/available", "memory available", "meminfo", false},
	[ITEM_SWAP_USED] = {"meminfo/swap_used", "swap used", "meminfo", false},
	[ITEM_SWAP_IN] = {"meminfo/swap_in", "swap in", "vmstat", true},
	[ITEM_SWAP_OUT] = {"meminfo/swap_out", "swap out", "vmstat", true},
};

/* A channel's figure and, for the rates, the previous counter read. */
struct meminfo_sensor {
	enum item item;
	struct {
		int64_t count, mono_ns;
		bool valid;
	} prev;
};

static enum item item_of(const struct sensor *s) {
	return ((const struct meminfo_sensor *)s->priv)->item;
}

int meminfo_parse(const char *text, const char *name, bool kb, int64_t *value) {
	size_t len = strlen(name);
	for (const char *p = text; *p;) {
		if (strncmp(p, name, len) == 0 && p[len] == (kb ? ':' : ' ')) {
			const char *s = p + len + 1;
			while (*s == ' ' || *s == '\t') {
				s++;
			}
			char *end;
			errno = 0;
			long long v = strtoll(s, &end, 10);
			if (end == s || errno || v < 0) {
				return -EBADMSG;
			}
			if (kb && strncmp(end, " kB", 3) != 0) {
				return -EBADMSG;
			}
			if (kb && v > INT64_MAX / 1024) {
				return -ERANGE;
			}
			*value = kb ? v * 1024 : v;
			return 0;
		}
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : p + strlen(p);
	}
	return -ENOENT;
}

int meminfo_rate(bool have_prev, int64_t prev, int64_t prev_ns, int64_t count, int64_t now_ns,
		 double *per_s) {
	if (!have_prev || now_ns <= prev_ns || count < prev) {
		return -EAGAIN;
	}
	*per_s = (double)(count - prev) / ((double)(now_ns - prev_ns) / 1e9);
	return 0;
}

static void meminfo_discover(struct source_ctx *ctx, struct sensor_list *out) {
	if (ctx->proc_fd < 0) {
		return; // said when the root failed to open
	}
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		if (!sysfs_exists(ctx->proc_fd, items[i].file)) {
			log_debug("skipping %s: no %s/%s", items[i].key, ctx->proc_root,
				  items[i].file);
			continue;
		}
		char *path = xasprintf("%s/%s", ctx->proc_root, items[i].file);
		struct sensor *s = sensor_list_add(
			out, &source_meminfo, items[i].key, "meminfo", items[i].label,
			items[i].rate ? CHANNEL_KIND_OTHER : CHANNEL_KIND_MEMORY,
			items[i].rate ? 0.001 : 1024, path); // meminfo counts whole kB
		free(path);
		if (items[i].rate) {
			out->channels[out->n - 1].unit = "pages_per_second";
		}
		struct meminfo_sensor *ms = sensor_priv(s, sizeof(*ms));
		ms->item = (enum item)i;
		s->rate = items[i].rate;
	}
}

/*
 * The text of meminfo and vmstat, read once per sampler pass: four figures come from two
 * files, and the kernel formats the whole file on every read.
 */
enum file { FILE_MEMINFO, FILE_VMSTAT, FILE_COUNT };

struct pass_file {
	uint64_t pass; // the pass the text is from; 0 = none
	int rc;        // that read's result
	char text[MEMINFO_TEXT_MAX];
};

/* The driver's state (source_ctx_priv()), freed by the sampler at its end: a reload that turns the
 * source off leaves it, since a pass number is never reused and no later pass reads its texts. */
struct meminfo_files {
	struct pass_file f[FILE_COUNT];
};

/* Reads the whole file at the sensor's held fd (opened on first use). */
static int read_file(struct source_ctx *ctx, struct sensor *s, char *text, size_t size) {
	if (s->fd < 0) {
		s->fd = openat(ctx->proc_fd, items[item_of(s)].file, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0) {
			return -errno;
		}
	}
	size_t len = 0;
	for (;;) {
		if (len + 1 >= size) {
			return -EFBIG;
		}
		ssize_t n = ctx->pread(s->fd, text + len, size - 1 - len, (off_t)len);
		if (n < 0) {
			int err = -errno;
			close(s->fd); // reopen next time, as sysfs sensors do
			s->fd = -1;
			return err;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	text[len] = '\0';
	return 0;
}

/* The sensor's file as read in this pass: read now by the first sensor that needs it. */
static int pass_text(struct source_ctx *ctx, struct sensor *s, const char **text) {
	struct meminfo_files *files = source_ctx_priv(ctx, SOURCE_MEMINFO, sizeof(*files));
	enum file which =
		strcmp(items[item_of(s)].file, "vmstat") == 0 ? FILE_VMSTAT : FILE_MEMINFO;
	struct pass_file *f = &files->f[which];
	if (f->pass != ctx->pass || ctx->pass == 0) {
		f->rc = read_file(ctx, s, f->text, sizeof(f->text));
		f->pass = ctx->pass;
	}
	*text = f->text;
	return f->rc;
}

static int meminfo_read(struct source_ctx *ctx, struct sensor *s, double *value) {
	const char *text;
	int rc = pass_text(ctx, s, &text);
	int64_t a = 0, b = 0;
	if (rc < 0) {
		return rc;
	}
	struct meminfo_sensor *ms = s->priv;
	switch (ms->item) {
	case ITEM_AVAILABLE:
		rc = meminfo_parse(text, "MemAvailable", true, &a);
		*value = (double)a;
		break;
	case ITEM_SWAP_USED:
		rc = meminfo_parse(text, "SwapTotal", true, &a);
		if (rc == 0) {
			rc = meminfo_parse(text, "SwapFree", true, &b);
		}
		*value = (double)(a - b);
		break;
	case ITEM_SWAP_IN:
	case ITEM_SWAP_OUT: {
		int64_t now_ns = ctx->clock();
		rc = meminfo_parse(text, ms->item == ITEM_SWAP_IN ? "pswpin" : "pswpout", false,
				   &a);
		if (rc < 0) {
			break;
		}
		rc = meminfo_rate(ms->prev.valid, ms->prev.count, ms->prev.mono_ns, a, now_ns,
				  value);
		ms->prev.count = a;
		ms->prev.mono_ns = now_ns;
		ms->prev.valid = true;
		break;
	}
	}
	return rc;
}

/* A rescan keeps a rate's previous counter. */
static void meminfo_carry(struct sensor *fresh, const struct sensor *old) {
	struct meminfo_sensor *f = fresh->priv;
	const struct meminfo_sensor *o = old->priv;
	if (f && o && f->item == o->item) {
		f->prev = o->prev;
	}
}

const struct source_ops source_meminfo = {
	.config_id = SOURCE_MEMINFO,
	.discover = meminfo_discover,
	.read = meminfo_read,
	.carry = meminfo_carry,
};
