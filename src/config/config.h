/* Configuration: defaults in code, overridden by SYSCONFDIR/thermlog/thermlog.yaml. */
#ifndef CONFIG_H
#define CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "role.h"
#include "version.h"

struct capacitor_config; // lifetime.h: the rating, model and review of one capacitor

// THERMLOG_SYSCONFDIR is meson's sysconfdir: /etc for the package, /usr/local/etc by default.
#define CONFIG_DEFAULT_PATH     THERMLOG_SYSCONFDIR "/thermlog/thermlog.yaml"
#define CONFIG_DEFAULT_DATABASE "/var/lib/thermlog/thermlog.db"
#define CONFIG_DEFAULT_LISTEN   "127.0.0.1:9470"
#define CONFIG_TOKEN_MIN_LEN    16 // bearer tokens shorter than this are refused

/*
 * The sources, in the order the sampler discovers and reads them (a cycle's channels come in
 * this order). Each is named once, by config_source_name(): the `sources:` key, the channels'
 * key prefix; the sampler's driver table (source_driver()) is indexed by it.
 */
enum source_id {
	SOURCE_THERMAL, // thermal zones and cooling devices
	SOURCE_CPUFREQ,
	SOURCE_DEVFREQ,
	SOURCE_IIO,
	SOURCE_HWMON,
	SOURCE_MEMINFO, // /proc/meminfo and /proc/vmstat
	SOURCE_LOAD,    // busy shares: /proc/stat, debugfs rknpu/rkrga, devfreq load
	SOURCE_COUNT,
};

struct source_config {
	bool enabled;   // default true
	char **include; // glob patterns on channel keys; NULL-terminated, empty = everything
	char **exclude; // NULL-terminated
};

struct channel_override {
	char *key;
	char *label;   // NULL = keep the discovered label
	bool enabled;  // default true
	double offset; // calibrated = value * gain + offset
	double gain;   // default 1
};

struct iio_channel_config {
	char *device;     // IIO `name`, or "iio:deviceN"
	char *channel;    // "voltage2" -> in_voltage2_raw
	char *label;      // NULL = "<device> <channel>"
	const char *unit; // static unit name the conversion yields; default "volts"
	double gain;      // value = gain * volts + offset; default 1, 0
	double offset;
};

/* Where a key was set in the file (1-based); line 0 = a default or a command-line flag. */
struct config_mark {
	unsigned line, col;
};

struct http_config {
	char *listen; // "127.0.0.1:9470"
	char *token;  // bearer token, NULL = none
	char *token_file;
	bool metrics_public; // /metrics without the token
	char *tls_cert;      // paths, NULL = plain HTTP
	char *tls_key;
	char *tls_priorities;      // GnuTLS priority string, NULL = HTTP_TLS_PRIORITIES
	unsigned max_points;       // cap for /api/v1/samples max_points, default 5000
	int64_t max_window_s;      // cap for query windows, default 400 days
	unsigned connection_limit; // default 32
	struct config_mark listen_at, token_at, token_file_at, tls_cert_at, tls_key_at;
};

/* Runs (docs/RUNS.md): the daemon's Unix socket and the fast sampling while a run is active. */
#define CONFIG_DEFAULT_RUNS_SOCKET "/run/thermlog/thermlog.sock"
#define CONFIG_SOCKET_PATH_MAX     107 // sun_path holds 108 bytes with the NUL
/* runs.metrics_labels: a Prometheus server sees about 26 series per label, so at most 5226. */
#define CONFIG_METRICS_LABELS_DEFAULT 20
#define CONFIG_METRICS_LABELS_MAX     200
/* runs.max_active: runs active at once; one more start answers 429. */
#define CONFIG_RUNS_MAX_ACTIVE_DEFAULT 64
#define CONFIG_RUNS_MAX_ACTIVE_MAX     4096
struct runs_config {
	char *socket;        // absolute path of the AF_UNIX socket
	int64_t interval_ms; // fast sampling while any run is active: default 5000, at least 1000
	char *power_channel; // the channel key of board power, NULL = automatic (an ina2xx power)
	unsigned metrics_labels; // labels /metrics exports one by one (the rest: "other"), 1..200
	char **peak_channels;    // globs: the channels a run's heat figures come from;
			      // NULL-terminated, default {"thermal/*"}
	unsigned max_active; // runs active at once, 1..4096 (default 64)
};

/* board: what the configuration declares of its board (docs/RUNS.md, "The board"): kept with its
 * database, so a comparison names it and a job-log-only database has a name. NULL: not said. */
