/*
 * The streaming CSV export over the shared seeded history (fixture.c): long and wide rows,
 * headers in key order, missed readings as empty cells, and slicing that never changes bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "export.h"
#include "fixture.h"
#include "store.h"
#include "test.h"
#include "timefmt.h"

static char *export_all(struct store *store, const struct query_params *p, enum export_format f,
			size_t chunk) {
	char *err = NULL;
	struct export *e = export_create(store, p, f, &err);
	if (!e) {
		printf("# %s\n", err);
		free(err);
		return NULL;
	}
	struct buf out;
	buf_init(&out);
	char *tmp = malloc(chunk);
	ssize_t n;
	while ((n = export_read(e, tmp, chunk)) > 0) {
		buf_append(&out, tmp, (size_t)n);
	}
	free(tmp);
	export_destroy(e);
	return buf_steal(&out);
}

static void test_export(struct store *store) {
	struct query_params p = {.has_from = true,
				 .has_to = true,
				 .from = fixture_hist.ts[FIXTURE_CYCLES - 3],
				 .to = fixture_hist.ts[FIXTURE_CYCLES - 1] + 1};
	char *s = export_all(store, &p, EXPORT_FORMAT_LONG, 7);
	char want[512];
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(fixture_hist.ts[FIXTURE_CYCLES - 3], iso);
	snprintf(want, sizeof(want),
		 "time,unix,channel,value,unit,label\r\n%s,%lld,thermal/bigcore0-thermal,", iso,
		 (long long)fixture_hist.ts[FIXTURE_CYCLES - 3]);
	ok(strncmp(s, want, strlen(want)) == 0, "long header and first row");
	int lines = 0;
	for (char *c = s; *c; c++) {
		lines += *c == '\n';
	}
	is_int(lines,
	       1 + 3 * FIXTURE_CHANNELS -
		       (fixture_hist.have[FIXTURE_CYCLES - 3][1] &&
					fixture_hist.have[FIXTURE_CYCLES - 2][1] &&
					fixture_hist.have[FIXTURE_CYCLES - 1][1]
				? 0
				: 1),
	       "one line per value");
	free(s);
	s = export_all(store, &p, EXPORT_FORMAT_WIDE, 4096);
	// Labelled channels: LABEL [KEY] (UNIT), which thermlog import reads back.
	static const char wide_header[] =
		"time,unix,NPU [devfreq/fdab0000.npu] (hertz),bigcore0 [thermal/bigcore0-thermal] "
		"(celsius),SoC [thermal/soc-thermal] (celsius)\r\n";
	ok(strncmp(s, wide_header, strlen(wide_header)) == 0, "wide header in key order");
	free(s);
	// Big slices: the whole remaining history in long format through tiny reads equals big
	// reads.
	struct query_params all = {0};
	char *a = export_all(store, &all, EXPORT_FORMAT_LONG, 3);
	char *b = export_all(store, &all, EXPORT_FORMAT_LONG, 1 << 20);
	ok(a && b && strcmp(a, b) == 0 && strlen(a) > 200000, "slicing does not change the export");
	free(a);
	free(b);
	a = export_all(store, &all, EXPORT_FORMAT_WIDE, 5);
	int rows = 0;
	for (char *c = a; *c; c++) {
		rows += *c == '\n';
	}
	struct store_info info;
	store_info(store, &info);
	ok(rows > 1000 && strstr(a, ",\r\n") != NULL,
	   "wide rows with empty cells for missed readings");
	free(a);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	struct store *store = fixture_store(rng);
	if (!ok(store != NULL, "store built")) {
		return test_done();
	}
	test_export(store);
	store_close(store);
	return test_done();
}
