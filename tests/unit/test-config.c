/* config: defaults, every key, one check per error class (exact FILE:LINE:COL text), globs. */
#include <math.h>

#include "config.h"
#include "lifetime.h"
#include "test.h"
#include "xalloc.h"

/* Loads @yaml as "t.yaml" and checks the whole error text (NULL = must be valid). */
static void check(const char *yaml, const char *want, const char *what) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	bool good = config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors);
	ok(good == (want == NULL), what);
	is_str(errors, want, what);
	free(errors);
	config_finish(&cfg);
}

static void test_defaults(void) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	ok(config_load_string(&cfg, "empty.yaml", "", 0, &errors), "empty file is valid");
	ok(errors == NULL, "no error text for a valid file");
	is_int(cfg.interval_ms, 60000, "interval 60 s");
	is_str(cfg.database, "/var/lib/thermlog/thermlog.db", "database");
	is_str(cfg.sysfs_root, "/sys", "sysfs_root");
	is_int(cfg.retention_raw_s, 0, "retention: every value kept");
	is_int(cfg.rescan_s, 300, "rescan 300 s");
	is_str(cfg.http.listen, "127.0.0.1:9470", "listen");
	ok(cfg.http.token == NULL && cfg.http.token_file == NULL, "no token");
	ok(!cfg.http.metrics_public, "metrics need the token");
	ok(cfg.http.tls_cert == NULL && cfg.http.tls_key == NULL, "no TLS");
	is_int(cfg.http.max_points, 5000, "max_points");
	is_int(cfg.http.max_window_s, 400 * 86400, "max_window 400 d");
	is_int(cfg.http.connection_limit, 32, "connection_limit");
	bool all = true;
	for (int i = 0; i < SOURCE_COUNT; i++) {
		all = all && cfg.sources[i].enabled && cfg.sources[i].include &&
		      !cfg.sources[i].include[0] && cfg.sources[i].exclude &&
		      !cfg.sources[i].exclude[0];
	}
	ok(all, "all sources enabled with empty (non-NULL) glob lists");
	ok(cfg.n_channels == 0 && cfg.n_iio_channels == 0 && cfg.n_capacitors == 0, "no lists");
	ok(cfg.path == NULL, "config_load_string leaves path alone");
	config_finish(&cfg);
	config_finish(&cfg); // a finished config is zeroed: finishing again is harmless

	check("# only a comment\n", NULL, "comment-only file is valid");
	check("---\n", NULL, "empty document is valid");
	check("http:\n  # listen: 1.2.3.4:5\nsources:\n", NULL, "sections left empty are valid");
	is_str(config_source_name(SOURCE_IIO), "iio", "source name iio");
	is_str(config_source_name(SOURCE_THERMAL), "thermal", "source name thermal");
}

static void test_runs(void) {
	struct config cfg;
	config_init(&cfg);
	is_str(cfg.runs.socket, "/run/thermlog/thermlog.sock", "runs.socket default");
	is_int(cfg.runs.interval_ms, 5000, "runs.interval 5 s");
	ok(cfg.runs.power_channel == NULL, "runs.power_channel automatic");
	is_int(cfg.runs.metrics_labels, 20, "runs.metrics_labels 20");
	is_int(cfg.runs.max_active, 64, "runs.max_active 64");
	char *errors = NULL;
	const char *yaml = "runs:\n  socket: /tmp/t.sock\n  interval: 1s\n"
			   "  power_channel: hwmon/ina226-i2c-4-40/power1\n  metrics_labels: 5\n"
			   "  max_active: 3\n";
	ok(config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors), "runs keys load");
	is_str(cfg.runs.socket, "/tmp/t.sock", "runs.socket");
	is_int(cfg.runs.interval_ms, 1000, "runs.interval");
	is_str(cfg.runs.power_channel, "hwmon/ina226-i2c-4-40/power1", "runs.power_channel");
	is_int(cfg.runs.metrics_labels, 5, "runs.metrics_labels");
	is_int(cfg.runs.max_active, 3, "runs.max_active");
	free(errors);
	errors = NULL;
	yaml = "runs:\n  power_channel: auto\n";
	ok(config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors), "auto loads");
	ok(cfg.runs.power_channel == NULL, "auto is the automatic choice");
	free(errors);
	ok(config_peak_channel(&cfg, "thermal/soc-thermal") &&
		   !config_peak_channel(&cfg, "iio/maxim_thermocouple/temp"),
	   "runs.peak_channels default: the thermal zones, not a thermocouple");
	errors = NULL;
	yaml = "runs:\n  peak_channels: [thermal/soc*, iio/*]\n";
	ok(config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors), "peak_channels load");
	ok(config_peak_channel(&cfg, "iio/maxim_thermocouple/temp") &&
		   config_peak_channel(&cfg, "thermal/soc-thermal") &&
		   !config_peak_channel(&cfg, "thermal/gpu-thermal"),
	   "runs.peak_channels chooses others");
	free(errors);
	config_finish(&cfg);
	check("runs:\n  peak_channels: []\n",
	      "t.yaml:2:18: runs.peak_channels: expected at least one glob, such as 'thermal/*'\n",
	      "runs.peak_channels empty");
	check("runs:\n  peak_channels: ['thermal/[a']\n",
	      "t.yaml:2:19: runs.peak_channels: bad glob 'thermal/[a': unbalanced '[': a bracket "
	      "expression needs its ']'\n",
	      "runs.peak_channels bad glob");
	check("runs:\n  interval: 500ms\n",
	      "t.yaml:2:13: interval: '500ms' is below the minimum of 1s\n",
	      "runs.interval under 1 s");
	check("runs:\n  socket: run/t.sock\n",
	      "t.yaml:2:11: socket: expected an absolute path of at most 107 bytes, got "
	      "'run/t.sock'\n",
	      "runs.socket relative");
	check("runs:\n  power_channel: a b\n",
	      "t.yaml:2:18: power_channel: expected a channel key such as "
	      "hwmon/ina226-i2c-4-40/power1, or 'auto', got 'a b'\n",
	      "runs.power_channel not a key");
	check("runs:\n  max_active: 0\n",
	      "t.yaml:2:15: max_active: must be between 1 and 4096, got 0\n", "runs.max_active 0");
	check("runs:\n  metrics_labels: 0\n",
	      "t.yaml:2:19: metrics_labels: must be between 1 and 200, got 0\n",
	      "runs.metrics_labels 0");
	check("runs:\n  metrics_labels: 201\n",
	      "t.yaml:2:19: metrics_labels: must be between 1 and 200, got 201\n",
	      "runs.metrics_labels over 200");
	check("runs:\n  metrics_labels: ten\n",
	      "t.yaml:2:19: metrics_labels: expected an integer, got 'ten'\n",
	      "runs.metrics_labels not a number");
	check("runs:\n  sockt: /x\n",
	      "t.yaml:2:3: unknown key 'sockt' in runs: did you mean 'socket'? (allowed: socket, "
	      "interval, power_channel, metrics_labels, peak_channels, max_active)\n",
	      "runs unknown key");
}

static void test_example(void) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	bool good = config_load(&cfg, "../etc/thermlog.yaml", &errors);
	ok(good, "etc/thermlog.yaml is valid");
	if (errors) {
		printf("# %s", errors);
	}
	free(errors);
	is_str(cfg.path, "../etc/thermlog.yaml", "path recorded");
	struct config def;
	config_init(&def);
	ok(cfg.interval_ms == def.interval_ms && strcmp(cfg.database, def.database) == 0 &&
		   strcmp(cfg.sysfs_root, def.sysfs_root) == 0 &&
		   cfg.retention_raw_s == def.retention_raw_s && cfg.rescan_s == def.rescan_s &&
		   strcmp(cfg.http.listen, def.http.listen) == 0 &&
		   cfg.http.max_points == def.http.max_points &&
		   cfg.http.max_window_s == def.http.max_window_s &&
		   cfg.http.connection_limit == def.http.connection_limit,
	   "the example states the built-in defaults");
	config_finish(&def);
	config_finish(&cfg);
}

