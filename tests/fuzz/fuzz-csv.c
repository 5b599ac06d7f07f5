/*
 * libFuzzer target for the CSV reader: any input either fails cleanly or yields records that
 * survive being written back with csv_field() and read again unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (size == 0) {
		return 0;
	}
	FILE *in = fmemopen((void *)data, size, "r");
	if (!in) {
		return 0;
	}
	struct csv_reader r;
	csv_reader_init(&r, in);
	struct buf again;
	buf_init(&again);
	// Written back after a byte order mark, so a field that itself starts with one survives.
	buf_append(&again, "\xEF\xBB\xBF", 3);
	size_t records = 0;
	int rc;
	while ((rc = csv_read(&r)) == 1) {
		if (r.n_fields == 0 || r.line == 0) {
			abort();
		}
		bool blank = r.n_fields == 1 && r.fields[0][0] == '\0';
		if (!blank) { // a lone empty field would write back as a skipped blank line
			for (size_t i = 0; i < r.n_fields; i++) {
				csv_field(&again, r.fields[i], strlen(r.fields[i]), i == 0);
			}
			csv_end_record(&again);
			records++;
		}
	}
	if (rc < 0 && strncmp(r.error, "line ", 5) != 0) {
		abort(); // every error names its line
	}
	csv_reader_finish(&r);
	fclose(in);
	if (rc == 0 && records > 0) {
		// Round trip: writing the records back and reading them again changes nothing.
		FILE *f1 = fmemopen((void *)data, size, "r");
		FILE *f2 = fmemopen(again.data, again.len, "r");
		struct csv_reader a, b;
		csv_reader_init(&a, f1);
		csv_reader_init(&b, f2);
		size_t seen = 0;
		for (;;) {
			int ra = csv_read(&a);
			while (ra == 1 && a.n_fields == 1 && a.fields[0][0] == '\0') {
				ra = csv_read(&a);
			}
			int rb = csv_read(&b);
			if (ra != rb) {
				abort();
			}
			if (ra != 1) {
				break;
			}
			seen++;
			if (a.n_fields != b.n_fields) {
				abort();
			}
			for (size_t i = 0; i < a.n_fields; i++) {
				if (strcmp(a.fields[i], b.fields[i]) != 0) {
					abort();
				}
			}
		}
		if (seen != records) {
			abort();
		}
		csv_reader_finish(&a);
		csv_reader_finish(&b);
		fclose(f1);
		fclose(f2);
	}
	buf_finish(&again);
	return 0;
}
