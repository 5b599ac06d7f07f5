/* libFuzzer target: config_load_string() on arbitrary bytes must not crash, leak or hang, and
 * its answer must be consistent: valid without error text, or every line FILE:LINE:COL. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "fuzz.yaml:L:C: text" with L, C >= 1, or the "N more errors" summary. */
static int line_well_formed(const char *line, size_t len) {
	static const char prefix[] = "fuzz.yaml:";
	if (len < sizeof(prefix) || memcmp(line, prefix, sizeof(prefix) - 1) != 0) {
		return 0;
	}
	const char *p = line + sizeof(prefix) - 1;
	if (*p == ' ') {
		return strstr(p, "more errors not shown") != NULL;
	}
	for (int field = 0; field < 2; field++) {
		size_t digits = strspn(p, "0123456789");
		if (digits == 0 || *p == '0' || p[digits] != ':') {
			return 0;
		}
		p += digits + 1;
	}
	return *p == ' ';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	int good = config_load_string(&cfg, "fuzz.yaml", (const char *)data, size, &errors);
	if (good != (errors == NULL)) {
		abort(); // success and error text must agree
	}
	for (const char *line = errors; line && *line;) {
		const char *end = strchr(line, '\n');
		if (!end || !line_well_formed(line, (size_t)(end - line))) {
			fprintf(stderr, "malformed error line: %s\n", line);
			abort();
		}
		line = end + 1;
	}
	if (good) {
		// Exercise what consumers call on a loaded configuration.
		static const char *const keys[] = {"thermal/soc-thermal", "iio/adc/voltage2",
						   "hwmon/nvme-pci-0100/temp1", "cpufreq/policy4",
						   "devfreq/dmc"};
		for (int s = 0; s < SOURCE_COUNT; s++) {
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
				config_channel_wanted(&cfg, (enum source_id)s, keys[k]);
			}
		}
		for (size_t i = 0; i < cfg.n_channels; i++) {
			if (config_channel_override(&cfg, cfg.channels[i].key) !=
			    &cfg.channels[i]) {
				abort(); // every override must be found by its own key
			}
		}
	}
	free(errors);
	config_finish(&cfg);
	return 0;
}