static void test_full(void) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	bool good = config_load(&cfg, "configs/full.yaml", &errors);
	ok(good, "configs/full.yaml is valid");
	if (errors) {
		printf("# %s", errors);
	}
	free(errors);
	if (!good) {
		config_finish(&cfg);
		return; // the checks below would index missing entries
	}
	is_int(cfg.interval_ms, 30000, "interval");
	is_str(cfg.database, "/tmp/thermlog-test.db", "database");
	is_str(cfg.sysfs_root, "fixtures/sysfs", "sysfs_root");
	is_int(cfg.retention_raw_s, 90 * 86400, "retention.raw");
	is_int(cfg.rescan_s, 120, "rescan");
	is_str(cfg.http.listen, "[::1]:8080", "http.listen");
	is_str(cfg.http.token, "s3cret-token_42", "http.token");
	ok(cfg.http.metrics_public, "http.metrics_public");
	is_str(cfg.http.tls_cert, "/etc/thermlog/cert.pem", "http.tls_cert");
	is_str(cfg.http.tls_key, "/etc/thermlog/key.pem", "http.tls_key");
	is_int(cfg.http.max_points, 2000, "http.max_points");
	is_int(cfg.http.max_window_s, 30 * 86400, "http.max_window");
	is_int(cfg.http.connection_limit, 8, "http.connection_limit");

	const struct source_config *th = &cfg.sources[SOURCE_THERMAL];
	ok(th->enabled, "thermal enabled");
	is_str(th->include[0], "thermal/*", "thermal include 1");
	is_str(th->include[1], "cooling/pwm-fan", "thermal include 2");
	ok(th->include[2] == NULL, "thermal include has two");
	is_str(th->exclude[0], "thermal/npu-*", "thermal exclude");
	ok(!cfg.sources[SOURCE_HWMON].enabled, "hwmon disabled");
	is_str(cfg.sources[SOURCE_CPUFREQ].include[0], "cpufreq/policy[04]", "cpufreq include");
	is_str(cfg.sources[SOURCE_DEVFREQ].exclude[0], "devfreq/dmc", "devfreq exclude");
	ok(cfg.sources[SOURCE_IIO].enabled && !cfg.sources[SOURCE_IIO].include[0],
	   "iio: {} keeps defaults");

	is_int(cfg.n_channels, 3, "three channel overrides");
	const struct channel_override *o =
		config_channel_override(&cfg, "iio/maxim_thermocouple/temp");
	ok(o != NULL, "override found");
	if (o) {
		is_str(o->label, "C12 bulk capacitor", "override label");
		is_near(o->offset, -0.75, 1e-15, "override offset");
		is_near(o->gain, 1.01, 1e-15, "override gain");
		ok(o->enabled, "override enabled by default");
	}
	o = config_channel_override(&cfg, "thermal/gpu-thermal");
	ok(o && !o->enabled && o->label == NULL && o->gain == 1 && o->offset == 0,
	   "enabled: false with other fields at their defaults");
	o = config_channel_override(&cfg, "cpufreq/policy0");
	ok(o && strcmp(o->label, "little cores") == 0, "flow-style override");
	ok(config_channel_override(&cfg, "cpufreq/policy4") == NULL, "no override: NULL");

	is_int(cfg.n_iio_channels, 2, "two iio channels");
	const struct iio_channel_config *ic = &cfg.iio_channels[0];
	is_str(ic->device, "fec10000.saradc", "iio device");
	is_str(ic->channel, "voltage2", "iio channel");
	is_str(ic->label, "C12 ambient (AD8495)", "iio label");
	is_str(ic->unit, "celsius", "iio unit");
	is_near(ic->gain, 200.0, 0, "iio linear gain");
	is_near(ic->offset, -250.0, 0, "iio linear offset");
	ic = &cfg.iio_channels[1];
	is_str(ic->device, "iio:device1", "iio device by number");
	ok(ic->label == NULL && strcmp(ic->unit, "volts") == 0 && ic->gain == 1 && ic->offset == 0,
	   "iio defaults: no label, volts, identity");

	is_int(cfg.n_capacitors, 6, "six capacitors");
	const struct capacitor_config *c = &cfg.capacitors[0];
	is_str(c->name, "C12 bulk 100uF/400V", "cap name");
	is_str(c->sensor, "iio/maxim_thermocouple/temp", "cap sensor");
	is_int(c->basis, TEMP_BASIS_AMBIENT, "cap basis");
	is_near(c->rated_life_h, 2000, 0, "cap rated_life_h");
	is_near(c->rated_temp_c, 105, 0, "cap rated_temp_c");
	is_int(c->model, LIFETIME_MODEL_BT, "cap model");
	is_near(c->bt, 2.0, 0, "cap bt");
	ok(isnan(c->ea_ev), "cap ea_ev unset");
	is_int(c->type, CAPACITOR_TYPE_WET, "cap type");
	is_int(c->self_heating, SELF_HEATING_POWER, "cap self-heating form I2*ESR*Rth");
	is_near(c->current_a, 0.654, 0, "cap current_a");
	is_near(c->esr_ohm, 0.5, 0, "cap esr_ohm");
	is_near(c->rth_k_per_w, 15, 0, "cap rth_k_per_w");
	is_int(c->in_service, 1768435200, "cap in_service 2026-01-15 UTC");
	ok(c->has_in_service, "cap in_service set");
	is_near(c->life_cap_years, 12, 0, "cap life_cap_years");
	is_near(c->validity_low_c, 40, 0, "cap validity_low_c");
	is_int(c->line, 46, "cap line");
	is_str(c->review[CAPACITOR_REVIEW_ENCLOSURE], "IP54 aluminium box, no fan",
	       "cap review: enclosure");
	is_str(c->review[CAPACITOR_REVIEW_THERMOCOUPLE], "type K on the can's side, Kapton tape",
	       "cap review: thermocouple");
	is_str(c->review[CAPACITOR_REVIEW_VENT_CLEARANCE], "2 mm to the lid",
	       "cap review: vent_clearance");
	ok(!c->review[CAPACITOR_REVIEW_INSULATION] && !c->review[CAPACITOR_REVIEW_HEAT_SOURCES] &&
		   !c->review[CAPACITOR_REVIEW_SERIES_CONDITIONS],
	   "cap review: keys left out are not recorded (NULL)");
	c = &cfg.capacitors[1];
	is_int(c->basis, TEMP_BASIS_CASE, "cap 2 basis case");
	is_int(c->model, LIFETIME_MODEL_ARRHENIUS, "cap 2 arrhenius");
	is_near(c->ea_ev, 0.83, 0, "cap 2 ea_ev");
	ok(isnan(c->bt), "cap 2 bt unset");
	is_int(c->type, CAPACITOR_TYPE_POLYMER, "cap 2 polymer");
	is_int(c->self_heating, SELF_HEATING_NONE, "cap 2 no self-heating");
	ok(!c->has_in_service, "cap 2 in_service unset");
	is_near(c->life_cap_years, 15, 0, "cap 2 default life cap");
	ok(isnan(c->validity_low_c), "cap 2 validity default (NAN)");
	c = &cfg.capacitors[2];
	is_int(c->self_heating, SELF_HEATING_RIPPLE, "cap 3 ripple form");
	is_near(c->current_a, 1.2, 0, "cap 3 current_a");
	is_near(c->rated_ripple_a, 2.4, 0, "cap 3 rated_ripple_a");
	is_near(c->rated_rise_k, 5, 0, "cap 3 rated_rise_k");
	is_str(c->sensor, "C12 ambient (AD8495)", "cap 3 sensor by label");
	c = &cfg.capacitors[3];
	is_int(c->self_heating, SELF_HEATING_RISE, "cap 4 fixed rise");
	is_near(c->rise_k, 3.2, 0, "cap 4 rise_k");
	is_str(c->sensors[TEMP_BASIS_AMBIENT], "thermal/soc-thermal",
	       "cap 4: the single form fills its basis's sensor");
	ok(!c->sensors_map && !c->sensors[TEMP_BASIS_CASE], "cap 4: the single form");
	ok(isnan(c->uncertainty_k) && isnan(c->case_diameter_mm) && !c->ripple_from.channel &&
		   isnan(c->voltage.applied_v) && isnan(c->valid_low_c),
	   "cap 4: the review's keys at their defaults");
	c = &cfg.capacitors[4];
	ok(c->sensors_map, "cap 5: sensors:");
	is_str(c->sensors[TEMP_BASIS_AMBIENT], "C12 ambient (AD8495)", "cap 5 ambient sensor");
	is_str(c->sensors[TEMP_BASIS_CASE], "iio/maxim_thermocouple/temp", "cap 5 case sensor");
	is_str(c->sensors[TEMP_BASIS_CORE], "thermal/soc-thermal", "cap 5 core sensor");
	is_str(c->sensor, "thermal/soc-thermal", "cap 5 ages at the core sensor");
	is_int(c->basis, TEMP_BASIS_CORE, "cap 5 basis: core");
	is_str(c->ripple_from.channel, "hwmon/ina226/curr1", "cap 5 ripple_from channel");
	is_int(c->ripple_from.formula, RIPPLE_FORMULA_BUCK_INPUT, "cap 5 buck_input");
	ok(c->ripple_from.v_in == 12 && c->ripple_from.v_out == 5 &&
		   c->ripple_from.multiplier == 0.9,
	   "cap 5 v_in, v_out, multiplier");
	is_str(c->load_channel, "hwmon/ina226/power1", "cap 5 load_channel");
	ok(c->rise_tolerance_k == 2 && c->rise_tolerance_pct == 40, "cap 5 tolerance");
	ok(c->steady_rate_k == 0.5 && c->steady_soak_min == 45, "cap 5 steady_state");
	ok(c->valid_low_c == 60 && c->valid_high_c == 95 && c->max_temp_c == 110,
	   "cap 5 valid_c, max_temp_c");
	ok(c->voltage.applied_v == 24 && c->voltage.rated_v == 35 && c->voltage.exponent == 2.5,
	   "cap 5 voltage");
	ok(c->case_diameter_mm == 10 && c->vent_clearance_mm == 2.5, "cap 5 vent figures");
	is_str(c->vent_facing, "up, towards the lid", "cap 5 vent_facing");
	is_near(c->uncertainty_k, 1.5, 0, "cap 5 uncertainty_k");
	c = &cfg.capacitors[5];
	ok(c->self_heating == SELF_HEATING_POWER && isnan(c->current_a) &&
		   c->ripple_from.formula == RIPPLE_FORMULA_PROPORTIONAL &&
		   c->ripple_from.k == 0.35,
	   "cap 6: the power form without current_a, the current measured");
	config_finish(&cfg);
}

