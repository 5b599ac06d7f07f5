/* Sources and sampler against the sysfs fixtures: keys, labels, units, values, errors, rescans. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "sampler.h"
#include "source.h"
#include "test.h"
#include "xalloc.h"

/* Two drivers, named in sampler.c alone (source.h names none): the table test compares them. */
extern const struct source_ops source_thermal;
extern const struct source_ops source_load;

struct sample {
	size_t n;
	const struct channel *ch;
	const struct reading *rd;
};

/* A config over @root from @yaml (may be NULL); aborts the test run on a config error. */
static void make_config(struct config *cfg, const char *root, const char *yaml) {
	config_init(cfg);
	if (yaml) {
		char *errors = NULL;
		if (!config_load_string(cfg, "test.yaml", yaml, strlen(yaml), &errors)) {
			printf("Bail out! config: %s\n", errors);
			exit(1);
		}
		free(errors);
	}
	free(cfg->sysfs_root);
	cfg->sysfs_root = xstrdup(root);
	// These tests are about sysfs; /proc (meminfo, load) has its own test-meminfo.c,
	// test-load.c.
	cfg->sources[SOURCE_MEMINFO].enabled = false;
	cfg->sources[SOURCE_LOAD].enabled = false;
}

static struct sample take(struct sampler *s, int64_t mono_s) {
	struct sample r;
	r.n = sampler_read(s, mono_s, &r.ch, &r.rd);
	return r;
}

static ptrdiff_t find(const struct sample *s, const char *key) {
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->ch[i].key, key) == 0) {
			return (ptrdiff_t)i;
		}
	}
	return -1;
}

struct want {
	const char *key, *source, *label, *kind, *unit;
	double resolution;
	double value; // checked when err == 0
	int err;
	const char *path;
};

