/* Thermal zones (class/thermal/thermal_zoneN/temp, m°C) and cooling devices (cur_state). */
#include "thermal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "source.h"

/* This driver's ops, defined at the end of the file; sampler.c's table names it. */
extern const struct source_ops source_thermal;

/* A zone's state (cooling devices have none). */
struct thermal_sensor {
	bool zone_disabled; // `mode` said "disabled" when discovered
};

#define THERMAL_TEMP_INVALID (-274000) // the kernel's "no such trip"

void thermal_trips_json(int root_fd, const char *dir, struct json *j) {
	json_key(j, "trips");
	json_array_begin(j);
	for (int k = 0; k < 64; k++) {
		char path[256], type[32];
		int64_t temp_mc, hyst_mc;
		snprintf(path, sizeof(path), "%s/trip_point_%d_type", dir, k);
		if (sysfs_read_text(root_fd, path, type, sizeof(type)) < 0) {
			break; // trips are numbered densely from 0
		}
		snprintf(path, sizeof(path), "%s/trip_point_%d_temp", dir, k);
		if (sysfs_read_int(root_fd, path, &temp_mc) < 0 ||
		    temp_mc <= THERMAL_TEMP_INVALID) {
			continue;
		}
		static const char *const known[] = {"critical", "hot", "passive", "active"};
		bool valid = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			valid |= strcmp(type, known[i]) == 0;
		}
		if (!valid) {
			continue;
		}
		json_object_begin(j);
		json_field_string(j, "type", type);
		json_field_double(j, "temp", (double)temp_mc / 1000);
		snprintf(path, sizeof(path), "%s/trip_point_%d_hyst", dir, k);
		if (sysfs_read_int(root_fd, path, &hyst_mc) == 0) {
			json_field_double(
				j, "hyst",
				(double)hyst_mc /
					1000); // m°C in practice, despite the ABI document
		}
		json_object_end(j);
	}
	json_array_end(j);
}

/* Reads class/thermal/NAME/type into @type (NAME's directory into @dir); false, logged, when
 * it is unreadable or empty. */
static bool read_type(struct source_ctx *ctx, const char *name, char dir[static 128],
		      char type[static 128]) {
	char path[192];
	snprintf(dir, 128, "class/thermal/%s", name);
	snprintf(path, sizeof(path), "%s/type", dir);
	int rc = sysfs_read_text(ctx->root_fd, path, type, 128);
	if (rc <= 0) {
		// A dangling link is a zone or device that went away between readdir and now.
		log_debug("skipping %s: %s", path, rc < 0 ? strerror(-rc) : "empty type");
		return false;
	}
	return true;
}

static void discover_zone(struct source_ctx *ctx, struct sensor_list *out, const char *name) {
	char dir[128], path[192], type[128];
	if (!read_type(ctx, name, dir, type)) {
		return;
	}
	snprintf(path, sizeof(path), "%s/temp", dir);
	struct sensor *s = sensor_list_add_named(out, &source_thermal, "thermal", type,
						 CHANNEL_KIND_TEMPERATURE, 0.001, path);
	s->divisor = 1000;
	// A zone is disabled when `mode` says so; a missing or unreadable `mode` counts as
	// enabled. Read here, so at each rescan (rescan:, and after read errors), not every
	// cycle: a zone's mode changes by hand, if ever, and its temp still reads meanwhile.
	snprintf(path, sizeof(path), "%s/mode", dir);
	char mode[16];
	struct thermal_sensor *ts = sensor_priv(s, sizeof(*ts));
	ts->zone_disabled = sysfs_read_text(ctx->root_fd, path, mode, sizeof(mode)) >= 8 &&
			    memcmp(mode, "disabled", 8) == 0;

	struct buf meta;
	struct json j;
	source_meta_begin(&meta, &j);
	json_field_string(&j, "zone", name);
	source_meta_text(ctx->root_fd, path, &j, "mode");
	snprintf(path, sizeof(path), "%s/policy", dir);
	source_meta_text(ctx->root_fd, path, &j, "policy");
	thermal_trips_json(ctx->root_fd, dir, &j);
	source_meta_end(out, &meta, &j);
}

static void discover_cooling(struct source_ctx *ctx, struct sensor_list *out, const char *name) {
	char dir[128], path[192], type[128];
	if (!read_type(ctx, name, dir, type)) {
		return;
	}
	snprintf(path, sizeof(path), "%s/cur_state", dir);
	sensor_list_add_named(out, &source_thermal, "cooling", type, CHANNEL_KIND_STATE, 1, path);
	int64_t max_state;
	snprintf(path, sizeof(path), "%s/max_state", dir);
	if (sysfs_read_int(ctx->root_fd, path, &max_state) == 0 && max_state >= 0) {
		// A state above it is no reading (channel_plausible()), here and for throttling.
		out->channels[out->n - 1].has_max = true;
		out->channels[out->n - 1].max = (double)max_state;
	}

	struct buf meta;
	struct json j;
	source_meta_begin(&meta, &j);
	json_field_string(&j, "device", name);
	json_field_string(&j, "type", type);
	snprintf(path, sizeof(path), "%s/max_state", dir);
	source_meta_int(ctx->root_fd, path, &j, "max_state");
	source_meta_end(out, &meta, &j);
}

static void thermal_discover(struct source_ctx *ctx, struct sensor_list *out) {
	char **zones = source_list_dir(ctx->root_fd, "class/thermal", "thermal_zone");
	char **cdevs = source_list_dir(ctx->root_fd, "class/thermal", "cooling_device");
	if (!zones || !cdevs) {
		log_debug("no class/thermal: %s", strerror(errno));
	}
	// thousands of cooling devices (one per CPU) take a while: a stop asked for ends it
	for (char **p = zones; p && *p && !source_stop_pending(); p++) {
		discover_zone(ctx, out, *p);
	}
	for (char **p = cdevs; p && *p && !source_stop_pending(); p++) {
		discover_cooling(ctx, out, *p);
	}
	source_free_names(zones);
	source_free_names(cdevs);
}

static int thermal_read(struct source_ctx *ctx, struct sensor *s, double *value) {
	const struct thermal_sensor *ts = s->priv; // zones only: cooling devices have none
	if (ts && ts->zone_disabled) {
		return -ENODATA;
	}
	return source_read_scaled(ctx, s, value);
}

const struct source_ops source_thermal = {
	.config_id = SOURCE_THERMAL,
	.discover = thermal_discover,
	.read = thermal_read,
};
