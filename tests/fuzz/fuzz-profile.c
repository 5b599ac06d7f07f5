/*
 * libFuzzer target for the mission-profile CSV reader (`lifetime calc --profile-csv`): any
 * input either fails with a message naming its line (or "no rows"), or yields steps within the
 * model's range that survive being written back as temp_c,hours rows and read again unchanged.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "json.h"
#include "lifetime-profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void number(struct buf *b, double v, bool first) {
	char text[32];
	json_format_double(text, v);
	csv_field(b, text, strlen(text), first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (size == 0) {
		return 0;
	}
	FILE *in = fmemopen((void *)data, size, "r");
	if (!in) {
		return 0;
	}
	struct lifetime_point *pts = NULL;
	size_t n = 0;
	char *err = NULL;
	bool good = lifetime_profile_read_csv(in, &pts, &n, &err);
	fclose(in);
	if (!good) {
		if (!err || pts || n != 0 ||
		    (strncmp(err, "line ", 5) != 0 && strncmp(err, "no rows", 7) != 0)) {
			abort(); // every error names its line
		}
		free(err);
		return 0;
	}
	if (n == 0 || !pts) {
		abort();
	}
	struct buf again;
	buf_init(&again);
	csv_field(&again, "temp_c", 6, true);
	csv_field(&again, "hours", 5, false);
	csv_end_record(&again);
	for (size_t i = 0; i < n; i++) {
		if (!(pts[i].temp_c > -LIFETIME_KELVIN_OFFSET) || !(pts[i].temp_c < 500) ||
		    !(pts[i].dt_h > 0) || !isfinite(pts[i].dt_h)) {
			abort(); // outside what the model takes
		}
		number(&again, pts[i].temp_c, true);
		number(&again, pts[i].dt_h, false);
		csv_end_record(&again);
	}
	in = fmemopen(again.data, again.len, "r");
	struct lifetime_point *back = NULL;
	size_t m = 0;
	if (!in || !lifetime_profile_read_csv(in, &back, &m, &err) || m != n) {
		abort();
	}
	for (size_t i = 0; i < n; i++) {
		if (back[i].temp_c != pts[i].temp_c || back[i].dt_h != pts[i].dt_h) {
			abort(); // the rows written back read as the same doubles
		}
	}
	fclose(in);
	free(back);
	free(pts);
	buf_finish(&again);
	return 0;
}
