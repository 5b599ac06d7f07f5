/* Shared pieces of the query commands (stats, peak, channels, export, import, backup). */
#ifndef CLI_STATS_H
#define CLI_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "query.h"
#include "store.h"

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
bool cli_window_check(const struct cli_context *ctx, const struct cli_window *w, const char *cmd,
		      int64_t now);

/**
 * Opens the configured database (or --db) for @mode; a missing file is an error in read
 * mode. Returns CLI_EXIT_OK with *store set, or the exit code after printing the reason.
 */
int cli_open_store(const struct cli_context *ctx, const char *cmd, enum store_mode mode,
		   struct store **store);

/**
 * cli_open_store() for a command that needs the configuration as well: loads it into @cfg,
 * which the caller finishes with config_finish() whatever the result.
 */
int cli_open_store_config(const struct cli_context *ctx, const char *cmd, enum store_mode mode,
			  struct config *cfg, struct store **store);

/** The database path cli_open_store() opens, newly allocated; NULL if the config is bad. */
char *cli_store_path(const struct cli_context *ctx);

/** Prints "thermlog CMD: ERR", frees @err and returns the exit code for query error @rc. */
int cli_query_failed(const char *cmd, int rc, char *err);

#endif
