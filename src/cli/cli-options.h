/*
 * The values of the options several commands take (options.c): times, --percentile, --weight,
 * --over, and the window of the query commands (stats, peak, channels, export, throttle); one
 * answer and one message each.
 */
#ifndef CLI_OPTIONS_H
#define CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "query.h"
#include "report.h"

/* Window options common to stats, peak and export. */
struct cli_window {
	struct query_params p; // points into the arrays below
	const char **channels;
	size_t cap_channels;
	double percentiles[QUERY_MAX_PERCENTILES];
};

void cli_window_init(struct cli_window *w);
void cli_window_finish(struct cli_window *w);

/**
 * Reads the time @arg of option @option ("--from") of @cmd ("stats", "runs show") relative to
 * @now into *@ts. False after printing the one message every command gives for a bad time.
 */
bool cli_time_option(const char *cmd, const char *option, const char *arg, int64_t now,
		     int64_t *ts);

/** --percentile @arg of @cmd appended to @list (*@n of at most @most); false after the message. */
bool cli_percentile_option(const char *cmd, const char *arg, double *list, size_t *n, size_t most);

/** --weight @arg (samples or time) of @cmd into *@weight; false after the message. */
bool cli_weight_option(const char *cmd, const char *arg, enum query_weight *weight);

/** --over @arg of @cmd (a duration such as 30m) into *@over_s; false after the message. */
bool cli_over_option(const char *cmd, const char *arg, double *over_s);

/**
 * Applies one window option (--from, --to, --channel, --percentile, --include-unsynced,
 * --interval) with times relative to @now. Returns 1 if taken, 0 if @opt is no window option,
 * -1 after printing an error naming @cmd and the bad value.
 */
int cli_window_option(struct cli_window *w, const char *cmd, int opt, const char *arg, int64_t now);

/**
 * Checks the window's --from/--to with query_window_check(), the API's check and limit
 * (http.max_window of the configuration); false after printing why.
 */
bool cli_window_check(struct cli_context *ctx, const struct cli_window *w, const char *cmd,
		      int64_t now);

/* The document a report command writes: -o FILE, --force and --format (report, campaign report). */
struct cli_document {
	const char *output; // -o FILE ("-": standard output), NULL until given
	bool force, has_format;
	enum report_format format;
};

/**
 * Applies one document option (-o, --force, --format) of @cmd: 1 if taken, 0 if @opt is none,
 * -1 after printing the bad --format.
 */
int cli_document_option(struct cli_document *d, const char *cmd, int opt, const char *arg);

/** The format, when --format did not say it, from the output's name (report_format_of_path()). */
void cli_document_format(struct cli_document *d);

/** Prints "thermlog CMD: ERR", frees @err and returns the exit code for query error @rc. */
int cli_query_failed(const char *cmd, int rc, char *err);

#endif
