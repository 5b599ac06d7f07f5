/*
 * A campaign's suite (thermlog-campaign(5), docs/CAMPAIGN.md): the YAML file that declares what a
 * campaign runs, read through the YAML toolkit (yamltree.h) with every problem named at
 * FILE:LINE:COL before anything runs; its canonical JSON (stored with the campaign, hashed) and
 * what changed between two versions of it, for a resume.
 */
#ifndef CAMPAIGN_SUITE_H
#define CAMPAIGN_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "campaignplan.h"
#include "json.h"

#define CAMPAIGN_SUITE_MAX_BYTES (256 * 1024)
#define CAMPAIGN_STEPS_MAX       64
#define CAMPAIGN_REPS_MAX        100000
#define CAMPAIGN_IDLE_LABEL      "idle"  // the idle baseline's run
#define CAMPAIGN_BURST_LABEL     "burst" // the binning check's all-core burst after it

enum campaign_order {
	CAMPAIGN_ORDER_SEQUENTIAL,  // each step's repetitions together, steps in file order
	CAMPAIGN_ORDER_INTERLEAVED, // the steps' repetitions alternate: A B A B ...
};

/** A key and its text (locked facts, tags, declared metrics' units); both owned. */
struct campaign_pair {
	char *key, *value;
};

/** A command: an argv list as given, or a string run by /bin/sh -c. */
struct campaign_command {
	char **argv; // argc entries then NULL; NULL when none was given
	size_t argc;
	bool shell; // given as a string: argv is {"/bin/sh", "-c", STRING}
};

struct campaign_step {
	char *label;
	struct campaign_command command;
	unsigned repetitions, warmup;
	enum campaign_start start;
	int64_t timeout_ms; // 0: none
	struct campaign_pair *tags;
	size_t n_tags;
	char **metrics; // the names the command must report through THERMLOG_METRICS
	size_t n_metrics;
	size_t line, col; // where the step begins in the file
};

struct campaign_suite {
	char *name;
	struct campaign_pair *locked; // free-form facts, recorded with the campaign
	size_t n_locked;
	struct campaign_pair *tags; // on every run of the campaign
	size_t n_tags;
	struct campaign_pair *metrics; // declared metrics and their units ("" = none)
	size_t n_metrics;
	bool metrics_declared;           // the suite has a metrics: section; steps name only those
	int64_t idle_ms;                 // the idle baseline's duration
	int64_t burst_ms;                // the all-core burst after it (0: none)
	struct campaign_command burst;   // argc 0: the runner's own (a busy loop per CPU)
	double tolerance_k;              // the gate: each zone within this of its idle baseline
	int64_t max_wait_ms;             // the gate waits this long at most, then gate_timeout
	int64_t warm_within_ms;          // a warm repetition starts this soon after the previous
	struct campaign_command warm_up; // argc 0: none; run while the board is too cold
	char **zones;                    // globs on channel keys the gate watches
	size_t n_zones;
	enum campaign_order order;
	struct campaign_step *steps;
	size_t n_steps;
	char *text; // campaign_suite_load(): the file as read (stored with a campaign)
};

/**
 * Reads a suite from @len bytes of @text named @name in messages. True with @out filled (finish
 * it either way); false with *errors (newly allocated) holding one "NAME:LINE:COL: problem"
 * line per problem, in file order: unknown keys (with "did you mean"), missing or bad values, a
 * step without a command, negative or zero repetitions, a metric the suite does not declare,
 * duplicate labels, a warm step in an interleaved order.
 */
bool campaign_suite_parse(const char *name, const char *text, size_t len,
			  struct campaign_suite *out, char **errors);
/** campaign_suite_parse() of the file @path (at most CAMPAIGN_SUITE_MAX_BYTES). */
bool campaign_suite_load(const char *path, struct campaign_suite *out, char **errors);
void campaign_suite_finish(struct campaign_suite *s); // accepts a zeroed struct

/** The step labelled @label, or NULL. */
const struct campaign_step *campaign_suite_step(const struct campaign_suite *s, const char *label);

/** "cold", "warm", "any". */
const char *campaign_start_name(enum campaign_start start);
/** "sequential", "interleaved". */
const char *campaign_order_name(enum campaign_order order);

/**
 * The suite as a JSON object with every setting spelled out (defaults included, durations in
 * ms): what a campaign stores and hashes, the same for any file that says the same things.
 */
void campaign_suite_json(const struct campaign_suite *s, struct json *j);
/** The sha256 of campaign_suite_json()'s text, 64 hex digits and a NUL in @hex. */
void campaign_suite_hash(const struct campaign_suite *s, char hex[65]);

/**
 * What differs from @was to @now, as "; "-separated items appended to @out ("steps.npu-op:
 * repetitions 10 -> 12", "step warm-inference added", "gate.tolerance_k 2 -> 3"); false when
 * nothing does.
 */
bool campaign_suite_diff(const struct campaign_suite *was, const struct campaign_suite *now,
			 struct buf *out);

#endif
