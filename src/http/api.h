/*
 * The HTTP API without sockets: a request (method, raw target, a few headers, the time) in, a
 * response (status, headers, body or a CSV stream) out. http.c only translates to libmicrohttpd.
 */
#ifndef API_H
#define API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "config.h"
#include "live.h"

struct store;
struct runwire_start; // runwire.h: a start, as the wire says it (both sides)
struct runwire_stop;  // runwire.h: how a run ended, as a stop says it
struct runmetric_set; // runmetric.h: a run's metrics

#define API_TARGET_MAX 4096 // longer request targets get 414
#define API_PARAMS_MAX 32   // more query parameters get 400
#define API_LOGIN_MAX  4096 // a larger sign-in form gets 413

#define API_RUN_BODY_MAX (64 * 1024) // a larger POST /api/v1/runs body gets 413
// GET /api/v1/runs lists the newest API_RUNS_LIMIT runs of its window unless `limit` says
// otherwise (1..API_RUNS_LIMIT_MAX); a list cut short says "truncated".
#define API_RUNS_LIMIT     1000
#define API_RUNS_LIMIT_MAX 100000
// GET /api/v1/report's document stops growing past this (and says so), under the 24 MiB an
// answer may hold whatever its escaping adds: bounded while it is built, not refused after.
#define API_REPORT_MAX (16 * 1024 * 1024)

/**
 * The daemon's run bookkeeping, called from HTTP threads (the implementation serialises with
 * its own loop). Each returns 0, or a negative errno with a message in *err (newly allocated):
 * -EINVAL bad input, -ENOENT no such run, -EALREADY ended already, -EAGAIN not now (503),
 * -EBUSY too many runs active (429), -EDOM a metric's unit is not its name's (409).
 */
struct api_runs {
	/* @run as runwire_start_read() gave it (label and tags set), its pid resolved: has_pid. */
	int (*start)(void *ctx, const struct runwire_start *run, int64_t *id, char **err);
	/* On success @out holds the run's summary as a JSON object. */
	int (*stop)(void *ctx, int64_t id, const struct runwire_stop *stop, struct buf *out,
		    char **err);
	/*
	 * Adds @metrics to run @id (running or ended), all or none: a metric whose unit is not
	 * the one its name has is -EDOM, naming it. On success @out holds the run's object.
	 */
	int (*metrics)(void *ctx, int64_t id, const struct runmetric_set *metrics, struct buf *out,
		       char **err);
	void *ctx;
};

/** What every request may read; all borrowed. */
struct api_context {
	const struct config *cfg;
	struct live *live;
	/** A read-only connection lent for this request; NULL answers 503 on database endpoints. */
	struct store *store;
	/** The bearer token requests must carry, or NULL when none is required. */
	const char *token;
	/**
	 * SESSION_KEY_LEN secret random bytes for the dashboard's sign-in cookie, or NULL (no
	 * sign-in). With a token, a valid session cookie stands in for the Authorization header.
	 */
	const unsigned char *session_key;
	const char *host;  // host name for /api/v1/status, or NULL
	const char *board; // board model (device tree), or NULL
	/** The run endpoints' implementation, or NULL (they answer 503). */
	const struct api_runs *runs;
	/**
	 * The request came through the daemon's Unix socket (runs.socket), whose file mode
	 * (group thermlog, 0660) is the access control: no token is asked for.
	 */
	bool local;
	/** The database file, said in /api/v1/status through the Unix socket only; or NULL. */
	const char *db_path;
};

struct api_request {
	const char *method;          // "GET", "HEAD", ...
	const char *target;          // the raw request target: "/api/v1/stats?from=-1h"
	const char *authorization;   // "Authorization" header, or NULL
	const char *if_none_match;   // "If-None-Match" header, or NULL
	const char *accept_encoding; // "Accept-Encoding" header, or NULL
	const char *cookie;          // "Cookie" header, or NULL
	const char *body;            // POST /login, /api/v1/runs: as received (not NUL-terminated)
	size_t body_len;             // over API_LOGIN_MAX (login), API_RUN_BODY_MAX answers 413
	int64_t peer_pid;            // the caller's pid on the Unix socket (SO_PEERCRED), or 0
	int64_t now;                 // s since epoch, UTC
};

struct export;

/** Fill with api_handle(); release with api_response_finish(). */
struct api_response {
	unsigned status;
	const char *content_type; // static
	struct buf body;          // owned (unless static_body or export is set)
	const void *static_body;  // read-only storage living as long as the program (web assets)
	size_t static_len;
	struct export *export;        // a CSV stream to serve instead of a body; owned
	char *filename;               // Content-Disposition attachment name, or NULL; owned
	const char *allow;            // "Allow" header for 405, static
	const char *cache_control;    // static
	char etag[96];                // entity tag with quotes, or empty
	const char *content_encoding; // "gzip" or NULL
	bool vary_accept_encoding;
	bool authenticate;      // add WWW-Authenticate: Bearer
	const char *auth_error; // "invalid_token" for a wrong token, else NULL
	const char *location;   // "Location" header of a 303 (relative), static, or NULL
	char *set_cookie;       // "Set-Cookie" header value, or NULL; owned
};

/** Answers @req into @resp (zeroed or finished before). Never fails: errors are responses. */
void api_handle(const struct api_context *ctx, const struct api_request *req,
		struct api_response *resp);

/**
 * Checks the limits a raw request target must meet before anything else is read from it (at
 * most API_TARGET_MAX bytes, 414; at most API_PARAMS_MAX query parameters, 400): true when
 * it does, else false with @resp filled. @resp is zeroed either way; api_handle() starts with
 * it, and the server runs it on the raw URI before libmicrohttpd splits the query.
 */
bool api_target_within_limits(const char *target, struct api_response *resp);

/** What answering a request takes: nothing from the database, a quick read, or real work. */
enum api_cost {
	API_COST_NONE,  // the live snapshot or a static asset
	API_COST_LIGHT, // a few rows (status, channels)
	API_COST_HEAVY, // statistics, series, lifetime, export: may read a year of history
};

/** The cost of answering @target (a raw request target), decided by its path alone. */
enum api_cost api_target_cost(const char *target);

/** Frees what the response owns (including an unread export); accepts a zeroed struct. */
void api_response_finish(struct api_response *resp);

/**
 * The API's own read-only connection to the database, opened on first use and, after a
 * failure, again at most every API_DATABASE_RETRY_S. Used by one thread only.
 */
#define API_DATABASE_RETRY_S 10
struct api_database {
	char *path;
	struct store *store;
	int64_t retry_at; // s since epoch
};

/** Copies @path; opens nothing yet. */
void api_database_init(struct api_database *db, const char *path);
/** The open connection, or NULL (the reason logged) when it cannot be opened at @now (s). */
struct store *api_database_get(struct api_database *db, int64_t now);
/**
 * The request that had the connection is done: the cache its reads filled is given back
 * (store_release_memory()), so the daemon's memory between requests does not depend on which
 * requests came last. The connection stays open.
 */
void api_database_idle(struct api_database *db);
void api_database_finish(struct api_database *db); // accepts a zeroed struct

/** Reads the next piece of a streamed export (export_read(): count, 0 at the end, <0 error). */
ssize_t api_export_read(struct export *e, char *buf, size_t max);
/** Frees an export handed over in a response; accepts NULL. */
void api_export_destroy(struct export *e);

#endif
