/*
 * The wrapper: a command run as a recorded run through the daemon's socket, for `thermlog run`
 * and a campaign's steps alike. It starts the run, runs the command with the signal actions it
 * would have had without the wrapper (forwarding what `kill` sends, stopping and continuing with
 * it, a --timeout's SIGTERM then SIGKILL), gives it a private THERMLOG_METRICS file, waits,
 * reads its metrics and ends the run with its exit status, peak RSS and metrics. The command
 * runs even when the daemon is not there: only the record is lost, and stderr says so.
 */
#ifndef CLI_WRAP_H
#define CLI_WRAP_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "runmetric.h"

struct cli_wrap {
	const char *cmd;    // "run", "campaign run": how messages name the command
	const char *sock;   // the daemon's socket
	const char *label;  // NULL: the command's base name
	const char *tags;   // a JSON object of strings
	int64_t timeout_ms; // 0: none
	char **argv;        // the command, NULL-terminated
	int argc;
	const char *cwd;      // the command's working directory, NULL: ours
	bool die_with_parent; // the command is killed (SIGKILL) when the wrapper dies
	bool interrupt_loses; // a SIGINT, SIGTERM or SIGHUP ends the wait without a stop: the run
			      // shows lost (a campaign's repetition cut, to be run again)
	bool quiet;         // no summary line when the run is recorded (the caller says it)
	bool recorded_only; // without a recorded start the command does not run (a campaign)
	// Called with the run's id once its start is recorded, before the command runs (a campaign
	// writes its repetition's row then, so even a repetition cut at once is known), or NULL.
	void (*started)(void *ctx, const char *id);
	void *started_ctx;
};

struct cli_wrap_result {
	char *id;          // the run's id, or NULL when it is not recorded
	bool ran;          // the command ran (not with recorded_only and no start)
	int status;        // the command's wait status
	int exit_code;     // as the wrapper exits: the command's, 128+N for signal N
	bool timed_out;    // the timeout ended it
	int interrupted;   // with interrupt_loses: the signal that cut the run (no stop sent)
	bool end_recorded; // the stop was accepted: reply holds the run's object
	char *reply;       // that object (JSON), or NULL
	double took_s;     // the command's wall time
};

/**
 * Runs @w as a recorded run; @metrics holds --metric's values and gets the command's own. Fills
 * @out (cli_wrap_result_finish() it). CLI_EXIT_OK, or CLI_EXIT_FAILURE when the command could
 * not be forked (said on stderr).
 */
int cli_wrap_run(struct cli_context *ctx, const struct cli_wrap *w, struct runmetric_set *metrics,
		 struct cli_wrap_result *out);
void cli_wrap_result_finish(struct cli_wrap_result *r); // accepts a zeroed struct

/**
 * Says on stderr, one a line, each metric of @sent that the stop's reply (the run's object)
 * lacks: a name whose unit in the database is another.
 */
void cli_metrics_not_recorded(const char *cmd, const char *reply, const struct runmetric_set *sent);

#endif
