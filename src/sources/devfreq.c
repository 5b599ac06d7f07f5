/* devfreq: class/devfreq/<device>/cur_freq in Hz (NPU, GPU and DDR on RK3588). */
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"

/* This driver's ops, defined at the end of the file; sampler.c's table names it. */
extern const struct source_ops source_devfreq;

static void discover_device(struct source_ctx *ctx, struct sensor_list *out, const char *name) {
	char path[256];
	snprintf(path, sizeof(path), "class/devfreq/%s/cur_freq", name);
	if (!sysfs_exists(ctx->root_fd, path)) {
		log_debug("skipping class/devfreq/%s: no cur_freq (%s)", name, strerror(errno));
		return;
	}
	sensor_list_add_named(out, &source_devfreq, "devfreq", name, CHANNEL_KIND_FREQUENCY, 1,
			      path);

	struct buf meta;
	struct json j;
	source_meta_begin(&meta, &j);
	snprintf(path, sizeof(path), "class/devfreq/%s/governor", name);
	source_meta_text(ctx->root_fd, path, &j, "governor");
	static const char *const limits[] = {"min_freq", "max_freq"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "class/devfreq/%s/%s", name, limits[i]);
		source_meta_int(ctx->root_fd, path, &j, limits[i]);
	}
	source_meta_end(out, &meta, &j);
}

static void devfreq_discover(struct source_ctx *ctx, struct sensor_list *out) {
	source_discover_each(ctx, out, "class/devfreq", NULL, discover_device);
}

const struct source_ops source_devfreq = {
	.config_id = SOURCE_DEVFREQ,
	.discover = devfreq_discover,
	.read = source_read_scaled, // one integer attribute, scaled
};
