/*
 * IIO: every temperature channel of bus/iio/devices/iio:deviceN, value = (raw + offset) × scale
 * m°C, and the ADC channels the configuration names (mV → volts → gain × volts + offset).
 */
#include "source.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "xalloc.h"

/* This driver's ops, defined at the end of the file; sampler.c's table names it. */
extern const struct source_ops source_iio;

/* A configured channel's linear map (iio_channels: linear:), applied to its volts. */
struct iio_sensor {
	double gain, offset;
};

#define IIO_DIR "bus/iio/devices"

/* Parses an IIO scale or offset ("250", "62.500000", "0.439453125"); false on garbage. */
static bool parse_number(const char *text, double *out) {
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || *end || errno || !isfinite(v)) {
		return false;
	}
	*out = v;
	return true;
}

/*
 * Reads in_<id>_<attr>, else the type-wide in_<type>_<attr>; *out keeps its default when both are
 * absent. Returns false (logged) when a file exists but holds garbage.
 */
static bool read_attr(int root_fd, const char *dir, const char *id, const char *type,
		      const char *attr, double *out) {
	char path[256], text[64];
	snprintf(path, sizeof(path), "%s/in_%s_%s", dir, id, attr);
	int rc = sysfs_read_text(root_fd, path, text, sizeof(text));
	if (rc == -ENOENT) {
		snprintf(path, sizeof(path), "%s/in_%s_%s", dir, type, attr);
		rc = sysfs_read_text(root_fd, path, text, sizeof(text));
	}
	if (rc == -ENOENT) {
		return true;
	}
	if (rc < 0 || !parse_number(text, out)) {
		log_warn("could not read %s: %s", path,
			 rc < 0 ? strerror(-rc) : "not a finite number");
		return false;
	}
	return true;
}

/* The step of (raw + offset) × scale / 1000: 0.001 °C, finer when the scale has fractions of m°C.
 */
static double temp_resolution(double scale, double offset) {
	for (int m = 1; m <= 100000; m++) {
		double a = scale * m, b = offset * scale * m;
		if (fabs(a - round(a)) < 1e-9 * fabs(a) + 1e-12 &&
		    fabs(b - round(b)) < 1e-9 * fabs(b) + 1e-12) {
			return 0.001 / m;
		}
	}
	return 1e-9;
}

/* Adds the temperature channel @id ("temp", "temp_ambient", "temp0") of device @name in @dir. */
static void add_temp(struct source_ctx *ctx, struct sensor_list *out, const char *dir,
		     const char *dev, const char *name, const char *id, bool processed) {
	char path[256];
	double scale = 1, offset = 0;
	// A bad scale or offset (garbage, inf) keeps the channel, reading as an error.
	bool bad = !processed && (!read_attr(ctx->root_fd, dir, id, "temp", "scale", &scale) ||
				  !read_attr(ctx->root_fd, dir, id, "temp", "offset", &offset));
	if (bad) {
		scale = 1;
		offset = 0;
	}
	snprintf(path, sizeof(path), "%s/in_%s_%s", dir, id, processed ? "input" : "raw");
	char *key = xasprintf("iio/%s/%s", name, id);
	char *label = xasprintf("%s %s", name, id);
	struct sensor *s =
		sensor_list_add(out, &source_iio, key, "iio", label, CHANNEL_KIND_TEMPERATURE,
				temp_resolution(scale, offset), path);
	free(key);
	free(label);
	s->raw_offset = offset;
	s->scale = scale;
	s->divisor = 1000; // m°C
	s->absent_err = bad ? -EBADMSG : 0;

	struct buf meta;
	struct json j;
	source_meta_begin(&meta, &j);
	json_field_string(&j, "device", dev);
	if (!processed) {
		json_field_double(&j, "scale", scale);
		json_field_double(&j, "offset", offset);
	}
	char text[32];
	snprintf(path, sizeof(path), "%s/in_%s_thermocouple_type", dir, id);
	if (sysfs_read_text(ctx->root_fd, path, text, sizeof(text)) > 0) {
		json_field_string(&j, "thermocouple_type", text);
	}
	source_meta_end(out, &meta, &j);
}

static int cmp_str(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Finds in_temp*_raw / in_temp*_input files; a channel with both is read processed. */
static void discover_temps(struct source_ctx *ctx, struct sensor_list *out, const char *dir,
			   const char *dev, const char *name) {
	char **files = source_list_dir(ctx->root_fd, dir, "in_temp");
	size_t n = 0;
	for (char **p = files; p && *p; p++) {
		n++;
	}
	// Channel ids ("temp", "temp_ambient") in text order, each once, marked processed or not.
	char **ids = xcalloc(n + 1, sizeof(*ids));
	size_t n_ids = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(files[i]);
		bool raw = len > 7 && strcmp(files[i] + len - 4, "_raw") == 0;
		bool input = len > 9 && strcmp(files[i] + len - 6, "_input") == 0;
		if (raw || input) {
			// "<id>\1i" or "<id>\1r": \1 sorts "temp" before "temp_ambient", and 'i'
			// sorts a processed _input before the _raw of the same id.
			char *id = xstrndup(files[i] + 3, len - 3 - (raw ? 4 : 6));
			ids[n_ids++] = xasprintf("%s\1%c", id, input ? 'i' : 'r');
			free(id);
		}
	}
	qsort(ids, n_ids, sizeof(*ids), cmp_str);
	const char *prev = "";
	for (size_t i = 0; i < n_ids; i++) {
		size_t len = strlen(ids[i]);
		bool input = ids[i][len - 1] == 'i';
		ids[i][len - 2] = '\0';
		// One channel per id: the first of a group, the processed _input if there is one.
		if (strcmp(ids[i], prev) != 0) {
			add_temp(ctx, out, dir, dev, name, ids[i], input);
		}
		prev = ids[i];
	}
	for (size_t i = 0; i < n_ids; i++) {
		free(ids[i]);
	}
	free(ids);
	source_free_names(files);
}

