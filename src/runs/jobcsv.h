/*
 * Job logs as CSV (RFC 4180, csv.c): one run per row, for `thermlog runs import`. Pure over a
 * FILE (fmemopen() serves buffers).
 *
 * The header names the columns, in any order:
 *   start, end      required: ISO 8601 with a zone, a date, or unix seconds; unix seconds and
 *                   ISO seconds may carry a fraction, kept to the millisecond (rounded)
 *   status          required: ok | failed | signaled | timeout | lost (any case); also
 *                   completed, success, succeeded, done (= ok) and error, failure, fail (= failed)
 *   label           optional: the job's label (empty = the default label)
 *   exit_code       optional: 0..255 or empty; ok with a nonzero code is an error
 *   energy_j, temp_max_c, rss_max_bytes   optional: figures measured elsewhere, empty = unknown
 *   error           optional: why the run failed, empty = none; control characters escaped
 *                   (a traceback's line feeds as "\n"), cut to JOBCSV_ERROR_MAX bytes
 *   metric:NAME     optional, any number: a metric of the run (runmetric.h), a header
 *                   "metric:NAME (UNIT)" giving its unit; a cell is a number, optionally with
 *                   the column's unit after it, or empty (the run has no such metric)
 *   tag:KEY         optional, any number: a tag of the run (runtag.h); a cell is its value, or
 *                   empty (the run has no such tag)
 * Other columns are ignored (logs carry prompts, seeds, hosts). Relative times ("-24h",
 * "now") and "running" are refused: a log records finished runs.
 */
#ifndef JOBCSV_H
#define JOBCSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "runmetric.h"
#include "runstats.h"
#include "runtag.h"

/** An error column's text is kept to this many bytes (escaped, cut at a character). */
#define JOBCSV_ERROR_MAX 500

/** One finished run from the log. */
struct jobcsv_row {
	unsigned long line; // where it was in the file (1-based)
	int64_t start_ms;   // ms since epoch, UTC
	int64_t end_ms;
	enum run_status status;
	char *label;
	int exit_code;                              // -1 = not given
	double energy_j, temp_max_c, rss_max_bytes; // NAN = not given
	char *error;                                // NULL = not given
	struct runmetric_set metrics;               // its metric: cells (units as given)
	struct runtag_list tags;                    // its tag: cells
};

struct jobcsv {
	struct jobcsv_row *rows; // the good rows, in file order
	size_t n;
	size_t n_bad; // rows refused (each named in the errors)
};

/*
 * The one rule for a run's label and its tag keys and values, on every path in (the API's
 * bodies, this importer, thermlog run): 1 to JOBCSV_LABEL_MAX bytes, no control characters
 * (C0 or DEL), so no label can move a terminal's cursor or forge a table row.
 */
#define JOBCSV_LABEL_MAX  200
#define JOBCSV_LABEL_RULE "1 to 200 characters, no control characters"
bool jobcsv_label_valid(const char *s);
/** @len bytes of @s are 1..@max bytes with no control character (the rule of labels, tags, errors).
 */
bool jobcsv_text_valid(const char *s, size_t len, size_t max);
/**
 * A run's error text as every path stores it: control characters escaped (buf_put_printable),
 * cut to JOBCSV_ERROR_MAX bytes at a character; NULL for "". Newly allocated.
 */
char *jobcsv_error_text(const char *s);

/** A header's "metric:" and "tag:" column prefixes (any case). */
#define JOBCSV_METRIC_PREFIX "metric:"
#define JOBCSV_TAG_PREFIX    "tag:"

/** At most this many problems are listed; the rest are counted in one last line. */
#define JOBCSV_ERRORS_MAX 20

/**
 * Reads the log @in (borrowed) named @name in messages; rows without a label get
 * @default_label (copied); unix stamps count seconds (@unix_per_s 1, with an optional
 * fraction), whole milliseconds (1000) or whole microseconds (1000000). Every good row lands
 * in @out; every bad one adds a line "NAME:LINE: problem" to @errors. Returns 0 when all rows are
 * good, -EBADMSG when some were refused (the good ones are still in @out), or -EINVAL when the file
 * cannot be read as a job log at all (no header, a required column missing, a duplicate column,
 * malformed CSV), with the reason in @errors. Free @out with jobcsv_finish() in every case.
 */
int jobcsv_parse(FILE *in, const char *name, const char *default_label, int64_t unix_per_s,
		 struct jobcsv *out, struct buf *errors);
void jobcsv_finish(struct jobcsv *log);         // accepts a zeroed struct
void jobcsv_row_finish(struct jobcsv_row *row); // a row taken out of a log; accepts a zeroed one

/**
 * Parses a time of the log into ms since epoch: a unix stamp (seconds with an optional
 * fraction for @unix_per_s 1; whole ms for 1000; whole us for 1000000, rounded to ms), or what
 * timefmt_parse_time() accepts but relative times, with the ISO fraction kept. False on
 * anything else.
 */
bool jobcsv_parse_time_ms(const char *text, int64_t unix_per_s, int64_t *ms);
/** Parses a status word or one of its aliases (case-insensitive); false otherwise. */
bool jobcsv_parse_status(const char *text, enum run_status *out);

#endif
