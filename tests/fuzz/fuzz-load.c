/*
 * libFuzzer target for the load source's parsers: any text either fails with -EBADMSG (or
 * -ENOENT / -ERANGE for /proc/stat) and a reason, or yields figures within their bounds:
 * busy ticks never above the total, at most LOADPARSE_CORES_MAX cores, names terminated.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loadparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_cores(int rc, const struct loadparse_cores *c, const char *why) {
	if (rc == 0) {
		if (c->n == 0 || c->n > LOADPARSE_CORES_MAX) {
			abort();
		}
		for (size_t i = 0; i < c->n; i++) {
			if (c->percent[i] < 0 ||
			    strnlen(c->name[i], LOADPARSE_NAME_MAX) == LOADPARSE_NAME_MAX) {
				abort();
			}
		}
	} else if (rc != -EBADMSG || !why || !*why) {
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

	const char *why = NULL;
	int ids[4];
	size_t n = loadparse_stat_cpus(text, ids, 4);
	for (int cpu = -1; cpu < 4; cpu++) {
		struct loadparse_ticks t, t2;
		why = NULL;
		int rc = loadparse_stat(text, cpu < 0 || (size_t)cpu >= n ? cpu : ids[cpu], &t,
					&why);
		if (rc == 0) {
			if (t.total < 0 || t.busy > t.total) {
				abort();
			}
			t2 = (struct loadparse_ticks){.total = t.total + 100, .busy = t.busy + 50};
			double pct;
			if (loadparse_busy(&t, &t2, &pct) != 0 || pct != 50) {
				abort();
			}
		} else if (rc != -ENOENT && ((rc != -EBADMSG && rc != -ERANGE) || !why)) {
			abort();
		}
	}

	// the index: each offset a cpu line's start, whose parse gives what a search would
	// when that line is the first of its CPU
	int ix[8];
	size_t at[8];
	size_t m = loadparse_stat_index(text, ix, at, 8);
	for (size_t i = 0; i < m && i < 8; i++) {
		if (at[i] > size || strncmp(text + at[i], "cpu", 3) != 0 ||
		    (at[i] > 0 && text[at[i] - 1] != '\n')) {
			abort();
		}
		struct loadparse_ticks a, b;
		const char *wa = NULL, *wb = NULL;
		int ra = loadparse_stat(text + at[i], ix[i], &a, &wa);
		if (ra == -ENOENT) {
			abort(); // the line is there
		}
		bool first = true;
		for (size_t j = 0; j < i; j++) {
			first = first && ix[j] != ix[i];
		}
		int rb = loadparse_stat(text, ix[i], &b, &wb);
		if (first && (ra != rb || (ra == 0 && (a.total != b.total || a.busy != b.busy)))) {
			abort();
		}
	}

	struct loadparse_cores c;
	why = NULL;
	check_cores(loadparse_rknpu(text, &c, &why), &c, why);
	why = NULL;
	check_cores(loadparse_rkrga(text, &c, &why), &c, why);

	int64_t pct, hz;
	why = NULL;
	int rc = loadparse_devfreq(text, &pct, &hz, &why);
	if ((rc == 0 && (pct < 0 || hz < 0)) || (rc != 0 && (rc != -EBADMSG || !why))) {
		abort();
	}
	free(text);
	return 0;
}
