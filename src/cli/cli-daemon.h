/*
 * Talking to the daemon's Unix socket (runs.socket) for the commands that record runs (run,
 * runs metric, campaign): HTTP over the socket with retries while the daemon is busy, the
 * replies' fields, the socket and whether its daemon records into --db, and the executable a
 * command names with its sha256, hashed here (the daemon never opens a path a client names).
 */
#ifndef CLI_DAEMON_H
#define CLI_DAEMON_H

#include <stdbool.h>

#include "cli.h"
#include "sha256.h"

/** A reply of the daemon. */
struct cli_reply {
	int status; // HTTP status, 0 = no answer
	char *body; // NUL-terminated, or NULL
};

/**
 * Sends @method @path with @body (NULL: none, for GET) on the socket @sock, tried again with
 * back-off for up to 5 s while the daemon is busy or full (HTTP 503, 429), refuses or cuts the
 * connection, or (@idempotent only: the request may have been served) sent no answer. Returns 0
 * with @out filled (the caller frees out->body), or a negative errno with a reason in *why
 * (static): the daemon is not there or did not answer.
 */
int cli_daemon_call(const char *sock, const char *method, const char *path, const char *body,
		    bool idempotent, struct cli_reply *out, const char **why);

/**
 * A new request id (32 hex digits) into @out: the daemon records a start retried with the same
 * id once. Seeds rand() for the back-off too.
 */
void cli_request_id(char out[33]);

/** A string or number member of the reply's JSON object (a number as written), or NULL. */
char *cli_reply_field(const char *body, const char *key);

/** The configured runs.socket (newly allocated), or NULL after the configuration's errors. */
char *cli_daemon_socket(struct cli_context *ctx);

/**
 * Whether the daemon on @sock records into the database --db names (true without --db). When
 * it serves another, or cannot say which, says so on stderr as `thermlog @cmd`, @what ending
 * the line, and returns false. An unreachable daemon returns true: the request that follows
 * says it is not there.
 */
bool cli_daemon_serves_db(struct cli_context *ctx, const char *sock, const char *cmd,
			  const char *what);

/**
 * The socket of a daemon that serves the database --db names, for @cmd (@what ends the message
 * when it serves another); NULL with the exit code in *@rc after the message.
 */
char *cli_daemon_serving(struct cli_context *ctx, const char *cmd, const char *what, int *rc);

/** Says on stderr that the daemon refused `thermlog @cmd`, with its reason if it gave one. */
void cli_daemon_refused(const char *cmd, const struct cli_reply *r);

/**
 * POSTs @body to @path on @sock for `thermlog @cmd`. Returns true with *r filled (the caller
 * frees r->body) when the daemon answered @want; otherwise says why on stderr, @not_done
 * ending the line when the daemon is not reachable, and returns false.
 */
bool cli_daemon_request(const char *sock, const char *cmd, const char *path, const char *body,
			int want, bool idempotent, const char *not_done, struct cli_reply *r);

/**
 * The executable execvp() would run for @cmd from the directory @cwd (NULL: ours), or NULL.
 * Newly allocated.
 */
char *cli_find_exe(const char *cmd, const char *cwd);

/**
 * The sha256 of the regular file @path as 64 hex digits in @hex, hashed here as the caller.
 * False when it is not a readable regular file of at most 2 GiB.
 */
bool cli_exe_sha256(const char *path, char hex[2 * SHA256_DIGEST_LEN + 1]);

#endif
