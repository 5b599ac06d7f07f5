/*
 * A run's load figures: the busy shares (percent) of the load channels over a run's samples,
 * summarised for all CPUs (load/cpu), per CPU cluster (a cpufreq policy's CPUs, their shares
 * averaged at each sample) and per NPU core (load/rknpu/coreN, or load/rknpu). Pure: no I/O, no
 * clock, no globals; the daemon feeds it a run's fast samples, the job-log import the stored
 * minute samples of the run's window.
 */
#ifndef RUNLOAD_H
#define RUNLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"

#define RUNLOAD_CPUS_MAX 256

struct runload;

struct runload *runload_create(void);
void runload_destroy(struct runload *l); // accepts NULL

/**
 * Parses a CPU list as cpufreq's related_cpus and affected_cpus read it ("0 1 2 3"; ranges
 * "0-3" and commas too) into @has (set, not cleared); false for anything else or no CPU.
 */
bool runload_parse_cpus(const char *text, bool has[RUNLOAD_CPUS_MAX]);

/** Adds cluster @name ("policy0", copied) of the CPUs in @has. */
void runload_add_cluster(struct runload *l, const char *name, const bool has[RUNLOAD_CPUS_MAX]);

/**
 * Adds the value @pct of channel @key at @ts_ms; keys that are no load channel of a CPU or an
 * NPU core are ignored. The values of one sample share its stamp and come together (stamps
 * never go back).
 */
void runload_add(struct runload *l, int64_t ts_ms, const char *key, double pct);

/**
 * Writes the "load" value: {"cpu", "clusters": [{"name", "cpus"}], "npu": [{"core",
 * "channel"}], "method": @method}, each figure with "mean_pct", "p95_pct" (type 7, both to
 * 0.001) and "samples"; only what had a value (a cluster with no CPU share, no cpu without
 * load/cpu, no npu without an NPU core), null when nothing had one.
 */
void runload_write_json(struct runload *l, struct json *j, const char *method);

#endif
