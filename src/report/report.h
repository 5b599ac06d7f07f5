/*
 * A report: the answers of `stats`, `peak`, `runs stats`, `runs compare` and `lifetime` over
 * one board's store (or two), computed once by their own modules and laid out as one document
 * of headings, paragraphs, tables and SVG charts, written as self-contained HTML or as
 * GitHub-flavoured Markdown with the charts in files beside it.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boardfacts.h"
#include "buf.h"
#include "campaign.h"
#include "config.h"
#include "lifetime-profile.h"
#include "lifetime-report.h"
#include "query.h"
#include "role.h"
#include "runs.h"
#include "runstats.h"
#include "store.h"
#include "testfig.h"
#include "throttle-report.h"
#include "verdict.h"

/** Whether a report holds the capacitor design review (one section per capacitor). */
enum report_lifetime {
	REPORT_LIFETIME_NONE, // the board report alone
	REPORT_LIFETIME_ADD,  // the board report, then the design review
	REPORT_LIFETIME_ONLY, // the board and window, then the design review
};

/** What a report covers. Everything is borrowed. */
struct report_options {
	bool has_from, has_to;     // as struct query_params: unset = the stored history's edge
	int64_t from, to;          // s since epoch, UTC, [from, to)
	enum query_weight weight;  // of the zone, clock and memory statistics
	const char *const *labels; // the run labels shown (none = every label)
	size_t n_labels;
	const char *tags; // a JSON object of tags the runs shown carry (NULL = every run)
	// The compared board's own window (a board measured months apart): unset = its whole
	// history, whatever the first board's window.
	bool has_compare_from, has_compare_to;
	int64_t compare_from, compare_to; // s since epoch, UTC, [from, to)
	// Runs of label map_a[i] on the first board compared with label map_b[i] on the other
	// (the same label when not mapped); borrowed.
	const char *const *map_a, *const *map_b;
	size_t n_map;
	// Channels paired by hand (--map-channel A=B), before the pairing by role; borrowed.
	const struct role_pair *map_channel;
	size_t n_map_channel;
	// The peak's channel: a key, glob or label (the hottest of those it selects); NULL = the
	// hottest of the channels runs.peak_channels names (the thermal zones by default).
	const char *peak_channel;
	double over_s;            // runs over this duration are counted; NAN = no threshold
	const struct config *cfg; // the capacitors of the lifetime section (NULL: none)
	int64_t now;              // s since epoch: bounds a capacitor's calendar age
	enum report_lifetime lifetime;
	// The document stops growing once its output would pass about this many bytes, and ends
	// saying so (0: no limit; the API's answers are bounded).
	size_t max_bytes;
};

/** One board's answers, each the struct its JSON writer writes. */
struct report_board {
	char *name;   // the fingerprint's board, or the database's file name
	char *file;   // the database's file name (no directory)
	char *model;  // the device tree's model from the latest run's fingerprint, or NULL
	char *kernel; // likewise the kernel release, or NULL
	struct boardfacts facts; // declared (board:, roles:) and recorded (the daemon's start)
	enum role *roles;        // per channel of stats.sel: its part on the board (role.h)
	bool empty;              // no cycle in the window (or no history at all)
	int64_t first_ts;        // the first and the last cycle in the window (valid unless empty)
	int64_t last_ts;
	bool has_stats;                     // stats computed (false for a database without history)
	struct query_stats stats;           // every channel, as `stats --json`
	bool has_peak;                      // the hottest zone's peak was computed
	struct query_peak peak;             // as `peak --json` of that zone, zones along
	struct runs_stats_options runs_opt; // as `runs stats --json --percentile 0`
	double runs_percentiles[1];         // {0}: the minimum, as p0
	struct runstats_result runs;        // every label in the window
	struct runs_side *side;             // its runs read once: per-test figures, the verdict's
	struct throttle_report throttle;    // the window's episodes and each domain's totals
	struct lifetime_report life;        // as `lifetime --json`
	bool has_review;                    // the design review was computed (opt.lifetime)
	struct lifetime_profile profile;    // as `lifetime profile --json` (5 K bins)
	struct lifetime_series *series;     // per capacitor (life.n): consumed life over time
	struct lifetime_params *params;     // per capacitor, as the model validated the rating
	bool *params_ok;                    // false: the rating is invalid (its warning says why)
};

/** The same label on both boards, as `runs compare` computes it. */
struct report_compare {
	char *label;       // the first board's
	char *other_label; // the compared board's (mapped, or the same)
	int rc;            // 0, or -ENODATA when a side has no ok run of it
	struct runs_compare c;
};