static void test_syntax(void) {
	check("a: 1\n  b: 2\n", "t.yaml:2:4: mapping values are not allowed in this context\n",
	      "scanner error with libyaml's text");
	check("interval: [1, 2\n",
	      "t.yaml:2:1: did not find expected ',' or ']' while parsing a flow sequence started at line 1, column 11\n",
	      "parser error with its context");
	check("interval: 60s\n\xff\n",
	      "t.yaml:2:1: invalid leading UTF-8 octet (the file must be UTF-8 text)\n",
	      "reader error: not UTF-8");
	check("interval: 60s\n---\ninterval: 2m\n",
	      "t.yaml:2:1: multiple documents are not supported: keep one configuration per file\n",
	      "multiple documents");
	check("interval: &i 60s\nrescan: *i\n",
	      "t.yaml:1:11: anchors are not supported ('&i'): write each value out\n"
	      "t.yaml:2:9: aliases are not supported ('*i'): write the value out\n",
	      "anchors and aliases");
	check("interval: !!str 60s\n",
	      "t.yaml:1:11: tags are not supported ('tag:yaml.org,2002:str'): write the plain value\n",
	      "tags");
	check("database: \"a\\0b\"\n", "t.yaml:1:11: NUL characters are not allowed in values\n",
	      "NUL in a value");
	// libyaml's own words for a tab in the indentation are cryptic: say what is wrong
	check("http:\n\tlisten: 127.0.0.1:9470\n",
	      "t.yaml:2:1: tabs are not allowed for indentation: indent with spaces\n",
	      "a tab as the whole indentation");
	check("http:\n  listen: 127.0.0.1:9470\n  \ttoken: abc\n",
	      "t.yaml:3:3: tabs are not allowed for indentation: indent with spaces\n",
	      "a tab after spaces");
	check("capacitors:\n  - name: a\n\t sensor: x\n",
	      "t.yaml:3:1: tabs are not allowed for indentation: indent with spaces\n",
	      "a tab in a list item");
	check("- 1\n- 2\n",
	      "t.yaml:1:1: the configuration must be a mapping of keys to values, got a list\n",
	      "root must be a mapping");
	char deep[200] = "a: ";
	for (int i = 0; i < 40; i++) {
		strcat(deep, "[");
	}
	strcat(deep, "\n");
	check(deep, "t.yaml:1:35: nesting deeper than 32 levels\n", "nesting depth capped");
}

static void test_keys(void) {
	check("intervall: 60s\n",
	      "t.yaml:1:1: unknown key 'intervall' in the top level: did you mean 'interval'? (allowed: interval, database, sysfs_root, procfs_root, debugfs_root, retention, rescan, http, sources, channels, iio_channels, capacitors, runs, board, roles)\n",
	      "unknown top-level key");
	check("http:\n  lisen: 1.2.3.4:80\n",
	      "t.yaml:2:3: unknown key 'lisen' in http: did you mean 'listen'? (allowed: listen, token, token_file, metrics_public, tls_cert, tls_key, tls_priorities, max_points, max_window, connection_limit)\n",
	      "unknown http key");
	check("channels: {thermal/a: {lable: x}}\n",
	      "t.yaml:1:24: unknown key 'lable' in thermal/a: did you mean 'label'? (allowed: label, enabled, offset, gain)\n",
	      "suggestion for a transposition");
	check("capacitors: [{name: a, sensor: b, rated_life_h: 1, rated_temp_c: 105, xy: 1}]\n",
	      "t.yaml:1:71: unknown key 'xy' in capacitor (allowed: name, sensor, sensors, basis, rated_life_h, rated_temp_c, model, bt, ea_ev, type, self_heating, in_service, life_cap_years, validity_low_c, valid_c, max_temp_c, review, ripple_from, load_channel, self_heating_tolerance, steady_state, voltage, case_diameter_mm, vent_clearance_mm, vent_facing, uncertainty_k)\n",
	      "no far-fetched suggestion for a short key");
	// Names and labels are printed where terminals read them: no control character.
	check("channels:\n  thermal/a: {label: \"soc\\e[31m\\a\"}\n",
	      "t.yaml:2:22: label: a control character (\\x1b) in 'soc\\x1b[31m\\x07': names and "
	      "labels are printed where terminals read them\n",
	      "a label with ESC and BEL is refused");
	check("capacitors: [{name: \"C1\\tx\", sensor: b, rated_life_h: 1, rated_temp_c: 105}]\n",
	      "t.yaml:1:21: name: a control character (\\x09) in 'C1\\x09x': names and labels are "
	      "printed where terminals read them\n",
	      "a capacitor name with a tab is refused");
	check("sources:\n  zfs: {}\n",
	      "t.yaml:2:3: unknown key 'zfs' in sources (allowed: thermal, cpufreq, devfreq, iio, hwmon, meminfo, load)\n",
	      "unknown source");
	check("capacitors:\n  - {name: a, sensor: b, rated_life_h: 1, rated_temp_c: 105, esr: 1}\n",
	      "t.yaml:2:62: unknown key 'esr' in capacitor (allowed: name, sensor, sensors, basis, rated_life_h, rated_temp_c, model, bt, ea_ev, type, self_heating, in_service, life_cap_years, validity_low_c, valid_c, max_temp_c, review, ripple_from, load_channel, self_heating_tolerance, steady_state, voltage, case_diameter_mm, vent_clearance_mm, vent_facing, uncertainty_k)\n",
	      "unknown capacitor key");
	check("interval: 60s\nrescan: 1m\ninterval: 2m\n",
	      "t.yaml:3:1: duplicate key 'interval' in the top level (first at line 1)\n",
	      "duplicate top-level key");
	check("channels:\n  thermal/a: {label: x, label: y}\n",
	      "t.yaml:2:25: duplicate key 'label' in thermal/a (first at line 2)\n",
	      "duplicate key in a flow mapping");
	check("channels:\n  thermal/a: {}\n  thermal/a: {}\n  thermal/a: {}\n",
	      "t.yaml:3:3: duplicate key 'thermal/a' in channels (first at line 2)\n"
	      "t.yaml:4:3: duplicate key 'thermal/a' in channels (first at line 2)\n",
	      "every repeat of a channel key");
	check("? [a]\n: 1\n", "t.yaml:1:3: the top level: keys must be strings, got a list\n",
	      "complex key");
}

