/*
 * Campaigns over the store (thermlog campaign, docs/CAMPAIGN.md): a campaign read back with its
 * suite, its repetitions and their runs (what `campaign show`, `campaign list`, the API and the
 * report say, one JSON for all), which repetitions ended (where a resume goes on), the idle
 * baseline computed from the stored cycles, and the clocks an all-core burst reached.
 */
#ifndef CAMPAIGN_H
#define CAMPAIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "campaign-suite.h"
#include "campaignplan.h"
#include "json.h"
#include "runstatus.h"
#include "store.h"

#define CAMPAIGN_AMBIENT_GLOB "*temp_ambient*" // an IIO ambient channel: a cold junction

/** One repetition started: its row and what its run says. */
struct campaign_rep {
	struct store_campaign_run row;
	bool found;             // its run is in the store
	enum run_status status; // the run's (RUN_STATUS_RUNNING while it runs)
	int64_t start_ms, end_ms;
	int exit_code; // -1 = none
	double duration_s;
};

/** A step's repetitions summed up. */
struct campaign_step_sum {
	const struct campaign_step *step;         // in the view's suite
	size_t planned;                           // warmup + repetitions
	size_t ended;                             // slots with an ended run (not running, not lost)
	size_t attempts, ok, failed, lost, other; // runs started, by outcome (warmups included)
	size_t gate_timeouts, incomplete;
	int64_t gate_wait_ms; // summed over the step's repetitions
	size_t cold, warm;    // measured (non-warmup) repetitions that started so
};

/** A campaign read back. */
struct campaign_view {
	struct store_campaign c;
	struct campaign_suite suite; // parsed from the stored text
	struct campaign_rep *reps;   // in seq order
	size_t n_reps;
	struct campaign_step_sum *steps; // per suite step
	size_t slots, slots_ended;       // of the plan
	bool runner_alive;               // c.runner_pid names a live process (its start matching)
};

/**
 * Reads campaign @id (with its repetitions' runs) into @v (finish it either way); its runner is
 * looked for under @procfs_root. 0, -ENOENT, or a negative errno; a stored suite that no
 * longer reads is -EINVAL with *err set.
 */
int campaign_view_load(struct store *store, const char *procfs_root, int64_t id,
		       struct campaign_view *v, char **err);
void campaign_view_finish(struct campaign_view *v); // accepts a zeroed struct

/** Whether slot @s's latest repetition ended (its run neither running nor lost). */
bool campaign_view_slot_ended(const struct campaign_view *v, const struct campaignplan_slot *s);

/** The plan's slots (newly allocated, *n of them) of @suite. */
struct campaignplan_slot *campaign_plan(const struct campaign_suite *suite, size_t *n);

/**
 * A campaign as `campaign show --json` and GET /api/v1/campaigns/{id} give it: its row, locked
 * facts, fingerprint, baseline, per-step sums and every repetition.
 */
void campaign_view_json(const struct campaign_view *v, struct json *j);

/** The newest campaign's id in @store, or 0 when there is none (or it cannot be read). */
int64_t campaign_newest(struct store *store);

/** Every campaign as `campaign list --json` and GET /api/v1/campaigns give them. 0 or -errno. */
int campaign_list_json(struct store *store, const char *procfs_root, struct json *j);

/** The idle baseline: each watched zone's mean over the idle run's second half. */
struct campaign_baseline {
	struct campaigngate_zone *zones; // key (owned) and baseline_c
	size_t n;
	struct campaigngate_zone *ambient; // the channels reading the ambient (temp_ambient)
	size_t n_ambient;
	int64_t from, to; // the window, s since epoch
};

/**
 * Computes the baseline over [@from, @to) (s) from the stored cycles of the channels matching
 * @globs (unsynced cycles counted: the runs share their clock), and the ambient's from those of
 * CAMPAIGN_AMBIENT_GLOB, if any. -ENODATA when no watched zone has a sample there; other
 * failures with *err set.
 */
int campaign_baseline_compute(struct store *store, char *const *globs, size_t n_globs, int64_t from,
			      int64_t to, struct campaign_baseline *out, char **err);
void campaign_baseline_json(const struct campaign_baseline *b, struct json *j);
/** Reads what campaign_baseline_json() wrote; false when it does not read. */
bool campaign_baseline_parse(const char *text, struct campaign_baseline *out);
void campaign_baseline_finish(struct campaign_baseline *b); // accepts a zeroed struct

/**
 * The highest clock each cpufreq policy reached during run @figures (a run's figures JSON:
 * its residency's levels with time spent, or its fast samples' highest): appended to @out as a
 * JSON object {"cpufreq/policy4": 2304000000, ...}; "{}" when nothing says.
 */
void campaign_reached_json(const char *figures, struct buf *out);

#endif
