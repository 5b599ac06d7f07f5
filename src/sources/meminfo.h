/*
 * The meminfo source's arithmetic, pure: figures from /proc/meminfo ("MemAvailable:  7.6 kB"
 * lines) and /proc/vmstat ("pswpin 123" lines), and rates from two reads of a counter.
 */
#ifndef MEMINFO_H
#define MEMINFO_H

#include <stdbool.h>
#include <stdint.h>

/**
 * Finds the line "@name:" (meminfo, value in kB) or "@name " (vmstat, a count) in @text and
 * returns its number in *value: meminfo figures converted to bytes, vmstat counts as they
 * are. Returns 0, -ENOENT when the line is absent (an old kernel), or -EBADMSG when it does
 * not hold a number.
 */
int meminfo_parse(const char *text, const char *name, bool kb, int64_t *value);

/**
 * The rate per second of a cumulative counter read as @prev at @prev_ns and as @count at
 * @now_ns (monotonic ns). Returns 0, or -EAGAIN when there is no rate yet: no earlier read
 * (@have_prev false), no time between the reads, or a counter that went backwards (it
 * restarted; the next read has a rate again).
 */
int meminfo_rate(bool have_prev, int64_t prev, int64_t prev_ns, int64_t count, int64_t now_ns,
		 double *per_s);

#endif
