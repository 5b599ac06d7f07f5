/*
 * The board's description for a campaign's fingerprint (sources/boardinfo.c), over the ROCK 5C
 * fixture: clocks, governors, trips and their bindings, cooling devices, RAM, the device tree;
 * what a tree lacks is null; the cooling devices bound to passive trips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boardinfo.h"
#include "buf.h"
#include "jsonread.h"
#include "test.h"

#define ROCK5C "fixtures/rock5c" // unit tests run in tests/

static const struct jsonread_node *find(const struct jsonread_node *list, const char *key,
					const char *value) {
	for (size_t i = 0; list && list->kind == JSONREAD_ARRAY && i < list->n; i++) {
		const char *v = jsonread_string(jsonread_get(list->items[i], key));
		if (v && strcmp(v, value) == 0) {
			return list->items[i];
		}
	}
	return NULL;
}

static void test_rock5c(void) {
	struct buf out = {0};
	struct json j;
	json_init(&j, &out, false);
	boardinfo_json(ROCK5C, ROCK5C "/proc", "/nonexistent", &j);
	struct jsonread_error e;
	struct jsonread_node *root = jsonread_parse(out.data, out.len, 1 << 20, &e);
	ok(root != NULL, "the description is JSON");
	is_str(jsonread_string(jsonread_get(root, "model")), "Radxa ROCK 5C",
	       "the device tree's model, without its NUL");
	int64_t ram = 0;
	ok(jsonread_int(jsonread_get(root, "ram_bytes"), 1, INT64_MAX, &ram) &&
		   ram == 7927692LL * 1024,
	   "RAM from MemTotal");
	ok(jsonread_get(root, "npu_driver")->kind == JSONREAD_NULL,
	   "no debugfs: the NPU driver is not known");
	const struct jsonread_node *p4 = find(jsonread_get(root, "cpufreq"), "policy", "policy4");
	int64_t max = 0;
	ok(p4 && jsonread_int(jsonread_get(p4, "cpuinfo_max_hz"), 1, INT64_MAX, &max) &&
		   max == 2256000000LL,
	   "policy4's hardware maximum in Hz");
	const struct jsonread_node *table = jsonread_get(p4, "frequencies_hz");
	ok(table && table->kind == JSONREAD_ARRAY && table->n == 11 &&
		   strcmp(table->items[10]->text, "2256000000") == 0,
	   "its frequency table in Hz");
	is_str(jsonread_string(jsonread_get(p4, "governor")), "schedutil", "its governor");
	is_str(jsonread_string(jsonread_get(p4, "cpus")), "4 5", "its CPUs");
	const struct jsonread_node *dmc = find(jsonread_get(root, "devfreq"), "name", "dmc");
	is_str(jsonread_string(jsonread_get(dmc, "governor")), "dmc_ondemand",
	       "the DMC's governor");
	ok(jsonread_get(dmc, "tunables") && jsonread_get(dmc, "tunables")->kind == JSONREAD_OBJECT,
	   "its tunables (none in this tree)");
	const struct jsonread_node *soc =
		find(jsonread_get(root, "thermal"), "type", "soc-thermal");
	const struct jsonread_node *trips = jsonread_get(soc, "trips");
	ok(trips && trips->n == 3, "soc-thermal's three trips");
	const struct jsonread_node *bind = jsonread_get(soc, "cooling");
	ok(bind && bind->n == 1 &&
		   strcmp(jsonread_string(jsonread_get(bind->items[0], "type")), "pwm-fan") == 0 &&
		   strcmp(jsonread_string(jsonread_get(bind->items[0], "trip_type")), "passive") ==
			   0,
	   "and the fan bound to its passive trip 0");
	const struct jsonread_node *fan = find(jsonread_get(root, "cooling"), "type", "pwm-fan");
	int64_t states = 0;
	ok(fan && jsonread_int(jsonread_get(fan, "max_state"), 0, 100, &states) && states == 4,
	   "the cooling devices with their maximum state");
	jsonread_node_free(root);
	buf_finish(&out);

	char **passive = boardinfo_passive_cooling(ROCK5C);
	ok(passive[0] && strcmp(passive[0], "pwm-fan") == 0 && !passive[1],
	   "the cooling bound to a passive trip: the fan");
	for (char **p = passive; *p; p++) {
		free(*p);
	}
	free(passive);
	passive = boardinfo_passive_cooling("/nonexistent");
	ok(passive && !passive[0], "no tree: none");
	free(passive);

	buf_init(&out);
	json_init(&j, &out, false);
	boardinfo_json("/nonexistent", "/nonexistent", "/nonexistent", &j);
	is_str(out.data,
	       "{\"model\":null,\"compatible\":null,\"kernel\":null,\"cmdline\":null,"
	       "\"ram_bytes\":null,\"npu_driver\":null}",
	       "nothing readable: every field null");
	buf_finish(&out);
}

int main(void) {
	test_rock5c();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