/* Checks the channels of @s in order against @w (n entries). */
static void check_all(const char *what, const struct sample *s, const struct want *w, size_t n) {
	char msg[300];
	snprintf(msg, sizeof(msg), "%s: channel count", what);
	is_int(s->n, n, msg);
	for (size_t i = 0; i < n && i < s->n; i++) {
		const struct channel *c = &s->ch[i];
		const struct reading *r = &s->rd[i];
#define CHECK_STR(field)                                              \
	snprintf(msg, sizeof(msg), "%s: %s " #field, what, w[i].key); \
	is_str(c->field, w[i].field, msg)
		CHECK_STR(key);
		CHECK_STR(source);
		CHECK_STR(label);
		CHECK_STR(unit);
		CHECK_STR(path);
		snprintf(msg, sizeof(msg), "%s: %s kind", what, w[i].key);
		is_str(channel_kind_name(c->kind), w[i].kind, msg);
		snprintf(msg, sizeof(msg), "%s: %s resolution", what, w[i].key);
		is_near(c->resolution, w[i].resolution, 1e-12, msg);
		snprintf(msg, sizeof(msg), "%s: %s error", what, w[i].key);
		is_int(r->err, w[i].err, msg);
		if (w[i].err == 0) {
			snprintf(msg, sizeof(msg), "%s: %s value", what, w[i].key);
			is_near(r->value, w[i].value, 1e-12, msg);
		}
	}
}

#define TZ(n)     "class/thermal/thermal_zone" #n "/temp"
#define CD(n)     "class/thermal/cooling_device" #n "/cur_state"
#define POLICY(n) "devices/system/cpu/cpufreq/policy" #n "/scaling_cur_freq"
#define TEMP(key, label, v, path) \
	{ key, "thermal", label, "temperature", "celsius", 0.001, v, 0, path }
#define STATE(key, label, v, path) \
	{ key, "cooling", label, "state", "state", 1, v, 0, path }
#define FREQ(src, key, label, v, path) \
	{ key, src, label, "frequency", "hertz", 1, v, 0, path }

static const struct want rock5c[] = {
	TEMP("thermal/soc-thermal", "soc-thermal", 43.461, TZ(0)),
	TEMP("thermal/bigcore0-thermal", "bigcore0-thermal", 44.384, TZ(1)),
	TEMP("thermal/bigcore1-thermal", "bigcore1-thermal", 43.461, TZ(2)),
	TEMP("thermal/littlecore-thermal", "littlecore-thermal", 42.538, TZ(3)),
	TEMP("thermal/center-thermal", "center-thermal", 42.538, TZ(4)),
	TEMP("thermal/gpu-thermal", "gpu-thermal", 41.615, TZ(5)),
	TEMP("thermal/npu-thermal", "npu-thermal", 42.538, TZ(6)),
	STATE("cooling/cpufreq-cpu0", "cpufreq-cpu0", 0, CD(0)),
	STATE("cooling/cpufreq-cpu4", "cpufreq-cpu4", 0, CD(1)),
	STATE("cooling/cpufreq-cpu6", "cpufreq-cpu6", 0, CD(2)),
	STATE("cooling/devfreq-fb000000.gpu", "devfreq-fb000000.gpu", 0, CD(3)),
	STATE("cooling/pwm-fan", "pwm-fan", 1, CD(4)),
	FREQ("cpufreq", "cpufreq/policy0", "CPU 0-3", 1800000000, POLICY(0)),
	FREQ("cpufreq", "cpufreq/policy4", "CPU 4-5", 816000000, POLICY(4)),
	FREQ("cpufreq", "cpufreq/policy6", "CPU 6-7", 408000000, POLICY(6)),
	FREQ("devfreq", "devfreq/dmc", "dmc", 528000000, "class/devfreq/dmc/cur_freq"),
	FREQ("devfreq", "devfreq/fb000000.gpu", "fb000000.gpu", 300000000,
	     "class/devfreq/fb000000.gpu/cur_freq"),
	FREQ("devfreq", "devfreq/fdab0000.npu", "fdab0000.npu", 1000000000,
	     "class/devfreq/fdab0000.npu/cur_freq"),
	{"iio/maxim_thermocouple/temp", "iio", "maxim_thermocouple temp", "temperature", "celsius",
	 0.001, 65.75, 0, "bus/iio/devices/iio:device1/in_temp_raw"},
	// 377 × 62.5 m°C: half-m°C steps, so the resolution is finer than 0.001
	{"iio/maxim_thermocouple/temp_ambient", "iio", "maxim_thermocouple temp_ambient",
	 "temperature", "celsius", 0.0005, 23.5625, 0,
	 "bus/iio/devices/iio:device1/in_temp_ambient_raw"},
};

static const struct want x86[] = {
	TEMP("thermal/acpitz", "acpitz", 27.8, TZ(0)),
	TEMP("thermal/acpitz#2", "acpitz", 29.8, TZ(1)),
	TEMP("thermal/x86_pkg_temp", "x86_pkg_temp", 52, TZ(2)),
	TEMP("thermal/iwlwifi_1", "iwlwifi_1", 41, TZ(3)),
	// a type with a space: the key replaces it, the label keeps it
	TEMP("thermal/INT3400_Thermal", "INT3400 Thermal", 20, TZ(4)),
	STATE("cooling/Processor", "Processor", 0, CD(0)),
	STATE("cooling/Processor#2", "Processor", 0, CD(1)),
	STATE("cooling/Processor#3", "Processor", 0, CD(2)),
	STATE("cooling/Processor#4", "Processor", 0, CD(3)),
	STATE("cooling/Fan", "Fan", 0, CD(4)),
	FREQ("cpufreq", "cpufreq/policy0", "CPU 0", 800054000, POLICY(0)),
	FREQ("cpufreq", "cpufreq/policy1", "CPU 1", 1199917000, POLICY(1)),
	FREQ("cpufreq", "cpufreq/policy2", "CPU 2", 3900012000, POLICY(2)),
	FREQ("cpufreq", "cpufreq/policy3", "CPU 3", 799999000, POLICY(3)),
};

#define TEMP_ERR(key, label, err, path) \
	{ key, "thermal", label, "temperature", "celsius", 0.001, 0, err, path }

static const struct want broken[] = {
	TEMP_ERR("thermal/soc-thermal", "soc-thermal", -EBADMSG, TZ(0)),
	TEMP_ERR("thermal/bigcore0-thermal", "bigcore0-thermal", -ENODATA, TZ(1)),
	TEMP("thermal/littlecore-thermal", "littlecore-thermal", -12.5, TZ(2)),
	TEMP_ERR("thermal/center-thermal", "center-thermal", -ENODATA, TZ(3)),
	TEMP_ERR("thermal/gpu-thermal", "gpu-thermal", -EISDIR, TZ(4)),
	TEMP("thermal/npu-thermal", "npu-thermal", 39.5, TZ(5)),
	TEMP("thermal/npu-thermal#2", "npu-thermal", 43, TZ(7)),
	TEMP_ERR("thermal/pmic-thermal", "pmic-thermal", -ERANGE, TZ(8)),
	{"cooling/pwm-fan", "cooling", "pwm-fan", "state", "state", 1, 0, -ENODATA, CD(0)},
	STATE("cooling/cpufreq-cpu0", "cpufreq-cpu0", 7, CD(1)),
	FREQ("cpufreq", "cpufreq/policy0", "CPU 0-1", 408000000, POLICY(0)),
	FREQ("cpufreq", "cpufreq/policy4", "CPU 4", 2256000000,
	     "devices/system/cpu/cpufreq/policy4/cpuinfo_cur_freq"),
	FREQ("cpufreq", "cpufreq/cpu5", "CPU 5", 1416000000,
	     "devices/system/cpu/cpu5/cpufreq/scaling_cur_freq"),
	FREQ("devfreq", "devfreq/dmc", "dmc", 528000000, "class/devfreq/dmc/cur_freq"),
	{"devfreq/fb000000.gpu", "devfreq", "fb000000.gpu", "frequency", "hertz", 1, 0, -EBADMSG,
	 "class/devfreq/fb000000.gpu/cur_freq"},
	{"iio/maxim_thermocouple/temp", "iio", "maxim_thermocouple temp", "temperature", "celsius",
	 0.001, 0, -EISDIR, "bus/iio/devices/iio:device0/in_temp_raw"},
	{"iio/maxim_thermocouple/temp_ambient", "iio", "maxim_thermocouple temp_ambient",
	 "temperature", "celsius", 0.0005, -5.8125, 0,
	 "bus/iio/devices/iio:device0/in_temp_ambient_raw"},
};

#define N(a) (sizeof(a) / sizeof(a[0]))

static void check_meta(const struct sample *s, const char *key, const char *want) {
	ptrdiff_t i = find(s, key);
	char msg[256];
	snprintf(msg, sizeof(msg), "meta of %s", key);
	is_str(i >= 0 ? s->ch[i].meta : NULL, want, msg);
}

static void test_fixture(const char *name, const struct want *w, size_t n) {
	char root[64];
	snprintf(root, sizeof(root), "fixtures/%s", name);
	struct config cfg;
	make_config(&cfg, root, NULL);
	struct sampler *s = sampler_create(&cfg);
	ok(s != NULL, "sampler over the fixture");
	if (!s) {
		config_finish(&cfg);
		return;
	}
	struct sample smp = take(s, 100);
	check_all(name, &smp, w, n);
	// A second pass reads the held fds again (pread at offset 0) and must agree.
	struct sample again = take(s, 160);
	bool same = again.n == n;
	for (size_t i = 0; same && i < n; i++) {
		same = again.rd[i].err == w[i].err &&
		       (w[i].err || again.rd[i].value == w[i].value ||
			fabs(again.rd[i].value - w[i].value) < 1e-9);
	}
	ok(same, "second pass over held fds gives the same readings");

	if (strcmp(name, "rock5c") == 0) {
		check_meta(&smp, "thermal/soc-thermal",
			   "{\"zone\":\"thermal_zone0\",\"mode\":\"enabled\",\"policy\":\"power_"
			   "allocator\",\"trips\":[{\"type\":\"passive\",\"temp\":60,\"hyst\":2},{"
			   "\"type\":\"passive\",\"temp\":85,\"hyst\":2},{\"type\":\"critical\","
			   "\"temp\":115,\"hyst\":2}]}");
		check_meta(&smp, "thermal/npu-thermal",
			   "{\"zone\":\"thermal_zone6\",\"mode\":\"enabled\",\"policy\":\"step_"
			   "wise\",\"trips\":[]}");
		check_meta(&smp, "cooling/pwm-fan",
			   "{\"device\":\"cooling_device4\",\"type\":\"pwm-fan\",\"max_state\":4}");
		check_meta(
			&smp, "cpufreq/policy4",
			"{\"governor\":\"schedutil\",\"driver\":\"cpufreq-dt\",\"affected_cpus\":"
			"[4,5]}");
		check_meta(&smp, "devfreq/fdab0000.npu",
			   "{\"governor\":\"rknpu_ondemand\",\"min_freq\":300000000,\"max_freq\":"
			   "1000000000}");
		check_meta(&smp, "devfreq/dmc",
			   "{\"governor\":\"dmc_ondemand\",\"min_freq\":528000000,\"max_freq\":"
			   "2112000000}");
		check_meta(&smp, "iio/maxim_thermocouple/temp",
			   "{\"device\":\"iio:device1\",\"scale\":250,\"offset\":0,"
			   "\"thermocouple_type\":\"K\"}");
	} else if (strcmp(name, "x86") == 0) {
		// THERMAL_TEMP_INVALID trips are no trips
		check_meta(&smp, "thermal/iwlwifi_1",
			   "{\"zone\":\"thermal_zone3\",\"mode\":\"enabled\",\"policy\":\"step_"
			   "wise\",\"trips\":[]}");
		check_meta(&smp, "thermal/acpitz#2",
			   "{\"zone\":\"thermal_zone1\",\"mode\":\"enabled\",\"policy\":\"step_"
			   "wise\",\"trips\":[{\"type\":\"critical\",\"temp\":105,\"hyst\":0}]}");
		check_meta(&smp, "cpufreq/policy2",
			   "{\"governor\":\"powersave\",\"driver\":\"intel_pstate\","
			   "\"affected_cpus\":[2]}");
		check_meta(&smp, "cooling/Fan",
			   "{\"device\":\"cooling_device4\",\"type\":\"Fan\",\"max_state\":1}");
	} else {
		check_meta(&smp, "thermal/center-thermal",
			   "{\"zone\":\"thermal_zone3\",\"mode\":\"disabled\",\"policy\":\"step_"
			   "wise\",\"trips\":[]}");
		// garbage trip temperature and unknown trip type are skipped; empty mode omitted
		check_meta(&smp, "thermal/npu-thermal",
			   "{\"zone\":\"thermal_zone5\",\"policy\":\"step_wise\",\"trips\":[{"
			   "\"type\":\"critical\",\"temp\":115,\"hyst\":2}]}");
		check_meta(&smp, "devfreq/dmc", "{\"max_freq\":2112000000}");
		check_meta(&smp, "cpufreq/cpu5",
			   "{\"governor\":\"ondemand\",\"affected_cpus\":[5]}");
	}
	sampler_destroy(s);
	config_finish(&cfg);
}

static void test_parse(void) {
	static const struct {
		const char *text;
		int rc;
		int64_t v;
	} cases[] = {
		{"42\n", 0, 42},
		{"-12500\n", 0, -12500},
		{"0", 0, 0},
		{"9223372036854775807\n", 0, INT64_MAX},
		{"-9223372036854775808\n", 0, INT64_MIN},
		{"9223372036854775808\n", -ERANGE, 0},
		{"99999999999999999999\n", -ERANGE, 0},
		{"", -ENODATA, 0},
		{"\n", -ENODATA, 0},
		{"43000 \n", -EBADMSG, 0},
		{" 43000\n", -EBADMSG, 0},
		{"4x!garbage\n", -EBADMSG, 0},
		{"-\n", -EBADMSG, 0},
		{"300 MHz\n", -EBADMSG, 0},
		{"1\n\n", -EBADMSG, 0},
	};
	for (size_t i = 0; i < N(cases); i++) {
		int64_t v = 0;
		int rc = sysfs_parse_int(cases[i].text, strlen(cases[i].text), &v);
		char msg[80], shown[32];
		size_t k = 0;
		for (const char *p = cases[i].text; *p && k < 24; p++) {
			k += (size_t)snprintf(shown + k, sizeof(shown) - k,
					      *p == '\n' ? "\\n" : "%c", *p);
		}
		shown[k] = '\0';
		snprintf(msg, sizeof(msg), "parse \"%s\" rc", shown);
		is_int(rc, cases[i].rc, msg);
		if (cases[i].rc == 0) {
			snprintf(msg, sizeof(msg), "parse \"%s\" value", shown);
			is_int(v, cases[i].v, msg);
		}
	}
	ok(source_name_cmp("thermal_zone2", "thermal_zone10") < 0, "zone2 sorts before zone10");
	ok(source_name_cmp("policy6", "policy4") > 0, "policy6 after policy4");
	ok(source_name_cmp("dmc", "fb000000.gpu") < 0, "names without numbers sort as text");
}

/* Config: overrides, calibration, include/exclude, disabled sources, configured ADC channels. */
static void test_config(void) {
	static const char yaml[] = "sources:\n"
				   "  thermal:\n"
				   "    include: ['thermal/*core*', 'cooling/pwm-fan']\n"
				   "  cpufreq:\n"
				   "    exclude: ['cpufreq/policy6']\n"
				   "  devfreq:\n"
				   "    enabled: false\n"
				   "channels:\n"
				   "  thermal/littlecore-thermal:\n"
				   "    label: A55 cluster\n"
				   "  iio/maxim_thermocouple/temp:\n"
				   "    label: C12 case\n"
				   "    offset: -1.5\n"
				   "    gain: 1.02\n"
				   "  cooling/pwm-fan:\n"
				   "    enabled: false\n"
				   "iio_channels:\n"
				   "  - device: fec10000.saradc\n"
				   "    channel: voltage2\n"
				   "    label: C12 ambient (AD8495)\n"
				   "    unit: celsius\n"
				   "    linear: {gain: 200.0, offset: -250.0}\n"
				   "  - device: iio:device0\n"
				   "    channel: voltage5\n"
				   "  - device: fe720000.saradc\n"
				   "    channel: voltage1\n";
	struct config cfg;
	make_config(&cfg, "fixtures/rock5c", yaml);
	struct sampler *s = sampler_create(&cfg);
	struct sample smp = take(s, 0);
	static const struct want w[] = {
		TEMP("thermal/bigcore0-thermal", "bigcore0-thermal", 44.384, TZ(1)),
		TEMP("thermal/bigcore1-thermal", "bigcore1-thermal", 43.461, TZ(2)),
		TEMP("thermal/littlecore-thermal", "A55 cluster", 42.538, TZ(3)),
		FREQ("cpufreq", "cpufreq/policy0", "CPU 0-3", 1800000000, POLICY(0)),
		FREQ("cpufreq", "cpufreq/policy4", "CPU 4-5", 816000000, POLICY(4)),
		// 263 × 250 m°C = 65.75 °C, calibrated × 1.02 − 1.5
		{"iio/maxim_thermocouple/temp", "iio", "C12 case", "temperature", "celsius", 0.001,
		 65.75 * 1.02 - 1.5, 0, "bus/iio/devices/iio:device1/in_temp_raw"},
		{"iio/maxim_thermocouple/temp_ambient", "iio", "maxim_thermocouple temp_ambient",
		 "temperature", "celsius", 0.0005, 23.5625, 0,
		 "bus/iio/devices/iio:device1/in_temp_ambient_raw"},
		// 3129 × 0.439453125 mV = 1.375048828125 V → 200 V − 250
		{"iio/fec10000.saradc/voltage2", "iio", "C12 ambient (AD8495)", "temperature",
		 "celsius", 0.001, 200 * 1.375048828125 - 250, 0,
		 "bus/iio/devices/iio:device0/in_voltage2_raw"},
		{"iio/fec10000.saradc/voltage5", "iio", "fec10000.saradc voltage5", "voltage",
		 "volts", 0.001, 0.899560546875, 0, "bus/iio/devices/iio:device0/in_voltage5_raw"},
		{"iio/fe720000.saradc/voltage1", "iio", "fe720000.saradc voltage1", "voltage",
		 "volts", 0.001, 0, -ENODEV, "bus/iio/devices/fe720000.saradc/in_voltage1_raw"},
	};
	check_all("config", &smp, w, N(w));
	is_near(smp.rd[find(&smp, "iio/fec10000.saradc/voltage2")].value, 25.009765625, 1e-12,
		"AD8495 at 1.375 V reads 25 °C");
	check_meta(&smp, "iio/fec10000.saradc/voltage2",
		   "{\"device\":\"iio:device0\",\"scale\":0.439453125,\"offset\":0,\"linear\":{"
		   "\"gain\":200,\"offset\":-250}}");
	check_meta(&smp, "iio/fe720000.saradc/voltage1",
		   "{\"device\":null,\"linear\":{\"gain\":1,\"offset\":0}}");
	// A configured channel of an absent device does not make every cycle a rescan.
	struct sample again = take(s, 1);
	is_int(again.n, N(w), "absent configured channel stays listed");
	sampler_destroy(s);
	config_finish(&cfg);
}

/* Fails chosen files with a chosen errno, the way drivers fail their show() callbacks. */
static struct {
	const char *suffix;
	int err;
} faults[8];
static int mode_reads; // preads of a zone's `mode` seen by faulty_pread()

static ssize_t faulty_pread(int fd, void *buf, size_t len, off_t off) {
	char link[64], target[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		mode_reads += n > 5 && strcmp(target + n - 5, "/mode") == 0;
		for (size_t i = 0; i < N(faults) && faults[i].suffix; i++) {
			size_t sl = strlen(faults[i].suffix);
			if ((size_t)n >= sl && strcmp(target + n - sl, faults[i].suffix) == 0) {
				errno = faults[i].err;
				return -1;
			}
		}
	}
	return pread(fd, buf, len, off);
}

static void test_error_classes(void) {
	struct config cfg;
	make_config(&cfg, "fixtures/rock5c", NULL);
	struct sampler *s = sampler_create(&cfg);
	sampler_set_pread(s, faulty_pread);
	faults[0].suffix = "thermal_zone0/temp";
	faults[0].err = EINVAL;
	faults[1].suffix = "thermal_zone1/temp";
	faults[1].err = EAGAIN;
	faults[2].suffix = "thermal_zone2/temp";
	faults[2].err = ENODATA;
	faults[3].suffix = "thermal_zone3/temp";
	faults[3].err = EIO;
	faults[4].suffix = "policy6/scaling_cur_freq";
	faults[4].err = EBUSY;
	faults[5].suffix = "iio:device1/in_temp_raw"; // MAX31855 fault bit
	faults[5].err = EINVAL;
	struct sample smp = take(s, 0);
	static const struct {
		const char *key;
		int err;
	} want[] = {
		{"thermal/soc-thermal", -EINVAL},
		{"thermal/bigcore0-thermal", -EAGAIN},
		{"thermal/bigcore1-thermal", -ENODATA},
		{"thermal/littlecore-thermal", -EIO},
		{"thermal/center-thermal", 0},
		{"cpufreq/policy6", -EBUSY},
		{"iio/maxim_thermocouple/temp", -EINVAL},
		{"iio/maxim_thermocouple/temp_ambient", 0},
	};
	for (size_t i = 0; i < N(want); i++) {
		ptrdiff_t k = find(&smp, want[i].key);
		char msg[128];
		snprintf(msg, sizeof(msg), "injected error of %s", want[i].key);
		is_int(k >= 0 ? smp.rd[k].err : 1, want[i].err, msg);
	}
	// Transient errors keep every channel and recover on the next read (the fd is reopened).
	memset(faults, 0, sizeof(faults));
	smp = take(s, 1);
	is_int(smp.n, N(rock5c), "transient errors drop no channel");
	bool all_ok = true;
	for (size_t i = 0; i < smp.n; i++) {
		all_ok &= smp.rd[i].err == 0;
	}
	ok(all_ok, "every channel reads again once the faults clear");
	is_near(smp.rd[find(&smp, "thermal/soc-thermal")].value, 43.461, 1e-12,
		"soc-thermal value after EINVAL");
	sampler_destroy(s);
	config_finish(&cfg);
}

/* Runs @cmd through the shell; the test run stops if it fails. */
static void sh(const char *cmd) {
	if (system(cmd) != 0) {
		printf("Bail out! %s\n", cmd);
		exit(1);
	}
}

static void test_rescan(void) {
	char tmp[] = "/tmp/thermlog-test-XXXXXX";
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	char cmd[512], root[128];
	snprintf(cmd, sizeof(cmd), "cp -a fixtures/rock5c %s/", tmp);
	sh(cmd);
	snprintf(root, sizeof(root), "%s/rock5c", tmp);
	struct config cfg;
	make_config(&cfg, root, NULL);
	struct sampler *s = sampler_create(&cfg);
	struct sample smp = take(s, 1000);
	is_int(smp.n, N(rock5c), "copied fixture: all channels");
	uint64_t v1 = sampler_channels_version(s);
	take(s, 1001);
	ok(v1 != 0 && sampler_channels_version(s) == v1,
	   "the channels' version holds between rescans");
	sampler_rescan(s);
	ok(sampler_channels_version(s) != v1, "a rescan gives a new version");
	struct sampler *other = sampler_create(&cfg);
	ok(sampler_channels_version(other) != sampler_channels_version(s),
	   "two samplers never share a version");
	sampler_destroy(other);

	// The NPU driver unbinds: its device directory goes, the class link dangles.
	snprintf(cmd, sizeof(cmd), "mv %s/devices/platform/fdab0000.npu %s/npu.gone", root, tmp);
	sh(cmd);
	smp = take(s, 1010);
	ok(find(&smp, "devfreq/fdab0000.npu") >= 0, "before a rescan the channel is still listed");
	smp = take(s, 1000 + cfg.rescan_s);
	ok(find(&smp, "devfreq/fdab0000.npu") < 0, "the periodic rescan drops the vanished device");
	is_int(smp.n, N(rock5c) - 1, "the other channels stay");
	ptrdiff_t k = find(&smp, "thermal/soc-thermal");
	ok(k >= 0 && smp.rd[k].err == 0, "others keep reading");

	snprintf(cmd, sizeof(cmd), "mv %s/npu.gone %s/devices/platform/fdab0000.npu", tmp, root);
	sh(cmd);
	smp = take(s, 1000 + 2 * cfg.rescan_s);
	k = find(&smp, "devfreq/fdab0000.npu");
	ok(k >= 0 && smp.rd[k].err == 0 && smp.rd[k].value == 1e9,
	   "it comes back on the next rescan");

	// A read that reports a vanished object (ENODEV from a kernel) rescans before the next
	// cycle, without waiting for rescan_s.
	int64_t t = 1000 + 2 * cfg.rescan_s + 1;
	sampler_set_pread(s, faulty_pread);
	faults[0].suffix = "thermal_zone6/temp";
	faults[0].err = ENODEV;
	smp = take(s, t);
	k = find(&smp, "thermal/npu-thermal");
	is_int(k >= 0 ? smp.rd[k].err : 0, -ENODEV, "ENODEV is reported as the reading's error");
	memset(faults, 0, sizeof(faults));
	snprintf(cmd, sizeof(cmd), "rm -r %s/devices/virtual/thermal/thermal_zone6", root);
	sh(cmd);
	smp = take(s, t + 1);
	ok(find(&smp, "thermal/npu-thermal") < 0, "ENODEV triggers a rescan on the next cycle");
	is_int(smp.n, N(rock5c) - 1, "only the vanished zone is gone");

	// A zone's mode is read at discovery, not every cycle: a cycle reads no `mode` file, a
	// zone disabled by hand reads -ENODATA from the next rescan on, and enabled again reads.
	sampler_set_pread(s, faulty_pread);
	mode_reads = 0;
	smp = take(s, t + 1);
	is_int(mode_reads, 0, "a cycle reads no zone's mode");
	snprintf(cmd, sizeof(cmd), "echo disabled > %s/devices/virtual/thermal/thermal_zone0/mode",
		 root);
	sh(cmd);
	smp = take(s, t + 1);
	k = find(&smp, "thermal/soc-thermal");
	ok(k >= 0 && smp.rd[k].err == 0, "disabled by hand: still read until the rescan");
	sampler_rescan(s);
	smp = take(s, t + 1);
	k = find(&smp, "thermal/soc-thermal");
	is_int(k >= 0 ? smp.rd[k].err : 0, -ENODATA, "after the rescan: disabled, -ENODATA");
	snprintf(cmd, sizeof(cmd), "echo enabled > %s/devices/virtual/thermal/thermal_zone0/mode",
		 root);
	sh(cmd);
	sampler_rescan(s);
	smp = take(s, t + 1);
	k = find(&smp, "thermal/soc-thermal");
	ok(k >= 0 && smp.rd[k].err == 0, "enabled again: read again after the rescan");

	// sampler_rescan() on demand sees a new zone at once.
	snprintf(cmd, sizeof(cmd),
		 "cp -a fixtures/rock5c/devices/virtual/thermal/thermal_zone6 "
		 "%s/devices/virtual/thermal/",
		 root);
	sh(cmd);
	sampler_rescan(s);
	smp = take(s, t + 2);
	k = find(&smp, "thermal/npu-thermal");
	ok(k >= 0 && smp.rd[k].err == 0 && fabs(smp.rd[k].value - 42.538) < 1e-12,
	   "sampler_rescan() finds the zone again");
	sampler_destroy(s);
	config_finish(&cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	sh(cmd);
}

/* Counts the lines of @text that contain @needle. */
static int count_lines(const char *text, const char *needle) {
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++) {
		n++;
	}
	return n;
}

static void test_log_on_change(void) {
	fflush(stderr);
	FILE *capture = tmpfile();
	int saved = dup(STDERR_FILENO);
	dup2(fileno(capture), STDERR_FILENO);
	enum log_level level = log_get_level();
	log_set_level(LOG_LEVEL_INFO);

	struct config cfg;
	make_config(&cfg, "fixtures/rock5c", NULL);
	struct sampler *s = sampler_create(&cfg);
	sampler_set_pread(s, faulty_pread);
	faults[0].suffix = "thermal_zone4/temp";
	faults[0].err = EAGAIN;
	for (int t = 0; t < 5; t++) {
		struct sample smp = take(s, t);
		(void)smp;
	}
	faults[0].err = EIO;
	take(s, 5);
	take(s, 6);
	memset(faults, 0, sizeof(faults));
	take(s, 7);
	take(s, 8);
	sampler_destroy(s);
	config_finish(&cfg);

	log_set_level(level);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char text[8192] = "";
	rewind(capture);
	size_t n = fread(text, 1, sizeof(text) - 1, capture);
	text[n] = '\0';
	fclose(capture);
	is_int(count_lines(text, "thermal_zone4/temp: Resource temporarily unavailable"), 1,
	       "EAGAIN for five cycles is logged once");
	is_int(count_lines(text, "thermal_zone4/temp: Input/output error"), 1,
	       "a different error is logged once");
	is_int(count_lines(text, "thermal/center-thermal readable again"), 1,
	       "recovery is logged once");
	is_int(count_lines(text, "thermal_zone4"), 3, "nothing else about that zone");
}

/* Writes @text into @root/@rel. */
static void put(const char *root, const char *rel, const char *text) {
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	if (!f) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/*
 * Implausible readings are errors (null + -ERANGE) in the sampler, the one place the daemon, the
 * CLI and the store get their values from; logged at warning level once per change. An `inf`
 * IIO scale keeps the channel, with an error, instead of dropping it.
 */
static void test_implausible(void) {
	char tmp[] = "/tmp/thermlog-test-XXXXXX";
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	char cmd[512], root[128];
	snprintf(cmd, sizeof(cmd), "cp -a fixtures/rock5c %s/", tmp);
	sh(cmd);
	snprintf(root, sizeof(root), "%s/rock5c", tmp);
	put(root, "devices/virtual/thermal/thermal_zone1/temp", "9223372036854775807\n");
	put(root, "devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "-5\n");
	put(root, "devices/platform/feb00000.spi/spi_master/spi0/spi0.0/iio:device1/in_temp_scale",
	    "inf\n");
	// Beyond int64: the parser's -ERANGE has no value to show (it was logged as "0 hertz").
	put(root, "devices/platform/fb000000.gpu/devfreq/fb000000.gpu/cur_freq",
	    "18446744073709551615\n");

	fflush(stderr);
	FILE *capture = tmpfile();
	int saved = dup(STDERR_FILENO);
	dup2(fileno(capture), STDERR_FILENO);
	enum log_level level = log_get_level();
	log_set_level(LOG_LEVEL_INFO);

	struct config cfg;
	make_config(&cfg, root, NULL);
	struct sampler *s = sampler_create(&cfg);
	struct sample smp = take(s, 1);
	take(s, 2);
	take(s, 3);
	ptrdiff_t zone = find(&smp, "thermal/bigcore0-thermal");
	ptrdiff_t cpu = find(&smp, "cpufreq/policy0");
	ptrdiff_t iio = find(&smp, "iio/maxim_thermocouple/temp");
	is_int(smp.n, N(rock5c), "every channel is still listed");
	is_int(zone >= 0 ? smp.rd[zone].err : 0, -ERANGE, "a zone at INT64_MAX m°C is an error");
	ok(zone >= 0 && isnan(smp.rd[zone].value), "with no value");
	is_int(cpu >= 0 ? smp.rd[cpu].err : 0, -ERANGE, "a frequency of -5 kHz is an error");
	ok(cpu >= 0 && isnan(smp.rd[cpu].value), "with no value");
	ok(iio >= 0, "an IIO channel with an inf scale stays listed");
	ok(iio >= 0 && smp.rd[iio].err != 0 && isnan(smp.rd[iio].value), "with an error");

	put(root, "devices/virtual/thermal/thermal_zone1/temp", "44384\n");
	smp = take(s, 4);
	zone = find(&smp, "thermal/bigcore0-thermal");
	ok(zone >= 0 && smp.rd[zone].err == 0 && fabs(smp.rd[zone].value - 44.384) < 1e-9,
	   "a plausible reading again is a value");
	sampler_destroy(s);
	config_finish(&cfg);

	log_set_level(level);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char text[8192] = "";
	rewind(capture);
	size_t n = fread(text, 1, sizeof(text) - 1, capture);
	text[n] = '\0';
	fclose(capture);
	is_int(count_lines(text,
			   "warning: implausible reading from class/thermal/thermal_zone1/temp"),
	       1, "the implausible zone is a warning, logged once in three cycles");
	is_int(count_lines(text, "warning: implausible reading from "
				 "devices/system/cpu/cpufreq/policy0/scaling_cur_freq"),
	       1, "the implausible frequency too");
	is_int(count_lines(text, "thermal/bigcore0-thermal readable again"), 1,
	       "and the recovery once");
	ok(strstr(text, "warning: could not read class/devfreq/fb000000.gpu/cur_freq: "
			"Numerical result out of range") != NULL &&
		   strstr(text, " 0 hertz") == NULL,
	   "a frequency beyond int64 is named as out of range, not as 0 Hz");
	ok(strstr(text, "in_temp_scale: not a finite number") != NULL,
	   "the inf scale is named in the log");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	sh(cmd);
}

/* A reload that points the sampler at another root drops the old channels and finds the new. */
static void test_set_config(void) {
	struct config a, b;
	make_config(&a, "fixtures/rock5c", NULL);
	make_config(&b, "fixtures/x86", "sources:\n  cpufreq: {enabled: false}\n");
	struct sampler *s = sampler_create(&a);
	struct sample smp = take(s, 0);
	is_int(smp.n, N(rock5c), "before the reload: the ROCK 5C");
	sampler_set_config(s, &b);
	smp = take(s, 1);
	is_int(smp.n, 10, "after the reload: x86 zones and cooling devices, cpufreq off");
	ptrdiff_t k = find(&smp, "thermal/acpitz#2");
	ok(k >= 0 && smp.rd[k].err == 0 && smp.rd[k].value == 29.8, "reads the new root");
	ok(find(&smp, "thermal/soc-thermal") < 0, "old channels are gone");
	sampler_destroy(s);
	config_finish(&a);
	config_finish(&b);
}

static void test_bad_root(void) {
	fflush(stdout);
	struct config cfg;
	make_config(&cfg, "fixtures/no-such-board", NULL);
	fflush(stderr);
	ok(sampler_create(&cfg) == NULL, "a missing sysfs root fails sampler_create");
	config_finish(&cfg);
	// hwmon needs the real /sys: over a fixture it is skipped, not an error.
	make_config(&cfg, "fixtures/x86",
		    "sources:\n  thermal: {enabled: false}\n"
		    "  cpufreq: {enabled: false}\n");
	struct sampler *s = sampler_create(&cfg);
	struct sample smp = take(s, 0);
	is_int(smp.n, 0, "x86 fixture with thermal and cpufreq off: no channels (no IIO, devfreq)");
	sampler_destroy(s);
	config_finish(&cfg);
}

/* The driver table: every source has its driver, and the driver says it is that source's. */
static void test_drivers(void) {
	for (int id = 0; id < SOURCE_COUNT; id++) {
		const struct source_ops *ops = source_driver((enum source_id)id);
		ok(ops && ops->config_id == (enum source_id)id && ops->discover && ops->read,
		   config_source_name((enum source_id)id));
	}
	ok(!source_driver(SOURCE_COUNT), "no driver beyond the table");
	ok(source_driver(SOURCE_THERMAL) == &source_thermal &&
		   source_driver(SOURCE_LOAD) == &source_load,
	   "indexed by enum source_id");
}

/* Driver-wide state behind the driver: zeroed once, the same block after, one per driver. */
static void test_ctx_priv(void) {
	struct source_ctx ctx = {0};
	int *a = source_ctx_priv(&ctx, SOURCE_LOAD, sizeof(int) * 4);
	ok(a && a[0] == 0 && a[3] == 0, "a driver's state: zeroed at the first call");
	a[0] = 7;
	ok(source_ctx_priv(&ctx, SOURCE_LOAD, sizeof(int) * 4) == a && a[0] == 7,
	   "the same block after");
	int *b = source_ctx_priv(&ctx, SOURCE_MEMINFO, sizeof(int));
	ok(b != a && ctx.driver[SOURCE_MEMINFO] == b && ctx.driver[SOURCE_HWMON] == NULL,
	   "one block per driver, none for a driver that asked for none");
	source_ctx_priv_free(&ctx, SOURCE_LOAD);
	ok(ctx.driver[SOURCE_LOAD] == NULL, "freed");
	a = source_ctx_priv(&ctx, SOURCE_LOAD, sizeof(int) * 4);
	ok(a[0] == 0, "after a free: a new zeroed block");
	source_ctx_priv_free(&ctx, SOURCE_LOAD);
	source_ctx_priv_free(&ctx, SOURCE_MEMINFO);
}

/* A channel added by source and name: the key made valid, the name kept as the label. */
static void test_add_named(void) {
	struct sensor_list list = {0};
	sensor_list_add_named(&list, &source_thermal, "cooling", "pwm fan\x01", CHANNEL_KIND_STATE,
			      1, "class/thermal/cooling_device4/cur_state");
	sensor_list_add_named(&list, &source_thermal, "cooling", "pwm fan\x01", CHANNEL_KIND_STATE,
			      1, "class/thermal/cooling_device5/cur_state");
	is_int(list.n, 2, "two channels");
	is_str(list.channels[0].key, "cooling/pwm_fan_", "key sanitized");
	is_str(list.channels[0].source, "cooling", "source");
	is_str(list.channels[0].label, "pwm fan\x01", "label as given");
	is_str(list.channels[1].key, "cooling/pwm_fan_#2", "a repeated key numbered");
	sensor_list_finish(&list);
}

static double cpu_s(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Thousands of channels of one name (a cooling device per CPU, all "Processor") numbered in
 * linear time: every key distinct, "#2" on in order, a later distinct key and a real "x#5"
 * given before its turn kept apart. Cost against a yardstick measured in this run (the
 * formatting each add does anyway): 20,000 adds within 60 times that, checked as they go, so
 * a super-linear numbering fails within a second instead of running for hours.
 */
static void test_many_of_one_name(void) {
	enum { N_ADDS = 20000 };
	double t = cpu_s();
	size_t sink = 0;
	for (int i = 0; i < N_ADDS; i++) {
		char *k = xasprintf("%s#%d", "cooling/Processor", i + 2);
		char *l = xstrdup("class/thermal/cooling_device/cur_state");
		sink += strlen(k) + (strcmp(k, l) != 0);
		free(k);
		free(l);
	}
	double yardstick = cpu_s() - t;
	ok(sink > 0, "yardstick measured");
	double budget = 60 * yardstick + 0.05;
	struct sensor_list list = {0};
	sensor_list_add(&list, &source_thermal, "cooling/x#5", "cooling", "x", CHANNEL_KIND_STATE,
			1, "x5");
	t = cpu_s();
	int added = 0;
	for (; added < N_ADDS && cpu_s() - t <= budget; added++) {
		sensor_list_add_named(&list, &source_thermal, "cooling", "Processor",
				      CHANNEL_KIND_STATE, 1,
				      "class/thermal/cooling_device/cur_state");
		if (added == 10) {
			sensor_list_add_named(&list, &source_thermal, "cooling", "x",
					      CHANNEL_KIND_STATE, 1, "x");
		}
	}
	double took = cpu_s() - t;
	is_int(added, N_ADDS, "20,000 channels of one name added within the budget");
	printf("# %d added in %.1f ms, budget %.1f ms (yardstick %.2f ms)\n", added, took * 1e3,
	       budget * 1e3, yardstick * 1e3);
	is_str(list.channels[1].key, "cooling/Processor", "the first keeps its name");
	is_str(list.channels[2].key, "cooling/Processor#2", "the second is #2");
	is_str(list.channels[12].key, "cooling/x", "another name in between: its own");
	if (list.n == (size_t)N_ADDS + 2) {
		is_str(list.channels[list.n - 1].key, "cooling/Processor#20000",
		       "the last is #20000");
	}
	bool distinct = true;
	for (size_t i = 1; i + 1 < list.n && distinct; i++) {
		if (i != 12) {
			char want[64];
			size_t k = i < 12 ? i : i - 1;
			if (k == 1) {
				snprintf(want, sizeof(want), "cooling/Processor");
			} else {
				snprintf(want, sizeof(want), "cooling/Processor#%zu", k);
			}
			distinct = strcmp(list.channels[i].key, want) == 0;
		}
	}
	ok(distinct, "every one numbered in turn, none twice");
	sensor_list_add_named(&list, &source_thermal, "cooling", "x", CHANNEL_KIND_STATE, 1, "x");
	sensor_list_add_named(&list, &source_thermal, "cooling", "x", CHANNEL_KIND_STATE, 1, "x");
	sensor_list_add_named(&list, &source_thermal, "cooling", "x", CHANNEL_KIND_STATE, 1, "x");
	is_str(list.channels[list.n - 1].key, "cooling/x#4", "a taken #N skipped (x#5 given)");
	sensor_list_add_named(&list, &source_thermal, "cooling", "x", CHANNEL_KIND_STATE, 1, "x");
	is_str(list.channels[list.n - 1].key, "cooling/x#6", "and the next after it");
	sensor_list_seal(&list);
	sensor_list_add_named(&list, &source_thermal, "cooling", "x", CHANNEL_KIND_STATE, 1, "x");
	is_str(list.channels[list.n - 1].key, "cooling/x#7", "sealed and added to again");
	sensor_list_finish(&list);
}

/*
 * A board with a cooling device per CPU, all of one type: each a channel, numbered; and a
 * SIGTERM waiting (the daemon blocks it for its signalfd) ends the discovery early with no
 * channel and no "no channels found" warning, so the daemon stops at once.
 */
static void test_discovery_stops(void) {
	char tmp[] = "/tmp/thermlog-test-XXXXXX";
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && for i in $(seq 0 299); do d=class/thermal/cooling_device$i; "
		 "mkdir -p $d && echo Processor > $d/type && echo 0 > $d/cur_state && "
		 "echo 3 > $d/max_state; done",
		 tmp);
	sh(cmd);
	struct config cfg;
	make_config(&cfg, tmp, NULL);
	struct sampler *s = sampler_create(&cfg);
	struct sample r = take(s, 1);
	is_int(r.n, 300, "300 cooling devices of one type: 300 channels");
	ok(find(&r, "cooling/Processor") == 0 && find(&r, "cooling/Processor#300") == 299,
	   "numbered #2 to #300");
	sampler_destroy(s);

	sigset_t term, old;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	raise(SIGTERM);
	ok(source_stop_pending(), "a blocked SIGTERM is seen pending");
	fflush(stderr);
	FILE *capture = tmpfile();
	int saved = dup(STDERR_FILENO);
	dup2(fileno(capture), STDERR_FILENO);
	enum log_level level = log_get_level();
	log_set_level(LOG_LEVEL_INFO);
	s = sampler_create(&cfg);
	r = take(s, 1);
	log_set_level(level);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char text[8192] = "";
	rewind(capture);
	text[fread(text, 1, sizeof(text) - 1, capture)] = '\0';
	fclose(capture);
	is_int(r.n, 0, "discovery with SIGTERM pending stops: no channel read");
	ok(!strstr(text, "no channels found"), "and no warning about a missing sysfs");
	sampler_destroy(s);
	struct timespec zero = {0};
	is_int(sigtimedwait(&term, NULL, &zero), SIGTERM, "the SIGTERM still waits for its reader");
	sigprocmask(SIG_SETMASK, &old, NULL);
	ok(!source_stop_pending(), "nothing pending after");
	config_finish(&cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	sh(cmd);
}

int main(void) {
	log_init(LOG_LEVEL_ERROR);
	test_drivers();
	test_add_named();
	test_many_of_one_name();
	test_discovery_stops();
	test_parse();
	test_fixture("rock5c", rock5c, N(rock5c));
	test_fixture("x86", x86, N(x86));
	test_fixture("broken", broken, N(broken));
	test_config();
	test_error_classes();
	test_rescan();
	test_log_on_change();
	test_implausible();
	test_set_config();
	test_bad_root();
	test_ctx_priv();
	return test_done();
}
