/*
 * Cost of one full sampling pass over the ROCK 5C fixture, beside a naive baseline that reads the
 * same files with fopen/fgets/fclose, both measured in this run. Prints medians in µs and the
 * ratio. usage: bench-sample [SYSFS_ROOT] [PASSES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "log.h"
#include "sampler.h"
#include "xalloc.h"

static double now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n) {
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What a first implementation would do: open, read a line, parse, close, for every file. */
static double naive_pass(char **paths, size_t n) {
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		FILE *f = fopen(paths[i], "r");
		char line[64];
		if (f && fgets(line, sizeof(line), f)) {
			sum += (double)strtoll(line, NULL, 10);
		}
		if (f) {
			fclose(f);
		}
	}
	return sum;
}

int main(int argc, char **argv) {
	log_init(LOG_LEVEL_ERROR);
	const char *root = argc > 1 ? argv[1] : THERMLOG_SOURCE_ROOT "/tests/fixtures/rock5c";
	int passes = argc > 2 ? atoi(argv[2]) : 5000;
	if (passes < 1) {
		fprintf(stderr, "usage: bench-sample [SYSFS_ROOT] [PASSES]\n");
		return 2;
	}
	struct config cfg;
	config_init(&cfg);
	free(cfg.sysfs_root);
	cfg.sysfs_root = xstrdup(root);
	struct sampler *s = sampler_create(&cfg);
	if (!s) {
		return 1;
	}
	const struct channel *ch;
	const struct reading *rd;
	size_t n = sampler_read(s, 0, &ch, &rd);
	size_t failed = 0;
	char **paths = xcalloc(n + 1, sizeof(*paths));
	for (size_t i = 0; i < n; i++) {
		paths[i] = xasprintf("%s/%s", root, ch[i].path);
		failed += rd[i].err != 0;
	}

	double *t_sampler = xcalloc((size_t)passes, sizeof(double));
	double *t_naive = xcalloc((size_t)passes, sizeof(double));
	volatile double sink = 0;
	// Interleave the two so that frequency scaling and cache state treat them alike.
	for (int p = 0; p < passes; p++) {
		double t0 = now_us();
		sampler_read(s, 0, &ch, &rd);
		double t1 = now_us();
		sink += naive_pass(paths, n);
		double t2 = now_us();
		t_sampler[p] = t1 - t0;
		t_naive[p] = t2 - t1;
	}
	(void)sink;
	double ms = median(t_sampler, passes), mn = median(t_naive, passes);
	printf("fixture:  %s (%zu channels, %zu failing)\n", root, n, failed);
	printf("sampler:  %.2f µs per pass (median of %d; held fds, pread)\n", ms, passes);
	printf("naive:    %.2f µs per pass (median of %d; fopen/fgets/fclose of the same files)\n",
	       mn, passes);
	printf("ratio:    %.3f (sampler / naive)\n", ms / mn);

	for (size_t i = 0; i < n; i++) {
		free(paths[i]);
	}
	free(paths);
	free(t_sampler);
	free(t_naive);
	sampler_destroy(s);
	config_finish(&cfg);
	return 0;
}
