/*
 * Preloaded into a program by a test: at its exit, writes its peak resident memory (VmHWM, in
 * KiB) to the file $THERMLOG_PEAK_FILE, so a test compares the peaks of two runs in the same
 * run without racing the exit (a forked child's ru_maxrss starts at its parent's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((destructor)) static void peakrss_write(void) {
	const char *path = getenv("THERMLOG_PEAK_FILE");
	FILE *in = path ? fopen("/proc/self/status", "r") : NULL;
	if (!in) {
		return;
	}
	char line[256];
	long kib = -1;
	while (fgets(line, sizeof(line), in)) {
		if (strncmp(line, "VmHWM:", 6) == 0) {
			kib = strtol(line + 6, NULL, 10);
		}
	}
	fclose(in);
	FILE *out = fopen(path, "w");
	if (out) {
		fprintf(out, "%ld\n", kib);
		fclose(out);
	}
}
