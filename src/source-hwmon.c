/* hwmon through libsensors: temperatures, voltages, currents, power, energy, fans, labels from
 * sensors.conf. */
#include "source.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sensors/error.h>
#include <sensors/sensors.h>

#include "log.h"
#include "xalloc.h"

struct feature_map {
	sensors_feature_type feature;
	sensors_subfeature_type input, fallback; // fallback = input when there is none
	enum channel_kind kind;
	double resolution; // sysfs steps: m°C, mV, mA, m%, µW, µJ, RPM
};

static const struct feature_map features[] = {
	{SENSORS_FEATURE_TEMP, SENSORS_SUBFEATURE_TEMP_INPUT, SENSORS_SUBFEATURE_TEMP_INPUT,
	 CHANNEL_KIND_TEMPERATURE, 0.001},
	{SENSORS_FEATURE_IN, SENSORS_SUBFEATURE_IN_INPUT, SENSORS_SUBFEATURE_IN_INPUT,
	 CHANNEL_KIND_VOLTAGE, 0.001},
	{SENSORS_FEATURE_CURR, SENSORS_SUBFEATURE_CURR_INPUT, SENSORS_SUBFEATURE_CURR_INPUT,
	 CHANNEL_KIND_CURRENT, 0.001},
	{SENSORS_FEATURE_POWER, SENSORS_SUBFEATURE_POWER_INPUT, SENSORS_SUBFEATURE_POWER_AVERAGE,
	 CHANNEL_KIND_POWER, 1e-6},
	{SENSORS_FEATURE_ENERGY, SENSORS_SUBFEATURE_ENERGY_INPUT, SENSORS_SUBFEATURE_ENERGY_INPUT,
	 CHANNEL_KIND_ENERGY, 1e-6},
	{SENSORS_FEATURE_FAN, SENSORS_SUBFEATURE_FAN_INPUT, SENSORS_SUBFEATURE_FAN_INPUT,
	 CHANNEL_KIND_FAN, 1},
	{SENSORS_FEATURE_HUMIDITY, SENSORS_SUBFEATURE_HUMIDITY_INPUT,
	 SENSORS_SUBFEATURE_HUMIDITY_INPUT, CHANNEL_KIND_HUMIDITY, 0.001},
};

/* libsensors' default handler prints and exits; say why through our log first. */
static void handle_fatal_error(const char *proc, const char *err) {
	log_error("libsensors: %s: %s", proc, err);
	exit(EXIT_FAILURE);
}

static void handle_parse_error(const char *err, const char *file, int line) {
	log_warn("%s:%d: %s", file ? file : "sensors.conf", line, err);
}

/* sensors_init() with the system sensors.conf, or with an empty one if that does not parse. */
static bool hwmon_init(void) {
	sensors_fatal_error = handle_fatal_error;
	sensors_parse_error_wfn = handle_parse_error;
	int rc = sensors_init(NULL);
	if (rc == -SENSORS_ERR_KERNEL) {
		log_warn("libsensors: no sysfs at /sys: %s", sensors_strerror(rc));
		return false;
	}
	if (rc != 0) {
		log_warn("libsensors: could not load sensors.conf (%s): labels from the chips only",
			 sensors_strerror(rc));
		FILE *empty = fopen("/dev/null", "r");
		if (!empty) {
			log_errno("could not open /dev/null");
			return false;
		}
		rc = sensors_init(empty);
		fclose(empty);
		if (rc != 0) {
			log_warn("libsensors: %s", sensors_strerror(rc));
			return false;
		}
	}
	return true;
}

static void hwmon_cleanup(struct source_ctx *ctx) {
	if (ctx->hwmon_active) {
		sensors_cleanup();
		ctx->hwmon_active = false;
	}
}

static void add_feature(struct sensor_list *out, const sensors_chip_name *chip,
			const char *chip_name, const sensors_feature *ft) {
	const struct feature_map *m = NULL;
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		if (features[i].feature == ft->type) {
			m = &features[i];
		}
	}
	if (!m) {
		return; // vid, intrusion, beep_enable: not measurements
	}
	const sensors_subfeature *sf = sensors_get_subfeature(chip, ft, m->input);
	if (!sf) {
		sf = sensors_get_subfeature(chip, ft, m->fallback);
	}
	if (!sf || !(sf->flags & SENSORS_MODE_R)) {
		return;
	}
	char *label = sensors_get_label(chip, ft);
	// The chip path is absolute (libsensors only reads /sys); channels keep root-relative
	// paths.
	const char *dir = chip->path;
	if (strncmp(dir, "/sys/", 5) == 0) {
		dir += 5;
	}
	char *path = xasprintf("%s/%s", dir, sf->name);
	char *key = xasprintf("hwmon/%s/%s", chip_name, ft->name);
	source_key_sanitize(key);
	struct sensor *s = sensor_list_add(out, &source_hwmon, key, "hwmon",
					   label ? label : ft->name, m->kind, m->resolution, path);
	s->chip = chip;
	s->subfeature = sf->number;
	free(key);
	free(path);
	free(label);
}

static void hwmon_discover(struct source_ctx *ctx, struct sensor_list *out) {
	const char *root = ctx->cfg->sysfs_root;
	size_t len = strlen(root);
	while (len > 1 && root[len - 1] == '/') {
		len--;
	}
	if (len != 4 || strncmp(root, "/sys", 4) != 0) {
		if (!ctx->hwmon_skip_logged) {
			log_info("hwmon skipped: libsensors reads only /sys, and sysfs_root is %s",
				 ctx->cfg->sysfs_root);
			ctx->hwmon_skip_logged = true;
		}
		return;
	}
	// The chip list is a snapshot: start over to see hot-plugged chips.
	hwmon_cleanup(ctx);
	if (!hwmon_init()) {
		return;
	}
	ctx->hwmon_active = true;
	const sensors_chip_name *chip;
	int c = 0;
	while ((chip = sensors_get_detected_chips(NULL, &c))) {
		char name[256];
		if (sensors_snprintf_chip_name(name, sizeof(name), chip) < 0) {
			continue;
		}
		const sensors_feature *ft;
		int f = 0;
		while ((ft = sensors_get_features(chip, &f))) {
			add_feature(out, chip, name, ft);
		}
	}
}

static int hwmon_read(struct source_ctx *ctx, struct sensor *s, double *value) {
	int rc = sensors_get_value(s->chip, s->subfeature, value);
	switch (-rc) {
	case 0:
		return 0;
	case SENSORS_ERR_KERNEL:
		return -ENODEV; // the file could not be opened: the chip went away
	case SENSORS_ERR_IO:
		return -EIO;
	default:
		// libsensors loses the driver's errno (EAGAIN, ENODATA, EINVAL ...).
		return -ENODATA;
	}
}

const struct source_ops source_hwmon = {
	.name = "hwmon",
	.config_id = SOURCE_HWMON,
	.discover = hwmon_discover,
	.read = hwmon_read,
	.cleanup = hwmon_cleanup,
};
