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

/* This driver's ops, defined at the end of the file; sampler.c's table names it. */
extern const struct source_ops source_hwmon;

/* Where libsensors reads the channel. */
struct hwmon_sensor {
	const sensors_chip_name *chip;
	int subfeature;
};

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

/* hwmon's state across its sensors: libsensors is process-wide. */
struct hwmon_state {
	bool active;      // sensors_init() succeeded and sensors_cleanup() is owed
	bool skip_logged; // "not /sys" said once per sampler
};

static struct hwmon_state *state(struct source_ctx *ctx) {
	return source_ctx_priv(ctx, SOURCE_HWMON, sizeof(struct hwmon_state));
}

static void hwmon_cleanup(struct source_ctx *ctx) {
	struct hwmon_state *st = ctx->driver[SOURCE_HWMON];
	if (st && st->active) {
		sensors_cleanup();
		st->active = false;
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
	struct hwmon_sensor *hs = sensor_priv(s, sizeof(*hs));
	hs->chip = chip;
	hs->subfeature = sf->number;
	free(key);
	free(path);
	free(label);
}

/*
 * The thermal core mirrors each zone type as a virtual hwmon chip ("soc-thermal" becomes
 * "soc_thermal-virtual-0"). Returns the mirrored names of zones the thermal source already
 * reads, NULL-terminated (caller frees with source_free_names()).
 */
static char **mirrored_zones(struct source_ctx *ctx) {
	char **zones = NULL;
	if (ctx->cfg->sources[SOURCE_THERMAL].enabled) {
		zones = source_list_dir(ctx->root_fd, "class/thermal", "thermal_zone");
	}
	size_t n = 0;
	for (char **p = zones; p && *p; p++) {
		char path[128], type[128];
		snprintf(path, sizeof(path), "class/thermal/%s/type", *p);
		free(*p);
		if (sysfs_read_text(ctx->root_fd, path, type, sizeof(type)) <= 0) {
			continue;
		}
		char *key = xasprintf("thermal/%s", type);
		source_key_sanitize(key);
		bool read_there = config_channel_wanted(ctx->cfg, SOURCE_THERMAL, key);
		free(key);
		if (read_there) {
			for (char *c = type; *c; c++) {
				*c = *c == '-' ? '_' : *c;
			}
			zones[n++] = xstrdup(type);
		}
	}
	if (zones) {
		zones[n] = NULL;
	}
	return zones;
}

static bool is_mirror(char **mirrored, const sensors_chip_name *chip) {
	if (chip->bus.type != SENSORS_BUS_TYPE_VIRTUAL) {
		return false;
	}
	for (char **p = mirrored; p && *p; p++) {
		if (strcmp(*p, chip->prefix) == 0) {
			return true;
		}
	}
	return false;
}

struct named_chip {
	const sensors_chip_name *chip;
	char name[256]; // "nvme-pci-0100"
};

static int cmp_chips(const void *a, const void *b) {
	return source_name_cmp(((const struct named_chip *)a)->name,
			       ((const struct named_chip *)b)->name);
}

static void hwmon_discover(struct source_ctx *ctx, struct sensor_list *out) {
	const char *root = ctx->cfg->sysfs_root;
	size_t len = strlen(root);
	while (len > 1 && root[len - 1] == '/') {
		len--;
	}
	if (len != 4 || strncmp(root, "/sys", 4) != 0) {
		if (!state(ctx)->skip_logged) {
			log_info("hwmon skipped: libsensors reads only /sys, and sysfs_root is %s",
				 ctx->cfg->sysfs_root);
			state(ctx)->skip_logged = true;
		}
		return;
	}
	// The chip list is a snapshot: start over to see hot-plugged chips.
	hwmon_cleanup(ctx);
	if (!hwmon_init()) {
		return;
	}
	state(ctx)->active = true;
	// libsensors lists chips in directory order; channels are listed by chip name instead.
	struct named_chip *chips = NULL;
	size_t n = 0, cap = 0;
	const sensors_chip_name *chip;
	int c = 0;
	while ((chip = sensors_get_detected_chips(NULL, &c))) {
		chips = xgrow(chips, &cap, n + 1, sizeof(*chips));
		if (sensors_snprintf_chip_name(chips[n].name, sizeof(chips[n].name), chip) >= 0) {
			chips[n++].chip = chip;
		}
	}
	if (n > 0) {
		qsort(chips, n, sizeof(*chips), cmp_chips);
	}
	char **mirrored = mirrored_zones(ctx);
	for (size_t i = 0; i < n; i++) {
		chip = chips[i].chip;
		const char *name = chips[i].name;
		if (is_mirror(mirrored, chip)) {
			// Stored once is enough on a small board: the zone is read as
			// thermal/<type>.
			log_debug("hwmon %s mirrors a thermal zone: skipped", name);
			continue;
		}
		const sensors_feature *ft;
		int f = 0;
		while ((ft = sensors_get_features(chip, &f))) {
			add_feature(out, chip, name, ft);
		}
	}
	source_free_names(mirrored);
	free(chips);
}

static int hwmon_read(struct source_ctx *ctx, struct sensor *s, double *value) {
	const struct hwmon_sensor *hs = s->priv;
	int rc = sensors_get_value(hs->chip, hs->subfeature, value);
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
	.config_id = SOURCE_HWMON,
	.discover = hwmon_discover,
	.read = hwmon_read,
	.cleanup = hwmon_cleanup,
};