static void test_types(void) {
	check("database: [a]\n", "t.yaml:1:11: database: expected a string, got a list\n",
	      "string wanted, list given");
	check("database:\n", "t.yaml:1:10: database: expected a string, got an empty value\n",
	      "empty value for a required string");
	check("http: 5\n",
	      "t.yaml:1:7: http: expected a mapping (key: value lines), got a string\n",
	      "mapping wanted");
	check("capacitors: {a: 1}\n",
	      "t.yaml:1:13: capacitors: expected a list (lines starting with '- '), got a mapping\n",
	      "list wanted");
	check("http: {metrics_public: yes}\n",
	      "t.yaml:1:24: metrics_public: expected true or false, got 'yes'\n",
	      "booleans are true/false only");
	check("sources: {iio: {enabled: \"false\"}}\n",
	      "t.yaml:1:26: enabled: expected true or false, got the quoted string 'false' (drop the quotes)\n",
	      "a quoted boolean is a string");
	check("http: {max_points: 5k}\n",
	      "t.yaml:1:20: max_points: expected an integer, got '5k'\n", "integer wanted");
	check("channels: {thermal/a: {offset: 0x10}}\n",
	      "t.yaml:1:32: offset: expected a number, got '0x10'\n", "no hex numbers");
	check("channels: {thermal/a: {offset: nan}}\n",
	      "t.yaml:1:32: offset: expected a number, got 'nan'\n", "no NaN");
	check("channels: {thermal/a: {offset: \"1.5\"}}\n",
	      "t.yaml:1:32: offset: expected a number, got '1.5'\n", "a quoted number is a string");
	check("interval: 60\n",
	      "t.yaml:1:11: interval: '60' has no unit: write e.g. 60s or 60m (units ms, s, m, h, d, w)\n",
	      "bare integer duration");
	check("interval: 2\n  \n  serv\t1m\n",
	      "t.yaml:1:11: interval: '2\\nserv\\x091m' is not a duration (e.g. 500ms, 60s, 5m, 2h, 7d)\n",
	      "a folded value stays on one line (found by fuzz-config)");
	check("rescan: soon\n",
	      "t.yaml:1:9: rescan: 'soon' is not a duration (e.g. 500ms, 60s, 5m, 2h, 7d)\n",
	      "not a duration");
	check("capacitors:\n  - name: a\n    sensor: b\n    rated_life_h: 1\n    rated_temp_c: 105\n    in_service: 2026-02-30\n",
	      "t.yaml:6:17: in_service: expected a date YYYY-MM-DD, got '2026-02-30'\n",
	      "invalid date");
	check("capacitors:\n  - name: a\n    sensor: b\n    rated_life_h: 1\n    rated_temp_c: 105\n    model: weibull\n",
	      "t.yaml:6:12: model: expected bt or arrhenius, got 'weibull'\n", "unknown model");
	check("capacitors: [{name: a, sensor: b, rated_life_h: 1, rated_temp_c: 105, basis: air}]\n",
	      "t.yaml:1:78: basis: expected ambient or case or core, got 'air'\n", "unknown basis");
	check("capacitors: [{name: a, sensor: b, rated_life_h: 1, rated_temp_c: 105, type: tantalum}]\n",
	      "t.yaml:1:77: type: expected wet or polymer, got 'tantalum'\n", "unknown type");
	check("capacitors: [5]\n",
	      "t.yaml:1:14: capacitors: each entry is a mapping with name, sensor (or sensors), rated_life_h and rated_temp_c, got a string\n",
	      "capacitor entry must be a mapping");
}

static void test_ranges(void) {
	check("interval: 500ms\n", "t.yaml:1:11: interval: '500ms' is below the minimum of 1s\n",
	      "interval below 1 s");
	check("interval: 2d\n", "t.yaml:1:11: interval: '2d' is above the maximum of 1d\n",
	      "interval above 1 d");
	check("interval: 1500ms\n", NULL, "interval 1.5 s is fine");
	check("retention: {raw: -5d}\n", "t.yaml:1:18: raw: must not be negative, got '-5d'\n",
	      "negative retention");
	check("retention: {raw: 30m}\n", "t.yaml:1:18: raw: '30m' is below the minimum of 1h\n",
	      "retention too short");
	check("rescan: 1500ms\n",
	      "t.yaml:1:9: rescan: must be a whole number of seconds, got '1500ms'\n",
	      "rescan in whole seconds");
	check("http: {max_points: 0}\n",
	      "t.yaml:1:20: max_points: must be between 2 and 1000000, got 0\n", "max_points 0");
	check("http: {connection_limit: 99999999999999999999}\n",
	      "t.yaml:1:26: connection_limit: must be between 1 and 65536, got 99999999999999999999\n",
	      "huge integer does not wrap");
	check("channels: {thermal/a: {gain: 0}}\n",
	      "t.yaml:1:30: gain: 0 would turn every reading into the offset\n", "gain 0");
	const char *cap = "capacitors:\n  - name: a\n    sensor: b\n";
	char buf[512];
	snprintf(buf, sizeof(buf), "%s    rated_life_h: -1\n    rated_temp_c: 105\n", cap);
	check(buf, "t.yaml:4:19: rated_life_h: must be greater than 0 and at most 1e+07, got -1\n",
	      "negative rated life");
	snprintf(buf, sizeof(buf), "%s    rated_life_h: 0\n    rated_temp_c: 105\n", cap);
	check(buf, "t.yaml:4:19: rated_life_h: must be greater than 0 and at most 1e+07, got 0\n",
	      "zero rated life");
	snprintf(buf, sizeof(buf), "%s    rated_life_h: 2000\n    rated_temp_c: 250\n", cap);
	check(buf, "t.yaml:5:19: rated_temp_c: must be between 40 and 200, got 250\n",
	      "rated temperature out of range");
	snprintf(buf, sizeof(buf), "%s    rated_life_h: 2000\n    rated_temp_c: 105\n    bt: 1\n",
		 cap);
	check(buf, "t.yaml:6:9: bt: must be greater than 1 and at most 10, got 1\n", "bt 1");
	snprintf(
		buf, sizeof(buf),
		"%s    rated_life_h: 2000\n    rated_temp_c: 105\n    model: arrhenius\n    ea_ev: 0\n",
		cap);
	check(buf, "t.yaml:7:12: ea_ev: must be greater than 0 and at most 5, got 0\n", "ea_ev 0");
	snprintf(buf, sizeof(buf),
		 "%s    rated_life_h: 2000\n    rated_temp_c: 105\n    life_cap_years: 0\n", cap);
	check(buf, "t.yaml:6:21: life_cap_years: must be greater than 0 and at most 100, got 0\n",
	      "life cap 0");
	snprintf(buf, sizeof(buf),
		 "%s    rated_life_h: 2000\n    rated_temp_c: 85\n    validity_low_c: 90\n", cap);
	check(buf, "t.yaml:6:21: validity_low_c: must be below rated_temp_c (85)\n",
	      "validity bound above the rating");
}