struct report {
	struct report_options opt;
	struct report_board boards[2];
	size_t n_boards;
	struct report_compare *compares; // labels on both boards, by label
	size_t n_compares;
	char **unmatched_a,
		**unmatched_b; // labels of one board the other has no (mapped) match for
	size_t n_unmatched_a, n_unmatched_b;
	// Two boards: each channel of the first board's stats.sel paired with its counterpart's
	// slot in the second's (-1: none), and how ("map", "role" or "key"; role_pair()).
	ssize_t *pair;
	const char **pair_why;
	const char *bad_param; // after -EINVAL: the option at fault, "label" or "peak_channel"
};

/**
 * Computes the report of @n (1 or 2) stores: the first is the board reported, the second the
 * board compared (open it read-only); @files name each database for headings. Returns 0, or a
 * negative errno with *err newly allocated: -EINVAL for a label of opt->labels that no run of
 * the first board has, or a peak_channel that names no channel (with the near names, and
 * rep->bad_param saying which), or a store failure. report_finish() frees
 * @rep (also after a failure).
 */
int report_compute(struct store *const *stores, const char *const *files, size_t n,
		   const struct report_options *opt, struct report *rep, char **err);
void report_finish(struct report *rep); // accepts a zeroed struct

/** Formats of report_write(). */
enum report_format {
	REPORT_HTML,     // one self-contained file: inline CSS and SVG, no script, nothing fetched
	REPORT_MARKDOWN, // GitHub-flavoured Markdown; charts linked as separate SVG files
};

/** "html" or "md" into *format; false for anything else. */
bool report_format_parse(const char *text, enum report_format *format);

/** The format a file name asks for when none is given: Markdown for "*.md", else HTML. */
enum report_format report_format_of_path(const char *path);

/** A chart of the report: its name ("peak", "peak-2") and a standalone SVG document. */
struct report_chart {
	char *name;
	char *svg;
};

/**
 * Writes @rep as @format into @out. Markdown: each chart is linked as "@chart_prefix-NAME.svg"
 * (the file the caller writes from report_charts()); @chart_prefix NULL writes no links and
 * says that the charts were left out.
 */
void report_write(const struct report *rep, enum report_format format, const char *chart_prefix,
		  struct buf *out);

/** The report's charts as standalone SVG documents; free with report_charts_free(). */
void report_charts(const struct report *rep, struct report_chart **charts, size_t *n);
void report_charts_free(struct report_chart *charts, size_t n); // accepts NULL

/* --- a campaign's report (report-campaign.c) ----------------------------------------------- */

/** One board's campaign as its report shows it. */
struct report_campaign_side {
	char *file;                    // the database's file name
	char *name;                    // the campaign's board, the fingerprint's model, the file
	struct campaign_view view;     // the campaign read back (campaign.h)
	char *tags;                    // its measured repetitions: {"campaign", "warmup": "0"}
	struct runs_stats_options opt; // those runs, as runs stats selects them
	struct runstats_result stats;  // per step label
	struct testfig_result figs;    // the board during each step (testfig.h)
	double *start_k; // per repetition: its hottest watched zone over its idle baseline at
			 // the run's first fast sample (K; NAN when not known)
};

/** A step on both boards, as runs compare computes it. */
struct report_campaign_step {
	char *label;
	int rc; // 0, or -ENODATA when a side has no ok measured run of it
	struct runs_compare c;
};

struct report_campaign {
	struct report_campaign_side sides[2];
	size_t n;
	struct verdict verdict;             // n == 2: the campaigns' conditions judged
	struct report_campaign_step *steps; // n == 2: the first campaign's steps the second has
	size_t n_steps;
};

/**
 * Computes the report of campaign @ids[i] (0: the newest) of each of the @n (1 or 2) stores,
 * named @files[i]; the second is the campaign compared (open it read-only). With two: the
 * verdict on their conditions (verdict.h: the ambient over each campaign, the clocks' maxima
 * and the highest each reached in the binning check's burst, the governors) and each step
 * compared by label (runs_compare() over the measured repetitions). A runner is looked for
 * under @procfs_root. 0, or a negative errno with *err newly allocated (-ENOENT: no such
 * campaign). report_campaign_finish() frees @rc (also after a failure).
 */
int report_campaign_compute(struct store *const *stores, const char *const *files,
			    const int64_t *ids, size_t n, const char *procfs_root,
			    struct report_campaign *rc, char **err);
void report_campaign_finish(struct report_campaign *rc); // accepts a zeroed struct

/**
 * Writes @rc as @format into @out: the verdict first (two boards), then the campaigns, the
 * boards' fingerprints, the idle baselines (B − A in K), each step on both boards, each
 * step's outcomes and gate waits, the board during each step, cold beside warm, every
 * repetition.
 */
void report_campaign_write(const struct report_campaign *rc, enum report_format format,
			   struct buf *out);

#endif
