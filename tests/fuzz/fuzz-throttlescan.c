/*
 * libFuzzer target for the throttle readings' text parsers: the input's first line is a cooling
 * device type mapped to a domain over policies whose CPU lists are the following lines, and the
 * whole input is read as devfreq available_frequencies. Any input gives a bounded name and a
 * frequency that is positive exactly when one is found.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "throttlescan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	char *text = malloc(size + 1);
	if (!text) {
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	int64_t hz;
	bool found = throttlescan_top_frequency(text, &hz);
	if (found != (hz > 0)) {
		abort();
	}
	const char *names[4] = {"policy0", "policy4", "policy6", "policy8"};
	const char *cpus[4] = {"", "", "", ""};
	size_t n = 0;
	char *line = strchr(text, '\n');
	if (line) {
		*line++ = '\0';
	}
	while (line && n < 4) {
		cpus[n++] = line;
		line = strchr(line, '\n');
		if (line) {
			*line++ = '\0';
		}
	}
	char out[THROTTLE_NAME_LEN];
	memset(out, 'x', sizeof(out));
	throttlescan_cdev_domain(text, names, cpus, n, out);
	if (!memchr(out, '\0', sizeof(out))) {
		abort();
	}
	free(text);
	return 0;
}