static void test_listen(void) {
	check("http: {listen: 0.0.0.0:80}\n", NULL, "IPv4 any");
	check("http: {listen: \"[::]:9470\"}\n", NULL, "IPv6 any");
	check("http: {listen: \"[fe80::1]:1\"}\n", NULL, "IPv6 address");
	check("http: {listen: localhost:80}\n",
	      "t.yaml:1:16: listen: 'localhost:80': not an IPv4 address (host names are not resolved)\n",
	      "host name");
	check("http: {listen: 127.0.0.1}\n",
	      "t.yaml:1:16: listen: '127.0.0.1': expected ADDRESS:PORT, e.g. 127.0.0.1:9470\n",
	      "no port");
	check("http: {listen: 127.0.0.1:0}\n", NULL, "port 0: any free port, as --listen");
	check("http: {tls_priorities: 'NORMAL:-VERS-ALL:+VERS-TLS1.3'}\n", NULL,
	      "tls_priorities: a GnuTLS priority string");
	check("http: {listen: 127.0.0.1:65536}\n",
	      "t.yaml:1:16: listen: '127.0.0.1:65536': the port must be a number from 0 to 65535\n",
	      "port 65536");
	check("http: {listen: \"::1:80\"}\n",
	      "t.yaml:1:16: listen: '::1:80': an IPv6 address goes in brackets, e.g. [::1]:9470\n",
	      "unbracketed IPv6");
	check("http: {listen: \"[::g]:80\"}\n",
	      "t.yaml:1:16: listen: '[::g]:80': not an IPv6 address\n", "bad IPv6");
	check("http: {listen: \"[::1]80\"}\n",
	      "t.yaml:1:16: listen: '[::1]80': an IPv6 address goes in brackets followed by :PORT, e.g. [::1]:9470\n",
	      "IPv6 without colon");
	check("http: {listen: 256.1.1.1:80}\n",
	      "t.yaml:1:16: listen: '256.1.1.1:80': not an IPv4 address (host names are not resolved)\n",
	      "IPv4 out of range");
	check("http: {token: a b}\n", "t.yaml:1:15: token: must be visible ASCII without spaces\n",
	      "token with a space");
	check("http: {token: abc, token_file: /x}\n",
	      "t.yaml:1:32: token_file: give either token or token_file, not both\n",
	      "token and token_file");
	check("http: {tls_key: /k}\n", "t.yaml:1:17: tls_key: needs tls_cert as well\n",
	      "key without cert");
	check("http: {token: }\n", NULL, "an empty token means none");
}

static void test_globs(void) {
	check("sources: {thermal: {include: [\"thermal/[abc\"]}}\n",
	      "t.yaml:1:31: sources.thermal.include: bad glob 'thermal/[abc': unbalanced '[': a bracket expression needs its ']'\n",
	      "unbalanced bracket");
	check("sources: {thermal: {exclude: [\"\"]}}\n",
	      "t.yaml:1:31: sources.thermal.exclude: bad glob '': an empty pattern matches nothing\n",
	      "empty pattern");
	check("sources: {hwmon: {exclude: [\"hwmon/x\\\\\"]}}\n",
	      "t.yaml:1:29: sources.hwmon.exclude: bad glob 'hwmon/x\\': a trailing '\\' escapes nothing\n",
	      "trailing backslash");
	check("sources: {hwmon: {exclude: [\"hwmon/a b\"]}}\n",
	      "t.yaml:1:29: sources.hwmon.exclude: bad glob 'hwmon/a b': channel keys never contain spaces\n",
	      "space in pattern");
	check("sources: {thermal: {include: [cpufreq/*]}}\n",
	      "t.yaml:1:31: sources.thermal.include: 'cpufreq/*' can never match: thermal channel keys start with thermal/ or cooling/\n",
	      "pattern for another source");
	check("sources: {cpufreq: {include: [\"*[]]*\", \"cpufreq/policy[!0]\", \"*4\"]}}\n", NULL,
	      "']' first in a bracket is a member; leading '*' fits any source");
	check("sources: {iio: {include: iio/*}}\n",
	      "t.yaml:1:26: sources.iio.include: expected a list (lines starting with '- '), got a string\n",
	      "globs come as a list");
	check("channels: {\"thermal/a b\": {}}\n",
	      "t.yaml:1:12: channels: 'thermal/a b' is not a channel key (1 to 200 printable ASCII characters, no spaces, e.g. thermal/soc-thermal)\n",
	      "invalid channel key");
}

static void test_iio(void) {
	check("iio_channels:\n  - device: fec10000.saradc\n    channel: voltage2\n    unit: kelvinz\n",
	      "t.yaml:4:11: unit: unknown unit 'kelvinz' (e.g. celsius, volts, amperes, watts, hertz)\n",
	      "unknown unit");
	check("iio_channels:\n  - channel: voltage2\n",
	      "t.yaml:2:5: iio_channels entry: 'device' is required\n", "device required");
	check("iio_channels:\n  - {device: a/b, channel: voltage2}\n",
	      "t.yaml:2:14: device: 'a/b' is not an IIO device name (its 'name' file, or iio:deviceN)\n",
	      "device with a slash");
	check("iio_channels:\n  - {device: adc, channel: in_voltage2_raw}\n", NULL,
	      "a channel name with an index and suffix is syntactically fine");
	check("iio_channels:\n  - {device: adc, channel: \"2\"}\n",
	      "t.yaml:2:28: channel: '2' is not an IIO channel (e.g. voltage2 for in_voltage2_raw)\n",
	      "channel must start with a type");
	check("iio_channels:\n  - {device: adc, channel: voltage2}\n  - {device: adc, channel: voltage2}\n",
	      "t.yaml:3:5: iio_channels: adc voltage2 is configured twice\n",
	      "the same ADC channel twice");
	check("iio_channels:\n  - adc\n",
	      "t.yaml:2:5: iio_channels: each entry is a mapping with device and channel, got a "
	      "string\n",
	      "an entry that is no mapping");
	check("iio_channels:\n  - {device: adc, channel: voltage2, linear: {gain: 0}}\n",
	      "t.yaml:2:53: gain: 0 would turn every reading into the offset\n", "linear gain 0");
	check("iio_channels:\n  - {device: adc, channel: voltage2, linear: {gain: 2, scale: 3}}\n",
	      "t.yaml:2:56: unknown key 'scale' in linear (allowed: gain, offset)\n",
	      "unknown key in linear");
}

