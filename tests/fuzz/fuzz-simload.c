/*
 * libFuzzer target for the simulated board's inputs: a work declaration (simload_parse) either
 * fails with a reason or yields shares within 0..100 % and times in order, and formats back to
 * the same load; a board spec (simboard_params_parse) either fails with a reason or gives
 * values within their documented bounds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "simboard.h"
#include "simload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_decl(const char *text, size_t size) {
	struct simload_decl d;
	char *err = NULL;
	if (!simload_parse(text, size, &d, &err)) {
		if (!err || !*err) {
			abort();
		}
		free(err);
		return;
	}
	if (err || (d.end_ms && d.end_ms < d.start_ms)) {
		abort();
	}
	for (int c = 0; c < SIM_CPUS; c++) {
		if (!(d.load.cpu_pct[c] >= 0 && d.load.cpu_pct[c] <= 100)) {
			abort();
		}
	}
	for (int k = 0; k < SIM_NPU_CORES; k++) {
		if (!(d.load.npu_pct[k] >= 0 && d.load.npu_pct[k] <= 100)) {
			abort();
		}
	}
	struct buf again = {0};
	simload_format(&d, &again);
	struct simload_decl back;
	if (!simload_parse(again.data, again.len, &back, &err) ||
	    memcmp(&back.load, &d.load, sizeof(d.load)) != 0 || back.start_ms != d.start_ms) {
		abort();
	}
	buf_finish(&again);
}

static void check_params(const char *text) {
	struct simboard_params p;
	simboard_params_default(&p);
	char *err = NULL;
	if (!simboard_params_parse(text, &p, &err)) {
		if (!err || !*err) {
			abort();
		}
		free(err);
		return;
	}
	if (err || !(p.ambient_c >= -20 && p.ambient_c <= 60) ||
	    !(p.time_scale >= 1 && p.time_scale <= 3600) || p.big_max_khz < 0 ||
	    p.big_max_khz > 2400000) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	char *text = malloc(size + 1);
	if (!text) {
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	check_decl(text, size);
	check_params(text);
	free(text);
	return 0;
}
