/* The unit registry (symbols, scaling, Prometheus families) and the one channel-object writer. */
#include <errno.h>
#include <string.h>

#include "buf.h"
#include "channel.h"
#include "json.h"
#include "test.h"
#include "unit.h"

static void test_registry(void) {
	double f;
	is_str(unit_symbol("bytes", &f), "MiB", "memory reads in MiB");
	is_near(f, 1.0 / 1048576, 0, "bytes to MiB");
	is_int(unit_places("bytes", false), 1, "memory to 0.1 MiB");
	is_int(unit_places("bytes", true), 1, "memory to 0.1 MiB in a table too");
	is_str(unit_symbol("hertz", &f), "MHz", "hertz reads as MHz");
	is_int(unit_places("hertz", true), 0, "whole MHz in a table of statistics");
	is_int(unit_places("hertz", false), -1, "one reading: places from the resolution");
	is_str(unit_symbol("state", &f), "", "a cooling state has no symbol");
	is_str(unit_symbol("furlongs", &f), "furlongs", "an unknown unit as it is");
	is_near(f, 1, 0, "an unknown unit is not scaled");
	is_str(unit_symbol(NULL, &f), "", "no unit: empty");
	ok(unit_lookup("kelvin") == NULL, "kelvin is not a unit of thermlog's");
	// Every unit channel.c accepts is the registry's, and the other way round
	size_t n;
	const struct unit_info *all = unit_all(&n);
	bool same = n > 0;
	for (size_t i = 0; i < n; i++) {
		same = same && channel_unit_lookup(all[i].name) == all[i].name;
	}
	ok(same && channel_unit_lookup("kelvin") == NULL, "channel_unit_lookup() is the registry");
}

static void test_families(void) {
	struct channel mem = {
		.key = "meminfo/available", .unit = "bytes", .kind = CHANNEL_KIND_MEMORY};
	const struct unit_info *u = unit_family(&mem);
	is_str(u ? u->family : NULL, "thermlog_memory_bytes", "memory: thermlog_memory_bytes");
	struct channel disk = {.key = "import/disk", .unit = "bytes", .kind = CHANNEL_KIND_OTHER};
	ok(unit_family(&disk) == NULL, "bytes of something else: the catch-all family");
	struct channel load = {.key = "import/load", .unit = "percent", .kind = CHANNEL_KIND_OTHER};
	ok(unit_family(&load) == NULL, "a percentage that is no humidity: the catch-all");
	struct channel rh = {
		.key = "hwmon/x/humidity1", .unit = "percent", .kind = CHANNEL_KIND_HUMIDITY};
	u = unit_family(&rh);
	ok(u && strcmp(u->family, "thermlog_humidity_ratio") == 0 && u->family_divisor == 100,
	   "humidity as a ratio");
	struct channel busy = {.key = "load/cpu0", .unit = "percent", .kind = CHANNEL_KIND_LOAD};
	u = unit_family(&busy);
	ok(u && strcmp(u->family, "thermlog_load_ratio") == 0 && u->family_divisor == 100,
	   "a load channel's percentage: thermlog_load_ratio");
	is_str(unit_lookup("percent")->symbol, "%", "a percentage reads with %");
	struct channel mv = {
		.key = "iio/adc/voltage0", .unit = "millivolts", .kind = CHANNEL_KIND_VOLTAGE};
	u = unit_family(&mv);
	ok(u && strcmp(u->family, "thermlog_voltage_volts") == 0 && u->family_divisor == 1000,
	   "millivolts in the volts family");
	struct channel swap = {
		.key = "meminfo/swap_in", .unit = "pages_per_second", .kind = CHANNEL_KIND_OTHER};
	ok(unit_family(&swap) == NULL, "pages per second: the catch-all with a unit label");
}

static void test_channel_object(void) {
	struct channel ch = {.key = "thermal/soc",
			     .source = "thermal",
			     .kind = CHANNEL_KIND_TEMPERATURE,
			     .unit = "celsius"};
	struct reading good = {.value = 43.461}, bad = {.err = -ERANGE};
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	json_array_begin(&j);
	json_object_begin(&j);
	channel_json_reading(&j, &ch, &good);
	json_object_end(&j);
	ch.label = "SoC";
	json_object_begin(&j);
	channel_json_reading(&j, &ch, &bad);
	json_object_end(&j);
	json_array_end(&j);
	is_str(b.data,
	       "[{\"key\":\"thermal/soc\",\"label\":\"thermal/soc\",\"source\":\"thermal\","
	       "\"kind\":\"temperature\",\"unit\":\"celsius\",\"value\":43.461,\"error\":null},"
	       "{\"key\":\"thermal/soc\",\"label\":\"SoC\",\"source\":\"thermal\","
	       "\"kind\":\"temperature\",\"unit\":\"celsius\",\"value\":null,"
	       "\"error\":\"Numerical result out of range\"}]",
	       "the channel object: label falls back to the key, error null or the message");
	buf_finish(&b);
}

/* One rule for every duration: the throttle episodes beside their totals, stats' spans. */
/* Every case of tests/fixtures/durations.txt, which the dashboard's fmtDuration is tested on. */
static void test_durations(void) {
	FILE *f = fopen("fixtures/durations.txt", "r");
	if (!f) {
		perror("fixtures/durations.txt");
		exit(1);
	}
	char line[128];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		if (line[0] == '#' || !tab) {
			continue;
		}
		tab[strcspn(tab, "\n")] = '\0';
		char v[32], what[96];
		unit_duration(v, sizeof(v), strtod(line, NULL));
		snprintf(what, sizeof(what), "%.*s s reads '%s'", (int)(tab - line), line, tab + 1);
		is_str(v, tab + 1, what);
		n++;
	}
	fclose(f);
	ok(n >= 20, "the cases were read");
}

int main(void) {
	test_registry();
	test_families();
	test_channel_object();
	test_durations();
	return test_done();
}