static void test_capacitors(void) {
	check("capacitors:\n  - name: C1\n    sensor: thermal/soc-thermal\n    basis: case\n    rated_life_h: 2000\n    rated_temp_c: 105\n    self_heating: {rise_k: 3}\n",
	      "t.yaml:7:19: self_heating: only for an ambient basis: a case temperature already includes the capacitor's own heating, so adding it again would count it twice (with sensors: it is the modelled rise, checked against the measurements)\n",
	      "self-heating on a case basis");
	check("capacitors:\n  - name: C1\n    sensor: s\n    self_heating: {rise_k: 3}\n    basis: core\n    rated_life_h: 2000\n    rated_temp_c: 105\n",
	      "t.yaml:4:19: self_heating: only for an ambient basis: a core temperature already includes the capacitor's own heating, so adding it again would count it twice (with sensors: it is the modelled rise, checked against the measurements)\n",
	      "self-heating on a core basis, basis given later");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, self_heating: {current_a: 1, esr_ohm: 0.5}}\n",
	      "t.yaml:2:77: self_heating: give exactly one form: {rise_k}, {current_a, esr_ohm, rth_k_per_w} or {current_a, rated_ripple_a, rated_rise_k}\n",
	      "incomplete self-heating");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, self_heating: {rise_k: 1, current_a: 1, esr_ohm: 1, rth_k_per_w: 1}}\n",
	      "t.yaml:2:77: self_heating: give exactly one form: {rise_k}, {current_a, esr_ohm, rth_k_per_w} or {current_a, rated_ripple_a, rated_rise_k}\n",
	      "two self-heating forms");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, model: arrhenius, bt: 2}\n",
	      "t.yaml:2:70: model: arrhenius needs ea_ev (the activation energy in eV, e.g. 0.83)\n"
	      "t.yaml:2:85: bt: applies to model bt only (arrhenius uses ea_ev)\n",
	      "bt with arrhenius, no ea_ev");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, ea_ev: 0.8}\n",
	      "t.yaml:2:70: ea_ev: applies to model arrhenius only (set model: arrhenius, or use bt)\n",
	      "ea_ev with the bt model");
	check("capacitors:\n  - {name: C1}\n",
	      "t.yaml:2:5: capacitor C1: 'sensor' or 'sensors' is required\n"
	      "t.yaml:2:5: capacitor C1: 'rated_life_h' is required\n"
	      "t.yaml:2:5: capacitor C1: 'rated_temp_c' is required\n",
	      "required capacitor keys");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, review: {enclosur: box}}\n",
	      "t.yaml:2:72: unknown key 'enclosur' in review: did you mean 'enclosure'? (allowed: enclosure, orientation, thermocouple, insulation, heat_sources, vent_clearance, series_conditions)\n",
	      "a misspelt review key");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, review: {heat_sources: [L1, Q3]}}\n",
	      "t.yaml:2:86: heat_sources: expected a string, got a list\n",
	      "a review note is text");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, review: [a]}\n",
	      "t.yaml:2:71: review: expected a mapping (key: value lines), got a list\n",
	      "review is a mapping");
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105, review: {insulation: , orientation: 90}}\n",
	      NULL, "an empty review note and a number as text are valid");
	// The review's keys (issue 40): every error names its file:line:col.
	const char *head =
		"capacitors:\n  - name: C1\n    rated_life_h: 1\n    rated_temp_c: 105\n";
	struct {
		const char *yaml, *want, *what;
	} cases[] = {
		{"    sensors: {ambient: a, case: c}\n    self_heating: {rise_k: 3}\n", NULL,
		 "sensors: with the modelled self-heating beside a case sensor"},
		{"    sensor: a\n    sensors: {case: c}\n",
		 "t.yaml:6:14: sensors: give sensor (with basis) or sensors, not both\n",
		 "sensor and sensors"},
		{"    sensors: {case: c}\n    basis: case\n",
		 "t.yaml:6:12: basis: the sensors: map names each sensor's temperature; basis goes with sensor\n",
		 "basis beside sensors"},
		{"    sensors: {}\n",
		 "t.yaml:5:14: sensors: name at least one of ambient, case and core\n",
		 "an empty sensors map"},
		{"    sensors: {ambient: a, cse: c}\n",
		 "t.yaml:5:27: unknown key 'cse' in sensors: did you mean 'case'? (allowed: ambient, case, core)\n",
		 "a misspelt temperature"},
		{"    sensors: {ambient: a, case: a}\n",
		 "t.yaml:5:33: sensors: ambient and case name the same channel 'a': one sensor measures one temperature\n",
		 "one channel for two temperatures"},
		{"    sensors: {core: a, ambient: a}\n",
		 "t.yaml:5:21: sensors: ambient and core name the same channel 'a': one sensor measures one temperature\n",
		 "one channel for two temperatures, whichever is listed first"},
		{"    sensor: a\n    ripple_from: {channel: i, formula: proportional, k: 0.5}\n",
		 "t.yaml:6:18: ripple_from: needs self_heating in the power form {esr_ohm, rth_k_per_w} or the ripple form {rated_ripple_a, rated_rise_k}, through which the measured current heats the part\n",
		 "ripple_from without a form it heats through"},
		{"    sensor: a\n    self_heating: {esr_ohm: 0.1, rth_k_per_w: 10}\n",
		 "t.yaml:6:19: self_heating: this form needs current_a (or a measured current: ripple_from)\n",
		 "the power form without a current"},
		{"    sensor: a\n    self_heating: {esr_ohm: 0.1, rth_k_per_w: 10}\n    ripple_from: {channel: i, formula: buck_input, k: 2}\n",
		 "t.yaml:7:40: ripple_from: formula buck_input takes v_in and v_out (I_rms = I_out sqrt(D (1 - D)), D = v_out / v_in), not k\n",
		 "buck_input with k"},
		{"    sensor: a\n    self_heating: {esr_ohm: 0.1, rth_k_per_w: 10}\n    ripple_from: {channel: i, formula: buck_input, v_in: 5, v_out: 12}\n",
		 "t.yaml:7:68: ripple_from: v_out must be below v_in for a buck converter\n",
		 "a buck that boosts"},
		{"    sensor: a\n    self_heating: {esr_ohm: 0.1, rth_k_per_w: 10}\n    ripple_from: {channel: i, formula: boost}\n",
		 "t.yaml:7:40: formula: expected proportional or buck_input, got 'boost'\n",
		 "an unknown formula"},
		{"    sensor: a\n    valid_c: [95, 60]\n",
		 "t.yaml:6:19: valid_c: the upper bound must be above the lower\n",
		 "valid_c upside down"},
		{"    sensor: a\n    valid_c: [60]\n",
		 "t.yaml:6:14: valid_c: give [LOW, HIGH], the band in °C over which the series' B_t or E_a is stated (e.g. [60, 95])\n",
		 "valid_c with one value"},
		{"    sensor: a\n    valid_c: [60, 95]\n    validity_low_c: 50\n",
		 "t.yaml:7:21: validity_low_c: give valid_c or validity_low_c, not both (valid_c's first value is the lower bound)\n",
		 "valid_c and validity_low_c"},
		{"    sensor: a\n    voltage: {applied_v: 40, rated_v: 35, exponent: 2.5}\n",
		 "t.yaml:6:26: voltage: applied_v 40 V is above rated_v 35 V: no model applies above the rated voltage\n",
		 "overvoltage"},
		{"    sensor: a\n    voltage: {applied_v: 20}\n",
		 "t.yaml:6:14: voltage: give applied_v, rated_v and exponent (life x (applied_v / rated_v)^-exponent)\n",
		 "a partial voltage term"},
		{"    sensor: a\n    case_diameter_mm: 0\n",
		 "t.yaml:6:23: case_diameter_mm: must be greater than 0 and at most 200, got 0\n",
		 "a zero diameter"},
		{"    sensor: a\n    uncertainty_k: 30\n",
		 "t.yaml:6:20: uncertainty_k: must be between 0 and 20, got 30\n",
		 "an uncertainty out of range"},
		{"    sensor: a\n    steady_state: {rate_k_per_10min: 0}\n",
		 "t.yaml:6:38: rate_k_per_10min: must be greater than 0 and at most 100, got 0\n",
		 "a zero steady rate"},
		{"    sensor: a\n    self_heating_tolerance: {k: 2, percent: 40}\n",
		 "t.yaml:6:36: unknown key 'percent' in self_heating_tolerance (allowed: k, pct)\n",
		 "a tolerance key"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *yaml = xasprintf("%s%s", head, cases[i].yaml);
		check(yaml, cases[i].want, cases[i].what);
		free(yaml);
	}
	check("capacitors:\n  - {name: C1, sensor: s, rated_life_h: 1, rated_temp_c: 105}\n  - {name: C1, sensor: t, rated_life_h: 1, rated_temp_c: 105}\n",
	      "t.yaml:3:5: capacitors: the name 'C1' is used twice (first at line 2)\n",
	      "duplicate capacitor name");
}