/* A configured ADC channel: always listed, missing with an error while its device is absent. */
static void add_configured(struct source_ctx *ctx, struct sensor_list *out,
			   const struct iio_channel_config *cc, char **devs, char **names) {
	const char *dev = NULL, *name = cc->device;
	for (size_t i = 0; devs && devs[i]; i++) {
		if (strcmp(devs[i], cc->device) == 0 ||
		    (names[i] && strcmp(names[i], cc->device) == 0)) {
			dev = devs[i];
			name = names[i] ? names[i] : cc->device;
			break;
		}
	}
	char type[64];
	size_t tl = strcspn(cc->channel, "0123456789_");
	snprintf(type, sizeof(type), "%.*s", (int)tl, cc->channel);
	char dir[128], path[256];
	snprintf(dir, sizeof(dir), IIO_DIR "/%s", dev ? dev : cc->device);
	snprintf(path, sizeof(path), "%s/in_%s_raw", dir, cc->channel);
	char *key = xasprintf("iio/%s/%s", name, cc->channel);
	source_key_sanitize(key);
	char *label = cc->label ? xstrdup(cc->label) : xasprintf("%s %s", name, cc->channel);
	const char *unit = cc->unit ? cc->unit : "volts";
	struct sensor *s = sensor_list_add(out, &source_iio, key, "iio", label,
					   channel_kind_of_unit(unit), 0.001, path);
	out->channels[out->n - 1].unit = unit;
	free(key);
	free(label);
	s->divisor = 1000; // mV → V
	struct iio_sensor *is = sensor_priv(s, sizeof(*is));
	is->gain = cc->gain;
	is->offset = cc->offset;
	if (!dev) {
		s->absent_err = -ENODEV;
		log_debug("configured IIO device %s not found", cc->device);
	} else if (!sysfs_exists(ctx->root_fd, path)) {
		s->absent_err = -ENOENT;
	} else if (!read_attr(ctx->root_fd, dir, cc->channel, type, "scale", &s->scale) ||
		   !read_attr(ctx->root_fd, dir, cc->channel, type, "offset", &s->raw_offset)) {
		s->absent_err = -EBADMSG;
	}

	struct buf meta;
	struct json j;
	source_meta_begin(&meta, &j);
	json_field_string(&j, "device", dev);
	if (!s->absent_err) {
		json_field_double(&j, "scale", s->scale);
		json_field_double(&j, "offset", s->raw_offset);
	}
	json_key(&j, "linear");
	json_object_begin(&j);
	json_field_double(&j, "gain", cc->gain);
	json_field_double(&j, "offset", cc->offset);
	json_object_end(&j);
	source_meta_end(out, &meta, &j);
}

static void iio_discover(struct source_ctx *ctx, struct sensor_list *out) {
	char **devs = source_list_dir(ctx->root_fd, IIO_DIR, "iio:device");
	size_t n = 0;
	for (char **p = devs; p && *p; p++) {
		n++;
	}
	char **names = xcalloc(n + 1, sizeof(*names));
	for (size_t i = 0; i < n; i++) {
		char dir[128], path[192], name[128];
		snprintf(dir, sizeof(dir), IIO_DIR "/%s", devs[i]);
		snprintf(path, sizeof(path), "%s/name", dir);
		int rc = sysfs_read_text(ctx->root_fd, path, name, sizeof(name));
		if (rc <= 0) {
			// Keys need a stable identity, and iio:deviceN is probe order.
			log_debug("skipping %s: %s", path, rc < 0 ? strerror(-rc) : "empty name");
			continue;
		}
		source_key_sanitize(name);
		names[i] = xstrdup(name);
		discover_temps(ctx, out, dir, devs[i], name);
	}
	for (size_t i = 0; i < ctx->cfg->n_iio_channels; i++) {
		add_configured(ctx, out, &ctx->cfg->iio_channels[i], devs, names);
	}
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
	}
	free(names);
	source_free_names(devs);
}

static int iio_read(struct source_ctx *ctx, struct sensor *s, double *value) {
	if (s->absent_err) {
		return s->absent_err;
	}
	int rc = source_read_scaled(ctx, s, value);
	const struct iio_sensor *is = s->priv; // configured channels only
	if (rc == 0 && is) {
		*value = is->gain * *value + is->offset;
	}
	return rc;
}

const struct source_ops source_iio = {
	.config_id = SOURCE_IIO,
	.discover = iio_discover,
	.read = iio_read,
};
