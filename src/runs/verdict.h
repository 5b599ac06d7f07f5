/*
 * Comparable or not: whether two boards' runs of one test were made under like conditions, and
 * if not why, each reason with its figures. The rules (docs/RUNS.md, "Comparable or not"):
 * ambient temperatures more than VERDICT_AMBIENT_K apart; a clock whose hardware maxima differ,
 * or, for a clock the test loads on both boards, whose highest clocks reached differ with one of
 * them below its hardware maximum (binning; both held alike below it by a partial load are like
 * for like); a governor that differs (cpufreq, devfreq, the
 * DMC's); the executable's hash differing for the test; throttle exposure (the share of the runs'
 * time their loaded domains were capped) more than VERDICT_EXPOSURE_POINTS apart; declared cooling
 * that differs. Pure over the two sides' facts (verdict_side_read() gathers them from a store); a
 * caller (runs compare, the report, a campaign's comparison) may rely on this header.
 */
#ifndef VERDICT_H
#define VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "role.h"
#include "store.h"
#include "testfig.h"

#define VERDICT_AMBIENT_K       2.0  // ambient means further apart: not like for like
#define VERDICT_EXPOSURE_POINTS 10.0 // throttle exposures further apart, in points
#define VERDICT_MAX_CLOCKS      16
#define VERDICT_MAX_GOVERNORS   32

/** One clock (a cpufreq policy or devfreq device) of a side. */
struct verdict_clock {
	char key[80];
	double hw_max_hz;  // the hardware's maximum (cpuinfo_max_freq, available_frequencies), NAN
	double reached_hz; // the highest reached during the test's runs, NAN
	bool loaded;       // the test's runs loaded it (a CPU cluster, the NPU): under load
	enum role role;    // its part on the board (role.h): two boards' clocks pair by it
};

/** What one side says about the conditions of its runs of the test. */
struct verdict_side {
	const char *name;      // the board, for messages
	double ambient_c;      // the ambient's mean over the side's window, NAN: not known
	char ambient_from[80]; // the channel it came from
	struct verdict_clock clocks[VERDICT_MAX_CLOCKS];
	size_t n_clocks;
	struct {
		char key[80];   // "cpufreq/policy4", "devfreq/dmc"
		char value[64]; // the governor, with its tunables where recorded
	} governors[VERDICT_MAX_GOVERNORS];
	size_t n_governors;
	char exe_sha256[65]; // of the test's latest ok run ("" when not recorded)
	double exposure;     // the runs' loaded-domain throttled share, 0..1; NAN: not known
	char cooling[128];   // as declared (the configuration's board: map), "" when not
};

struct verdict_reason {
	char *code;    // "ambient", "clock", "governor", "executable", "throttle", "cooling"
	char *a, *b;   // each side's figure as a JSON value
	char *message; // the reason in a sentence, with the figures
};

struct verdict {
	bool comparable;
	struct verdict_reason *reasons;
	size_t n;
};

/**
 * Judges sides @a and @b by the rules above into @v (free with verdict_finish()). A clock of @a
 * is judged against its counterpart on @b (role_pair(): by role, then a clock without one by its
 * key), never against a namesake of another part.
 */
void verdict_judge(const struct verdict_side *a, const struct verdict_side *b, struct verdict *v);
/** verdict_judge() with clocks paired by hand first (--map-channel: @pairs, @n_pairs). */
void verdict_judge_paired(const struct verdict_side *a, const struct verdict_side *b,
			  const struct role_pair *pairs, size_t n_pairs, struct verdict *v);
void verdict_finish(struct verdict *v); // accepts a zeroed struct

/**
 * What a store says for any test of its board, read once for many (a report compares every
 * label): the ambient's mean over [@from, @to) (s, 0: open; the channel of the ambient role,
 * as role_infer() gives it with the database's declared roles: map: one the map names, else an
 * IIO temp_ambient, a thermocouple's cold junction, or a temperature labelled ambient, the first
 * by key), the clocks' hardware
 * maxima (the channels' metadata, the runs' residency figures, the throttle episodes, the board
 * the daemon recorded), the governors (the channels' metadata), each clock's role (inferred, or
 * the database's declared roles: map), the declared cooling (boardfacts.h), and each label's
 * executable hash (of its latest ok run that recorded one).
 */
struct verdict_board {
	struct verdict_side side; // the facts without a test's (name, exe_sha256, exposure unset)
	struct verdict_exe {
		char *label;
		char sha256[65];
	} * exes; // by label
	size_t n_exes;
};

/** Reads @out from @store (see struct verdict_board). 0 or a negative errno; free @out with
 * verdict_board_finish() either way. */
int verdict_board_read(struct store *store, int64_t from, int64_t to, struct verdict_board *out);
void verdict_board_finish(struct verdict_board *b); // accepts a zeroed struct

/**
 * Side @out of board @b for the test @label: @b's facts, the label's executable hash, the
 * highest clock each clock reached and whether the test loaded it, and the throttle exposure,
 * from @fig (the test's per-test figures, may be NULL). @name is borrowed.
 */
void verdict_side_of(const struct verdict_board *b, const char *name, const char *label,
		     const struct testfig_label *fig, struct verdict_side *out);

/**
 * verdict_board_read() and verdict_side_of() in one: side @out of @store for the test @label
 * over [@from, @to). @name is borrowed. 0 or a negative errno.
 */
int verdict_side_read(struct store *store, const char *name, int64_t from, int64_t to,
		      const char *label, const struct testfig_label *fig, struct verdict_side *out);

/** Writes {"comparable", "reasons": [{"code", "a", "b", "message"}]}. */
void verdict_write_json(const struct verdict *v, struct json *j);

#endif