static void test_files(void) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	ok(!config_load(&cfg, "configs/does-not-exist.yaml", &errors), "missing file fails");
	is_str(errors,
	       "configs/does-not-exist.yaml:1:1: could not read the configuration: No such file or directory\n",
	       "missing file message");
	free(errors);
	config_finish(&cfg);

	config_init(&cfg);
	errors = NULL;
	ok(!config_load(&cfg, "configs", &errors), "a directory fails");
	is_str(errors, "configs:1:1: could not read the configuration: Is a directory\n",
	       "directory message");
	free(errors);
	config_finish(&cfg);

	size_t len = 1024 * 1024 + 1;
	char *big = malloc(len);
	memset(big, '#', len);
	config_init(&cfg);
	errors = NULL;
	ok(!config_load_string(&cfg, "big.yaml", big, len, &errors), "over 1 MiB fails");
	is_str(errors, "big.yaml:1:1: file too large: 1048577 bytes, the limit is 1024 KiB\n",
	       "too large message");
	free(errors);
	config_finish(&cfg);
	free(big);

	// Errors come out in file order whatever order the checks found them in.
	check("capacitors:\n  - {name: C1}\nintervall: 1s\ninterval: 5\n",
	      "t.yaml:2:5: capacitor C1: 'sensor' or 'sensors' is required\n"
	      "t.yaml:2:5: capacitor C1: 'rated_life_h' is required\n"
	      "t.yaml:2:5: capacitor C1: 'rated_temp_c' is required\n"
	      "t.yaml:3:1: unknown key 'intervall' in the top level: did you mean 'interval'? (allowed: interval, database, sysfs_root, procfs_root, debugfs_root, retention, rescan, http, sources, channels, iio_channels, capacitors, runs, board, roles)\n"
	      "t.yaml:4:11: interval: '5' has no unit: write e.g. 5s or 5m (units ms, s, m, h, d, w)\n",
	      "several errors in file order");

	// Errors are capped so a hostile file cannot make the report unbounded.
	char *many = calloc(150, 16);
	size_t many_len = 0;
	for (int i = 0; i < 150; i++) {
		many_len += (size_t)sprintf(many + many_len, "k%d: 1\n", i);
	}
	config_init(&cfg);
	errors = NULL;
	ok(!config_load_string(&cfg, "m.yaml", many, many_len, &errors), "150 errors fail");
	int lines = 0;
	for (const char *q = errors; q && *q; q++) {
		lines += *q == '\n';
	}
	is_int(lines, 101, "100 errors and a summary line");
	ok(errors && strstr(errors, "m.yaml: 50 more errors not shown\n"),
	   "summary counts the rest");
	free(errors);
	config_finish(&cfg);
	free(many);

	char *list = calloc(1025, 4);
	strcpy(list, "capacitors: [");
	for (int i = 0; i < 1025; i++) {
		strcat(list, i ? ",1" : "1");
	}
	strcat(list, "]\n");
	check(list, "t.yaml:1:13: capacitors: too many entries (1025, the limit is 1024)\n",
	      "list length capped");
	free(list);
}

static void test_wanted(void) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	const char *yaml =
		"sources:\n"
		"  thermal: {include: [\"thermal/*\", cooling/pwm-fan], exclude: [\"thermal/npu-*\"]}\n"
		"  hwmon: {enabled: false}\n"
		"  iio: {exclude: [\"iio/*/voltage[0-9]\"]}\n"
		"channels:\n"
		"  thermal/gpu-thermal: {enabled: false}\n"
		"  thermal/soc-thermal: {label: SoC}\n"
		"  thermal/npu-thermal: {enabled: true}\n";
	ok(config_load_string(&cfg, "w.yaml", yaml, strlen(yaml), &errors), "wanted config valid");
	free(errors);
	ok(config_channel_wanted(&cfg, SOURCE_THERMAL, "thermal/soc-thermal"), "included zone");
	ok(config_channel_wanted(&cfg, SOURCE_THERMAL, "thermal/bigcore0-thermal#2"),
	   "'*' matches any character, '#' too");
	ok(!config_channel_wanted(&cfg, SOURCE_THERMAL, "thermal/npu-thermal"),
	   "exclude wins; enabled: true does not override a glob");
	ok(!config_channel_wanted(&cfg, SOURCE_THERMAL, "thermal/gpu-thermal"), "enabled: false");
	ok(config_channel_wanted(&cfg, SOURCE_THERMAL, "cooling/pwm-fan"), "second include");
	ok(!config_channel_wanted(&cfg, SOURCE_THERMAL, "cooling/cpufreq-cpu0"),
	   "not in include list");
	ok(!config_channel_wanted(&cfg, SOURCE_HWMON, "hwmon/nvme-pci-0100/temp1"),
	   "disabled source");
	ok(config_channel_wanted(&cfg, SOURCE_CPUFREQ, "cpufreq/policy0"), "no filter: wanted");
	ok(config_channel_wanted(&cfg, SOURCE_IIO, "iio/maxim_thermocouple/temp"), "iio temp");
	ok(!config_channel_wanted(&cfg, SOURCE_IIO, "iio/fec10000.saradc/voltage2"),
	   "'*' spans '/' and brackets match");
	ok(config_channel_wanted(&cfg, SOURCE_IIO, "iio/fec10000.saradc/voltage10"),
	   "a pattern matches the whole key");
	ok(!config_channel_wanted(&cfg, SOURCE_COUNT, "thermal/soc-thermal"), "bad source id");
	const struct channel_override *o = config_channel_override(&cfg, "thermal/soc-thermal");
	ok(o && strcmp(o->label, "SoC") == 0, "override lookup");
	config_finish(&cfg);

	struct config def;
	config_init(&def);
	ok(config_channel_wanted(&def, SOURCE_HWMON, "hwmon/x/temp1"), "defaults want everything");
	ok(config_channel_override(&def, "hwmon/x/temp1") == NULL, "defaults: no overrides");
	config_finish(&def);
}

