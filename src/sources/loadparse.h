/*
 * The load source's texts, parsed: /proc/stat's cpu lines, the Rockchip NPU's and RGA's
 * debugfs `load` files and the `load` attribute of Rockchip vendor devfreq devices, and the
 * busy share from two readings of a CPU's ticks. Pure: no I/O, no clock, no globals.
 *
 * Formats accepted (docs/SOURCES.md says the same):
 * - /proc/stat: `cpu  user nice system idle iowait irq softirq steal guest guest_nice`, then
 *   one `cpuN` line per online CPU; at least the first four figures, non-negative integers.
 * - rknpu/load: `NPU load:  Core0:  12%, Core1:   0%, Core2:  40%,` (any spaces after each
 *   colon, the trailing comma optional) or the single-core `NPU load:  0%`.
 * - rkrga/load: `scheduler[N]: NAME` lines, each followed by a `load = NN%` line (`load = NN`
 *   without the sign on old drivers); every other line is skipped.
 * - devfreq load: `<busy %>@<current Hz>Hz` (`37@800000000Hz`).
 */
#ifndef LOADPARSE_H
#define LOADPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The most cores a debugfs load file may name (the RK3588 NPU has 3, its RGA 3). */
#define LOADPARSE_CORES_MAX 16
/** The longest RGA scheduler name kept (the driver names them "rga3_core0", "rga2"). */
#define LOADPARSE_NAME_MAX 32

/** One CPU's cumulative ticks: all of them, and the busy ones (not idle, not iowait). */
struct loadparse_ticks {
	int64_t total, busy;
};

/**
 * Finds the line of CPU @cpu in /proc/stat's @text (-1: the "cpu" line of all CPUs) and gives
 * its ticks. Returns 0, -ENOENT when there is no such line (the CPU is offline), or -EBADMSG
 * with *why saying what is wrong with the line, or -ERANGE when its figures overflow.
 */
int loadparse_stat(const char *text, int cpu, struct loadparse_ticks *out, const char **why);

/**
 * The numbers N of the "cpuN" lines of @text in their order, at most @cap of them into @ids.
 * Returns how many there are (more than @cap when they did not fit).
 */
size_t loadparse_stat_cpus(const char *text, int *ids, size_t cap);

/**
 * Where the cpu lines of /proc/stat's @text begin, found in one pass so that each CPU's line is
 * parsed (loadparse_stat() from its offset) without a search: @ids[i] the line's CPU (-1: the
 * "cpu" line of all), @at[i] its offset in @text, the first @cap of them. The cpu lines lead
 * the file (proc(5)): the pass ends at the first other line after them, before the long intr
 * line. Returns how many there are (more than @cap when they did not fit).
 */
size_t loadparse_stat_index(const char *text, int *ids, size_t *at, size_t cap);

/**
 * The busy share in percent between two readings: 100 × Δbusy / Δtotal. Returns 0, or -EAGAIN
 * when there is none: no earlier reading (@prev NULL), no tick between them, or counters that
 * went backwards (a CPU that came back online restarts from its old counters).
 */
int loadparse_busy(const struct loadparse_ticks *prev, const struct loadparse_ticks *now,
		   double *percent);

/** The figures of one debugfs load file: per core, or a single one (n 1, cores false). */
struct loadparse_cores {
	size_t n;
	bool cores;                                         // "Core0: ..." (or named schedulers)
	int index[LOADPARSE_CORES_MAX];                     // the core's number as the text has it
	char name[LOADPARSE_CORES_MAX][LOADPARSE_NAME_MAX]; // RGA: the scheduler's driver name
	int64_t percent[LOADPARSE_CORES_MAX];
};

/** Parses rknpu/load. Returns 0, or -EBADMSG with *why saying what is wrong. */
int loadparse_rknpu(const char *text, struct loadparse_cores *out, const char **why);
/** Parses rkrga/load. Returns 0, or -EBADMSG with *why saying what is wrong. */
int loadparse_rkrga(const char *text, struct loadparse_cores *out, const char **why);
/**
 * Parses a devfreq `load` attribute: the busy percent in *percent (and the frequency in *hz
 * when @hz is not NULL). Returns 0, or -EBADMSG with *why saying what is wrong.
 */
int loadparse_devfreq(const char *text, int64_t *percent, int64_t *hz, const char **why);

#endif