#define CONFIG_BOARD_SDK_MAX 32
struct board_config {
	char *name;    // "ROCK 5C #2"
	char *cooling; // "heatsink, 30 mm fan": the verdict compares it between boards
	char *notes;
	struct {
		char *name, *version; // "rknpu2", "2.3.2"
	} sdk[CONFIG_BOARD_SDK_MAX];
	size_t n_sdk;
	bool declared; // a board: section was given
};

/** Frees what @b holds and zeroes it (config_finish() does it for the configuration's). */
void config_board_finish(struct board_config *b); // accepts a zeroed struct

/* roles: a channel key's role (role.h) given by hand, over what is inferred. */
struct config_role {
	char *key;
	enum role role;
};

struct config {
	char *path;          // the file read, NULL = defaults only
	int64_t interval_ms; // default 60000, at least 1000
	char *database;
	char *sysfs_root;        // default "/sys"
	char *procfs_root;       // default "/proc" (the meminfo and load sources)
	char *debugfs_root;      // default "/sys/kernel/debug" (the load source)
	int64_t retention_raw_s; // 0 (the default): every value is kept
	int64_t rescan_s;        // default 300
	struct http_config http;
	struct runs_config runs;
	struct source_config sources[SOURCE_COUNT];
	struct channel_override *channels;
	size_t n_channels;
	struct iio_channel_config *iio_channels;
	size_t n_iio_channels;
	struct capacitor_config *capacitors;
	size_t n_capacitors;
	struct board_config board;
	struct config_role *roles; // by key
	size_t n_roles;
};

/**
 * The defaults of one capacitors: entry before its keys are read: wet part on the B_t model
 * with its own B_t and validity band (NAN = the model's default), ambient basis, no
 * self-heating, no in-service date, the 15-year cap. Strings are left NULL and the ratings 0.
 */
void config_capacitor_init(struct capacitor_config *c);

/** Fills @cfg with the built-in defaults; every string is heap-allocated. */
void config_init(struct config *cfg);
/** Frees everything; accepts a zeroed struct. */
void config_finish(struct config *cfg);

/**
 * Reads @path over the defaults already in @cfg. On error returns false and appends one line
 * per problem to @errors (caller frees) as "FILE:LINE:COL: problem" (1-based), leaving @cfg
 * unusable (finish it).
 */
bool config_load(struct config *cfg, const char *path, char **errors);
/** The same on a memory buffer; @name stands for the file name in messages. */
bool config_load_string(struct config *cfg, const char *name, const char *text, size_t len,
			char **errors);

/**
 * What a whole configuration must satisfy beyond each key's own syntax, checked by
 * `thermlog check-config`, `thermlogd --check-config` and the daemon at start and reload alike:
 * a listen address off loopback needs a token, a token has at least
 * CONFIG_TOKEN_MIN_LEN characters, and token_file, tls_cert and tls_key name readable, non-empty
 * files. Reads those files (nothing else). On error returns false and appends one line per
 * problem to @errors (caller frees) as "FILE:LINE:COL: problem", or "FILE: problem" for a value
 * that came from a default or a flag.
 */
bool config_validate(const struct config *cfg, char **errors);
/**
 * The same checks for the HTTP section alone when the listening socket is already known (socket
 * activation): @local says whether it is a loopback or local socket; -1 = judge from http.listen.
 */
bool config_validate_http(const struct config *cfg, int local, char **errors);
/**
 * What a configuration may mean other than meant, for `thermlog check-config`, `thermlogd
 * --check-config` and the daemon's start and reload to print: a capacitor's in_service before
 * 1990 (a typo?) or after @now (s since epoch). Newly allocated "FILE:LINE:COL: ..."
 * lines, or NULL when there is nothing to say. The configuration stays valid either way.
 */
char *config_warnings(const struct config *cfg, int64_t now);
/** Whether "ADDRESS:PORT" (as the parser accepts it) is a loopback address (127/8, ::1). */
bool config_listen_is_loopback(const char *listen);

/** The source name used in config and channel keys: "thermal", "hwmon", ... */
const char *config_source_name(enum source_id id);
/** Applies include/exclude for @source and the channel's enabled override. */
bool config_channel_wanted(const struct config *cfg, enum source_id source, const char *key);
/** Whether a run's heat figures (its peak temperature) take channel @key: runs.peak_channels. */
bool config_peak_channel(const struct config *cfg, const char *key);
/** The override for @key, or NULL. */
const struct channel_override *config_channel_override(const struct config *cfg, const char *key);

#endif