/* Ripple per frequency: each component at the rated frequency through its multiplier. */
static void test_ripple(void) {
	const char *yaml = "capacitors:\n"
			   "  - name: C7\n"
			   "    sensor: iio/c7\n"
			   "    rated_life_h: 5000\n"
			   "    rated_temp_c: 105\n"
			   "    self_heating:\n"
			   "      rated_ripple_a: 1.5\n"
			   "      rated_rise_k: 5\n"
			   "      ripple:\n"
			   "        - {freq_hz: 120, current_a: 0.8, multiplier: 0.6}\n"
			   "        - {freq_hz: 100000, current_a: 1.2, multiplier: 1.0}\n";
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	ok(config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors),
	   "ripple per frequency loads");
	free(errors);
	const struct capacitor_config *c = cfg.n_capacitors ? &cfg.capacitors[0] : NULL;
	ok(c && c->self_heating == SELF_HEATING_RIPPLE && c->n_ripple == 2,
	   "the ripple form, two components");
	ok(c && c->ripple[0].freq_hz == 120 && c->ripple[1].multiplier == 1.0, "each as given");
	is_near(c ? c->current_a : 0, sqrt(pow(0.8 / 0.6, 2) + 1.2 * 1.2), 1e-12,
		"current_a = sqrt(sum (I / multiplier)^2) at the rated frequency");
	config_finish(&cfg);
	const char *head = "capacitors:\n  - name: C7\n    sensor: x\n    rated_life_h: 5000\n"
			   "    rated_temp_c: 105\n    self_heating:\n";
	char *y =
		xasprintf("%s      rated_ripple_a: 1.5\n      rated_rise_k: 5\n      current_a: 1\n"
			  "      ripple: [{freq_hz: 120, current_a: 0.8, multiplier: 0.6}]\n",
			  head);
	check(y, "t.yaml:10:15: self_heating: give current_a or ripple (per frequency), not both\n",
	      "current_a and ripple together");
	free(y);
	y = xasprintf("%s      rated_ripple_a: 1.5\n      rated_rise_k: 5\n"
		      "      ripple: [{freq_hz: 120, current_a: 0.8}]\n",
		      head);
	check(y,
	      "t.yaml:9:16: ripple: each component needs freq_hz, current_a and multiplier (the "
	      "series' factor at that frequency)\n",
	      "a component without its multiplier");
	free(y);
	y = xasprintf("%s      ripple: [{freq_hz: 120, current_a: 0.8, multiplier: 0.6}]\n", head);
	check(y,
	      "t.yaml:7:15: self_heating: ripple per frequency needs rated_ripple_a and rated_rise_k "
	      "(the rating it is compared with)\n",
	      "ripple without the rating");
	free(y);
	y = xasprintf("%s      rated_ripple_a: 1.5\n      rated_rise_k: 5\n"
		      "      ripple: [{freq_hz: 0, current_a: 0.8, multiplier: 0.6}]\n",
		      head);
	struct config c2;
	config_init(&c2);
	errors = NULL;
	ok(!config_load_string(&c2, "t.yaml", y, strlen(y), &errors) && errors &&
		   strstr(errors, "freq_hz"),
	   "a frequency of 0 is refused, naming freq_hz");
	free(errors);
	config_finish(&c2);
	free(y);
	// One bad value is one error: its own, not a second saying a key is missing.
	y = xasprintf("%s      rated_ripple_a: 1.5\n      rated_rise_k: 5\n"
		      "      ripple: [{freq_hz: 120, current_a: 0.8, multiplier: lots}]\n",
		      head);
	check(y, "t.yaml:9:59: multiplier: expected a number, got 'lots'\n",
	      "a component with one bad value: that value's error alone");
	free(y);
}

/*
 * An in-service date before 1990 or in the future is a warning with its place, not an error:
 * 1925 is a date (a typo for 2025, likely), 1969-12-31 too; 1990 and today are quiet.
 */
static void test_in_service_warnings(void) {
	static const char yaml[] = "capacitors:\n"
				   "  - {name: a, sensor: s, rated_life_h: 1, rated_temp_c: 105, "
				   "in_service: 1925-06-01}\n"
				   "  - {name: b, sensor: s, rated_life_h: 1, rated_temp_c: 105, "
				   "in_service: 1969-12-31}\n"
				   "  - {name: c, sensor: s, rated_life_h: 1, rated_temp_c: 105, "
				   "in_service: 1990-01-01}\n"
				   "  - {name: d, sensor: s, rated_life_h: 1, rated_temp_c: 105, "
				   "in_service: 2026-12-07}\n"
				   "  - {name: e, sensor: s, rated_life_h: 1, rated_temp_c: 105, "
				   "in_service: 2026-12-08}\n"
				   "  - {name: f, sensor: s, rated_life_h: 1, rated_temp_c: 105}\n";
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	ok(config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors),
	   "dates before 1970 load: they are dates");
	free(errors);
	is_int(cfg.capacitors[0].in_service, -1407024000, "1925-06-01 read as it is");
	ok(cfg.capacitors[1].has_in_service && cfg.capacitors[1].in_service == -86400,
	   "1969-12-31 is set, not the 'unset' of old");
	char *w = config_warnings(&cfg, 1796601600 + 3600); // 2026-12-07T01:00Z
	is_str(w,
	       "configuration:2:74: capacitor 'a': in_service 1925-06-01 is before 1990: if the "
	       "year is a typo, the part's age and its calendar cap are wrong\n"
	       "configuration:3:74: capacitor 'b': in_service 1969-12-31 is before 1990: if the "
	       "year is a typo, the part's age and its calendar cap are wrong\n"
	       "configuration:6:74: capacitor 'e': in_service 2026-12-08 is in the future (today "
	       "is 2026-12-07): no sample ages the part before it\n",
	       "before 1990 and after today are warned, with their places (a file name when read from one)");
	free(w);
	config_finish(&cfg);
	config_init(&cfg);
	ok(config_warnings(&cfg, 1796601600) == NULL, "nothing to say: NULL");
	config_finish(&cfg);
}

/* board: and roles: what is declared of the board, the channels' roles by hand. */
static void test_board(void) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	const char *yaml =
		"board:\n  name: ROCK 5C B\n  cooling: heatsink, no fan\n"
		"  sdk: {rknpu2: 2.3.2, rknn-toolkit2: '2.3.0'}\n  notes: bought 2026-03\n"
		"roles:\n  thermal/center-thermal: soc-zone\n  cpufreq/policy0: "
		"little-cluster\n";
	ok(config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors),
	   "board: and roles: load");
	is_str(errors, NULL, "no error");
	ok(cfg.board.declared, "the board is declared");
	is_str(cfg.board.name, "ROCK 5C B", "board.name");
	is_str(cfg.board.cooling, "heatsink, no fan", "board.cooling");
	is_str(cfg.board.notes, "bought 2026-03", "board.notes");
	is_int(cfg.board.n_sdk, 2, "two SDK versions");
	is_str(cfg.board.sdk[1].name, "rknn-toolkit2", "an SDK's name");
	is_str(cfg.board.sdk[1].version, "2.3.0", "its version");
	is_int(cfg.n_roles, 2, "two roles");
	is_str(cfg.roles[0].key, "cpufreq/policy0", "roles sorted by key");
	ok(cfg.roles[0].role == ROLE_CLUSTER_LITTLE && cfg.roles[1].role == ROLE_ZONE_SOC,
	   "each role read");
	free(errors);
	config_finish(&cfg);
	config_init(&cfg);
	ok(!cfg.board.declared && cfg.n_roles == 0, "nothing declared by default");
	config_finish(&cfg);
	check("board:\n  name: a\n  colour: red\n",
	      "t.yaml:3:3: unknown key 'colour' in board (allowed: name, cooling, sdk, notes)\n",
	      "board unknown key");
	check("board:\n  name: \"A\\x1b[31m\"\n",
	      "t.yaml:2:9: board.name: a control character (\\x1b) in 'A\\x1b[31m': names and "
	      "labels are printed where terminals read them\n",
	      "board.name refuses a control character");
	check("roles:\n  cpufreq/policy0: little\n",
	      "t.yaml:2:20: roles: cpufreq/policy0: unknown role 'little' (one of none, big-zone, "
	      "little-zone, cpu-zone, npu-zone, soc-zone, gpu-zone, ambient, big-cluster, "
	      "little-cluster, cpu-cluster, npu, gpu, dmc)\n",
	      "an unknown role names the roles");
	check("roles:\n  'not a key': big-zone\n",
	      "t.yaml:2:3: roles: 'not a key' is not a channel key (e.g. thermal/bigcore0-thermal)\n",
	      "a role for something that is no channel key");
}

int main(void) {
	test_defaults();
	test_runs();
	test_example();
	test_full();
	test_syntax();
	test_keys();
	test_types();
	test_ranges();
	test_listen();
	test_globs();
	test_iio();
	test_capacitors();
	test_ripple();
	test_files();
	test_wanted();
	test_in_service_warnings();
	test_board();
	return test_done();
}
